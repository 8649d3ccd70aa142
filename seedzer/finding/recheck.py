"""``seedzer recheck``: re-judge every finding of a campaign directory with the current filing gate.

Works on campaigns written by any Seedzer version (their ``findings/<sig>/`` folders and
``campaign.db``): a TIR finding is gated as filed (its older program first, when an older
Seedzer ran its passes outside their contracts), a load finding by the load gate, each in a
process forked from the zygote. The verdict goes into the finding's ``meta.json`` (``verdict``,
``verdict_reason``, ``culprit``, ``root_signature``) and into campaign.db, under the campaign's
lock (a live campaign is refused).
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
            on_row: Callable[[RecheckRow], None] = lambda row: None, models: Path | None = None) -> list[RecheckRow]:
    """Re-judge the findings of ``campaign`` (all, or the signatures in ``only``; ``models``: where
    moved model files of older load findings are); see the module doc."""
    campaign = Path(campaign)
    if not (campaign / "campaign.db").is_file():
        raise CampaignError(f"{campaign}: not a campaign directory (no campaign.db)")
    folders = [f for f in finding_dirs(campaign) if not only or f.name in only]
    rows: list[RecheckRow] = []
    with DirLock(campaign, what="campaign"):
        db = CampaignDB(campaign / "campaign.db")
        try:
            store = FindingStore(campaign / "findings", db, [])
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
        finally:
            db.close()
    return rows
