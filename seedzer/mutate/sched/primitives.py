"""Random schedule primitives: one drawer per primitive of ``tvm.s_tir.Schedule``, drawing its
arguments from the function's blocks, loops and buffers as they are at that point of the trace.

A drawer writes the primitive (and the getters and samplers it needs) into a
:class:`~seedzer.mutate.sched.structure.Draft`, in TVM's trace JSON layout (the kernel's
:data:`~seedzer.kernel.sched.apply.APPLY` reads the same layout back), or returns False when the
function has nothing it applies to. Arguments are drawn to reach the primitive's edges as well as
its common use: loop factors at their ends (1, the extent, small primes, a divisor, a non-divisor,
the extent plus one), indices ``-1``, ``-2`` and in-range positions, every storage scope a CPU
build allocates (``global``, ``local``), spatial and reduction loops alike (a refusal is counted,
never a bug). :data:`DRAWERS` is the table of primitives with a drawer; :data:`NO_DRAWER` says why
each other transforming primitive has none. Imports nothing from TVM itself (the view was read with it).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from seedzer.mutate.sched.indexmap import Expr, fuse_dims, index_map_json, permutation, split_dim
from seedzer.mutate.sched.structure import Block, Buffer, Draft

Drawer = Callable[[Draft, random.Random], bool]
"""Writes one primitive into a draft; False when nothing in the function fits it."""
SCOPES = ("global", "local")
"""Storage scopes a CPU build allocates."""
PRIMES = (2, 3, 5, 7)
ANNOTATIONS: dict[str, Callable[[random.Random], Any]] = {
    "pragma_auto_unroll_max_step": lambda r: r.choice((0, 1, 4, 16, 64, 512)),
    "pragma_unroll_explicit": lambda r: r.choice((0, 1)),
    "pragma_loop_partition_hint": lambda r: r.choice((0, 1)),
    "meta_schedule.parallel": lambda r: r.choice((1, 2, 16, 32, 64, 512)),
    "meta_schedule.vectorize": lambda r: r.choice((1, 4, 16, 64)),
    "meta_schedule.unroll_explicit": lambda r: r.choice((0, 16, 64, 512)),
    "meta_schedule.unroll_implicit": lambda r: r.choice((0, 16, 64, 512)),
    "meta_schedule.auto_tensorize": lambda r: '"seedzer_no_such_intrin"',
    "software_pipeline_stage": lambda r: [r.choice((0, 1)), r.choice((0, 1))],
    "seedzer.mark": lambda r: r.choice((0, 1.5, '"text"')),
}
"""Annotation keys TVM's passes, postprocessors or nobody read, with value drawers."""
UNROLL_KEYS = {"meta_schedule.unroll_explicit": "meta_schedule.unroll_implicit",
               "meta_schedule.unroll_implicit": "meta_schedule.unroll_explicit"}


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def factor(extent: int | None, rng: random.Random) -> int:
    """A loop factor at its ends or inside: 1, the extent, a small prime, a divisor, a non-divisor,
    the extent plus one."""
    if extent is None or extent < 1:
        return rng.choice((1, *PRIMES))
    non_divisors = [d for d in range(2, extent) if extent % d] or [extent + 1]
    return rng.choice((1, extent, rng.choice(PRIMES), rng.choice(_divisors(extent)), rng.choice(non_divisors),
                       extent + 1))


def perfect_tile(extent: int, n: int, rng: random.Random) -> list[int]:
    """``n`` factors whose product is ``extent`` (a decision of ``sample_perfect_tile``)."""
    out = [1] * n
    rest = extent
    for i in range(n - 1):
        d = rng.choice(_divisors(rest))
        out[i], rest = d, rest // d
    out[-1] = rest
    rng.shuffle(out)
    return out


def _pick_block(draft: Draft, rng: random.Random, test: Callable[[Block], bool]) -> Block | None:
    blocks = [b for b in draft.view.blocks if test(b)]
    return rng.choice(blocks) if blocks else None


def _pick_loop(draft: Draft, rng: random.Random, test: Callable[[Block], bool] = lambda b: True,
               want: str = "") -> tuple[Block, int] | None:
    """A block and the index of one of its loops (preferring loops feeding ``want`` iterators)."""
    block = _pick_block(draft, rng, lambda b: bool(b.loops) and test(b))
    if block is None:
        return None
    preferred = [i for i, lp in enumerate(block.loops) if want and want in lp.feeds]
    indices = preferred if preferred and rng.random() < 0.8 else list(range(len(block.loops)))
    return block, rng.choice(indices)


def _buffer_of(block: Block, rng: random.Random, writes: bool | None = None) -> tuple[str, int, Buffer] | None:
    """``("read" | "write", index, buffer)`` of one of ``block``'s buffers."""
    pool: list[tuple[str, int, Buffer]] = []
    if writes is not True:
        pool += [("read", i, b) for i, b in enumerate(block.reads)]
    if writes is not False:
        pool += [("write", i, b) for i, b in enumerate(block.writes)]
    return rng.choice(pool) if pool else None


def _factors(extent: int | None, n: int, rng: random.Random) -> list[Any]:
    """Split factors: one ``None`` (inferred) and ``n - 1`` drawn ones."""
    out: list[Any] = [factor(extent, rng) for _ in range(n)]
    out[rng.randrange(n)] = "None"
    return out


def draw_split(draft: Draft, rng: random.Random) -> bool:
    found = _pick_loop(draft, rng)
    if found is None:
        return False
    block, index = found
    loop = draft.loops(block.name)[index]
    extent = block.loops[index].extent
    n = rng.choice((2, 2, 2, 3, 4))
    exact = bool(extent) and rng.random() < 0.4
    if exact:
        factors: list[Any] = draft.emit("SamplePerfectTile", [loop], [n, rng.choice((16, 64))], "v" * n,
                                        decision=perfect_tile(extent or 1, n, rng))
    else:
        factors = _factors(extent, n, rng)
    # disable_predication promises that the factors divide the loop: only a perfect tile keeps it
    draft.emit("Split", [loop, *factors], [rng.random() < 0.8, exact and rng.random() < 0.3], "l" * n)
    return True


def draw_loop_partition(draft: Draft, rng: random.Random) -> bool:
    found = _pick_loop(draft, rng, lambda b: any((lp.extent or 0) >= 2 for lp in b.loops))
    if found is None:
        return False
    block, index = found
    loop = draft.loops(block.name)[index]
    extent = block.loops[index].extent
    n = rng.choice((2, 2, 3))
    if extent and rng.random() < 0.3:
        factors: list[Any] = draft.emit("SamplePartitionedTile", [loop], [n, 0, 1], "v" * n,
                                        decision=perfect_tile(extent, n, rng))
    elif extent and extent >= n and rng.random() < 0.8:  # parts that leave room for the last one
        cuts = sorted(rng.sample(range(1, extent), n - 1))
        factors = [b - a for a, b in zip([0, *cuts[:-1]], cuts, strict=True)] + ["None"]
    else:
        factors = _factors(extent, n, rng)
    draft.emit("LoopPartition", [loop, *factors], [rng.random() < 0.8], "l" * n)
    return True


def draw_fuse(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: len(b.loops) >= 2)
    if block is None:
        return False
    start = rng.randrange(len(block.loops) - 1)
    stop = rng.randrange(start + 2, len(block.loops) + 1)
    draft.emit("Fuse", draft.loops(block.name)[start:stop], [rng.random() < 0.8], "l")
    return True


def draw_merge(draft: Draft, rng: random.Random) -> bool:
    blocks = [b for b in draft.view.blocks if b.loops and not b.nested]
    if len(blocks) < 2:
        return False
    first, second = rng.sample(blocks, 2)
    depth = rng.randrange(min(len(first.loops), len(second.loops)))
    draft.emit("Merge", [draft.loops(first.name)[depth], draft.loops(second.name)[depth]], [], "l")
    return True


def draw_reorder(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: len(b.loops) >= 2)
    if block is None:
        return False
    loops = draft.loops(block.name)
    chosen = rng.sample(loops, rng.randrange(2, len(loops) + 1))
    draft.emit("Reorder", chosen)
    return True


def draw_reorder_block_iter_var(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: len(b.iters) >= 2)
    if block is None:
        return False
    order = list(range(len(block.iters)))
    rng.shuffle(order)
    draft.emit("ReorderBlockIterVar", [draft.block(block.name), order])
    return True


def draw_add_unit_loop(draft: Draft, rng: random.Random) -> bool:
    found = _pick_loop(draft, rng)
    if found is not None and rng.random() < 0.5:
        draft.emit("AddUnitLoop", [draft.loops(found[0].name)[found[1]]], [], "l")
        return True
    block = _pick_block(draft, rng, lambda b: True)
    if block is None:
        return False
    draft.emit("AddUnitLoop", [draft.block(block.name)], [], "l")
    return True


def _loop_primitive(kind: str, want: str) -> Drawer:
    def draw(draft: Draft, rng: random.Random) -> bool:
        found = _pick_loop(draft, rng, want=want)
        if found is None:
            return False
        draft.emit(kind, [draft.loops(found[0].name)[found[1]]])
        return True

    draw.__name__ = f"draw_{kind.lower()}"
    return draw


def draw_annotate(draft: Draft, rng: random.Random) -> bool:
    key = rng.choice(sorted(ANNOTATIONS))
    if key.startswith("meta_schedule.") and rng.random() < 0.6:
        target = draft.block("root")
        other = UNROLL_KEYS.get(key)
        if other is not None and other in draft.view.root_annotations:
            key = other  # MetaSchedule unrolls one way per block: a second one is outside its contract
    else:
        found = _pick_loop(draft, rng)
        block = _pick_block(draft, rng, lambda b: True)
        if found is not None and (block is None or rng.random() < 0.6):
            target = draft.loops(found[0].name)[found[1]]
        elif block is not None:
            target = draft.block(block.name)
        else:
            return False
    if key.endswith(("unroll_explicit", "unroll_implicit")) and rng.random() < 0.5:
        candidates = [0, 16, 64, 512]
        value: Any = draft.emit("SampleCategorical", [], [candidates, [0.25] * 4], "v",
                                decision=rng.randrange(len(candidates)))[0]
    else:
        value = ANNOTATIONS[key](rng)
    draft.emit("Annotate", [target, value], [key])
    return True


def draw_unannotate(draft: Draft, rng: random.Random) -> bool:
    options: list[tuple[str, int | None, str]] = [("root", None, key) for key in draft.view.root_annotations]
    for block in draft.view.blocks:
        options += [(block.name, None, key) for key in block.annotations]
        options += [(block.name, i, key) for i, lp in enumerate(block.loops) for key in lp.annotated]
    if options and rng.random() < 0.9:
        name, index, key = rng.choice(options)
        target = draft.block(name) if index is None else draft.loops(name)[index]
    else:
        chosen = _pick_block(draft, rng, lambda b: True)
        if chosen is None:
            return False
        target, key = draft.block(chosen.name), rng.choice(sorted(ANNOTATIONS))
    draft.emit("Unannotate", [target], [key])
    return True


def _index(rng: random.Random) -> int:
    return rng.choice((-1, -1, -1, -2, -2, 0, 1, 2))


def _compute_at(kind: str, relatives: Callable[[Block], Sequence[str]]) -> Drawer:
    def draw(draft: Draft, rng: random.Random) -> bool:
        with_loops = {b.name for b in draft.view.blocks if b.loops}

        def candidates(block: Block) -> list[str]:
            return [r for r in relatives(block) if r in with_loops]

        block = _pick_block(draft, rng, lambda b: bool(candidates(b)))
        if block is None:
            return False
        other = rng.choice(candidates(block))
        rv = draft.block(block.name)
        if kind == "ComputeAt" and rng.random() < 0.3:
            loop = draft.emit("SampleComputeLocation", [rv], [], "l", decision=rng.choice((-1, 0, 1, 2)))[0]
        else:
            loop = rng.choice(draft.loops(other))
        draft.emit(kind, [rv, loop], [rng.random() < 0.5, _index(rng)])
        return True

    draw.__name__ = f"draw_{kind.lower()}"
    return draw


def _writes_intermediate(block: Block) -> bool:
    return any(w.intermediate for w in block.writes)


def _block_primitive(kind: str, test: Callable[[Block], bool],
                     fits: Callable[[Block], bool] = lambda b: True) -> Drawer:
    """A primitive of one block, mostly one that ``fits`` its contract (the rest reach its refusals)."""
    def draw(draft: Draft, rng: random.Random) -> bool:
        fitting = _pick_block(draft, rng, lambda b: test(b) and fits(b))
        if fitting is None and rng.random() < 0.8:
            return False  # nothing fits: a draw that TVM would surely refuse, four times in five not made
        block = fitting if fitting is not None and rng.random() < 0.8 else _pick_block(draft, rng, test)
        if block is None:
            return False
        draft.emit(kind, [draft.block(block.name)])
        return True

    draw.__name__ = f"draw_{kind.lower()}"
    return draw


def draw_fuse_reduction_epilogue(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: b.reduction and bool(b.consumers))
    if block is None:
        return False
    draft.emit("FuseReductionEpilogue", [draft.block(block.name), draft.block(rng.choice(block.consumers))])
    return True


def _cache(kind: str) -> Drawer:
    writes = kind in ("CacheWrite", "ReindexCacheWrite", "WriteAt")

    def draw(draft: Draft, rng: random.Random) -> bool:
        block = _pick_block(draft, rng, lambda b: bool(b.writes if writes else b.reads))
        if block is None:
            return False
        buffers = block.writes if writes else block.reads
        index = rng.randrange(len(buffers))
        scope = rng.choice(SCOPES)
        rv = draft.block(block.name)
        if kind in ("CacheRead", "CacheWrite"):
            related = block.consumers if writes else (block.name,)
            consumers = [draft.block(rng.choice(related))] if related and rng.random() < 0.3 else []
            draft.emit(kind, [rv, consumers], [index, scope], "b")
        elif kind in ("ReadAt", "WriteAt"):
            if not block.loops:
                return False
            draft.emit(kind, [rng.choice(draft.loops(block.name)), rv], [index, scope], "b")
        else:
            order = list(range(len(block.iters)))
            if rng.random() < 0.5:
                rng.shuffle(order)
            names = [f"i{k}" for k in order]
            draft.emit(kind, [rv, index_map_json(names, permutation(order))], [index, scope], "b")
        return True

    draw.__name__ = f"draw_{kind.lower()}"
    return draw


def _inplace_reads(block: Block) -> list[int]:
    """The indices of the buffers ``block`` reads that it writes too."""
    written = {w.name for w in block.writes}
    return [i for i, r in enumerate(block.reads) if r.name in written]


def draw_cache_inplace(draft: Draft, rng: random.Random) -> bool:
    """``cache_inplace`` of a block that reads and writes the buffer (its contract:
    src/s_tir/schedule/primitive/cache_read_write.cc, ``CacheInplace``). A function as the loader
    lowers it has none (a reduction block does not list its output among its reads), so mostly one is
    made first: a reduction's update block after ``decompose_reduction`` reads and writes its output
    (read index 0). The cache stages copy the block's own access region unrelaxed, so the block is
    mostly blockized at its outermost loop without unit iterators first: its region is then the whole
    buffer, not one in its iterators (which the stages could not see). One draw in ten reads any buffer."""
    scope = rng.choice(SCOPES)
    if rng.random() < 0.1:
        block = _pick_block(draft, rng, lambda b: bool(b.reads))
        if block is None:
            return False
        draft.emit("CacheInplace", [draft.block(block.name)], [rng.randrange(len(block.reads)), scope], "bb")
        return True
    inplace = _pick_block(draft, rng, lambda b: bool(_inplace_reads(b)) and not b.nested)
    reduction = _pick_block(draft, rng, lambda b: b.reduction and bool(b.loops) and not b.nested)
    if inplace is not None and (reduction is None or rng.random() < 0.5):
        rv, index, loops = draft.block(inplace.name), rng.choice(_inplace_reads(inplace)), inplace.loops
        outer = draft.loops(inplace.name)[0] if loops else None
    elif reduction is not None:
        rv, index = draft.block(reduction.name), 0
        outer = draft.loops(reduction.name)[0]
        draft.emit("DecomposeReduction", [rv, outer], [], "b")  # the update block keeps the block's name
    else:
        return False
    if outer is not None and rng.random() < 0.8:
        rv = draft.emit("Blockize", [outer], [False], "b")[0]
    draft.emit("CacheInplace", [rv], [index, scope], "bb")
    return True


def draw_cache_index(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: True)
    if block is None:
        return False
    draft.emit("CacheIndex", [draft.block(block.name)], ["global", rng.choice((0, 1, 2))], "b")
    return True


def draw_reindex(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: bool(b.reads or b.writes))
    if block is None:
        return False
    found = _buffer_of(block, rng)
    assert found is not None
    access, index, _ = found
    draft.emit("ReIndex", [draft.block(block.name)], [index, 0 if access == "read" else 1], "b")
    return True


def draw_decompose_reduction(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: b.reduction and bool(b.loops))
    if block is None:
        return False
    draft.emit("DecomposeReduction", [draft.block(block.name), rng.choice(draft.loops(block.name))], [], "b")
    return True


def draw_rfactor(draft: Draft, rng: random.Random) -> bool:
    found = _pick_loop(draft, rng, lambda b: b.reduction, want="R")
    if found is None:
        return False
    block, index = found
    rank = len(block.writes[0].shape) if block.writes else 0
    draft.emit("RFactor", [draft.loops(block.name)[index]], [rng.randrange(rank + 1)], "b")
    return True


def draw_blockize(draft: Draft, rng: random.Random) -> bool:
    if rng.random() < 0.2:
        blocks = [b.name for b in draft.view.blocks]
        chosen = rng.sample(blocks, rng.randrange(1, min(3, len(blocks)) + 1)) if blocks else []
        if chosen:
            draft.emit("Blockize", [[draft.block(name) for name in chosen]], [rng.random() < 0.8], "b")
            return True
    found = _pick_loop(draft, rng)
    if found is None:
        return False
    draft.emit("Blockize", [draft.loops(found[0].name)[found[1]]], [rng.random() < 0.8], "b")
    return True


def _layout_map(shape: Sequence[int | None], rng: random.Random) -> str | None:
    """An IndexMap over a buffer of ``shape``: a permutation, a split or a fusion of dimensions."""
    rank = len(shape)
    if rank == 0:
        return None
    names = [f"a{k}" for k in range(rank)]
    choice = rng.random()
    if rank >= 2 and choice < 0.4:
        order = list(range(rank))
        rng.shuffle(order)
        return index_map_json(names, permutation(order))
    if rank >= 2 and choice < 0.6 and shape[1] is not None:
        dim = rng.randrange(rank - 1)
        extent = shape[dim + 1]
        if extent is not None:
            return index_map_json(names, fuse_dims(rank, dim, extent))
    dim = rng.randrange(rank)
    return index_map_json(names, split_dim(rank, dim, factor(shape[dim], rng)))


def draw_transform_layout(draft: Draft, rng: random.Random) -> bool:
    """Mostly an intermediate buffer: a parameter's layout is the caller's (the interface changes)."""
    inner = _pick_block(draft, rng, lambda b: any(x.shape and x.intermediate for x in (*b.reads, *b.writes)))
    if inner is None and rng.random() < 0.8:
        return False  # no intermediate buffer: a parameter's layout would change the interface
    block = inner if inner is not None and rng.random() < 0.8 else \
        _pick_block(draft, rng, lambda b: any(x.shape for x in (*b.reads, *b.writes)))
    if block is None:
        return False
    found = _buffer_of(block, rng)
    if inner is block and rng.random() < 0.8:
        pool = [("read", i, x) for i, x in enumerate(block.reads) if x.intermediate and x.shape] + \
               [("write", i, x) for i, x in enumerate(block.writes) if x.intermediate and x.shape]
        found = rng.choice(pool) if pool else found
    assert found is not None
    access, index, buffer = found
    mapping = _layout_map(buffer.shape, rng)
    if mapping is None:
        return False
    draft.emit("TransformLayout", [draft.block(block.name), mapping], [index, 0 if access == "read" else 1, None,
                                                                      rng.random() < 0.1])
    return True


def draw_transform_block_layout(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: bool(b.iters))
    if block is None:
        return False
    mapping = _layout_map(block.extents, rng)
    if mapping is None:
        return False
    draft.emit("TransformBlockLayout", [draft.block(block.name)], [mapping])
    return True


def _write_buffer_primitive(kind: str, attrs: Callable[[Buffer, random.Random], list[Any]]) -> Drawer:
    """A primitive of a block's written buffer, mostly an intermediate one (a parameter's layout,
    scope or dtype is the caller's: the primitive refuses it, or the interface changes)."""
    def draw(draft: Draft, rng: random.Random) -> bool:
        block = _pick_block(draft, rng, _writes_intermediate)
        if block is None and rng.random() < 0.8:
            return False  # no intermediate buffer: a parameter's would be refused, four times in five not drawn
        block = block if block is not None and rng.random() < 0.8 else _pick_block(draft, rng, lambda b: bool(b.writes))
        if block is None:
            return False
        inner = [i for i, w in enumerate(block.writes) if w.intermediate]
        index = rng.choice(inner) if inner and rng.random() < 0.8 else rng.randrange(len(block.writes))
        draft.emit(kind, [draft.block(block.name)], [index, *attrs(block.writes[index], rng)])
        return True

    draw.__name__ = f"draw_{kind.lower()}"
    return draw


def _align(buffer: Buffer, rng: random.Random) -> list[Any]:
    fac = rng.choice((1, 2, 4, 8, 16, 32))
    return [rng.randrange(max(len(buffer.shape), 1)), fac, rng.randrange(fac)]


def _dtype(buffer: Buffer, rng: random.Random) -> list[Any]:
    same_kind = ("float16", "float32", "float64") if buffer.dtype.startswith("float") else ("int8", "int32", "int64")
    return [rng.choice(same_kind)]


def draw_unsafe_hide_buffer_access(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: bool(b.reads))
    if block is None:
        return False
    access = "read" if rng.random() < 0.8 or not block.writes else "write"
    count = len(block.reads if access == "read" else block.writes)
    chosen = rng.sample(range(count), rng.randrange(1, count + 1))
    draft.emit("UnsafeHideBufferAccess", [draft.block(block.name), f'"{access}"', chosen])
    return True


def draw_decompose_padding(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: bool(b.loops) and not b.reduction)
    if block is None:
        return False
    draft.emit("DecomposePadding", [draft.block(block.name), rng.choice(draft.loops(block.name))], [], "b")
    return True


def draw_pad_einsum(draft: Draft, rng: random.Random) -> bool:
    block = _pick_block(draft, rng, lambda b: bool(b.iters))
    if block is None:
        return False
    draft.emit("PadEinsum", [draft.block(block.name)], [[rng.choice((1, 1, 2, 3, 4, 8)) for _ in block.iters]])
    return True


def _rolling_pairs(view_blocks: Sequence[Block]) -> list[tuple[Block, int, Block]]:
    """``(producer, write index, consumer)``: a producer with loops writing an intermediate buffer its
    only consumer reads through a sliding window (a padding or any stage before a convolution or
    pooling)."""
    by_name = {b.name: b for b in view_blocks}
    pairs = []
    for block in view_blocks:
        if not block.loops or block.nested or len(block.consumers) != 1 or block.consumers[0] not in by_name:
            continue
        consumer = by_name[block.consumers[0]]
        windowed = {r.name for r in consumer.reads if r.window}
        pairs += [(block, i, consumer) for i, w in enumerate(block.writes)
                  if w.intermediate and w.name in windowed and consumer.loops]
    return pairs


def draw_rolling_buffer(draft: Draft, rng: random.Random) -> bool:
    """``rolling_buffer`` of a producer computed at a loop of its consumer whose sliding windows
    overlap (its contract: src/s_tir/schedule/primitive/rolling_buffer.cc: an intermediate buffer, only
    read-after-write dependencies, the lowest common ancestor of the producer and its consumer a loop,
    and a dimension of the producer's region there ``loop * stride`` wide more than its stride). The
    producer is mostly moved under a spatial loop of a consumer that reads it through a window first
    (``compute_at``); a producer already there (an earlier ``compute_at``) gets it alone."""
    pairs = _rolling_pairs(draft.view.blocks)
    if not pairs or rng.random() < 0.1:
        block = _pick_block(draft, rng, lambda b: bool(b.writes))
        if block is None or (not pairs and rng.random() < 0.8):
            return False  # no windowed producer: TVM would surely refuse, four times in five not drawn
        draft.emit("RollingBuffer", [draft.block(block.name)], [rng.randrange(len(block.writes))])
        return True
    producer, index, consumer = rng.choice(pairs)
    rv = draft.block(producer.name)
    if rng.random() < 0.8:
        spatial = [i for i, lp in enumerate(consumer.loops) if "S" in lp.feeds and "R" not in lp.feeds]
        inner = spatial[-2:] if rng.random() < 0.8 else spatial  # an ONNX layout's windowed axes are its last
        at = rng.choice(inner or list(range(len(consumer.loops))))
        draft.emit("ComputeAt", [rv, draft.loops(consumer.name)[at]], [rng.random() < 0.5, -1])
    draft.emit("RollingBuffer", [rv], [index])
    return True


def _region_bound(extent: int) -> tuple[Expr, Expr]:
    """``(begin, end)`` of one dimension of a stated region: the whole dimension. A true statement: one
    that states too little leaves TVM's cached flags of the blocks around it stale (``region_cover``),
    which its own checks then report, the user's fault by the primitive's docstring."""
    return ("int", 0), ("int", extent)


def draw_annotate_buffer_access(draft: Draft, rng: random.Random) -> bool:
    """``annotate_buffer_access``: the region a block reads or writes of one buffer, as an IndexMap from
    its iterators to ``begin, end`` per dimension (what the Python method builds from its lambda; its
    check that there are as many ranges as iterators is the wrapper's, not the primitive's:
    src/s_tir/schedule/primitive/annotate_buffer_access.cc), the whole buffer (:func:`_region_bound`).
    Unsafe by contract: nothing after it is judged."""
    def known(buffers: Sequence[Buffer]) -> list[int]:
        return [i for i, b in enumerate(buffers) if all(d is not None for d in b.shape)]

    block = _pick_block(draft, rng, lambda b: bool(known(b.reads) or known(b.writes)))
    if block is None:
        return False
    access = 0 if known(block.reads) and (rng.random() < 0.8 or not known(block.writes)) else 1
    buffers = block.reads if access == 0 else block.writes
    index = rng.choice(known(buffers))
    bounds = [bound for extent in buffers[index].shape for bound in _region_bound(int(extent or 0))]
    mapping = index_map_json([f"v{k}" for k in range(len(block.iters))], bounds)
    draft.emit("AnnotateBufferAccess", [draft.block(block.name), index, access, mapping])
    return True


DRAWERS: dict[str, Drawer] = {
    "Split": draw_split,
    "LoopPartition": draw_loop_partition,
    "Fuse": draw_fuse,
    "Merge": draw_merge,
    "Reorder": draw_reorder,
    "ReorderBlockIterVar": draw_reorder_block_iter_var,
    "AddUnitLoop": draw_add_unit_loop,
    "Parallel": _loop_primitive("Parallel", "S"),
    "Vectorize": _loop_primitive("Vectorize", "S"),
    "Unroll": _loop_primitive("Unroll", ""),
    "Annotate": draw_annotate,
    "Unannotate": draw_unannotate,
    "ComputeAt": _compute_at("ComputeAt", lambda b: b.consumers),
    "ReverseComputeAt": _compute_at("ReverseComputeAt", lambda b: b.producers),
    "ComputeInline": _block_primitive("ComputeInline", lambda b: not b.nested, _writes_intermediate),
    "ReverseComputeInline": _block_primitive("ReverseComputeInline", lambda b: bool(b.producers),
                                             lambda b: any(r.intermediate for r in b.reads)),
    "FuseReductionEpilogue": draw_fuse_reduction_epilogue,
    "CacheRead": _cache("CacheRead"),
    "CacheWrite": _cache("CacheWrite"),
    "CacheInplace": draw_cache_inplace,
    "CacheIndex": draw_cache_index,
    "ReIndex": draw_reindex,
    "ReindexCacheRead": _cache("ReindexCacheRead"),
    "ReindexCacheWrite": _cache("ReindexCacheWrite"),
    "ReadAt": _cache("ReadAt"),
    "WriteAt": _cache("WriteAt"),
    "DecomposeReduction": draw_decompose_reduction,
    "RFactor": draw_rfactor,
    "Blockize": draw_blockize,
    "TransformLayout": draw_transform_layout,
    "TransformBlockLayout": draw_transform_block_layout,
    "SetScope": _write_buffer_primitive("SetScope", lambda b, r: [r.choice(SCOPES)]),
    "StorageAlign": _write_buffer_primitive("StorageAlign", _align),
    "UnsafeSetDType": _write_buffer_primitive("UnsafeSetDType", _dtype),
    "UnsafeHideBufferAccess": draw_unsafe_hide_buffer_access,
    "DecomposePadding": draw_decompose_padding,
    "PadEinsum": draw_pad_einsum,
    "RollingBuffer": draw_rolling_buffer,
    "AnnotateBufferAccess": draw_annotate_buffer_access,
}
"""Every transforming primitive with a drawer, by its instruction kind."""
NO_DRAWER: dict[str, str] = {
    "Bind": "GPU only: it binds a loop to a thread axis, which makes a device kernel an llvm build has no "
            "device for (the level builds for the CPU)",
    "Tensorize": "segfaults in this environment (it deep-copies the intrinsic through ToJSONGraph, broken with "
                 "apache-tvm-ffi 0.1.15), and no registered CPU intrinsic fits a float32 function on a CPU "
                 "without VNNI/AVX512 (x86's are int8 dot products)",
}
"""Why each other transforming primitive has no drawer."""


def draw_primitive(kind: str, draft: Draft, rng: random.Random) -> bool:
    """Draw ``kind`` into ``draft`` (False: nothing in the function fits it)."""
    return DRAWERS[kind](draft, rng)
