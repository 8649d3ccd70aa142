"""campaign.db's record of the TVM API a level exercises: the denominator of "schedule primitives
exercised N of M".

A level that names the operations of TVM's API it means to reach (:meth:`seedzer.levels.level.Level.api`,
read from the installed TVM when the campaign starts) has them stored as the meta value
``api.<level>``: a campaign read later, or on another machine, reports against the API it ran with.
What the campaign made of them is counted elsewhere: ``pass_triggers`` (test cases that called each
operation, and those in which it accepted its arguments), ``filter_summary`` (refusals, by operation)
and ``mutator_summary`` (the generators used, by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

API_META = "api."
"""Prefix of the meta key of a level's API (``api.<level>``)."""


@dataclass(frozen=True)
class LevelApi:
    """The operations of the installed TVM's API a level means to exercise, and its generators."""

    level: str
    label: str
    """What the operations are, plural (``schedule primitives``)."""
    operations: tuple[str, ...]
    """Their names as the level's test cases report them (``passes_ran``: an instruction kind, ``Split``)."""
    generators: tuple[str, ...] = ()
    """The mutation names of the generators TVM provides that the level draws from (MetaSchedule's rules and
    mutators, dlight's rules), so that a report can say which it used."""
    generators_label: str = ""
    """What the generators are (``MetaSchedule rules and mutators``)."""

    @property
    def key(self) -> str:
        """Its meta key."""
        return API_META + self.level

    def to_json(self) -> dict[str, Any]:
        """The meta value."""
        return {"label": self.label, "operations": list(self.operations), "generators": list(self.generators),
                "generators_label": self.generators_label}

    @staticmethod
    def from_json(level: str, data: Any) -> LevelApi | None:
        """The record of ``level`` (None when ``data`` is not one: a hand-edited or foreign value)."""
        if not isinstance(data, dict):
            return None
        operations, generators = data.get("operations"), data.get("generators", [])
        if not isinstance(operations, list) or not all(isinstance(o, str) for o in operations) \
                or not isinstance(generators, list) or not all(isinstance(g, str) for g in generators):
            return None
        return LevelApi(level, str(data.get("label") or "operations"), tuple(operations), tuple(generators),
                        str(data.get("generators_label") or ""))
