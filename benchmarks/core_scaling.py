"""Benchmark the machine itself: how much slower one core's TVM work gets while the other core does
the same work.

Usage::

    python benchmarks/core_scaling.py [--seconds 10] [--jobs 2] [--rounds 3] [--seed softmax]

It compiles and runs one fixed case (a fixture seed, softmax by default, through TVM's default
pipeline with one fuzzed pass: the three programs of the low-level kernel, the work a fuzz worker
does) in a loop, in one process alone, then in ``--jobs`` processes at once, for ``--rounds``
rounds, and prints each round's rates and scaling (rate with ``--jobs`` processes over the rate
alone; ``--jobs`` on an ideal machine) and the median scaling. ``--seed all`` cycles through every
fixture seed, each with several fuzzed passes, whose code and data fill far more of the shared
cache, as a campaign's many seeds and passes do.
It is the ceiling for ``fuzz_throughput.py --jobs N`` against ``--jobs 1`` in the same sitting:
on a virtual machine whose processors share physical cores, two busy processes each run slower,
and no campaign can scale better than that. Figures are printed, never asserted.
"""

from __future__ import annotations

import itertools
import multiprocessing
import statistics
import time
from pathlib import Path
from typing import Any

import click

SEEDS = Path(__file__).parent.parent / "tests" / "fixtures" / "seeds"


MIXED_PASSES: tuple[str, ...] = ("tirx.StmtSimplify", "s_tir.LoopPartition", "tirx.UnrollLoop", "tirx.RemoveNoOp")
"""The fuzzed passes of ``--seed all``: each fixture seed is compiled once with each of them."""


def cases(seed: str) -> list[Any]:
    """The kernel cases of fixture seed ``seed`` (one, with StmtSimplify), or of ``all``: every
    fixture seed with each of :data:`MIXED_PASSES`."""
    from seedzer.kernel.tir.case import Case
    from seedzer.passes.tir.contracts import plan
    from seedzer.seed import PassSpec, input_seed

    if seed == "all":
        scripts, passes = [p.read_text() for p in sorted(SEEDS.glob("*.py"))], MIXED_PASSES
    else:
        scripts, passes = [(SEEDS / f"{seed}.py").read_text()], MIXED_PASSES[:1]
    return [Case(script, tuple(plan([PassSpec(name)])), input_seed(script)) for script in scripts for name in passes]


def loop(seed: str, seconds: float) -> int:
    """Observe the cases of ``seed`` in turn, again and again for ``seconds``; the number of observations."""
    from seedzer.kernel.tir.observe import observe

    work = cases(seed)
    for case in work:  # warm up: imports, first JIT of each
        observe(case)
    done, end = 0, time.monotonic() + seconds
    for case in itertools.cycle(work):
        if time.monotonic() >= end:
            break
        observe(case)
        done += 1
    return done


def rate(seed: str, processes: int, seconds: float) -> float:
    """Observations per second of ``processes`` loops running at once."""
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        counts = pool.starmap(loop, [(seed, seconds)] * processes)
    return sum(counts) / seconds


@click.command()
@click.option("--seconds", type=float, default=10.0, show_default=True, help="Length of each measurement.")
@click.option("--jobs", type=int, default=2, show_default=True, help="Processes at once in the second measurement.")
@click.option("--rounds", type=int, default=3, show_default=True,
              help="Rounds of (alone, together), in turn: the machine's speed drifts over minutes.")
@click.option("--seed", default="softmax", show_default=True,
              help="Fixture seed (tests/fixtures/seeds/<name>.py) to compile, or 'all' to cycle through every "
                   "one with several passes: a bigger working set uses more of the shared cache.")
def main(seconds: float, jobs: int, rounds: int, seed: str) -> None:
    """Print, round by round, the rate of one process alone, of ``jobs`` at once, the scaling between
    them, and the median scaling."""
    scalings = []
    for index in range(1, rounds + 1):
        alone = rate(seed, 1, seconds)
        together = rate(seed, jobs, seconds)
        scalings.append(together / alone)
        print(f"round {index}: 1 process {alone:.2f} cases/s; {jobs} processes {together:.2f} cases/s "
              f"({together / jobs:.2f} each); scaling {together / alone:.2f}x", flush=True)
    print(f"median scaling {statistics.median(scalings):.2f}x of an ideal {jobs}x "
          f"(min {min(scalings):.2f}, max {max(scalings):.2f})")


if __name__ == "__main__":
    main()
