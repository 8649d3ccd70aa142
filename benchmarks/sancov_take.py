"""Benchmark the sancov collector: cost of one take() on a generated library with many edges.

Usage::

    python benchmarks/sancov_take.py [--functions 2000] [--cases 500] [--work DIR]

Generates C with FUNCTIONS functions of a CASES-way switch each (about FUNCTIONS x CASES edges),
compiles it (at -O0, so the switches stay branches) and libseedzer_sancov.so with clang and the
recipe's sancov flag, then times ``SancovCollector.take()`` when nothing is new, after one function
call (a few new edges), and the first take after touching every function. TVM's libtvm_compiler.so
has on the order of 10^6 edges.
"""

from __future__ import annotations

import ctypes
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click

from seedzer.coverage.sancov import SancovCollector

REPO = Path(__file__).resolve().parents[1]
FLAG = "-fsanitize-coverage=inline-8bit-counters,pc-table"


def generate(functions: int, cases: int) -> str:
    """C source: ``f<i>(x)`` switches over ``cases`` values, each case a separate edge."""
    out = ["volatile int sink;"]
    for i in range(functions):
        body = "".join(f"case {k}: sink += {k * 7 + i}; break;\n" for k in range(cases))
        out.append(f"void f{i}(int x) {{ switch (x) {{\n{body}default: sink -= 1; }} }}")
    out.append("typedef void (*fn)(int);")
    out.append("fn table[] = {" + ",".join(f"f{i}" for i in range(functions)) + "};")
    out.append("void call(int i, int x) { table[i](x); }")
    return "\n".join(out)


def build(work: Path, functions: int, cases: int) -> tuple[Path, Path]:
    """Compile the callbacks and the generated library; return their paths."""
    callbacks, lib, src = work / "libseedzer_sancov.so", work / "libbig.so", work / "big.c"
    subprocess.run(["clang", "-O2", "-fPIC", "-shared", "-o", str(callbacks),
                    str(REPO / "coverage" / "sancov_callbacks.c")], check=True)
    src.write_text(generate(functions, cases))
    subprocess.run(["clang", "-O0", "-fPIC", "-shared", FLAG, "-o", str(lib), str(src), f"-L{work}",
                    "-Wl,--no-as-needed", "-lseedzer_sancov", "-Wl,--as-needed", f"-Wl,-rpath,{work}"], check=True)
    return callbacks, lib


def timed(fn: Callable[[], list[str]], repeat: int) -> tuple[float, int]:
    """Median milliseconds of ``fn()`` over ``repeat`` runs and the length of its last result."""
    times, n = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        n = len(fn())
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3, n


@click.command()
@click.option("--functions", type=click.IntRange(min=1), default=2000, show_default=True)
@click.option("--cases", type=click.IntRange(min=1), default=500, show_default=True)
@click.option("--work", type=click.Path(path_type=Path), default=None, help="Build directory (default: temporary).")
def main(functions: int, cases: int, work: Path | None) -> None:
    """Print counters, start-up cost and take() cost."""
    with tempfile.TemporaryDirectory() as tmp:
        work = work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        callbacks, lib = build(work, functions, cases)
        print(f"build: {time.perf_counter() - t:.1f} s")
        collector = SancovCollector(callbacks)
        ctypes.CDLL(str(callbacks), mode=ctypes.RTLD_GLOBAL)
        big = ctypes.CDLL(str(lib))
        t = time.perf_counter()
        collector.start()
        total = sum(len(m.counters) for m in collector.modules)
        print(f"counters: {total}; start(): {(time.perf_counter() - t) * 1e3:.1f} ms")
        collector.take()
        idle, _ = timed(collector.take, 50)
        print(f"take(), nothing new: {idle:.3f} ms")
        calls = iter(range(10**9))

        def one_new() -> list[str]:
            k = next(calls)
            big.call(k % functions, k // functions % cases)
            return collector.take()

        few, n = timed(one_new, 50)
        print(f"take() after one call ({n} new edges): {few:.3f} ms")
        for i in range(functions):
            for x in range(0, cases, 2):
                big.call(i, x)
        t = time.perf_counter()
        n = len(collector.take())
        print(f"take() after touching every function ({n} new edges): {(time.perf_counter() - t) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
