"""Benchmark the UB gate of IR mutation: what it rejects, what it lets through, what it costs.

Usage::

    python benchmarks/mutation_validity.py [--mutations 300] [--depth 3] [--seed 0] [--nan]

Runs ``--mutations`` calls of ``mutate_ir`` over the fixture seeds (tests/fixtures/seeds), in chains
of up to ``--depth`` mutations from each seed (the fuzzer mutates mutants too), twice with the same
random choices: *before* with the UB gate off (``ub_check=False``), *after* with it on. For each run
it prints accepted and invalid attempts by reason (mutator names and details dropped), and for the
*before* run how many accepted mutants the gate would have rejected against their chain's seed. ``--nan`` also
builds every accepted mutant (llvm, opt-level 0) and runs it on the harness inputs, counting those
that leave a NaN/Inf in a buffer (no seed does). Last, the median and 90th percentile CPU time of
``ub.check`` on a fresh mutant (its parent's analysis cached, as in ``mutate_ir``), in microseconds.
Figures are printed, never asserted.
"""

from __future__ import annotations

import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seedzer.mutate.tir import MutationStats, default_ir_mutators, mutate_ir
from seedzer.tir import ub
from seedzer.tvmio import module_of, parse_primfunc

SEED_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "seeds"


def category(reason: str) -> str:
    """A reason without the mutator's name and the node-specific detail."""
    reason = reason.split(": ", 1)[1] if not reason.startswith("ub:") and ": " in reason else reason
    if reason.startswith("ub: NaN/Inf:"):
        why = reason.split(":", 3)[2].strip()
        return "ub: NaN/Inf: " + re.sub(r"^\w+ (may overflow)", r"<op> \1", why)
    for prefix in ("ub: float division", "ub: integer division", "ub: second write", "ub: init of",
                   "ub: write to allocated", "ub: read of possibly uninitialised", "ub: cannot analyse"):
        if reason.startswith(prefix):
            return prefix
    return reason[:70]


def make_inputs(func: Any, seed: int) -> list[np.ndarray]:
    """The harness's inputs (as its ``make_inputs``): floats uniform in [-1, 1), integers zero."""
    rng = np.random.default_rng(seed)
    out = []
    for param in func.params:
        shape, dtype = [int(d) for d in param.ty.shape], str(param.ty.dtype)
        out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype) if dtype.startswith("float") else
                   np.zeros(shape, dtype=dtype))
    return out


def non_finite(func: Any) -> bool | None:
    """Whether the built function leaves a NaN/Inf in a buffer on the harness inputs (None: no build)."""
    import tvm

    try:
        exe = tvm.compile(module_of(func), target=tvm.target.Target({"kind": "llvm", "opt-level": 0}))
    except Exception:
        return None
    args = [tvm.runtime.tensor(a, tvm.cpu()) for a in make_inputs(func, 0)]
    exe["main"](*args)
    return any(a.dtype.kind == "f" and not np.all(np.isfinite(a)) for a in (x.numpy() for x in args))


def run(seeds: dict[str, Any], n: int, depth: int, seed: int, gate: bool, nan: bool) -> dict[str, Any]:
    """``n`` mutate_ir calls in chains; what was accepted, rejected, and (before) what the gate says."""
    rng, mutators, stats = random.Random(seed), default_ir_mutators(), MutationStats()
    names = sorted(seeds)
    would_reject: Counter[str] = Counter()
    bad = builds = 0
    root = parent = seeds[names[0]]
    for i in range(n):
        if i % depth == 0:
            root = parent = seeds[names[(i // depth) % len(names)]]
        found = mutate_ir(parent, rng, mutators, stats=stats, ub_check=gate)
        if found is None:
            continue
        mutant = found[0]
        if not gate:  # against the chain's seed: UB inherited from an earlier mutant counts too
            reason = ub.check(mutant, root)
            if reason is not None:
                would_reject[category(reason)] += 1
        if nan:
            result = non_finite(mutant)
            builds += result is not None
            bad += bool(result)
        parent = mutant
    invalid: Counter[str] = Counter()
    for reason, count in stats.reasons.items():
        invalid[category(reason)] += count
    return {"stats": stats, "invalid": invalid, "would_reject": would_reject, "bad": bad, "builds": builds}


def check_cost(seeds: dict[str, Any], n: int, seed: int) -> tuple[list[float], list[float]]:
    """CPU and wall microseconds of ``ub.check`` on fresh mutants, the parent's analysis cached (CPU
    time: on a loaded machine the wall time also holds the time the process was not scheduled)."""
    rng, mutators, costs, walls = random.Random(seed), default_ir_mutators(), [], []
    names = sorted(seeds)
    for i in range(n):
        parent = seeds[names[i % len(names)]]
        found = mutate_ir(parent, rng, mutators, ub_check=False)
        if found is None:
            continue
        ub._CACHE.clear()
        ub.facts_of(parent)
        start, wall = time.process_time(), time.perf_counter()
        ub.check(found[0], parent)
        costs.append(1e6 * (time.process_time() - start))
        walls.append(1e6 * (time.perf_counter() - wall))
    return costs, walls


@click.command()
@click.option("--mutations", type=int, default=300, show_default=True, help="mutate_ir calls per run.")
@click.option("--depth", type=int, default=3, show_default=True, help="Longest chain of mutations from a seed.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed (same for both runs).")
@click.option("--nan", is_flag=True, help="Build and run accepted mutants, counting NaN/Inf outputs.")
def main(mutations: int, depth: int, seed: int, nan: bool) -> None:
    """Print accepted/invalid counts by reason with the UB gate off and on, and the gate's cost."""
    console = Console(width=140)
    seeds = {p.stem: parse_primfunc(p.read_text()) for p in sorted(SEED_DIR.glob("*.py"))}
    before = run(seeds, mutations, depth, seed, gate=False, nan=nan)
    after = run(seeds, mutations, depth, seed, gate=True, nan=nan)

    table = Table(title=f"{mutations} mutate_ir calls on {len(seeds)} fixture seeds, chains of <= {depth}")
    for col in ("", "before (gate off)", "after (gate on)"):
        table.add_column(col, justify="left" if not col else "right")
    for label, key in (("attempts", "tried"), ("accepted", "accepted"), ("inapplicable", "inapplicable"),
                       ("invalid / raised", None)):
        row = []
        for res in (before, after):
            st = res["stats"]
            row.append(str(st.invalid_total() if key is None else sum(getattr(st, key).values())))
        table.add_row(label, *row)
    for res in (before, after):
        st = res["stats"]
        res["rate"] = sum(st.accepted.values()) / max(sum(st.tried.values()), 1)
    table.add_row("acceptance rate (accepted / attempts)", f"{before['rate']:.1%}", f"{after['rate']:.1%}")
    if nan:
        table.add_row("accepted mutants with NaN/Inf (of built)", f"{before['bad']} / {before['builds']}",
                      f"{after['bad']} / {after['builds']}")
    console.print(table)

    reasons = Table(title="invalid attempts by reason (and accepted-before mutants the gate would reject)")
    for col in ("reason", "before: invalid", "before: accepted but UB", "after: invalid"):
        reasons.add_column(col, justify="left" if col == "reason" else "right")
    keys = sorted(set(before["invalid"]) | set(before["would_reject"]) | set(after["invalid"]))
    for k in keys:
        reasons.add_row(k, str(before["invalid"][k]), str(before["would_reject"][k]), str(after["invalid"][k]))
    console.print(reasons)

    costs, walls = check_cost(seeds, mutations, seed + 1)
    if costs:
        p90 = sorted(costs)[int(0.9 * (len(costs) - 1))]
        console.print(f"ub.check on a fresh mutant (parent cached), {len(costs)} mutants, CPU time: "
                      f"median {statistics.median(costs):.0f} us, p90 {p90:.0f} us, max {max(costs):.0f} us "
                      f"(wall median {statistics.median(walls):.0f} us)")


if __name__ == "__main__":
    main()
