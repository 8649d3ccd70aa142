"""Operator schemas as the insertion sampler reads them (seedzer.mutate.graph.op_schema, TVM-free)."""

from __future__ import annotations

from seedzer.mutate.graph.op_schema import DEFAULT_DOMAIN, MS_DOMAIN, OPTIONAL, VARIADIC, domain_of, op_schema, versions


def test_versions_are_the_opsets_an_operator_changed_in() -> None:
    assert versions("TopK", 24) == (1, 10, 11, 24)
    assert versions("TopK", 20) == (1, 10, 11)
    assert versions("NoSuchOp", 24) == ()


def test_an_onnx_schema_has_formals_types_defaults_and_enums() -> None:
    resize = op_schema("Resize", 19)
    assert resize is not None and resize.since == 19 and resize.domain == DEFAULT_DOMAIN
    assert [f.name for f in resize.inputs] == ["X", "roi", "scales", "sizes"]
    assert resize.inputs[1].option == OPTIONAL
    mode = resize.attrs["mode"]
    assert mode.type == "STRING" and mode.default == "nearest" and {"nearest", "linear", "cubic"} <= set(mode.choices)
    assert "tf_crop_and_resize" in resize.attrs["coordinate_transformation_mode"].choices
    assert "tensor(float)" in resize.allowed("T1")
    assert op_schema("Concat", 13) is not None and op_schema("Concat", 13).inputs[0].option == VARIADIC


def test_contrib_operators_come_from_onnxruntime() -> None:
    assert domain_of("FastGelu", 24) == MS_DOMAIN and domain_of("Relu", 24) == DEFAULT_DOMAIN
    attention = op_schema("Attention", 1, MS_DOMAIN)
    assert attention is not None and attention.inputs[0].name == "input" and "num_heads" in attention.attrs
    assert domain_of("NoSuchOp", 24) is None
