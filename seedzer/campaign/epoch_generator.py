"""The generator process of a campaign's epochs: ``python -m seedzer.campaign.epoch_generator JOB.json``.

One process per campaign makes every later epoch's models and loads them, so that the campaign's loop
only adds what it finds (:mod:`seedzer.campaign.epochs`). Started with the campaign, it lowers its own
priority (``nice``) and imports NNSmith and torch while the first weights are not drawn yet; then,
epoch after epoch, it waits for the epoch's ``weights.json`` (the campaign draws it half-way through
the epoch before), generates the epoch's pool
(NNSmith with the epoch's learned operator weights, each model with its own attribute values drawn with
the learned attribute weights (:mod:`seedzer.generate.attribute_arms`), and importer-operator insertions
when the pool's heuristic inserts: :func:`seedzer.generate.driver.generate_epoch_pool`) into the job's
directory, then
loads each model as a campaign does (each attempt in a child forked from the zygote) and writes what
loading gave to ``loaded/<model>.pickle`` (written atomically, read only by the campaign that wrote the
job). It exits when every epoch is done, or, at the next model, when the campaign that started it is
gone; it holds a lock on the epochs directory, so a generator of a resumed campaign waits for one a
killed campaign left behind to finish its model. A
:class:`~seedzer.generate.cpu_share.CpuGovernor` sleeps between models so that its CPU seconds
stay within the job's share of its wall seconds (the zygote's fork server and the load attempts it
forks included, read from ``/proc``). ``done.json`` holds the measured
figures (``governor.json`` the figures so far). It makes and loads one model at a time, so the first
ones are ready early. Killed at any moment, it is started again and skips what exists: attempts recorded in the
pool's manifest, models with a ``loaded/`` file.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DONE_FILE = "done.json"
WEIGHTS_FILE = "weights.json"
INDEX_STRIDE = 100_000
"""Epoch ``k``'s attempts are numbered from ``k * INDEX_STRIDE``: its models' names are its own."""
WAIT_SECONDS = 0.5
"""Seconds between two looks for the next epoch's weights."""
PROGRESS_FILE = "governor.json"
"""The governor's figures so far, rewritten after every model (``done.json`` has the final ones)."""
JOB_FILE = "job.json"
LOADED_DIR = "loaded"


@dataclass
class GeneratorJob:
    """What the generator makes: for each epoch 1 to ``count - 1``, ``models`` models into
    ``<out>/epoch-<k>/`` from the base pool's ``generation`` options with the epoch's learned weights
    (``weights.json``: NNSmith's ``op_weights``, the importer operators' insertion weights), attempts
    numbered from ``k * INDEX_STRIDE``, NNSmith seeded ``seed + k``; loaded with the campaign's ``config``
    (a :func:`seedzer.config.to_dict` mapping)."""

    out: str
    count: int
    models: int
    seed: int
    heuristic: str
    generation: dict[str, Any]
    cpu_share: float = 0.25
    cache_dir: str = ""
    config: dict[str, Any] = field(default_factory=dict)


def epoch_folder(out: Path, epoch: int) -> Path:
    """The pool directory of ``epoch`` under the epochs directory ``out``."""
    return Path(out) / f"epoch-{epoch}"


def loaded_path(epoch_dir: Path, model: Path) -> Path:
    """Where the generator writes what loading ``model`` gave."""
    return epoch_dir / LOADED_DIR / f"{model.name}.pickle"


def write_job(job: GeneratorJob) -> Path:
    """Write the job file into the epochs directory (created); returns its path."""
    from seedzer.store.atomic import write_atomic

    path = Path(job.out) / JOB_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(asdict(job), indent=1))
    return path


def _options(job: GeneratorJob, weights: dict[str, Any]) -> Any:
    """The generation options of one epoch: the base pool's, NNSmith's operator weights times the learned
    ones, the insertions weighted by the learned importer-operator weights."""
    import dataclasses

    from seedzer.generate.options import generation_from_dict

    base = generation_from_dict(job.generation)
    learned = {str(op): float(w) for op, w in (weights.get("weights") or {}).items()}
    inserted = {str(op): float(w) for op, w in (weights.get("onnx_weights") or {}).items()}
    ops = {op: base.op_weights.get(op, 1.0) * w for op, w in learned.items()}
    insert = dataclasses.replace(base.insert, weights=inserted) if base.insert.active else base.insert
    return dataclasses.replace(base, op_weights={**base.op_weights, **ops}, insert=insert)


def _attributes(weights: dict[str, Any]) -> dict[str, float] | None:
    """The epoch's learned attribute weights (each model draws its own attribute values with them), or
    None for weights drawn before attributes were learned (a campaign resumed from then)."""
    learned = weights.get("attribute_weights")
    return {str(k): float(v) for k, v in learned.items()} if isinstance(learned, dict) else None


def _wait_for(path: Path, parent: int) -> bool:
    """Wait until ``path`` exists (True), or until the campaign that started this process is gone (False)."""
    while not path.is_file():
        if os.getppid() != parent:
            return False
        time.sleep(WAIT_SECONDS)
    return True


def _lock(out: Path, parent: int) -> Any:
    """The lock of the epochs directory, waited for while another generator holds it (one a killed
    campaign left, finishing its model); None when the campaign that started this one is gone first."""
    from seedzer.store.lock import DirLock, LockError

    while True:
        try:
            return DirLock(out, what="epoch generator").acquire()
        except LockError:
            if os.getppid() != parent:
                return None
            time.sleep(WAIT_SECONDS)


class EpochGenerator:
    """The generator process's work (see the module docstring) for the campaign process ``parent``."""

    def __init__(self, job: GeneratorJob, parent: int) -> None:
        from seedzer.config import config_from_dict
        from seedzer.generate.cpu_share import CpuGovernor, lower_priority

        lower_priority()
        self.job, self.parent = job, parent
        self.governor = CpuGovernor(job.cpu_share)
        self.cfg = config_from_dict(job.config, str(Path(job.out) / JOB_FILE))
        self.generated = 0.0

    def warm_up(self) -> None:
        """Import NNSmith and torch now, while the first epoch's weights are not drawn yet."""
        from seedzer.generate.nnsmith_adapter import prepare_nnsmith

        prepare_nnsmith(Path(self.job.cache_dir))

    def figures(self) -> dict[str, float]:
        """The governor's figures so far (CPU seconds, wall seconds, their ratio, seconds slept)."""
        g = self.governor
        return {"cpu_seconds": round(g.used(), 2), "wall_seconds": round(g.elapsed(), 2),
                "cpu_share": round(g.ratio(), 4), "generation_cpu_seconds": round(self.generated, 2),
                "slept_seconds": round(g.slept, 2), "limit": self.job.cpu_share}

    def epoch(self, epoch: int, weights: dict[str, Any]) -> bool:
        """Make and load epoch ``epoch``'s models, one model at a time (the first ones are ready early);
        False when the campaign went away meanwhile (its next session makes the rest)."""
        from seedzer.campaign.seeds import load_for_campaign
        from seedzer.generate.driver import generate_epoch_pool
        from seedzer.generate.heuristics import YamlHeuristic
        from seedzer.generate.options import SelectionOptions
        from seedzer.generate.seed_pool import verified_models
        from seedzer.store.atomic import write_atomic

        job, cfg, governor = self.job, self.cfg, self.governor
        out = epoch_folder(Path(job.out), epoch)
        opts = _options(job, weights)
        h = YamlHeuristic(job.heuristic, Path(job.out) / JOB_FILE, opts, SelectionOptions())
        for made in range(1, job.models + 1):
            if os.getppid() != self.parent:
                return False
            before = governor.used()
            generate_epoch_pool(h, opts, out, made, seed=job.seed + epoch, first_index=epoch * INDEX_STRIDE,
                                cache_dir=Path(job.cache_dir), pace=governor.pace, attributes=_attributes(weights))
            self.generated += governor.used() - before
            (out / LOADED_DIR).mkdir(exist_ok=True)
            for model in verified_models(out):
                target = loaded_path(out, model)
                if target.exists():
                    continue
                governor.pace()
                got = load_for_campaign(model, cfg.fuzz.differential_load, cfg.timeouts.load,
                                        cfg.fuzz.max_seeds_per_model, cfg.limits.limits())
                write_atomic(target, pickle.dumps(got))
            write_atomic(out / PROGRESS_FILE, json.dumps(self.figures(), indent=1))
        governor.pace()
        write_atomic(out / DONE_FILE, json.dumps(self.figures(), indent=1))
        return True


def run(job: GeneratorJob, parent: int) -> int:
    """Make every epoch not done yet, each once the campaign has drawn its weights; returns the exit
    status (0: every epoch done; 1: the campaign went away first)."""
    lock = _lock(Path(job.out), parent)
    if lock is None:
        return 1
    gen = EpochGenerator(job, parent)
    gen.warm_up()
    for epoch in range(1, job.count):
        folder = epoch_folder(Path(job.out), epoch)
        if (folder / DONE_FILE).is_file():
            continue
        if not _wait_for(folder / WEIGHTS_FILE, parent) or \
                not gen.epoch(epoch, json.loads((folder / WEIGHTS_FILE).read_text())):
            return 1
    lock.release()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the job file named on the command line."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        from seedzer.console import echo

        echo("usage: python -m seedzer.campaign.epoch_generator JOB.json", err=True)
        return 2
    job = GeneratorJob(**json.loads(Path(args[0]).read_text()))
    return run(job, os.getppid())


if __name__ == "__main__":
    sys.exit(main())
