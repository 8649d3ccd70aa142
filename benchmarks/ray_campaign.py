"""One campaign through Ray against the same campaign without it: what the batched sync costs.

Usage::

    python benchmarks/ray_campaign.py --pool DIR [--minutes 5] [--jobs 2] [--seed 5] [--out DIR]
                                      [--address HOST:PORT]

Runs ``seedzer fuzz --pool DIR --jobs N --minutes M --seed S`` twice, one after the other: with local
worker processes, then with ``--ray`` (the workers Ray actors on a cluster: ``--address``, else a
two-node cluster started here on loopback, one CPU per node, see ``ray_local.py``). Prints, for
each: executions, executions per second over the whole campaign and after its first minute (the
loading and warm-up excluded), corpus entries, coverage features, bug root causes; then the Ray
campaign's rate as a share of the local one. Figures are printed, never asserted: timings on a
shared machine are noisy, so compare the two within one run (and run it on a quiet machine).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ray_local import CpuSampler, two_nodes

from seedzer.campaign.report import findings_view

WARM_UP = 60.0


@dataclass
class Figures:
    """What one campaign did."""

    name: str
    wall: float
    execs: int
    elapsed: float
    rate: float
    warm_rate: float
    corpus: int
    coverage: int
    roots: int


def figures(name: str, out: Path, wall: float) -> Figures:
    """Read a finished campaign's figures from its campaign.db."""
    conn = sqlite3.connect(f"file:{out / 'campaign.db'}?mode=ro", uri=True)
    try:
        snaps = conn.execute("SELECT time, execs, coverage, corpus_size FROM snapshots ORDER BY id").fetchall()
        roots = len(findings_view(out, conn).bugs)
    finally:
        conn.close()
    t_last, e_last, cov, corpus = snaps[-1]
    warm = next(((t, e) for t, e, _, _ in snaps if t >= WARM_UP), snaps[0][:2])
    warm_rate = (e_last - warm[1]) / (t_last - warm[0]) if t_last > warm[0] else 0.0
    return Figures(name, wall, int(e_last), float(t_last), e_last / t_last if t_last else 0.0, warm_rate,
                   int(corpus), int(cov), roots)


def campaign(pool: Path, out: Path, minutes: float, jobs: int, seed: int,
             ray: str | None) -> tuple[float, dict[str, float]]:
    """Run one campaign to its end; its wall seconds and the processor seconds of its processes by role."""
    argv = [sys.executable, "-m", "seedzer.cli", "fuzz", "--pool", str(pool), "--out", str(out), "--minutes",
            f"{minutes:g}", "--jobs", str(jobs), "--seed", str(seed), "--monitor", "quiet"]
    argv += ["--ray", ray] if ray else []
    t0 = time.monotonic()
    sampler = CpuSampler()
    with open(out.with_suffix(".log"), "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        sampler.start(proc.pid)
        code = proc.wait()
    used = sampler.stop()
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {code}; see {out.with_suffix('.log')}")
    return time.monotonic() - t0, used


def main() -> None:
    """Parse arguments, run both campaigns, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=Path, required=True)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path("build/ray-campaign"))
    ap.add_argument("--address", default=None, help="A running cluster (default: start a 2-node one here).")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs: list[tuple[Figures, dict[str, float]]] = []
    local = args.out / "local"
    wall, used = campaign(args.pool, local, args.minutes, args.jobs, args.seed, None)
    runs.append((figures("local processes", local, wall), used))
    remote = args.out / "ray"
    with contextlib.ExitStack() as stack:
        address = args.address or stack.enter_context(two_nodes())
        wall, used = campaign(args.pool, remote, args.minutes, args.jobs, args.seed, address)
    runs.append((figures("Ray actors", remote, wall), used))
    print(f"{'campaign':16} {'wall s':>7} {'execs':>7} {'execs/s':>8} {'after 1 min':>11} {'corpus':>7} "
          f"{'coverage':>9} {'bug roots':>9}")
    for f, _ in runs:
        print(f"{f.name:16} {f.wall:7.0f} {f.execs:7d} {f.rate:8.2f} {f.warm_rate:11.2f} {f.corpus:7d} "
              f"{f.coverage:9d} {f.roots:9d}")
    cores = len(os.sched_getaffinity(0))
    print(f"processor seconds by role (from /proc; % of the {cores} cores over the campaign's wall time):")
    print(f"{'campaign':16} " + " ".join(f"{role:>16}" for role in CpuSampler.ROLES) + f" {'worker ms/exec':>15}")
    for f, used in runs:
        cells = " ".join(f"{used[r]:8.0f} ({100 * used[r] / (f.wall * cores):4.1f}%)" for r in CpuSampler.ROLES)
        print(f"{f.name:16} {cells} {1000 * used['workers'] / max(f.execs, 1):15.1f}")
    (base, _), (ray, _) = runs
    if base.warm_rate:
        print(f"Ray's rate after the first minute: {100 * ray.warm_rate / base.warm_rate:.1f}% of the local one "
              f"(whole campaign: {100 * ray.rate / base.rate:.1f}%)")


if __name__ == "__main__":
    main()
