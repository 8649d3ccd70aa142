"""findings/<signature>/: one folder per deduplicated finding, written before it is reported.

The folder is named after the finding's raw signature; its ``meta.json`` (:class:`FindingMeta`)
later receives the filing gate's verdict. The campaign database's ``findings`` table mirrors the
folders (counts, verdicts, root signatures) for quick summaries.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.finding.kind import Finding
from seedzer.finding.known_upstream import known_upstream, shipped
from seedzer.finding.layout import META_FILE
from seedzer.finding.meta import BUG, FindingMeta
from seedzer.finding.registry import kind
from seedzer.finding.verdict import Verdict
from seedzer.ledger.upstream import UpstreamIssue
from seedzer.store.atomic import write_atomic, write_folder
from seedzer.store.db import CampaignDB, FindingRow

SIGNATURE = re.compile(r"^[0-9a-f]{12}$")


@dataclass
class FindingReport:
    """What recording one finding occurrence did."""

    signature: str
    new: bool
    status: str
    dir: Path


def dump(folder: Path, finding: Finding) -> Path:
    """Write a finding folder, complete or not at all (:func:`~seedzer.store.atomic.write_folder`): its
    kind's files and ``meta.json``, written beside it and renamed into place (a full disk leaves no
    folder, and no empty one)."""
    folder = Path(folder)
    files: dict[str, str | bytes] = dict(finding.files())
    files[META_FILE] = finding.meta.dump(folder / META_FILE)
    return write_folder(folder, files)


def finding_folder(root: Path, signature: str) -> Path:
    """``root/signature``; anything but a 12-hex-digit signature is refused (paths never leave root)."""
    if not SIGNATURE.match(signature):
        raise SeedzerError(f"{root}: {signature!r} is not a finding signature")
    return Path(root) / signature


class FindingStore:
    """Writes finding folders and keeps campaign.db's findings table in step."""

    def __init__(self, root: Path, db: CampaignDB, known: Sequence[tuple[str, str]] = (),
                 known_roots: Mapping[str, str] | None = None, upstream: Sequence[UpstreamIssue] | None = None) -> None:
        self.root = Path(root)
        self.db = db
        self.known = [(re.compile(pattern), note) for pattern, note in known]
        self.known_roots = dict(known_roots or {})
        """Root -> why it is known: the roots the ledger marks reported, fixed or wont-fix (a bug the gate
        files under one is counted with status ``known``, not reported as new)."""
        self.upstream = list(shipped() if upstream is None else upstream)
        """The known upstream bugs (:mod:`seedzer.ledger.upstream`): a bug whose root matches one is counted
        with status ``known`` ("known upstream apache/tvm#N"), not drafted as a new report."""

    def known_note(self, meta: FindingMeta) -> str | None:
        """The note of the first known-issue pattern the finding matches."""
        obs = meta.observation
        text = f"{obs.symptom.value} {obs.pass_name or ''} {' '.join(meta.culprit)} {obs.message}"
        for pattern, note in self.known:
            if pattern.search(text):
                return note or pattern.pattern
        return None

    def record(self, finding: Finding) -> FindingReport:
        """Record one occurrence. A new signature gets its folder (:func:`dump`, before its database
        row is committed); a known one just counts."""
        meta = finding.meta
        folder = finding_folder(self.root, meta.signature)
        note = self.known_note(meta)
        if note is not None:
            meta.status, meta.known_issue = "known", note
        now = time.time()
        meta.first_seen = meta.first_seen or now
        obs = meta.observation
        if not (folder / META_FILE).exists():
            dump(folder, finding)
        row = FindingRow(meta.signature, obs.symptom.value, obs.stage.value if obs.stage else None, obs.pass_name,
                         obs.message[:2000], now, now, 1, meta.status, f"findings/{meta.signature}", meta.kind,
                         meta.verdict, meta.verdict_reason, meta.root_signature)
        new = self.db.upsert_finding(row)
        return FindingReport(meta.signature, new, meta.status if new else self.status(meta.signature), folder)

    def status(self, signature: str) -> str:
        """The recorded status of a finding (``new`` when unknown)."""
        for row in self.db.findings():
            if row.signature == signature:
                return row.status
        return "new"

    def load(self, signature: str) -> FindingMeta:
        """The ``meta.json`` of a recorded finding."""
        return FindingMeta.load(finding_folder(self.root, signature))

    def update(self, meta: FindingMeta) -> None:
        """Write a changed ``meta.json`` (verdict, status) and mirror it in the database."""
        folder = finding_folder(self.root, meta.signature)
        write_atomic(folder / META_FILE, meta.dump(folder / META_FILE))
        self.db.set_verdict(meta.signature, meta.verdict, meta.verdict_reason, meta.root_signature)
        self.db.set_finding_status(meta.signature, meta.status)

    def settle(self, meta: FindingMeta, verdict: Verdict) -> None:
        """Record the gate's verdict on a recorded finding (:func:`apply_verdict`) in its folder and row."""
        apply_verdict(finding_folder(self.root, meta.signature), meta, verdict)
        note = self.known_roots.get(meta.root_signature or "") if meta.verdict == BUG else None
        if note is None and meta.verdict == BUG:
            issue = known_upstream(meta, self.upstream)
            note = issue.note() if issue is not None else None
        if note is not None:
            meta.status, meta.known_issue = "known", note
        self.update(meta)


def apply_verdict(folder: Path, meta: FindingMeta, verdict: Verdict) -> None:
    """Record the gate's verdict in a finding's metadata; a bug is then described by the failure the
    gate confirmed (the fuzzer's own observation is kept under ``fuzzer_observation``), and its case
    and reproducer in ``folder`` are rewritten by its kind from the case the gate judged."""
    meta.verdict, meta.verdict_reason = verdict.verdict, verdict.reason
    meta.culprit, meta.root_signature, meta.gate_seconds = verdict.culprit, verdict.root, verdict.seconds
    meta.at_fault = verdict.at_fault
    meta.extra["gate_notes"] = verdict.notes
    meta.extra["gate_tests"] = verdict.tests
    if verdict.rule:
        meta.extra["gate_rule"] = verdict.rule
    if verdict.verdict == BUG and verdict.observation != meta.observation:
        meta.extra["fuzzer_observation"] = meta.observation.to_json()
        meta.observation = verdict.observation
    if verdict.verdict == BUG and verdict.case is not None:
        kind(meta.kind).write_case(folder, meta, verdict.case)
