"""The text of a plain reproducer whose program is an ONNX model built in code: TVM's importer (or the
build after it) failing on it, or TVM's outputs against onnxruntime's on inputs from a fixed seed.
TVM-free rendering (the model's code is :func:`seedzer.finding.minimal.onnx_code.model_code`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.onnx_code import IMPORTS, array_code
from seedzer.finding.minimal.program import IMPORTER, WRONG_RESULT, MinimalProgram
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.graph.case import GraphPass

ONNX_NEEDS = ("apache-tvm", "numpy", "onnx")
"""What an importer reproducer needs from PyPI."""
ORT_NEEDS = ("apache-tvm", "numpy", "onnx", "onnxruntime")
"""What a reproducer comparing with onnxruntime needs."""
SPEC_NEEDS = ORT_NEEDS
"""What a reproducer comparing with onnx.reference and onnxruntime needs (onnx.reference ships with onnx)."""
Spec = tuple[str, str, tuple[int, ...]]
"""A graph input: name, numpy dtype, concrete shape."""


def input_lines(specs: Sequence[Spec], seed: int) -> list[str]:
    """The kernel's random inputs (:func:`seedzer.kernel.onnx.model.random_inputs`) as code."""
    items = []
    for name, dtype, shape in specs:
        size = list(shape)
        made = (f"rng.random({size}) < 0.5" if dtype == "bool" else
                f"rng.integers(0, 4, size={size}).astype({dtype!r})" if dtype.startswith("uint") else
                f"rng.integers(-3, 4, size={size}).astype({dtype!r})" if dtype.startswith("int") else
                f"rng.uniform(-2.0, 2.0, size={size}).astype({dtype!r})")
        items.append(f"    {name!r}: np.asarray({made}),")
    return [f"rng = np.random.default_rng({seed})  # inputs: floats uniform in [-2, 2), integers in [-3, 3]",
            "inputs = {", *items, "}"]


def import_call(specs: Sequence[Spec] | None) -> str:
    """``from_onnx(model)``, with the inputs' shapes and dtypes when the model leaves some open."""
    if specs is None:
        return "mod = from_onnx(model)"
    shapes = {n: list(s) for n, _, s in specs}
    dtypes = {n: d for n, d, _ in specs}
    return f"mod = from_onnx(model, shape_dict={shapes!r}, dtype_dict={dtypes!r})"


def relax_pass_call(step: GraphPass) -> str:
    """``relax.transform.<Pass>(<args>)`` of a Relax step."""
    name = step.name.partition(".")[2]
    return f"relax.transform.{name}({', '.join(f'{k}={v!r}' for k, v in step.args.items())})"


def importer_failure(docs: Docs, model: Sequence[str], specs: Sequence[Spec] | None, mark: str, build: bool,
                     crash: bool, component: str, passes: Sequence[GraphPass] = ()) -> MinimalProgram:
    """The model, then ``from_onnx`` (then the Relax ``passes`` under an LLVM target, and ``tvm.compile``
    when ``build``), checked for an error holding ``mark`` (``crash``: for a death by a signal)."""
    body = [import_call(specs)]
    if passes:
        body += ['with tvm.target.Target("llvm"):', *parts.indent([f"mod = {relax_pass_call(p)}(mod)" for p in passes])]
    if build:
        body.append('tvm.compile(mod, target="llvm")')
    imports = [*IMPORTS, "import tvm", *(["from tvm import relax"] if passes else []),
               "from tvm.relax.frontend.onnx import from_onnx"]
    what = "the importer accepted the model" + (" and the passes ran" if passes else "") + \
        (" and the build succeeded" if build else "")
    check = parts.crash_check(body, what) if crash else parts.error_check(body, mark, what)
    text = parts.program([parts.docstring(docs, ONNX_NEEDS), parts.preamble(imports),
                          list(model), check])
    said = "dies by a signal" if crash else f"raises an error containing {mark!r}"
    return MinimalProgram(text, ONNX_NEEDS, IMPORTER, component,
                          ("from_onnx", *(relax_pass_call(p) for p in passes), *(("tvm.compile",) if build else ())),
                          f"TVM {said}", len(model))


def versus_onnxruntime(docs: Docs, model: Sequence[str], specs: Sequence[Spec], seed: int,
                       tolerances: tuple[float, float], component: str) -> MinimalProgram:
    """The model run by onnxruntime (the reference) and by TVM (``from_onnx``, ``tvm.compile``, the Relax
    VM) on the same inputs, compared."""
    imports = [*IMPORTS, "import onnxruntime", "import tvm", "from tvm import relax",
               "from tvm.relax.frontend.onnx import from_onnx"]
    run = ["session = onnxruntime.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])",
           "expected = session.run(None, inputs)  # the reference: onnxruntime",
           import_call(specs),
           'vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())',
           f"out = vm['main'](*[tvm.runtime.tensor(inputs[name]) for name in {[n for n, _, _ in specs]!r}])",
           "flat = lambda v: [v.numpy()] if hasattr(v, 'numpy') else [a for x in v for a in flat(x)]",
           "actual = flat(out)"]
    check = parts.outputs_check("expected", "actual", tolerances[0], tolerances[1], "TVM agrees with onnxruntime")
    text = parts.program([parts.docstring(docs, ORT_NEEDS), parts.preamble(imports),
                          list(model), input_lines(specs, seed), run, check])
    return MinimalProgram(text, ORT_NEEDS, WRONG_RESULT, component, ("from_onnx", "tvm.compile"),
                          "TVM's outputs equal onnxruntime's", len(model))


def tvm_run(specs: Sequence[Spec], passes: Sequence[GraphPass]) -> list[str]:
    """``from_onnx``, the Relax ``passes`` under an LLVM target, ``tvm.compile`` and the Relax VM on ``inputs``:
    ``actual``, the outputs as numpy arrays."""
    applied = ['with tvm.target.Target("llvm"):', *parts.indent([f"mod = {relax_pass_call(p)}(mod)" for p in passes])] \
        if passes else []
    return [import_call(specs), *applied,
            'vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())',
            f"out = vm['main'](*[tvm.runtime.tensor(inputs[name]) for name in {[n for n, _, _ in specs]!r}])",
            "flat = lambda v: [v.numpy()] if hasattr(v, 'numpy') else [a for x in v for a in flat(x)]",
            "actual = flat(out)"]


def versus_specification(docs: Docs, model: Sequence[str], specs: Sequence[Spec], inputs: Mapping[str, np.ndarray],
                         output: int, tolerances: tuple[float, float], component: str,
                         passes: Sequence[GraphPass] = ()) -> MinimalProgram:
    """The model on special input values (written out exactly): its output ``output`` by onnx.reference
    (the specification's own implementation) and onnxruntime, which must agree (else no verdict, exit 2),
    and by TVM (``from_onnx``, the Relax ``passes``, ``tvm.compile``), compared with them as the kernel
    does: shape and dtype, NaN and infinity positions and signs, values, and zeros' signs."""
    imports = [*IMPORTS, "import onnxruntime", "from onnx.reference import ReferenceEvaluator", "import tvm",
               "from tvm import relax", "from tvm.relax.frontend.onnx import from_onnx"]
    given = ["inputs = {  # special values: NaN, infinities, signed zeros, extremes, written out exactly",
             *[f"    {name!r}: {array_code(np.asarray(value))}," for name, value in inputs.items()], "}"]
    rtol, atol = tolerances
    engines = [
        f"k = {output}  # the output TVM computes differently",
        "spec = [np.asarray(v) for v in ReferenceEvaluator(model).run(None, inputs)]  # the specification's own",
        "session = onnxruntime.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])",
        "ort = [np.asarray(v) for v in session.run(None, inputs)]",
        f"if spec[k].shape != ort[k].shape or not np.allclose(spec[k], ort[k], rtol={rtol:g}, atol={atol:g}, "
        "equal_nan=True):",
        "    print('onnx.reference and onnxruntime disagree on output', k, ': no verdict')",
        f"    sys.exit({parts.DIFFERENT})"]
    check = parts.outputs_check("[spec[k]]", "[actual[k]]", rtol, atol,
                                "TVM agrees with onnx.reference and onnxruntime", signed_zeros="[ort[k]]")
    text = parts.program([parts.docstring(docs, SPEC_NEEDS), parts.preamble(imports), list(model), given,
                          engines, tvm_run(specs, passes), check])
    return MinimalProgram(text, SPEC_NEEDS, WRONG_RESULT, component,
                          ("from_onnx", *(relax_pass_call(p) for p in passes), "tvm.compile"),
                          f"TVM's output {output} on special values equals onnx.reference's and onnxruntime's",
                          len(model))
