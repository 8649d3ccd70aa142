"""Reproducers: ``repro.py`` replays a low-level finding in a fresh process.

The script embeds the TVMScript, the pass list and the inputs' seed, replays passes, builds and
runs, and exits non-zero while the bug is present (a crash kills it with the signal itself). It
rebuilds the passes through ``seedzer.mutate.passes`` (the same code, prerequisite repair included,
the fuzzer ran), so it needs Seedzer installed next to TVM.
"""

from __future__ import annotations

import json

from seedzer.outcome import Outcome, Symptom

TVM_VERSION = "0.27.0.post1"

_TEMPLATE = '''#!/usr/bin/env python3
"""Seedzer reproducer: {title}

Symptom: {symptom}   stage: {stage}   pass: {pass_name}
Needs: apache-tvm=={tvm_version}, numpy and seedzer (for the pass registry)
Exit status: 0 = bug not present, 1 = bug reproduced (a crash kills the process instead).
"""
import json
import sys

import numpy as np
import tvm
from seedzer.mutate.passes import apply_passes, optional_pass_names
from seedzer.seed import passes_from_json

SYMPTOM = {symptom!r}
SCRIPT = {script!r}
PASSES = {passes!r}
RTOL, ATOL = {rtol!r}, {atol!r}

def make_inputs(func, seed):
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        shape = [int(d) for d in p.ty.shape]
        dt = str(p.ty.dtype)
        out.append(rng.uniform(-1, 1, size=shape).astype(dt) if dt.startswith("float") else np.zeros(shape, dt))
    return out


def run(ex, inputs):
    args = [tvm.runtime.tensor(a.copy(), tvm.cpu()) for a in inputs]
    ex["main"](*args)
    return [a.numpy() for a in args]


def same(a, b):
    for x, y in zip(a, b):
        if x.dtype.kind == "f":
            if not np.array_equal(np.isnan(x), np.isnan(y)):
                return False
            m = ~np.isnan(x)
            if not np.allclose(x[m], y[m], rtol=RTOL, atol=ATOL, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def main():
    target = tvm.target.Target({{"kind": "llvm", "opt-level": 0}})
    func = tvm.script.from_source(SCRIPT).with_attr("global_symbol", "main")
    mod = tvm.IRModule({{"main": func}})
    inputs = make_inputs(func, {input_seed})
    try:
        mod = apply_passes(mod, passes_from_json(PASSES))
        with tvm.transform.PassContext(opt_level=3):
            opt = tvm.compile(mod, target=target)
        opt_out = run(opt, inputs)
    except Exception as exc:  # the exception oracle's symptom
        print(f"reproduced: {{type(exc).__name__}}: {{str(exc).splitlines()[-1] if str(exc) else ''}}")
        return 1 if SYMPTOM == "exception" else 2
    if SYMPTOM == "mismatch":
        with tvm.transform.PassContext(opt_level=3, disabled_pass=optional_pass_names()):
            nopt = tvm.compile(tvm.IRModule({{"main": func}}), target=target)
        if not same(run(nopt, inputs), opt_out):
            print("reproduced: optimized and unoptimized builds disagree")
            return 1
    print("not reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def render_repro(
    outcome: Outcome,
    script: str,
    passes_json: str,
    *,
    input_seed: int,
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> str:
    """Render ``repro.py`` for a low-level finding.

    ``passes_json`` is the sequence as the fuzzer stored it; ``input_seed`` recreates the inputs.
    """
    title = f"{outcome.symptom.value} at {outcome.stage.value if outcome.stage else '?'}"
    if outcome.pass_name:
        title += f" in {outcome.pass_name}"
    return _TEMPLATE.format(
        title=title,
        symptom=outcome.symptom.value,
        stage=outcome.stage.value if outcome.stage else "",
        pass_name=outcome.pass_name or "",
        tvm_version=TVM_VERSION,
        script=script,
        passes=json.dumps(json.loads(passes_json)),
        rtol=rtol,
        atol=atol,
        input_seed=input_seed,
    )


def expected_exit(symptom: Symptom) -> str:
    """What a reproducer does while the bug is present."""
    return "killed by a signal" if symptom is Symptom.CRASH else "exit status 1"
