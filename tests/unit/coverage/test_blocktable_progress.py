"""Block-table build progress: a live line on a terminal, rate-limited plain lines on a pipe or a log."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from seedzer.coverage.blocktable import ProgressPrinter, build_table
from tests.unit.toylib import build_toylib


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_non_terminal_gets_plain_lines_every_period() -> None:
    stream, clock = io.StringIO(), _Clock()
    show = ProgressPrinter("block table of libx.so (blocks)", stream, period=5.0, clock=clock)
    printed_at = []
    for done in range(1, 65):  # 64 chunks, 0.5 s each: 32 s
        clock.now += 0.5
        before = stream.getvalue().count("\n")
        show(done, 64)
        if stream.getvalue().count("\n") > before:
            printed_at.append(clock.now - 1000.0)
    out = stream.getvalue()
    assert "\r" not in out and out.endswith("\n")
    lines = out.splitlines()
    assert lines[0] == "seedzer: block table of libx.so (blocks): 1/64 chunks, 0 s"
    assert lines[-1] == "seedzer: block table of libx.so (blocks): 64/64 chunks, 32 s"
    assert printed_at == [0.5, 5.5, 10.5, 15.5, 20.5, 25.5, 30.5, 32.0]  # first, every 5 s, last
    assert len(out) < 500  # not one 5 KB line


def test_terminal_keeps_the_live_line() -> None:
    stream, clock = _Tty(), _Clock()
    show = ProgressPrinter("t", stream, period=5.0, clock=clock)
    for done in range(1, 5):
        clock.now += 0.1
        show(done, 4)
    out = stream.getvalue()
    assert out.count("\r") == 4 and out.count("\n") == 1 and out.endswith("4/4 chunks, 0 s\n")


def test_closed_stream_is_not_a_terminal() -> None:
    stream = io.StringIO()
    stream.close()
    assert not ProgressPrinter("t", stream).live


def test_build_table_progress_to_a_pipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real build, stderr captured (not a terminal): only whole lines, the last one complete."""
    lib = build_toylib(tmp_path)
    offsets, meta = build_table(lib, "blocks", progress=True)
    assert len(offsets) == meta.blocks > 0
    err = capsys.readouterr().err
    assert "\r" not in err and err.endswith("\n")
    last = err.splitlines()[-1]
    assert last.startswith("seedzer: block table of libtoy.so (blocks): ") and " chunks, " in last
    done, total = last.split(": ")[2].split(" ")[0].split("/")
    assert done == total
