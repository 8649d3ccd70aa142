"""The ``levels`` section of the configuration (which levels a campaign fuzzes, by weight) and the
``--levels`` option that sets it."""

from __future__ import annotations

import difflib
import json
from typing import Any

from seedzer.config_checks import between, convert_scalar, finite
from seedzer.errors import ConfigError, UsageError
from seedzer.level_table import LEVELS, level_entry


class LevelsConfig:
    """The levels a campaign fuzzes (docs/design.md §11) and how often the schedule picks each: a weight per
    registered level (:mod:`seedzer.level_table`), 0 turns it off; a level not given keeps its default.
    A graph test case costs a whole-model build (several TIR cases' time). In YAML a mapping
    ``{tir: 3, graph: 1}``."""

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self.by_level = {name: entry.weight for name, entry in LEVELS.items()}
        for name, weight in (weights or {}).items():
            level_entry(name)  # an unknown level is a one-line error
            self.by_level[name] = float(weight)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LevelsConfig) and self.by_level == other.by_level

    def __repr__(self) -> str:
        return f"LevelsConfig({self.by_level!r})"

    def weight(self, name: str) -> float:
        """The weight of level ``name`` (0: off)."""
        return self.by_level.get(name, 0.0)

    def weights(self) -> dict[str, float]:
        """Level -> weight, of the levels turned on, in table order."""
        return {name: w for name, w in self.by_level.items() if w > 0}

    @staticmethod
    def from_mapping(data: Any, where: str, source: str) -> LevelsConfig:
        """The section ``where`` of a configuration file: a mapping of registered level names to weights
        (one-line :class:`ConfigError` naming the field otherwise)."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: field '{where}' must be a mapping, got {type(data).__name__}")
        weights: dict[str, float] = {}
        for key, value in data.items():
            dotted = f"{where}.{key}"
            if key not in LEVELS:
                close = difflib.get_close_matches(str(key), list(LEVELS), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ConfigError(f"{source}: unknown field '{dotted}'{hint}")
            weight = convert_scalar(value, float, dotted, source)
            if not between(0, 1000)(weight):
                raise ConfigError(f"{source}: field '{dotted}' must be between 0 (off) and 1000 (got {value!r})")
            weights[str(key)] = weight
        return LevelsConfig(weights)

    def reference(self, prefix: str) -> list[tuple[str, str, str]]:
        """Rows (dotted field, default, doc) of the configuration reference, one per level."""
        return [(f"{prefix}{name}", json.dumps(entry.weight), f"Weight of the {name} level: {entry.doc}")
                for name, entry in LEVELS.items()]


def parse_levels(text: str, current: LevelsConfig, option: str = "--levels") -> LevelsConfig:
    """``tir,graph`` (the levels on, at their configured weight, 1 where it was 0) or ``tir=3,graph=1``
    (explicit weights); the levels not named are turned off. A typo is a one-line error naming ``option``."""
    weights = dict.fromkeys(LEVELS, 0.0)
    names = ", ".join(LEVELS)
    for item in (part.strip() for part in text.split(",") if part.strip()):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in weights:
            raise UsageError(f"{option}: unknown level {name!r} (levels: {names})")
        try:
            weight = float(value) if value else (current.weight(name) or 1.0)
        except ValueError:
            raise UsageError(f"{option}: the weight of {name} must be a number, got {value!r}") from None
        if not finite(weight) or not 0 < weight <= 1000:
            raise UsageError(f"{option}: the weight of {name} must be > 0 and <= 1000 (got {value})")
        weights[name] = weight
    if not any(weights.values()):
        raise UsageError(f"{option}: name at least one level ({names})")
    return LevelsConfig(weights)
