"""Reproducers: a standalone ``repro.py`` per low-level finding (needs only apache-tvm and numpy).

The script holds the finding's data (the TVMScript inline, the *expanded* flat pass list, the
inputs' seed, the expected outcome) followed by the code of :mod:`seedzer.triage.standalone`,
copied as text (so rendering never imports TVM: the campaign process renders too). It replays
the passes with plain ``tvm.tirx.transform.X(...)`` calls, builds and runs, and exits 1 while the
bug is present (a crash dies by its signal, a hang exits 1 once it outlives its time limit), 0
once it is gone and 2 on a different failure.

The flat list comes from :mod:`seedzer.triage.expand` (prerequisite repair passes written out);
:mod:`seedzer.triage.materialize` produces it in a clean process and calls :func:`render_repro`.
"""

from __future__ import annotations

import json
import pprint
from importlib import resources
from typing import Any

from seedzer.outcome import Symptom

TVM_VERSION = "0.27.0.post1"
MARKER = "# --- reproducer code (everything below is copied into repro.py) ---"

_HEADER = '''#!/usr/bin/env python3
"""Seedzer reproducer{finding}: {title}

Needs only: pip install apache-tvm=={tvm_version} numpy
Run: python repro.py
Exit status: 1 = bug reproduced ({how}), 0 = bug gone, 2 = a different failure.
Expected: {symptom} at stage {stage}, pass {pass_name}
{steps} passes applied one by one, each in PassContext(opt_level=3, config=...) with the target
current; then tvm.compile(..., target=BUILD_TARGET) at opt_level 3{extra}.
"""
'''


def standalone_code() -> str:
    """The text of :mod:`seedzer.triage.standalone` from its marker line on."""
    text = resources.files("seedzer.triage").joinpath("standalone.py").read_text()
    return text[text.index(MARKER) + len(MARKER) + 1 :]


def title_of(expected: dict[str, Any]) -> str:
    """One-line description of an expected outcome, e.g. ``crash at pass in s_tir.NarrowDataType``."""
    title = f"{expected['symptom']} at {expected.get('stage') or '?'}"
    if expected.get("pass"):
        title += f" in {expected['pass']}"
    return title


def _script_literal(script: str) -> str:
    if "'''" not in script and not script.endswith("\\") and "\\" not in script:
        return "r'''" + script.rstrip("\n") + "\n'''"
    return repr(script)


def render_repro(case: dict[str, Any], finding: str = "") -> str:
    """Render the standalone ``repro.py`` of ``case`` (see :mod:`seedzer.triage.standalone`)."""
    expected = case["expected"]
    symptom = expected["symptom"]
    extra = {
        "mismatch": "; the unoptimized build disables NOPT_DISABLED and the outputs are compared",
        "perf": "; both builds are timed and compared with the slowdown factor",
        "illformed": "; TVM's well-formedness verifier runs after every pass",
        "hang": "; a hang exits 1 after the time limit",
    }.get(symptom, "")
    settings = {k: v for k, v in case.items() if k not in ("script", "steps", "expected", "nopt_disabled")}
    parts = [
        _HEADER.format(
            finding=f" for finding {finding}" if finding else "",
            title=title_of(expected),
            tvm_version=TVM_VERSION,
            how=expected_exit(Symptom(symptom)),
            symptom=symptom,
            stage=expected.get("stage"),
            pass_name=expected.get("pass"),
            steps=len(case["steps"]),
            extra=extra,
        ),
        "# The PrimFunc under test (TVMScript).",
        "SCRIPT = " + _script_literal(case["script"]),
        "",
        "# The passes, in order: name, constructor arguments, PassContext config.",
        "STEPS = " + pprint.pformat(case["steps"], width=110, sort_dicts=True),
        "",
        "# What the fuzzer observed.",
        "EXPECTED = " + pprint.pformat(expected, width=110, sort_dicts=True),
        "",
        "# Targets, input seed, tolerances, time limit.",
        "SETTINGS = " + pprint.pformat(settings, width=110, sort_dicts=True),
        "NOPT_DISABLED = " + json.dumps(case.get("nopt_disabled", [])),
        "CASE = dict(SETTINGS, script=SCRIPT, steps=STEPS, expected=EXPECTED, nopt_disabled=NOPT_DISABLED)",
        "",
        standalone_code(),
    ]
    return "\n".join(parts)


def expected_exit(symptom: Symptom) -> str:
    """What a reproducer does while the bug is present."""
    return "killed by a signal" if symptom is Symptom.CRASH else "exit status 1"
