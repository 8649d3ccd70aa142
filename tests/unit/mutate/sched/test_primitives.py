"""Every primitive drawer writes TVM's own trace JSON: the kernel's step-by-step replay and TVM's
``Trace.apply_json_to_schedule`` give the same IR (or both refuse), on loader functions with a
reduction, a stencil and a fused epilogue; every transforming primitive has a drawer or a reason
(drives TVM, each draw in a forked child: some primitives crash TVM)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from seedzer.execute.forked import call_forked
from seedzer.kernel.sched.trace import TRANSFORMING, canonical, trace_json
from seedzer.mutate.sched.primitives import DRAWERS, NO_DRAWER, factor, perfect_tile

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SCRIPTS = [FIXTURES / "seeds" / "matmul.py", FIXTURES / "seeds" / "softmax.py", FIXTURES / "sched" / "conv2d_relu.py",
           FIXTURES / "seeds" / "fused_matmul_add_relu.py"]


def test_every_transforming_primitive_has_a_drawer_or_a_reason() -> None:
    assert set(DRAWERS) | set(NO_DRAWER) == TRANSFORMING
    assert not set(DRAWERS) & set(NO_DRAWER)


def test_loop_factors_reach_their_ends() -> None:
    rng = random.Random(0)
    drawn = {factor(12, rng) for _ in range(400)}
    assert {1, 12, 13} <= drawn and drawn & {5, 7}  # 1, the extent, beyond it, a non-divisor
    for _ in range(50):
        tiles = perfect_tile(12, 3, rng)
        assert tiles[0] * tiles[1] * tiles[2] == 12


def _replays(func: Any, items: list) -> str:
    """What the kernel's replay and TVM's replay of ``items`` did: ``same``, ``both fail``, or how they differ."""
    import tvm
    import tvm_ffi
    from tvm.s_tir import Schedule, Trace

    from seedzer.kernel.sched.apply import apply_trace
    from seedzer.kernel.tir.lowering import StepFailure

    mine: Any
    try:
        mine = apply_trace(func, items, verify_each=False, debug_mask=0).schedule.mod
    except StepFailure as failure:
        mine = str(failure.observation.symptom)
    theirs: Any = Schedule(tvm.IRModule({"main": func}), seed=1)
    try:
        Trace.apply_json_to_schedule(json.loads(json.dumps(trace_json(items))), theirs)
        theirs = theirs.mod
    except Exception as exc:  # TVM's replay refuses or fails as the step-by-step one does
        theirs = type(exc).__name__
    if isinstance(mine, str) or isinstance(theirs, str):
        return "both fail" if isinstance(mine, str) and isinstance(theirs, str) else f"{mine} / {theirs}"
    return "same" if tvm_ffi.structural_equal(mine, theirs) else "different IR"


KNOWN_CRASHES = {"ReIndex"}
"""Primitives that crash TVM 0.27 on some of these functions (tests/fixtures/sched/bugs)."""


@pytest.fixture(scope="module")
def views() -> list[tuple[Any, Any]]:
    from seedzer.kernel.tir.lowering import parse_func
    from seedzer.mutate.sched.structure import view_at

    funcs = [parse_func(path.read_text()) for path in SCRIPTS]
    return [(func, view_at(func, [])) for func in funcs]


@pytest.mark.parametrize("kind", sorted(DRAWERS))
def test_a_drawn_primitive_replays_as_tvm_replays_its_json(kind: str, views: list[tuple[Any, Any]]) -> None:
    from seedzer.mutate.sched.structure import Draft

    rng = random.Random(kind)
    outcomes = []
    for func, view in views:
        for _ in range(4):
            draft = Draft(view)
            if not DRAWERS[kind](draft, rng):
                outcomes.append("inapplicable")
                continue
            items = canonical(draft.instructions)
            assert kind in [i.kind for i in items]
            done = call_forked(_replays, func, items, timeout=300)
            outcomes.append(done.value if done.ok else f"died: {done.describe()}")
    allowed = {"same", "both fail", "inapplicable"} | ({"died: killed by signal SIGSEGV"} if kind in KNOWN_CRASHES
                                                         else set())
    assert set(outcomes) <= allowed, outcomes
    assert "same" in outcomes or "both fail" in outcomes  # the drawer reaches the primitive


def _outcomes(script: Path, kind: str, draws: int) -> list[str]:
    """What the kernel (TVM's own checks on, ``debug_mask="all"``) makes of ``draws`` draws of ``kind``."""
    from seedzer.kernel.sched.apply import apply_trace
    from seedzer.kernel.tir.lowering import StepFailure, parse_func
    from seedzer.mutate.sched.structure import Draft, view_at

    func = parse_func(script.read_text())
    view = view_at(func, [])
    rng = random.Random(kind)
    out = []
    for _ in range(draws):
        draft = Draft(view)
        if not DRAWERS[kind](draft, rng):
            out.append("inapplicable")
            continue
        try:
            apply_trace(func, canonical(draft.instructions))
            out.append("accepted")
        except StepFailure as failure:
            out.append(f"{failure.observation.symptom.value} at {failure.observation.pass_name}")
    return out


@pytest.mark.parametrize(("kind", "script"), [
    ("CacheInplace", FIXTURES / "seeds" / "matmul.py"), ("CacheInplace", FIXTURES / "sched" / "conv2d_relu.py"),
    ("RollingBuffer", FIXTURES / "sched" / "conv2d_relu_int32.py"),
    ("AnnotateBufferAccess", FIXTURES / "sched" / "conv2d_relu.py")])
def test_a_contract_heavy_primitive_is_drawn_so_that_tvm_accepts_it_mostly(kind: str, script: Path) -> None:
    """cache_inplace needs a block reading and writing one buffer, rolling_buffer a producer computed at
    a consumer loop whose windows overlap: their drawers make those first (a loader function has neither);
    annotate_buffer_access an IndexMap to a region of the buffer's rank, not of the block's."""
    done = call_forked(_outcomes, script, kind, 20, timeout=300)
    assert done.ok, done.describe()
    outcomes = done.value
    assert outcomes.count("accepted") >= len(outcomes) // 2, outcomes


def test_a_sliding_window_read_is_told_apart(views: list[tuple[Any, Any]]) -> None:
    conv = next(view for _, view in views if any(b.name == "conv" for b in view.blocks))
    windows = {(b.name, r.name): r.window for b in conv.blocks for r in b.reads}
    assert windows == {("pad", "X"): False, ("conv", "pad"): True, ("conv", "W"): False, ("relu", "conv"): False}
