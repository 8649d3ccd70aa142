"""The filing gate's verdict on a candidate, why a candidate is not a bug, and recording a verdict.

Every kind's gate answers with a :class:`Verdict`; :meth:`seedzer.finding.store.FindingStore.settle`
records it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from seedzer.kernel.common import Observation

NOT_REPRODUCED = "not-reproduced"
INSTRUMENTATION = "instrumentation-suspect"
PRECONDITION = "precondition"
CONTRACT = "contract"
VERIFIER = "verifier-default-pipeline"
INVALID = "invalid"
REASONS = (NOT_REPRODUCED, INSTRUMENTATION, PRECONDITION, CONTRACT, VERIFIER, INVALID)
"""Why the gate says not-a-bug (the first word of ``Verdict.reason``)."""


def reason_code(reason: str) -> str:
    """The first word of a verdict's reason (``contract``, ``not-reproduced``...)."""
    return re.split(r"[:\s]", reason, maxsplit=1)[0] or "other"


@dataclass(frozen=True)
class AtFault:
    """The code at fault of a bug, as a maintainer would fix it: a pass, or a component every pass
    reaching it shares (the arithmetic analyzer, code generation, a TOPI operator, a legalization
    rule); the evidence that decided it; and the passes that only reached it."""

    code: str
    evidence: str
    reached: tuple[str, ...] = ()
    """What only led there (``reached_through``): passes, model mutations, the input mode."""
    shared: bool = False
    """The code is a component shared by passes (its root is keyed on it whatever kind filed it)."""
    rule: str = ""
    """The fault rule that named it (:mod:`seedzer.finding.fault`; empty in older folders)."""
    essence: str = ""
    """What the root keys on besides the code, when it is not the failure's own message (a converter that made
    an ill-typed value: the kind of mistake, not the message of whichever consumer tripped on it)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form (``meta.json``'s ``at_fault``)."""
        return {"code": self.code, "evidence": self.evidence, "reached_through": list(self.reached),
                "shared": self.shared, **({"rule": self.rule} if self.rule else {}),
                **({"essence": self.essence} if self.essence else {})}

    @staticmethod
    def from_json(data: dict[str, Any]) -> AtFault:
        """Inverse of :meth:`to_json`."""
        return AtFault(str(data["code"]), str(data.get("evidence") or ""),
                       tuple(str(p) for p in data.get("reached_through") or ()), bool(data.get("shared")),
                       str(data.get("rule") or ""), str(data.get("essence") or ""))


@dataclass
class Verdict:
    """The gate's verdict: ``bug`` with its culprit and root signature, or ``not-a-bug`` and why.

    ``case`` is the case the gate judged, in its kind's form (a bug's reproducer is rewritten from
    it), or None where the folder's case stands (a loader verdict: sending the loader kernel's case
    back would make the campaign process import TVM to unpickle it). ``rule`` names the gate rule
    that decided.
    """

    signature: str
    verdict: str
    reason: str
    case: Any
    observation: Observation
    culprit: list[str] = field(default_factory=list)
    root: str | None = None
    tests: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    rule: str = ""
    at_fault: AtFault | None = None
    """A bug's code at fault (None: a not-a-bug, or a verdict of an older Seedzer)."""
