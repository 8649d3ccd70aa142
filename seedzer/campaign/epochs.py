"""Generation epochs of a running campaign (``fuzz --epochs N``): schedule, generator process, intake.

The budget is split into ``N`` epochs of equal length; epoch 0 fuzzes the pool given with ``--pool``.
Once the pool is loaded, the campaign starts one generator process
(:mod:`seedzer.campaign.epoch_generator`), which imports NNSmith and waits. Half-way through epoch
``k - 1`` (:data:`LAUNCH_AT`) the campaign computes every model's reward so far
(:mod:`seedzer.campaign.epoch_rewards`), the bandit's posterior and one Thompson draw of operator weights
and of attribute-value weights (:mod:`seedzer.generate.bandit`; the attributes:
:mod:`seedzer.generate.attribute_arms`), and writes them to ``epochs/epoch-<k>/weights.json`` and the
``epochs`` table; the generator then makes and loads epoch ``k``'s models. From the start of epoch ``k`` on,
every model the generator has loaded is taken in (its seeds join the corpus, its load failures are
filed) once per poll, without waiting: the loop only adds entries.

A campaign stopped mid-epoch resumes there: the weights of an epoch are drawn once (``weights.json``
is reused), the generator skips the epochs it finished, the attempts its pools' manifests record and
the models it has loaded, and the campaign skips the models its ``models`` table has.
"""

from __future__ import annotations

import contextlib
import json
import math
import pickle
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.campaign.epoch_generator import (
    DONE_FILE,
    INDEX_STRIDE,
    WEIGHTS_FILE,
    GeneratorJob,
    epoch_folder,
    loaded_path,
    write_job,
)
from seedzer.campaign.epoch_rewards import ModelInfo, finding_origins, models_of_manifest, rewards
from seedzer.campaign.loading import Loading
from seedzer.campaign.monitor import Monitor
from seedzer.config import Config, EpochsConfig, config_from_dict, to_dict
from seedzer.errors import PoolError
from seedzer.generate.bandit import ModelOutcome, posterior, successes, thompson
from seedzer.generate.seed_pool import MANIFEST, read_manifest, verified_models
from seedzer.levels.level import ModelSeeds
from seedzer.store.atomic import write_atomic
from seedzer.store.corpus import Corpus
from seedzer.store.db import CampaignDB
from seedzer.store.epoch_rows import EpochRow, epoch_rows, save_epoch

EPOCHS_DIR = "epochs"
LAUNCH_AT = 0.5
"""The share of epoch ``k - 1`` after which epoch ``k``'s models are made (learned from what came before)."""
POLL_SECONDS = 1.0
"""Seconds between two looks at the generator and its results."""
RELAUNCHES = 2
"""Times a generator that stopped before its work was done is started again in one session."""


@dataclass(frozen=True)
class EpochSchedule:
    """``count`` epochs of equal length over a budget of ``budget`` seconds."""

    budget: float
    count: int

    @property
    def length(self) -> float:
        """Seconds per epoch."""
        return self.budget / self.count

    def start(self, epoch: int) -> float:
        """Campaign seconds at which ``epoch`` starts."""
        return epoch * self.length

    def epoch_at(self, elapsed: float) -> int:
        """The epoch running at ``elapsed`` campaign seconds (the last one after the budget)."""
        return min(self.count - 1, max(0, math.floor(elapsed / self.length)))

    def launch_at(self, epoch: int) -> float:
        """Campaign seconds at which ``epoch``'s weights are drawn and its models made (epoch >= 1)."""
        return self.start(epoch - 1) + LAUNCH_AT * self.length


def epoch_dir(out: Path, epoch: int) -> Path:
    """The pool directory of ``epoch`` (>= 1) in campaign ``out``."""
    return epoch_folder(Path(out) / EPOCHS_DIR, epoch)


def check_epoch_pool(pool: Path) -> dict[str, Any]:
    """The manifest of a pool epochs can grow from (made by ``seedzer generate`` from NNSmith), or a
    one-line :class:`PoolError` naming it."""
    if not (Path(pool) / MANIFEST).is_file():
        raise PoolError(f"{pool}: --epochs needs a pool made by `seedzer generate` (its manifest.json names "
                        "the generation options the epochs continue)")
    manifest = read_manifest(Path(pool))
    generation = manifest.get("generation")
    if not isinstance(generation, dict):
        raise PoolError(f"{pool}: --epochs needs a pool made by `seedzer generate` (its manifest.json names no "
                        "generation options)")
    if generation.get("source", "nnsmith") != "nnsmith":
        raise PoolError(f"{pool}: --epochs needs an NNSmith pool (this one's models come from the model zoo)")
    if any(int(e.get("index", 0)) >= INDEX_STRIDE for e in manifest.get("models") or []):
        raise PoolError(f"{pool}: --epochs needs a pool whose attempts are numbered below {INDEX_STRIDE}")
    return manifest


def epoch_models(out: Path) -> list[Path]:
    """Every model the epochs of campaign ``out`` have made so far (resumed entries may name them)."""
    found: list[Path] = []
    root = Path(out) / EPOCHS_DIR
    for folder in sorted(root.glob("epoch-*")) if root.is_dir() else []:
        with contextlib.suppress(PoolError, OSError, ValueError):
            found.extend(verified_models(folder))
    return found


def resumed_epochs(recorded: object, asked: EpochsConfig) -> tuple[EpochsConfig, str | None]:
    """The epochs a resumed campaign runs: those of its recorded configuration (``recorded``, campaign.db's
    meta ``config``: their schedule splits the whole budget, their pools and weights are on disk), and
    the line that says so when ``asked`` wanted another number (None: nothing to say). A campaign from
    before the epochs recorded none: ``asked`` then."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("epochs"), dict):
        return asked, None
    kept = config_from_dict({"epochs": recorded["epochs"]}, "campaign.db").epochs
    count = kept.count if kept.count > 1 else 0
    if not ((asked.count > 1 and asked.count != count) or (asked.count == 1 and count)):
        return kept, None
    kept_as = f"with {count} epochs: --resume keeps them" if count else "without epochs: --resume keeps it so"
    return kept, (f"this campaign was started {kept_as} (epochs.count {asked.count}, from --epochs or the "
                  "configuration, applies to new campaigns only)")


def generator_argv(job: Path) -> list[str]:
    """The generator process's command line for the job file ``job``."""
    return [sys.executable, "-m", "seedzer.campaign.epoch_generator", str(job)]


class Epochs:
    """The epochs of one running campaign (see the module docstring): the campaign in ``out`` with its
    store, its models and their loading, its corpus and its coverage total (``coverage``), over a budget
    of ``budget`` seconds of which ``elapsed`` are used; ``generator`` makes the command line of the
    generator process from its job file. Owns the generator process, the epochs' rows and what it knows
    of every model made so far."""

    def __init__(self, out: Path, cfg: Config, db: CampaignDB, loading: Loading, corpus: Corpus,
                 coverage: Callable[[], int], monitor: Monitor, budget: float, elapsed: float,
                 generator: Callable[[Path], list[str]] = generator_argv) -> None:
        self.out, self.campaign_cfg, self.db, self.loading, self.corpus = Path(out), cfg, db, loading, corpus
        self.coverage, self.monitor = coverage, monitor
        self.generator = generator
        self.cfg = cfg.epochs
        self.schedule = EpochSchedule(budget, cfg.epochs.count)
        self.base = check_epoch_pool(loading.pool)
        self.infos: dict[str, ModelInfo] = {m.name: m for m in models_of_manifest(self.base, 0)}
        self.rows = {row.epoch: row for row in epoch_rows(db.conn)}
        self.proc: subprocess.Popen[bytes] | None = None
        self.failures = 0
        """Times the generator stopped before its work was done in this session."""
        self.next_poll = 0.0
        self.current = self.schedule.epoch_at(elapsed)
        for k in range(1, cfg.epochs.count):
            manifest = epoch_dir(self.out, k) / MANIFEST
            if manifest.is_file():
                self.infos.update({m.name: m for m in models_of_manifest(read_manifest(manifest.parent), k)})
        row0 = self.rows.get(0) or EpochRow(0, started=0.0)
        pool_models = {m.name for m in models_of_manifest(self.base, 0)}
        row0.made, row0.loaded = len(pool_models), len(pool_models & db.loaded_models())
        self._save(row0)
        self.inserts = bool((self.base["generation"].get("insert") or {}).get("operators"))
        """Whether the pool's heuristic inserts importer operators (then their weights are learned too)."""

    # --- the loop's calls ----------------------------------------------------------------------
    def poll(self, elapsed: float) -> None:
        """Called by the loop at every turn: at most once per :data:`POLL_SECONDS`, reap the generator,
        record a boundary crossed, take in the loaded models of the epochs started and start the
        generator of the next epoch when it is due."""
        now = time.monotonic()
        if now < self.next_poll:
            return
        self.next_poll = now + POLL_SECONDS
        self._reap()
        epoch = self.schedule.epoch_at(elapsed)
        while self.current < epoch:
            self._boundary(self.current, elapsed)
            self.current += 1
        for k in range(1, self.current + 1):
            self._intake(k)
        following = self.current + 1
        if following < self.schedule.count and elapsed >= self.schedule.launch_at(following):
            self._weights(following)
        for k in (self.current, following):
            if 1 <= k < self.schedule.count:
                self._made(k)
        if self.proc is None and not self._complete() and self.failures <= RELAUNCHES:
            self._launch()

    def close(self, elapsed: float) -> None:
        """Stop the generator (it resumes with the campaign) and record the current epoch's end so far
        and every model's final reward (``epochs/rewards.json``)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        for k in range(1, self.schedule.count):
            self._made(k)
        self._end_row(self.current, elapsed)
        outcomes = self._outcomes()
        won = successes(outcomes)
        write_atomic(self.out / EPOCHS_DIR / "rewards.json",
                     json.dumps([{"model": o.model, "epoch": o.epoch, "reward": o.reward, "success": won.get(o.model)}
                                 for o in outcomes], indent=1))

    # --- the parts -------------------------------------------------------------------------------
    def _save(self, row: EpochRow) -> None:
        self.rows[row.epoch] = row
        save_epoch(self.db, row)

    def _roots(self) -> int:
        return len({r.root or r.signature for r in self.db.findings() if r.verdict == "bug"})

    def _end_row(self, epoch: int, elapsed: float) -> None:
        row = self.rows.get(epoch) or EpochRow(epoch)
        row.ended, row.coverage, row.roots = round(elapsed, 1), self.coverage(), self._roots()
        self._save(row)

    def _boundary(self, ended: int, elapsed: float) -> None:
        self._end_row(ended, elapsed)
        row = self.rows.get(ended + 1) or EpochRow(ended + 1)
        row.started = round(elapsed, 1)
        self._save(row)
        self.db.add_event("epoch", {"epoch": ended + 1, "elapsed": elapsed})
        self.monitor.message(f"epoch {ended + 1} of {self.schedule.count} starts")

    def _outcomes(self) -> list[ModelOutcome]:
        loaded = self.db.loaded_models()
        models = [m for m in self.infos.values() if m.name in loaded]
        roots = finding_origins(self.out / "findings", self.db.findings())
        return rewards(models, self.corpus.entries, roots)

    def _weights(self, epoch: int) -> dict[str, Any]:
        """The epoch's learned weights: drawn now, written to ``weights.json`` (where the generator finds
        them) and the ``epochs`` table, or read back from ``weights.json`` (drawn once)."""
        path = epoch_dir(self.out, epoch) / WEIGHTS_FILE
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text())
            if isinstance(data, dict) and isinstance(data.get("weights"), dict):
                return data
        outcomes = self._outcomes()
        won = successes(outcomes)
        rng = random.Random(f"seedzer-epochs:{self.campaign_cfg.fuzz.seed}:{epoch}")
        post, onnx_post = posterior(outcomes), posterior(outcomes, onnx=True) if self.inserts else {}
        attr_post = posterior(outcomes, arm="attributes")
        data = {"epoch": epoch, "weights": thompson(post, rng),
                "onnx_weights": thompson(onnx_post, rng) if self.inserts else {},
                "attribute_weights": thompson(attr_post, rng),
                "posterior": {op: [p.alpha, p.beta] for op, p in post.items()},
                "onnx_posterior": {op: [p.alpha, p.beta] for op, p in onnx_post.items()},
                "attribute_posterior": {a: [p.alpha, p.beta] for a, p in attr_post.items()},
                "outcomes": [{"model": o.model, "epoch": o.epoch, "reward": o.reward, "success": won.get(o.model),
                              "attributes": list(o.attributes)} for o in outcomes], "models": []}
        row = self.rows.get(epoch) or EpochRow(epoch)
        row.weights, row.onnx_weights = dict(data["weights"]), dict(data["onnx_weights"])
        row.attribute_weights = dict(data["attribute_weights"])
        row.posterior, row.outcomes = dict(data["posterior"]), list(data["outcomes"])
        self._save(row)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(data, indent=1))
        self.db.add_event("epoch_weights", {"epoch": epoch, "models": len(outcomes)})
        return data

    def _launch(self) -> None:
        """Start the generator process (once per campaign session, again after it stopped early)."""
        job = GeneratorJob(str(self.out / EPOCHS_DIR), self.schedule.count, self.cfg.models,
                           int(self.base.get("seed", 0) or 0), str(self.base.get("heuristic", "epochs")),
                           dict(self.base["generation"]), self.cfg.cpu_share,
                           str(self.out / EPOCHS_DIR / ".nnsmith-cache"), to_dict(self.campaign_cfg))
        path = write_job(job)
        log = open(self.out / "logs" / "epoch-generator.log", "ab")  # noqa: SIM115 (the child keeps it)
        try:
            self.proc = subprocess.Popen(self.generator(path), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        finally:
            log.close()
        self.db.add_event("epoch_generator", {"pid": self.proc.pid})

    def _reap(self) -> None:
        if self.proc is None or self.proc.poll() is None:
            return
        code, self.proc = self.proc.returncode, None
        if not self._complete():  # started again, up to RELAUNCHES times
            self.failures += 1
            self.monitor.message(f"warning: the epochs' generator stopped with status {code} before its work "
                                   "was done (see logs/epoch-generator.log)")

    def _made(self, epoch: int) -> None:
        """Record the models the generator has made for ``epoch`` (its pool's manifest)."""
        folder = epoch_dir(self.out, epoch)
        if not (folder / MANIFEST).is_file():
            return
        with contextlib.suppress(PoolError):
            made = models_of_manifest(read_manifest(folder), epoch)
            self.infos.update({m.name: m for m in made})
            row = self.rows.get(epoch) or EpochRow(epoch)
            if row.made == len(made):
                return
            row.made = len(made)
            self._save(row)
            with contextlib.suppress(OSError, ValueError):
                data = json.loads((folder / WEIGHTS_FILE).read_text())
                data["models"] = [m.name for m in made]
                write_atomic(folder / WEIGHTS_FILE, json.dumps(data, indent=1))

    def _complete(self) -> bool:
        """True once every later epoch's generation is done."""
        return all((epoch_dir(self.out, k) / DONE_FILE).is_file() for k in range(1, self.schedule.count))

    def _intake(self, epoch: int) -> None:
        """Take in every model of ``epoch`` the generator has loaded and the campaign has not."""
        folder = epoch_dir(self.out, epoch)
        if not (folder / MANIFEST).is_file():
            return
        done = self.db.loaded_models()
        for model in self._ready(folder):
            if model.name in done:
                continue
            try:
                got = pickle.loads(loaded_path(folder, model).read_bytes())
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
                self.monitor.message(f"warning: {model}: what the generator loaded cannot be read ({exc})")
                continue
            if not isinstance(got, ModelSeeds):
                continue
            self.loading.add_models([model])
            self.loading.take(model, got)
            row = self.rows.get(epoch) or EpochRow(epoch)
            row.loaded += 1
            self._save(row)

    @staticmethod
    def _ready(folder: Path) -> list[Path]:
        """The models of an epoch's pool with a loaded file, in manifest order."""
        try:
            entries = read_manifest(folder).get("models") or []
        except PoolError:  # being written: the next poll reads it
            return []
        return [folder / e["file"] for e in entries
                if isinstance(e, dict) and loaded_path(folder, folder / str(e.get("file"))).is_file()]
