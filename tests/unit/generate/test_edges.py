"""The edge heuristic: options, ONNX edge features, the negative-axes rewrite, selection, z3 pins."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.errors import ConfigError
from seedzer.generate.heuristics import rank_select
from seedzer.generate.onnx_edges import FEATURES, edge_features, negate_axes
from seedzer.generate.options import (
    EdgeOptions,
    GenerationOptions,
    SelectionOptions,
    generation_from_dict,
    parse_generation,
)


def _model() -> onnx.ModelProto:
    """x[2,3,4] + s (rank 0) + b[4] (lower rank); softmax(axis=2); reduce-sum over axes [1]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    nodes = [
        helper.make_node("Add", ["x", "s"], ["a"]),
        helper.make_node("Add", ["a", "b"], ["c"]),
        helper.make_node("Softmax", ["c"], ["d"], axis=2),
        helper.make_node("ReduceSum", ["d", "axes"], ["y"], keepdims=0),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "edges", [x, s, b], [y], initializer=[axes]),
        opset_imports=[helper.make_opsetid("", 14)],
    )
    model.ir_version = 8
    return model


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, feeds)[0])


def test_edge_features_count_broadcasts_and_axes() -> None:
    f = edge_features(_model())
    assert set(f) == set(FEATURES)
    assert f["rank0_operands"] == 1 and f["lower_rank_operands"] == 1
    assert f["negative_axes"] == 0 and f["scalar_tensors"] == 1


def test_negate_axes_keeps_semantics_and_counts() -> None:
    model = _model()
    feeds = {
        "x": np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32),
        "s": np.array(0.5, dtype=np.float32),
        "b": np.arange(4, dtype=np.float32),
    }
    before = _run(model, feeds)
    assert negate_axes(model, 1.0, random.Random(0)) == 2
    onnx.checker.check_model(model)
    softmax = next(n for n in model.graph.node if n.op_type == "Softmax")
    assert softmax.attribute[0].i == -1
    assert edge_features(model)["negative_axes"] == 2
    np.testing.assert_allclose(_run(model, feeds), before, rtol=1e-6)
    assert negate_axes(_model(), 0.0, random.Random(0)) == 0


def test_edge_options_parse_roundtrip_and_identity() -> None:
    opts = parse_generation({"edge": {"broadcast": 0.5, "negative_axes": 1}}, "h.yaml")
    assert opts.edge == EdgeOptions(broadcast=0.5, negative_axes=1.0) and opts.edge.active
    assert generation_from_dict(opts.to_dict()) == opts
    plain = GenerationOptions()
    assert "edge" not in plain.to_dict()  # pools made before edge existed keep their identity
    assert generation_from_dict(plain.to_dict()) == plain


@pytest.mark.parametrize(
    ("edge", "field"),
    [({"broadcast": 1.5}, "generation.edge.broadcast"), ({"colour": 0.1}, "generation.edge.colour"),
     ({"unit_dims": True}, "generation.edge.unit_dims")],
)  # fmt: skip
def test_edge_option_errors_name_the_field(edge: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        parse_generation({"edge": edge}, "h.yaml")


def test_rank_select_prefers_edge_features() -> None:
    entries = [
        {"file": "a", "index": 0, "nodes": 1, "weights": 0, "ops": [], "edge_features": {"negative_axes": 1}},
        {"file": "b", "index": 1, "nodes": 1, "weights": 0, "ops": [], "edge_features": {"rank0_operands": 3}},
        {"file": "c", "index": 2, "nodes": 1, "weights": 0, "ops": []},  # an older pool: scores 0
    ]
    chosen = rank_select(entries, 2, SelectionOptions(sort_by=("edge",), order="descending"))
    assert [e["file"] for e in chosen] == ["b", "a"]


def test_attribute_pins_and_symbolic_params() -> None:
    import z3

    from seedzer.generate.edges import attribute_pins, symbolic_params

    class Op:
        def __init__(self) -> None:
            self.stride, self.pads, self.fixed = z3.Int("op0_0"), [z3.Int("op0_1"), 3], 2

    op = Op()
    assert [str(p) for p in symbolic_params(op)] == ["op0_0", "op0_1"]
    random.seed(0)
    dim = z3.Int("ph0_0")
    pins = attribute_pins(op, [dim], 1.0)
    assert len(pins) == 2 and all(z3.is_eq(p) for p in pins)
    assert attribute_pins(op, [dim], 0.0) == []


def test_edge_generator_pins_only_what_z3_allows(tmp_path: Path) -> None:
    """A pin z3 refuses is dropped; the insertion still succeeds (no NNSmith model is built)."""
    z3 = pytest.importorskip("z3")
    from seedzer.generate.edges import EdgeSymbolicGen

    gen = EdgeSymbolicGen.__new__(EdgeSymbolicGen)
    gen.solver, gen.last_solution, gen.z3_unsat, gen.z3_unknown, gen.edge_pins = z3.Solver(), None, 0, 0, 0
    x = z3.Int("x")
    gen._pins = [x == 1]
    assert gen.check_sat(x >= 2) == z3.sat and gen.edge_pins == 0  # refused pin: plain solve
    gen._pins = [x == 5]
    assert gen.check_sat(x >= 2) == z3.sat and gen.edge_pins == 1
    assert gen.last_solution is not None and gen.last_solution.eval(x).as_long() == 5
    assert gen._pins == []
