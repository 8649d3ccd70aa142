"""Generation epochs of a running campaign (seedzer.campaign.epochs): the schedule, the intake of what
the generator made, resuming mid-epoch, the weights recorded. No TVM, no NNSmith: pools are written by
hand and the generator process is a real, trivial process."""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from seedzer.campaign.epoch_generator import DONE_FILE, INDEX_STRIDE, WEIGHTS_FILE, loaded_path
from seedzer.campaign.epochs import (
    EPOCHS_DIR,
    LAUNCH_AT,
    RELAUNCHES,
    Epochs,
    EpochSchedule,
    check_epoch_pool,
    epoch_dir,
    epoch_models,
    resumed_epochs,
)
from seedzer.campaign.loading import Loading
from seedzer.campaign.monitor import QuietMonitor
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.stats import CampaignStats
from seedzer.config import Config, EpochsConfig, LevelsConfig
from seedzer.coverage import make_backend
from seedzer.errors import PoolError
from seedzer.levels.level import ModelSeeds
from seedzer.protocols import CoverageBackend
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from seedzer.store.epoch_rows import epoch_rows

GENERATION = {"source": "nnsmith", "op_weights": {}, "max_nodes": 10, "dtypes": ["float32"], "conv": {}}


def write_pool(folder: Path, indices: list[int], ops: list[list[str]]) -> list[Path]:
    """A pool written by hand: one tiny file per model and a manifest with their NNSmith operators."""
    folder.mkdir(parents=True, exist_ok=True)
    models = []
    for index, names in zip(indices, ops, strict=True):
        path = folder / f"model_{index:06d}.onnx"
        path.write_bytes(f"model {index}".encode())
        models.append({"file": path.name, "index": index, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                       "nnsmith_ops": names, "ops": [n.upper() for n in names]})
    manifest = {"format": 1, "heuristic": "basic", "generation": GENERATION, "seed": 1, "models": models}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return [folder / m["file"] for m in models]


class NoFiling:
    """Filing for models whose loading failed nowhere (these tests load none that fails)."""

    def loaded(self, model: Path, failure: object) -> None:
        raise AssertionError(f"{model}: no failure expected")


@dataclass
class Host:
    """The campaign's parts the epochs use: a real store, corpus, loading and coverage totals."""

    out: Path
    pool: Path
    cfg: Config
    db: CampaignDB
    corpus: Corpus
    stats: CampaignStats
    coverage: CoverageBackend = field(default_factory=lambda: make_backend("passes"))
    monitor: QuietMonitor = field(default_factory=QuietMonitor)
    pending: PendingSeeds = field(default_factory=PendingSeeds)
    loading: Loading = field(init=False)

    def __post_init__(self) -> None:
        self.loading = Loading(self.cfg, self.pool, [], self.db, self.corpus, self.pending, NoFiling(), self.stats,
                               self.monitor)


def epochs_of(h: Host, generator: Callable[[Path], list[str]]) -> Epochs:
    """The epochs of the campaign ``h`` stands for, as the campaign makes them."""
    return Epochs(h.out, h.cfg, h.db, h.loading, h.corpus, h.coverage.total, h.monitor, h.stats.budget,
                  h.stats.elapsed, generator=generator)


def host(tmp_path: Path, count: int = 3, minutes: float = 3.0) -> Host:
    pool = tmp_path / "pool"
    write_pool(pool, [0, 1], [["Conv2d", "Relu"], ["Add"]])
    out = tmp_path / "campaign"
    (out / "logs").mkdir(parents=True)
    cfg = Config()
    cfg.levels = LevelsConfig({"tir": 1.0})
    cfg.epochs.count, cfg.epochs.models = count, 2
    db = CampaignDB(out / "campaign.db")
    for name in ("model_000000.onnx", "model_000001.onnx"):
        db.set_model(name, "ok", 1, {})
    return Host(out, pool, cfg, db, Corpus(out / "corpus", db), CampaignStats(budget=minutes * 60))


def loaded(model: Path, script: str) -> ModelSeeds:
    return ModelSeeds(model, [], [(script, "add")], [], True)


def write_epoch(out: Path, epoch: int, scripts: list[str | None], done: bool) -> list[Path]:
    """Epoch ``epoch``'s pool as its generator leaves it: models, loaded files for the scripts given."""
    folder = epoch_dir(out, epoch)
    base = epoch * INDEX_STRIDE
    models = write_pool(folder, [base + i for i in range(len(scripts))], [["Relu"]] * len(scripts))
    (folder / "loaded").mkdir()
    for model, script in zip(models, scripts, strict=True):
        if script is not None:
            loaded_path(folder, model).write_bytes(pickle.dumps(loaded(model, script)))
    if done:
        (folder / DONE_FILE).write_text("{}")
    return models


def test_the_schedule_splits_the_budget_and_launches_half_way_through_the_epoch_before() -> None:
    s = EpochSchedule(300.0, 3)
    assert s.length == 100 and s.start(2) == 200
    assert [s.epoch_at(t) for t in (0, 99.9, 100, 250, 300, 1000)] == [0, 0, 1, 2, 2, 2]
    assert s.launch_at(1) == LAUNCH_AT * 100 and s.launch_at(2) == 100 + LAUNCH_AT * 100


def test_a_pool_without_manifest_or_from_the_zoo_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "m.onnx").write_bytes(b"x")
    with pytest.raises(PoolError, match="needs a pool made by `seedzer generate`"):
        check_epoch_pool(tmp_path / "bare")
    write_pool(tmp_path / "zoo", [0], [["Relu"]])
    data = json.loads((tmp_path / "zoo" / "manifest.json").read_text())
    data["generation"]["source"] = "zoo"
    (tmp_path / "zoo" / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(PoolError, match="needs an NNSmith pool"):
        check_epoch_pool(tmp_path / "zoo")


def idle(job: Path) -> list[str]:
    """A generator process that does nothing (and is done at once)."""
    return [sys.executable, "-c", "pass"]


def test_weights_are_drawn_half_way_from_the_rewards_so_far_and_recorded(tmp_path: Path) -> None:
    h = host(tmp_path)
    h.corpus.add(CorpusEntry("s0", "x0", "[]", "model_000000.onnx", level="tir"), 0)
    h.corpus.add(CorpusEntry("m0", "x0'", "[]", "model_000000.onnx", "s0", level="tir"), 3)
    launched: list[Path] = []
    epochs = epochs_of(h, lambda job: launched.append(job) or idle(job))
    epochs.poll(LAUNCH_AT * 60 - 1)
    assert len(launched) == 1  # the generator starts at once (it imports NNSmith while it waits)
    assert not (epoch_dir(h.out, 1) / WEIGHTS_FILE).exists()
    epochs.next_poll = 0.0
    epochs.poll(LAUNCH_AT * 60 + 1)
    data = json.loads((epoch_dir(h.out, 1) / WEIGHTS_FILE).read_text())
    # model 0 kept a mutant (reward 1), model 1 nothing: Conv2d and Relu were in a success, Add in a failure
    assert data["posterior"] == {"Add": [1.0, 2.0], "Conv2d": [2.0, 1.0], "Relu": [2.0, 1.0]}
    assert set(data["weights"]) == {"Add", "Conv2d", "Relu"} and data["onnx_weights"] == {}
    assert data["attribute_weights"] == {}  # the pool given's models drew no attribute values: epoch 1 draws uniformly
    assert [(o["model"], o["reward"], o["success"]) for o in data["outcomes"]] == [
        ("model_000000.onnx", 1.0, True), ("model_000001.onnx", 0.0, False)]
    job = json.loads(launched[0].read_text())
    assert job["count"] == 3 and job["models"] == 2 and job["generation"] == GENERATION
    row = {r.epoch: r for r in epoch_rows(h.db.conn)}[1]
    assert row.weights == data["weights"] and row.posterior == data["posterior"] and row.attribute_weights == {}
    epochs.close(LAUNCH_AT * 60 + 2)
    assert json.loads((h.out / EPOCHS_DIR / "rewards.json").read_text())[0]["success"] is True


def test_a_generator_that_stops_early_is_started_again_a_bounded_number_of_times(tmp_path: Path) -> None:
    h = host(tmp_path)
    launched: list[Path] = []
    epochs = epochs_of(h, lambda job: launched.append(job) or idle(job))
    deadline = time.monotonic() + 20
    while epochs.failures <= RELAUNCHES and time.monotonic() < deadline:
        if epochs.proc is not None:
            epochs.proc.wait()
        epochs.next_poll = 0.0
        epochs.poll(1.0)
    assert len(launched) == RELAUNCHES + 1 and epochs.proc is None


def test_models_are_taken_in_only_once_their_epoch_started(tmp_path: Path) -> None:
    h = host(tmp_path)
    models = write_epoch(h.out, 1, ["a", "b"], done=True)
    write_epoch(h.out, 2, [], done=True)
    epochs = epochs_of(h, idle)
    epochs.poll(59.0)
    assert not h.corpus.entries
    epochs.next_poll = 0.0
    epochs.poll(61.0)
    assert {e.origin for e in h.corpus.entries} == {m.name for m in models}
    assert [e.script for e in h.pending] == ["a", "b"] and h.loading.models == models
    rows = {r.epoch: r for r in epoch_rows(h.db.conn)}
    assert rows[0].ended == 61.0 and rows[1].started == 61.0 and rows[1].loaded == 2 and rows[1].made == 2
    assert epochs.proc is None  # every epoch done: no generator


def test_a_campaign_resumed_mid_epoch_takes_in_the_rest_and_generates_nothing_twice(tmp_path: Path) -> None:
    h = host(tmp_path)
    h.stats.elapsed = 70.0
    models = write_epoch(h.out, 1, ["a", "b", None], done=False)  # killed while loading the third model
    weights = {"epoch": 1, "weights": {"Relu": 1.7}, "onnx_weights": {}, "posterior": {"Relu": [2.0, 1.0]},
               "outcomes": [], "models": []}
    (epoch_dir(h.out, 1) / WEIGHTS_FILE).write_text(json.dumps(weights))
    h.db.set_model(models[0].name, "ok", 1, {})  # taken in before the kill
    launched: list[Path] = []
    epochs = epochs_of(h, lambda job: launched.append(job) or idle(job))
    assert epochs.current == 1
    epochs.poll(70.0)
    assert [e.script for e in h.corpus.entries] == ["b"]  # the first was taken in already, the third not loaded
    assert len(launched) == 1  # the generator again: it finishes epoch 1 with the weights drawn before
    assert json.loads((epoch_dir(h.out, 1) / WEIGHTS_FILE).read_text())["weights"] == {"Relu": 1.7}
    assert epoch_models(h.out) == models
    assert {r.epoch: r for r in epoch_rows(h.db.conn)}[1].made == 3
    # the generator loads the third model: the next poll takes it in
    loaded_path(epoch_dir(h.out, 1), models[2]).write_bytes(pickle.dumps(loaded(models[2], "c")))
    epochs.next_poll = 0.0
    epochs.poll(71.0)
    assert [e.script for e in h.corpus.entries] == ["b", "c"]


def test_a_resumed_campaign_keeps_its_recorded_epochs_and_says_so_when_asked_for_others() -> None:
    """Issue 55 row 11: before, ``--resume --epochs 5`` kept (or silently changed) the recorded number."""
    three = {"epochs": {"count": 3, "models": 4, "cpu_share": 0.5}}
    kept, said = resumed_epochs(three, EpochsConfig(count=5))
    assert (kept.count, kept.models) == (3, 4)
    assert said == ("this campaign was started with 3 epochs: --resume keeps them (epochs.count 5, from --epochs "
                    "or the configuration, applies to new campaigns only)")
    assert resumed_epochs(three, EpochsConfig())[1] is None  # nothing asked: nothing to say
    assert resumed_epochs(three, EpochsConfig(count=3))[1] is None
    assert "without epochs" in str(resumed_epochs({"epochs": {"count": 0}}, EpochsConfig(count=2))[1])
    assert resumed_epochs({"epochs": {"count": 1}}, EpochsConfig(count=1))[1] is None  # 0 and 1: both none
    old = EpochsConfig(count=4)
    assert resumed_epochs({"fuzz": {}}, old) == (old, None)  # recorded before the epochs: as asked
