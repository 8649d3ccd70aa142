"""An experiment run locally and on a Ray cluster: the same results layout and report, wall times side by side.

Usage::

    python benchmarks/ray_experiment.py [--experiment experiments/quick.yaml] [--out DIR]
                                        [--trials N] [--minutes M] [--address HOST:PORT] [--no-local]

Runs ``seedzer experiment run FILE --results OUT/local`` and then ``... --results OUT/ray --ray
ADDRESS`` (``--address``, else a two-node cluster started here on loopback, one CPU per node, see
``ray_local.py``), both in ``OUT`` as the working directory (so the pools, ``OUT/seedpools``, are
generated once, by the first run, and shared). Prints each run's wall seconds and trials done, the
kinds of files of one results tree missing from the other (paths relative to the experiment's
directory, content-derived ids made generic: a trial's kinds of files are the same whether it ran
locally or through Ray, though two campaigns find different entries), and where each report is.
``--no-local`` runs the Ray side only (the paper's study on a cluster). Figures are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ray_local import nodes, two_nodes

VOLATILE = {".lock", "campaign.db-wal", "campaign.db-shm"}
"""Files whose presence depends on the moment, not on how a trial ran."""


def run(experiment: Path, out: Path, results: str, extra: list[str]) -> tuple[float, int]:
    """One ``experiment run``; its wall seconds and exit status (its output in ``OUT/<results>.log``)."""
    argv = [sys.executable, "-m", "seedzer.cli", "experiment", "run", str(experiment.resolve()), "--results",
            results, *extra]
    t0 = time.monotonic()
    with open(out / f"{results}.log", "w") as log:
        rc = subprocess.run(argv, cwd=out, stdout=log, stderr=subprocess.STDOUT).returncode
    return time.monotonic() - t0, rc


def _shape(part: str) -> str:
    """A path component with a content-derived name (a corpus entry's or finding's hex id) made generic."""
    return re.sub(r"^[0-9a-f]{12,}", "<id>", part)


def layout(root: Path) -> set[str]:
    """The kinds of files under an experiment's results directory, relative to it: names derived from
    contents (corpus entries, finding folders) made generic, volatile files left out."""
    return {"/".join(_shape(part) for part in p.relative_to(root).parts) for p in root.rglob("*")
            if p.is_file() and p.name not in VOLATILE}


def done(root: Path) -> int:
    """Trials whose trial.json says done."""
    return sum(json.loads(p.read_text()).get("status") == "done" for p in root.glob("*/trial-*/trial.json"))


def main() -> None:
    """Parse arguments, run both sides, print the comparison."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", type=Path, default=Path("experiments/quick.yaml"))
    ap.add_argument("--out", type=Path, default=Path("build/ray-experiment"))
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--address", default=None, help="A running cluster (default: start a 2-node one here).")
    ap.add_argument("--no-local", action="store_true", help="Only the Ray side.")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    extra = ([f"--trials={args.trials}"] if args.trials else []) + ([f"--minutes={args.minutes:g}"] if args.minutes
                                                                    else [])
    name = next(line.split(":", 1)[1].strip() for line in args.experiment.read_text().splitlines()
                if line.startswith("name:"))
    sides: dict[str, tuple[float, int]] = {}
    if not args.no_local:
        sides["local"] = run(args.experiment, args.out, "local", extra)
    if args.address:
        sides["ray"] = run(args.experiment, args.out, "ray", [*extra, "--ray", args.address])
    else:
        with two_nodes() as address:
            print(f"local Ray cluster {address}: {nodes(address)} node(s)")
            sides["ray"] = run(args.experiment, args.out, "ray", [*extra, "--ray", address])
    trees = {side: layout(args.out / side / name) for side in sides}
    print(f"{'run':6} {'wall s':>7} {'exit':>4} {'trials done':>11} {'kinds of files':>14}  report")
    for side, (wall, rc) in sides.items():
        report = args.out / side / name / "report" / "report.html"
        print(f"{side:6} {wall:7.0f} {rc:4d} {done(args.out / side / name):11d} {len(trees[side]):14d}  "
              f"{report if report.exists() else '(none)'}")
    if len(trees) == 2:
        only_local, only_ray = trees["local"] - trees["ray"], trees["ray"] - trees["local"]
        print("same results layout" if not (only_local or only_ray) else
              f"only local: {sorted(only_local)[:10]}\nonly ray: {sorted(only_ray)[:10]}")


if __name__ == "__main__":
    main()
