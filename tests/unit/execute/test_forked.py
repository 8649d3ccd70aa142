"""One call in a forked child (:mod:`seedzer.execute.forked`): its outcome, and that it never outlives
the process that forked it (a gate job killed at a campaign's end left its call running for minutes)."""

from __future__ import annotations

import os
import signal
import time

from seedzer.execute.forked import call_forked
from tests.unit.execute.test_orphans import wait_gone


def _report_and_sleep(write: int) -> None:
    os.write(write, f"{os.getpid()}\n".encode())
    time.sleep(60)


def test_a_call_returns_its_value_and_a_dying_call_its_signal() -> None:
    assert call_forked(divmod, 7, 2, timeout=30).value == (3, 1)
    died = call_forked(lambda: os.kill(os.getpid(), signal.SIGSEGV), timeout=30)
    assert died.signal == signal.SIGSEGV and not died.ok
    slow = call_forked(time.sleep, 5, timeout=0.3)
    assert slow.timed_out and "no result" in slow.describe()


def test_the_forked_call_dies_with_the_process_that_forked_it() -> None:
    read, write = os.pipe()
    job = os.fork()
    if job == 0:  # pragma: no cover - the gate job: forks the call, then is killed while it runs
        os.close(read)
        call_forked(_report_and_sleep, write, timeout=120)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        call = int(pipe.readline())
    os.kill(job, signal.SIGKILL)  # as Background.close() kills a running gate job
    os.waitpid(job, 0)
    assert wait_gone(call, 10)
