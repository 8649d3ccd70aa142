"""Operator schemas as the insertion sampler reads them: ONNX's own (``onnx.defs``) for the default
domain, onnxruntime's for its contrib operators (``com.microsoft``, which TVM's importer converts
too). TVM-free.

:func:`op_schema` gives one :class:`Schema` (formal inputs and outputs, attributes with their types,
defaults and the enum values the specification's text lists, type constraints) of an operator at an
opset; :func:`versions` the opsets in which an operator changed. Nothing here is kept by hand: every
fact is read from the installed onnx and onnxruntime.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import onnx
import onnx.defs
from onnx import helper

DEFAULT_DOMAIN, MS_DOMAIN = "", "com.microsoft"
"""The ONNX domain, and onnxruntime's contrib operators' (versions 1 only)."""
SINGLE, OPTIONAL, VARIADIC = 0, 1, 2
"""Formal parameter options (onnx's FormalParameterOption values)."""
_QUOTED = re.compile(r"[\"'`]([A-Za-z_][A-Za-z0-9_]*)[\"'`]")


@dataclass(frozen=True)
class Formal:
    """One formal input or output: its name, option (:data:`SINGLE`, :data:`OPTIONAL`, :data:`VARIADIC`)
    and type (a type parameter such as ``T``, or a concrete ``tensor(int64)``)."""

    name: str
    option: int
    type_str: str


@dataclass(frozen=True)
class Attr:
    """One attribute: its name, type name (``INT``, ``FLOAT``, ``STRING``, ``INTS``, ``FLOATS``,
    ``TENSOR``, ``TYPE_PROTO``...), whether it is required, its default (None when it has none) and,
    for a string, the values the specification's description quotes (its enum)."""

    name: str
    type: str
    required: bool
    default: Any = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Schema:
    """An operator's schema at one opset (see the module docstring)."""

    name: str
    domain: str
    since: int
    inputs: tuple[Formal, ...]
    outputs: tuple[Formal, ...]
    attrs: dict[str, Attr] = field(default_factory=dict)
    types: dict[str, tuple[str, ...]] = field(default_factory=dict)
    deprecated: bool = False

    def allowed(self, type_str: str) -> tuple[str, ...]:
        """The types a formal's ``type_str`` allows (``tensor(float)``, ``seq(tensor(int64))``...)."""
        return self.types.get(type_str, (type_str,))

    def input(self, name: str) -> Formal | None:
        """The formal input called ``name``."""
        return next((f for f in self.inputs if f.name == name), None)


def _enum(description: str, default: Any) -> tuple[str, ...]:
    """The string values a description quotes, the default first."""
    found = [m for m in _QUOTED.findall(description or "") if m == m.strip()]
    values = ([default] if isinstance(default, str) and default else []) + found
    return tuple(dict.fromkeys(values))


def _option(option: Any) -> int:
    return int(getattr(option, "value", option))


def _onnx_schema(op: str, opset: int) -> Schema | None:
    try:
        s = onnx.defs.get_schema(op, opset, DEFAULT_DOMAIN)
    except Exception:  # onnx raises SchemaError for an unknown operator or opset
        return None
    attrs = {}
    for name, a in s.attributes.items():
        default = helper.get_attribute_value(a.default_value) if a.default_value.name else None
        if isinstance(default, bytes):
            default = default.decode()
        attr_type = str(getattr(a.type, "name", a.type)).rsplit(".", 1)[-1]
        attrs[name] = Attr(name, attr_type, bool(a.required), default,
                           _enum(a.description, default) if attr_type == "STRING" else ())
    return Schema(op, DEFAULT_DOMAIN, int(s.since_version),
                  tuple(Formal(f.name, _option(f.option), f.type_str) for f in s.inputs),
                  tuple(Formal(f.name, _option(f.option), f.type_str) for f in s.outputs), attrs,
                  {t.type_param_str: tuple(t.allowed_type_strs) for t in s.type_constraints}, bool(s.deprecated))


@functools.lru_cache(maxsize=1)
def _contrib() -> dict[str, Any]:
    """onnxruntime's contrib schemas by name (empty without onnxruntime's bindings)."""
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as state
    except ImportError:
        return {}
    return {s.name: s for s in state.get_all_operator_schema() if s.domain == MS_DOMAIN}


def _contrib_schema(op: str) -> Schema | None:
    s = _contrib().get(op)
    if s is None:
        return None
    attrs = {name: Attr(name, str(a.type).rsplit(".", 1)[-1], bool(a.required)) for name, a in s.attributes.items()}
    return Schema(op, MS_DOMAIN, int(s.since_version),
                  tuple(Formal(f.name, _option(f.option), f.typeStr) for f in s.inputs),
                  tuple(Formal(f.name, _option(f.option), f.typeStr) for f in s.outputs), attrs,
                  {t.type_param_str: tuple(t.allowed_type_strs) for t in s.type_constraints})


@functools.lru_cache(maxsize=4096)
def op_schema(op: str, opset: int, domain: str = DEFAULT_DOMAIN) -> Schema | None:
    """The schema of ``op`` in ``domain`` in force at ``opset`` (contrib operators: their only
    version), or None when neither onnx nor onnxruntime defines it."""
    return _onnx_schema(op, opset) if domain == DEFAULT_DOMAIN else _contrib_schema(op)


def domain_of(op: str, newest: int) -> str | None:
    """The domain that defines ``op`` (ONNX's first, then onnxruntime's contrib one), or None."""
    if _onnx_schema(op, newest) is not None:
        return DEFAULT_DOMAIN
    return MS_DOMAIN if _contrib_schema(op) is not None else None


@functools.lru_cache(maxsize=1024)
def versions(op: str, newest: int) -> tuple[int, ...]:
    """The default-domain opsets (up to ``newest``) in which ``op`` changed: each schema's since version."""
    found = {s.since for v in range(1, newest + 1) if (s := _onnx_schema(op, v)) is not None}
    return tuple(sorted(found))


def newest_opset() -> int:
    """The newest default-domain opset the installed onnx knows."""
    return int(onnx.defs.onnx_opset_version())
