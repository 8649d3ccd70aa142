"""The schedule gate's and reducer's tester: runs sched cases in children forked from their process (which
holds TVM, the parsed PrimFuncs and the unscheduled builds already made); a death or a timeout becomes a
crash or hang observation, a crash with the C++ frames TVM printed (its segfault report, read from the
child's error output: the frames name the primitive's implementation).

Most of a gate's tests (the ddmin over the trace) run one script with other plans, so its unscheduled
build is the same every time: a child sends back the unscheduled builds it made (their outputs), and
later children take them instead of building that program again. :func:`observe_folder` runs a
folder's case once (``seedzer replay``, a filtered sample's re-run).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from seedzer.execute.forked import Forked, SharedProgress, call_forked
from seedzer.execute.memory import limit_address_space
from seedzer.execute.records import segfault_frames
from seedzer.finding.script_tester import ScriptTester
from seedzer.kernel.common import Observation, Stage, step_label
from seedzer.kernel.sched.case import SchedCase

ERRORS_KEPT = 64 * 1024
"""Bytes of a crashed child's error output read for its frames (TVM's report is at its end)."""


def _builder() -> Any:
    """The kernel's builder with a memo of parsed PrimFuncs and unscheduled builds (filled in the tester's
    process, inherited by its children). Imports TVM: called in the gate's or reducer's process only."""
    from seedzer.kernel.sched.observe import SchedBuilder, SchedMemo

    return SchedBuilder(memo=SchedMemo())


def _observe(case: SchedCase, builder: Any, progress: SharedProgress,
             errors: str) -> tuple[Observation, dict[str, Any]]:
    """A child's test: the kernel's observation, with the unscheduled builds it made; its error output goes
    to ``errors`` (a crash report's frames), its standard output nowhere."""
    from seedzer.kernel.sched.observe import observe

    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    err = os.open(errors, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(err, 2)
    known = set(builder.memo.references)

    def on_step(stage: Stage, name: str, program: str) -> None:
        progress.set(stage.value, step_label(name, program))

    builder.on_step = on_step
    observation = observe(case, builder)
    learned = {k: v for k, v in builder.memo.references.items() if k not in known}
    return observation, learned


class Tester(ScriptTester[SchedCase]):
    """Runs sched cases in forked children, handing them the unscheduled builds known; a crash is
    described with the C++ frames of TVM's segfault report (the module docstring)."""

    def __init__(self) -> None:
        super().__init__(_builder())

    def run(self, case: SchedCase, timeout: float) -> tuple[Forked, str]:
        with tempfile.TemporaryDirectory(prefix="seedzer-sched-") as work:
            errors = str(Path(work) / "stderr")
            res = call_forked(_observe, case, self.builder, self.progress, errors, timeout=timeout,
                              progress=self.progress)
            report = _tail(errors) if res.signal is not None else ""
        return res, "" if res.timed_out else segfault_frames(report)

    def learn(self, learned: dict[str, Any]) -> None:
        for key, built in learned.items():
            self.builder.memo.put(key, built)


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - ERRORS_KEPT))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def observe_folder(where: str, timeout: float, max_memory: int = 0) -> Observation:
    """What the case of the sched folder ``where`` (a finding, or a sample of a filtered test case) shows run
    once alone in a forked child within ``timeout`` seconds and ``max_memory`` bytes of address space (0:
    unbounded; set in this process, which the caller runs for this job alone)."""
    from seedzer.finding.sched.folder import SchedFinding

    limit_address_space(max_memory)
    return Tester().observe(SchedFinding.load(Path(where)).case, timeout)
