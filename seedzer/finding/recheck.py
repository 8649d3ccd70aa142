"""``seedzer recheck``: re-judge every finding of a campaign directory with the current filing gate.

Works on campaigns written by any Seedzer version (their ``findings/<sig>/`` folders and
``campaign.db``): a TIR finding is gated as filed (its older program first, when an older
Seedzer ran its passes outside their contracts), a load finding by the load gate, each in a
process forked from the zygote. The verdict goes into the finding's ``meta.json`` (``verdict``,
``verdict_reason``, ``culprit``, ``root_signature``) and into campaign.db, under the campaign's
lock (a live campaign is refused). ``recheck.json`` in the campaign records the verdicts and where every old
root went (:func:`root_map`): roots are keyed by the code at fault, so a recheck after a change of keying
merges, splits, re-blames or re-keys them, and the ledger's rows for the campaign follow (the command's).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seedzer.config import Config, config_from_dict
from seedzer.errors import CampaignError, ConfigError, SeedzerError
from seedzer.execute.isolated_call import run_isolated
from seedzer.finding.gate import GateSettings, gate_settings
from seedzer.finding.kind import GateContext
from seedzer.finding.meta import FindingMeta, inside
from seedzer.finding.registry import kind
from seedzer.finding.replay import finding_dirs
from seedzer.finding.store import FindingStore
from seedzer.finding.verdict import Verdict
from seedzer.kernel.common import Stage
from seedzer.ledger.upstream import UpstreamIssue
from seedzer.store.atomic import write_atomic
from seedzer.store.corpus import CORPUS_DIR
from seedzer.store.db import CampaignDB, CorpusRow
from seedzer.store.lock import DirLock


@dataclass
class RecheckRow:
    """One finding's new verdict, and the root and culprit it was filed under before."""

    signature: str
    symptom: str
    verdict: str
    reason: str
    root: str | None
    culprit: list[str]
    seconds: float
    before_root: str | None = None
    before_culprit: list[str] = field(default_factory=list)
    evidence: str = ""
    """Why the culprit is the code at fault (the verdict's ``at_fault`` evidence; empty when it has none)."""


@dataclass(frozen=True)
class RootChange:
    """Roots a recheck re-keyed: ``merged`` (several old roots are one bug now), ``split`` (one old
    root is several bugs now) or ``re-blamed`` (one root still, another culprit: e.g. the TOPI
    operator instead of the pass that reached it), with the roots and culprits before and after and
    the evidence."""

    change: str
    before: tuple[tuple[str, str], ...]
    """(root, culprit) pairs the findings had before."""
    after: tuple[tuple[str, str], ...]
    """(root, culprit) pairs they have now."""
    evidence: str


def _pair(root: str | None, culprit: list[str]) -> tuple[str, str]:
    return (root or "-", " + ".join(culprit) or "-")


def root_changes(rows: list[RecheckRow]) -> list[RootChange]:
    """The roots merged, split and re-blamed by a recheck, judged on the bugs it confirmed that had a
    root before (a finding filed before root signatures existed, or judged not a bug now, changes no root)."""
    bugs = [r for r in rows if r.verdict == "bug" and r.root and r.before_root]
    changes: list[RootChange] = []
    for new in sorted({r.root for r in bugs if r.root}):
        group = [r for r in bugs if r.root == new]
        pairs = sorted({_pair(r.before_root, r.before_culprit) for r in group})
        if len({root for root, _ in pairs}) > 1:
            changes.append(RootChange("merged", tuple(pairs), (_pair(new, group[0].culprit),),
                                      next((r.evidence for r in group if r.evidence), "")))
    merged = {root for change in changes for root, _ in change.after}
    for old in sorted({r.before_root for r in bugs if r.before_root}):
        group = [r for r in bugs if r.before_root == old]
        after = sorted({_pair(r.root, r.culprit) for r in group})
        before = _pair(old, group[0].before_culprit)
        evidence = "; ".join(sorted({r.evidence for r in group if r.evidence}))
        if len({root for root, _ in after}) > 1:
            changes.append(RootChange("split", (before,), tuple(after), evidence))
        elif after[0][0] not in merged and {c for _, c in after} - {_pair(old, r.before_culprit)[1] for r in group}:
            changes.append(RootChange("re-blamed", (before,), tuple(after), evidence))
    return changes


UNCHANGED, REKEYED, MERGED, SPLIT, REBLAMED, DISMISSED = ("unchanged", "re-keyed", "merged", "split", "re-blamed",
                                                         "dismissed")


@dataclass(frozen=True)
class RootMove:
    """Where one old root went: the roots and culprits its findings are filed under now, and how it changed
    (``unchanged``; ``re-keyed``: one new root, the same culprit, another signature, as when the essence of its
    message changed; ``merged`` with other old roots into one; ``split`` into several; ``re-blamed``: one root,
    another culprit; ``dismissed``: no finding of it is a bug now)."""

    old: str
    old_culprit: str
    new: tuple[tuple[str, str], ...]
    findings: int
    change: str

    def to_json(self) -> dict[str, object]:
        """JSON-friendly form (``recheck.json``'s ``roots``)."""
        return {"old": self.old, "old_culprit": self.old_culprit, "change": self.change, "findings": self.findings,
                "new": [{"root": root, "culprit": culprit} for root, culprit in self.new]}


def root_map(rows: list[RecheckRow]) -> list[RootMove]:
    """Every old bug root of a recheck and where it went (see :class:`RootMove`); findings that could not be
    judged, and those filed before root signatures existed, move nothing."""
    judged = [r for r in rows if r.before_root and r.verdict in ("bug", "not-a-bug")]
    olds_of: dict[str, set[str]] = {}
    for r in judged:
        if r.verdict == "bug" and r.root:
            olds_of.setdefault(r.root, set()).add(str(r.before_root))
    moves = []
    for old in sorted({str(r.before_root) for r in judged}):
        group = [r for r in judged if r.before_root == old]
        before = " + ".join(group[0].before_culprit) or "-"
        new = tuple(sorted({_pair(r.root, r.culprit) for r in group if r.verdict == "bug" and r.root}))
        if not new:
            change = DISMISSED
        elif len({root for root, _ in new}) > 1:
            change = SPLIT
        elif len(olds_of.get(new[0][0], set())) > 1:
            change = MERGED
        elif new[0][1] != before:
            change = REBLAMED
        else:
            change = UNCHANGED if new[0][0] == old else REKEYED
        moves.append(RootMove(old, before, new, len(group), change))
    return moves


RECHECK_FILE = "recheck.json"
"""Where ``recheck`` records its verdicts and the old -> new root map, in the campaign directory."""


def record_recheck(campaign: Path, rows: list[RecheckRow]) -> Path:
    """Write ``recheck.json`` into ``campaign``: when, by which Seedzer, every finding's verdict with its root and
    culprit before and after, the old -> new root map and the merges, splits and re-blames."""
    from seedzer import __version__

    data = {"rechecked": time.time(), "seedzer": __version__,
            "findings": [{"signature": r.signature, "symptom": r.symptom, "verdict": r.verdict,
                          "reason": r.reason[:300], "root": r.root, "culprit": r.culprit, "before_root": r.before_root,
                          "before_culprit": r.before_culprit, "evidence": r.evidence} for r in rows],
            "roots": [m.to_json() for m in root_map(rows)],
            "changes": [{"change": c.change, "before": [list(p) for p in c.before], "after": [list(p) for p in c.after],
                         "evidence": c.evidence} for c in root_changes(rows)]}
    path = Path(campaign) / RECHECK_FILE
    write_atomic(path, json.dumps(data, indent=1))
    return path


def campaign_config(db: CampaignDB) -> Config:
    """The configuration a campaign recorded (defaults where it recorded none or an older schema)."""
    try:
        return config_from_dict(db.get_meta("config") or {}, f"{db.path} (recorded config)")
    except ConfigError:
        return Config()


RECHECK_TIMEOUT = 600.0
"""The limit of a loader candidate's re-run in ``recheck`` (a low-level one has its stage limits)."""


def ancestors(campaign: Path, parent: str | None, rows: dict[str, CorpusRow]) -> list[tuple[str, str]]:
    """``(label, script)`` of the original seed and the unmutated parent of a finding, least mutated
    first, read from the campaign's corpus (``rows``: its corpus rows by id)."""
    if not parent:
        return []
    chain = [parent]
    while (row := rows.get(chain[-1])) is not None and row.parent and len(chain) < 10_000:
        chain.append(row.parent)
    root, nearest = chain[-1], chain[0]
    wanted = [("the original seed", root)] + ([("the unmutated parent", nearest)] if nearest != root else [])
    out: list[tuple[str, str]] = []
    for label, seed_id in wanted:
        path = rows[seed_id].path if seed_id in rows else f"{CORPUS_DIR}/{seed_id}.py"
        try:
            out.append((label, inside(Path(campaign), path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, SeedzerError):
            continue
    return out


def _judge(folder: Path, meta: FindingMeta, settings: GateSettings, parents: dict[str, CorpusRow],
           campaign: Path, models: Path | None = None) -> Verdict:
    """The gate's verdict on one finding, judged in a zygote child (TVM's output to logs/recheck.log)."""
    context = GateContext(settings, ancestors(campaign, meta.parent, parents), timeout=RECHECK_TIMEOUT,
                          models=str(models) if models is not None else None)
    call = kind(meta.kind).gate_call(folder, meta, context)
    res = run_isolated(call.fn, *call.args, timeout=settings.max_seconds * 4 + 900.0, stage=Stage.PASS,
                       log=str(campaign / "logs" / "recheck.log"))
    if res.outcome is not None:
        raise SeedzerError(f"{folder}: the gate could not judge it ({res.outcome.message.splitlines()[0][:200]})")
    verdict: Verdict = res.value
    return verdict


def recheck(campaign: Path, only: tuple[str, ...] = (),
            on_row: Callable[[RecheckRow], None] = lambda row: None, models: Path | None = None,
            upstream: Sequence[UpstreamIssue] | None = None) -> list[RecheckRow]:
    """Re-judge the findings of ``campaign`` (all, or the signatures in ``only``; ``models``: where
    moved model files of older load findings are; ``upstream``: the known upstream bugs, default the shipped
    table) and write ``recheck.json`` (:func:`record_recheck`); see the module doc."""
    campaign = Path(campaign)
    if not (campaign / "campaign.db").is_file():
        raise CampaignError(f"{campaign}: not a campaign directory (no campaign.db)")
    folders = [f for f in finding_dirs(campaign) if not only or f.name in only]
    rows: list[RecheckRow] = []
    with DirLock(campaign, what="campaign"):
        db = CampaignDB(campaign / "campaign.db")
        try:
            store = FindingStore(campaign / "findings", db, [], upstream=upstream)
            settings = gate_settings(campaign_config(db))
            parents = {r.id: r for r in db.corpus_rows()}
            for folder in folders:
                start = time.monotonic()
                try:
                    meta = FindingMeta.load(folder)
                    verdict = _judge(folder, meta, settings, parents, campaign, models)
                except SeedzerError as exc:  # one damaged finding must not stop the others
                    row = RecheckRow(folder.name, "?", "error", str(exc), None, [], time.monotonic() - start)
                    rows.append(row)
                    on_row(row)
                    continue
                before = (meta.root_signature, list(meta.culprit or []))
                store.settle(meta, verdict)
                row = RecheckRow(meta.signature, verdict.observation.symptom.value, verdict.verdict, verdict.reason,
                                 verdict.root, verdict.culprit, time.monotonic() - start, *before,
                                 evidence=verdict.at_fault.evidence if verdict.at_fault else "")
                rows.append(row)
                on_row(row)
            record_recheck(campaign, rows)
        finally:
            db.close()
    return rows
