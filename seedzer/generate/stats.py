"""Pool statistics: counts, rejection reasons, op histogram, conv kernels, size distributions, edge features,
and how many of the operators TVM's ONNX importer converts the pool's models carry."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seedzer.console import SafeConsole, SafeTable
from seedzer.generate.seed_pool import check_integrity, read_manifest
from seedzer.load.importer_ops import operator_reach


def _distribution(values: list[int]) -> dict[str, float]:
    if not values:
        return {"min": 0, "median": 0, "mean": 0, "max": 0}
    return {
        "min": min(values),
        "median": float(statistics.median(values)),
        "mean": round(statistics.fmean(values), 1),
        "max": max(values),
    }


def kernel_label(kernel: list[int]) -> str:
    """``[3, 3]`` -> ``3x3``; ``[]`` -> ``?``."""
    return "x".join(str(k) for k in kernel) if kernel else "?"


def pool_stats(pool_dir: Path, *, verify: bool = True, importer: Sequence[str] | None = None) -> dict[str, Any]:
    """Summary numbers of a pool, from its manifest; with ``verify``, every listed file must be
    present and match its recorded sha256 (else one PoolError line names the first problems).
    ``importer``: the operators TVM's importer converts (default: the installed TVM's)."""
    data = read_manifest(Path(pool_dir))
    models = data["models"]
    if verify:
        check_integrity(Path(pool_dir), models)
    op_models: Counter[str] = Counter()
    op_nodes: Counter[str] = Counter()
    kernels: Counter[str] = Counter()
    providers: Counter[str] = Counter()
    edge_totals: Counter[str] = Counter()
    edge_models: Counter[str] = Counter()
    for e in models:
        for feature, n in e.get("edge_features", {}).items():
            edge_totals[feature] += int(n)
            edge_models[feature] += 1 if n else 0
        op_models.update(e.get("ops", []))
        op_nodes.update(e.get("op_counts", {}))
        kernels.update(kernel_label(list(k)) for k in e.get("conv_kernels", []))
        providers[str(e.get("reference_provider", "?"))] += 1
    gen_seconds = [float(e.get("gen_seconds", 0.0)) for e in models]
    reach = operator_reach(op_models, importer)
    return {
        "pool": str(pool_dir),
        "heuristic": data.get("heuristic", "?"),
        "seed": data.get("seed"),
        "selected_from": data.get("selected_from"),
        "models": len(models),
        "rejected": dict(data.get("rejected_counts", {})),
        "ops": {op: (op_models[op], op_nodes[op]) for op, _ in op_models.most_common()},
        "kernels": dict(kernels.most_common()),
        "nodes": _distribution([int(e.get("nodes", 0)) for e in models]),
        "weights": _distribution([int(e.get("weights", 0)) for e in models]),
        "edge_features": {f: (edge_totals[f], edge_models[f]) for f in edge_totals},
        "with_conv": sum(1 for e in models if e.get("conv_kernels")),
        "providers": dict(providers),
        "finite": sum(1 for e in models if e.get("finite", True)),
        "gen_seconds": round(sum(gen_seconds), 2),
        "importer_operators": {"line": reach.line("in the pool"), "covered": len(reach.covered),
                               "of": len(reach.importer), "missing": reach.missing},
    }


def render_stats(stats: dict[str, Any], console: SafeConsole, top_ops: int = 25) -> None:
    """Print ``stats`` as rich tables."""
    head = SafeTable(title=f"pool {stats['pool']}", show_header=False)
    head.add_column("key", style="bold")
    head.add_column("value")
    head.add_row("heuristic", str(stats["heuristic"]))
    head.add_row("seed", str(stats["seed"]))
    if stats["selected_from"]:
        head.add_row("selected from", str(stats["selected_from"]))
    head.add_row("models", str(stats["models"]))
    head.add_row("with a conv", str(stats["with_conv"]))
    head.add_row("finite reference outputs", str(stats["finite"]))
    head.add_row("reference providers", ", ".join(f"{k} {v}" for k, v in stats["providers"].items()))
    head.add_row("generation time (s)", str(stats["gen_seconds"]))
    head.add_row("rejected", ", ".join(f"{k}: {v}" for k, v in stats["rejected"].items()) or "none")
    reach = stats.get("importer_operators")
    if reach:
        head.add_row("importer operators", reach["line"].removeprefix("importer operators in the pool "))
        head.add_row("never in the pool", ", ".join(reach["missing"]) or "none")
    console.print(head)

    sizes = SafeTable(title="size distribution")
    for col in ("measure", "min", "median", "mean", "max"):
        sizes.add_column(col, justify="right" if col != "measure" else "left")
    for key, label in (("nodes", "ONNX nodes"), ("weights", "weight elements")):
        d = stats[key]
        sizes.add_row(label, str(d["min"]), str(d["median"]), str(d["mean"]), str(d["max"]))
    console.print(sizes)

    if stats["kernels"]:
        kt = SafeTable(title="conv kernel sizes")
        kt.add_column("kernel")
        kt.add_column("convs", justify="right")
        for k, n in stats["kernels"].items():
            kt.add_row(k, str(n))
        console.print(kt)

    if stats.get("edge_features"):
        et = SafeTable(title="edge features")
        et.add_column("feature")
        et.add_column("count", justify="right")
        et.add_column("models", justify="right")
        for f, (total, in_models) in stats["edge_features"].items():
            et.add_row(f, str(total), str(in_models))
        console.print(et)

    ops = SafeTable(title=f"ops (top {top_ops})")
    ops.add_column("ONNX op")
    ops.add_column("models", justify="right")
    ops.add_column("nodes", justify="right")
    for op, (in_models, nodes) in list(stats["ops"].items())[:top_ops]:
        ops.add_row(op, str(in_models), str(nodes))
    console.print(ops)
