"""Live campaign statistics shown by the monitor and written into snapshots."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class CampaignStats:
    """Counters of a running campaign (cumulative across resumes where persisted)."""

    execs: int = 0
    session_execs: int = 0
    invalid: int = 0
    coverage: int = 0
    corpus: int = 0
    findings: Counter[str] = field(default_factory=Counter)
    unique: Counter[str] = field(default_factory=Counter)
    not_a_bug: Counter[str] = field(default_factory=Counter)
    pending: int = 0
    restarts: int = 0
    slow: int = 0
    """Test cases stopped at their relative time limit (counted among the restarts, never filed)."""
    elapsed: float = 0.0
    budget: float = 0.0
    session_seconds: float = 0.0
    loaded_models: int = 0
    failed_models: int = 0
    phase: str = "starting"
    jobs: int = 1
    timings: dict[str, float] = field(default_factory=dict)
    gate_known: int = 0
    """Candidates of this session counted against a verdict already given, without a gate run."""
    level_execs: Counter[str] = field(default_factory=Counter)
    """Executions of this session by level (``tir``, ``graph``)."""
    gate_waiting: int = 0
    """Candidates waiting for their gate run (one runs at a time, none while the gate is over its share)."""
    reruns: Counter[str] = field(default_factory=Counter)
    """Re-runs at the full limits of slow and out-of-memory test cases this session, by outcome."""

    def add_timings(self, timings: Mapping[str, float]) -> None:
        """Accumulate seconds (or counts) per part of an iteration, e.g. ``{"build": 0.02}``."""
        for key, value in timings.items():
            self.timings[key] = self.timings.get(key, 0.0) + value

    def gate_fraction(self) -> float | None:
        """The filing gate's seconds as a fraction of the workers' time so far (elapsed x jobs; None
        before any time has passed)."""
        budget = self.elapsed * max(self.jobs, 1)
        return self.timings.get("gate", 0.0) / budget if budget > 0 else None

    def gate_share(self) -> str:
        """The filing gate's seconds and their share of the workers' time (elapsed x jobs), with the
        candidates counted without a gate run and those still waiting for one."""
        gate, fraction = self.timings.get("gate", 0.0), self.gate_fraction()
        extra = [f"{100 * fraction:.1f}% of worker time"] if fraction is not None else []
        if self.gate_known:
            extra.append(f"{self.gate_known} counted against known verdicts")
        if self.gate_waiting:
            extra.append(f"{self.gate_waiting} waiting")
        if self.reruns:
            extra.append("re-runs at full limits: " + ", ".join(f"{n} {k}" for k, n in sorted(self.reruns.items())))
        return f"{gate:.0f} s" + (f" ({'; '.join(extra)})" if extra else "")

    @property
    def execs_per_s(self) -> float:
        """Executions per second in this session."""
        return self.session_execs / self.session_seconds if self.session_seconds > 0 else 0.0

    @property
    def remaining(self) -> float:
        """Seconds of budget left."""
        return max(0.0, self.budget - self.elapsed)

    def findings_line(self) -> str:
        """Bugs (unique root causes) by symptom, then candidates the gate has not judged yet and
        not-a-bug verdicts, e.g. ``crash 1, exception 3 (2 pending, 5 not bugs)``."""
        text = ", ".join(f"{k} {v}" for k, v in sorted(self.unique.items()) if v) or "none"
        extra = [f"{self.pending} pending"] if self.pending else []
        dismissed = sum(self.not_a_bug.values())
        if dismissed:
            extra.append(f"{dismissed} not bugs")
        return text + (f" ({', '.join(extra)})" if extra else "")
