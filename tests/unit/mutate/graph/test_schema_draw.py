"""Attribute values drawn from an operator's schema (seedzer.mutate.graph.schema_draw, TVM-free)."""

from __future__ import annotations

import math
import random

from seedzer.mutate.graph.op_schema import op_schema
from seedzer.mutate.graph.op_table import rule
from seedzer.mutate.graph.schema_draw import Draw, draw_attributes, factor_shape


def _draw(op: str, shape: tuple[int, ...], seed: int, opset: int = 18) -> Draw:
    schema = op_schema(op, opset)
    assert schema is not None
    d = Draw(random.Random(seed), schema, rule(op), shape, "float32", opset)
    draw_attributes(d)
    return d


def test_conv_attributes_stay_within_the_data() -> None:
    for seed in range(200):
        d = _draw("Conv", (1, 6, 5, 4), seed)
        kernel = d.attrs.get("kernel_shape", [1, 1])
        assert all(1 <= k <= s for k, s in zip(kernel, (5, 4), strict=True))
        assert all(0 <= p < k for p, k in zip(d.attrs.get("pads", [0] * 4), kernel * 2, strict=True))
        assert 6 % int(d.attrs.get("group", 1)) == 0
        assert d.attrs.get("auto_pad", "NOTSET") == "NOTSET" or "pads" not in d.attrs


def test_enums_flags_axes_and_required_attributes() -> None:
    seen_modes, seen_flags = set(), set()
    for seed in range(100):
        d = _draw("Resize", (1, 2, 3, 3), seed, 19)
        seen_modes.add(d.attrs.get("mode"))
        topk = _draw("TopK", (2, 3, 4), seed, 11)
        seen_flags.add(topk.attrs.get("largest"))
        assert -3 <= topk.attrs.get("axis", 0) < 3
        assert "blocksize" in _draw("DepthToSpace", (1, 8, 2, 2), seed, 13).attrs  # required: always drawn
    assert {"nearest", "linear", "cubic"} <= seen_modes and {0, 1} <= seen_flags


def test_factor_shape_keeps_the_element_count() -> None:
    rng = random.Random(0)
    for size in (1, 7, 12, 360, 4096):
        for rank in range(1, 5):
            shape = factor_shape(size, rank, rng)
            assert len(shape) == rank and math.prod(shape) == size
    assert factor_shape(1, 0, rng) == ()
