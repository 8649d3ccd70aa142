"""The closed outcome type of one test-case execution (LibAFL's ExitKind, extended).

Every component that runs TVM reports one :class:`Outcome`; oracles turn outcomes into findings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from seedzer.kernel.common import Observation, Stage, Symptom

__all__ = ["STAGE_CODES", "Observation", "Outcome", "Stage", "Symptom"]


STAGE_CODES: tuple[Stage, ...] = tuple(Stage)
"""Stable integer codes for stages (index into this tuple), used in shared-memory progress slots."""


@dataclass(frozen=True)
class Outcome:
    """Result of one execution: symptom, the stage and pass it happened in, and the message."""

    symptom: Symptom
    stage: Stage | None = None
    pass_name: str | None = None
    message: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def ok() -> Outcome:
        """The outcome of a clean execution."""
        return Outcome(Symptom.OK)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        d = asdict(self)
        d["symptom"] = self.symptom.value
        d["stage"] = self.stage.value if self.stage else None
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Outcome:
        """Inverse of :meth:`to_dict`."""
        return Outcome(
            symptom=Symptom(d["symptom"]),
            stage=Stage(d["stage"]) if d.get("stage") else None,
            pass_name=d.get("pass_name"),
            message=d.get("message", ""),
            detail=dict(d.get("detail") or {}),
        )
