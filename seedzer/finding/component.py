"""The shared component of TVM a failure was raised in, read off its TVM frames.

A failure surfaces in a pass (or the importer, or the build), but the code at fault is often shared by
every pass that reaches it: an ONNX converter, a TOPI operator, a legalization rule, a code generator's
intrinsic rule, the arithmetic analyzer. Its TVM frames (:attr:`seedzer.kernel.common.Observation.frames`,
or the C++ frames of a crash report) say which, in three tiers asked in order:

1. **The code generator's intrinsic rule** (:func:`intrinsic_rule`): code generation raising "unknown
   intrinsic" names the operator no rule lowers (``codegen.intrin_rule.tirx.sinh``): the missing rule
   is the defect, not the pass that made the (valid) call. **The constant folder's refusal of a float
   division by a constant zero** (:func:`constant_folding`, ``arith.const_fold``): IEEE 754 defines
   ``x / 0.0`` (±inf or NaN), so when the division only forwards the program's operands (no operator
   owns it, or elementwise arithmetic does: :data:`OPERAND_FORWARDERS`) the folder is at fault; an
   operator that built the division from its own shape arithmetic (resize's ``(w - 1) / (n - 1)``)
   keeps it.
2. **An operator's implementation anywhere on the stack** (:data:`OWNERS`, innermost first): an ONNX
   converter (its class and converter version, ``relax.frontend.onnx.SequenceAt._impl_v11``, or the
   operator the importer's per-node loop was converting), a TOPI operator's module (``topi.nn.rms_norm``),
   a legalization rule. Whatever generic code it called that then checked its arguments (the arithmetic
   analyzer, ``topi.utils``, the tensor expression language, a Relax operator's type inference) only
   tripped on what the operator asked of it.
3. **The innermost frame that is not infrastructure** (:data:`HELPERS`): the arithmetic analyzer or code
   generation, named by class (``arith.IntSetAnalyzer``), or ``topi.utils``; else no component (the
   failure is a pass's own code: the pass is the unit a maintainer fixes).

Infrastructure (:data:`INFRASTRUCTURE`: the FFI, the IR visitors' dispatch, the constructors and
constant folding of expressions, the pass manager) is never the code at fault (constant folding only
by the refusal tier 1 names). A root keyed on a
component is one bug however many passes, kinds or mutations reach it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from seedzer.kernel.common import CONVERTING, Observation

INFRASTRUCTURE = tuple(re.compile(p) for p in (
    r"^tvm::ffi::", r"^tvm::runtime::", r"ObjectMutator", r"Functor", r"Mutator::", r"Visitor::", r"Dispatch",
    r"TVMFFI", r"^tvm::(IntImm|FloatImm|Bool|PrimExpr|Span|Range)::", r"^tvm::(div|floordiv|floormod|truncdiv|"
    r"truncmod|add|sub|mul|cast|min|max|neg|logical_\w+|less\w*|greater\w*|equal|not_equal)\(",
    r"^tvm::prim::", r"TryConstFold", r"^tvm::transform::", r"^tvm::tirx::transform::Sequential",
    r"\(tvm/ir/", r"\(tvm/te/", r"\(tvm/tirx/(expr|stmt|buffer|op|generic)\.py", r"\(tvm/runtime/",
    r"\(tvm/relax/(utils|block_builder|expr)\.py", r"\(tvm/script/", r"\(tvm/driver/",
    r"\(tvm/s_tir/pipeline\.py", r"\(tvm/relax/pipeline\.py", r"\(tvm/relax/transform/transform\.py",
    r"(?:^|\s)tvm::te::[\w:]*(?:operator\(\))?\(", r"\(src/te/",
    r"::Verify\(\) const",
))
"""Frames every failure passes through, never the code at fault; a verifier of generated code
(``CodeGenLLVM::Verify``: "Instruction does not dominate all uses") only reports IR made wrong before it (the b53
audit: VectorizeLoop's out-of-scope let, filed to code generation)."""
IMPORTER = "relax.frontend.onnx"
"""The ONNX importer's name; a converter is named below it (``relax.frontend.onnx.SequenceAt._impl_v11``)."""
_IMPORTER_FILE = re.compile(r"\((tvm/relax/frontend/onnx/[\w/]+\.py):(\d+)\)")
_CONVERTER = re.compile(r"^(?:(\w+)\.)?(_impl_v\d+) \(")


@dataclass(frozen=True)
class Component:
    """A shared component of TVM (``name``) and the frame that names it."""

    name: str
    frame: str


Namer = Callable[[str], str | None]
"""Names the component of one frame, or None (not its frame)."""


def _python_module(prefix: str, label: str, skip: tuple[str, ...] = ()) -> Namer:
    """A namer of frames in TVM's Python package under ``prefix`` (``tvm/topi/``): ``label`` and the
    module's dotted path below it (``topi.image.resize``); the modules in ``skip`` are not its frames."""
    pattern = re.compile(rf"\({re.escape(prefix)}([\w/]+)\.py:\d+\)")

    def name(frame: str) -> str | None:
        found = pattern.search(frame)
        if not found or found.group(1) in skip:
            return None
        return f"{label}.{found.group(1).replace('/', '.')}"

    return name


def _cpp(namespace: str, label: str, member: bool = False) -> Namer:
    """A namer of C++ frames in ``namespace``: ``label`` (with ``member``, ``label.<the class or
    function right below the namespace>``: ``arith.IntSetAnalyzer``, ``arith.EstimateRegionStrictBound``)."""
    pattern = re.compile(rf"^(?:[\w:<>,*& ]+ )?{re.escape(namespace)}(\w+)")  # a return type may be a pointer

    def name(frame: str) -> str | None:
        found = pattern.search(frame)
        if not found:
            return None
        return f"{label}.{found.group(1)}" if member else label

    return name


def _installed(relative: str) -> Path | None:
    """The installed TVM's file at ``relative`` (``tvm/relax/...``), or None without TVM (nothing is imported)."""
    spec = importlib.util.find_spec("tvm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent / relative


def _parsed(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


@lru_cache(maxsize=8)
def _classes(relative: str) -> tuple[tuple[int, int, str], ...]:
    """``(first line, last line, class name)`` of the top-level classes of the installed TVM's module at
    ``relative`` (``tvm/relax/...py``); none when TVM or the file is not found (nothing is imported)."""
    path = _installed(relative)
    tree = _parsed(path) if path is not None else None
    if tree is None:
        return ()
    return tuple((c.lineno, c.end_lineno or c.lineno, c.name) for c in tree.body if isinstance(c, ast.ClassDef))


LEGALIZE_OPS = "tvm/relax/transform/legalize_ops/"
"""Where the installed TVM's Python legalization rules live (each module registers its operators' rules)."""


@lru_cache(maxsize=1)
def _legalizations() -> dict[str, str]:
    """Each Relax operator whose legalization rule a module under :data:`LEGALIZE_OPS` registers
    (``register_legalize("relax.mean", ...)``, as a call or a decorator) and that module's name as a component
    (``legalize.statistical``), read from the installed TVM's source (nothing is imported)."""
    folder = _installed(LEGALIZE_OPS)
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*.py")) if folder is not None else ():
        tree = _parsed(path)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == \
                    "register_legalize" and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                found.setdefault(node.args[0].value, f"legalize.{path.stem}")
    return found


def legalization(op: str) -> str | None:
    """The legalization rule of the Relax operator ``op`` (``relax.mean``) as a component, named as its frames
    are (``legalize.statistical``), or None (no Python rule of the installed TVM registers one)."""
    return _legalizations().get(op)


def _topi_names(node: ast.AST) -> list[str]:
    """The dotted ``topi.X.Y`` names ``node`` refers to, in source order (GPU variants left out)."""
    found: list[tuple[int, int, str]] = []
    for sub in ast.walk(node):
        parts: list[str] = []
        cur: ast.AST = sub
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name) and cur.id == "topi" and parts and "gpu" not in parts and "cuda" not in parts:
            found.append((getattr(sub, "lineno", 0), getattr(sub, "col_offset", 0), ".".join(["topi", *parts[::-1]])))
    names = [name for _, _, name in sorted(found)]
    return [n for n in names if not any(other.startswith(n + ".") for other in names)]  # the longest chains


@lru_cache(maxsize=1)
def _topi_calls() -> dict[str, tuple[str, ...]]:
    """Each Relax operator whose Python legalization rule refers to TOPI functions: those, in source order
    (``relax.gather_nd``: ``topi.transpose``, ``topi.gather_nd``), read from the installed TVM's source (nothing is
    imported)."""
    folder = _installed(LEGALIZE_OPS)
    found: dict[str, tuple[str, ...]] = {}
    for path in sorted(folder.glob("*.py")) if folder is not None else ():
        tree = _parsed(path)
        if tree is None:
            continue
        functions = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
        for node in ast.walk(tree):
            rules: list[tuple[ast.expr, ast.AST]] = []
            if isinstance(node, ast.FunctionDef):
                rules = [(d.args[0], node) for d in node.decorator_list if isinstance(d, ast.Call) and d.args
                         and getattr(d.func, "id", getattr(d.func, "attr", None)) == "register_legalize"]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == \
                    "register_legalize" and len(node.args) > 1:
                rule = node.args[1]
                rules = [(node.args[0], functions.get(rule.id, rule) if isinstance(rule, ast.Name) else rule)]
            for name, body in rules:
                topi = _topi_names(body)
                if isinstance(name, ast.Constant) and isinstance(name.value, str) and topi:
                    found.setdefault(name.value, tuple(topi))
    return found


def lowering_topi(op: str) -> str | None:
    """The TOPI module whose function the legalization rule of the Relax operator ``op`` calls, named as its frames
    are (``topi.vision.nms`` for ``relax.vision.all_class_non_max_suppression``): the one of the operator's own name,
    else the first it calls; None (no rule, no TOPI call, or a name the installed TVM does not resolve). Imports
    ``tvm.topi``."""
    names = _topi_calls().get(op, ())
    own = [n for n in names if n.rsplit(".", 1)[-1] == op.rsplit(".", 1)[-1]]
    if not names:
        return None
    dotted = (own or list(names))[0]
    try:
        value: object = importlib.import_module("tvm.topi")
        for part in dotted.split(".")[1:]:
            value = getattr(value, part)
    except (ImportError, AttributeError):
        return None
    module = getattr(value, "__module__", None)
    return module.removeprefix("tvm.") if isinstance(module, str) and module.startswith("tvm.topi") else None


def _class_at(relative: str, line: int) -> str | None:
    """The class of the installed TVM's module ``relative`` that holds ``line`` (a frame recorded by an
    older Seedzer names a converter method without its class)."""
    return next((name for first, last, name in _classes(relative) if first <= line <= last), None)


def converter(frame: str) -> str | None:
    """The ONNX converter a frame of the importer names: a converter method (``SequenceAt._impl_v11``;
    a frame of an older Seedzer, ``_impl_v11`` alone, finds its class in the installed importer), or the
    operator the importer's per-node loop was converting (:data:`~seedzer.kernel.common.CONVERTING`:
    ``SkipLayerNormalization`` when the failure came after its converter returned). None for any other
    frame (the importer's own plumbing, or a helper a converter calls)."""
    found = _IMPORTER_FILE.search(frame)
    if found is None:
        return None
    if CONVERTING in frame:
        return f"{IMPORTER}.{frame.rsplit(CONVERTING, 1)[1].rstrip(']').strip()}"
    method = _CONVERTER.match(frame)
    if method is None:
        return None
    owner = method.group(1) or _class_at(found.group(1), int(found.group(2)))
    return f"{IMPORTER}.{owner}.{method.group(2)}" if owner else None


def _importer(frame: str) -> str | None:
    """The importer as a whole, for a frame of it that names no converter."""
    return IMPORTER if _IMPORTER_FILE.search(frame) else None


OWNERS: tuple[Namer, ...] = (
    converter,
    _python_module("tvm/topi/", "topi", skip=("utils",)),
    _cpp("tvm::topi::", "topi", member=True),
    _python_module("tvm/relax/transform/legalize_ops/", "legalize"),
)
"""Code that implements an operator, asked of every frame from the innermost out: the first frame one
names is the component (a helper it called only checked what it was given)."""
HELPERS: tuple[Namer, ...] = (
    _python_module("tvm/topi/", "topi"),
    _cpp("tvm::arith::", "arith", member=True),
    _cpp("tvm::sym::", "arith", member=True),
    _cpp("tvm::codegen::", "codegen", member=True),
    _importer,
)
"""Shared components asked of the innermost frame that is not infrastructure only, in order."""
UNKNOWN_INTRINSIC = re.compile(r"unknown intrinsic .*?name=\"([\w.]+)\"")
"""Code generation's error for a call no intrinsic rule lowers (the operator's name follows)."""


def intrinsic_rule(message: str, frames: Sequence[str]) -> Component | None:
    """The intrinsic rule code generation lacks, when it raised "unknown intrinsic" for an operator:
    ``codegen.intrin_rule.<operator>`` (a vectorized ``tirx.sinh`` that VectorizeLoop made, validly, is
    the rule's defect)."""
    found = UNKNOWN_INTRINSIC.search(message)
    frame = next((f for f in reversed(frames) if "tvm::codegen::" in f), None)
    if found is None or frame is None:
        return None
    return Component(f"codegen.intrin_rule.{found.group(1)}", frame)


CONSTANT_FOLDER = "arith.const_fold"
"""TVM's arithmetic constant folding (``TryConstFold<Div>`` in ``src/arith/const_fold.h``; ``src/ir/prim/`` in
0.27), named as a component."""
FLOAT_DIVISION_BY_ZERO = re.compile(r"fb->value != 0\b.*Divide by zero")
"""The constant folder's refusal of a float division by a constant zero (its float divisor is ``fb``; an integer
divisor, whose division by zero is undefined, is ``pb``)."""
OPERAND_FORWARDERS = frozenset({"topi.broadcast", "legalize.binary"})
"""Operator implementations whose division only forwards the program's operands (elementwise arithmetic): the
zero divisor is the program's, the refusal to fold it the folder's."""


def constant_folding(message: str, frames: Sequence[str], owner: Component | None) -> Component | None:
    """The constant folder (:data:`CONSTANT_FOLDER`), when it refused a float division by a constant zero that
    IEEE 754 defines (``x / 0.0`` is ±inf or NaN; onnxruntime computes it) and no operator's own arithmetic
    (``owner``, the component the frames name otherwise) built the division: elementwise arithmetic
    (:data:`OPERAND_FORWARDERS`) or a pass only handed it the program's operands. None otherwise."""
    if not FLOAT_DIVISION_BY_ZERO.search(message) or (owner is not None and owner.name not in OPERAND_FORWARDERS):
        return None
    frame = next((f for f in reversed(frames) if "TryConstFold" in f), None)
    return Component(CONSTANT_FOLDER, frame or message.strip().splitlines()[0])


def infrastructure(frame: str) -> bool:
    """Whether ``frame`` is code every failure passes through (:data:`INFRASTRUCTURE`)."""
    return any(p.search(frame) for p in INFRASTRUCTURE)


def innermost(frames: Sequence[str]) -> str | None:
    """The innermost frame that is not infrastructure (None: none is left)."""
    return next((f for f in reversed(frames) if not infrastructure(f)), None)


def crash_frames(message: str) -> tuple[str, ...]:
    """The C++ frames of a crash's message (``  at tvm::...`` lines, outermost first as TVM prints a
    segfault's stack: innermost first), innermost last."""
    frames = [ln.strip()[3:] for ln in message.splitlines() if ln.strip().startswith("at ")]
    return tuple(reversed(frames))


def _first(namers: Sequence[Namer], frames: Sequence[str]) -> Component | None:
    for frame in frames:
        for namer in namers:
            name = namer(frame)
            if name is not None:
                return Component(name, frame)
    return None


def component_of(observation: Observation) -> Component | None:
    """The shared component the failure was raised in (see the module docstring), or None (raised in a
    pass's own code, or no frames to tell)."""
    frames = observation.frames or crash_frames(observation.message)
    rule = intrinsic_rule(observation.message, frames)
    if rule is not None:
        return rule
    inner_first = [f for f in reversed(frames) if not infrastructure(f)]
    owner = _first(OWNERS, inner_first)
    folder = constant_folding(observation.message, frames, owner)
    if folder is not None:
        return folder
    if owner is not None:
        return owner
    return _first(HELPERS, inner_first[:1])
