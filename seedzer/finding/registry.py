"""The finding kinds, by name, each imported only when a finding of that kind is handled.

:data:`KINDS` maps a kind (``meta.json``'s ``kind``, the name of the level whose test cases it files)
to ``"module:attribute"`` of its :class:`~seedzer.finding.kind.FindingKind`; the module is imported on
first use (a kind's gate and reducer import TVM or onnx when they run, never when the kind is looked
up). A kind's older name (:data:`~seedzer.finding.meta.KIND_ALIASES`) finds it too. Adding a kind is
one sub-package of :mod:`seedzer.finding` plus one entry here (or a call of :func:`register`).
"""

from __future__ import annotations

import importlib

from seedzer.errors import SeedzerError
from seedzer.finding.kind import FindingKind
from seedzer.finding.meta import canonical_kind

KINDS: dict[str, str] = {
    "tir": "seedzer.finding.tir.kind:KIND",
    "graph": "seedzer.finding.graph.kind:KIND",
    "load": "seedzer.finding.load.kind:KIND",
    "sched": "seedzer.finding.sched.kind:KIND",
}
"""Finding kind -> ``"module:attribute"`` of its :class:`FindingKind`."""
POOL_KIND = "load"
"""The kind of the failures of loading a pool's models (what every level's seeds come from)."""


def register(name: str, target: str) -> None:
    """Make ``target`` (``"module:attribute"``) the finding kind ``name``."""
    KINDS[name] = target


def kind(name: str) -> FindingKind:
    """The finding kind ``name`` (or an older name of it); an unknown kind is a one-line error listing
    the known ones."""
    target = KINDS.get(canonical_kind(name))
    if target is None:
        raise SeedzerError(f"no finding kind '{name}' (known: {', '.join(sorted(KINDS))})")
    module, _, attribute = target.partition(":")
    found: FindingKind = getattr(importlib.import_module(module), attribute)
    return found
