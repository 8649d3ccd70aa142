"""Benchmark the machine itself: how much slower one core's TVM work gets while the other core does
the same work.

Usage::

    python benchmarks/core_scaling.py [--seconds 10] [--jobs 2] [--rounds 3] [--seed softmax]

It compiles and runs one fixed case (a fixture seed, softmax by default, through TVM's default pipeline with one fuzzed
pass: the three programs of the low-level kernel, the work a fuzz worker does) in a loop, in one
process alone, then in ``--jobs`` processes at once, for ``--rounds`` rounds, and prints each
round's rates and scaling (rate with ``--jobs`` processes over the rate alone; ``--jobs`` on an
ideal machine) and the median scaling.
It is the ceiling for ``fuzz_throughput.py --jobs N`` against ``--jobs 1`` in the same sitting:
on a virtual machine whose processors share physical cores, two busy processes each run slower,
and no campaign can scale better than that. Figures are printed, never asserted.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from pathlib import Path

import click

SEEDS = Path(__file__).parent.parent / "tests" / "fixtures" / "seeds"


def loop(seed: str, seconds: float) -> int:
    """Observe the case of fixture seed ``seed`` again and again for ``seconds``; the number of observations."""
    from seedzer.kernel.common import Case
    from seedzer.kernel.lowlevel import observe
    from seedzer.mutate.contracts import plan
    from seedzer.seed import PassSpec, input_seed

    script = (SEEDS / f"{seed}.py").read_text()
    case = Case(script, tuple(plan([PassSpec("tirx.StmtSimplify")])), input_seed(script))
    observe(case)  # warm up: imports, first JIT
    done, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
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
              help="Fixture seed (tests/fixtures/seeds/<name>.py) to compile: a bigger one uses more cache.")
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
