"""The level registry: every level is looked up by name, and a third level is one module plus one entry.

A test registers the echo level (:mod:`tests.unit.levels.echo_level`) and runs a real campaign with it
(real forked workers, the real worker protocol, the real scheduler and store; only the seed loader
and the gate are stand-ins): its entries are kept, scheduled and shown by ``status`` like any level's.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.loop import Campaign
from seedzer.campaign.monitor import QuietMonitor
from seedzer.campaign.stats import CampaignStats
from seedzer.campaign.summary import campaign_summary
from seedzer.config import Config, LevelsConfig, load_config, parse_levels
from seedzer.errors import SeedzerError
from seedzer.level_table import LEVELS, level_entry, level_names
from seedzer.levels.level import ModelSeeds
from seedzer.levels.registry import level, levels
from seedzer.load.bounds import Limits
from seedzer.store.corpus import CorpusEntry
from tests.unit.fake_gate import FakeGate
from tests.unit.levels.echo_level import APPEND, ENTRY, LEVEL, NAME, QUIET, QUIET_ENTRY, EchoSettings


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The echo level registered, as its one table entry."""
    monkeypatch.setitem(LEVELS, NAME, ENTRY)
    yield


def test_the_shipped_levels_answer_to_their_names() -> None:
    assert level_names() == ("tir", "graph", "sched")
    for found in levels():
        assert level(found.name) is found and found.mutations and callable(found.fuzzer)
    for a, b in itertools.combinations(levels(), 2):
        assert a.mutations.isdisjoint(b.mutations), (a.name, b.name)  # a mutation names its level


def test_an_unknown_level_is_a_one_line_error() -> None:
    with pytest.raises(SeedzerError, match=r"^no level 'tri' \(levels: tir, graph, sched\)$"):
        level("tri")


def test_a_registered_level_is_configured_like_the_shipped_ones(echo: None) -> None:
    assert level_entry(NAME) is ENTRY and level(NAME).name == NAME
    assert Config().levels.weights() == {"tir": 3.0, "graph": 1.0, "echo": 2.0}
    assert parse_levels("echo", LevelsConfig()).weights() == {"echo": 2.0}


class StopAfter(QuietMonitor):
    """Stops the campaign once it has run ``execs`` test cases."""

    def __init__(self, execs: int) -> None:
        self.execs = execs
        self.campaign: Campaign | None = None

    def update(self, stats: CampaignStats) -> None:
        if self.campaign is not None and stats.phase == "fuzzing" and stats.execs >= self.execs:
            self.campaign.stop()


def _one_seed(model: Path, differential: bool, timeout: float, max_seeds: int, limits: Limits) -> ModelSeeds:
    return ModelSeeds(model, seeds=[("# a PrimFunc the echo level ignores", "op")])


@pytest.mark.usefixtures("restore_signals")
def test_a_campaign_fuzzes_a_third_level_registered_by_one_entry(echo: None, tmp_path: Path, pool: Path) -> None:
    cfg = Config()
    cfg.fuzz.coverage, cfg.fuzz.minutes, cfg.fuzz.snapshot_period = "passes", 1.0, 0.5
    cfg.levels = parse_levels("echo", cfg.levels)
    monitor = StopAfter(40)
    out = tmp_path / "camp"
    camp = Campaign(out, pool, cfg, monitor=monitor, seed_loader=_one_seed, gate=FakeGate(lambda job: None))  # type: ignore[arg-type, return-value]
    monitor.campaign = camp
    stats = camp.run()
    assert stats.execs >= 40 and stats.level_execs == {NAME: stats.session_execs}
    conn = sqlite3.connect(out / "campaign.db")
    try:
        corpus = conn.execute("SELECT level, path FROM corpus").fetchall()
        sequences = [row[0] for row in conn.execute("SELECT passes FROM corpus")]
        counted = dict(conn.execute("SELECT level, SUM(count) FROM level_summary GROUP BY level").fetchall())
        mutated = dict(conn.execute("SELECT mutator, SUM(count) FROM mutator_summary GROUP BY mutator").fetchall())
    finally:
        conn.close()
    assert len(corpus) > 1 and {lv for lv, _ in corpus} == {NAME}  # the seed and kept mutants, all echo
    assert all(path.endswith(".echo") and (out / path).is_file() for _, path in corpus)
    assert set(counted) == {NAME} and APPEND in mutated and set(mutated) <= LEVEL.mutations
    assert len(set(mutated) - {APPEND}) >= 2  # its own pass family's mutators, the house's generic ones
    assert any(passes != "[]" for passes in sequences)  # a kept mutant carries echo passes
    console = Console(width=200, record=True)
    console.print(campaign_summary(out))
    text = console.export_text()
    by_level = next(ln for ln in text.splitlines() if ln.strip("│ ").startswith(NAME))
    assert by_level.split("│")[2].strip() == str(counted[NAME])  # the executions of its row
    assert any(APPEND in ln and NAME in ln for ln in text.splitlines())  # by mutation, with its level


@pytest.mark.usefixtures("restore_signals")
def test_entries_of_a_level_turned_off_still_run_once(echo: None, tmp_path: Path, pool: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed or imported corpus may hold entries of a level the campaign no longer fuzzes (the
    pool made them, or `--levels` changed): every worker can run every registered level, so they run
    once as seeds (the schedule never draws the level) instead of killing their worker."""
    monkeypatch.setitem(LEVELS, QUIET, QUIET_ENTRY)
    cfg = Config()
    cfg.fuzz.coverage, cfg.fuzz.minutes, cfg.fuzz.snapshot_period = "passes", 1.0, 0.5
    cfg.levels = parse_levels("echo", cfg.levels)
    quiet = [CorpusEntry(f"q{i}", f"quiet {i}", "[]", "m.onnx", level=QUIET) for i in range(3)]
    loud = [CorpusEntry("e0", "echo 0", "[]", "m.onnx", level=NAME)]
    monitor = StopAfter(25)
    out = tmp_path / "camp"
    camp = Campaign(out, pool, cfg, monitor=monitor, gate=FakeGate(lambda job: None),  # type: ignore[arg-type, return-value]
                    imported=quiet + loud)
    monitor.campaign = camp
    stats = camp.run()
    assert stats.restarts == 0 and stats.level_execs[QUIET] == 3  # each run once, never drawn again
    conn = sqlite3.connect(out / "campaign.db")
    try:
        counted = dict(conn.execute("SELECT level, SUM(count) FROM level_summary GROUP BY level").fetchall())
    finally:
        conn.close()
    assert counted[QUIET] == 3 and counted[NAME] >= 22


@pytest.mark.usefixtures("restore_signals")
def test_a_level_s_own_setting_goes_from_yaml_to_its_fuzzer(echo: None, tmp_path: Path, pool: Path) -> None:
    """The echo level's ``lines`` setting (its section names it; no house module does), set in a
    configuration file, reaches the echo fuzzer in the campaign's forked workers: every line its
    mutants appended is one of the two it allows."""
    path = tmp_path / "c.yaml"
    path.write_text(f"levels:\n  {NAME}:\n    weight: 1\n    lines: 2\n")
    cfg = load_config(path)
    assert cfg.levels.settings()[NAME] == EchoSettings(lines=2)
    cfg.fuzz.coverage, cfg.fuzz.minutes, cfg.fuzz.snapshot_period = "passes", 1.0, 0.5
    cfg.levels = parse_levels(NAME, cfg.levels)
    monitor = StopAfter(30)
    out = tmp_path / "camp"
    camp = Campaign(out, pool, cfg, monitor=monitor, seed_loader=_one_seed, gate=FakeGate(lambda job: None))  # type: ignore[arg-type, return-value]
    monitor.campaign = camp
    assert camp.run().execs >= 30
    appended = {line for path in (out / "corpus").glob("*.echo") for line in path.read_text().splitlines()[1:]}
    assert appended == {"line0", "line1"}  # 6 lines by default: only the configured 2 were drawn
