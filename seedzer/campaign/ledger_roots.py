"""A campaign and the ledger (:mod:`seedzer.ledger`): the roots a campaign directory found, as the ledger
records them; where a campaign's ledger is; the roots the ledger knew before a campaign (what ``status``
marks) and the ones a user marked reported, fixed or wont-fix (what filing counts as known).

Reading a campaign never writes it (:mod:`seedzer.store.reader`); recording writes only the ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from seedzer.config import Config
from seedzer.errors import SeedzerError
from seedzer.finding.known_upstream import shipped
from seedzer.finding.meta import BUG, FindingMeta, canonical_kind
from seedzer.finding.minimal.program import read_record
from seedzer.finding.store import finding_folder
from seedzer.ledger.location import ledger_path
from seedzer.ledger.records import LedgerRoot, RootSighting
from seedzer.ledger.store import Ledger, NoLedger
from seedzer.ledger.upstream import UpstreamIssue, merged
from seedzer.store.db import FindingRow
from seedzer.store.reader import CampaignReader

LEDGER_META = "ledger"
"""The campaign.db meta key holding the ledger a campaign records into (its resolved path)."""


def _rows(out: Path) -> tuple[list[FindingRow], str | None, str | None]:
    """The campaign's bug findings with a root (oldest first), its pool and the ledger it recorded into."""
    with CampaignReader.open(out / "campaign.db") as reader:
        bugs = [row for row in reader.findings() if row.verdict == BUG and row.root is not None]
        return bugs, reader.meta("pool"), reader.meta(LEDGER_META)


def _representative(out: Path, signatures: list[str]) -> str:
    """The finding folder a root is shown by: one with a verified plain reproducer (fewest lines), else the
    first found."""
    best: tuple[int, str] | None = None
    for sig in signatures:
        try:
            record = read_record(finding_folder(out / "findings", sig))
        except SeedzerError:
            continue
        if record is not None and record.verified and (best is None or record.lines < best[0]):
            best = (record.lines, sig)
    return best[1] if best is not None else signatures[0]


def campaign_sightings(out: Path) -> list[RootSighting]:
    """The bug roots of the campaign in ``out`` (read-only), as the ledger records them (each kind by its
    name today: a campaign written before the kinds were renamed says ``lowlevel`` or ``loader``)."""
    out = Path(out)
    rows, _, _ = _rows(out)
    by_root: dict[str, list[FindingRow]] = {}
    for row in rows:
        by_root.setdefault(str(row.root), []).append(row)
    campaign = str(out.resolve())
    found = []
    for root, group in by_root.items():
        sig = _representative(out, [r.signature for r in group])
        try:
            meta = FindingMeta.load(finding_folder(out / "findings", sig))
            culprit, headline = " + ".join(meta.culprit), meta.observation.headline()[:300]
        except SeedzerError:
            culprit, headline = "", f"{group[0].symptom} (finding {sig})"
        found.append(RootSighting(root, canonical_kind(group[0].kind), group[0].symptom, culprit, headline, campaign,
                                  str(out.resolve() / "findings" / sig), sum(r.count for r in group),
                                  min(r.first_seen for r in group), max(r.last_seen for r in group)))
    return found


def campaign_ledger(out: Path, cfg: Config) -> Path | None:
    """The ledger of the campaign in ``out``: the one it recorded into, else the configured one or the one
    beside its pool (None: the ledger is off)."""
    if not cfg.ledger.enabled:
        return None
    _, pool, recorded = _rows(Path(out))
    if isinstance(recorded, str) and recorded and not cfg.ledger.path:
        return Path(recorded)
    return ledger_path(cfg.ledger.path, Path(pool) if isinstance(pool, str) else None, cfg.generate.pool_dir)


def record_campaign(out: Path, path: Path, source: str) -> list[str]:
    """Record the roots of the campaign in ``out`` in the ledger at ``path``; the roots new to it."""
    sightings = campaign_sightings(out)
    with Ledger(path) as ledger:
        return ledger.record(sightings, source)


def known_roots(path: Path | None) -> dict[str, str]:
    """Root -> why it is known, for the roots the ledger at ``path`` marks reported, fixed or wont-fix
    (empty when there is no ledger yet; read-only)."""
    if path is None:
        return {}
    try:
        with Ledger(path, readonly=True) as ledger:
            return ledger.known()
    except NoLedger:
        return {}


def upstream_table(path: Path | None) -> list[UpstreamIssue]:
    """The known upstream bugs: the table shipped with Seedzer, with the rows of the ledger at ``path`` (the
    user's) replacing shipped rows of the same issue."""
    if path is None or not Path(path).exists():
        return shipped()
    with Ledger(path, create=False) as ledger:
        return merged(shipped(), ledger.upstream())


def seen_before(path: Path | None, out: Path) -> dict[str, LedgerRoot] | None:
    """The roots the ledger at ``path`` holds from other campaigns than ``out`` (None: no ledger yet;
    read-only)."""
    if path is None:
        return None
    try:
        with Ledger(path, readonly=True) as ledger:
            roots = ledger.roots()
    except NoLedger:
        return None
    campaign = str(Path(out).resolve())
    return {r.root: r for r in roots if any(s.campaign != campaign for s in r.sightings)}


class CampaignLedger:
    """A campaign's ledger: where it is (None: off), what recorded the campaign (``source``), and how the
    campaign tells its user about it (``say``: one line). Neither reading nor recording stops a campaign:
    a ledger that cannot be read counts every bug as new, one that cannot be written says how to record the
    campaign later (nothing is lost)."""

    def __init__(self, path: Path | None, source: str, say: Callable[[str], None]) -> None:
        self.path, self.source, self.say = path, source, say

    @staticmethod
    def of(cfg: Config, pool: Path, source: str, say: Callable[[str], None]) -> CampaignLedger:
        """The ledger of a campaign of ``pool`` under ``cfg``."""
        path = ledger_path(cfg.ledger.path, pool, cfg.generate.pool_dir) if cfg.ledger.enabled else None
        return CampaignLedger(path, source, say)

    def known(self) -> dict[str, str]:
        """:func:`known_roots`, or none with a warning."""
        try:
            return known_roots(self.path)
        except SeedzerError as exc:
            self.say(f"warning: {exc}; every bug of this campaign counts as new")
            return {}

    def upstream(self) -> list[UpstreamIssue]:
        """:func:`upstream_table`, or the shipped table alone with a warning."""
        try:
            return upstream_table(self.path)
        except SeedzerError as exc:
            self.say(f"warning: {exc}; only the upstream bugs shipped with Seedzer are recognised")
            return shipped()

    def seen(self, out: Path) -> dict[str, LedgerRoot] | None:
        """:func:`seen_before` for the campaign in ``out`` (None: the ledger is off, or cannot be read:
        then with a warning)."""
        try:
            return seen_before(self.path, out)
        except SeedzerError as exc:
            self.say(f"warning: {exc}; the summary shows no ledger marks")
            return None

    def record(self, out: Path) -> None:
        """Record the campaign's roots (one line saying what happened)."""
        if self.path is None:
            return
        try:
            new = record_campaign(out, self.path, self.source)
        except SeedzerError as exc:
            self.say(f"warning: {exc}; record this campaign later with `seedzer bugs add {out}`")
            return
        self.say(f"ledger {self.path}: the campaign's roots recorded ({len(new)} new to it)")
