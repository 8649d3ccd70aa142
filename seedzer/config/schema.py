"""The schema walk: a section (a dataclass of :func:`~seedzer.config.fields.setting` fields) built from
a YAML mapping and checked field by field, and back to plain data and to reference rows.

A section whose keys are not fixed fields (the ``levels`` section: one key per registered level) is a
:class:`KeyedSection`: the walk hands it its mapping. A section with a ``conflict(where)`` method is
asked, once built, whether its fields go together.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, Protocol, runtime_checkable

from seedzer.config.fields import EXCERPT_CHARS, Check, convert_scalar, excerpt
from seedzer.errors import ConfigError

Row = tuple[str, str, str]
"""A row of the configuration reference: (dotted field, default as JSON, doc)."""


@runtime_checkable
class KeyedSection(Protocol):
    """A section whose keys are not fixed fields; the walk calls these on its class or its value."""

    @classmethod
    def from_mapping(cls, data: Any, where: str, source: str) -> Any:
        """The section from the YAML value of field ``where`` (one-line ConfigError naming a bad field)."""
        ...

    @classmethod
    def reference_rows(cls, prefix: str) -> list[Row]:
        """Its rows of the configuration reference, each field named from ``prefix``."""
        ...

    @classmethod
    def field_check(cls, dotted: str) -> Check | None:
        """The check of its field ``dotted`` (relative to the section), None when it has none."""
        ...

    def to_dict(self) -> Any:
        """Its plain-data form (what a configuration file would say)."""
        ...


def _keyed(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, KeyedSection)


def convert(value: Any, tp: Any, where: str, source: str) -> Any:
    """The YAML value of field ``where`` as the field's type ``tp`` (a section, a list, a scalar)."""
    if _keyed(tp):
        return tp.from_mapping(value, where, source)
    if is_dataclass(tp):
        return build(tp, value, where, source)
    origin = typing.get_origin(tp)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{source}: field '{where}' must be a list, got {type(value).__name__}")
        return [convert(v, item_tp, f"{where}[{i}]", source) for i, v in enumerate(value)]
    if origin in (typing.Union, types.UnionType):
        return value
    return convert_scalar(value, tp, where, source)


def unknown_field(source: str, where: str, key: Any, known: list[str]) -> ConfigError:
    """The one-line error of ``key`` of field ``where`` ("" for the top level) that is no field, with the
    closest field's name when one is close."""
    name = str(key) if len(str(key)) <= EXCERPT_CHARS else excerpt(str(key))
    close = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return ConfigError(f"{source}: unknown field '{f'{where}.{name}' if where else name}'{hint}")


def build(cls: Any, data: Any, where: str, source: str) -> Any:
    """The section ``cls`` from the mapping ``data`` of field ``where`` ("" for the top level): every
    field converted to its type and checked; a field not given keeps its default."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        label = f"field '{where}'" if where else "top level"
        raise ConfigError(f"{source}: {label} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = [f.name for f in fields(cls)]
    for key in data:
        if key not in known:
            raise unknown_field(source, where, key, known)
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in data:
            dotted = f"{where}.{f.name}" if where else f.name
            value = convert(data[f.name], hints[f.name], dotted, source)
            check: Check | None = f.metadata.get("check")
            problem = check.problem(value) if check is not None else None
            if problem:
                raise ConfigError(f"{source}: field '{dotted}' {problem}")
            kwargs[f.name] = value
    section = cls(**kwargs)
    conflict = getattr(section, "conflict", None)
    problem = conflict(where) if callable(conflict) else None
    if problem:
        raise ConfigError(f"{source}: {problem}")
    return section


def to_dict(obj: Any) -> Any:
    """Plain-data form of a configuration or any of its sections (for campaign metadata and
    ``seedzer config show``)."""
    if isinstance(obj, KeyedSection) and not isinstance(obj, type):
        return obj.to_dict()
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, list):
        return [to_dict(v) for v in obj]
    return obj


def reference(cls: Any, prefix: str = "") -> list[Row]:
    """Rows (dotted field, default, doc) documenting every field of section ``cls``, named from ``prefix``."""
    rows: list[Row] = []
    hints = typing.get_type_hints(cls)
    for f in fields(cls):
        dotted = f"{prefix}{f.name}"
        tp = hints[f.name]
        if _keyed(tp):
            rows.extend(tp.reference_rows(dotted + "."))
            continue
        if is_dataclass(tp):
            rows.extend(reference(tp, dotted + "."))
            continue
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = None
        rows.append((dotted, json.dumps(to_dict(default)), f.metadata["doc"]))
        if typing.get_origin(tp) is list and is_dataclass(typing.get_args(tp)[0]):
            rows.extend(reference(typing.get_args(tp)[0], dotted + "[]."))
    return rows


def field_check(cls: Any, dotted: str) -> Check | None:
    """The check of field ``dotted`` of section ``cls`` (``[]`` after a list's name for its items:
    ``known_issues[].pattern``), None when the field has none or is no field."""
    head, _, rest = dotted.partition(".")
    name, items = head.removesuffix("[]"), head.endswith("[]")
    found = next((f for f in fields(cls) if f.name == name), None)
    if found is None:
        return None
    tp = typing.get_type_hints(cls)[name]
    if items:
        args = typing.get_args(tp)
        tp = args[0] if typing.get_origin(tp) is list and args else None
    if not rest:
        return None if items else found.metadata.get("check")
    if _keyed(tp):
        return tp.field_check(rest)
    return field_check(tp, rest) if is_dataclass(tp) else None
