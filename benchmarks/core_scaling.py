"""Benchmark the machine itself: how much slower one core's TVM work gets while the other core does
the same work.

Usage::

    python benchmarks/core_scaling.py [--seconds 20] [--jobs 2]

It compiles and runs one fixed case (a softmax seed through TVM's default pipeline with one fuzzed
pass: the three programs of the low-level kernel, the work a fuzz worker does) in a loop, first in
one process alone, then in ``--jobs`` processes at once, and prints each configuration's rate and
the scaling (rate with ``--jobs`` processes over the rate alone; ``--jobs`` on an ideal machine).
It is the ceiling for ``fuzz_throughput.py --jobs N`` against ``--jobs 1`` in the same sitting:
on a virtual machine whose processors share physical cores, two busy processes each run slower,
and no campaign can scale better than that. Figures are printed, never asserted.
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import click

SEED = Path(__file__).parent.parent / "tests" / "fixtures" / "seeds" / "softmax.py"


def loop(seconds: float) -> int:
    """Observe the fixed case again and again for ``seconds``; the number of observations."""
    from seedzer.kernel.common import Case
    from seedzer.kernel.lowlevel import observe
    from seedzer.mutate.contracts import plan
    from seedzer.seed import PassSpec, input_seed

    script = SEED.read_text()
    case = Case(script, tuple(plan([PassSpec("tirx.StmtSimplify")])), input_seed(script))
    observe(case)  # warm up: imports, first JIT
    done, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        observe(case)
        done += 1
    return done


def rate(processes: int, seconds: float) -> float:
    """Observations per second of ``processes`` loops running at once."""
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        counts = pool.map(loop, [seconds] * processes)
    return sum(counts) / seconds


@click.command()
@click.option("--seconds", type=float, default=20.0, show_default=True, help="Length of each measurement.")
@click.option("--jobs", type=int, default=2, show_default=True, help="Processes at once in the second measurement.")
def main(seconds: float, jobs: int) -> None:
    """Print the rate of one process alone, of ``jobs`` at once, and the scaling between them."""
    alone = rate(1, seconds)
    together = rate(jobs, seconds)
    print(f"1 process: {alone:.2f} cases/s; {jobs} processes: {together:.2f} cases/s "
          f"({together / jobs:.2f} each); scaling {together / alone:.2f}x of an ideal {jobs}x")


if __name__ == "__main__":
    main()
