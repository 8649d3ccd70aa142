"""The graph kernel's trace of steps (seedzer.kernel.onnx.model.Trace): an importer limit is invalid,
counted under one class whatever exception type carried it; any other error stays an exception."""

from __future__ import annotations

from seedzer.campaign.invalid import invalid_class
from seedzer.kernel.common import IMPORTER_LIMIT, Symptom
from seedzer.kernel.onnx.inputs import UnsupportedInput
from seedzer.kernel.onnx.model import Trace


def _raise(exc: Exception) -> None:
    raise exc


def test_an_importer_limit_is_invalid_under_one_class_whatever_its_exception_type() -> None:
    for exc in (AssertionError("SkipLayerNormalization import currently only supports required beta and bias"),
                ValueError("Attribute x is not supported for Relax frontend")):
        got = Trace().call("import", _raise, exc)
        assert got.symptom is Symptom.INVALID and got.message.startswith(f"{IMPORTER_LIMIT}: {type(exc).__name__}")
        assert invalid_class(got.message) == IMPORTER_LIMIT


def test_the_same_error_outside_import_and_other_errors_at_import_stay_exceptions() -> None:
    limit = AssertionError("only supports required beta and bias")
    assert Trace().call("legalize", _raise, limit).symptom is Symptom.EXCEPTION
    got = Trace().call("import", _raise, ValueError("Node cannot handle ShapeExpr inputs."))
    assert got.symptom is Symptom.EXCEPTION and not got.message.startswith(IMPORTER_LIMIT)


def test_an_unsupported_input_type_keeps_its_own_reason() -> None:
    got = Trace().call("import", _raise, UnsupportedInput("unsupported input type: x is string"))
    assert got.symptom is Symptom.INVALID and not got.message.startswith(IMPORTER_LIMIT)
