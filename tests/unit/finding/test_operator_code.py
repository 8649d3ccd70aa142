"""The code implementing an ONNX operator: its converter, or a lowering several operators share for a kind of value."""

from __future__ import annotations

from seedzer.finding.operator_code import operator_code


def test_nan_lost_by_a_max_or_min_lowering_is_one_component_whichever_operator() -> None:
    """apache/tvm#19579's family; the A/B audit of issue 57 found MaxPool losing NaN the same way (1159b581edb1)."""
    for operator in ("Relu", "Clip", "Max", "ReduceMax", "MaxPool", "GlobalMaxPool", "Elu", "Selu"):
        assert operator_code(operator, "nan") == "codegen.llvm.max_min", operator
    assert operator_code("MaxPool", None) == "relax.frontend.onnx.MaxPool"  # a wrong finite value is the converter's
    assert operator_code("ReduceMin", "inf") == "tirx.op.min_max_reduction_identity"
