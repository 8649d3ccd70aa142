"""Run one function in a process forked from the zygote, surviving its segfaults and hangs."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from seedzer.execute.death import death_observation, describe_exit
from seedzer.execute.memory import limit_address_space, out_of_memory_message
from seedzer.execute.orphans import die_with_parent
from seedzer.execute.zygote import context
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.logfiles import redirect_output


@dataclass
class IsolatedResult:
    """What an isolated call produced: its return value, or the outcome that ended it."""

    value: Any = None
    outcome: Observation | None = None
    traceback: str = ""

    @property
    def ok(self) -> bool:
        """True when the function returned normally."""
        return self.outcome is None


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...], log: str | None = None,
           memory: int = 0) -> None:
    die_with_parent()  # never outlive the process waiting for the answer
    redirect_output(log)
    limit_address_space(memory)
    try:
        value = fn(*args)
        conn.send(("ok", value))
    except MemoryError as exc:  # over the address-space limit: the input's size, not a TVM bug
        conn.send(("memory", out_of_memory_message(exc, memory), traceback.format_exc()))
    except BaseException as exc:  # reported to the parent, which decides what it means
        conn.send(("exception", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    finally:
        conn.close()


def run_isolated(
    fn: Callable[..., Any], *args: Any, timeout: float = 300.0, stage: Stage = Stage.LOAD, log: str | None = None,
    memory: int = 0,
) -> IsolatedResult:
    """Call ``fn(*args)`` in a child forked from the zygote; crashes, hangs and exceptions become
    observations. ``log`` receives the child's output (TVM's C++ logging) instead of the terminal.
    ``memory`` > 0 bounds the child's address space (bytes): a MemoryError under it is ``invalid``.

    ``fn`` and ``args`` must be picklable (a module-level function and plain data).
    """
    ctx = context()
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args, log, memory), daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            try:
                msg = parent.recv()
            except EOFError:
                msg = None
            proc.join(timeout=10)
            if msg is not None and msg[0] == "ok":
                return IsolatedResult(value=msg[1])
            if msg is not None and msg[0] == "memory":
                return IsolatedResult(outcome=Observation(Symptom.INVALID, stage, None, msg[1]), traceback=msg[2])
            if msg is not None:
                return IsolatedResult(outcome=Observation(Symptom.EXCEPTION, stage, None, msg[1]), traceback=msg[2])
            code = proc.exitcode
            # a child that died without a word is a crash whatever ended it (the caller judges a SIGKILL)
            return IsolatedResult(outcome=death_observation(stage, None, describe_exit(code), sigkill_crashes=True,
                                                            signum=-code if code is not None and code < 0 else None,
                                                            exit_crashes=True))
        proc.kill()
        proc.join()
        return IsolatedResult(outcome=death_observation(stage, None, f"no result after {timeout:.0f}s", timed_out=True))
    finally:
        parent.close()
        if proc.is_alive():
            proc.kill()
            proc.join()
