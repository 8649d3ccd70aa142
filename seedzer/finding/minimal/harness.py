"""Running a plain reproducer's text in a child forked from a process that holds TVM: how a kind tries a
candidate while it makes the program smaller (milliseconds instead of a fresh interpreter's seconds).

The child runs the text as a script file (TVMScript's decorators read their source from it), with its
standard output and error going to a file; its exit status is the one the program asked for (an error
the program does not catch is :data:`~seedzer.finding.minimal.text.CANNOT_RUN`, as its guard makes it in
a real interpreter). A death of the child itself, or a timeout, is no verdict.
"""

from __future__ import annotations

import os
import re
import runpy
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from seedzer.execute.forked import call_forked
from seedzer.finding.minimal.text import CANNOT_RUN, CANNOT_RUN_LINE
from seedzer.kernel.common import GONE_LINE, PRESENT_LINE, Observation, Symptom
from seedzer.kernel.messages import normalize


@dataclass(frozen=True)
class MinimalRun:
    """How a plain reproducer ended: its exit status (None: it died or ran over its limit) and its output."""

    exit_status: int | None
    output: str

    @property
    def present(self) -> bool:
        """It said the bug is present."""
        return self.exit_status == 1 and PRESENT_LINE in self.output

    @property
    def gone(self) -> bool:
        """It said the bug is gone."""
        return self.exit_status == 0 and GONE_LINE in self.output


def _run_file(path: str) -> tuple[int, str]:
    """In the forked child: run the script at ``path``; its exit status and what it printed."""
    out = path + ".out"
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.stdout = sys.stderr = open(fd, "w", buffering=1, closefd=False)  # noqa: SIM115 - the child's to its end
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException as exc:  # what the program's guard turns into "cannot run here"
        print(f"{CANNOT_RUN_LINE}: {type(exc).__name__}: {exc}")
        code = CANNOT_RUN
    sys.stdout.flush()
    sys.stderr.flush()
    return code, Path(out).read_text(errors="replace")[-6000:]


def run_minimal(text: str, timeout: float) -> MinimalRun:
    """Run the plain reproducer ``text`` in a forked child within ``timeout`` seconds."""
    with tempfile.TemporaryDirectory(prefix="seedzer-minimal-") as work:
        path = Path(work) / "minimal.py"
        path.write_text(text)
        got = call_forked(_run_file, str(path), timeout=timeout)
    if got.ok and isinstance(got.value, tuple):
        code, output = got.value
        return MinimalRun(int(code), str(output))
    return MinimalRun(None, got.describe())


_TYPES = re.compile(r"^(\w*(Error|Exception): )+")


def identity(message: str, names: frozenset[str] = frozenset()) -> str:
    """An error's normalized message without the error types in front (a verifier's ``ValueError``
    reaches a script as ``InternalError: ValueError: ...``)."""
    return _TYPES.sub("", normalize(message, names))


def fails_as(expected: Observation, run: MinimalRun, names: frozenset[str]) -> bool:
    """Whether a plain reproducer's run shows the failure ``expected`` describes: it said "present", and
    for an error or ill-formed IR with the same normalized message, for a crash with the same signal."""
    if not run.present:
        return False
    if expected.symptom is Symptom.CRASH:
        return expected.signal is None or f"killed by signal {expected.signal}" in run.output
    if expected.symptom not in (Symptom.EXCEPTION, Symptom.ILLFORMED):
        return True
    return identity(run.output, names) == identity(expected.message, names)
