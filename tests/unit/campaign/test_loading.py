"""The campaign's models and their seeds (:mod:`seedzer.campaign.loading`); issue 55 row 5: a model whose
load was SIGKILLed from outside is loaded again on ``--resume`` (before: recorded as failed for good, 8 of 20
models lost in the chaos run), and given up after :data:`KILLED_LOADS` kills in a row with a reason saying
so; a genuine load failure stays recorded. Each session is a new :class:`Loading` on the same campaign.db,
as a resumed campaign makes it; the loader stands in for the isolated one (what a killed attempt gives)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.invalid import unloaded_models_table
from seedzer.campaign.loading import KILLED, KILLED_LOADS, Loading, SeedLoader
from seedzer.campaign.loop import Campaign
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.stats import CampaignStats
from seedzer.config import Config, LevelsConfig
from seedzer.errors import PoolError
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.levels.level import ModelSeeds
from seedzer.load.bounds import Limits
from seedzer.store.corpus import Corpus
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader
from tests.unit.campaign.parts import Said
from tests.unit.campaign.test_loop_campaigns import by_symptom, config, query
from tests.unit.fake_gate import FakeGate

SIGKILLED = Observation(Symptom.INVALID, Stage.LOAD, "import",
                        "killed by signal SIGKILL (out of memory or an operator: not a TVM bug)")
UNSUPPORTED = Observation(Symptom.INVALID, Stage.LOAD, "import", "unsupported input type: string")


def loader(killed: set[str], loads: list[str]) -> SeedLoader:
    """Loads every model into one seed, except those named in ``killed`` (their attempt SIGKILLed) and
    ``bad.onnx`` (a genuine failure); ``loads`` records what it was asked to load."""

    def load(model: Path, differential: bool, timeout: float, max_seeds: int, limits: Limits) -> ModelSeeds:
        loads.append(model.name)
        if model.name in killed:
            return ModelSeeds(model, [SIGKILLED], killed=True)
        if model.name == "bad.onnx":
            return ModelSeeds(model, [UNSUPPORTED])
        return ModelSeeds(model, seeds=[(f"script of {model.name}", "op")])

    return load


def session(out: Path, models: list[Path], load: SeedLoader, said: Said | None = None) -> Loading:
    """One campaign session's loading of ``models`` into the campaign in ``out`` (resumed when it exists)."""
    out.mkdir(parents=True, exist_ok=True)
    db = CampaignDB(out / "campaign.db")
    cfg = Config()
    cfg.levels = LevelsConfig({"tir": 1.0})
    corpus = Corpus(out / "corpus", db)
    corpus.restore(None, {})  # what the sessions before kept
    return Loading(cfg, out.parent / "pool", models, db, corpus, PendingSeeds(), NoFailures(), CampaignStats(),
                   said or Said(), load)


class NoFailures:
    """Load failures are filed nowhere here (none of these loads has a bug observation)."""

    def loaded(self, model: Path, failure: object) -> None:
        raise AssertionError(f"{model}: no failure expected")


def statuses(out: Path) -> dict[str, tuple[str, dict[str, object]]]:
    con = sqlite3.connect(out / "campaign.db")
    try:
        return {m: (s, json.loads(d)) for m, s, d in con.execute("SELECT model, status, detail FROM models")}
    finally:
        con.close()


def never() -> bool:
    return False


@pytest.fixture
def models(tmp_path: Path) -> list[Path]:
    return [tmp_path / "pool" / name for name in ("a.onnx", "b.onnx", "bad.onnx")]


def test_a_killed_load_is_loaded_again_on_resume_and_a_failed_one_is_not(tmp_path: Path, models: list[Path]) -> None:
    out, loads = tmp_path / "camp", []
    said = Said()
    first = session(out, models, loader({"b.onnx"}, loads), said)
    first.load_pool(never)
    assert loads == ["a.onnx", "b.onnx", "bad.onnx"]
    with CampaignReader.open(out / "campaign.db") as reader:
        listed = Console(width=300, record=True)
        listed.print(unloaded_models_table(reader))
    assert "its load was killed from outside; --resume loads it again: killed by signal SIGKILL" in listed.export_text()
    status = statuses(out)
    assert status["b.onnx"] == (KILLED, {"observations": [SIGKILLED.to_json()], "killed": 1})
    assert status["bad.onnx"][0] == "failed" and "killed" not in status["bad.onnx"][1]
    assert (first.stats.loaded_models, first.stats.failed_models) == (1, 1)  # a kill is no failure of the model
    assert any("b.onnx: its load was killed by SIGKILL from outside" in line and "--resume loads it again" in line
               for line in said.lines)
    loads.clear()
    second = session(out, models, loader(set(), loads))  # --resume
    second.load_pool(never)
    assert loads == ["b.onnx"]  # the killed one only: never the loaded nor the failed one
    assert statuses(out)["b.onnx"] == ("ok", {"observations": []})
    assert [e.origin for e in second.corpus.entries] == ["a.onnx", "b.onnx"]
    assert [e.origin for e in second.pending] == ["b.onnx"]  # its seed runs first


def test_a_model_killed_every_time_is_given_up_saying_so(tmp_path: Path, models: list[Path]) -> None:
    out, loads = tmp_path / "camp", []
    for n in range(1, KILLED_LOADS + 2):
        said = Said()
        session(out, models, loader({"b.onnx"}, loads), said).load_pool(never)
        status, detail = statuses(out)["b.onnx"]
        if n < KILLED_LOADS:
            assert (status, detail["killed"]) == (KILLED, n)
    assert loads.count("b.onnx") == KILLED_LOADS  # then never again
    assert (status, detail["killed"]) == ("failed", KILLED_LOADS)
    with CampaignReader.open(out / "campaign.db") as reader:
        table = unloaded_models_table(reader)
    assert table is not None
    console = Console(width=300, record=True)
    console.print(table)
    shown = console.export_text()
    assert f"its load was killed by SIGKILL from outside {KILLED_LOADS} times in a row" in shown and "given up" in shown


def test_a_kill_in_between_loads_starts_the_count_again(tmp_path: Path, models: list[Path]) -> None:
    out, loads = tmp_path / "camp", []
    session(out, models[:2], loader({"b.onnx"}, loads)).load_pool(never)
    session(out, models[:2], loader(set(), loads)).load_pool(never)
    assert statuses(out)["b.onnx"][0] == "ok"
    assert session(out, models[:2], loader({"b.onnx"}, loads)).kills == {}  # loaded: nothing to load again


def test_when_every_load_was_killed_the_error_says_resume_loads_them(tmp_path: Path, models: list[Path]) -> None:
    loads: list[str] = []
    with pytest.raises(PoolError, match=r"no usable seeds yet: the loads of 2 of 2 models were killed by SIGKILL "
                                        r"from outside; --resume loads them again"):
        session(tmp_path / "camp", models[:2], loader({"a.onnx", "b.onnx"}, loads)).load_pool(never)


def test_a_killed_load_that_kept_seeds_is_loaded(tmp_path: Path, models: list[Path]) -> None:
    """An attempt killed after it checkpointed seeds: the model is loaded with them (not loaded again)."""
    out = tmp_path / "camp"

    def partial(model: Path, *_: object) -> ModelSeeds:
        return ModelSeeds(model, [SIGKILLED], [("kept before the kill", "op")], killed=True)

    load: Callable[..., ModelSeeds] = partial
    session(out, models[:1], load).load_pool(never)
    assert statuses(out)["a.onnx"][0] == "ok"


@pytest.mark.usefixtures("restore_signals")
def test_a_campaign_whose_load_was_killed_loads_that_model_on_resume(tmp_path: Path) -> None:
    """The whole chain on real campaigns of the fake worker: the first session's load of ``b.onnx`` is
    SIGKILLed, the campaign fuzzes the rest; ``--resume`` loads ``b.onnx`` and fuzzes its seed too."""
    pool = tmp_path / "pool"
    pool.mkdir()
    for name in ("a.onnx", "b.onnx"):
        (pool / name).write_bytes(b"not read by the fake loader")
    out, loads = tmp_path / "camp", []
    for resume, killed in ((False, {"b.onnx"}), (True, set())):
        monitor = StopAfter(5)
        c = Campaign(out, pool, config(), resume=resume, seed_loader=loader(killed, loads), gate=FakeGate(by_symptom),
                     monitor=monitor)
        monitor.campaign = c
        c.run()
    assert loads == ["a.onnx", "b.onnx", "b.onnx"]
    assert {m: s for m, (s, _) in statuses(out).items()} == {"a.onnx": "ok", "b.onnx": "ok"}
    ran = query(out / "campaign.db", "SELECT origin_model FROM corpus WHERE parent IS NULL ORDER BY rowid")
    assert ran == [("a.onnx",), ("b.onnx",)]


class StopAfter(Said):
    """Stops its campaign once it ran ``execs`` test cases in this session."""

    def __init__(self, execs: int) -> None:
        super().__init__()
        self.execs = execs
        self.campaign: Campaign | None = None

    def update(self, stats: CampaignStats) -> None:
        if self.campaign is not None and stats.phase == "fuzzing" and stats.session_execs >= self.execs:
            self.campaign.stop()
