"""Children that die with their parent: a forked worker or gate job must not outlive whoever runs it.

The campaign's workers and isolated jobs are forked by the zygote (multiprocessing's forkserver),
which exits when the process that started it is gone: a campaign killed by SIGKILL, or the Ray actor
that owns a worker. Linux's parent-death signal then reaches the child at once, even inside a hung
TVM call; without it an orphaned worker runs on until its test case ends, and a hung one never does.
TVM-free.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
"""``prctl``'s option that names the signal a process gets when its parent exits (Linux)."""


def die_with_parent(signum: int = signal.SIGKILL) -> bool:
    """Ask Linux to send ``signum`` to this process when its parent exits, and send it now if the parent
    is already gone. False where the request is not available (not Linux)."""
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:  # the parent exited before the request was made: the signal was never due
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), signum)
    return True
