"""Undefined or NaN-producing behaviour of an IR mutant, judged against its parent.

An abstract interpretation (:class:`Interp`, cached per function) runs the body in program order
over intervals: a buffer holds one interval (parameters as the harness fills them, allocations
empty); loops and reductions are iterated until their carried buffers settle, grow linearly (then
extrapolated) or are widened, accumulators updated strongly (a row's ``max`` is no longer the init's
-3.4e38 afterwards); an ``if`` the intervals decide runs one branch. It records hazards (float
division by a range holding 0, math off its domain or overflowing, float results or casts outside
their dtype, two stores to one location in one SBlock body), integer divisions, reduction inits,
the writes to allocated buffers every run performs, and loads of allocated buffers not written
before in their block. :func:`check` rejects a mutant with a hazard its parent lacks (keyed by category,
block and node text: the seed's own division by a sum is kept), an unproven integer division the
parent lacks, a lost or conditional init or allocated write, or a new read of uninitialised memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, tirx
from tvm.ir.prim import expr as pe
from tvm.sym import Analyzer

from seedzer.tir.exprgen import ExprRanges
from seedzer.tir.ir import TOP, Cells, Interval, bounded, extrapolate, is_buffer, is_float, join, linear, widen

CAP = 6
"""Rounds a loop or reduction is iterated before bounds that still grow are widened to infinity."""
INPUT_FLOAT: Interval = (-1.0, 1.0)
"""Float inputs of the harness: uniform in [-1, 1) (the harness's ``make_inputs``)."""
Key = tuple[str, str, str]
"""(category, block, TVMScript text of the node): names, so a key holds across parses and moves of the
node into a scratch buffer or a let (WrapAlloc, Insertor) within its block."""


@dataclass
class Facts:
    """What the interpretation of one function found (see the module docstring)."""

    hazards: dict[Key, tuple[Any, str, str]] = field(default_factory=dict)  # -> (node, why, target)
    int_divs: list[tuple[str, str, Any]] = field(default_factory=list)
    unproven: list[tuple[str, str, Any, list[tuple[Any, Interval]]]] = field(default_factory=list)
    inits: set[tuple[str, str]] = field(default_factory=set)
    blocks: set[str] = field(default_factory=set)
    must_writes: dict[tuple[str, str, str], float] = field(default_factory=dict)
    alloc_loads: set[tuple[str, str]] = field(default_factory=set)
    cold_loads: set[tuple[str, str]] = field(default_factory=set)
    ranges: dict[int, Interval] = field(default_factory=dict)


class Interp(ExprRanges):
    """The abstract interpreter; :attr:`facts` holds the result after construction."""

    def __init__(self, func: Any) -> None:
        super().__init__()
        self.facts = Facts()
        self.ranges = self.facts.ranges
        self.state: Cells = {}
        self.allocated: set[int] = set()
        self.names: dict[int, str] = {}
        self.fresh: set[int] = set()  # buffers allocated inside the body being repeated: not carried
        self.block = self.target = ""
        self.accs: set[int] = set()
        self.in_init = False
        self.init_writes: set[int] = set()
        self.mw: dict[tuple[str, str, str], float] = {}  # writes every run performs on this path
        self.trips = 1.0
        self.stores: list[tuple[int, Any]] = []  # earlier stores of this block at this loop level
        self.warm: set[int] = set()  # buffers written earlier in this block
        self.reads: set[int] = set()
        self.writes: set[int] = set()
        for p in func.params:
            if is_buffer(p):
                self.state[p.__chandle__()] = INPUT_FLOAT if is_float(str(p.ty.dtype)) else (0.0, 0.0)
            else:
                self.bind(p, TOP)
        self.ex(func.body)
        self.facts.must_writes = self.mw

    def hazard(self, category: str, node: Any, why: str) -> None:
        """Record a hazard at ``node`` (keyed by category, block and the node's text);
        :attr:`flags` is off while a loop is iterated towards its fixpoint."""
        if self.flags:
            self.facts.hazards.setdefault((category, self.block, str(node)), (node, why, self.target))

    def int_div(self, divisor: Any, iv: Interval) -> None:
        """Note an integer division (and, if its divisor's range holds 0, the variables in scope)."""
        if self.flags:
            self.facts.int_divs.append((self.block, self.target, divisor))
            if iv[0] <= 0 <= iv[1]:
                scope = [(self.vars[k], r) for k, r in self.env.items() if math.isfinite(r[1] - r[0])]
                self.facts.unproven.append((self.block, self.target, divisor, scope))

    def load(self, e: Any) -> Interval:
        """The range of a buffer load: the buffer's cell (noting loads of allocated buffers)."""
        src = e.source
        k = src.__chandle__()
        self.reads.add(k)
        if self.flags:
            for i in e.indices:
                self.ev(i)
            if k in self.allocated:
                self.facts.alloc_loads.add((self.block, str(src.name)))
                if k not in self.warm:
                    self.facts.cold_loads.add((self.block, str(src.name)))
        v = self.state.get(k)
        return TOP if v is None else v

    # -- statements -----------------------------------------------------------------------------
    def ex(self, s: Any) -> None:
        """Run statement ``s`` abstractly."""
        fn = _EX.get(type(s))
        if fn is not None:
            fn(self, s)

    def _alloc(self, s: Any) -> None:
        k = s.buffer.__chandle__()
        self.allocated.add(k)
        self.fresh.add(k)
        self.state[k] = None
        self.warm.discard(k)

    def _store(self, s: Any) -> None:
        buf, k = s.buffer, s.buffer.__chandle__()
        self.names[k] = str(buf.name)
        outer, self.target = self.target, str(buf.name)
        v = self.ev(s.value)
        if self.flags:
            for i in s.indices:
                self.ev(i)
        self.target = outer
        self.writes.add(k)
        if self.in_init:
            self.init_writes.add(k)
        self.state[k] = v if self.in_init or k in self.accs else join(self.state.get(k), v)
        if not self.flags:
            return
        if k in self.allocated or self.in_init:
            key = (self.block, str(buf.name), "init" if self.in_init else "body")
            self.mw[key] = max(self.mw.get(key, 0.0), self.trips if k in self.allocated else 0.0)
        self.warm.add(k)
        if not self.in_init:
            if any(ok == k and _same_indices(o.indices, s.indices) for ok, o in self.stores):
                self.facts.hazards.setdefault(("double", self.block, str(buf.name)), (s, "", str(buf.name)))
            self.stores.append((k, s))

    def _if(self, s: Any) -> None:
        c = self.ev(s.condition)
        if c[0] > 0 or c[1] <= 0:
            branch = s.then_case if c[0] > 0 else s.else_case
            if branch is not None:
                self.ex(branch)
            return
        share = self._split_guard(s.condition) if s.else_case is None else None
        if share is not None:  # skips only the iterations a split adds: the body still covers all
            trips, self.trips = self.trips, self.trips * share
            self.ex(s.then_case)
            self.trips = trips
            return
        state, env, mw, warm, stores = self.state, self.env, self.mw, self.warm, self.stores
        ends = []
        for branch in (s.then_case, s.else_case):
            self.state, self.env, self.mw, self.warm, self.stores = dict(state), dict(env), {}, set(warm), list(stores)
            if branch is not None:
                self.ex(branch)
            ends.append((self.state, self.mw, self.warm, self.stores))
        (st1, mw1, w1, s1), (st2, mw2, w2, s2) = ends
        self.state = {k: join(st1.get(k), st2.get(k)) for k in st1.keys() | st2.keys()}
        self.env, self.mw, self.warm = env, mw, w1 & w2
        for k in mw1.keys() & mw2.keys():
            mw[k] = max(mw.get(k, 0.0), min(mw1[k], mw2[k]))
        self.stores = s1 + [x for x in s2 if not any(x[1].same_as(y[1]) for y in s1)]

    def _split_guard(self, cond: Any) -> float | None:
        """The share of iterations that a guard ``x < n`` added by ``SplitLoop`` lets through, where
        ``x`` enumerates ``[0, m)`` exactly once (``vo * f + vi``, ``vi`` over [0, f), recursively)."""
        guard = type(cond) is pe.LT and type(cond.a) is pe.Add and type(cond.b) is pe.IntImm
        m = self._dense(cond.a) if guard else None
        n = float(cond.b.value) if m else 0.0
        return n / m if m and 0 < n <= m else None

    def _dense(self, x: Any) -> float | None:
        if type(x) is tvm.ir.Var:
            r = self.env.get(x.__chandle__())
            return r[1] + 1 if r is not None and r[0] == 0 else None
        if type(x) is not pe.Add or type(x.a) is not pe.Mul or type(x.a.b) is not pe.IntImm:
            return None
        f, inner = float(x.a.b.value), self.env.get(x.b.__chandle__()) if type(x.b) is tvm.ir.Var else None
        outer = self._dense(x.a.a) if inner == (0.0, f - 1) else None
        return outer * f if outer else None

    def _for(self, s: Any) -> None:
        lo, ext = self.ev(s.min), self.ev(s.extent)
        if ext[1] <= 0:
            return
        self.bind(s.loop_var, (lo[0], lo[1] + ext[1] - 1))
        trips, mw, stores = self.trips, self.mw, self.stores
        self.trips *= max(ext[0], 0.0) if s.step is None else min(ext[0], 1.0)
        if ext[0] < 1:  # may not run at all: its writes are not certain
            self.mw = {}

        def once() -> None:
            self.stores = []
            self.ex(s.body)

        self.repeat(once, ext[1] if s.step is None and math.isfinite(ext[1]) else None)
        self.trips, self.mw, self.stores = trips, mw, stores

    def _while(self, s: Any) -> None:
        mw, stores = self.mw, self.stores
        self.mw, self.stores = {}, []
        self.ev(s.condition)
        self.repeat(lambda: self.ex(s.body), None)
        self.mw, self.stores = mw, stores

    def _realize(self, s: Any) -> None:
        blk = s.block
        saved = (self.block, self.warm, self.stores, self.accs, self.reads, self.writes)
        self.block, self.warm, self.stores, self.reads, self.writes = str(blk.name_hint), set(), [], set(), set()
        n = 1.0  # reduction rounds per block instance
        for iv in blk.iter_vars:
            lo, ext = self.ev(iv.dom.min), self.ev(iv.dom.extent)
            self.bind(iv.var, (lo[0], lo[1] + ext[1] - 1))
            n *= ext[1] if int(iv.iter_type) != 0 else 1.0
        if self.flags:
            self.facts.blocks.add(self.block)
            for e in (*s.iter_values, s.predicate):
                self.ev(e)
        for b in blk.alloc_buffers:
            self.allocated.add(b.__chandle__())
            self.fresh.add(b.__chandle__())
            self.state[b.__chandle__()] = None
        before = dict(self.state)
        self.accs = set()
        if blk.init is not None:
            outer_mw, self.mw = self.mw, {}
            self.in_init, self.init_writes = True, set()
            self.ex(blk.init)
            self.in_init, self.accs = False, self.init_writes
            if self.flags:
                self.facts.inits.update((b, buf) for b, buf, _ in self.mw)
            for key, trips in self.mw.items():
                if trips > 0:
                    outer_mw[key] = max(outer_mw.get(key, 0.0), trips)
            self.mw = outer_mw

        def once() -> None:
            self.stores = []
            self.ex(blk.body)

        self.repeat(once, n if math.isfinite(n) else None, self.accs)
        for k in self.accs:
            self.state[k] = join(before.get(k), self.state.get(k))
        saved[4].update(self.reads - self.accs)
        saved[5].update(self.writes)
        self.block, self.warm, self.stores, self.accs, self.reads, self.writes = saved

    def repeat(self, once: Callable[[], None], n: float | None, cells: set[int] | None = None) -> None:
        """Run ``once`` as the body of ``n`` iterations (None: unknown): again, without recording,
        until the buffers it both reads and writes (and ``cells``) settle, grow linearly or are
        widened; then once more, recording, from the hull of every state they went through."""
        outer_r, outer_w, outer_fresh = self.reads, self.writes, self.fresh
        self.reads, self.writes, self.fresh = set(), set(), set()
        start = dict(self.state)
        once()
        carried = ((self.reads & self.writes) - self.fresh) | (cells or set())
        if carried and (n is None or n > 1):
            hist = [{k: start.get(k) for k in carried}, {k: self.state.get(k) for k in carried}]
            flags, self.flags, k = self.flags, False, 1
            while hist[-1] != hist[-2] and (n is None or k < n):
                if k >= 2 and n is not None and linear(*hist[-3:]):
                    hist.append(extrapolate(hist[-2], hist[-1], n - k))
                    break
                if k >= CAP:
                    hist.append(widen(hist[-2], hist[-1]))
                    break
                once()
                k += 1
                hist.append({c: self.state.get(c) for c in carried})
            self.flags = flags
            for c in carried:  # an origin of Inf: unbounded operands are not blamed again downstream
                first, span = hist[0][c], reduce(join, [h[c] for h in hist]) or TOP
                if first is not None and bounded(first) and not bounded(span):
                    self.hazard("nan", self.names.get(c, "?"), "a value that grows without bound in a loop")
            if len(hist) > 2 or hist[1] != hist[0]:
                for c in carried:
                    self.state[c] = reduce(join, [h[c] for h in hist], None)
                once()
        outer_r |= self.reads
        outer_w |= self.writes
        outer_fresh |= self.fresh
        self.reads, self.writes, self.fresh = outer_r, outer_w, outer_fresh


_AN = Analyzer()


def _same_indices(a: Any, b: Any) -> bool:
    """Whether two index lists are structurally equal after simplification."""
    eq = tvm_ffi.structural_equal
    return len(a) == len(b) and all(eq(x, y) or eq(_AN.simplify(x), _AN.simplify(y)) for x, y in zip(a, b, strict=True))


def _seq(i: Interp, s: Any) -> None:
    for child in s.seq:
        i.ex(child)


_EX: dict[type, Callable[[Interp, Any], object]] = {
    tirx.SeqStmt: _seq,
    tirx.BufferStore: Interp._store,
    tirx.Bind: lambda i, s: i.bind(s.var, i.ev(s.value)),
    tirx.LetStmt: lambda i, s: i.bind(s.var, i.ev(s.value)),
    tirx.Evaluate: lambda i, s: i.ev(s.value),
    tirx.AllocBuffer: Interp._alloc,
    tirx.DeclBuffer: Interp._alloc,
    tirx.IfThenElse: Interp._if,
    tirx.For: Interp._for,
    tirx.While: Interp._while,
    tirx.AttrStmt: lambda i, s: i.ex(s.body),
    s_tir.SBlockRealize: Interp._realize,
}
_CACHE: list[tuple[Any, Facts]] = []


def facts_of(func: Any) -> Facts:
    """The interpretation of ``func`` (cached for the two most recently used functions: a parent
    and its latest mutant)."""
    hit = next((entry for entry in _CACHE if entry[0].same_as(func)), None)
    entry = hit or (func, Interp(func).facts)
    _CACHE[:] = [entry, *[e for e in _CACHE if e is not entry][:1]]
    return entry[1]


def value_range(func: Any, expr: Any) -> Interval:
    """The range of ``expr`` (a node of ``func``'s body) on the harness inputs; TOP if unknown."""
    return facts_of(func).ranges.get(expr.__chandle__(), TOP)


def _text(node: Any, limit: int = 60) -> str:
    text = " ".join(str(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _where(block: str, target: str = "") -> str:
    return (f" in block {block}" if block else "") + (f" (storing {target})" if target else "")


def _nonzero(divisor: Any, scope: list[tuple[Any, Interval]]) -> bool:
    """Whether TVM's arithmetic analyser proves ``divisor`` nonzero, the variables in range."""
    an = Analyzer()
    for var, (lo, hi) in scope:
        dt = str(var.ty.dtype)
        if dt.startswith(("int", "uint")):
            an.bind(var, tvm.ir.Range.from_min_extent(tirx.const(int(lo), dt), tirx.const(int(hi - lo + 1), dt)))
    bound = an.const_int_bound(an.simplify(divisor))
    return bool(bound.min_value > 0 or bound.max_value < 0)


def check(mutant: Any, parent: Any) -> str | None:
    """None if ``mutant`` adds no undefined or NaN-producing behaviour to ``parent``, else a one-line
    reason starting with ``ub:``."""
    try:
        return _judge(facts_of(mutant), facts_of(parent))
    except Exception as exc:  # an IR form the interpreter does not know: never let it through
        return f"ub: cannot analyse: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"


def _judge(new: Facts, old: Facts) -> str | None:
    if new.unproven:
        known = {(b, str(d)) for b, _, d in old.int_divs}
        for block, target, divisor, scope in new.unproven:
            if (block, str(divisor)) not in known and not _nonzero(divisor, scope):
                return f"ub: integer division by possibly-zero {_text(divisor)}{_where(block, target)}"
    for key, (node, why, target) in new.hazards.items():
        if key not in old.hazards:
            category, block, _ = key
            if category == "div":
                return f"ub: float division by possibly-zero {_text(node)}{_where(block, target)}"
            if category == "double":
                return f"ub: second write of {target}[{', '.join(_text(i, 20) for i in node.indices)}]{_where(block)}"
            return f"ub: NaN/Inf: {why}: {_text(node)}{_where(block, target)}"
    lost = sorted(k for k in old.inits - new.inits if k[0] in new.blocks)  # a block that never runs is dead
    if lost:
        return f"ub: init of {lost[0][1]}{_where(lost[0][0])} removed or made conditional"
    for (block, buf, part), trips in old.must_writes.items():
        if new.must_writes.get((block, buf, part), -1.0) < trips * (1 - 1e-9):  # shares of split guards round
            return f"ub: write to allocated {buf}{_where(block)} ({part}) removed, conditional or run fewer times"
    cold = sorted(new.cold_loads - old.alloc_loads)
    if cold:
        return f"ub: read of possibly uninitialised {cold[0][1]}{_where(cold[0][0])}"
    return None
