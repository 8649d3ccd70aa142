"""The one rule turning a child that ended without its answer into an observation."""

from __future__ import annotations

import signal

from seedzer.execute.death import NOT_A_TVM_BUG, death_observation, describe_exit
from seedzer.execute.records import Death
from seedzer.kernel.common import Stage, Symptom


def test_a_timeout_is_a_hang_whatever_signal_ended_it() -> None:
    obs = death_observation(Stage.RUN, "run", "run stage exceeded 5s", signum=signal.SIGKILL, timed_out=True,
                            seconds=5.5)
    assert (obs.symptom, obs.stage, obs.pass_name, obs.message, obs.seconds) == (
        Symptom.HANG, Stage.RUN, "run", "run stage exceeded 5s", 5.5)


def test_a_signal_is_a_crash_with_its_signal() -> None:
    obs = death_observation(Stage.BUILD, "FakePass", describe_exit(-signal.SIGSEGV), signum=signal.SIGSEGV)
    assert (obs.symptom, obs.pass_name, obs.signal, obs.message) == (
        Symptom.CRASH, "FakePass", signal.SIGSEGV, "killed by signal SIGSEGV")


def test_a_sigkill_from_outside_is_never_a_tvm_bug_unless_the_caller_says_so() -> None:
    how = describe_exit(-signal.SIGKILL)
    obs = death_observation(Stage.LOAD, "import", how, signum=signal.SIGKILL)
    assert obs.symptom is Symptom.INVALID and obs.message == f"{how} ({NOT_A_TVM_BUG})"
    kept = death_observation(Stage.PASS, "p", how, signum=signal.SIGKILL, sigkill_crashes=True)
    assert kept.symptom is Symptom.CRASH and kept.signal == signal.SIGKILL


def test_an_exit_is_invalid_or_a_crash_without_signal() -> None:
    obs = death_observation(Stage.PASS, None, describe_exit(1), failed="the gate's child")
    assert obs.symptom is Symptom.INVALID and obs.message == "the gate's child failed: exited with status 1"
    crash = death_observation(Stage.LOAD, None, describe_exit(1), exit_crashes=True)
    assert crash.symptom is Symptom.CRASH and crash.signal is None and crash.message == "exited with status 1"


def test_a_workers_death_is_a_test_case_observation_only_for_crashes_and_hangs() -> None:
    tail = "!!!!!!! Segfault encountered !!!!!!!\n  File \"x\", line 0, in tvm::tir::Foo()\n"
    crash = Death("signal", Stage.BUILD, "P", "killed by signal SIGSEGV", signal.SIGSEGV, log_tail=tail).observation()
    assert crash is not None and crash.symptom is Symptom.CRASH and crash.message.endswith("at tvm::tir::Foo()")
    hang = Death("timeout", Stage.RUN, "run", "run stage exceeded 1s", signal.SIGKILL, log_tail=tail,
                 seconds=1.2).observation()
    assert hang is not None and hang.symptom is Symptom.HANG and hang.message == "run stage exceeded 1s"
    assert hang.seconds == 1.2
    assert Death("killed", Stage.RUN, None, "killed by signal SIGKILL", signal.SIGKILL).observation() is None
    assert Death("exit", Stage.MUTATE, None, "exited with status 1", exitcode=1).observation() is None
