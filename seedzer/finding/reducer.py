"""One reducer engine for every finding kind: named reduction passes, run in rounds, with statistics.

Modelled on Hypothesis's shrinker (``@defines_shrink_pass`` and its table of useful and useless
passes). A kind declares its passes as methods marked with :func:`defines_pass` (or builds
:class:`ReductionPass` objects itself); :class:`Reducer` runs them in order, round after round,
until a whole round makes no progress, the deadline passes or ``max_rounds`` rounds are done;
a round starts only before the deadline.

A pass gets the current state and a :class:`Trial`, tests candidates with it and returns the state
it ended with (or None when nothing helped). Acceptance is greedy: every candidate the trial passes
becomes the current state at once, as every smaller interesting test case becomes Hypothesis's
shrink target: its statistics are counted and ``on_improvement`` sees it (to save it). The test
may be memoized on a key of the candidate; a test that is not in the memo and would start after
the deadline raises :class:`OutOfTime`, which ends the reduction with the best state so far.

Every pass keeps a :class:`PassStats` (calls, successes, size removed, tests, seconds);
:func:`stats_table` renders them as a markdown table for ``report.md``. The module is generic: it
knows nothing of TVM nor of any finding kind.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

S = TypeVar("S")
Size = Mapping[str, int]
"""How big a state is, per unit (``{"lines": 40, "passes": 3}``)."""

_PASS_NAME = "_reduction_pass_name"


class OutOfTime(Exception):
    """The deadline passed before a test could start; the reduction keeps the best state so far."""


@dataclass
class PassStats:
    """What one pass did over a reduction (and the runs it resumed): how often it ran, how many
    candidates it got accepted, how much they removed (per size unit), tests and seconds spent."""

    calls: int = 0
    successes: int = 0
    size_removed: dict[str, int] = field(default_factory=dict)
    tests: int = 0
    seconds: float = 0.0

    @property
    def useful(self) -> bool:
        """The pass paid off: at least one of its candidates was accepted."""
        return self.successes > 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (for a reducer's state file)."""
        return {"calls": self.calls, "successes": self.successes, "size_removed": dict(self.size_removed),
                "tests": self.tests, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, data: Any) -> PassStats:
        """The stats :meth:`to_json` wrote; anything unreadable gives empty stats."""
        if not isinstance(data, dict):
            return cls()
        removed = data.get("size_removed")
        return cls(int(data.get("calls", 0)), int(data.get("successes", 0)),
                   {str(k): int(v) for k, v in removed.items()} if isinstance(removed, dict) else {},
                   int(data.get("tests", 0)), float(data.get("seconds", 0.0)))


def stats_to_json(stats: Mapping[str, PassStats]) -> dict[str, dict[str, Any]]:
    """Per-pass statistics as JSON (pass name -> :meth:`PassStats.to_json`), in pass order."""
    return {name: s.to_json() for name, s in stats.items()}


def stats_from_json(data: Any) -> dict[str, PassStats]:
    """The statistics :func:`stats_to_json` wrote; an older state file without them gives ``{}``."""
    if not isinstance(data, dict):
        return {}
    return {str(name): PassStats.from_json(s) for name, s in data.items()}


@dataclass(frozen=True)
class ReductionPass(Generic[S]):
    """A named reduction pass: ``run(state, trial)`` tries candidates and returns the state it ended
    with (normally ``trial.current``), or None when no candidate helped."""

    name: str
    run: Callable[[S, Trial[S]], S | None]


def defines_pass(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a method ``(self, state, trial) -> state | None`` as the reduction pass ``name``
    (Hypothesis's ``@defines_shrink_pass``); :func:`passes_of` collects them in definition order."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, _PASS_NAME, name)
        return fn

    return mark


def pass_methods(klass: type) -> dict[str, Callable[..., Any]]:
    """Reduction pass name -> the method :func:`defines_pass` marked on ``klass`` (and its bases,
    bases first), in the order they are defined."""
    found: dict[str, Callable[..., Any]] = {}
    for base in reversed(klass.__mro__):
        for value in vars(base).values():
            name = getattr(value, _PASS_NAME, None)
            if isinstance(name, str):
                found[name] = value
    return found


def passes_of(obj: object) -> list[ReductionPass[Any]]:
    """The passes :func:`defines_pass` marked on ``obj``'s class (and its bases, bases first), bound
    to ``obj``, in the order they are defined."""
    return [ReductionPass(name, getattr(obj, method.__name__)) for name, method in pass_methods(type(obj)).items()]


class Trial(Generic[S]):
    """What a running pass tests its candidates with: ``trial(candidate)`` is True when the
    candidate keeps the property (it then becomes :attr:`current`); :meth:`out_of_time` says the
    deadline has passed (a pass that stops because of it leaves the reduction unfinished)."""

    def __init__(self, reducer: Reducer[S], stats: PassStats) -> None:
        self._reducer = reducer
        self._stats = stats
        self.accepted = 0
        self.cut = False

    @property
    def current(self) -> S:
        """The best state so far."""
        return self._reducer.current

    def __call__(self, candidate: S) -> bool:
        """Test ``candidate``; accept it as the current state when the test holds."""
        before = self._reducer.tests
        ok = self._reducer.holds(candidate)
        self._stats.tests += self._reducer.tests - before
        if ok:
            self.accepted += 1
            self._reducer.accept(candidate, self._stats)
        return ok

    def out_of_time(self) -> bool:
        """The deadline has passed (recorded: the reduction then does not count as finished)."""
        if self._reducer.out_of_time():
            self.cut = True
        return self.cut


@dataclass
class Outcome(Generic[S]):
    """What :meth:`Reducer.run` reached: the best state, whether the reduction finished (a round
    without progress, or ``max_rounds`` rounds, all within the deadline) and the rounds it ran."""

    state: S
    complete: bool
    rounds: int


class Reducer(Generic[S]):
    """Runs named passes over a state while ``test`` holds, in rounds (see the module doc).

    ``size`` measures a state per unit; ``key`` (optional) memoizes the test; ``deadline`` is a
    time on ``clock``; ``max_rounds`` bounds the rounds (None: until one makes no progress);
    ``on_improvement`` sees every accepted state; ``stats`` are earlier statistics to add to (a
    resumed reduction).
    """

    def __init__(self, passes: Sequence[ReductionPass[S]], test: Callable[[S], bool],
                 size: Callable[[S], Size], *, key: Callable[[S], Hashable] | None = None,
                 deadline: float = math.inf, clock: Callable[[], float] = time.monotonic,
                 max_rounds: int | None = None, on_improvement: Callable[[S], None] | None = None,
                 stats: Mapping[str, PassStats] | None = None) -> None:
        self.passes = list(passes)
        self.test = test
        self.size = size
        self.key = key
        self.deadline = deadline
        self.clock = clock
        self.max_rounds = max_rounds
        self.on_improvement = on_improvement
        earlier = {name: replace(s, size_removed=dict(s.size_removed)) for name, s in (stats or {}).items()}
        self.stats: dict[str, PassStats] = {p.name: earlier.pop(p.name, PassStats()) for p in self.passes}
        self.stats.update(earlier)  # passes an older version had: kept for the record
        self.tests = 0
        self.rounds = 0
        self.cache: dict[Hashable, bool] = {}
        self._current: S | None = None
        self._size: Size = {}

    @property
    def current(self) -> S:
        """The best state so far (during and after :meth:`run`)."""
        assert self._current is not None, "the reducer has not run"
        return self._current

    def out_of_time(self) -> bool:
        """The deadline has passed."""
        return self.clock() >= self.deadline

    def holds(self, state: S) -> bool:
        """The (memoized) test on ``state``, without accepting it. Raises :class:`OutOfTime` when
        the test is not memoized and the deadline has passed."""
        k = self.key(state) if self.key is not None else None
        if k is not None and k in self.cache:
            return self.cache[k]
        if self.out_of_time():
            raise OutOfTime
        self.tests += 1
        ok = bool(self.test(state))
        if k is not None:
            self.cache[k] = ok
        return ok

    def accept(self, state: S, stats: PassStats) -> None:
        """Make ``state`` the current one, charging what it removed to ``stats``."""
        after = self.size(state)
        stats.successes += 1
        for unit in dict.fromkeys([*self._size, *after]):
            removed = self._size.get(unit, 0) - after.get(unit, 0)
            stats.size_removed[unit] = stats.size_removed.get(unit, 0) + removed
        self._current, self._size = state, after
        if self.on_improvement is not None:
            self.on_improvement(state)

    def _run_pass(self, p: ReductionPass[S]) -> tuple[bool, bool]:
        stats = self.stats[p.name]
        trial = Trial(self, stats)
        start = time.perf_counter()
        stats.calls += 1
        try:
            got = p.run(self.current, trial)
        finally:
            stats.seconds += time.perf_counter() - start
        if got is not None and got is not self._current:
            trial.accepted += 1  # a state the trial did not accept: one more success
            self.accept(got, stats)
        return trial.accepted > 0, trial.cut

    def run(self, state: S) -> Outcome[S]:
        """Reduce ``state`` (for which the test should hold) as far as the passes and the time go."""
        self._current, self._size = state, self.size(state)
        run_rounds = 0
        try:
            while self.max_rounds is None or run_rounds < self.max_rounds:
                if run_rounds and self.out_of_time():  # (the first round's tests check it themselves)
                    return Outcome(self.current, False, run_rounds)
                progress = cut = False
                for p in self.passes:
                    made, stopped = self._run_pass(p)
                    progress, cut = progress or made, cut or stopped
                run_rounds += 1
                self.rounds += 1
                if cut:
                    return Outcome(self.current, False, run_rounds)
                if not progress:
                    break
        except OutOfTime:
            return Outcome(self.current, False, run_rounds)
        return Outcome(self.current, True, run_rounds)


def _removed(size: Mapping[str, int]) -> str:
    parts = [f"{n} {unit}" for unit, n in size.items() if n]
    return ", ".join(parts) or "0"


def stats_table(stats: Mapping[str, PassStats]) -> str:
    """The per-pass statistics as a markdown table (pass, calls, successes, size removed, tests,
    seconds, whether it paid off), useful passes first (Hypothesis's useful/useless passes)."""
    rows = sorted(stats.items(), key=lambda kv: not kv[1].useful)
    lines = ["| Pass | Calls | Successes | Size removed | Tests | Seconds | Paid off |",
             "|---|---:|---:|---|---:|---:|---|"]
    for name, s in rows:
        lines.append(f"| `{name}` | {s.calls} | {s.successes} | {_removed(s.size_removed)} | {s.tests} | "
                     f"{s.seconds:.1f} | {'useful' if s.useful else 'useless'} |")
    return "\n".join(lines)
