"""Typed, validated options of a heuristic: the ``generation:`` and ``selection:`` parts.

Both parts are plain data (picklable, JSON-able) so that they travel to worker processes and into
the pool manifest. Validation errors are one-line :class:`~seedzer.errors.ConfigError` messages
that name the file and the dotted field, e.g. ``heuristics/x.yaml: generation.conv.kernel_sizes:
expected a list of positive integers, got 'three'``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from seedzer.config import excerpt
from seedzer.errors import ConfigError
from seedzer.generate.insert_options import InsertOptions, parse_insert

DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
SOURCES = ("nnsmith", "zoo")
METHODS = ("symbolic-cinit", "symbolic", "symbolic-sinit")
SORT_KEYS = ("weights", "nodes", "distinct_ops", "convs", "edge", "index")
DEFAULT_MAX_WEIGHT_ELEMENTS = 1 << 18


@dataclass(frozen=True)
class ConvOptions:
    """Constraints on every convolution (NNSmith's Conv1d and NCHWConv2d).

    ``kernel_sizes`` (exact set) and ``min_kernel``/``max_kernel`` (inclusive range) restrict each
    kernel dimension; ``square`` forces kernel height == width for 2-D convolutions.
    """

    kernel_sizes: tuple[int, ...] | None = None
    min_kernel: int | None = None
    max_kernel: int | None = None
    square: bool = True

    def allows(self, kernel: list[int]) -> bool:
        """True when a concrete kernel shape satisfies these constraints."""
        for k in kernel:
            if self.kernel_sizes is not None and k not in self.kernel_sizes:
                return False
            if self.min_kernel is not None and k < self.min_kernel:
                return False
            if self.max_kernel is not None and k > self.max_kernel:
                return False
        return not (self.square and len(kernel) == 2 and kernel[0] != kernel[1])

    @property
    def constrained(self) -> bool:
        """True when any kernel constraint is set."""
        return self.kernel_sizes is not None or self.min_kernel is not None or self.max_kernel is not None


@dataclass(frozen=True)
class EdgeOptions:
    """Biases toward the edges of what the ONNX specification allows (each a probability, 0 = off).

    ``broadcast``: a broadcasting op (Add, Mul, Where...) gets a rank-0 or lower-rank operand;
    ``attributes``: an op's symbolic attributes (strides, kernels, pads, slice bounds...) are
    pinned to a range end (0, 1, -1, an input dimension or one less) when z3 can satisfy it;
    ``unit_dims``: a dimension of a new placeholder is pinned to 1;
    ``negative_axes``: an axis of the exported ONNX model (Concat, Softmax, Reduce*, Squeeze...) is
    rewritten to its equivalent negative value.
    """

    broadcast: float = 0.0
    attributes: float = 0.0
    unit_dims: float = 0.0
    negative_axes: float = 0.0

    @property
    def active(self) -> bool:
        """True when any bias is on."""
        return any((self.broadcast, self.attributes, self.unit_dims, self.negative_axes))


@dataclass(frozen=True)
class GenerationOptions:
    """How models are made (NNSmith constraints) or where they come from (``source: zoo``)."""

    source: str = "nnsmith"
    include_ops: tuple[str, ...] | None = None
    exclude_ops: tuple[str, ...] = ()
    op_weights: dict[str, float] = field(default_factory=dict)
    require_ops: tuple[str, ...] = ()
    max_nodes: int = 10
    min_nodes: int | None = None
    dtypes: tuple[str, ...] = ("float32",)
    rank_choices: tuple[int, ...] | None = None
    max_elem_per_tensor: int = 1 << 16
    max_weight_elements: int = DEFAULT_MAX_WEIGHT_ELEMENTS
    conv: ConvOptions = field(default_factory=ConvOptions)
    method: str = "symbolic-cinit"
    timeout_ms: int = 10000
    zoo_models: tuple[str, ...] | None = None
    edge: EdgeOptions = field(default_factory=EdgeOptions)
    insert: InsertOptions = field(default_factory=InsertOptions)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (tuples become lists) for manifests and worker messages.

        ``edge`` and ``insert`` are left out while off (and ``insert.weights`` while empty), so pools made
        before them keep their identity.
        """
        data = dict(json.loads(json.dumps(asdict(self))))
        if not self.edge.active:
            del data["edge"]
        if not self.insert.active:
            del data["insert"]
        elif not self.insert.weights:
            del data["insert"]["weights"]
        return data

    def with_max_nodes(self, max_nodes: int | None) -> GenerationOptions:
        """A copy whose ``max_nodes`` is overridden (``min_nodes`` clamped to it)."""
        if max_nodes is None:
            return self
        if max_nodes < 1:
            raise ConfigError(f"--max-nodes: must be a positive integer, got {max_nodes}")
        lo = self.min_nodes if self.min_nodes is None else min(self.min_nodes, max_nodes)
        return _replace(self, max_nodes=max_nodes, min_nodes=lo)


@dataclass(frozen=True)
class SelectionFilter:
    """Post-hoc filter over manifest entries (ONNX op types, ONNX node counts, weight elements)."""

    min_nodes: int | None = None
    max_nodes: int | None = None
    min_weights: int | None = None
    max_weights: int | None = None
    require_ops: tuple[str, ...] = ()
    exclude_ops: tuple[str, ...] = ()

    def keeps(self, entry: dict[str, Any]) -> bool:
        """True when a manifest entry passes every bound of the filter."""
        nodes, weights, ops = int(entry["nodes"]), int(entry["weights"]), set(entry["ops"])
        if self.min_nodes is not None and nodes < self.min_nodes:
            return False
        if self.max_nodes is not None and nodes > self.max_nodes:
            return False
        if self.min_weights is not None and weights < self.min_weights:
            return False
        if self.max_weights is not None and weights > self.max_weights:
            return False
        if not all(op in ops for op in self.require_ops):
            return False
        return not any(op in ops for op in self.exclude_ops)


@dataclass(frozen=True)
class SelectionOptions:
    """Which generated models form the pool: oversampling factor, filter, and sort order."""

    oversample: float = 1.0
    filter: SelectionFilter = field(default_factory=SelectionFilter)
    sort_by: tuple[str, ...] = ()
    order: str = "ascending"

    @property
    def identity(self) -> bool:
        """True when selection keeps generated models as they are (no staging needed)."""
        return self.oversample == 1.0 and not self.sort_by and self.filter == SelectionFilter()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form for the manifest."""
        return dict(json.loads(json.dumps(asdict(self))))


def _replace(opts: GenerationOptions, **changes: Any) -> GenerationOptions:
    data = {k: getattr(opts, k) for k in opts.__dataclass_fields__}
    data.update(changes)
    return GenerationOptions(**data)


# ----------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------


class _Ctx:
    """Where a value came from, for error messages: file and dotted field path."""

    def __init__(self, source: str, path: str) -> None:
        self.source, self.path = source, path

    def child(self, key: str) -> _Ctx:
        return _Ctx(self.source, f"{self.path}.{key}" if self.path else key)

    def fail(self, expected: str, got: Any) -> ConfigError:
        return ConfigError(f"{self.source}: {self.path}: expected {expected}, got {excerpt(got)}")


def _mapping(ctx: _Ctx, value: Any, allowed: set[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ctx.fail("a mapping", value)
    for key in value:
        if key not in allowed:
            where = ctx.child(str(key))
            raise ConfigError(f"{ctx.source}: {where.path}: unknown key (allowed: {', '.join(sorted(allowed))})")
    return value


def _int(ctx: _Ctx, value: Any, minimum: int = 1) -> int:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)  # 1e3 or 4.0 where a whole number is expected
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ctx.fail(f"an integer >= {minimum}", value)
    return value


def _opt_int(ctx: _Ctx, value: Any, minimum: int = 1) -> int | None:
    return None if value is None else _int(ctx, value, minimum)


def _bool(ctx: _Ctx, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ctx.fail("true or false", value)
    return value


def _choice(ctx: _Ctx, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ctx.fail(f"one of {', '.join(choices)}", value)
    return value


def _str_list(ctx: _Ctx, value: Any, choices: tuple[str, ...] | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ctx.fail("a list of strings", value)
    if choices is not None:
        for v in value:
            if v not in choices:
                raise ctx.fail(f"items among {', '.join(choices)}", v)
    return tuple(value)


def _int_list(ctx: _Ctx, value: Any, minimum: int = 1) -> tuple[int, ...]:
    ok = (
        isinstance(value, list)
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum for v in value)
    )
    if not ok:
        raise ctx.fail(f"a non-empty list of integers >= {minimum}", value)
    return tuple(value)


def _weights(ctx: _Ctx, value: Any) -> dict[str, float]:
    if not isinstance(value, dict):
        raise ctx.fail("a mapping of op name to weight", value)
    out: dict[str, float] = {}
    for k, v in value.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
            raise ctx.child(str(k)).fail("a non-negative number", v)
        out[k] = float(v)
    return out


def parse_conv(ctx: _Ctx, raw: Any) -> ConvOptions:
    """Validate the ``generation.conv`` mapping."""
    data = _mapping(ctx, raw, {"kernel_sizes", "min_kernel", "max_kernel", "square"})
    sizes = data.get("kernel_sizes")
    conv = ConvOptions(
        kernel_sizes=None if sizes is None else _int_list(ctx.child("kernel_sizes"), sizes),
        min_kernel=_opt_int(ctx.child("min_kernel"), data.get("min_kernel")),
        max_kernel=_opt_int(ctx.child("max_kernel"), data.get("max_kernel")),
        square=_bool(ctx.child("square"), data.get("square", True)),
    )
    if conv.min_kernel is not None and conv.max_kernel is not None and conv.min_kernel > conv.max_kernel:
        raise ctx.child("max_kernel").fail(f"a value >= min_kernel ({conv.min_kernel})", conv.max_kernel)
    return conv


def parse_edge(ctx: _Ctx, raw: Any) -> EdgeOptions:
    """Validate the ``generation.edge`` mapping (each value a probability in [0, 1])."""
    data = _mapping(ctx, raw, {"broadcast", "attributes", "unit_dims", "negative_axes"})
    kw: dict[str, float] = {}
    for key, v in data.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
            raise ctx.child(key).fail("a probability between 0 and 1", v)
        kw[key] = float(v)
    return EdgeOptions(**kw)


_GEN_KEYS = {
    "source", "include_ops", "exclude_ops", "op_weights", "require_ops", "max_nodes", "min_nodes",
    "dtypes", "rank_choices", "max_elem_per_tensor", "max_weight_elements", "conv", "method",
    "timeout_ms", "zoo_models", "edge", "insert",
}  # fmt: skip


def parse_generation(raw: Any, source: str) -> GenerationOptions:
    """Validate a ``generation:`` mapping into :class:`GenerationOptions`."""
    ctx = _Ctx(source, "generation")
    data = _mapping(ctx, raw, _GEN_KEYS)
    c = ctx.child
    kw: dict[str, Any] = {}
    if "source" in data:
        kw["source"] = _choice(c("source"), data["source"], SOURCES)
    if data.get("include_ops") is not None:
        kw["include_ops"] = _str_list(c("include_ops"), data["include_ops"])
    if "exclude_ops" in data:
        kw["exclude_ops"] = _str_list(c("exclude_ops"), data["exclude_ops"])
    if "op_weights" in data:
        kw["op_weights"] = _weights(c("op_weights"), data["op_weights"])
    if "require_ops" in data:
        kw["require_ops"] = _str_list(c("require_ops"), data["require_ops"])
    if "max_nodes" in data:
        kw["max_nodes"] = _int(c("max_nodes"), data["max_nodes"])
    if data.get("min_nodes") is not None:
        kw["min_nodes"] = _int(c("min_nodes"), data["min_nodes"])
    if "dtypes" in data:
        kw["dtypes"] = _str_list(c("dtypes"), data["dtypes"], DTYPES)
        if not kw["dtypes"]:
            raise c("dtypes").fail("a non-empty list", data["dtypes"])
    if data.get("rank_choices") is not None:
        kw["rank_choices"] = _int_list(c("rank_choices"), data["rank_choices"], minimum=0)
    for key in ("max_elem_per_tensor", "max_weight_elements", "timeout_ms"):
        if key in data:
            kw[key] = _int(c(key), data[key])
    if "conv" in data:
        kw["conv"] = parse_conv(c("conv"), data["conv"])
    if "method" in data:
        kw["method"] = _choice(c("method"), data["method"], METHODS)
    if data.get("zoo_models") is not None:
        kw["zoo_models"] = _str_list(c("zoo_models"), data["zoo_models"])
    if "edge" in data:
        kw["edge"] = parse_edge(c("edge"), data["edge"])
    if "insert" in data:
        kw["insert"] = parse_insert(c("insert"), _mapping(c("insert"), data["insert"], {"operators", "old_opsets"}))
    opts = GenerationOptions(**kw)
    if opts.min_nodes is not None and opts.min_nodes > opts.max_nodes:
        raise c("min_nodes").fail(f"a value <= max_nodes ({opts.max_nodes})", opts.min_nodes)
    if opts.include_ops is not None and opts.exclude_ops:
        raise ConfigError(f"{source}: generation.exclude_ops: cannot be combined with include_ops")
    return opts


def parse_selection(raw: Any, source: str) -> SelectionOptions:
    """Validate a ``selection:`` mapping into :class:`SelectionOptions`."""
    ctx = _Ctx(source, "selection")
    data = _mapping(ctx, raw, {"oversample", "filter", "sort_by", "order"})
    kw: dict[str, Any] = {}
    if "oversample" in data:
        v = data["oversample"]
        if isinstance(v, bool) or not isinstance(v, int | float) or not 1 <= v <= 100:
            raise ctx.child("oversample").fail("a number between 1 and 100", v)
        kw["oversample"] = float(v)
    if "filter" in data:
        fctx = ctx.child("filter")
        fdata = _mapping(
            fctx, data["filter"],
            {"min_nodes", "max_nodes", "min_weights", "max_weights", "require_ops", "exclude_ops"},
        )  # fmt: skip
        fkw: dict[str, Any] = {}
        for key in ("min_nodes", "max_nodes", "min_weights", "max_weights"):
            if fdata.get(key) is not None:
                fkw[key] = _int(fctx.child(key), fdata[key], minimum=0)
        for key in ("require_ops", "exclude_ops"):
            if key in fdata:
                fkw[key] = _str_list(fctx.child(key), fdata[key])
        kw["filter"] = SelectionFilter(**fkw)
    if "sort_by" in data:
        kw["sort_by"] = _str_list(ctx.child("sort_by"), data["sort_by"], SORT_KEYS)
    if "order" in data:
        kw["order"] = _choice(ctx.child("order"), data["order"], ("ascending", "descending"))
    return SelectionOptions(**kw)


def generation_from_dict(data: dict[str, Any]) -> GenerationOptions:
    """Rebuild options from :meth:`GenerationOptions.to_dict` output (trusted input)."""
    kw = dict(data)
    conv: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in kw["conv"].items()}
    kw["conv"] = ConvOptions(**conv)
    kw["edge"] = EdgeOptions(**kw.get("edge", {}))
    kw["insert"] = InsertOptions(**kw.get("insert", {}))
    for key in ("include_ops", "exclude_ops", "require_ops", "dtypes", "rank_choices", "zoo_models"):
        if isinstance(kw.get(key), list):
            kw[key] = tuple(kw[key])
    return GenerationOptions(**kw)
