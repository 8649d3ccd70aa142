"""The input types TVM's ONNX importer takes (issue 45 row 2: a ``string`` or ``complex64`` input is
``invalid``, "unsupported input type", never a TVM bug)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from seedzer.kernel.onnx.inputs import IMPORTER_INPUT_DTYPES, UnsupportedInput, check_input_types, unsupported_input


def test_every_numeric_onnx_type_is_taken_and_string_and_complex_are_not() -> None:
    names = {}
    for name, code in TensorProto.DataType.items():
        if code:
            names[name] = np.dtype(helper.tensor_dtype_to_np_dtype(code)).name
    refused = {name for name, dtype in names.items() if dtype not in IMPORTER_INPUT_DTYPES}
    assert refused == {"STRING", "COMPLEX64", "COMPLEX128"}


def test_tvm_names_every_type_the_importer_is_said_to_take() -> None:
    tvm = pytest.importorskip("tvm")
    for dtype in IMPORTER_INPUT_DTYPES:
        tvm.DataType(dtype)
    for dtype in ("object", "complex64", "complex128"):
        with pytest.raises(Exception, match="unknown dtype"):
            tvm.DataType(dtype)


def test_the_first_unsupported_input_is_named() -> None:
    assert unsupported_input([("a", "float32"), ("b", "int64")]) is None
    assert unsupported_input([("a", "float32"), ("s", "object"), ("c", "complex64")]) == (
        "unsupported input type: input 's' is string, which TVM's ONNX importer does not take")
    with pytest.raises(UnsupportedInput, match="input 'c' is complex64"):
        check_input_types([("c", "complex64")])
    check_input_types([("x", "bool")])
