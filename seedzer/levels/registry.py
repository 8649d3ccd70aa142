"""The level objects, by name, each imported when first used (see :mod:`seedzer.level_table`)."""

from __future__ import annotations

import importlib

from seedzer.level_table import level_entry, level_names
from seedzer.levels.level import Level


def level(name: str) -> Level:
    """The level object of ``name``; an unknown level is a one-line error listing the levels."""
    module, _, attribute = level_entry(name).target.partition(":")
    found: Level = getattr(importlib.import_module(module), attribute)
    return found


def levels() -> list[Level]:
    """Every registered level's object, in table order."""
    return [level(name) for name in level_names()]
