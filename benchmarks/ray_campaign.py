"""One campaign through Ray against the same campaign without it: what the sync costs.

Usage::

    python benchmarks/ray_campaign.py --pool DIR [--minutes 5] [--jobs 2] [--seed 5] [--pairs 1] [--idle-ray]
                                      [--out DIR] [--address HOST:PORT]

Runs ``seedzer fuzz --pool DIR --jobs N --minutes M --seed S`` twice, one after the other: with local
worker processes, then with ``--ray`` (the workers Ray actors on a cluster: ``--address``, else a
two-node cluster started here on loopback, one CPU per node, see ``ray_local.py``). Prints, for
each: executions, executions per second over the whole campaign and after its first minute (the
loading and warm-up excluded), corpus entries, coverage features, bug root causes, the filing gate's
seconds; the processor seconds of every process by role (sampled from /proc); then the Ray
campaign's rate as a share of the local one. ``--idle-ray`` adds a third campaign to each round: a
local one beside the same Ray cluster holding idle actors on its CPUs, which splits what ``--ray``
costs into Ray's presence on the machine (its daemons and each actor's timers, whatever the campaign
does) and the campaign's own sync through Ray. ``--pairs N`` runs N such rounds one after the other and
gives the median shares: two identical local campaigns differ by several percent (their schedulers
pick different test cases, the gate judges different candidates), so one pair cannot tell a 5%
cost. Figures are printed, never asserted: timings on a shared machine are noisy, so compare within
one run (and run it on a quiet machine).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ray_local import CpuSampler, two_nodes

from seedzer.campaign.summary import findings_view

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
    gate: float
    """Seconds the filing gate's jobs took (they compete with the workers for the cores)."""


def figures(name: str, out: Path, wall: float) -> Figures:
    """Read a finished campaign's figures from its campaign.db."""
    conn = sqlite3.connect(f"file:{out / 'campaign.db'}?mode=ro", uri=True)
    try:
        snaps = conn.execute("SELECT time, execs, coverage, corpus_size FROM snapshots ORDER BY id").fetchall()
        view = findings_view(out, conn)
        roots = len(view.bugs)
        gate = view.gate_seconds()
    finally:
        conn.close()
    t_last, e_last, cov, corpus = snaps[-1]
    warm = next(((t, e) for t, e, _, _ in snaps if t >= WARM_UP), snaps[0][:2])
    warm_rate = (e_last - warm[1]) / (t_last - warm[0]) if t_last > warm[0] else 0.0
    return Figures(name, wall, int(e_last), float(t_last), e_last / t_last if t_last else 0.0, warm_rate,
                   int(corpus), int(cov), roots, gate)


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


IDLE_HOLDER = """
import sys, ray
ray.init(address=sys.argv[1], log_to_driver=False)
Idle = ray.remote(num_cpus=1)(type("Idle", (), {"ready": lambda self: True}))
actors = [Idle.remote() for _ in range(int(sys.argv[2]))]
ray.get([a.ready.remote() for a in actors])
print("ready", flush=True)
sys.stdin.read()
"""
"""A Ray driver holding ``count`` actors that do nothing: Ray's own presence on the machine (its
daemons, a driver, one worker process per actor, with their timers) without any of the campaign's traffic."""


@contextlib.contextmanager
def idle_actors(address: str, count: int) -> Iterator[None]:
    """Hold ``count`` idle actors (one CPU each) on the cluster at ``address`` while the block runs."""
    proc = subprocess.Popen([sys.executable, "-c", IDLE_HOLDER, address, str(count)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"the idle actors did not start on {address}")
        yield
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(60)


ARMS = {"local": "local processes", "idle": "local processes beside an idle Ray (one idle actor per job)",
        "ray": "Ray actors"}


def run_arm(arm: str, args: argparse.Namespace, out: Path) -> tuple[float, dict[str, float]]:
    """One campaign of ``arm``: local, local beside an idle Ray cluster, or through Ray."""
    with contextlib.ExitStack() as stack:
        address: str | None = None
        if arm != "local":
            address = args.address or stack.enter_context(two_nodes())
            if arm == "idle":
                stack.enter_context(idle_actors(address, args.jobs))
        return campaign(args.pool, out, args.minutes, args.jobs, args.seed, address if arm == "ray" else None)


def share(runs: dict[str, list[Figures]], num: str, den: str) -> str:
    """``num``'s rate after the first minute as a share of ``den``'s, per round, and their median."""
    ratios = [a.warm_rate / b.warm_rate for a, b in zip(runs[num], runs[den], strict=True) if b.warm_rate]
    median = f"; median {100 * statistics.median(ratios):.1f}%" if len(ratios) > 1 else ""
    return ", ".join(f"{100 * r:.1f}%" for r in ratios) + median


def main() -> None:
    """Parse arguments, run the rounds of campaigns, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=Path, required=True)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=1, help="Rounds of campaigns (local, then Ray), one after the other.")
    ap.add_argument("--idle-ray", action="store_true",
                    help="Add to each round a local campaign beside an idle Ray cluster: Ray's presence apart from "
                         "the campaign's sync.")
    ap.add_argument("--out", type=Path, default=Path("build/ray-campaign"))
    ap.add_argument("--address", default=None, help="A running cluster (default: start a 2-node one here).")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    arms = ["local", "idle", "ray"] if args.idle_ray else ["local", "ray"]
    runs: dict[str, list[Figures]] = {arm: [] for arm in arms}
    table: list[tuple[Figures, dict[str, float]]] = []
    for pair in range(1, args.pairs + 1):
        for arm in arms:
            name = f"{arm}-{pair}" if args.pairs > 1 else arm
            wall, used = run_arm(arm, args, args.out / name)
            table.append((figures(name, args.out / name, wall), used))
            runs[arm].append(table[-1][0])
    print("arms: " + "; ".join(f"{arm} = {ARMS[arm]}" for arm in arms))
    print(f"{'campaign':10} {'wall s':>7} {'execs':>7} {'execs/s':>8} {'after 1 min':>11} {'corpus':>7} "
          f"{'coverage':>9} {'bug roots':>9} {'gate s':>7}")
    for f, _ in table:
        print(f"{f.name:10} {f.wall:7.0f} {f.execs:7d} {f.rate:8.2f} {f.warm_rate:11.2f} {f.corpus:7d} "
              f"{f.coverage:9d} {f.roots:9d} {f.gate:7.0f}")
    cores = len(os.sched_getaffinity(0))
    print(f"processor seconds by role (from /proc; % of the {cores} cores over the campaign's wall time):")
    print(f"{'campaign':10} " + " ".join(f"{role:>16}" for role in CpuSampler.ROLES) + f" {'worker ms/exec':>15}")
    for f, used in table:
        cells = " ".join(f"{used[r]:8.0f} ({100 * used[r] / (f.wall * cores):4.1f}%)" for r in CpuSampler.ROLES)
        print(f"{f.name:10} {cells} {1000 * used['workers'] / max(f.execs, 1):15.1f}")
    print("rates after the first minute, as shares within each round:")
    print(f"  Ray against local (what --ray costs here): {share(runs, 'ray', 'local')}")
    if args.idle_ray:
        print(f"  idle Ray beside local against local (Ray's presence): {share(runs, 'idle', 'local')}")
        print(f"  Ray against local beside idle Ray (the campaign's sync through Ray): {share(runs, 'ray', 'idle')}")
    rates = [f.warm_rate for f in runs["local"]]
    if len(rates) > 1:
        print(f"local campaigns alone (the noise between two identical runs): {min(rates):.2f} to "
              f"{max(rates):.2f} execs/s after the first minute")


if __name__ == "__main__":
    main()
