"""The text of a plain reproducer whose program is an ONNX model built in code: TVM's importer (or the
build after it) failing on it, or TVM's outputs against onnxruntime's on inputs from a fixed seed.
TVM-free rendering (the model's code is :func:`seedzer.finding.minimal.onnx_code.model_code`)."""

from __future__ import annotations

from collections.abc import Sequence

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.onnx_code import IMPORTS
from seedzer.finding.minimal.program import IMPORTER, WRONG_RESULT, MinimalProgram
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.graph.case import GraphPass

ONNX_NEEDS = ("apache-tvm", "numpy", "onnx")
"""What an importer reproducer needs from PyPI."""
ORT_NEEDS = ("apache-tvm", "numpy", "onnx", "onnxruntime")
"""What a reproducer comparing with onnxruntime needs."""
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
