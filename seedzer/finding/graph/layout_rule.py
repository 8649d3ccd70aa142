"""Which operator's layout rule ``relax.ConvertLayout`` failed in.

ConvertLayout converts a function binding by binding, asking each operator's registered layout rule
(its ``FRelaxInferLayout`` attribute: ``InferLayoutStack``, ``InferLayoutBinaryEwise``...) which layout its
inputs and output take. A maintainer fixes the rule that is wrong, not the pass, so a failure of the pass
is located the way a maintainer bisects it:

1. the *failing binding*: the shortest prefix of the function (its first ``k`` bindings, the ``k``-th
   returned) that the pass still fails on the same way; its value is the call whose rule failed;
2. the *producer*: when nothing before that binding asks for a layout (no operator the pass's
   ``desired_layouts`` names), every layout should stay the initial one, so a failure that goes away once
   one input of the failing call is made a fresh parameter comes from the rule of the call that made that
   input (it gave a layout no operator asked for: ``stack`` then ``min`` fails in ``min``'s rule because
   ``stack``'s rule is wrong).

Each probe runs the pass in a forked grandchild (a crash of the pass is an observation); the whole
search runs in one forked child of the gate (:func:`locate_forked`). TVM is imported only there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seedzer.execute.forked import SharedProgress, call_forked
from seedzer.finding.forked_check import observe_isolated, silence
from seedzer.finding.lowered_types import operator_call
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.graph.case import WELL_FORMED, GraphCase

CONVERT_LAYOUT = "relax.ConvertLayout"
"""The pass whose failures this module locates."""
LOCATED_SYMPTOMS = (Symptom.EXCEPTION, Symptom.CRASH, Symptom.ILLFORMED)
"""Failures of the pass itself (a wrong result surfaces after the build, where no binding is at fault alone)."""
RULE_ATTRIBUTE = "FRelaxInferLayout"
"""The operator attribute that holds an operator's layout rule."""


@dataclass(frozen=True)
class LayoutCulprit:
    """The operator whose layout rule a ConvertLayout failure is in, and how it was found."""

    operator: str
    """The Relax operator (``relax.stack``)."""
    evidence: str

    @property
    def code(self) -> str:
        """The code at fault: the operator's registered layout rule (``relax.stack.FRelaxInferLayout``)."""
        return f"{self.operator}.{RULE_ATTRIBUTE}"


def failing_step_index(case: GraphCase, observed: Observation) -> int | None:
    """Where in ``case``'s steps the ConvertLayout that failed is (the observation's index when it names that
    pass, else the first ConvertLayout), or None when the case has none."""
    index = observed.step_index
    if index is not None and 0 <= index < len(case.passes) and case.passes[index].name == CONVERT_LAYOUT:
        return index
    return next((i for i, step in enumerate(case.passes) if step.name == CONVERT_LAYOUT), None)


def same_error_judged_invalid(expected: Observation, got: Observation) -> bool:
    """Whether ``got`` is ``expected``'s error judged ``invalid`` by the kernel: a probe runs the pass alone,
    without the model whose static shapes made the campaign's kernel call a ``std::bad_alloc`` TVM's (here it
    says "out of memory ... the input's size"); the same error raised by the same pass is the same failure."""
    error = expected.message.strip()
    return expected.symptom is Symptom.EXCEPTION and got.symptom is Symptom.INVALID and bool(error) \
        and got.pass_name == expected.pass_name and error in got.message


def _bindings(function: Any) -> list[Any]:
    """The function's bindings, in order, over all its blocks."""
    return [binding for block in function.body.blocks for binding in block.bindings]


def _prefix(function: Any, count: int, replace: tuple[int, Any, Any] | None = None) -> Any:
    """``function`` cut after its first ``count`` bindings, returning the last one's value (through an output
    binding when it is a dataflow variable); ``replace`` = ``(index, var, param)`` makes binding ``index`` (from
    0) read a fresh parameter ``param`` where it read ``var``."""
    from tvm import relax

    blocks, params, seen = [], list(function.params), 0
    for block in function.body.blocks:
        if seen >= count:
            break
        kept = list(block.bindings[: count - seen])
        if replace is not None and seen <= replace[0] < seen + len(kept):
            index, var, param = replace
            binding = kept[index - seen]
            kept[index - seen] = relax.VarBinding(binding.var, _substitute(binding.value, var, param))
            params.append(param)
        seen += len(kept)
        result = kept[-1].var
        if isinstance(block, relax.DataflowBlock):
            if isinstance(result, relax.DataflowVar):
                out = relax.Var("probe_output", result.ty)
                kept.append(relax.VarBinding(out, result))
                result = out
            blocks.append(relax.DataflowBlock(kept))
        else:
            blocks.append(relax.BindingBlock(kept))
    body = relax.SeqExpr(blocks, result)
    return relax.Function(params, body, ret_ty=result.ty, is_pure=function.is_pure,
                          attrs=function.attrs)


def _substitute(expr: Any, var: Any, param: Any) -> Any:
    """``expr`` (a call) with ``param`` where its arguments (or a tuple among them) read ``var``."""
    from tvm import relax

    def swap(arg: Any) -> Any:
        if isinstance(arg, relax.Tuple):
            return relax.Tuple([swap(field) for field in arg.fields])
        return param if arg.same_as(var) else arg

    return relax.Call(expr.op, [swap(arg) for arg in expr.args], expr.attrs, expr.ty_args)


def _read_vars(expr: Any) -> list[Any]:
    """The variables a call's arguments read (directly or inside a tuple), in order, once each."""
    from tvm import relax

    found: list[Any] = []

    def visit(arg: Any) -> None:
        if isinstance(arg, relax.Tuple):
            for field in arg.fields:
                visit(field)
        elif isinstance(arg, relax.Var) and not any(arg.same_as(seen) for seen in found):
            found.append(arg)

    for arg in expr.args:
        visit(arg)
    return found


def _op_name(binding: Any) -> str | None:
    """The Relax operator a binding calls, when it calls one that has a layout rule."""
    value = binding.value
    if not operator_call(value):
        return None
    return str(value.op.name) if value.op.get_attr(RULE_ATTRIBUTE) is not None else None


def _probe(job: tuple[Any, Any, Any], progress: SharedProgress) -> Observation:
    """The grandchild: what the pass shows on the probe module (the kernel's own steps and judgement)."""
    silence()
    from seedzer.kernel.graph.observe import apply_pass, well_formed
    from seedzer.kernel.onnx.model import Trace

    module, step, target = job
    trace = Trace(on_stage=lambda stage, name: progress.set(stage.value, name))
    got = trace.call(step.name, apply_pass, module, step, target, stage=Stage.PASS)
    if isinstance(got, Observation):
        return got
    bad = trace.call(step.name + WELL_FORMED, well_formed, got, stage=Stage.PASS)
    if isinstance(bad, Observation):
        return Observation(Symptom.ILLFORMED, Stage.PASS, step.name, bad.message)
    return Observation.ok()


@dataclass
class _Search:
    """The bisection over one function's bindings (in the child of :func:`locate_forked`)."""

    module: Any
    name: str
    step: Any
    target: Any
    expected: Observation
    timeout: float
    matches: Callable[[Observation, Observation], bool]

    def fails(self, function: Any) -> bool:
        """Whether the pass fails the expected way on the module with ``function`` in place of the function."""
        import tvm
        from tvm import relax

        # the probed function alone among the Relax functions: a failure in another one is not its bindings'
        functions = {gv: f for gv, f in self.module.functions.items() if not isinstance(f, relax.Function)}
        functions[self.module.get_global_var(self.name)] = function
        probe = tvm.IRModule(functions, attrs=self.module.attrs)
        got = observe_isolated(_probe, (probe, self.step, self.target), self.timeout,
                               stage=Stage.PASS, step=self.step.name)
        return self.matches(self.expected, got) or same_error_judged_invalid(self.expected, got)

    def first_failing(self, function: Any, count: int) -> int | None:
        """The length of the shortest failing prefix of ``function`` (``count`` bindings), or None."""
        if count == 0 or not self.fails(_prefix(function, count)):
            return None
        low, high = 1, count  # the prefix of ``high`` fails; find the shortest one that does
        while low < high:
            middle = (low + high) // 2
            if self.fails(_prefix(function, middle)):
                high = middle
            else:
                low = middle + 1
        return high


def _locate(case: GraphCase, index: int, expected: Observation, timeout: float) -> LayoutCulprit | None:
    """The child: import the case's model, run its steps before the failing ConvertLayout, then bisect."""
    silence()
    import onnx
    from tvm import relax

    from seedzer.finding.graph.check import case_model, matches
    from seedzer.kernel.graph.feeds import input_specs
    from seedzer.kernel.graph.observe import apply_pass
    from seedzer.kernel.onnx.model import import_model

    model = onnx.load_model_from_string(case_model(case))
    module = import_model(model, input_specs(case, model))
    for step in case.passes[:index]:
        module = apply_pass(module, step, case.target)
    step = case.passes[index]
    desired = set((step.args.get("desired_layouts") or {}).keys())
    for gv, function in module.functions.items():
        if not isinstance(function, relax.Function):
            continue
        search = _Search(module, gv.name_hint, step, case.target, expected, timeout, matches)
        bindings = _bindings(function)
        found = search.first_failing(function, len(bindings))
        if found is None:
            continue
        failing = bindings[found - 1]
        operator = _op_name(failing)
        if operator is None:
            return None  # a tuple, a match_cast, a call without a rule: the pass's own code
        where = f"{gv.name_hint}'s binding {found} of {len(bindings)} ({failing.var.name} = {operator}(...))"
        asked = any(_op_name(b) in desired for b in bindings[: found - 1])
        if not asked:
            producer = _producer(search, function, bindings, found)
            if producer is not None:
                return LayoutCulprit(producer[0], f"{CONVERT_LAYOUT} fails first at {where}, and not once its input "
                                     f"{producer[1]} is a fresh parameter: no operator before it asks for a layout, "
                                     f"so {producer[0]}'s layout rule gave {producer[1]} a layout nothing asked for")
        return LayoutCulprit(operator, f"{CONVERT_LAYOUT} fails first at {where}: {operator}'s layout rule "
                             f"({RULE_ATTRIBUTE}) is the first one that fails")
    return None


def _producer(search: _Search, function: Any, bindings: list[Any], found: int) -> tuple[str, str] | None:
    """The operator (and the variable) whose layout the failure needs: the producer of an input of the failing
    binding without which (that input a fresh parameter) it does not fail, followed back through producers that
    only pass the layout on (``mean`` then ``multiply`` then ``sum``: mean's rule made the layout), up to the
    one whose own inputs, made fresh, leave the failure in place."""
    from tvm import relax

    culprit: tuple[str, str] | None = None
    reader = found - 1
    while True:
        step = None
        for var in _read_vars(bindings[reader].value):
            made = next((i for i, binding in enumerate(bindings[:reader]) if binding.var.same_as(var)), None)
            operator = _op_name(bindings[made]) if made is not None else None
            if operator is None or made is None:
                continue
            param = relax.Var(f"probe_{var.name}", var.ty)
            if not search.fails(_prefix(function, found, replace=(reader, var, param))):
                step = (made, operator, var.name)
                break
        if step is None:
            return culprit
        reader, culprit = step[0], (step[1], step[2])


def locate_forked(case: GraphCase, expected: Observation, timeout: float) -> LayoutCulprit | None:
    """The layout rule a ConvertLayout failure of ``case`` (its minimal case) is in, searched in a forked
    child (each probe ``timeout`` seconds; the search at most 40 of them); None when the failure is not
    ConvertLayout's, or no rule is at fault (a failure on a binding that calls no operator with a rule)."""
    if expected.symptom not in LOCATED_SYMPTOMS or (expected.pass_name or "") != CONVERT_LAYOUT:
        return None
    index = failing_step_index(case, expected)
    if index is None:
        return None
    got = call_forked(_locate, case, index, expected, timeout, timeout=timeout * 40)
    return got.value if got.ok and isinstance(got.value, LayoutCulprit) else None
