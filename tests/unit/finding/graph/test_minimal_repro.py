"""The targets a graph finding's plain reproducer is tried with."""

from __future__ import annotations

from seedzer.finding.graph.minimal_repro import DEFAULT_TARGET, build_targets
from seedzer.kernel.graph.case import GraphCase
from seedzer.levels.graph.fuzzer import llvm_target


def test_tvm_compile_s_default_target_is_tried_before_the_campaign_s_own() -> None:
    case = GraphCase((("x", "float32", (2,)),), target=llvm_target(0))
    assert build_targets(case) == (DEFAULT_TARGET, '{"kind": "llvm", "opt-level": 0}')


def test_a_case_built_at_the_default_target_is_tried_once() -> None:
    assert build_targets(GraphCase((("x", "float32", (2,)),))) == (DEFAULT_TARGET,)
