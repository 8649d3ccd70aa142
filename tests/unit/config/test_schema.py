"""The schema walk: sections built from mappings and checked field by field, a section's conflict hook,
a keyed section handed its mapping, and the way back to plain data, reference rows and checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from seedzer.config.fields import Check, setting
from seedzer.config.schema import Row, build, field_check, reference, to_dict
from seedzer.errors import ConfigError

SMALL = Check("must be < 10", lambda v: v < 10)


@dataclass
class Inner:
    low: int = setting(1, "The low end.", SMALL)
    high: int = setting(5, "The high end.")

    def conflict(self, where: str) -> str | None:
        return f"field '{where}.low' must be <= {where}.high" if self.low > self.high else None


class Names:
    """A keyed section: any key, each a name list."""

    def __init__(self, names: dict[str, list[str]] | None = None) -> None:
        self.names = names or {}

    @classmethod
    def from_mapping(cls, data: Any, where: str, source: str) -> Names:
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: field '{where}' must be a mapping")
        return cls({str(k): list(v) for k, v in data.items()})

    @classmethod
    def reference_rows(cls, prefix: str) -> list[Row]:
        return [(f"{prefix}<any>", "[]", "Names under any key.")]

    @classmethod
    def field_check(cls, dotted: str) -> Check | None:
        return SMALL if dotted == "size" else None

    def to_dict(self) -> Any:
        return dict(self.names)


@dataclass
class Outer:
    inner: Inner = field(default_factory=Inner, metadata={"doc": "An inner section."})
    items: list[Inner] = field(default_factory=list, metadata={"doc": "Inner sections."})
    names: Names = field(default_factory=Names, metadata={"doc": "Names."})
    ratio: float = setting(0.5, "A ratio.")


def test_a_section_is_built_converted_and_checked_naming_the_field() -> None:
    got = build(Outer, {"inner": {"low": 2}, "items": [{"high": 7}], "names": {"a": ["x"]}, "ratio": 1}, "", "c.yaml")
    assert got.inner == Inner(2, 5) and got.items == [Inner(1, 7)] and got.names.names == {"a": ["x"]}
    assert got.ratio == 1.0 and isinstance(got.ratio, float)
    with pytest.raises(ConfigError, match=r"^c\.yaml: field 'items\[0\]\.low' must be < 10 \(got 12\)$"):
        build(Outer, {"items": [{"low": 12}]}, "", "c.yaml")
    with pytest.raises(ConfigError, match=r"^c\.yaml: field 'inner\.low' must be <= inner\.high$"):
        build(Outer, {"inner": {"low": 6}}, "", "c.yaml")
    with pytest.raises(ConfigError, match=r"^c\.yaml: unknown field 'inner\.hihg' \(did you mean 'high'\?\)$"):
        build(Outer, {"inner": {"hihg": 6}}, "", "c.yaml")


def test_an_unknown_key_is_named_by_a_bounded_excerpt() -> None:
    with pytest.raises(ConfigError) as err:
        build(Outer, {"x" * 10_000: 1}, "", "c.yaml")
    assert len(str(err.value)) < 200


def test_plain_data_reference_rows_and_checks_walk_every_kind_of_section() -> None:
    assert to_dict(Outer()) == {"inner": {"low": 1, "high": 5}, "items": [], "names": {}, "ratio": 0.5}
    assert [name for name, _, _ in reference(Outer)] == ["inner.low", "inner.high", "items", "items[].low",
                                                         "items[].high", "names.<any>", "ratio"]
    assert field_check(Outer, "inner.low") is SMALL and field_check(Outer, "items[].low") is SMALL
    assert field_check(Outer, "names.size") is SMALL and field_check(Outer, "inner.high") is None
    assert field_check(Outer, "items[]") is None and field_check(Outer, "nope.low") is None
