"""The tester the script kinds' gates and reducers share (``tir``, ``sched``): runs a kernel case in a
child forked from the tester's process (which holds TVM, the parsed functions and the builds already
made); a death or a timeout becomes a crash or hang observation.

A kind's tester says how its child runs a case and what it sends back besides the observation (the
builds it made, :meth:`ScriptTester.run`), how the tester keeps those for later children
(:meth:`ScriptTester.learn`), and how a timeout reads (:meth:`ScriptTester.slow`). The rest is one
piece: an unparsable script is an invalid case, never a child; a death is judged by
:func:`~seedzer.execute.death.death_observation` (a SIGKILL stays a crash here: the gate compares it
with the crash the campaign saw).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, Protocol, TypeVar

from seedzer.execute.death import death_observation
from seedzer.execute.forked import Forked, SharedProgress
from seedzer.kernel.common import Observation, Stage, Symptom


class ScriptCase(Protocol):
    """What the tester reads of a case: its TVMScript text."""

    @property
    def script(self) -> str: ...


CaseT = TypeVar("CaseT", bound=ScriptCase)


class ScriptTester(ABC, Generic[CaseT]):
    """Runs cases of one script kind in forked children (see the module docstring)."""

    __test__ = False  # not a pytest class

    def __init__(self, builder: Any) -> None:
        self.builder = builder
        """The kernel's builder (it parses scripts); children inherit it with what it knows."""
        self.progress = SharedProgress()
        self.tests = 0

    def observe(self, case: CaseT, timeout: float) -> Observation:
        """What ``case`` shows when run alone within ``timeout`` seconds."""
        self.tests += 1
        try:
            self.builder.parse(case.script)
        except Exception as exc:  # unparsable script: the child would fail the same way
            return Observation(Symptom.INVALID, Stage.MUTATE, None, f"unusable test case: {exc}")
        res, report = self.run(case, timeout)
        stage = Stage(res.stage) if res.stage in {s.value for s in Stage} else None
        if res.ok:
            observation, learned = res.value
            self.learn(learned)
            return observation  # type: ignore[no-any-return]
        how = self.slow(stage, timeout) if res.timed_out else res.describe() + report
        # a SIGKILL stays a crash here: the gate compares it with the crash the campaign saw
        return death_observation(stage, res.step, how, signum=res.signal, timed_out=res.timed_out,
                                 seconds=res.seconds, sigkill_crashes=True, failed="the gate's child")

    @abstractmethod
    def run(self, case: CaseT, timeout: float) -> tuple[Forked, str]:
        """The child's run of ``case`` (its value, when it returns: ``(observation, builds it made)``) and
        what its error output tells of a crash, to follow its description ("" for nothing)."""

    @abstractmethod
    def learn(self, learned: Any) -> None:
        """Keep the builds a child made (``learned``) for the children forked after it."""

    def slow(self, stage: Stage | None, timeout: float) -> str:
        """How a child that ran over ``timeout`` seconds in ``stage`` is described."""
        return f"{stage.value if stage else 'start'} stage ran over {timeout:.0f}s alone"
