"""Background jobs: run in zygote children, their values returned, at a lower priority than the caller."""

from __future__ import annotations

import os
import time

from seedzer.execute.background import Background, JobResult
from seedzer.generate.cpu_share import PRIORITY_STEP


def _finished(jobs: Background, seconds: float = 60.0) -> list[JobResult]:
    out: list[JobResult] = []
    end = time.monotonic() + seconds
    while not out and time.monotonic() < end:
        out = jobs.poll()
        time.sleep(0.02)
    return out


def _niceness() -> int:
    return os.nice(0)


def test_a_job_returns_its_value_and_runs_behind_the_workers() -> None:
    jobs = Background("test", None, timeout=60.0)
    jobs.submit("nice", _niceness)
    (job,) = _finished(jobs)
    jobs.close()
    assert job.error is None and job.key == "nice"
    zygote_niceness = os.nice(0)  # the zygote is forked from this process, at its priority
    assert job.value == min(19, zygote_niceness + PRIORITY_STEP)


def test_a_failing_job_reports_its_error_and_the_queue_goes_on() -> None:
    jobs = Background("test", None, timeout=60.0)
    jobs.submit("bad", int, "not a number")
    jobs.submit("good", int, "7")
    first, second = _finished(jobs), _finished(jobs)
    jobs.close()
    assert first[0].key == "bad" and first[0].error is not None and "ValueError" in first[0].error
    assert second[0].key == "good" and second[0].value == 7 and jobs.pending() == 0
