"""The graph case's data: JSON round trip, pass labels, model embedding (TVM-free)."""

from __future__ import annotations

import base64

from seedzer.kernel.common import OPT_VS_REFERENCE, Observation, Stage, Symptom
from seedzer.kernel.comparison import Difference
from seedzer.kernel.graph.case import GRAPH_INPUT_SEED, GraphCase, GraphPass


def test_graph_pass_label_and_json() -> None:
    p = GraphPass("relax.FuseOps", {"fuse_opt_level": 2})
    assert p.label() == "relax.FuseOps[fuse_opt_level=2]"
    assert GraphPass("relax.FoldConstant").label() == "relax.FoldConstant"
    assert GraphPass.from_json(p.to_json()) == p
    assert GraphPass.from_json({"name": "relax.X"}) == GraphPass("relax.X")  # a PassSpec's spelling


def test_case_round_trips_through_json() -> None:
    diff = Difference(0, "values", 3, 10, 0.5)
    expected = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", diff.describe(), comparison=OPT_VS_REFERENCE,
                           difference=diff)
    case = GraphCase((("x", "float32", (1, 3)),), (GraphPass("relax.ConvertLayout", {"desired_layouts": {
        "relax.nn.conv2d": ["NHWC", "default"]}}),), model_file="model.onnx", exact=False, expected=expected)
    again = GraphCase.from_json(case.to_json())
    assert again == case
    assert again.input_seed == GRAPH_INPUT_SEED


def test_with_model_embeds_and_with_passes_replaces() -> None:
    case = GraphCase((("x", "float32", (2,)),), model_file="m.onnx")
    embedded = case.with_model(b"onnx-bytes")
    assert embedded.model_file is None and base64.b64decode(str(embedded.model)) == b"onnx-bytes"
    assert case.with_passes((GraphPass("relax.Normalize"),)).passes == (GraphPass("relax.Normalize"),)
    assert GraphCase.from_json({**case.to_json(), "unknown": 1}) == case  # unknown keys are ignored
