"""Which graph inputs TVM's ONNX importer takes: its input element types.

``from_onnx`` names each input's type by its numpy name (``tvm.DataType``); a type TVM has no name
for (``string``, ``complex64``, ``complex128``) fails there with ``unknown dtype``. A model with such
an input is an unsupported input, like an unsupported operator: ``invalid`` with the reason
"unsupported input type", never a TVM bug. The seed loader refuses it before import
(:func:`seedzer.load.onnx_import.input_specs`), and the kernels' ``import`` step does too, so an older
finding is judged the same way by the gate and ``recheck``.

Depends on the standard library only (copied verbatim into repro.py, first of the ONNX plumbing).
"""

from __future__ import annotations

from collections.abc import Iterable

# --- kernel code (everything below is copied verbatim into repro.py) ---
IMPORTER_INPUT_DTYPES = frozenset({
    "bool", "int2", "int4", "int8", "int16", "int32", "int64", "uint2", "uint4", "uint8", "uint16", "uint32",
    "uint64", "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"})
"""The numpy names of the ONNX element types TVM names (``tvm.DataType``), i.e. the input types its
ONNX importer takes; ONNX's ``string`` (numpy ``object``), ``complex64`` and ``complex128`` are not."""
UNSUPPORTED_INPUT = "unsupported input type"
"""How the reason of an input TVM's importer does not take starts."""


class UnsupportedInput(ValueError):
    """A model input of a type TVM's ONNX importer does not take (the message names input and type)."""


def unsupported_input(inputs: Iterable[tuple[str, str]]) -> str | None:
    """The reason the first ``(name, numpy dtype name)`` input TVM's importer does not take is
    unsupported (``unsupported input type: ...``), or None when it takes them all."""
    for name, dtype in inputs:
        if dtype not in IMPORTER_INPUT_DTYPES:
            shown = "string" if dtype == "object" else dtype
            return f"{UNSUPPORTED_INPUT}: input {name!r} is {shown}, which TVM's ONNX importer does not take"
    return None


def check_input_types(inputs: Iterable[tuple[str, str]]) -> None:
    """Raise :class:`UnsupportedInput` when an input's type is one TVM's importer does not take."""
    reason = unsupported_input(inputs)
    if reason is not None:
        raise UnsupportedInput(reason)
