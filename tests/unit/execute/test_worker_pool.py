"""The worker pool with the cheap fake worker: announcements, results, crashes, hangs, restarts."""

import os
import signal
import time

import pytest

from seedzer.execute.fake_worker import fake_worker_main
from seedzer.execute.records import ExecTask, TestCaseInfo, WorkerEvent
from seedzer.execute.worker_pool import WorkerHandle, WorkerPool
from seedzer.kernel.common import Stage, Symptom
from seedzer.oracles import judge, make_oracles

TIMEOUTS = {s: 30.0 for s in Stage}


def _collect(pool: WorkerPool, until: str, timeout: float = 30.0) -> list[WorkerEvent]:
    out: list[WorkerEvent] = []
    end = time.time() + timeout
    while time.time() < end:
        out.extend(pool.poll(0.05))
        if any(e.what == until for e in out):
            return out
    raise AssertionError(f"no {until} event; got {[e.what for e in out]}")


def _idle(pool: WorkerPool, timeout: float = 30.0) -> WorkerHandle:
    """The first worker ready for a task (a worker announces itself once set up)."""
    end = time.time() + timeout
    while time.time() < end:
        ready = list(pool.idle())
        if ready:
            return ready[0]
        pool.poll(0.05)
    raise AssertionError("no worker became ready")


@pytest.fixture
def pool():
    p = WorkerPool(1, 50, dict(TIMEOUTS), target=fake_worker_main)
    yield p
    p.close()


def test_exec_result_roundtrip(pool: WorkerPool) -> None:
    w = _idle(pool)
    w.submit(ExecTask(1, "tir", "a\nb", "[]"), TestCaseInfo(1, "exec", "seed", "tir"))
    events = _collect(pool, "result")
    assert [e.what for e in events] == ["tc", "result"]
    assert events[1].result is not None and events[1].result.features == ["line:a", "line:b"]
    assert _idle(pool) is w


def test_a_worker_is_given_its_next_task_while_it_runs_one(pool: WorkerPool) -> None:
    """One task may wait in a worker's pipe behind the running one; answers come in order."""
    w = _idle(pool)
    w.submit(ExecTask(1, "tir", "a", "[]"), TestCaseInfo(1, "exec", "seed", "tir"))
    assert list(pool.idle()) == [w]  # room for one task behind it
    w.submit(ExecTask(2, "tir", "b", "[]"), TestCaseInfo(2, "exec", "seed", "tir"))
    assert list(pool.idle()) == []
    events = _collect(pool, "result")
    while sum(e.what == "result" for e in events) < 2:
        events.extend(_collect(pool, "result"))
    assert [(e.what, e.tc.tc_id if e.tc else None) for e in events] == [
        ("tc", 1), ("result", 1), ("tc", 2), ("result", 2)]
    assert _idle(pool) is w and w.current is None and not w.queued


def test_a_death_reports_the_task_that_waited_behind(pool: WorkerPool) -> None:
    w = _idle(pool)
    w.submit(ExecTask(7, "tir", "CRASH", "[]"), TestCaseInfo(7, "exec", "seed", "tir"))
    w.submit(ExecTask(8, "tir", "ok", "[]"), TestCaseInfo(8, "exec", "other", "tir"))
    death = next(e for e in _collect(pool, "death") if e.what == "death")
    assert death.tc is not None and death.tc.tc_id == 7
    assert [t.tc_id for t in death.dropped] == [8]  # never started: the campaign decides what to do with it


def test_segfault_is_crash_with_stage_and_pass_then_restart(pool: WorkerPool) -> None:
    w = _idle(pool)
    w.submit(ExecTask(7, "tir", "CRASH", "[]"), TestCaseInfo(7, "exec", "seed", "tir"))
    death = next(e for e in _collect(pool, "death") if e.what == "death")
    assert death.tc is not None and death.tc.announced and death.tc.script == "CRASH"
    assert death.death is not None and death.death.cause == "signal"
    obs = death.death.observation()
    assert obs is not None
    outcome = judge(make_oracles(["crash", "hang"]), obs)
    assert (outcome.symptom, outcome.stage, outcome.pass_name) == (Symptom.CRASH, Stage.BUILD, "FakePass")
    assert pool.restarts == 1
    w2 = _idle(pool)
    assert w2 is not w and w2.proc.is_alive()
    w2.submit(ExecTask(8, "tir", "ok", "[]"), TestCaseInfo(8, "exec", "seed", "tir"))
    assert any(e.what == "result" for e in _collect(pool, "result"))


def test_hang_is_killed_and_reported() -> None:
    timeouts = dict(TIMEOUTS)
    timeouts[Stage.RUN] = 0.5
    p = WorkerPool(1, 50, timeouts, target=fake_worker_main)
    try:
        w = _idle(p)
        w.submit(ExecTask(3, "tir", "HANG", "[]"), TestCaseInfo(3, "exec", "seed", "tir"))
        death = next(e for e in _collect(p, "death") if e.what == "death")
        assert death.death is not None and death.death.cause == "timeout" and death.death.stage is Stage.RUN
        obs = death.death.observation()
        assert obs is not None and judge(make_oracles(["hang"]), obs).symptom is Symptom.HANG
    finally:
        p.close()


def test_a_stage_over_the_test_cases_own_limit_is_slow_not_a_hang() -> None:
    p = WorkerPool(1, 50, dict(TIMEOUTS), target=fake_worker_main)
    try:
        w = _idle(p)
        w.submit(ExecTask(3, "tir", "HANG", "[]"), TestCaseInfo(3, "exec", "seed", "tir", limits={Stage.RUN: 0.3}))
        death = next(e for e in _collect(p, "death") if e.what == "death").death
        assert death is not None and death.cause == "slow" and death.stage is Stage.RUN
        assert "relative limit 0.3s" in death.message and death.observation() is None
        assert p.restarts == 1
    finally:
        p.close()


def test_external_sigkill_is_no_crash_and_the_worker_is_restarted(pool: WorkerPool) -> None:
    w = _idle(pool)
    os.kill(w.proc.pid, signal.SIGKILL)
    death = next(e for e in _collect(pool, "death") if e.what == "death")
    assert death.tc is None and death.death is not None and death.death.signal == signal.SIGKILL
    assert death.death.cause == "killed" and death.death.observation() is None  # the OOM killer, not TVM
    assert pool.restarts == 1 and _idle(pool).proc.is_alive()


def test_a_worker_that_cannot_start_stops_the_campaign_with_its_reason() -> None:
    from seedzer.coverage.collectors import CollectorSpec
    from seedzer.errors import CampaignError
    from seedzer.execute.settings import WorkerSettings

    settings = WorkerSettings(collector=CollectorSpec("no-such-collector"))
    p = WorkerPool(1, settings, dict(TIMEOUTS))  # the real worker: its set-up fails
    try:
        with pytest.raises(CampaignError, match=r"worker 0 cannot start: ConfigError: unknown coverage collector"):
            end = time.time() + 120
            while time.time() < end:
                p.poll(0.1)
    finally:
        p.close()
