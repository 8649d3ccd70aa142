"""The oracle registry: each oracle reads one part of an execution record.

An execution record is a plain dict built by the worker (``error``, ``compare``) or by the
campaign when a worker dies (``death``). Oracles are tried in order; the first bug wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from seedzer.errors import ConfigError
from seedzer.oracles.exceptions import is_precondition_error
from seedzer.outcome import Outcome, Stage, Symptom
from seedzer.protocols import Oracle


def _stage(record_part: dict[str, Any]) -> Stage | None:
    s = record_part.get("stage")
    return Stage(s) if s else None


class CrashOracle:
    """A worker killed by a signal (segfault, abort...) while running a test case."""

    name = "crash"

    def judge(self, record: dict[str, Any]) -> Outcome | None:
        """Bug when the record carries a death by signal."""
        death = record.get("death")
        if not death or death.get("kind") != "signal":
            return None
        return Outcome(Symptom.CRASH, _stage(death), death.get("pass"), death.get("message", ""),
                       {"signal": death.get("signal")})


class HangOracle:
    """A stage that outlived its time limit."""

    name = "hang"

    def judge(self, record: dict[str, Any]) -> Outcome | None:
        """Bug when the record carries a death by timeout."""
        death = record.get("death")
        if not death or death.get("kind") != "timeout":
            return None
        return Outcome(Symptom.HANG, _stage(death), death.get("pass"), death.get("message", ""))


class ExceptionOracle:
    """A TVM error on a well-formed input; precondition errors are invalid inputs instead."""

    name = "exception"

    def judge(self, record: dict[str, Any]) -> Outcome | None:
        """Bug when the record carries an error that is not a precondition violation."""
        err = record.get("error")
        if not err:
            return None
        if err.get("invalid") or is_precondition_error(err.get("message", "")):
            return Outcome(Symptom.INVALID, _stage(err), err.get("pass"), err.get("message", ""))
        return Outcome(Symptom.EXCEPTION, _stage(err), err.get("pass"), err.get("message", ""),
                       {"type": err.get("type", "")})


class MismatchOracle:
    """Optimized and unoptimized builds disagree on the same inputs, and each is deterministic."""

    name = "mismatch"

    def judge(self, record: dict[str, Any]) -> Outcome | None:
        """Bug when the comparison failed and the determinism re-run confirmed it."""
        cmp = record.get("compare")
        if not cmp or not cmp.get("mismatch"):
            return None
        if not cmp.get("deterministic", False):
            return Outcome(Symptom.INVALID, Stage.COMPARE, None, "nondeterministic output", cmp)
        detail = cmp.get("detail", {})
        msg = f"opt and nopt outputs differ: {detail.get('reason', '')} in buffer {detail.get('buffer', '?')}"
        return Outcome(Symptom.MISMATCH, Stage.COMPARE, cmp.get("last_pass"), msg, detail)


class IllformedOracle:
    """A pass turned well-formed IR into IR that fails TIR's own verifier."""

    name = "illformed"

    def judge(self, record: dict[str, Any]) -> Outcome | None:
        """Bug when the worker's well-formedness watch caught a pass breaking the IR."""
        bad = record.get("illformed")
        if not bad:
            return None
        return Outcome(Symptom.ILLFORMED, Stage.PASS, bad.get("pass"),
                       f"IR is ill-formed after {bad.get('pass')}: {bad.get('message', '')}", dict(bad))


class PerfOracle:
    """The optimized build ran slower than the unoptimized one, in every alternating repeat."""

    name = "perf"

    def judge(self, record: dict[str, Any]) -> Outcome | None:
        """Bug when the worker's O3 timing confirmed a slowdown beyond the configured factor."""
        perf = record.get("perf")
        if not perf:
            return None
        msg = (f"optimized build is slower than the unoptimized build "
               f"(x{perf.get('ratio', 0.0):.2f} > x{perf.get('factor', 0.0):g})")
        return Outcome(Symptom.PERF, Stage.RUN, perf.get("last_pass"), msg, dict(perf))


ORACLES: dict[str, Callable[[], Oracle]] = {
    "crash": CrashOracle,
    "hang": HangOracle,
    "illformed": IllformedOracle,
    "exception": ExceptionOracle,
    "mismatch": MismatchOracle,
    "perf": PerfOracle,
}
"""Every oracle by name, in the order they judge a record (the first bug wins)."""


def make_oracles(names: Sequence[str]) -> list[Oracle]:
    """Instantiate the named oracles, in registry order."""
    unknown = [n for n in names if n not in ORACLES]
    if unknown:
        raise ConfigError(f"unknown oracle '{unknown[0]}' (known: {', '.join(ORACLES)})")
    return [factory() for name, factory in ORACLES.items() if name in names]


def judge(oracles: Sequence[Oracle], record: dict[str, Any]) -> Outcome:
    """The outcome of an execution record: the first oracle's verdict, an invalid input, or ok."""
    invalid: Outcome | None = None
    for oracle in oracles:
        verdict = oracle.judge(record)
        if verdict is None:
            continue
        if verdict.symptom is Symptom.INVALID:
            invalid = invalid or verdict
            continue
        return verdict
    if invalid is not None:
        return invalid
    if record.get("error"):  # an error no enabled oracle judges is not counted as a clean run
        err = record["error"]
        return Outcome(Symptom.INVALID, _stage(err), err.get("pass"), err.get("message", ""))
    if record.get("invalid"):
        inv = record["invalid"]
        return Outcome(Symptom.INVALID, _stage(inv), inv.get("pass"), inv.get("message", ""))
    return Outcome.ok()
