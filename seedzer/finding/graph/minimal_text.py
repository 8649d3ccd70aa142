"""The text of a graph finding's plain reproducer whose program is a Relax module: the module a failing pass
receives with the minimal pass list and the check of its failure, or a module built with and without the
culprit passes and run on inputs from a fixed seed. TVM-free (the module's code comes as
:class:`ModuleText`, made by :mod:`seedzer.finding.graph.minimal_module`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.onnx_forms import Spec, input_lines, relax_pass_call
from seedzer.finding.minimal.program import PASS_FAILURE, WRONG_RESULT, MinimalProgram
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.graph.case import GraphPass

RELAX_NEEDS = ("apache-tvm", "numpy")
"""What a reproducer of a printed Relax module needs from PyPI."""


@dataclass(frozen=True)
class ModuleText:
    """A module as code: the lines defining its constants, the class's lines, and whether it needs numpy
    (constants) and ``tirx`` (PrimFuncs)."""

    constants: tuple[str, ...]
    module: tuple[str, ...]
    numpy: bool
    tirx: bool

    def imports(self, numpy: bool = False) -> list[str]:
        """The import lines the text needs (numpy also when the rest of the program uses it)."""
        out = ["import numpy as np"] if self.numpy or numpy else []
        out += ["import tvm", "from tvm import relax", "from tvm.script import ir as I",
                "from tvm.script import relax as R"]
        if self.tirx:
            out.append("from tvm.script import tirx as T")
        return out


def pass_call(step: GraphPass) -> str:
    """``relax.transform.<Pass>(<args>)`` of a Relax step."""
    return relax_pass_call(step)


def _applied(steps: Sequence[GraphPass], target: str | None, first: str = "Module") -> list[str]:
    calls = [f"mod = {pass_call(s)}({first if i == 0 else 'mod'})" for i, s in enumerate(steps)]
    return [f"with tvm.target.Target({target!r}):", *parts.indent(calls)] if target else calls


def pass_failure(docs: Docs, module: ModuleText, steps: Sequence[GraphPass], target: str | None, symptom: str,
                 mark: str) -> MinimalProgram:
    """The module, then ``steps`` (under ``target`` when the passes need one, as ``tvm.compile`` runs
    them), then the check: a death by a signal (``crash``), ``relax.analysis.well_formed`` after the last
    step (``illformed``), else an error holding ``mark``."""
    body = _applied(steps, target)
    gone = "the passes ran without the error"
    if symptom == "illformed":
        body += ["if not relax.analysis.well_formed(mod):", '    raise ValueError("ill-formed Relax IR")']
        gone = "the passes left well-formed IR"
    check = parts.crash_check(body, "the passes ran to the end") if symptom == "crash" else \
        parts.error_check(body, mark, gone)
    text = parts.program([parts.docstring(docs, RELAX_NEEDS),
                          parts.preamble(module.imports()), list(module.constants), list(module.module), check])
    what = ("dies by a signal" if symptom == "crash" else "leaves ill-formed Relax IR" if symptom == "illformed"
            else f"raises an error containing {mark!r}")
    return MinimalProgram(text, RELAX_NEEDS, PASS_FAILURE, steps[-1].name, tuple(pass_call(s) for s in steps),
                          f"the pass list {what}", len(module.module))


def wrong_result(docs: Docs, module: ModuleText, steps: Sequence[GraphPass], target: str, specs: Sequence[Spec],
                 seed: int, tolerances: tuple[float, float]) -> MinimalProgram:
    """The module built by ``tvm.compile`` alone (TVM's default pipeline: the reference) and after
    ``steps``, both run on the Relax VM on the same inputs, compared."""
    names = [n for n, _, _ in specs]
    run = ["def run(mod):  # built by tvm.compile, run on the Relax VM: the outputs as numpy arrays",
           f"    vm = relax.VirtualMachine(tvm.compile(mod, target={target!r}), tvm.cpu())",
           f"    out = vm['main'](*[tvm.runtime.tensor(inputs[name]) for name in {names!r}])",
           "    flat = lambda v: [v.numpy()] if hasattr(v, 'numpy') else [a for x in v for a in flat(x)]",
           "    return flat(out)"]
    calls = ["expected = run(Module)  # TVM's default pipeline alone", *_applied(steps, target),
             f"actual = run(mod)  # after {' + '.join(s.name for s in steps)}"]
    check = parts.outputs_check("expected", "actual", tolerances[0], tolerances[1], "both builds agree")
    text = parts.program([parts.docstring(docs, RELAX_NEEDS),
                          parts.preamble(module.imports(numpy=True)), list(module.constants), list(module.module),
                          run, input_lines(specs, seed), calls, check])
    return MinimalProgram(text, RELAX_NEEDS, WRONG_RESULT, " + ".join(s.name for s in steps),
                          tuple(pass_call(s) for s in steps),
                          "the module's outputs are the same with and without the passes", len(module.module))
