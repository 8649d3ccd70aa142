"""The installed ``tvm.s_tir.Schedule`` API, read at run time, and which primitive has a drawer.

Every public method of ``Schedule`` is classified by the FFI function it calls and the instruction
kind that function records in a trace (``tvm.s_tir.schedule.InstructionKind``): a *transforming*
primitive (a kind that is not pure), a *getter* or a *sampler* (pure kinds), the postprocessing
mark, or a method that records nothing (*other*: queries such as ``can_decompose_padding``,
bookkeeping such as ``copy``, ``seed``, ``work_on``, properties). The transforming primitives are
the denominator of "schedule primitives exercised N of M"; :func:`drawer_table` says, for each,
whether :mod:`seedzer.mutate.sched.primitives` draws it or why not. Imports TVM.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re

from seedzer.mutate.sched.primitives import DRAWERS, NO_DRAWER

TRANSFORMING, GETTER, SAMPLER, MARK, OTHER = "transforming", "getter", "sampler", "postproc-mark", "other"
_FFI_CALL = re.compile(r"_ffi_api\.Schedule(\w+)")


@dataclasses.dataclass(frozen=True)
class ApiMethod:
    """One public method of ``tvm.s_tir.Schedule``: the instruction kind it records (None: none) and
    its role."""

    name: str
    kind: str | None
    role: str


def _kind(ffi_name: str) -> tuple[str, bool] | None:
    """``(kind, pure)`` of the instruction ``Schedule<ffi_name>`` records (None: it records none)."""
    from tvm.s_tir.schedule import InstructionKind

    try:
        kind = InstructionKind.get(ffi_name)
    except Exception:  # not an instruction kind: TVM raises on an unknown name
        return None
    return str(kind.name), bool(kind.is_pure)


@functools.cache
def schedule_api() -> tuple[ApiMethod, ...]:
    """Every public method of the installed ``tvm.s_tir.Schedule``, classified (module docstring)."""
    from tvm.s_tir import Schedule

    out = []
    for name, member in inspect.getmembers(Schedule):
        if name.startswith("_") or not callable(member) or isinstance(member, type):
            continue
        try:
            source = inspect.getsource(member)
        except (OSError, TypeError):  # a C extension's method: records nothing
            source = ""
        match = _FFI_CALL.search(source)
        found = _kind(match.group(1)) if match else None
        if found is None:
            out.append(ApiMethod(name, None, OTHER))
            continue
        kind, pure = found
        role = MARK if kind == "EnterPostproc" else (GETTER if kind.startswith("Get") else SAMPLER) if pure \
            else TRANSFORMING
        out.append(ApiMethod(name, kind, role))
    return tuple(out)


def primitives() -> list[ApiMethod]:
    """The transforming primitives of the installed API."""
    return [m for m in schedule_api() if m.role == TRANSFORMING]


def counts() -> dict[str, int]:
    """How many public methods the installed API has, by role (``methods``: all of them)."""
    api = schedule_api()
    out = {role: sum(1 for m in api if m.role == role) for role in (TRANSFORMING, GETTER, SAMPLER, MARK, OTHER)}
    return {"methods": len(api), **out}


@dataclasses.dataclass(frozen=True)
class DrawerRow:
    """One transforming primitive: its method, instruction kind, and its drawer or why it has none."""

    method: str
    kind: str
    drawn: bool
    why_not: str = ""


def drawer_table() -> list[DrawerRow]:
    """Every transforming primitive of the installed API with its drawer (or the reason it has none;
    a primitive the drawers do not know is listed as such)."""
    rows = []
    for method in primitives():
        kind = method.kind or ""
        reason = NO_DRAWER.get(kind, "" if kind in DRAWERS else "no drawer: a primitive this Seedzer does not know")
        rows.append(DrawerRow(method.name, kind, kind in DRAWERS, reason))
    return rows
