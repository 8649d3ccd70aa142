"""Unit tests of the reproducer generator (the script is executed up to, not including, main())."""

from __future__ import annotations

from typing import Any

import numpy as np

from seedzer.load.compare import TOLERANCES, compare_outputs, random_inputs
from seedzer.load.repro import repro_for_outcome, repro_script


def _namespace(text: str) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "repro_under_test", "__file__": "/nowhere/repro.py"}
    exec(compile(text, "repro.py", "exec"), ns)
    return ns


def test_repro_embeds_the_loaders_input_generator_and_comparison() -> None:
    specs = [("x", "float32", [2, 3]), ("k", "int64", [4])]
    ns = _namespace(repro_script("model.onnx", specs, input_seed=11, message="output 0: bad"))
    assert ns["MODEL"] == "model.onnx" and ns["INPUT_SEED"] == 11 and ns["REFERENCE"] == "onnxruntime"
    ours, theirs = random_inputs(specs, 11), ns["random_inputs"](ns["SPECS"], ns["INPUT_SEED"])
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name])
    e, a = [np.array([1.0, np.nan], np.float32)], [np.array([1.5, np.nan], np.float32)]
    assert ns["compare_outputs"](e, a, ns["TOLERANCES"]) == compare_outputs(e, a, TOLERANCES)
    assert ns["compare_outputs"](e, a, ns["TOLERANCES"])  # out of tolerance: the script would exit 1


def test_repro_for_outcome_uses_the_recorded_detail() -> None:
    detail = {
        "specs": [["x", "float32", [1, 4]]],
        "input_seed": 5,
        "reference": "onnx.reference",
        "ref_npz": "m.npz",
        "target": "llvm",
    }
    ns = _namespace(repro_for_outcome(detail, "model.onnx", 'a "quoted" """message"""\nsecond line'))
    assert ns["SPECS"] == [("x", "float32", [1, 4])]
    assert ns["INPUTS_NPZ"] == "m.npz" and ns["REFERENCE"] == "onnx.reference" and ns["INPUT_SEED"] == 5
    assert "second line" not in ns["__doc__"]


def test_repro_needs_only_tvm_onnx_onnxruntime_numpy() -> None:
    text = repro_script("m.onnx", [("x", "float32", [1])], input_seed=0)
    lines = [line.strip() for line in text.splitlines()]
    imports = {line.split()[1].split(".")[0] for line in lines if line.startswith(("import ", "from "))}
    assert imports <= {"__future__", "json", "os", "sys", "numpy", "onnx", "onnxruntime", "tvm"}
    assert "seedzer" not in text
