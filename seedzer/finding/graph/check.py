"""Checking a graph case the way the graph gate and the reducer do: in a forked child, judged alike.

:func:`observe_forked` runs :func:`seedzer.kernel.graph.observe.observe_graph` on a case in a child forked
from this process (call :func:`preload` first, so that the child inherits TVM instead of importing
it; :func:`seedzer.finding.forked_check.observe_isolated` forks it); the child reports each step it
enters, so a death is a ``crash`` and a timeout a ``hang`` at that step. :func:`matches` judges with
the kernel's own :func:`~seedzer.kernel.graph.observe.same_graph_failure`, so the gate, the reducer and
``repro.py`` agree. This module imports TVM only when those functions run.
"""

from __future__ import annotations

from pathlib import Path

from seedzer.execute.forked import SharedProgress, call_forked
from seedzer.execute.memory import limit_address_space
from seedzer.finding.forked_check import observe_isolated, silence
from seedzer.finding.lowered_types import Retyped
from seedzer.finding.meta import ModelRecord
from seedzer.finding.mirrored import MirroredCall
from seedzer.finding.onnx_types import CHECK_SECONDS, IllTyped
from seedzer.finding.unbuildable import Unbuildable
from seedzer.kernel.common import Observation, Stage
from seedzer.kernel.graph.case import GraphCase


def preload() -> None:
    """Import the graph kernel (TVM, onnx, onnxruntime) here, before children are forked."""
    import seedzer.kernel.graph.observe  # noqa: F401


def _observe(case: GraphCase, progress: SharedProgress) -> Observation:
    """The child: what ``case`` shows."""
    silence()
    from seedzer.kernel.graph.observe import observe_graph
    from seedzer.kernel.onnx.model import Trace

    return observe_graph(case, Trace(on_stage=lambda stage, step: progress.set(stage.value, step)))


def observe_forked(case: GraphCase, timeout: float) -> Observation:
    """What ``case`` shows run alone in a forked child within ``timeout`` seconds."""
    return observe_isolated(_observe, case, timeout, stage=Stage.LOAD, step="import")


def matches(expected: Observation, observed: Observation) -> bool:
    """Whether ``observed`` is the graph failure ``expected`` describes (the kernel's own judgement)."""
    from seedzer.kernel.graph.observe import same_graph_failure

    return same_graph_failure(expected, observed)


def observe_folder(where: str, timeout: float, max_memory: int = 0) -> Observation:
    """What the case of the graph folder ``where`` (a finding, or a sample of a filtered test case)
    shows run once alone in a forked child within ``timeout`` seconds and ``max_memory`` bytes of
    address space (0: unbounded; set in this process, which the caller runs for this job alone)."""
    from seedzer.finding.graph.folder import finding_case

    preload()
    limit_address_space(max_memory)
    return observe_forked(finding_case(Path(where)), timeout)


def write_model_of_folder(where: str) -> ModelRecord | None:
    """In the job's process: write ``model.onnx`` into the graph finding ``where`` (the model its case fails
    on), its record (:func:`seedzer.finding.graph.failing_model.write_failing_model`; imports the kernel)."""
    from seedzer.finding.graph.failing_model import write_failing_model

    return write_failing_model(where)


def case_model(case: GraphCase) -> bytes:
    """In a child: the model ``case`` runs, its model mutations applied."""
    from seedzer.kernel.graph.feeds import case_inputs
    from seedzer.kernel.graph.mutant import apply_model_mutations
    from seedzer.kernel.onnx.model import model_bytes

    data = model_bytes(case)
    if case.model_mutations:
        import onnx

        seed = onnx.load_model_from_string(data)
        data = apply_model_mutations(seed, case.model_mutations, case_inputs(case)).SerializeToString()
    return data


def _ill_typed(case: GraphCase, operator: str) -> object:
    """The child: the model ``case`` runs (its mutations applied) checked for an ill-typed input of ``operator``."""
    silence()
    from seedzer.finding.onnx_types import ill_typed_input

    return ill_typed_input(case_model(case), operator)


def ill_typed_forked(case: GraphCase, operator: str) -> IllTyped | None:
    """:func:`seedzer.finding.onnx_types.ill_typed_input` of the model ``case`` runs, in a forked child (a crash, a
    timeout or an error: None, nothing decided)."""
    got = call_forked(_ill_typed, case, operator, timeout=CHECK_SECONDS)
    return got.value if got.ok and isinstance(got.value, IllTyped) else None


def _retyped(case: GraphCase, output: str | int) -> object:
    """The child: the model ``case`` runs (its mutations applied) checked for a lowering retyping ``output``."""
    silence()
    from seedzer.finding.lowered_types import retyped_output

    return retyped_output(case_model(case), output)


def retyped_forked(case: GraphCase, output: str | int) -> Retyped | None:
    """:func:`seedzer.finding.lowered_types.retyped_output` of the model ``case`` runs, in a forked child (a crash,
    a timeout or an error: None, nothing decided)."""
    got = call_forked(_retyped, case, output, timeout=CHECK_SECONDS)
    return got.value if got.ok and isinstance(got.value, Retyped) else None


def _unbuildable(case: GraphCase, message: str) -> object:
    """The child: the model ``case`` runs (its mutations applied), each operator call built alone."""
    silence()
    from seedzer.finding.unbuildable import unbuildable_operator
    from seedzer.kernel.messages import normalize

    return unbuildable_operator(case_model(case), case.target, normalize(message))


def unbuildable_forked(case: GraphCase, observed: Observation) -> Unbuildable | None:
    """:func:`seedzer.finding.unbuildable.unbuildable_operator` of the model ``case`` runs, for the build failure
    ``observed``, in a forked child (a crash, a timeout or an error: None, nothing decided)."""
    got = call_forked(_unbuildable, case, observed.message, timeout=CHECK_SECONDS)
    return got.value if got.ok and isinstance(got.value, Unbuildable) else None


def _mirrored(case: GraphCase, operator: str) -> object:
    """The child: the model ``case`` runs (its mutations applied), each node of ``operator`` imported alone."""
    silence()
    from seedzer.finding.mirrored import mirrored_call

    return mirrored_call(case_model(case), operator)


def mirrored_forked(case: GraphCase, operator: str) -> MirroredCall | None:
    """:func:`seedzer.finding.mirrored.mirrored_call` of the model ``case`` runs, in a forked child (a crash, a timeout
    or an error: None, nothing decided)."""
    got = call_forked(_mirrored, case, operator, timeout=CHECK_SECONDS)
    return got.value if got.ok and isinstance(got.value, MirroredCall) else None
