"""Campaign-side coverage over every backend: chosen-backend gains, per-family totals, resume."""

from __future__ import annotations

from seedzer.coverage import make_backend
from seedzer.coverage.tracker import CoverageTracker, family_of


def test_family_of() -> None:
    assert family_of("bp:tvm:1a") == "breakpoints"
    assert family_of("sc:tvm_compiler:10") == "sancov"
    assert family_of("opt/Simplify:For:+1") == "passes"


def test_gain_counts_only_the_chosen_backend() -> None:
    t = CoverageTracker("breakpoints")
    assert t.new_since_last(["bp:tvm:1", "bp:llvm:2", "opt/A:="]) == 2
    assert t.new_since_last(["opt/B:=", "bp:tvm:1"]) == 0  # new passes feature, no new block
    assert t.new_since_last(["bp:tvm:3", "bp:tvm:3"]) == 1
    assert t.total() == 3
    assert t.detail() == {"passes": 2, "breakpoints": 3, "breakpoints_tvm": 2, "breakpoints_llvm": 1}
    assert sorted(t.drain_fresh()) == ["bp:llvm:2", "bp:tvm:1", "bp:tvm:3", "opt/A:=", "opt/B:="]
    assert t.drain_fresh() == []


def test_passes_backend_ignores_native_features() -> None:
    t = make_backend("passes")
    assert t.new_since_last(["bp:tvm:1", "opt/A:="]) == 1
    assert t.total() == 1 and t.snapshot() == ["opt/A:="]


def test_restore_rebuilds_totals_without_fresh() -> None:
    t = CoverageTracker("breakpoints")
    t.restore(["bp:tvm:1", "bp:llvm:2", "opt/A:=", "sc:x:1"])
    assert t.detail() == {"passes": 1, "breakpoints": 2, "breakpoints_tvm": 1, "breakpoints_llvm": 1}
    assert t.drain_fresh() == []
    assert t.new_since_last(["bp:tvm:1"]) == 0


def test_a_backend_declares_every_method_the_campaign_calls_with_defaults() -> None:
    from collections.abc import Iterable

    from seedzer.protocols import CoverageBackend

    class Minimal(CoverageBackend):
        name = "minimal"

        def new_since_last(self, features: Iterable[str]) -> int:
            return 0

        def total(self) -> int:
            return 0

        def snapshot(self) -> list[str]:
            return []

    backend = Minimal()
    backend.restore(["a"])
    assert backend.drain_fresh() == [] and backend.detail() == {}
    assert isinstance(backend, CoverageBackend) and isinstance(make_backend("passes"), CoverageBackend)
