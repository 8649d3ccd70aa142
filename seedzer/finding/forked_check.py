"""Running one check of a kind's gate or reducer in a forked child: a segfault or a hang of TVM is
an observation, never the end of the gate's (or the reducer's) process.

:func:`observe_isolated` calls ``observe(case, progress)`` in a child forked from this process
(:func:`seedzer.execute.forked.call_forked`: TVM already imported here is inherited, not imported
again); the child reports the stage and step it is in through ``progress``, so a death is a
``crash`` and a timeout a ``hang`` at that step (:func:`seedzer.execute.death.death_observation`; a
SIGKILL is never a TVM bug: ``invalid``). Generic: every kind's check module wraps it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from seedzer.execute.death import death_observation
from seedzer.execute.forked import SharedProgress, call_forked
from seedzer.kernel.common import Observation, Stage

T = TypeVar("T")


def silence() -> None:
    """Send this (child) process's stdout/stderr (TVM's and the importer's chatter) to /dev/null."""
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _stage(name: str | None, default: Stage) -> Stage:
    try:
        return Stage(name) if name else default
    except ValueError:
        return default


def observe_isolated(observe: Callable[[Any, SharedProgress], T], case: Any, timeout: float, *, stage: Stage,
                     step: str) -> T | Observation:
    """``observe(case, progress)`` run in a forked child within ``timeout`` seconds: its value, or the
    :class:`Observation` of how the child ended (at the stage and step it last reported through
    ``progress``, else ``stage`` and ``step``)."""
    progress = SharedProgress()
    res = call_forked(observe, case, progress, timeout=timeout, progress=progress)
    if res.ok:
        value: T = res.value
        return value
    where = res.step or step
    how = f"{where} ran over {timeout:.0f}s alone" if res.timed_out else res.describe()
    return death_observation(_stage(res.stage, stage), where, how, signum=res.signal, timed_out=res.timed_out,
                             seconds=res.seconds, failed="the check's child")
