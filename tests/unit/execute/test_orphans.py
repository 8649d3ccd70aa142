"""Children that die with their parent (:mod:`seedzer.execute.orphans`)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from seedzer.execute.orphans import die_with_parent


def gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie nobody reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def orphan(ask: bool) -> int:
    """Fork a child that forks a sleeping grandchild (asking for the parent-death signal when ``ask``),
    then exits; the grandchild's pid."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the forked child
        grandchild = os.fork()
        if grandchild == 0:
            if ask:
                die_with_parent()
            os.write(write, f"{os.getpid()}\n".encode())
            time.sleep(30)
            os._exit(0)
        os.close(write)
        time.sleep(0.2)  # the grandchild made its request
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        grandchild = int(pipe.readline())
    os.waitpid(child, 0)
    return grandchild


def wait_gone(pid: int, seconds: float) -> bool:
    """Whether ``pid`` exits within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


def test_a_child_that_asked_dies_with_its_parent() -> None:
    pid = orphan(ask=True)
    assert wait_gone(pid, 10)


def test_a_child_that_did_not_ask_runs_on() -> None:
    """The control: without the request an orphan sleeps on (and is killed here)."""
    pid = orphan(ask=False)
    try:
        assert not wait_gone(pid, 1.0)
    finally:
        os.kill(pid, signal.SIGKILL)
