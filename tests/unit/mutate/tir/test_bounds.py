"""Mutant bounds: written-out size, unrolled nests, UnrollLoop configurations, pass growth."""

from __future__ import annotations

import random

import pytest

from seedzer.config import BoundsConfig
from seedzer.mutate.tir.bounds import (
    BOUND_NAMES,
    bound_of,
    out_of_bounds,
    passes_reason,
    script_reason,
    unroll_asks,
    unroll_extent,
    unrolled_size,
)
from seedzer.passes.tir.catalog import ARGS
from seedzer.seed import PassSpec

NEST = """def main():
    x = 1
    for i in T.unroll(T.int64(4)):
        for j in range(10):
            for k in T.unroll(2, 10):
                B[i, j, k] = A[i, j, k]
        y = 2
    z = 3
"""


def _lines(text: str) -> int:
    return len(text.encode())


def test_unroll_extents_come_from_constant_bounds_only() -> None:
    assert unroll_extent("T.int64(11)") == 11
    assert unroll_extent("2, 10") == 8
    assert unroll_extent('8, annotations={"pragma_x": 1}') == 8
    assert unroll_extent("n") == 1


def test_unrolled_size_writes_out_every_unrolled_body_and_takes_the_largest_nest() -> None:
    size, product = unrolled_size(NEST)
    line = {ln.strip(): _lines(ln) + 1 for ln in NEST.splitlines()}
    inner = line["B[i, j, k] = A[i, j, k]"] * 8 + line["for k in T.unroll(2, 10):"]
    body = line["for j in range(10):"] + inner + line["y = 2"]
    expected = line["def main():"] + line["x = 1"] + line["for i in T.unroll(T.int64(4)):"] + 4 * body + line["z = 3"]
    assert (size, product) == (expected, 32)
    assert unrolled_size("def f():\n    x = 1\n") == (_lines("def f():\n    x = 1\n"), 1)


def test_script_bounds() -> None:
    limits = BoundsConfig(max_growth=4.0, max_script_bytes=10_000, max_unroll=64)
    parent = "def main():\n" + "    x = 1\n" * 20
    assert script_reason(parent, parent, limits) is None
    assert script_reason(parent + "    y = 2\n", parent, limits) is None
    grown = script_reason(parent * 5, parent, limits)
    assert grown is not None and grown.startswith("bounds: script grew 5.0x")
    huge = script_reason("def main():\n" + "    x = 1\n" * 2000, "def main():\n" + "    x = 1\n" * 1500, limits)
    assert huge is not None and huge.startswith("bounds: script of")
    unrolled = "def main():\n    for i in T.unroll(16):\n        for j in T.unroll(8):\n            x = 1\n"
    nest = script_reason(unrolled, parent, limits)
    assert nest == "bounds: unrolled nest of 128 iterations, over 64"
    # a small body unrolled 30 times stays within the growth bound; the whole kernel does not
    assert script_reason(parent + "    for i in T.unroll(30):\n        x = 1\n", parent, limits) is None
    whole = "def main():\n    for i in T.unroll(30):\n" + "        x = 1\n" * 20
    assert (script_reason(whole, parent, limits) or "").startswith("bounds: script grew")


def test_unroll_configs_ask_for_their_step_and_their_whole_loops() -> None:
    assert unroll_asks({}) == (0, 0)
    assert unroll_asks({"auto_max_step": 16}) == (16, 0)
    assert unroll_asks({"auto_max_extent": 4, "auto_max_depth": 1}) == (0, 16)
    assert unroll_asks({"auto_max_extent": 2}) == (0, 512)  # depth 8 by default: 9 levels


def test_pass_bounds() -> None:
    limits = BoundsConfig(max_unroll=64, max_passes_growth=2)
    parent = [PassSpec("tirx.StmtSimplify")]
    assert passes_reason(parent * 3, parent, limits) is None
    assert passes_reason(parent * 4, parent, limits) == "bounds: pass sequence grew by 3 passes"
    step = [PassSpec("tirx.UnrollLoop", (("auto_max_step", 256),))]
    assert passes_reason(step, [], limits) == "bounds: UnrollLoop auto_max_step=256 over 64"
    extent = [PassSpec("tirx.UnrollLoop", (("auto_max_depth", 2), ("auto_max_extent", 8)))]
    assert (passes_reason(extent, [], limits) or "").startswith("bounds: UnrollLoop auto_max_extent unrolls 512")
    assert passes_reason([PassSpec("tirx.UnrollLoop", (("auto_max_step", 16),))], [], limits) is None


def test_out_of_bounds_checks_the_script_then_the_passes_and_names_one_kind_per_reason() -> None:
    limits = BoundsConfig(max_unroll=64)
    script = "def main():\n    x = 1\n"
    assert out_of_bounds((script, []), (script, []), limits) is None
    step = [PassSpec("tirx.UnrollLoop", (("auto_max_step", 1024),))]
    reason = out_of_bounds((script, []), (script, step), limits)
    assert reason is not None and bound_of(reason) == "unroll-step"
    assert bound_of("bounds: script grew 5.1x") == "growth"
    assert bound_of("unusable test case") is None
    assert len(set(BOUND_NAMES.values())) == len(BOUND_NAMES)


def test_the_catalogue_samples_unroll_steps_within_the_default_bound() -> None:
    limit = BoundsConfig().max_unroll
    step = next(a for a in ARGS["tirx.UnrollLoop"] if a.name == "auto_max_step")
    rng = random.Random(0)
    assert max(step.sample(rng) for _ in range(200)) <= limit


@pytest.mark.parametrize("extents", [(4,), (4, 8), (2, 3, 5)])
def test_the_printed_tvmscript_of_an_unrolled_nest_is_measured(extents: tuple[int, ...]) -> None:
    """On real TVM: the product of a nest that TVM's printer writes out is found in its text."""
    pytest.importorskip("tvm")
    import tvm_ffi
    from tvm import tirx

    from seedzer.kernel.tir.lowering import parse_func
    from seedzer.tir.ir import replace_fields
    from seedzer.tvmio import script_of

    loops = "".join(f"{'    ' * (n + 1)}for i{n} in T.serial({ext}):\n" for n, ext in enumerate(extents))
    text = (f'@T.prim_func\ndef main(A: T.Buffer((8,), "float32")):\n{loops}'
            f"{'    ' * (len(extents) + 1)}A[0] = A[1] + T.float32(1)\n")
    serial = parse_func(text)
    assert unrolled_size(script_of(serial))[1] == 1
    func = tvm_ffi.structural_map(serial, (tirx.For, lambda f: replace_fields(f, kind=tirx.ForKind.UNROLLED)))
    expected = 1
    for ext in extents:
        expected *= ext
    assert unrolled_size(script_of(func))[1] == expected
