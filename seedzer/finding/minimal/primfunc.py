"""The pieces of a plain reproducer that holds a PrimFunc (the TIR and the schedule kinds'): what its search
needs (:class:`PrimFuncMinimalJob`), its TVMScript lines without the printer's comments, the imports it
needs, a target as code, and the inputs the kernel makes for its parameters. TVM-free."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from seedzer.finding.minimal.program import MinimalProgram
from seedzer.finding.minimal.text import Docs

CaseT = TypeVar("CaseT")


@dataclass(frozen=True)
class PrimFuncMinimalJob(Generic[CaseT]):
    """What a kind's search needs: the reduced case (expecting the finding's failure), the code at fault
    the gate named (the culprit passes, the primitive), the docstring and the seconds shrinking may take."""

    case: CaseT
    culprit: tuple[str, ...]
    docs: Docs
    seconds: float = 180.0


def shrunk(script: str, render: Callable[[str], MinimalProgram], holds: Callable[[MinimalProgram, str], bool],
           seconds: float, how: str, aggressive: bool) -> MinimalProgram:
    """The program of ``script`` shrunk (:func:`seedzer.finding.shrink_ir.shrink`, within ``seconds``) while
    ``holds`` of the rendered program and its script, noted with ``how`` it was made and what shrinking did.
    Imports TVM."""
    from seedzer.finding.shrink_ir import shrink

    deadline = time.monotonic() + seconds
    before = render(script).lines
    smaller = shrink(script, lambda s: holds(render(s), s), lambda: time.monotonic() > deadline,
                     aggressive=aggressive)
    program = render(smaller)
    note = (f"shrunk from {before} to {program.lines} lines" if program.lines < before else
            f"shrinking kept it at {program.lines} lines")
    if time.monotonic() > deadline:
        note += " (budget ran out)"
    return dataclasses.replace(program, notes=(how, note))


@dataclass(frozen=True)
class Param:
    """A PrimFunc buffer parameter: its shape and dtype (its inputs are made from them)."""

    shape: tuple[int, ...]
    dtype: str


def function_lines(script: str) -> list[str]:
    """The PrimFunc's TVMScript without the printer's comments (its import hints, ``# with T.sblock``)."""
    return [ln.rstrip() for ln in script.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def imports(script: str, numpy: bool = False) -> list[str]:
    """The imports a PrimFunc's TVMScript needs (``Axis`` only where it is used)."""
    out = ["import numpy as np"] if numpy else []
    out += ["import tvm", "from tvm.script import tirx as T"]
    if any("Axis" in ln for ln in function_lines(script)):
        out.append("from tvm.tirx.layout import Axis")
    return out


def target_text(target: dict[str, Any] | str) -> str:
    """A target as code: ``tvm.target.Target("llvm")`` or ``tvm.target.Target({...})``."""
    return f"tvm.target.Target({json.dumps(target) if isinstance(target, str) else repr(target)})"


def input_lines(params: Sequence[Param], seed: int) -> list[str]:
    """The inputs the kernel makes: from ``seed``, floats uniform in [-1, 1), anything else zeros."""
    items = [f"rng.uniform(-1, 1, {p.shape!r}).astype({p.dtype!r})" if p.dtype.startswith("float")
             else f"np.zeros({p.shape!r}, {p.dtype!r})" for p in params]
    return [f"rng = np.random.default_rng({seed})  # inputs: floats uniform in [-1, 1), other types zero",
            "inputs = [" + ", ".join(items) + "]"]
