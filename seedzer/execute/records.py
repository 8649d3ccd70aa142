"""Typed records that cross the worker pipe and the executor's interface.

Tasks go from the campaign to a worker, results and deaths come back. Everything here is plain,
picklable and TVM-free: the campaign process uses these types without importing TVM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from seedzer.execute.death import death_observation
from seedzer.kernel.common import Observation, Stage, Symptom


@dataclass(frozen=True)
class FuzzTask:
    """Mutate a corpus entry of ``level`` (script, passes JSON, unproductive mutations so far), then run it.
    ``triggered``: the passes the entry's own run triggered (a pass-sequence mutator prefers others);
    ``mutation_factors``: how the allocation weighs its level's mutations now."""

    tc_id: int
    level: str
    script: str
    passes: str
    failures: int
    other_passes: str | None
    rng_seed: int
    triggered: tuple[str, ...] = ()
    mutation_factors: tuple[tuple[str, float], ...] = ()
    """Per mutation of the level: the factor its configured weight is multiplied by in this task's draw
    (the campaign's allocation; none: the configured weights)."""


@dataclass(frozen=True)
class ExecTask:
    """Run a test case of ``level`` exactly as given (an initial seed, or a corpus entry to re-check)."""

    tc_id: int
    level: str
    script: str
    passes: str


Task = FuzzTask | ExecTask


@dataclass(frozen=True)
class Announcement:
    """A worker's test case, sent before it runs so that a crash still leaves its reproducer.

    ``case`` is the kernel case the worker runs (a finding is filed from it, never planned again by
    the campaign); a script it shares with ``script`` crosses the pipe once (pickle keeps one copy of
    one object).
    """

    tc_id: int
    script: str
    passes: str
    mutators: tuple[str, ...]
    case: Any = None


@dataclass
class ExecResult:
    """What one execution gave: the kernel's observation and the worker's by-products.

    ``unchanged`` are indices into the pass sequence of passes that changed nothing (or had no
    contract for the target): a stored sequence goes without them. ``passes_ran`` names every pass
    the test case ran (fuzzed and TVM's own pipeline), ``passes_triggered`` those of them that
    changed the IR (:mod:`seedzer.coverage.triggers`; the campaign adds them to ``features`` as
    ``triggered/<level>/<pass>``).
    """

    observation: Observation
    features: list[str] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    invalid_mutants: int = 0
    passes_ran: list[str] = field(default_factory=list)
    passes_triggered: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Result:
    """A worker's result message."""

    tc_id: int
    result: ExecResult


@dataclass(frozen=True)
class Ready:
    """A worker finished setting up and waits for tasks."""


@dataclass(frozen=True)
class Fatal:
    """A worker cannot set up (a reason restarting cannot change): the campaign stops with it."""

    message: str


@dataclass(frozen=True)
class Stop:
    """Ask a worker to exit."""


@dataclass
class TestCaseInfo:
    """What the campaign knows about the test case a worker is running."""

    __test__ = False  # not a pytest class

    tc_id: int
    task: str  # "fuzz" | "exec": a mutant of the fuzzer, or an entry run as it is
    parent: str | None
    level: str
    script: str = ""
    passes: str = "[]"
    mutators: list[str] = field(default_factory=list)
    announced: bool = False
    case: Any = None
    """The announced kernel case (see :meth:`ran`)."""
    limits: dict[Stage, float] | None = None
    """Stage time limits of this test case below the campaign's (relative to its parent's cost): a
    stage stopped there is a slow test case, not a hang (None: the campaign's limits)."""

    def ran(self) -> Any:
        """The kernel case the worker announced it runs (None before the announcement)."""
        return self.case


@dataclass(frozen=True)
class Death:
    """A worker process that ended while the campaign did not ask it to.

    ``cause``: ``signal`` (died by a signal it raised or received), ``killed`` (SIGKILL from outside:
    the OOM killer or an operator, never a TVM bug), ``timeout`` (the campaign killed it because a
    stage outlived its limit), ``slow`` (a stage outlived the test case's own, relative limit, below
    the campaign's: counted, never a finding), ``exit`` (it exited by itself). Memory figures are the worker's last
    sampled resident size and the machine's available memory when the death was seen.
    """

    cause: str
    stage: Stage
    pass_name: str | None
    message: str
    signal: int | None = None
    exitcode: int | None = None
    rss_mb: float | None = None
    available_mb: float | None = None
    log_tail: str = ""
    seconds: float | None = None
    during_setup: bool = False

    def observation(self) -> Observation | None:
        """The death as a test-case observation: a crash or a hang (None for SIGKILL, exits and slow
        test cases)."""
        if self.cause == "slow":
            return None
        timed_out = self.cause == "timeout"
        how = self.message if timed_out else self.message + segfault_frames(self.log_tail)
        observation = death_observation(self.stage, self.pass_name, how, signum=self.signal, timed_out=timed_out,
                                        seconds=self.seconds)
        return observation if observation.symptom in (Symptom.CRASH, Symptom.HANG) else None


def segfault_frames(log_tail: str) -> str:
    """TVM's crash report (the C++ frames it prints on a segfault) from a worker's log tail."""
    marker = log_tail.rfind("Segfault encountered")
    if marker < 0:
        return ""
    lines = [ln.strip() for ln in log_tail[marker:].splitlines()[1:] if " in " in ln]
    frames = [ln.split(" in ", 1)[1] for ln in lines if "tvm::" in ln][:8]
    return ("\n" + "\n".join(f"  at {f}" for f in frames)) if frames else ""


@dataclass
class WorkerEvent:
    """Something a worker did: announced a test case, returned a result, or died."""

    what: str  # "tc" | "result" | "death"
    worker: int
    tc: TestCaseInfo | None
    result: ExecResult | None = None
    death: Death | None = None
    dropped: tuple[TestCaseInfo, ...] = ()
    """With a death: the tasks that waited in the dead worker's pipe, never started."""
