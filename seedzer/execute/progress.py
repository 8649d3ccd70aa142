"""A shared-memory progress slot: the worker publishes its stage and pass, the campaign reads them.

Writing is a few stores into shared memory (no syscall), so it can happen before every pass. When a
worker dies, the campaign attributes the crash or hang to the last published stage and pass.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from seedzer.kernel.common import Stage

NAME_BYTES = 120
STAGE_CODES: tuple[Stage, ...] = tuple(Stage)
"""Stable integer codes for stages (index into this tuple), used in the shared-memory progress slots."""


@dataclass
class ProgressView:
    """A snapshot of a worker's progress slot."""

    testcase: int
    stage: Stage | None
    pass_name: str
    started: float

    def elapsed(self, now: float | None = None) -> float:
        """Seconds spent in the current stage."""
        return (now if now is not None else time.time()) - self.started


class ProgressSlot:
    """Fixed-size shared record: test-case counter, stage code, stage start time, pass name."""

    def __init__(self, ctx: Any) -> None:
        self.nums = ctx.RawArray("d", 3)
        self.name = ctx.RawArray("c", NAME_BYTES)
        self.clear()

    def clear(self) -> None:
        """Mark the worker idle (no stage)."""
        self.nums[1] = -1.0
        self.nums[2] = time.time()
        self.name.value = b""

    def begin_testcase(self, testcase: int) -> None:
        """Worker: a new test case starts."""
        self.nums[0] = float(testcase)

    def stage(self, stage: Stage, pass_name: str = "") -> None:
        """Worker: entering ``stage`` (optionally within ``pass_name``)."""
        self.name.value = pass_name.encode()[: NAME_BYTES - 1]
        self.nums[1] = float(STAGE_CODES.index(stage))
        self.nums[2] = time.time()

    def in_pass(self, pass_name: str) -> None:
        """Worker: a pass is about to run within the current stage (stage clock keeps running)."""
        self.name.value = pass_name.encode()[: NAME_BYTES - 1]

    def read(self) -> ProgressView:
        """Campaign: the current progress."""
        code = int(self.nums[1])
        return ProgressView(
            testcase=int(self.nums[0]),
            stage=STAGE_CODES[code] if code >= 0 else None,
            pass_name=self.name.value.decode(errors="replace"),
            started=float(self.nums[2]),
        )
