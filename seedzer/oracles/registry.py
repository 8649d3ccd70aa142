"""The oracles: which symptoms are findings, and what each symptom's oracle rules out.

The kernel observes a test case in one fixed order and returns one
:class:`~seedzer.kernel.common.Observation`; every executor (worker, gate, reducer, replay) hands it
to :func:`judge`, which applies the oracle of its symptom: a disabled oracle makes the observation
an invalid test case (never a clean one), and an oracle may rule an observation out (a pass stating
a precondition is an invalid input, not a bug).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Protocol

from seedzer.errors import ConfigError
from seedzer.kernel.common import SPECIAL_VALUES, Observation, Symptom
from seedzer.oracles.preconditions import is_precondition_error


class Oracle(Protocol):
    """Judges observations of one symptom."""

    @property
    def name(self) -> str:
        """The oracle's name (``oracles.enabled`` lists these)."""
        ...

    @property
    def symptom(self) -> Symptom:
        """The symptom it judges."""
        ...

    def covers(self, observation: Observation) -> bool:
        """Whether it is the oracle that judges ``observation``."""
        ...

    def judge(self, observation: Observation) -> Observation:
        """The observation as a finding candidate, or turned into an ``invalid`` one."""
        ...


def _invalid(observation: Observation, why: str) -> Observation:
    return dataclasses.replace(observation, symptom=Symptom.INVALID,
                               message=f"{why}: {observation.message}"[:4000])


@dataclasses.dataclass(frozen=True)
class PassThrough:
    """An oracle whose symptom is a finding as observed (crash, hang, mismatch, perf, ill-formed IR)."""

    name: str
    symptom: Symptom

    def covers(self, observation: Observation) -> bool:
        """Every observation of its symptom."""
        return observation.symptom is self.symptom

    def judge(self, observation: Observation) -> Observation:
        """The observation unchanged."""
        return observation


@dataclasses.dataclass(frozen=True)
class ComparisonOracle:
    """A mismatch oracle that judges the mismatches of some comparisons only: ``special-values`` those
    on special input values (where onnxruntime and onnx.reference agree and TVM does not), ``mismatch``
    every other one; each can be turned off alone."""

    name: str
    comparisons: frozenset[str]
    inside: bool = True
    """True: it judges the ``comparisons``; False: every comparison but those."""
    symptom: Symptom = Symptom.MISMATCH

    def covers(self, observation: Observation) -> bool:
        """A mismatch whose comparison is (or, ``inside`` False, is not) among its comparisons."""
        return observation.symptom is self.symptom and (observation.comparison in self.comparisons) == self.inside

    def judge(self, observation: Observation) -> Observation:
        """The observation unchanged."""
        return observation


@dataclasses.dataclass(frozen=True)
class ExceptionOracle:
    """A TVM error on well-formed input; a pass stating a precondition is an invalid input."""

    name: str = "exception"
    symptom: Symptom = Symptom.EXCEPTION

    def covers(self, observation: Observation) -> bool:
        """Every exception."""
        return observation.symptom is self.symptom

    def judge(self, observation: Observation) -> Observation:
        """Precondition errors become invalid test cases."""
        if is_precondition_error(observation.message):
            return _invalid(observation, "precondition")
        return observation


ORACLES: dict[str, Callable[[], Oracle]] = {
    "crash": lambda: PassThrough("crash", Symptom.CRASH),
    "hang": lambda: PassThrough("hang", Symptom.HANG),
    "illformed": lambda: PassThrough("illformed", Symptom.ILLFORMED),
    "exception": ExceptionOracle,
    "mismatch": lambda: ComparisonOracle("mismatch", frozenset({SPECIAL_VALUES}), inside=False),
    "special-values": lambda: ComparisonOracle("special-values", frozenset({SPECIAL_VALUES})),
    "perf": lambda: PassThrough("perf", Symptom.PERF),
}
"""Every oracle by name, in the order the kernel observes their symptoms."""


def make_oracles(names: Sequence[str]) -> list[Oracle]:
    """Instantiate the named oracles, in registry order."""
    unknown = [n for n in names if n not in ORACLES]
    if unknown:
        raise ConfigError(f"unknown oracle '{unknown[0]}' (known: {', '.join(ORACLES)})")
    return [factory() for name, factory in ORACLES.items() if name in names]


def judge(oracles: Sequence[Oracle], observation: Observation) -> Observation:
    """The verdict on one observation: ok and invalid stay; a bug symptom goes to its oracle, or
    becomes invalid when that oracle is not enabled (an error is never counted as a clean run)."""
    if not observation.symptom.is_bug:
        return observation
    for oracle in oracles:
        if oracle.covers(observation):
            return oracle.judge(observation)
    missing = observation.comparison if observation.comparison == SPECIAL_VALUES else observation.symptom.value
    return _invalid(observation, f"{missing} oracle disabled")
