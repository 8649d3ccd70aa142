"""The generator process of a campaign's epochs: ``python -m seedzer.campaign.epoch_generator JOB.json``.

It makes one epoch's models and loads them, so that the campaign's loop only adds what it finds
(:mod:`seedzer.campaign.epochs`): it lowers its own priority (``nice``), generates the epoch's pool
(NNSmith with the epoch's learned operator weights, and importer-operator insertions when the pool's
heuristic inserts: :func:`seedzer.generate.driver.generate_epoch_pool`) into the job's directory, then
loads each model as a campaign does (each attempt in a child forked from the zygote) and writes what
loading gave to ``loaded/<model>.pickle`` (written atomically, read only by the campaign that wrote the
job). A :class:`~seedzer.generate.cpu_share.CpuGovernor` sleeps between models so that its CPU seconds
stay within the job's share of its wall seconds; the zygote's children are not its children, so a
load's wall seconds are charged as CPU seconds (an upper bound). ``done.json`` holds the measured
figures (``governor.json`` the figures so far). It makes and loads one model at a time, so the first
ones are ready early. Killed at any moment, it is started again and skips what exists: attempts recorded in the
pool's manifest, models with a ``loaded/`` file.
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DONE_FILE = "done.json"
PROGRESS_FILE = "governor.json"
"""The governor's figures so far, rewritten after every model (``done.json`` has the final ones)."""
JOB_FILE = "job.json"
LOADED_DIR = "loaded"


@dataclass
class EpochJob:
    """What the generator makes: ``count`` models into ``out`` (an epoch's pool directory) from the
    base pool's ``generation`` options with the learned weights (NNSmith's ``op_weights``, and the
    importer operators' ``insert_weights``), attempts numbered from ``first_index``, NNSmith seeded
    ``seed``; loaded with the campaign's ``config`` (a :func:`seedzer.config.to_dict` mapping)."""

    out: str
    epoch: int
    count: int
    seed: int
    first_index: int
    heuristic: str
    generation: dict[str, Any]
    op_weights: dict[str, float] = field(default_factory=dict)
    insert_weights: dict[str, float] = field(default_factory=dict)
    cpu_share: float = 0.25
    cache_dir: str = ""
    config: dict[str, Any] = field(default_factory=dict)


def loaded_path(epoch_dir: Path, model: Path) -> Path:
    """Where the generator writes what loading ``model`` gave."""
    return epoch_dir / LOADED_DIR / f"{model.name}.pickle"


def write_job(job: EpochJob) -> Path:
    """Write the job file into its epoch directory (created); returns its path."""
    from seedzer.store.atomic import write_atomic

    path = Path(job.out) / JOB_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(asdict(job), indent=1))
    return path


def _options(job: EpochJob) -> Any:
    """The generation options of the job: the base pool's, NNSmith's operator weights times the learned
    ones, the insertions weighted by the learned importer-operator weights."""
    import dataclasses

    from seedzer.generate.options import generation_from_dict

    base = generation_from_dict(job.generation)
    weights = {op: base.op_weights.get(op, 1.0) * w for op, w in job.op_weights.items()}
    insert = dataclasses.replace(base.insert, weights=dict(job.insert_weights)) if base.insert.active else base.insert
    return dataclasses.replace(base, op_weights={**base.op_weights, **weights}, insert=insert)


def run(job: EpochJob) -> dict[str, float]:
    """Make and load the job's models (see the module docstring); returns the figures of ``done.json``."""
    from seedzer.campaign.seeds import load_for_campaign
    from seedzer.config import config_from_dict
    from seedzer.generate.cpu_share import CpuGovernor, lower_priority
    from seedzer.generate.driver import generate_epoch_pool
    from seedzer.generate.heuristics import YamlHeuristic
    from seedzer.generate.options import SelectionOptions
    from seedzer.generate.seed_pool import verified_models
    from seedzer.store.atomic import write_atomic

    lower_priority()
    governor = CpuGovernor(job.cpu_share)
    out = Path(job.out)
    opts = _options(job)
    h = YamlHeuristic(job.heuristic, out / JOB_FILE, opts, SelectionOptions())
    cfg = config_from_dict(job.config, str(out / JOB_FILE))
    generated = 0.0

    def figures() -> dict[str, float]:
        return {"cpu_seconds": round(governor.used(), 2), "wall_seconds": round(governor.elapsed(), 2),
                "cpu_share": round(governor.ratio(), 4), "generation_cpu_seconds": round(generated, 2),
                "slept_seconds": round(governor.slept, 2), "limit": job.cpu_share}

    for made in range(1, job.count + 1):  # one model made, then loaded: the first ones are ready early
        before = governor.used()
        generate_epoch_pool(h, opts, out, made, seed=job.seed, first_index=job.first_index,
                            cache_dir=Path(job.cache_dir), pace=governor.pace)
        generated += governor.used() - before
        (out / LOADED_DIR).mkdir(exist_ok=True)
        for model in verified_models(out):
            target = loaded_path(out, model)
            if target.exists():
                continue
            governor.pace()
            start = time.monotonic()
            got = load_for_campaign(model, cfg.fuzz.differential_load, cfg.timeouts.load,
                                    cfg.fuzz.max_seeds_per_model, cfg.limits.limits())
            governor.charge(time.monotonic() - start)  # the zygote's child worked: its wall seconds, as CPU
            write_atomic(target, pickle.dumps(got))
        write_atomic(out / PROGRESS_FILE, json.dumps(figures(), indent=1))
    governor.pace()
    done = figures()
    write_atomic(out / DONE_FILE, json.dumps(done, indent=1))
    return done


def main(argv: list[str] | None = None) -> int:
    """Run the job file named on the command line."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m seedzer.campaign.epoch_generator JOB.json", file=sys.stderr)
        return 2
    job = EpochJob(**json.loads(Path(args[0]).read_text()))
    print(json.dumps(run(job)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
