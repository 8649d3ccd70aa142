"""The shared component of TVM a failure was raised in, read off its innermost TVM frames.

A failure surfaces in a pass (or the importer, or the build), but the code at fault is often shared by
every pass that reaches it: the arithmetic analyzer, code generation, a TOPI operator, a legalization
rule. Its innermost TVM frames (:attr:`seedzer.kernel.common.Observation.frames`, or the C++ frames of
a crash report) say which: skipping the infrastructure every failure passes through (the FFI, the IR
visitors' dispatch, the constructors and constant folding of expressions, the pass manager), the
first frame left names either a shared component (:data:`COMPONENTS`) or the pass's own code (no
component: the pass is the unit a maintainer fixes). A component is named down to its class or function
(``arith.IntSetAnalyzer``, ``topi.image.resize``), so two defects of one subsystem stay apart, and a
root keyed on the component is one bug however many passes reach it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from seedzer.kernel.common import Observation

INFRASTRUCTURE = tuple(re.compile(p) for p in (
    r"^tvm::ffi::", r"^tvm::runtime::", r"ObjectMutator", r"Functor", r"Mutator::", r"Visitor::", r"Dispatch",
    r"TVMFFI", r"^tvm::(IntImm|FloatImm|Bool|PrimExpr|Span|Range)::", r"^tvm::(div|floordiv|floormod|truncdiv|"
    r"truncmod|add|sub|mul|cast|min|max|neg|logical_\w+|less\w*|greater\w*|equal|not_equal)\(",
    r"^tvm::prim::", r"TryConstFold", r"^tvm::transform::", r"^tvm::tirx::transform::Sequential",
    r"\(tvm/ir/", r"\(tvm/te/", r"\(tvm/tirx/(expr|stmt|buffer|op|generic)\.py", r"\(tvm/runtime/",
    r"\(tvm/relax/(utils|block_builder|expr)\.py", r"\(tvm/script/", r"\(tvm/driver/",
    r"\(tvm/s_tir/pipeline\.py", r"\(tvm/relax/pipeline\.py", r"\(tvm/relax/transform/transform\.py",
))
"""Frames every failure passes through, never the code at fault."""


@dataclass(frozen=True)
class Component:
    """A shared component of TVM (``name``) and the frame that names it."""

    name: str
    frame: str


def _python_module(prefix: str, label: str, whole: bool = False) -> Callable[[str], str | None]:
    """A namer of frames in TVM's Python package under ``prefix`` (``tvm/topi/``): ``label`` and the
    module's dotted path below it (``topi.image.resize``); with ``whole``, ``label`` alone (the ONNX
    importer is one module whose converters a maintainer knows by the operator, not the file)."""
    pattern = re.compile(rf"\({re.escape(prefix)}([\w/]+)\.py:\d+\)")

    def name(frame: str) -> str | None:
        found = pattern.search(frame)
        if not found:
            return None
        return label if whole else f"{label}.{found.group(1).replace('/', '.')}"

    return name


def _cpp(namespace: str, label: str, member: bool = False) -> Callable[[str], str | None]:
    """A namer of C++ frames in ``namespace``: ``label`` (with ``member``, ``label.<the class or
    function right below the namespace>``: ``arith.IntSetAnalyzer``, ``arith.EstimateRegionStrictBound``)."""
    pattern = re.compile(rf"^(?:[\w:<>, ]+ )?{re.escape(namespace)}(\w+)")

    def name(frame: str) -> str | None:
        found = pattern.search(frame)
        if not found:
            return None
        return f"{label}.{found.group(1)}" if member else label

    return name


COMPONENTS: tuple[Callable[[str], str | None], ...] = (
    _python_module("tvm/topi/", "topi"),
    _cpp("tvm::topi::", "topi", member=True),
    _python_module("tvm/relax/transform/legalize_ops/", "legalize"),
    _python_module("tvm/relax/frontend/onnx/", "relax.frontend.onnx", whole=True),
    _cpp("tvm::arith::", "arith", member=True),
    _cpp("tvm::sym::", "arith", member=True),
    _cpp("tvm::codegen::", "codegen", member=True),
)
"""Shared components, each a namer of a frame (None: not its frame), in the order they are asked."""


def innermost(frames: Sequence[str]) -> str | None:
    """The innermost frame that is not infrastructure (None: none is left)."""
    return next((f for f in reversed(frames) if not any(p.search(f) for p in INFRASTRUCTURE)), None)


def crash_frames(message: str) -> tuple[str, ...]:
    """The C++ frames of a crash's message (``  at tvm::...`` lines, outermost first as TVM prints a
    segfault's stack: innermost first), innermost last."""
    frames = [ln.strip()[3:] for ln in message.splitlines() if ln.strip().startswith("at ")]
    return tuple(reversed(frames))


def component_of(observation: Observation) -> Component | None:
    """The shared component the failure was raised in, or None (raised in a pass's own code, or no
    frames to tell)."""
    frames = observation.frames or crash_frames(observation.message)
    frame = innermost(frames)
    if frame is None:
        return None
    for namer in COMPONENTS:
        name = namer(frame)
        if name is not None:
            return Component(name, frame)
    return None
