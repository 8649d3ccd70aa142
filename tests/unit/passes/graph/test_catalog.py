"""The Relax pass catalogue (TVM-free): names, samplers, weights, exactness, exclusions."""

from __future__ import annotations

import json
import random
import subprocess
import sys

from seedzer.passes.graph.catalog import (
    EXCLUDED,
    NOT_PASSES,
    RELAX_CATALOG,
    RELAX_PASS_NAMES,
    sample_relax_pass,
)
from seedzer.passes.graph.contracts import CONTRACTS, MUTATION_PREFIX, PREFIX, is_mutation
from seedzer.seed import PassSpec, passes_from_json, passes_to_json


def test_every_catalogue_pass_is_named_after_its_transform_attribute_and_has_a_contract() -> None:
    assert tuple(sorted(RELAX_CATALOG)) == RELAX_PASS_NAMES
    for name, info in RELAX_CATALOG.items():
        assert name == info.name == (MUTATION_PREFIX if is_mutation(name) else PREFIX) + info.function
        assert CONTRACTS[name].name == name and CONTRACTS[name].source
        assert info.weight > 0
    assert set(RELAX_CATALOG) == set(CONTRACTS)


def test_excluded_and_catalogue_are_disjoint_and_every_exclusion_says_why() -> None:
    excluded = [name for name, _ in EXCLUDED]
    assert len(excluded) == len(set(excluded))
    functions = {info.function for info in RELAX_CATALOG.values()}
    assert not (set(excluded) & functions) and not (set(NOT_PASSES) & functions)
    assert all(reason.strip() for _, reason in EXCLUDED)
    for vm_pass in ("CallTIRRewrite", "StaticPlanBlockMemory", "VMShapeLower", "AttachGlobalSymbol"):
        assert vm_pass in excluded
    for signature in ("LiftTransformParams", "BundleModelParams", "LazyGetInput"):
        assert signature in excluded


def test_samples_are_json_round_trippable_and_keep_required_arguments() -> None:
    rng = random.Random(0)
    for _ in range(500):
        spec = sample_relax_pass(rng)
        assert spec.name in RELAX_CATALOG
        known = {a.name for a in RELAX_CATALOG[spec.name].args}
        assert {k for k, _ in spec.args} <= known
        assert passes_from_json(passes_to_json([spec])) == [spec]
        json.dumps(spec.to_json())
    for _ in range(20):
        assert "desired_layouts" in dict(RELAX_CATALOG["relax.ConvertLayout"].sample(rng).args)


def test_convert_layout_never_asks_for_relays_default_layout() -> None:
    rng = random.Random(1)
    for _ in range(100):
        layouts = dict(RELAX_CATALOG["relax.ConvertLayout"].sample(rng).args)["desired_layouts"]
        assert all("default" not in v and len(v) >= 2 for op, v in layouts.items() if "conv" in op)


def test_inexact_passes_are_the_ones_that_change_floating_results() -> None:
    inexact = {n for n in RELAX_CATALOG if not CONTRACTS[n].exact}
    assert {"relax.ToMixedPrecision", "relax.FastMathTransform", "relax.AdjustMatmulOrder",
            "relax.ExpandMatmulOfSum", "relax.CombineParallelMatmul"} <= inexact
    assert not inexact & {"relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR", "relax.FoldConstant"}


def test_sampling_respects_names_and_weights() -> None:
    rng = random.Random(2)
    assert {sample_relax_pass(rng, ["relax.FuseOps"]).name for _ in range(20)} == {"relax.FuseOps"}
    counts = {n: 0 for n in RELAX_CATALOG}
    for _ in range(20000):
        counts[sample_relax_pass(rng).name] += 1
    assert counts["relax.LegalizeOps"] > counts["relax.RealizeVDevice"]
    assert all(c > 0 for c in counts.values())
    assert PassSpec("relax.FuseOps", (("fuse_opt_level", 2),)).label() == "relax.FuseOps(fuse_opt_level=2)"


def test_relax_catalogue_is_tvm_free() -> None:
    code = ("import sys\nimport seedzer.passes.graph.catalog, seedzer.passes.graph.contracts\n"
            "import seedzer.passes.graph.family, seedzer.mutate.sequence\n"
            "print(any(m == 'tvm' or m.startswith('tvm.') for m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
