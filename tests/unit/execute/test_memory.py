"""The kernel's count of OOM kills (:func:`seedzer.execute.memory.oom_kills`): the evidence that a
SIGKILLed worker was out of memory (issue 55 row 9), read from the narrowest file that has it."""

from __future__ import annotations

from pathlib import Path

from seedzer.execute.memory import oom_kill_files, oom_kills


def test_the_narrowest_counter_that_says_is_read(tmp_path: Path) -> None:
    events = tmp_path / "memory.events"
    events.write_text("low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\noom_group_kill 0\n")
    control = tmp_path / "memory.oom_control"
    control.write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n")
    vmstat = tmp_path / "vmstat"
    vmstat.write_text("nr_free_pages 1\noom_kill 9\n")
    assert oom_kills([events, control, vmstat]) == 2
    assert oom_kills([tmp_path / "missing", control, vmstat]) == 5
    old = tmp_path / "old.events"
    old.write_text("low 0\noom 1\n")  # a kernel from before the field
    assert oom_kills([old, vmstat]) == 9
    assert oom_kills([old, tmp_path / "missing"]) is None


def test_this_machine_is_asked_narrowest_first() -> None:
    files = oom_kill_files()
    assert files[-1] == Path("/proc/vmstat") and len(set(files)) == len(files)
    count = oom_kills()
    assert count is None or count >= 0
