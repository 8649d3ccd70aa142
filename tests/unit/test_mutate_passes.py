"""The pass registry: completeness, instantiation, sequential application, errors, stages."""

from __future__ import annotations

import random

import pytest

tvm = pytest.importorskip("tvm")

from seedzer.mutate import (  # noqa: E402
    EXCLUDED,
    PASS_NAMES,
    PASSES,
    PassFailure,
    apply_passes,
    classify_pass_error,
    instantiate,
    optional_pass_names,
    random_sequence,
    sample_pass,
)
from seedzer.mutate.passes import tvm_pass_names  # noqa: E402
from seedzer.mutate.stages import default_target, ensure, facts  # noqa: E402
from seedzer.seed import PassSpec  # noqa: E402
from seedzer.tvmio import module_of  # noqa: E402
from tests.unit.test_mutate_fixtures import load_seeds  # noqa: E402

SEEDS = load_seeds()


def test_catalogue_is_every_tvm_pass_but_the_excluded() -> None:
    enumerated = set(tvm_pass_names())
    assert set(PASS_NAMES) == enumerated - set(EXCLUDED)
    assert set(EXCLUDED) <= enumerated
    assert len(PASSES) >= 60


# HoistIfThenElse(variant="basic") is registered as ...Basic; ForceNarrowIndexToInt32 reuses the
# NarrowDataType pass name (so disabled_pass=["tirx.NarrowDataType"] disables both).
TVM_NAME_QUIRKS = {"tirx.ForceNarrowIndexToInt32": "tirx.NarrowDataType"}


@pytest.mark.parametrize("name", PASS_NAMES)
def test_every_pass_instantiates_with_sampled_arguments(name: str) -> None:
    rng = random.Random(0)
    for _ in range(4):
        spec = PASSES[name].sample(rng)
        p, config = instantiate(spec)
        assert isinstance(p, tvm.transform.Pass)
        # the registry name is TVM's own (usable in disabled_pass), except for two TVM quirks
        assert p.info.name in (name, name + "Basic", TVM_NAME_QUIRKS.get(name))
        with tvm.transform.PassContext(opt_level=3, config=config):
            pass  # every config key and field is accepted by TVM


def test_instantiate_routes_config_arguments() -> None:
    spec = PassSpec("tirx.UnrollLoop", (("auto_max_step", 16), ("explicit_unroll", 0)))
    _, config = instantiate(spec)
    assert config == {"tirx.UnrollLoop": {"auto_max_step": 16, "explicit_unroll": 0}}
    _, config = instantiate(PassSpec("tirx.VectorizeLoop", (("enable_vectorize", False), ("predication", True))))
    assert config == {"tirx.enable_buffer_level_predication": True}
    with pytest.raises(KeyError):
        instantiate(PassSpec("tirx.UnrollLoop", (("no_such_arg", 1),)))
    with pytest.raises(KeyError):
        instantiate(PassSpec("tirx.NoSuchPass"))


def test_sampling_and_sequences() -> None:
    rng = random.Random(1)
    seen = {sample_pass(rng).name for _ in range(2000)}
    assert len(seen) > 0.9 * len(PASS_NAMES)
    for _ in range(50):
        seq = random_sequence(rng)
        assert 1 <= len(seq) <= 50 and all(s.name in PASSES for s in seq)
    assert len(random_sequence(rng, 3, 3)) == 3


def test_apply_passes_runs_a_sequence() -> None:
    mod = module_of(SEEDS["matmul"])
    out = apply_passes(mod, [PassSpec("s_tir.LowerInitBlock"), PassSpec("tirx.UnrollLoop", (("auto_max_step", 8),))])
    assert "target" in out["main"].attrs
    assert out["main"].body.block.body is not None


def test_apply_passes_reports_the_failing_pass() -> None:
    """ForceNarrowIndexToInt32 refuses argmax's int64 output buffer: a precondition error."""
    specs = [PassSpec("tirx.StmtSimplify"), PassSpec("s_tir.LowerInitBlock"), PassSpec("tirx.ForceNarrowIndexToInt32")]
    with pytest.raises(PassFailure) as info:
        apply_passes(module_of(SEEDS["argmax"]), specs)
    failure = info.value
    assert (failure.pass_name, failure.index) == ("tirx.ForceNarrowIndexToInt32", 2)
    assert failure.precondition
    assert "tirx.ForceNarrowIndexToInt32" in str(failure)


def test_repair_runs_the_lowering_a_pass_needs() -> None:
    """FlattenBuffer on block IR fails raw but succeeds once apply_passes repairs the stage."""
    conv = module_of(SEEDS["conv2d"])
    with pytest.raises(PassFailure) as info:
        apply_passes(conv, [PassSpec("tirx.FlattenBuffer")], repair=False)
    assert info.value.pass_name == "tirx.FlattenBuffer" and info.value.index == 0
    assert info.value.precondition  # a lowering-order error is invalid input when not repaired
    out = apply_passes(conv, [PassSpec("tirx.FlattenBuffer")])
    assert {"no_blocks", "flat", "target"} <= facts(out)


def test_facts_and_ensure_follow_the_pipeline_order() -> None:
    mod = module_of(SEEDS["softmax"])
    assert facts(mod) == {"vectorized"}
    with tvm.transform.PassContext(opt_level=3):
        mod = ensure(mod, frozenset({"target"}), default_target())
        assert "target" in facts(mod)
        opaque = ensure(mod, frozenset({"opaque"}), default_target())
        assert {"no_init", "opaque"} <= facts(opaque) and "no_blocks" not in facts(opaque)
        flat = ensure(opaque, frozenset({"vectorized", "flat"}), default_target())
        assert {"no_blocks", "flat", "vectorized"} <= facts(flat)


def test_instruments_see_every_pass() -> None:
    seen: list[str] = []

    @tvm.instrument.pass_instrument
    class Recorder:
        def run_before_pass(self, mod: object, info: object) -> None:
            seen.append(info.name)  # type: ignore[attr-defined]

    specs = [PassSpec("tirx.RemoveNoOp"), PassSpec("s_tir.HoistIfThenElse")]
    apply_passes(module_of(SEEDS["relu"]), specs, instruments=[Recorder()])
    assert "tirx.RemoveNoOp" in seen and "s_tir.HoistIfThenElseBasic" not in seen


def test_optional_pass_names_are_registry_passes() -> None:
    names = optional_pass_names()
    assert names and all(n in PASSES and PASSES[n].optional for n in names)
    assert not PASSES["tirx.VectorizeLoop"].optional  # needed to lower vectorized loops


REAL_PRECONDITIONS = [
    "Check failed: (!param->ty.as<BufferTypeNode>()) is false: This pass must be called after MakePackedAPI",
    "Check failed: (target.has_value()) is false: LowerIntrin: Require the target attribute",
    "Check failed: (opt) is false: MakePackedAPI required the function to be annotated with "
    "tvm::attr::kTarget (target), but the function only has attributes {}",
    "Check failed: (allow_not_defined) is false: Target context required. Please set it by constructing a",
    "Check failed: op->iter_vars.size() == 0 (3 vs. 0) : CompactBufferRegion only works on opaque blocks",
    "Check failed: (op->iter_values.empty()) is false: Non-opaque blocks are not allowed in FlattenBuffer. "
    "Please call pass ConvertBlocksToOpaque before.",
    "The buffer parameter x0_red has dtype T.int64. The function is",
    "Check failed: (device_id_) is false: Unknown device id in current IR",
    "Check failed: fb->value != 0 (0 vs. 0) : Divide by zero",
    "pass X requires LowerInitBlock to be run first",
]
REAL_BUGS = [
    "structural mutate result does not match the declared type",
    "Check failed: undefined.size() == 0 (1 vs. 0) : In PrimFunc main variables (vi,) are used, "
    "but are not passed in as API arguments",
    "LLVM module verification failed with the following errors: !dbg attachment points at wrong subprogram",
    'unknown intrinsic ir.Op(name="tirx.fmod")',
]


def test_classify_pass_error() -> None:
    for message in REAL_PRECONDITIONS:
        assert classify_pass_error(message), message
    for message in REAL_BUGS:
        assert not classify_pass_error(message), message
    stage = (
        "Check failed: (it != flat_map_.end()) is false: Buffer pad_temp is used before its definition "
        "(AllocBuffer/DeclBuffer/PrimFunc param)"
    )
    assert not classify_pass_error(stage)
    assert classify_pass_error(stage, repaired=False)
