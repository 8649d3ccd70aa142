"""onnxruntime as the judge of a model (issue 45 row 2): TVM's failure on a model onnxruntime refuses
to run is ``invalid``. The hostile model (a reshape of 4 elements to 10**10 at run time) is built by
tests/hostile_models.py."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.onnx.runtime import REFUSED, onnxruntime_refusal, refused
from tests.hostile_models import huge_reshape


def relu() -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


FEEDS = {"x": np.ones((2, 2), np.float32)}
ERROR = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "ValueError: Node cannot handle ShapeExpr inputs.")


def test_a_model_onnxruntime_refuses_to_run_turns_tvm_failures_invalid() -> None:
    refusal = onnxruntime_refusal(huge_reshape(), FEEDS)
    assert refusal is not None and "Reshape" in refusal and "\n" not in refusal
    got = refused(ERROR, refusal)
    assert got.symptom is Symptom.INVALID and got.pass_name == "import" and got.stage is Stage.LOAD
    assert got.message.startswith(f"{REFUSED} (") and got.message.endswith(f"TVM's failure: {ERROR.message}")


def test_a_model_onnxruntime_runs_keeps_tvm_failures() -> None:
    assert onnxruntime_refusal(relu(), FEEDS) is None
    assert refused(ERROR, None) is ERROR


def test_only_failures_tvm_could_be_blamed_for_are_turned() -> None:
    for symptom in (Symptom.OK, Symptom.INVALID, Symptom.CRASH, Symptom.HANG):
        observed = Observation(symptom, Stage.LOAD, "import", "x")
        assert refused(observed, "Fail: no") is observed
