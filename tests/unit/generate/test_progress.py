"""ProgressBar: plain periodic lines off a terminal, nothing when disabled."""

from __future__ import annotations

import io

from seedzer.generate.progress import ProgressBar


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_non_terminal_prints_first_periodic_and_final_lines() -> None:
    out, clock = io.StringIO(), Clock()
    with ProgressBar("basic → pool", 10, stream=out, period=15.0, clock=clock) as bar:
        bar.update(0, 0)
        for done in range(1, 10):
            clock.now += 4.0
            bar.update(done, done // 3)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("seedzer: basic → pool: 0/10 models, 0 rejected")
    assert len(lines) == 4  # at 0 s, 16 s, 32 s and the final line at 36 s
    assert lines[-1].startswith("seedzer: basic → pool: 9/10 models, 3 rejected")
    assert "\r" not in out.getvalue()


def test_disabled_prints_nothing() -> None:
    out = io.StringIO()
    with ProgressBar("x", 3, enabled=False, stream=out) as bar:
        bar.update(1, 0)
        bar.update(3, 1)
    assert out.getvalue() == ""
