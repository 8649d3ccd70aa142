"""How a child that ended without its answer is observed: the one rule for deaths and timeouts.

Every place that runs TVM in a child (the campaign's workers, isolated calls, the gates' forked
tests) turns the way the child ended into an :class:`~seedzer.kernel.common.Observation` with
:func:`death_observation`: a timeout is a ``hang``, a signal the child raised is a ``crash``, and a
SIGKILL from outside (the OOM killer or an operator) or an exit is never a TVM bug (``invalid``).
TVM-free.
"""

from __future__ import annotations

import signal

from seedzer.kernel.common import Observation, Stage, Symptom

NOT_A_TVM_BUG = "out of memory or an operator: not a TVM bug"
"""Why a SIGKILL from outside is ``invalid``."""


def describe_exit(exitcode: int | None) -> str:
    """Human-readable cause of a child's death from its exit code (negative = signal)."""
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def death_observation(stage: Stage | None, step: str | None, how: str, *, signum: int | None = None,
                      timed_out: bool = False, seconds: float | None = None, sigkill_crashes: bool = False,
                      exit_crashes: bool = False, failed: str = "the child") -> Observation:
    """A child that ended without its answer, at ``stage`` and ``step`` (the last it reported).

    ``how``: one line on how it ended (for a timeout: what ran over its limit). In this order:

    * ``timed_out`` (killed for outliving its limit): a ``hang`` taking ``seconds``;
    * killed by SIGKILL from outside: ``invalid`` (:data:`NOT_A_TVM_BUG`), unless ``sigkill_crashes``
      (a caller that cannot tell an outside SIGKILL from its own, and leaves the judgement to whoever
      compares the crash with the one expected);
    * killed by any other signal ``signum``: a ``crash`` with that signal;
    * ended otherwise (an exit, an exception's text, nothing sent): ``invalid`` (``<failed> failed:
      <how>``), unless ``exit_crashes`` (a child that ended without a word: a ``crash`` without a signal).
    """
    if timed_out:
        return Observation(Symptom.HANG, stage, step, how, seconds=seconds)
    if signum == signal.SIGKILL and not sigkill_crashes:
        return Observation(Symptom.INVALID, stage, step, f"{how} ({NOT_A_TVM_BUG})")
    if signum is not None:
        return Observation(Symptom.CRASH, stage, step, how, signal=signum)
    if exit_crashes:
        return Observation(Symptom.CRASH, stage, step, how)
    return Observation(Symptom.INVALID, stage, step, f"{failed} failed: {how}")
