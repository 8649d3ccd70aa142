"""What LLVM's opt-level costs a graph test case's build and JIT, and whether it changes any output.

Usage::

    python benchmarks/llvm_opt_level.py POOL [--models 16] [--levels 3,1,0]

Each model of the pool that TVM's importer takes is imported once per level and built with
``tvm.compile`` for ``{"kind": "llvm", "opt-level": L}``, then run once on the Relax VM (its first run
is LLVM's JIT of the executable), on the loader's random inputs and on special values (NaN, +-Inf,
-0, denormals, extremes: the graph level's ``special`` input mode). Printed: per level the processor
milliseconds of the builds and of the first runs, in all and per model, and per level how many
models' outputs are bit-identical to the first level's (``seedzer.kernel.comparison.compare``
without tolerance, and the signs of zeros) on both kinds of input. Figures are printed, never
asserted (``levels.graph.llvm_opt_level``'s reasons are in docs/measurements.md).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
import numpy as np
import onnx
from rich.console import Console
from rich.table import Table

from seedzer.kernel.comparison import compare, signed_zero_difference
from seedzer.kernel.graph.inputs import special_values
from seedzer.kernel.onnx.model import build, import_model, random_inputs, run
from seedzer.load.onnx_import import input_specs


def outputs(executable: Any, specs: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray] | str:
    """The VM's outputs, or the error's type name (a run that raises at one level must raise at all)."""
    try:
        return run(executable, specs, feeds)
    except Exception as exc:  # the error is the observation
        return type(exc).__name__


def agree(a: list[np.ndarray] | str, b: list[np.ndarray] | str) -> bool:
    """Whether two observations (outputs or an error's type name) agree bit for bit: the project's one
    comparison with no tolerance (shapes, dtypes, values, NaN and infinity positions), signs of zero too."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return compare(a, b, {}) is None and signed_zero_difference(a, b) is None


@click.command()
@click.argument("pool", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--models", type=int, default=16, show_default=True, help="Most pool models to build.")
@click.option("--levels", default="3,1,0", show_default=True, help="LLVM opt-levels, the first the reference.")
def main(pool: Path, models: int, levels: str) -> None:
    """Time each opt-level's builds and first runs over a pool's models and compare their outputs."""
    order = [int(x) for x in levels.split(",")]
    build_ms = dict.fromkeys(order, 0.0)
    run_ms = dict.fromkeys(order, 0.0)
    equal = dict.fromkeys(order, 0)
    used = 0
    for path in sorted(pool.glob("*.onnx"))[:models]:
        model = onnx.load(path)
        found, _ = input_specs(model, path.name)
        specs = tuple(s.as_tuple() for s in found)
        try:
            mod = import_model(model, specs)  # built at every level (tvm.compile leaves it as it is)
        except Exception:  # a model the importer refuses is the loader's finding
            continue
        used += 1
        feeds = random_inputs(specs, 0)
        inputs = (feeds, special_values(feeds, 0, extremes=False))
        first: tuple[Any, ...] | None = None
        for level in order:
            start = time.process_time()
            executable = build(mod, {"kind": "llvm", "opt-level": level})
            built = time.process_time()
            plain = outputs(executable, specs, inputs[0])
            run_ms[level] += 1000 * (time.process_time() - built)
            build_ms[level] += 1000 * (built - start)
            seen = (plain, outputs(executable, specs, inputs[1]))
            first = seen if first is None else first
            equal[level] += all(agree(x, y) for x, y in zip(first, seen, strict=True))
    table = Table(title=f"{used} models of {pool}, processor ms")
    for column in ("opt-level", "tvm.compile", "per model", "first run (JIT)", "per model", "outputs as the first"):
        table.add_column(column, justify="right")
    for level in order:
        table.add_row(str(level), f"{build_ms[level]:.0f}", f"{build_ms[level] / max(used, 1):.0f}",
                      f"{run_ms[level]:.0f}", f"{run_ms[level] / max(used, 1):.0f}", f"{equal[level]} of {used}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
