"""Whether a filed root is a known upstream bug: a finding's facts matched against the upstream table
(:mod:`seedzer.ledger.upstream`: the table shipped with Seedzer and the user's rows in the ledger)."""

from __future__ import annotations

from collections.abc import Sequence

from seedzer.finding.meta import FindingMeta
from seedzer.kernel.common import SPECIAL_VALUES
from seedzer.ledger.upstream import KNOWN_UPSTREAM, RootFacts, UpstreamIssue, match, shipped
from seedzer.oracles.signature import VALUE_KINDS


def root_facts(meta: FindingMeta) -> RootFacts:
    """What a finding's root is matched on (its code at fault, else its culprit)."""
    obs = meta.observation
    code = meta.at_fault.code if meta.at_fault is not None else " + ".join(meta.culprit)
    diff = obs.difference
    value = VALUE_KINDS.get(diff.reason, "") if diff is not None and obs.comparison == SPECIAL_VALUES else ""
    return RootFacts(meta.root_signature or "", meta.kind, obs.symptom.value, code, obs.message, value)


def known_upstream(meta: FindingMeta, issues: Sequence[UpstreamIssue] | None = None) -> UpstreamIssue | None:
    """The upstream issue a bug finding's root is (``issues``: the table; default the shipped one), or None."""
    if meta.root_signature is None:
        return None
    return match(shipped() if issues is None else issues, root_facts(meta))


def upstream_note(meta: FindingMeta, issues: Sequence[UpstreamIssue] | None = None) -> str | None:
    """``known upstream apache/tvm#N (...)`` for a bug finding whose root is a known upstream bug: the note it
    was filed with, else a match now (a campaign filed before the table knew the issue)."""
    if meta.known_issue and meta.known_issue.startswith(KNOWN_UPSTREAM):
        return meta.known_issue
    found = known_upstream(meta, issues) if meta.verdict == "bug" else None
    return found.note() if found is not None else None
