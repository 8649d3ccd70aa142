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
from dataclasses import dataclass
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
    """One finding's new verdict."""

    signature: str
    symptom: str
    verdict: str
    reason: str
    root: str | None
    culprit: list[str]
    seconds: float


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
                store.settle(meta, verdict)
                row = RecheckRow(meta.signature, verdict.observation.symptom.value, verdict.verdict, verdict.reason,
                                 verdict.root, verdict.culprit, time.monotonic() - start)
                rows.append(row)
                on_row(row)
        finally:
            db.close()
    return rows
