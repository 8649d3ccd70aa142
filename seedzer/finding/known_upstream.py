"""Whether a filed root is a known upstream bug: a finding's facts matched against the upstream table
(:mod:`seedzer.ledger.upstream`: the table shipped with Seedzer and the user's rows in the ledger), and the
table files read (the shipped one, and those ``seedzer bugs upstream import`` takes)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from seedzer.config import parse_yaml
from seedzer.finding.meta import FindingMeta
from seedzer.kernel.common import SPECIAL_VALUES
from seedzer.ledger.upstream import KNOWN_UPSTREAM, TABLE_FILE, RootFacts, UpstreamIssue, match, table_from
from seedzer.oracles.signature import VALUE_KINDS


def parse_table(text: str, source: str) -> list[UpstreamIssue]:
    """The rows of a table file's text (``issues:`` a list of rows); one-line errors name ``source``."""
    return table_from(parse_yaml(text, source), source)


@lru_cache(maxsize=1)
def _shipped() -> tuple[UpstreamIssue, ...]:
    return tuple(parse_table(TABLE_FILE.read_text(encoding="utf-8"), str(TABLE_FILE)))


def shipped() -> list[UpstreamIssue]:
    """The table shipped with Seedzer (``seedzer/ledger/upstream.yaml``, read once)."""
    return list(_shipped())


def root_facts(meta: FindingMeta) -> RootFacts:
    """What a finding's root is matched on (its code at fault, else its culprit)."""
    obs = meta.observation
    code = meta.at_fault.code if meta.at_fault is not None else " + ".join(meta.culprit)
    diff = obs.difference
    value = VALUE_KINDS.get(diff.at_operator, "") if diff is not None and obs.comparison == SPECIAL_VALUES else ""
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
