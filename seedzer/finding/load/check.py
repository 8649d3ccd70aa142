"""Checking a loader case the way the load gate and the reducer do: in a forked child, judged alike.

:func:`observe_forked` runs :func:`seedzer.kernel.load.observe.observe_all` on a case in a child forked
from this process (call :func:`preload` first, so that the child inherits TVM instead of importing
it); the child reports the step it is in through shared memory, so a death is a ``crash`` and a
timeout a ``hang`` at that step, as the campaign's loading attempts report them. A SIGKILL is never
a TVM bug (the OOM killer or an operator): it is ``invalid``. :func:`matching` picks the
observation that is a finding's failure with the kernel's own
:func:`~seedzer.kernel.load.observe.same_load_failure`, so the gate, the reducer and ``repro.py`` agree.
This module imports TVM only when those functions run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from seedzer.execute.forked import SharedProgress
from seedzer.finding.forked_check import observe_isolated, silence
from seedzer.kernel.common import Observation, Stage

if TYPE_CHECKING:
    from seedzer.kernel.load.observe import LoadCase


def preload() -> None:
    """Import the loader kernel (TVM, onnx, onnxruntime) here, before children are forked."""
    import seedzer.kernel.load.observe  # noqa: F401


def _observe(case: LoadCase, progress: SharedProgress) -> list[Observation]:
    """The child: every failure of ``case``."""
    silence()
    from seedzer.kernel.load.observe import observe_all
    from seedzer.kernel.onnx.model import Trace

    return observe_all(case, trace=Trace(on_step=lambda step: progress.set(Stage.LOAD.value, step)))


def observe_forked(case: LoadCase, timeout: float) -> list[Observation]:
    """Every failure of ``case`` run alone in a forked child within ``timeout`` seconds."""
    got = observe_isolated(_observe, case, timeout, stage=Stage.LOAD, step="import")
    return [got] if isinstance(got, Observation) else list(got)


def matching(expected: Observation, observed: Sequence[Observation]) -> Observation | None:
    """The first observation that is the failure ``expected`` describes, or None."""
    from seedzer.kernel.load.observe import same_load_failure

    return next((o for o in observed if same_load_failure(expected, o)), None)
