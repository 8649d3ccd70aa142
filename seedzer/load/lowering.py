"""Relax to TIR: per-operator PrimFuncs (``LegalizeOps``) and fused ones (the llvm default pipeline).

The fused seeds come from the first half of ``relax.get_default_pipeline(llvm)``: its library
dispatch and legalization passes (``LegalizeOps``, ``AnnotateTIROpPattern``, ``FoldConstant``,
``FuseOps``, ``FuseTIR``), stopping before the dataflow lowering and VM finalization passes. Worker
side only (imports TVM).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tvm
from tvm import relax, tirx

from seedzer.tvmio import parse_primfunc, script_of


@dataclass(frozen=True)
class ScriptSeed:
    """One PrimFunc as TVMScript (named ``main``), the Relax function name it had, and its kind."""

    script: str
    op: str
    fused: bool


@dataclass
class RoundTripFailure:
    """A PrimFunc whose printed TVMScript does not parse back (the seed is dropped)."""

    op: str
    fused: bool
    message: str


def legalize(mod: Any) -> Any:
    """Apply ``relax.transform.LegalizeOps`` (one PrimFunc per operator)."""
    return relax.transform.LegalizeOps()(mod)


def fuse(mod: Any, target: str = "llvm") -> Any:
    """Apply the default pipeline's dispatch and legalization passes (fusion included) for ``target``.

    ``target`` is a kind name or a JSON dict; every llvm target uses the CPU backend's passes.
    """
    from seedzer.load.differential import make_target

    tgt = make_target(target)
    backend = relax.backend.cpu_generic
    with tgt:
        seq = tvm.transform.Sequential(backend.library_dispatch_passes(tgt) + backend.legalize_passes(tgt))
        return seq(mod)


def primfuncs(mod: Any) -> list[tuple[str, Any]]:
    """``(name, PrimFunc)`` for every TIR function of ``mod``, sorted by name for determinism."""
    found = [(gv.name_hint, fn) for gv, fn in mod.functions.items() if isinstance(fn, tirx.PrimFunc)]
    return sorted(found, key=lambda item: item[0])


def to_seeds(
    mod: Any, fused: bool, seen: set[str], roundtrip: bool = True
) -> tuple[list[ScriptSeed], list[RoundTripFailure]]:
    """Scripts of ``mod``'s PrimFuncs not already in ``seen`` (updated), and the round-trip failures.

    With ``roundtrip`` every script is parsed back; a script that does not parse is not a usable seed
    and is reported instead.
    """
    seeds: list[ScriptSeed] = []
    failures: list[RoundTripFailure] = []
    for name, func in primfuncs(mod):
        script = script_of(func)
        if script in seen:
            continue
        seen.add(script)
        if roundtrip:
            try:
                parse_primfunc(script)
            except Exception as exc:  # the TVMScript parser raises many types
                first = next((ln for ln in str(exc).splitlines() if ln.strip()), "")
                failures.append(RoundTripFailure(name, fused, f"{type(exc).__name__}: {first}"))
                continue
        seeds.append(ScriptSeed(script, name, fused))
    return seeds, failures
