"""Resource bounds and opset checks of models (issue 32), without TVM and without allocating."""

from __future__ import annotations

import resource
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from seedzer.commands.load_report import build_report, verdict_of
from seedzer.config import Config, config_from_dict
from seedzer.errors import ConfigError
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.onnx.runtime import onnxruntime_max_opset
from seedzer.load.bounds import (
    DEFAULT_MAX_TESTCASE_MEMORY,
    Limits,
    bounds_problem,
    declared_tensors,
    model_problem,
    opset_problem,
)
from seedzer.load.loader import AttemptResult, LoadOptions, ModelLoad
from seedzer.load.onnx_import import OverBounds, read_model

GB4 = [1000, 1000, 1000]


def _relu(shape: list[int | str], opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _huge_initializer(elements: int = 10**10) -> onnx.ModelProto:
    """``y = x + w`` whose initializer ``w`` declares ``elements`` floats kept in an external file
    that does not exist (nothing is ever read or allocated)."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[elements])
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="w.bin")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [elements])], initializer=[w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_a_4gb_input_is_over_the_tensor_bound() -> None:
    why = bounds_problem(_relu(GB4))
    assert why == ("input 'x' declares 1000x1000x1000 float32 = 4.0 GB, over limits.max_tensor_bytes 268.4 MB")


def test_symbolic_dims_do_not_count_and_small_models_pass() -> None:
    assert bounds_problem(_relu(["n", 1000, 1000])) is None
    assert bounds_problem(_relu([2, 3])) is None
    assert model_problem(_relu([2, 3])) is None


def test_a_10_to_the_10_initializer_is_refused_without_reading_it() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    why = bounds_problem(_huge_initializer())
    assert why is not None and "initializer 'w' declares 10000000000 float32 = 40.0 GB" in why
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB: nothing allocated


def test_the_model_total_counts_inputs_and_initializers() -> None:
    model = _huge_initializer(1000)
    sizes = {(t.role, t.name): t.nbytes for t in declared_tensors(model)}
    assert sizes[("initializer", "w")] == 4000 and sizes[("input", "x")] == 4
    why = bounds_problem(model, Limits(max_tensor_bytes=0, max_model_bytes=4000))
    assert why == "inputs and initializers total 4.0 KB (2 tensors), over limits.max_model_bytes 4.0 KB"
    assert bounds_problem(model, Limits(max_tensor_bytes=0, max_model_bytes=0)) is None


def test_an_unknown_opset_is_refused() -> None:
    why = opset_problem(_relu([2], opset=999))
    assert why is not None and why.startswith("opset 999 is newer than the installed onnx")
    assert opset_problem(_relu([2], opset=17)) is None
    ort_max = onnxruntime_max_opset()
    assert ort_max is not None and 17 <= ort_max <= onnx.defs.onnx_opset_version()
    if ort_max < onnx.defs.onnx_opset_version():
        why = opset_problem(_relu([2], opset=ort_max + 1))
        assert why is not None and "onnxruntime" in why


@pytest.mark.parametrize("model", [_relu(GB4), _huge_initializer(), _relu([2], opset=999)])
def test_read_model_refuses_before_external_data_or_checks(tmp_path: Path, model: onnx.ModelProto) -> None:
    path = tmp_path / "hostile.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(OverBounds, match=r"^ONNX model hostile\.onnx: "):
        read_model(path)


def test_the_load_path_counts_a_hostile_model_invalid_at_parse(tmp_path: Path) -> None:
    path = tmp_path / "big.onnx"
    path.write_bytes(_relu(GB4).SerializeToString())
    result = OnnxLoader(LoadOptions(), isolate=False).load(path)  # the campaign's and `seedzer load`'s path
    assert result.seeds == [] and result.attempts == ["raw"]
    (obs,) = result.observations
    assert obs.symptom is Symptom.INVALID and obs.pass_name == "parse" and "4.0 GB" in obs.message
    assert result.findings() == []
    assert build_report([result]).invalid_inputs == 1


def test_a_match_with_an_invalid_reference_is_not_counted_matched() -> None:
    run = AttemptResult("raw", reached=["parse", "import", "legalize", "fuse", "build", "run", "reference",
                                        "compare"], matched=True)
    run.observations.append(Observation(Symptom.INVALID, Stage.LOAD, "reference", "onnxruntime cannot run it"))
    load = ModelLoad(model="m.onnx")
    load.merge(run)
    assert verdict_of(load) is None
    report = build_report([load])
    assert report.counts["matched"] == 0 and report.groups[0].symptom == "invalid"


def test_limits_config_defaults_and_checks() -> None:
    cfg = Config()
    assert cfg.limits.limits() == Limits()
    assert LoadOptions().limits.max_testcase_memory == DEFAULT_MAX_TESTCASE_MEMORY
    assert config_from_dict({"limits": {"max_tensor_bytes": 0}}).limits.max_tensor_bytes == 0
    with pytest.raises(ConfigError, match=r"limits\.max_testcase_memory"):
        config_from_dict({"limits": {"max_testcase_memory": 1000}})
