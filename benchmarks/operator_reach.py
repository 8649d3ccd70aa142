"""Benchmark operator reach: N models with an inserted operator of TVM's importer, each re-checked.

Usage::

    python benchmarks/operator_reach.py --pool POOL [--models 1000] [--seed 0] [--jobs 2] [--minutes 0]

Model ``i`` starts from a model of ``POOL`` (or, one in ten, from the ``reach`` heuristic's
one-operator model at an opset from 9 to 13, where removed operators are reachable) and gets one
insertion from the sampler the graph level and the ``reach`` heuristic use
(:func:`seedzer.mutate.graph.insertion.sample_insertion`: an operator of the importer's converter map, read
from the installed TVM; model ``i`` prefers the ``i``-th of them in a shuffled round robin, and the
engines run in a forked child as at the graph level). Every kept model is then checked
again, on the whole model, its engines in a forked child (as the graph level does: an engine's crash
is a refusal): onnx.checker's full check, onnxruntime, and onnx.reference on every node
(those it implements; :func:`seedzer.kernel.onnx.validity.model_validity` with no node selection).
Printed: models kept and how many pass that re-check, how many inserted operators the reference
implements, the sampler's refusals by reason (records it drew and threw away), operators it could
not draw, and the count of kept models per operator with the importer's operators never inserted.
``--minutes`` stops early (0: no limit; the printed N says how many were made). Figures are
printed, never asserted.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import click
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seedzer.generate.reach import old_opset_model
from seedzer.kernel.graph.inputs import bounded_inputs
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.onnx.validity import model_validity
from seedzer.load.importer_ops import importer_operators
from seedzer.mutate.graph.insertion import InsertionStats, sample_insertion
from seedzer.mutate.graph.model_mutators import random_feeds

CHUNK = 25
"""Models per worker task."""
OLD_OPSET_SHARE = 0.1
"""Share of the models that start from an old-opset one-operator model."""


@dataclass
class Tally:
    """What one worker's models gave."""

    made: int = 0
    none_found: int = 0
    valid: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    reference_implements: int = 0
    per_op: Counter[str] = field(default_factory=Counter)
    stats: InsertionStats = field(default_factory=InsertionStats)
    seconds: float = 0.0


def _implemented(op: str, domain: str) -> bool:
    from onnx.reference.ops import load_op

    try:
        load_op(domain, op)
    except Exception:  # the reference raises several types for what it lacks
        return False
    return True


def run_models(pool: str, indices: list[int], seed: int, deadline: float) -> Tally:
    """Make and re-check the models ``indices`` (stops at ``deadline``, a ``time.time()``)."""
    models = [onnx.load(p) for p in sorted(Path(pool).glob("*.onnx"))]
    operators = list(importer_operators())
    order = sorted(operators)
    random.Random(seed).shuffle(order)
    tally = Tally()
    start = time.perf_counter()
    for i in indices:
        if time.time() > deadline:
            break
        rng = random.Random(f"operator-reach:{seed}:{i}")
        top, preferred = None, order[i % len(order)]  # round robin over the importer's operators
        if rng.random() < OLD_OPSET_SHARE or not models:
            base, top, first = old_opset_model(rng)
            preferred = first[0] if first else preferred  # an operator removed since its opset
        else:
            base = rng.choice(models)
        feeds = random_feeds(base, rng.getrandbits(31))
        weights = {op: float(len(operators)) if op == preferred else 1.0 for op in operators}
        record = sample_insertion(base, operators, rng, weights, feeds, top=top, isolate=True, stats=tally.stats,
                                  input_seed=i)
        tally.made += 1
        if record is None:
            tally.none_found += 1
            continue
        op = str(record.params["op"])
        full = {**feeds, **bounded_inputs(record.params.get("inputs", ()), i, "random")}
        mutant = apply_model_mutations(base, [record], full)
        verdict = model_validity(mutant, full, None, isolate=True)
        if verdict.refusal is None:
            tally.valid += 1
            tally.per_op[op] += 1
        else:
            tally.refused[f"{op}: {verdict.refusal[:100]}"] += 1
        new = [n for n in mutant.graph.node if n.op_type == op]
        tally.reference_implements += bool(new) and _implemented(op, new[-1].domain)
    tally.seconds = time.perf_counter() - start
    return tally


def merge(tallies: list[Tally]) -> Tally:
    """The sum of the workers' tallies."""
    out = Tally()
    for t in tallies:
        out.made += t.made
        out.none_found += t.none_found
        out.valid += t.valid
        out.refused += t.refused
        out.reference_implements += t.reference_implements
        out.per_op += t.per_op
        out.stats.kept += t.stats.kept
        out.stats.refused += t.stats.refused
        out.stats.undrawable += t.stats.undrawable
        out.seconds += t.seconds
    return out


@click.command()
@click.option("--pool", required=True, type=click.Path(exists=True, file_okay=False), help="A pool of base models.")
@click.option("--models", default=1000, show_default=True, help="Models to make.")
@click.option("--seed", default=0, show_default=True)
@click.option("--jobs", default=1, show_default=True, help="Worker processes.")
@click.option("--minutes", default=0.0, show_default=True, help="Stop after this long (0: no limit).")
def main(pool: str, models: int, seed: int, jobs: int, minutes: float) -> None:
    """Make ``--models`` inserted models and print their validity and per-operator figures."""
    begin = time.time()
    deadline = begin + minutes * 60 if minutes else float("inf")
    chunks = [list(range(k, min(k + CHUNK, models))) for k in range(0, models, CHUNK)]
    with ProcessPoolExecutor(jobs) as ex:
        t = merge(list(ex.map(run_models, [pool] * len(chunks), chunks, [seed] * len(chunks),
                              [deadline] * len(chunks))))
    kept = t.made - t.none_found
    print(f"models made (N): {t.made} in {time.time() - begin:.0f} s wall ({t.seconds:.0f} s of workers' time, "
          f"{jobs} workers); no insertion found: {t.none_found}")
    print(f"kept (inserted): {kept}; re-check of the whole model (onnx.checker full, onnxruntime, "
          f"onnx.reference where implemented) passed: {t.valid} of {kept}")
    print(f"inserted operator implemented by onnx.reference: {t.reference_implements} of {kept}")
    for reason, n in t.refused.most_common():
        print(f"  re-check refused {n}: {reason}")
    print(f"sampler: records kept {sum(t.stats.kept.values())}, refused {sum(t.stats.refused.values())}")
    for reason, n in t.stats.refused.most_common():
        print(f"  refused {n}: {reason}")
    print(f"  operators not drawable for a model (times): {sum(t.stats.undrawable.values())}")
    importer = set(importer_operators())
    print(f"importer operators inserted: {len(set(t.per_op) & importer)} of {len(importer)}")
    print("count per operator: " + ", ".join(f"{op} {n}" for op, n in sorted(t.per_op.items())))
    print("never inserted: " + ", ".join(sorted(importer - set(t.per_op))))


if __name__ == "__main__":
    main()
