"""Standalone repro rendering, verdicts and the triage registry (no TVM needed)."""

from __future__ import annotations

import ast

import pytest

from seedzer.campaign.confirm import crash_status
from seedzer.errors import SeedzerError
from seedzer.store.repro import render_repro, standalone_code
from seedzer.triage.registry import TRIAGERS, register, triager_for
from seedzer.triage.replay import verdict

CASE = {
    "script": "# from tvm.script import tirx as T\n@T.prim_func\ndef main():\n    T.evaluate(0)\n",
    "steps": [{"pass": "tirx.BindTarget", "args": {"target": {"kind": "llvm", "opt-level": 0}}, "config": {}},
              {"pass": "tirx.UnrollLoop", "args": {}, "config": {"tirx.UnrollLoop": {"auto_max_step": 16}}}],
    "expected": {"symptom": "exception", "stage": "pass", "pass": "tirx.UnrollLoop", "message": "boom"},
    "target": {"kind": "llvm", "opt-level": 0}, "build_target": {"kind": "llvm", "opt-level": 0},
    "input_seed": 7, "rtol": 1e-4, "atol": 1e-5, "timeout": 20.0, "perf": {"factor": 2.0, "repeats": 5},
    "nopt_disabled": ["tirx.UnrollLoop"],
}


def test_repro_is_valid_python_that_imports_only_tvm_numpy_and_the_stdlib() -> None:
    text = render_repro(CASE, "abc123")
    tree = ast.parse(text)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"faulthandler", "sys", "time", "typing", "numpy", "tvm", "tvm_ffi"}
    assert "pip install apache-tvm==0.27.0.post1 numpy" in text
    assert "T.evaluate(0)" in text  # the TVMScript is inline
    names = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert {"SCRIPT", "STEPS", "EXPECTED", "SETTINGS", "CASE"} <= names


def test_repro_data_round_trips_into_the_case() -> None:
    namespace: dict[str, object] = {}
    text = render_repro(CASE)
    data = text[: text.index(standalone_code())]
    exec(compile(data, "repro.py", "exec"), namespace)  # only the data part: no TVM import
    assert namespace["CASE"] == CASE


def test_crash_status_flags_instrumentation_only_for_breakpoints() -> None:
    assert crash_status(-11, "breakpoints") == "confirmed"
    assert crash_status(0, "breakpoints") == "instrumentation-suspect"
    assert crash_status(None, "breakpoints") == "instrumentation-suspect"
    assert crash_status(1, "passes") == "unconfirmed"


def test_replay_verdicts() -> None:
    assert verdict("exception", 1) == "still-present"
    assert verdict("crash", -11) == "still-present"
    assert verdict("crash", 0) == "fixed"
    assert verdict("exception", 2) == "error"
    assert verdict("hang", None) == "error"


def test_registry_dispatches_by_kind_and_rejects_unknown_kinds() -> None:
    assert "lowlevel" in TRIAGERS
    with pytest.raises(SeedzerError, match="no triage for findings of kind 'nope'"):
        triager_for("nope")
    register("test-kind", "seedzer.triage.replay:verdict")
    try:
        assert triager_for("test-kind") is verdict
    finally:
        del TRIAGERS["test-kind"]
