"""Reproducer rendering and replay verdicts (no TVM needed)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict

import pytest

from seedzer.campaign.confirm import crash_status
from seedzer.finding.meta import FindingMeta
from seedzer.finding.registry import KINDS, kind
from seedzer.finding.replay import verdict
from seedzer.finding.repro import SHARED_KERNELS, kernel_code, kernel_source
from seedzer.finding.tir.folder import render_tir_repro
from seedzer.kernel.common import PRESENT_LINE, Observation, Stage, Symptom
from seedzer.kernel.tir.case import FUZZED, Case, Step

OBS = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.UnrollLoop", "boom")
CASE = Case("# from tvm.script import tirx as T\n@T.prim_func\ndef main():\n    T.evaluate(0)\n",
            (Step("s_tir.LowerInitBlock"), Step("tirx.UnrollLoop", {}, {"tirx.UnrollLoop": {"auto_max_step": 16}},
                                                FUZZED, True)), 7, expected=OBS)
META = FindingMeta("abc123abc123", "lowlevel", OBS, culprit=["tirx.UnrollLoop"])


def test_repro_is_valid_python_that_imports_only_tvm_numpy_and_the_stdlib() -> None:
    text = render_tir_repro(CASE, META)
    tree = ast.parse(text)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "collections", "dataclasses", "enum", "faulthandler", "re", "sys", "time",
                        "traceback", "typing", "numpy", "tvm", "tvm_ffi"}
    assert "seedzer" not in imported
    assert "pip install apache-tvm==0.27.0.post1 numpy" in text
    assert "T.evaluate(0)" in text  # the TVMScript is inline, readable
    assert "Culprit (bisection): tirx.UnrollLoop" in text
    names = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert {"SCRIPT", "CASE"} <= names


def test_repro_code_is_the_kernel_verbatim_and_its_data_round_trips() -> None:
    text = render_tir_repro(CASE, META)
    _imports, code = kernel_code("tir.case+tir.lowering+tir.observe")
    assert code in text  # the kernel's own code, copied verbatim
    data = text[text.index("SCRIPT = "): text.index(code)]
    namespace: dict[str, object] = {}
    exec(compile(data, "repro.py", "exec"), namespace)  # only the data part: no TVM import
    assert Case.from_json(namespace["CASE"]) == CASE  # type: ignore[arg-type]


def test_the_crash_confirmation_never_counts_sigkill() -> None:
    assert crash_status(-11) == "confirmed"
    assert crash_status(-9) == "unconfirmed"  # the OOM killer or an operator, never TVM
    assert crash_status(0) == "unconfirmed"
    assert crash_status(None) == "unconfirmed"


@pytest.mark.parametrize(("symptom", "code", "output", "expected"), [
    ("exception", 1, f"observed: ...\n{PRESENT_LINE}\n", "still-present"),
    ("exception", 1, "", "error"),  # /bin/false exits 1 too: no verdict line, no verdict
    ("crash", -11, "", "still-present"),
    ("crash", -9, "", "error"),
    ("crash", 0, "not reproduced: the bug is gone", "fixed"),
    ("exception", 0, "", "error"),
    ("exception", 2, "observed: x\na different failure", "error"),
    ("exception", 3, "broken environment: No module named 'tvm'", "error"),
    ("hang", None, "", "error"),
    ("hang", 1, "expecting a hang: giving up after 20 s", "still-present"),
])
def test_replay_verdicts(symptom: str, code: int | None, output: str, expected: str) -> None:
    assert verdict(symptom, code, output)[0] == expected


def test_a_kernel_chain_defines_each_name_once() -> None:
    """A reproducer concatenates its kernel modules into one namespace: a name two modules define is
    silently the later one's (the graph chain once had two ``_finish``, the model mutations' and the
    Relax mutations', so a model mutation in a repro.py ran the wrong one; it once carried the load
    kernel's ``main`` before its own)."""
    for name in KINDS:
        defined: dict[str, list[str]] = defaultdict(list)
        for module in (*SHARED_KERNELS, *kind(name).kernel.split("+")):
            _head, code = kernel_source(module)
            for found in re.findall(r"^(?:def|class)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=", code, re.MULTILINE):
                defined[found[0] or found[1]].append(module)
        twice = {n: ms for n, ms in defined.items() if len(ms) > 1}
        assert not twice, f"kind {name}: {twice}"


def test_non_finite_values_of_a_case_are_python_in_its_repro() -> None:
    """A special-values mismatch records NaN and infinities (Python prints them bare: ``nan``, ``-inf``)."""
    import math

    from seedzer.finding.repro import render

    text = render("tir.case", "numpy", {"expected": {"values": [float("nan"), float("-inf"), 1.0]}}, title="t")
    data = text[text.index("nan, inf = "): text.index("\n\n", text.index("CASE = "))]
    namespace: dict[str, object] = {}
    exec(compile(data, "repro.py", "exec"), namespace)
    values = namespace["CASE"]["expected"]["values"]  # type: ignore[index]
    assert math.isnan(values[0]) and values[1] == -math.inf and values[2] == 1.0
