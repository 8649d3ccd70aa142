"""Standalone reproducers for loader mismatches (TVM llvm build vs the ONNX reference).

:func:`repro_script` returns the text of a ``repro.py`` that needs only ``tvm``, ``onnx``,
``onnxruntime`` and ``numpy``. It loads the model file lying next to it, feeds the same inputs as
the loader (the seeded random generator and the comparison are copied from :mod:`compare`), and
exits with status 1 while the outputs disagree, 0 once they agree.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

from seedzer.load import compare

_TEMPLATE = '''#!/usr/bin/env python3
"""Seedzer loader mismatch: TVM ({target}) disagrees with {reference} on {model}.

Requires: pip install apache-tvm=={tvm_version} onnx onnxruntime numpy
Exit status: 1 while the mismatch is present, 0 when the outputs agree.
Original finding: {message}
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import onnx

MODEL = {model!r}
INPUTS_NPZ = {inputs_npz!r}  # reference .npz next to this file (inputs that fit, stored outputs), or None
INPUT_SEED = {seed!r}
SPECS = {specs!r}  # (name, dtype, shape) of every graph input, symbolic dims bound
REFERENCE = {reference!r}
TARGET = {target!r}
TOLERANCES = {tolerances!r}

{random_inputs}

{compare_outputs}

def reference_outputs(model, feeds):
    if REFERENCE == "stored":
        with np.load(os.path.join(HERE, INPUTS_NPZ)) as npz:
            return [np.asarray(npz["output:" + o.name]) for o in model.graph.output]
    if REFERENCE == "onnxruntime":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return [np.asarray(v) for v in sess.run(None, feeds)]
    from onnx.reference import ReferenceEvaluator

    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


def flatten(value):
    if hasattr(value, "numpy"):
        return [np.asarray(value.numpy())]
    out = []
    for item in value:
        out.extend(flatten(item))
    return out


def tvm_outputs(model, feeds):
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    mod = from_onnx(
        model,
        shape_dict={{name: list(shape) for name, _, shape in SPECS}},
        dtype_dict={{name: dtype for name, dtype, _ in SPECS}},
    )
    target = tvm.target.Target(json.loads(TARGET) if TARGET.lstrip().startswith("{{") else TARGET)
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    args = [tvm.runtime.tensor(np.asarray(feeds[name], order="C")) for name, _, _ in SPECS]
    return flatten(vm["main"](*args))


HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    model = onnx.load(os.path.join(HERE, MODEL))
    feeds = random_inputs(SPECS, INPUT_SEED)
    if INPUTS_NPZ:
        with np.load(os.path.join(HERE, INPUTS_NPZ)) as npz:
            for name, dtype, shape in SPECS:
                key = "input:" + name
                if key in npz.files and list(npz[key].shape) == list(shape):
                    feeds[name] = np.asarray(npz[key]).astype(dtype)
    expected = reference_outputs(model, feeds)
    actual = tvm_outputs(model, feeds)
    problems = compare_outputs(expected, actual, TOLERANCES)
    for line in problems:
        print("MISMATCH", line)
    if problems:
        return 1
    print("outputs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _source(fn: Any) -> str:
    return textwrap.dedent(inspect.getsource(fn)).strip() + "\n"


def repro_script(
    model_file: str,
    specs: list[tuple[str, str, list[int]]],
    *,
    input_seed: int,
    inputs_npz: str | None = None,
    reference: str = "onnxruntime",
    target: str = "llvm",
    message: str = "",
    tvm_version: str = "0.27.0.post1",
    tolerances: dict[str, tuple[float, float]] | None = None,
) -> str:
    """Text of a standalone ``repro.py`` for a model file that sits next to it (see module doc)."""
    return _TEMPLATE.format(
        model=model_file,
        inputs_npz=inputs_npz,
        seed=input_seed,
        specs=[(n, d, list(s)) for n, d, s in specs],
        reference=reference,
        target=target,
        tolerances=dict(tolerances if tolerances is not None else compare.TOLERANCES),
        random_inputs=_source(compare.random_inputs),
        compare_outputs=_source(compare.compare_outputs),
        message=message.replace('"""', "'''").replace("\\", "/").splitlines()[0] if message else "",
        tvm_version=tvm_version,
    )


def repro_for_outcome(outcome_detail: dict[str, Any], model_file: str, message: str = "") -> str:
    """Reproducer for a loader mismatch outcome's ``detail`` (as recorded by the loader)."""
    npz = outcome_detail.get("ref_npz")
    return repro_script(
        model_file,
        [(str(n), str(d), list(s)) for n, d, s in outcome_detail.get("specs", [])],
        input_seed=int(outcome_detail.get("input_seed", compare.INPUT_SEED)),
        inputs_npz=str(npz) if npz else None,
        reference=str(outcome_detail.get("reference", "onnxruntime")),
        target=str(outcome_detail.get("target", "llvm")),
        message=message,
    )
