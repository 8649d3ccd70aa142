"""Pass contracts and flat steps: TVM's pipeline, each pass once, fuzzed passes inside their contracts."""

import random

from seedzer.kernel.tir.case import FUZZED, PIPELINE, minimal_steps, reference_steps
from seedzer.passes.tir.catalog import CATALOG, EXCLUDED, random_sequence
from seedzer.passes.tir.contracts import (
    CONTRACTS,
    FOR_OTHER_TARGETS,
    NOT_ON_LLVM,
    PACKED_AT,
    PIPELINE_PASSES,
    RESERVED_ATTRIBUTES,
    RUN_ONCE,
    SPLIT_AT,
    canonical_lowering,
    fuzzable,
    pipeline_steps,
    placeable,
    plan,
    slot_of_step,
    step_of,
)
from seedzer.seed import PassSpec


def _pipeline_names(steps: list) -> list[str]:
    return [s.name for s in steps if s.role == PIPELINE]


def test_every_catalogue_pass_has_a_contract_or_a_reason_to_be_left_out() -> None:
    assert set(CONTRACTS) - set(CATALOG) <= {p.name for p in PIPELINE_PASSES} | set(EXCLUDED)
    for name in CATALOG:
        assert (name in CONTRACTS) != (name in NOT_ON_LLVM or name in RUN_ONCE), name
    assert not set(NOT_ON_LLVM) & set(fuzzable("llvm"))
    for name in FOR_OTHER_TARGETS:  # in the pipeline, but never inserted on llvm
        assert name not in fuzzable("llvm") and "llvm" not in CONTRACTS[name].targets


def test_fuzzable_passes_never_include_run_once_passes() -> None:
    names = fuzzable("llvm")
    assert "tirx.MakePackedAPI" not in names and "tirx.SplitHostDevice" not in names
    assert "tirx.UnrollLoop" in names and "s_tir.HoistIfThenElse" in names


def test_a_plan_is_the_pipeline_with_insertions_each_after_its_contract() -> None:
    rng = random.Random(3)
    for _ in range(200):
        passes = random_sequence(rng, 1, 20)
        steps = plan(passes)
        assert _pipeline_names(steps) == [p.name for p in PIPELINE_PASSES]
        inserted = [s for s in steps if s.role == FUZZED]
        assert [s.name for s in inserted] == [p.name for _, p in placeable(passes)]
        for index, step in enumerate(steps):
            if step.role == FUZZED:
                assert slot_of_step(steps, index) >= CONTRACTS[step.name].slot
                assert (slot_of_step(steps, index) < SPLIT_AT) == (CONTRACTS[step.name].phase == 0)


def test_reference_and_minimal_are_sub_lists_of_a_plan() -> None:
    steps = plan([PassSpec("tirx.UnrollLoop"), PassSpec("s_tir.HoistIfThenElse")])
    assert [s.name for s in reference_steps(steps)] == [s.name for s in pipeline_steps()]
    minimal = minimal_steps(steps)
    assert "tirx.StorageRewrite" not in [s.name for s in minimal]
    vectorize = next(s for s in minimal if s.name == "tirx.VectorizeLoop")
    assert vectorize.args == {"enable_vectorize": False}


def test_passes_without_a_contract_are_left_out_and_phases_are_kept() -> None:
    late = PassSpec("tirx.LowerIntrin")  # after the packed API
    early = PassSpec("s_tir.LowerInitBlock")
    steps = plan([late, early])
    fuzzed = [s.name for s in steps if s.role == FUZZED]
    assert fuzzed == ["s_tir.LowerInitBlock", "tirx.LowerIntrin"]
    assert slot_of_step(steps, [s.name for s in steps].index("tirx.LowerIntrin", PACKED_AT)) >= PACKED_AT
    assert [s.role for s in plan([PassSpec("tirx.MakePackedAPI")])].count(FUZZED) == 0


def test_step_of_splits_constructor_arguments_from_config_and_bounds_unrolling() -> None:
    step = step_of(PassSpec("s_tir.HoistIfThenElse", (("support_block_scope_hoisting", True), ("variant", "basic"))))
    assert step.args == {"variant": "basic"}
    assert step.config == {"s_tir.HoistIfThenElse": {"support_block_scope_hoisting": True}}
    unroll = step_of(PassSpec("tirx.UnrollLoop", (("auto_max_extent", 64),)))
    cfg = unroll.config["tirx.UnrollLoop"]
    assert cfg["auto_max_extent"] ** cfg["auto_max_depth"] <= 4096
    assert step_of(PassSpec("tirx.NarrowDataType")).args == {"target_bits": 32}


def test_canonical_lowering_stops_before_the_split() -> None:
    names = [s.name for s in canonical_lowering(len(PIPELINE_PASSES))]
    assert names == ["s_tir.LowerInitBlock", "s_tir.ConvertBlocksToOpaque", "s_tir.LowerMatchBuffer",
                     "s_tir.LowerOpaqueBlock", "tirx.FlattenBuffer", "tirx.VectorizeLoop"]
    assert canonical_lowering(-1) == []
    assert all(s.role == FUZZED for s in canonical_lowering(30))


def test_reserved_attributes_are_found_in_tvmscript() -> None:
    from seedzer.passes.tir.contracts import reserved_attribute

    assert RESERVED_ATTRIBUTES == ("compute_scope",)
    assert reserved_attribute('    with T.attr({"compute_scope": "main_compute_58"}):\n') == "compute_scope"
    assert reserved_attribute('    T.attr({"pragma_auto_unroll_max_step": 64})\n') is None
