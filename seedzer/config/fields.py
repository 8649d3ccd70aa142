"""A configuration field: its declaration (default, doc and check together), the value limits every
verb and file shares, and the conversion of a scalar to the field's type, each failure one line
naming the field and showing a bounded excerpt of the value."""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable
from dataclasses import field
from typing import Any, NamedTuple

from seedzer.errors import ConfigError

MAX_JOBS = 1024
"""Most worker processes a campaign (or a generation run) may ask for."""
MAX_MINUTES = 366 * 24 * 60.0
"""Longest campaign budget: a year."""
MIN_TIMEOUT, MAX_TIMEOUT = 1.0, 24 * 3600.0
"""Stage time limits: under a second only makes false hang findings; over a day is a typo."""
INT64 = 2**63 - 1
MAX_POOL = 100_000
"""Most models a pool may be asked to hold."""

EXCERPT_CHARS = 80
"""Longest excerpt of a value an error message shows (a value may be large: a YAML alias nest)."""

_EXCERPT = reprlib.Repr()
_EXCERPT.maxlevel, _EXCERPT.maxlist, _EXCERPT.maxtuple, _EXCERPT.maxdict, _EXCERPT.maxset = 2, 4, 4, 4, 4
_EXCERPT.maxstring = _EXCERPT.maxlong = _EXCERPT.maxother = EXCERPT_CHARS


def excerpt(value: Any) -> str:
    """``repr(value)`` bounded to about :data:`EXCERPT_CHARS` characters, never walking more of the value
    than it shows (a list nested by YAML aliases a billion elements deep costs what its first items do)."""
    text = _EXCERPT.repr(value)
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 3] + "..."


class Check(NamedTuple):
    """A field's check: the sentence a value that fails it is told (after the field's name), and the test."""

    sentence: str
    test: Callable[[Any], bool]

    def problem(self, value: Any) -> str | None:
        """The sentence with an excerpt of ``value`` when it fails, else None."""
        return None if self.test(value) else f"{self.sentence} (got {excerpt(value)})"


def setting(default: Any, doc: str, check: Check | None = None) -> Any:
    """A configuration field: its default (a list or dict is copied for each instance), its doc (the
    configuration reference's) and its check (applied to a value read from YAML or given by an option)."""
    metadata = {"doc": doc, "check": check}
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def finite(v: Any) -> bool:
    """Whether ``v`` is a finite number (not a bool)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def between(low: float, high: float) -> Callable[[Any], bool]:
    """A test that a value is a finite number from ``low`` to ``high``."""
    return lambda v: finite(v) and low <= v <= high


WEIGHT = Check("must be between 0 (off) and 1000", between(0, 1000))
"""The check of a weight (of a level, of a mutation strategy): a number from 0 (off) to 1000."""


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def convert_scalar(value: Any, tp: Any, where: str, source: str) -> Any:
    """``value`` of the YAML field ``where`` as the scalar type ``tp`` (an int where a float is
    expected, a whole float where an int is): a one-line :class:`ConfigError` naming the field
    when it is of another type."""
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise ConfigError(f"{source}: field '{where}' must be a finite number (got {excerpt(value)})") from None
    if tp is int and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)  # 1e9 or 4.0 where a whole number is expected
    if tp in (int, float, str, bool) and (not isinstance(value, tp) or (tp is int and isinstance(value, bool))):
        raise ConfigError(f"{source}: field '{where}' must be {_type_name(tp)}, got {type(value).__name__} "
                          f"{excerpt(value)}")
    return value
