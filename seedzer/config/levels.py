"""The ``levels`` section of the configuration: which levels a campaign fuzzes (by weight) and each
level's own settings, and the ``--levels`` option that sets the weights.

A level's settings are a section of its own, declared by the level: its entry in
:mod:`seedzer.level_table` names the dataclass (:attr:`~seedzer.level_table.LevelEntry.settings`,
``"module:Class"``, imported when first used, TVM-free), whose fields are
:func:`~seedzer.config.fields.setting` fields like the house's. In YAML, ``levels.<name>`` is the
level's weight (``levels: {a: 3}``) or a mapping of its ``weight`` and its settings
(``levels: {a: {weight: 3, some_setting: 2}}``). Nothing here names a level.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any

from seedzer.config.fields import WEIGHT, Check, convert_scalar, finite
from seedzer.config.schema import Row, build, field_check, reference, to_dict, unknown_field
from seedzer.errors import ConfigError, SeedzerError, UsageError
from seedzer.level_table import LEVELS, level_entry

WEIGHT_KEY = "weight"
"""The key of a level's weight in the mapping form of ``levels.<name>`` (no level's setting may take it)."""


@cache
def _imported(target: str) -> type:
    module, _, attribute = target.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    if not is_dataclass(found) or not isinstance(found, type):
        raise SeedzerError(f"{target}: a level's settings must be a dataclass")
    if any(f.name == WEIGHT_KEY for f in fields(found)):
        raise SeedzerError(f"{target}: a level's setting may not be named '{WEIGHT_KEY}' (the level's weight)")
    return found


def settings_class(name: str) -> type | None:
    """The settings section of level ``name`` (None for a level without settings of its own)."""
    target = level_entry(name).settings
    return _imported(target) if target else None


class LevelsConfig:
    """The levels a campaign fuzzes (docs/design.md §11), how often the schedule picks each, and each
    one's own settings: a weight per registered level (:mod:`seedzer.level_table`), 0 turns it off; a
    level not given keeps its default weight and settings. In YAML a mapping of level names to
    weights or to mappings of ``weight`` and settings (see the module docstring)."""

    def __init__(self, weights: dict[str, float] | None = None, settings: dict[str, Any] | None = None) -> None:
        self.by_level = {name: entry.default_weight for name, entry in LEVELS.items()}
        for name, weight in (weights or {}).items():
            level_entry(name)  # an unknown level is a one-line error
            self.by_level[name] = float(weight)
        self.by_settings: dict[str, Any] = {}
        for name in LEVELS:
            cls = settings_class(name)
            if cls is not None:
                given = (settings or {}).get(name)
                self.by_settings[name] = given if isinstance(given, cls) else cls()

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LevelsConfig) and self.by_level == other.by_level
                and self.by_settings == other.by_settings)

    def __repr__(self) -> str:
        return f"LevelsConfig({self.by_level!r}, {self.by_settings!r})"

    def weight(self, name: str) -> float:
        """The weight of level ``name`` (0: off)."""
        return self.by_level.get(name, 0.0)

    def weights(self) -> dict[str, float]:
        """Level -> weight, of the levels turned on, in table order."""
        return {name: w for name, w in self.by_level.items() if w > 0}

    def settings(self) -> dict[str, Any]:
        """Level -> its own settings section, for every level that declares one (what workers get)."""
        return dict(self.by_settings)

    def with_weights(self, weights: dict[str, float]) -> LevelsConfig:
        """These settings with other weights (a level not in ``weights`` is turned off)."""
        return LevelsConfig({name: weights.get(name, 0.0) for name in self.by_level}, self.by_settings)

    @classmethod
    def from_mapping(cls, data: Any, where: str, source: str) -> LevelsConfig:
        """The section ``where`` of a configuration file (one-line :class:`ConfigError` naming the field
        otherwise; at least one level must keep a weight > 0)."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: field '{where}' must be a mapping, got {type(data).__name__}")
        weights: dict[str, float] = {}
        settings: dict[str, Any] = {}
        for key, value in data.items():
            dotted = f"{where}.{key}"
            if key not in LEVELS:
                raise unknown_field(source, where, key, list(LEVELS))
            if not isinstance(value, dict):
                weights[key] = _weight(value, dotted, source)
                continue
            body = dict(value)
            if WEIGHT_KEY in body:
                weights[key] = _weight(body.pop(WEIGHT_KEY), f"{dotted}.{WEIGHT_KEY}", source)
            section = settings_class(key)
            if section is not None:
                settings[key] = build(section, body, dotted, source)
            elif body:
                raise unknown_field(source, dotted, next(iter(body)), [WEIGHT_KEY])
        levels = LevelsConfig(weights, settings)
        if not levels.weights():
            raise ConfigError(f"{source}: field '{where}' turns every level off (give one of {', '.join(LEVELS)} "
                              "a weight > 0)")
        return levels

    @classmethod
    def reference_rows(cls, prefix: str) -> list[Row]:
        """Rows (dotted field, default, doc) of the configuration reference: each level's weight, then its
        settings."""
        rows: list[Row] = []
        for name, entry in LEVELS.items():
            opt_in = f" Opt-in: off unless named, then {entry.weight:g}." if entry.opt_in else ""
            rows.append((f"{prefix}{name}.{WEIGHT_KEY}", json.dumps(entry.default_weight),
                         f"Weight of the {name} level (`{prefix}{name}: {entry.weight:g}` for short): {entry.doc}"
                         + opt_in))
            section = settings_class(name)
            if section is not None:
                rows.extend(reference(section, f"{prefix}{name}."))
        return rows

    @classmethod
    def field_check(cls, dotted: str) -> Check | None:
        """The check of ``<level>`` or ``<level>.weight`` (a weight) or ``<level>.<setting>``."""
        name, _, rest = dotted.partition(".")
        if name not in LEVELS:
            return None
        if rest in ("", WEIGHT_KEY):
            return WEIGHT
        section = settings_class(name)
        return field_check(section, rest) if section is not None else None

    def to_dict(self) -> dict[str, Any]:
        """Every level's weight and settings, in the mapping form."""
        return {name: {WEIGHT_KEY: weight, **(to_dict(self.by_settings[name]) if name in self.by_settings else {})}
                for name, weight in self.by_level.items()}


def _weight(value: Any, dotted: str, source: str) -> float:
    weight = convert_scalar(value, float, dotted, source)
    problem = WEIGHT.problem(weight)
    if problem:
        raise ConfigError(f"{source}: field '{dotted}' {problem}")
    return float(weight)


def parse_levels(text: str, current: LevelsConfig, option: str = "--levels") -> LevelsConfig:
    """``a,b`` (the levels on, at their configured weight; an opt-in level off by default at its table weight,
    1 where that is 0 too) or ``a=3,b=1`` (explicit
    weights); the levels not named are turned off, every level keeps its settings. A typo is a one-line
    error naming ``option``."""
    weights = dict.fromkeys(LEVELS, 0.0)
    names = ", ".join(LEVELS)
    for item in (part.strip() for part in text.split(",") if part.strip()):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in weights:
            raise UsageError(f"{option}: unknown level {name!r} (levels: {names})")
        try:
            weight = float(value) if value else (current.weight(name) or level_entry(name).weight or 1.0)
        except ValueError:
            raise UsageError(f"{option}: the weight of {name} must be a number, got {value!r}") from None
        if not finite(weight) or not 0 < weight <= 1000:
            raise UsageError(f"{option}: the weight of {name} must be > 0 and <= 1000 (got {value})")
        weights[name] = weight
    if not any(weights.values()):
        raise UsageError(f"{option}: name at least one level ({names})")
    return current.with_weights(weights)
