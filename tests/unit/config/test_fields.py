"""A configuration field's declaration and check, scalar conversion and bounded excerpts of values."""

import math
from dataclasses import dataclass, fields

import pytest

from seedzer.config.fields import EXCERPT_CHARS, Check, between, convert_scalar, excerpt, finite, setting
from seedzer.errors import ConfigError


def test_finite_and_between_refuse_bools_infinities_and_values_outside() -> None:
    assert finite(3) and finite(2.5) and not finite(True) and not finite(math.inf) and not finite("3")
    assert between(0, 1)(0.5) and between(0, 1)(1) and not between(0, 1)(1.5) and not between(0, 1)(math.nan)


def test_a_scalar_is_converted_to_its_field_type_or_refused_naming_the_field() -> None:
    assert convert_scalar(3, float, "fuzz.minutes", "c.yaml") == 3.0
    assert convert_scalar(1e9, int, "fuzz.seed", "c.yaml") == 10**9
    assert isinstance(convert_scalar(4.0, int, "x", "c"), int)
    with pytest.raises(ConfigError, match=r"c\.yaml: field 'fuzz\.jobs' must be int, got bool True"):
        convert_scalar(True, int, "fuzz.jobs", "c.yaml")
    with pytest.raises(ConfigError, match="must be a finite number"):
        convert_scalar(10**400, float, "fuzz.minutes", "c.yaml")
    with pytest.raises(ConfigError, match=r"must be int, got float 2\.5"):
        convert_scalar(2.5, int, "fuzz.jobs", "c.yaml")


def test_a_field_carries_its_default_doc_and_check() -> None:
    positive = Check("must be > 0", lambda v: v > 0)

    @dataclass
    class Section:
        size: int = setting(3, "How many.", positive)
        names: list[str] = setting(["a"], "Which.")

    first, second = Section(), Section()
    assert first.names == ["a"] and first.names is not second.names  # a list default is copied per instance
    size = fields(Section)[0]
    assert size.metadata["doc"] == "How many." and size.metadata["check"] is positive
    assert positive.problem(2) is None and positive.problem(-1) == "must be > 0 (got -1)"


def test_an_excerpt_is_bounded_however_large_the_value() -> None:
    nested: list[object] = ["x"]
    for _ in range(30):  # what YAML aliases build: 2**30 leaves, shared
        nested = [nested, nested]
    for value in (nested, "y" * 10_000, 10**400, {str(i): i for i in range(1000)}, b"\x00" * 5000):
        shown = excerpt(value)
        assert len(shown) <= EXCERPT_CHARS and "\n" not in shown
    assert excerpt("telepathy") == "'telepathy'" and excerpt([1, 2]) == "[1, 2]" and excerpt(2.5) == "2.5"
