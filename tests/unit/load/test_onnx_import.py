"""Unit tests of ONNX reading, input specs (dynamic dims) and reference data (no TVM)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from seedzer.load.bounds import opset_of
from seedzer.load.onnx_import import InvalidModel, input_specs, read_model
from seedzer.load.refdata import find_reference, read_reference


def _relu(shape: list[int | str], dtype: int = TensorProto.FLOAT) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", dtype, shape)],
        [helper.make_tensor_value_info("y", dtype, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_read_model_ok(tmp_path: Path) -> None:
    path = tmp_path / "ok.onnx"
    onnx.save(_relu([2, 3]), path)
    model = read_model(path)
    assert opset_of(model) == 17


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"", "is empty"), (b"\x00garbage\xff\x01", "truncated or corrupt"), (None, "cannot read")],
)
def test_read_model_errors_are_one_line_and_name_the_file(tmp_path: Path, content: bytes | None, expected: str
                                                          ) -> None:
    path = tmp_path / "bad.onnx"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InvalidModel) as info:
        read_model(path)
    message = str(info.value)
    assert expected in message and "bad.onnx" in message and "\n" not in message


def test_truncated_real_model_is_invalid(tmp_path: Path) -> None:
    good = _relu([2, 3]).SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(InvalidModel, match=r"cut\.onnx"):
        read_model(path)


def test_model_failing_the_checker_is_invalid(tmp_path: Path) -> None:
    model = _relu([2])
    model.graph.node[0].input[0] = "missing"
    path = tmp_path / "unchecked.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(InvalidModel, match="not valid ONNX"):
        read_model(path)


def test_static_inputs_are_not_bound() -> None:
    specs, bound = input_specs(_relu([2, 3]), "m.onnx")
    assert [s.as_tuple() for s in specs] == [("x", "float32", (2, 3))]
    assert bound == {}


def test_symbolic_dims_bind_to_one_or_to_the_reference_input() -> None:
    model = _relu(["N", 3, "?"])
    specs, bound = input_specs(model, "m.onnx")
    assert specs[0].shape == (1, 3, 1) and bound == {"x": [1, 3, 1]}
    specs, bound = input_specs(model, "m.onnx", {"x": np.zeros((4, 3, 2), np.float32)})
    assert specs[0].shape == (4, 3, 2) and bound == {"x": [4, 3, 2]}


def test_unknown_rank_and_non_tensor_inputs_are_invalid() -> None:
    model = _relu([2])
    model.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(InvalidModel, match="unknown rank"):
        input_specs(model, "m.onnx")
    seq = _relu([2])
    seq.graph.input[0].CopyFrom(
        helper.make_value_info("x", helper.make_sequence_type_proto(helper.make_tensor_type_proto(1, [2])))
    )
    with pytest.raises(InvalidModel, match="not a tensor"):
        input_specs(seq, "m.onnx")


@pytest.mark.parametrize(("dtype", "shown"), [(TensorProto.STRING, "string"), (TensorProto.COMPLEX64, "complex64"),
                                               (TensorProto.COMPLEX128, "complex128")])
def test_an_input_type_tvm_does_not_take_is_invalid_as_unsupported(dtype: int, shown: str) -> None:
    """Issue 45 row 2. Before: the spec was made and TVM's importer failed with "unknown dtype", filed
    as an exception bug. After: the model is refused at parse, "unsupported input type", naming the input."""
    with pytest.raises(InvalidModel, match=f"^ONNX model m.onnx: unsupported input type: input 'x' is {shown}, "
                                           "which TVM's ONNX importer does not take$"):
        input_specs(_relu([2], dtype), "m.onnx")


def test_an_element_type_onnx_does_not_define_is_invalid() -> None:
    model = _relu([2])
    model.graph.input[0].type.tensor_type.elem_type = 999
    with pytest.raises(InvalidModel, match="element type 999, which ONNX does not define"):
        input_specs(model, "m.onnx")


def test_initializers_are_not_inputs() -> None:
    model = _relu([2])
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.zeros(2, np.float32), "w"))
    model.graph.input.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [2]))
    specs, _ = input_specs(model, "m.onnx")
    assert [s.name for s in specs] == ["x"]


def test_reference_npz_names_and_keys(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    assert find_reference(model) is None
    assert read_reference(model).path is None
    for name in ("m.npz", "m.ref.npz", "m.onnx.ref.npz"):
        ref = tmp_path / name
        np.savez(ref, **{"input:x": np.ones(2), "output:y": np.zeros(2), "other": np.ones(1)})  # type: ignore[arg-type]
        data = read_reference(model)
        assert data.path == ref
        assert set(data.inputs) == {"x"} and set(data.outputs) == {"y"}
        ref.unlink()


def test_unreadable_reference_raises_one_line(tmp_path: Path) -> None:
    (tmp_path / "m.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"m\.npz"):
        read_reference(tmp_path / "m.onnx")
