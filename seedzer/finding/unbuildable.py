"""The Relax operator whose lowering does not build: the code at fault of a build failure no frame names.

A model that imports but fails ``tvm.compile`` inside the code generator (LLVM's ``CreateMul`` given a bool
multiplication) names no Python frame of the code that made the program: the TIR came from an operator's
legalization (TOPI), which ran long before. Filed by default under the converter of the operator the model
mutations inserted, which only emitted a well-typed Relax call (``R.scatter_nd(.., reduction="mul")`` on bool).
:func:`unbuildable_operator` imports the model and builds each binding's Relax operator call alone
(``relax.LegalizeOps`` then ``tvm.compile`` on a module of that call), in program order: the first whose
build fails with the same message is the operator whose lowering is at fault
(:func:`seedzer.finding.component.legalization` names its rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from seedzer.finding.lowered_types import bindings_of, legalized_alone


@dataclass(frozen=True)
class Unbuildable:
    """The binding ``value`` calling the Relax operator ``op`` whose call alone fails to build with ``message``."""

    op: str
    value: str
    message: str


def unbuildable_operator(data: bytes, target: str, headline: str) -> Unbuildable | None:
    """The first binding of the model ``data``'s main function (program order) whose Relax operator call alone,
    legalized and built for ``target``, fails with the normalized ``headline`` (see the module docstring); None
    when none does (a call whose legalization fails is not judged here). ``headline``: the failure's message,
    normalized (:func:`seedzer.kernel.messages.normalize`). Imports TVM: call it in a forked child."""
    import onnx
    import tvm
    from tvm.relax.frontend.onnx import from_onnx

    from seedzer.kernel.common import error_text
    from seedzer.kernel.messages import normalize
    from seedzer.kernel.onnx.model import make_target

    module = from_onnx(onnx.load_model_from_string(data), keep_params_in_input=False)
    for binding, lowered in legalized_alone(bindings_of(module["main"])):
        try:
            tvm.compile(lowered, target=make_target(target))
        except Exception as exc:  # the build's own failure, compared by its normalized key line
            if normalize(error_text(exc)) == headline:
                return Unbuildable(binding.value.op.name, binding.var.name, error_text(exc).splitlines()[0][:300])
    return None
