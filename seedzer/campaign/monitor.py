"""Live status during a campaign and the final summary table."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO

from rich.live import Live
from rich.text import Text

from seedzer.campaign.stats import CampaignStats
from seedzer.console import SafeConsole, SafeTable, echo, visible


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600:d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def status_line(st: CampaignStats) -> str:
    """One-line status: phase, time, execs (this session's by level, once two levels ran), rate,
    corpus, coverage, findings by symptom."""
    ran = [f"{name} {n}" for name, n in st.level_execs.items() if n]
    by_level = f" ({', '.join(ran)})" if len(ran) > 1 else ""
    return (
        f"[{st.phase}] {_hms(st.elapsed)} elapsed, {_hms(st.remaining)} left | execs {st.execs}"
        f"{by_level} ({st.execs_per_s:.1f}/s) | corpus {st.corpus} | "
        f"cov {st.coverage} | invalid {st.invalid} | "
        f"restarts {st.restarts}{f' ({st.slow} slow)' if st.slow else ''} | findings: {st.findings_line()}"
    )


class Monitor(Protocol):
    """Receives campaign statistics and messages while a campaign runs."""

    def update(self, stats: CampaignStats) -> None:
        """Show the latest statistics."""
        ...

    def message(self, text: str) -> None:
        """Show a one-off line (a new finding, a skipped model...)."""
        ...

    def close(self) -> None:
        """Stop live output."""
        ...


class RichMonitor:
    """A live status line on a terminal (rich), refreshed a few times per second."""

    def __init__(self, console: SafeConsole | None = None) -> None:
        self.console = console or SafeConsole(stderr=True)
        self.live = Live(Text("starting..."), console=self.console, refresh_per_second=4, transient=False)
        self.live.start()

    def update(self, stats: CampaignStats) -> None:
        """Redraw the status line."""
        self.live.update(Text(visible(status_line(stats))))

    def message(self, text: str) -> None:
        """Print above the live line (one line: whatever the text holds is shown, never obeyed)."""
        self.live.console.print(Text(visible(text)))

    def close(self) -> None:
        """Stop the live display."""
        self.live.stop()


class PlainMonitor:
    """Status lines every ``period`` seconds, for logs and non-terminals (CI, docker logs)."""

    def __init__(self, period: float = 10.0, stream: TextIO | None = None) -> None:
        self.period = period
        self.stream: TextIO = stream or sys.stderr
        self._last = 0.0

    def update(self, stats: CampaignStats) -> None:
        """Print a status line if ``period`` has passed since the last one."""
        now = time.monotonic()
        if now - self._last >= self.period:
            self._last = now
            echo(status_line(stats), file=self.stream)

    def message(self, text: str) -> None:
        """Print a line (whatever the text holds is shown, never obeyed)."""
        echo(text, file=self.stream)

    def close(self) -> None:
        """Nothing to stop."""


class QuietMonitor:
    """Shows nothing (tests, library use)."""

    def update(self, stats: CampaignStats) -> None:
        """Ignore."""

    def message(self, text: str) -> None:
        """Ignore."""

    def close(self) -> None:
        """Ignore."""


def make_monitor(style: str = "auto") -> Monitor:
    """``auto`` picks the live line on a terminal and plain lines otherwise."""
    if style == "quiet":
        return QuietMonitor()
    if style == "plain" or (style == "auto" and not sys.stderr.isatty()):
        return PlainMonitor()
    return RichMonitor()


def summary_table(st: CampaignStats, campaign_dir: str) -> SafeTable:
    """The totals of a campaign: time, executions, corpus, coverage, models, restarts, bugs and the
    gate's not-a-bug verdicts by reason."""
    table = SafeTable(title=f"Seedzer campaign summary: {campaign_dir}", show_lines=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    dismissed = ", ".join(f"{k} {v}" for k, v in st.not_a_bug.most_common()) or "none"
    rows = [
        ("elapsed", _hms(st.elapsed)),
        ("executions", str(st.execs)),
        ("execs/s (this session)", f"{st.execs_per_s:.2f}"),
        ("invalid test cases", str(st.invalid)),
        ("corpus entries", str(st.corpus)),
        ("coverage (features)", str(st.coverage)),
        ("models loaded / failed", f"{st.loaded_models} / {st.failed_models}"),
        ("worker restarts", f"{st.restarts} ({st.slow} of them slow test cases stopped at their relative limit)"
         if st.slow else str(st.restarts)),
        ("bugs (distinct root causes)", ", ".join(f"{k} {v}" for k, v in sorted(st.unique.items()) if v) or "none"),
        ("awaiting the gate", str(st.pending)),
        ("not bugs, by reason", dismissed),
        ("filing gate time", st.gate_share()),
    ]
    for k, v in rows:
        table.add_row(k, v)
    return table
