"""Relax pass contracts (TVM-free): phases, placement, planning, exactness, TVM's pipeline orders."""

from __future__ import annotations

from seedzer.passes.graph.contracts import (
    ANNOTATED,
    CONTRACTS,
    GROUPED,
    INITIAL,
    LEGALIZED,
    NO_DATAFLOW,
    PIPELINE_ORDERS,
    exact_sequence,
    fits_at,
    out_of_contract,
    phases_after,
    placeable_relax,
    plan_relax,
    relax_contract,
)
from seedzer.seed import PassSpec


def P(name: str, **args: object) -> PassSpec:
    return PassSpec("relax." + name, tuple(sorted(args.items())))


CHAIN = [P("LegalizeOps"), P("AnnotateTIROpPattern"), P("FoldConstant"), P("FuseOps"), P("FuseTIR")]


def test_lookup() -> None:
    contract = relax_contract("relax.FuseTIR")
    assert contract is not None and GROUPED in contract.needs and GROUPED in contract.clears
    assert relax_contract("relax.CallTIRRewrite") is None
    assert relax_contract("tirx.UnrollLoop") is None
    assert all(c.source for c in CONTRACTS.values())


def test_tvms_own_pipeline_orders_are_in_contract() -> None:
    assert [] not in PIPELINE_ORDERS.values()  # the empty sequence is seeded by the campaign itself
    assert PIPELINE_ORDERS["default-legalize"] == CHAIN == PIPELINE_ORDERS["zero"]
    assert PIPELINE_ORDERS["fold-first"] == [P("FoldConstant"), *CHAIN]
    for name, order in PIPELINE_ORDERS.items():
        assert out_of_contract(order) == [], name
        assert plan_relax(order) == order
    assert phases_after(CHAIN) == frozenset({LEGALIZED, ANNOTATED})


def test_legalization_chain_order_is_enforced() -> None:
    assert [i for i, _ in out_of_contract([P("FuseTIR")])] == [0]
    assert [i for i, _ in out_of_contract([P("FuseOps")])] == [0]
    assert [i for i, _ in out_of_contract([P("AnnotateTIROpPattern")])] == [0]
    assert [i for i, _ in out_of_contract([P("LegalizeOps"), P("FuseOps")])] == [1]
    assert out_of_contract(CHAIN[:4]) == []  # ending between FuseOps and FuseTIR is fine
    assert [i for i, _ in out_of_contract([*CHAIN, P("FuseTIR")])] == [5]


def test_high_level_rewrites_must_precede_legalization() -> None:
    high = [P("ConvertLayout", desired_layouts={"relax.nn.conv2d": ["NHWC", "OHWI"]}), P("ToMixedPrecision"),
            P("FoldBatchnormToConv2D"), P("DecomposeOpsForInference"), P("CombineParallelMatmul")]
    assert out_of_contract(high) == []
    late = [P("LegalizeOps"), *high]
    dropped = out_of_contract(late)
    assert [i for i, _ in dropped] == [1, 2, 3, 4, 5]
    assert all("LegalizeOps" in why for _, why in dropped)


def test_dataflow_only_passes_after_to_non_dataflow_until_convert_to_dataflow() -> None:
    seq = [P("ToNonDataflow"), P("ToMixedPrecision"), P("ConvertToDataflow"), P("ToMixedPrecision")]
    assert [i for i, _ in out_of_contract(seq)] == [1]
    assert phases_after(seq[:1]) == frozenset({NO_DATAFLOW})
    assert phases_after(seq) == INITIAL
    assert [i for i, _ in out_of_contract([*CHAIN[:3], P("ToNonDataflow"), P("FuseOps")])] == [4]


def test_between_fuse_ops_and_fuse_tir_only_grouping_safe_passes() -> None:
    grouped = CHAIN[:4]
    assert out_of_contract([*grouped, P("DeadCodeElimination"), P("FuseTIR")]) == []
    # FoldConstant folds into the primitive functions FuseOps made, which FuseTIR rejects (fuse_tir.cc)
    assert [i for i, _ in out_of_contract([*grouped, P("FoldConstant"), P("FuseTIR")])] == [4]
    assert [i for i, _ in out_of_contract([*grouped, P("InlinePrivateFunctions"), P("FuseTIR")])] == [4]


def test_dropped_passes_establish_nothing_and_placeable_keeps_indices() -> None:
    seq = [P("AnnotateTIROpPattern"), P("LegalizeOps"), P("FuseOps"), P("AnnotateTIROpPattern"), P("FuseOps"),
           P("Bogus")]
    kept = placeable_relax(seq)
    assert [i for i, _ in kept] == [1, 3, 4]
    assert plan_relax(seq) == [seq[1], seq[3], seq[4]]
    dropped = dict(out_of_contract(seq))
    assert sorted(dropped) == [0, 2, 5]
    assert "no Relax pass" in dropped[5]
    assert "AnnotateTIROpPattern" in dropped[2]


def test_exact_sequence_only_looks_at_planned_passes() -> None:
    assert exact_sequence([])
    assert exact_sequence(CHAIN)
    assert not exact_sequence([P("FastMathTransform"), *CHAIN])
    assert exact_sequence([*CHAIN, P("FastMathTransform")])  # dropped: runs after LegalizeOps


def test_fits_at() -> None:
    assert fits_at(CHAIN, 0, P("ConvertLayout", desired_layouts={"relax.nn.conv2d": ["NHWC", "OHWI"]}))
    assert not fits_at(CHAIN, 1, P("ToMixedPrecision"))
    assert fits_at(CHAIN, 3, P("FoldConstant")) and not fits_at(CHAIN, 4, P("FoldConstant"))
    assert not fits_at(CHAIN, 0, P("FuseTIR"))
