"""The finding kinds, by name, each imported only when a finding of that kind is handled.

:data:`KINDS` maps a kind (``meta.json``'s ``kind``) to ``"module:attribute"`` of its
:class:`~seedzer.finding.kind.FindingKind`; the module is imported on first use (a kind's gate and
reducer import TVM or onnx when they run, never when the kind is looked up). Adding a kind is one
sub-package of :mod:`seedzer.finding` plus one entry here (or a call of :func:`register`).
"""

from __future__ import annotations

import importlib

from seedzer.errors import SeedzerError
from seedzer.finding.kind import FindingKind

KINDS: dict[str, str] = {
    "lowlevel": "seedzer.finding.lowlevel.kind:KIND",
    "loader": "seedzer.finding.loader.kind:KIND",
    "graph": "seedzer.finding.graph.kind:KIND",
}
"""Finding kind -> ``"module:attribute"`` of its :class:`FindingKind`."""


KIND_LEVELS: dict[str, str] = {"lowlevel": "tir", "loader": "load", "graph": "graph"}
"""Finding kind -> the level its findings come from (``load``: loading the pool's models)."""


def level_of_kind(name: str) -> str:
    """The level findings of kind ``name`` come from (a kind registered without one: its own name)."""
    return KIND_LEVELS.get(name, name)


def register(name: str, target: str) -> None:
    """Make ``target`` (``"module:attribute"``) the finding kind ``name``."""
    KINDS[name] = target


def kind(name: str) -> FindingKind:
    """The finding kind ``name``; an unknown kind is a one-line error listing the known ones."""
    target = KINDS.get(name)
    if target is None:
        raise SeedzerError(f"no finding kind '{name}' (known: {', '.join(sorted(KINDS))})")
    module, _, attribute = target.partition(":")
    found: FindingKind = getattr(importlib.import_module(module), attribute)
    return found
