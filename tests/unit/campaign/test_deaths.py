"""A worker's death as the campaign takes it in (:mod:`seedzer.campaign.deaths`), its outcome included;
issue 55 row 9: a SIGKILL is out of memory only when the kernel counted an OOM kill for it, otherwise
the test case was killed from outside (before: every SIGKILL was shown as ``out of memory``)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.filtered import KILLED_FROM_OUTSIDE, OUT_OF_MEMORY
from seedzer.campaign.invalid import invalid_class
from seedzer.campaign.loop import Campaign
from seedzer.campaign.outcome import Fate, Outcome
from seedzer.campaign.quarantine import QUARANTINE_DEATHS
from seedzer.campaign.summary import campaign_summary
from seedzer.execute.records import Death, TestCaseInfo, WorkerEvent
from seedzer.execute.worker_pool import WorkerPool
from seedzer.kernel.common import Stage
from tests.unit.campaign.parts import Parts, case_info
from tests.unit.campaign.test_loop_campaigns import NoHang, by_symptom, campaign, config, query, sigkill
from tests.unit.fake_gate import FakeGate

pytestmark = pytest.mark.usefixtures("restore_signals")

SIGKILLED = Death("killed", Stage.RUN, "run", "killed by signal SIGKILL", signal.SIGKILL, None, 812.0, 20480.0)


def kill(parts: Parts, tc: TestCaseInfo | None, worker: int = 0, pids: list[int | None] | None = None) -> Outcome:
    """Worker ``worker`` SIGKILLed from outside while it ran ``tc`` (None: between two test cases)."""
    return parts.deaths.take(WorkerEvent("death", worker, tc, death=SIGKILLED), SIGKILLED, pids or [])


def message_of(outcome: Outcome) -> str:
    """Why the test case of ``outcome`` was turned away."""
    assert outcome.fate is Fate.FILTERED and outcome.turned is not None
    return outcome.turned.observation.message


def reason_of(outcome: Outcome) -> str:
    """The reason class ``status --invalid`` lists it under."""
    return invalid_class(message_of(outcome))


def test_a_sigkill_without_an_oom_kill_counted_is_a_kill_from_outside(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp", oom=[7])
    parts.seed("a")
    outcome = kill(parts, case_info(1, "s1", "a\nb"), pids=[4242])
    assert reason_of(outcome) == KILLED_FROM_OUTSIDE
    assert "the kernel counted no OOM kill" in message_of(outcome)
    ((_, _, detail),) = parts.db.events("worker_killed")
    assert detail["oom_killer"] is False and detail["rss_mb"] == 812.0
    assert parts.db.events("workers")[0][2] == {"pids": [4242]}
    (line,) = parts.said.lines
    assert line.startswith("worker 0 was killed by SIGKILL from outside, not for memory") and "not a TVM bug" in line


def test_a_sigkill_with_an_oom_kill_counted_is_out_of_memory_once_per_kill(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp", oom=[7])
    parts.seed("a")
    parts.oom[0] = 8  # the kernel's OOM killer took one process
    first = kill(parts, case_info(1, "s1", "a\nb"))
    second = kill(parts, case_info(2, "s1", "a\nc"), 1)
    assert (reason_of(first), reason_of(second)) == (OUT_OF_MEMORY, KILLED_FROM_OUTSIDE)  # one kill, one worker
    assert "killed by SIGKILL from the kernel's OOM killer" in parts.said.lines[0]
    parts.oom[0] = 10  # two more at once: both workers
    both = [kill(parts, case_info(3 + w, "s1", "a\nd"), w) for w in (0, 1)]
    assert [reason_of(o) for o in both] == [OUT_OF_MEMORY, OUT_OF_MEMORY]
    assert [d["oom_killer"] for _, _, d in parts.db.events("worker_killed")] == [True, False, True, True]


def test_oom_kills_before_fuzzing_explain_no_worker(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp", oom=[0])
    parts.seed("a")
    parts.oom[0] = 3  # while the pool loaded, say
    parts.deaths.start()
    outcome = kill(parts, case_info(1, "s1", "a\nb"))
    assert reason_of(outcome) == KILLED_FROM_OUTSIDE


def test_without_a_readable_count_a_sigkill_is_not_called_out_of_memory(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp", oom=[None])
    parts.seed("a")
    outcome = kill(parts, case_info(1, "s1", "a\nb"))
    assert reason_of(outcome) == KILLED_FROM_OUTSIDE and "not readable here" in message_of(outcome)
    assert "(the OOM killer or an operator, not a TVM bug" in parts.said.lines[0]
    between = kill(parts, None)
    assert between.fate is Fate.NOTHING  # killed between two test cases: nothing to turn away


def test_a_slow_test_case_is_counted_and_turned_away(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    seed = parts.seed("a")
    death = Death("slow", Stage.BUILD, "FakePass", "outlived its relative limit of 0.2 s", seconds=0.2)
    outcome = parts.deaths.take(WorkerEvent("death", 0, case_info(1, "s1", "a\nb"), death=death), death, [])
    assert reason_of(outcome) == "slow" and parts.stats.slow == 1 and seed.cost == 0.2
    assert parts.counts.by_symptom == {("slow", "build"): 1} and parts.stats.execs == 1


def test_a_crash_is_a_candidate_with_its_log_and_a_crash_whose_oracle_is_off_is_invalid(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    parts.seed("a")
    death = Death("signal", Stage.BUILD, "FakePass", "killed by signal SIGSEGV", signal.SIGSEGV,
                  log_tail="Segfault encountered")
    outcome = parts.deaths.take(WorkerEvent("death", 0, case_info(1, "s1", "a\nCRASH"), death=death), death, [])
    assert outcome.fate is Fate.NEW_CANDIDATE and outcome.candidate is not None
    assert outcome.candidate.observed.log == "Segfault encountered" and not parts.db.findings()
    cfg = config()
    cfg.oracles.enabled = [name for name in cfg.oracles.enabled if name != "crash"]
    off = Parts(tmp_path / "off", cfg)
    off.seed("a")
    invalid = off.deaths.take(WorkerEvent("death", 0, case_info(1, "s1", "a\nCRASH"), death=death), death, [])
    assert invalid.fate is Fate.INVALID and off.stats.invalid == 1


def test_an_entry_its_workers_keep_exiting_on_leaves_the_line_and_dropped_seeds_go_first(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    bad, waiting = parts.seed("EXIT", "s1"), parts.seed("b", "s2")
    assert parts.pending.pop() is bad and parts.pending.pop() is waiting  # both sent to workers
    death = Death("exit", Stage.PASS, "FakePass", "exited with status 1")
    dropped = (TestCaseInfo(9, "exec", "s2", "tir", "b"),)  # waited behind the test case its worker died on
    outcomes = [parts.deaths.take(WorkerEvent("death", 0, case_info(i, "s1", "EXIT\nx"), death=death,
                                              dropped=dropped), death, [])
                for i in range(QUARANTINE_DEATHS - 1)]
    assert list(parts.pending) == [waiting]  # put back first, once
    parts.pending.append(bad)  # in line again (a resumed campaign's entry that never ran, say)
    outcomes.append(parts.deaths.take(WorkerEvent("death", 0, case_info(5, "s1", "EXIT\ny"), death=death), death, []))
    assert {o.fate for o in outcomes} == {Fate.NOTHING}  # an exit is Seedzer's failure, no test case's fate
    assert "s1" in parts.quarantine and list(parts.pending) == [waiting]  # the quarantined seed left the line


@pytest.mark.parametrize(("oom_kills", "reason", "rerun"), [((0, 0), KILLED_FROM_OUTSIDE, ""),
                                                           ((0, 1), OUT_OF_MEMORY, "waiting")])
def test_status_invalid_shows_an_operators_kill_as_a_kill_and_only_an_oom_kill_as_out_of_memory(
        tmp_path: Path, pool: Path, oom_kills: tuple[int, int], reason: str, rerun: str) -> None:
    """A real campaign whose worker is SIGKILLed while it runs a test case; the kernel's OOM-kill count
    reads ``oom_kills`` (when fuzzing starts, then at the death), as on a machine where the OOM killer
    took nothing, or took the worker."""
    out = tmp_path / "camp"
    kills: list[int] = []

    def step(c: Campaign) -> bool:
        assert isinstance(c.executor, WorkerPool)
        w = c.executor.workers[0]
        if not kills and w.current is not None and w.current.announced and "HANG" in w.current.script:
            time.sleep(0.2)  # inside the run stage
            kills.append(sigkill(w))
        return bool(kills) and c.executor.restarts == 1 and c.stats.execs >= 3

    c, _ = campaign(out, pool, ["a", "HANG"], FakeGate(by_symptom, hold=True), step)
    reads = iter(oom_kills)
    c.deaths.oom_count = lambda: next(reads, oom_kills[-1])
    c.feeder.schedulers["tir"] = NoHang()
    c.run()
    assert query(out / "campaign.db", "SELECT reason, pass FROM filter_summary") == [(reason, "run")]
    assert query(out / "campaign.db", "SELECT reason, rerun FROM filter_samples") == [(reason, rerun)]
    console = Console(width=400, record=True)
    console.print(campaign_summary(out, show_invalid=True))
    shown = console.export_text()
    assert reason in shown and (OUT_OF_MEMORY in shown) == (reason == OUT_OF_MEMORY)
