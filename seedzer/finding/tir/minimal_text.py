"""The text of a TIR finding's plain reproducer (``minimal.py``): a PrimFunc in TVMScript, then either the
minimal pass list and the check of its error (a pass failure), or TVM's default build against the same
build with the culprit passes turned off on inputs from a fixed seed (a wrong result). TVM-free: the
search that decides what goes in is :mod:`seedzer.finding.tir.minimal_repro`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.primfunc import Param, function_lines, imports, input_lines, target_text
from seedzer.finding.minimal.program import PASS_FAILURE, WRONG_RESULT, MinimalProgram
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.tir.case import Step

TIR_NEEDS = ("apache-tvm", "numpy")
"""What a TIR plain reproducer needs from PyPI."""
SWITCH_OFF: dict[str, dict[str, Any]] = {"tirx.VectorizeLoop": {"config": {"tirx.disable_vectorize": True}}}
"""How TVM's default pipeline runs without a pass, where ``disabled_pass`` does not do it (the pipeline
needs VectorizeLoop to lower vectorized loops; its config turns vectorization off instead)."""


def pass_call(step: Step) -> str:
    """``tvm.<namespace>.transform.<Pass>(<args>)`` of a step (target arguments as ``tvm.target.Target``)."""
    module, function = step.name.split(".", 1)
    args = ", ".join(f"{k}=tvm.target.Target({v!r})" if k == "target" and isinstance(v, dict) else f"{k}={v!r}"
                     for k, v in step.args.items())
    return f"tvm.{module}.transform.{function}({args})"


def pass_lines(steps: Sequence[Step]) -> list[str]:
    """The steps applied one by one, each under ``PassContext(opt_level=3)`` with its config (consecutive
    steps with one config share the context)."""
    out: list[str] = []
    config: dict[str, Any] | None = None
    for step in steps:
        if not out or step.config != config:
            config = step.config
            out.append("with tvm.transform.PassContext(opt_level=3" + (f", config={config!r}" if config else "") + "):")
        out.append(f"    mod = {pass_call(step)}(mod)")
    return out


def pass_failure(docs: Docs, script: str, steps: Sequence[Step], bind: str | None, symptom: str,
                 mark: str) -> MinimalProgram:
    """A pass failure: the PrimFunc, ``bind`` (a target, as :func:`target_text` writes it, bound first as
    ``tvm.compile`` does; None: not needed), the steps, then the check (``symptom`` crash: a death by a
    signal; illformed: TIR's verifier after the last step; else the error whose text holds ``mark``)."""
    function = function_lines(script)
    setup = ['mod = tvm.IRModule({"main": main})']
    if bind is not None:
        setup += [f"target = {bind}", "mod = tvm.tirx.transform.BindTarget(target.with_host(target))(mod)"]
    body = pass_lines(steps)
    gone = "the passes ran without the error"
    if symptom == "illformed":
        body.append('tvm.s_tir.analysis.verify_well_formed(mod["main"])')
        gone = "the passes left well-formed IR"
    check = parts.crash_check(body, "the passes ran to the end") if symptom == "crash" else \
        parts.error_check(body, mark, gone)
    text = parts.program([parts.docstring(docs, TIR_NEEDS),
                          parts.preamble(imports(script)), function, setup, check])
    what = ("dies by a signal" if symptom == "crash" else "leaves IR TIR's verifier rejects" if symptom == "illformed"
            else f"raises an error containing {mark!r}")
    return MinimalProgram(text, TIR_NEEDS, PASS_FAILURE, steps[-1].name, tuple(pass_call(s) for s in steps),
                          f"the pass list {what}", len(function))


def build_failure(docs: Docs, script: str, steps: Sequence[Step], target: str, symptom: str,
                  mark: str) -> MinimalProgram:
    """A failure of ``tvm.compile`` (its code generation or a pass of its pipeline): the PrimFunc, the
    ``steps`` applied first (the fuzzed passes the failure needs; none: the default pipeline alone),
    then ``tvm.compile`` for ``target`` (as :func:`target_text` writes it), and the check (``symptom``
    crash: a death by a signal; else the error whose text holds ``mark``)."""
    function = function_lines(script)
    setup = ['mod = tvm.IRModule({"main": main})']
    body = [*pass_lines(steps), f"tvm.compile(mod, target={target})"]
    check = parts.crash_check(body, "tvm.compile built the module") if symptom == "crash" else \
        parts.error_check(body, mark, "tvm.compile built the module without the error")
    text = parts.program([parts.docstring(docs, TIR_NEEDS), parts.preamble(imports(script)), function, setup, check])
    what = "dies by a signal" if symptom == "crash" else f"raises an error containing {mark!r}"
    return MinimalProgram(text, TIR_NEEDS, PASS_FAILURE, steps[-1].name if steps else "tvm.compile",
                          (*(pass_call(s) for s in steps), f"tvm.compile(target={target})"),
                          f"tvm.compile {what}", len(function))


def switches(culprits: Sequence[str]) -> dict[str, Any]:
    """The ``PassContext`` arguments that run TVM's default pipeline without the ``culprits``."""
    config: dict[str, Any] = {}
    disabled: list[str] = []
    for name in culprits:
        switch = SWITCH_OFF.get(name)
        if switch is None:
            disabled.append(name)
        else:
            config.update(switch["config"])
    out: dict[str, Any] = {}
    if config:
        out["config"] = config
    if disabled:
        out["disabled_pass"] = disabled
    return out


def present_checks(disabled: Sequence[str]) -> list[str]:
    """A line per pass turned off by name asserting this TVM has it under that name: ``disabled_pass``
    ignores a name it does not know, so on a release without the pass (or with it renamed) both builds
    would be the same and agree, a false 'fixed'; the assertion, outside the check, exits 3 there instead
    (cannot run here)."""
    out = []
    for name in disabled:
        module, function = name.split(".", 1)
        out.append(f"assert tvm.{module}.transform.{function}().info.name == {name!r}  # else: cannot run here")
    return out


def wrong_result(docs: Docs, script: str, params: Sequence[Param], seed: int, culprits: Sequence[str],
                 target: dict[str, Any] | str, tolerances: tuple[float, float]) -> MinimalProgram:
    """A wrong result: the PrimFunc built by ``tvm.compile`` (TVM's default pipeline) and by the same
    pipeline without the ``culprits`` (the reference), run on the same inputs, compared."""
    function = function_lines(script)
    off = switches(culprits)
    run = ["def run(**switches):  # main built by tvm.compile under PassContext(opt_level=3, **switches), run",
           "    with tvm.transform.PassContext(opt_level=3, **switches):",
           f'        lib = tvm.compile(tvm.IRModule({{"main": main}}), target={target_text(target)})',
           "    args = [tvm.runtime.tensor(a.copy()) for a in inputs]",
           '    lib["main"](*args)',
           "    return [a.numpy() for a in args]"]
    calls = [*present_checks(off.get("disabled_pass", ())),
             f"expected = run({', '.join(f'{k}={v!r}' for k, v in off.items())})  # without {' + '.join(culprits)}",
             "actual = run()  # TVM's default pipeline"]
    check = parts.outputs_check("expected", "actual", tolerances[0], tolerances[1], "both builds agree")
    text = parts.program([parts.docstring(docs, TIR_NEEDS),
                          parts.preamble(imports(script, numpy=True)), function, run,
                          input_lines(params, seed) + calls, check])
    return MinimalProgram(text, TIR_NEEDS, WRONG_RESULT, " + ".join(culprits), ("tvm.compile (default pipeline)",),
                          f"tvm.compile's outputs equal those of the same pipeline without {' + '.join(culprits)}",
                          len(function))
