"""The data the IR mutators share: sites (mutable positions with their context), loop facts, and
the size-weighted choice among sites. Filled in by :func:`seedzer.tir.nodes.analyze`."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tvm import tirx

from seedzer.tir.ir import Path, dtype_of

SIZE_EXPONENT = 1.0
"""Site weight = subtree size ** SIZE_EXPONENT (1.0: proportional to subtree size)."""


@dataclass(frozen=True)
class ScopeVar:
    """A scalar variable usable at a site, with its value range [lo, hi) when known."""

    var: Any
    dtype: str
    lo: int | None = None
    hi: int | None = None


@dataclass
class Site:
    """One mutable position: a statement, or an expression in a value position."""

    path: Path
    node: Any
    is_stmt: bool
    size: int = 1
    scope: tuple[ScopeVar, ...] = ()
    block_path: Path | None = None
    loops: tuple[Path, ...] = ()
    parent: Any = None
    role: str = ""
    def_var: Any = None
    store_buffer: Any = None
    stmt_path: Path | None = None
    guarded: bool = False
    writes_alloc: bool = False
    defines: bool = False
    has_access: bool = False
    in_block: bool = False

    @property
    def dtype(self) -> str:
        """The dtype of an expression site (``""`` for statements)."""
        return "" if self.is_stmt else dtype_of(self.node)

    @property
    def removable(self) -> bool:
        """Whether the statement may be deleted or skipped without exposing uninitialised memory."""
        return (
            self.is_stmt
            and not self.writes_alloc
            and not isinstance(self.node, (tirx.Bind, tirx.AllocBuffer, tirx.DeclBuffer))
        )


@dataclass
class LoopInfo:
    """Facts about one ``For`` loop used by the loop mutators."""

    path: Path
    node: Any
    const_extent: int | None
    parallel_safe: bool
    inside_parallel: bool
    contains_parallel: bool
    unrolled_product: int


@dataclass
class Analysis:
    """All sites of one PrimFunc plus the buffer facts the mutators need."""

    func: Any
    sites: list[Site] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)
    inputs: list[Any] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    scalar_params: list[ScopeVar] = field(default_factory=list)
    has_blocks: bool = False
    by_path: dict[Path, Site] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_path = {s.path: s for s in self.sites}

    def stmt_sites(self) -> list[Site]:
        """Statement sites."""
        return [s for s in self.sites if s.is_stmt]

    def expr_sites(self) -> list[Site]:
        """Expression sites (value positions only)."""
        return [s for s in self.sites if not s.is_stmt]


def choose(sites: Iterable[Site], rng: random.Random, exponent: float = SIZE_EXPONENT) -> Site | None:
    """Pick one site with probability proportional to ``size ** exponent``; None if there are none."""
    pool = list(sites)
    if not pool:
        return None
    return rng.choices(pool, weights=[float(s.size) ** exponent for s in pool], k=1)[0]
