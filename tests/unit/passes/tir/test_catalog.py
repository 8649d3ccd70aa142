"""The pass catalogue on real TVM: completeness, instantiation through the kernel, config routing,
sampling, and planned pass sequences applied and observed by the kernel."""

from __future__ import annotations

import functools
import inspect
import random
from typing import Any

import pytest

tvm = pytest.importorskip("tvm")
import tvm_ffi  # noqa: E402
from tvm import s_tir, tirx  # noqa: E402

from seedzer.kernel.common import Stage, Symptom  # noqa: E402
from seedzer.kernel.tir.case import FUZZED, O0, Case, Step  # noqa: E402
from seedzer.kernel.tir.lowering import StepFailure, apply_steps, make_pass, make_target  # noqa: E402
from seedzer.kernel.tir.observe import observe  # noqa: E402
from seedzer.oracles.preconditions import is_precondition_error  # noqa: E402
from seedzer.passes.tir.catalog import CATALOG, EXCLUDED, PASS_NAMES, random_sequence, sample_pass  # noqa: E402
from seedzer.passes.tir.contracts import PIPELINE_PASSES, SPLIT_AT, pipeline_steps, plan, step_of  # noqa: E402
from seedzer.seed import PassSpec, input_seed, passes_to_json  # noqa: E402
from seedzer.tvmio import module_of, script_of  # noqa: E402
from tests.unit.mutate.tir.test_build import in_child  # noqa: E402
from tests.unit.tir.test_fixtures import load_seeds  # noqa: E402

SEEDS = load_seeds()


def tvm_pass_names() -> list[str]:
    """Every pass constructor of ``tvm.tirx.transform`` and ``tvm.s_tir.transform`` (qualified)."""
    out = []
    for prefix, module in {"tirx": tirx.transform, "s_tir": s_tir.transform}.items():
        for attr in dir(module):
            if attr[:1].isupper() and inspect.isfunction(getattr(module, attr)):
                out.append(f"{prefix}.{attr}")
    return sorted(out)


def _bound(func: Any) -> Any:
    """``func`` as module ``main`` bound to the kernel's target, as the kernel lowers it."""
    return tirx.transform.BindTarget(make_target(O0))(module_of(func))


def test_catalogue_is_every_tvm_pass_but_the_excluded() -> None:
    enumerated = set(tvm_pass_names())
    assert set(PASS_NAMES) == enumerated - set(EXCLUDED)
    assert set(EXCLUDED) <= enumerated
    assert len(CATALOG) >= 60


# HoistIfThenElse(variant="basic") is registered as ...Basic; ForceNarrowIndexToInt32 reuses the
# NarrowDataType pass name (so disabled_pass=["tirx.NarrowDataType"] disables both).
TVM_NAME_QUIRKS = {"tirx.ForceNarrowIndexToInt32": "tirx.NarrowDataType"}


@pytest.mark.parametrize("name", PASS_NAMES)
def test_every_pass_instantiates_with_sampled_arguments(name: str) -> None:
    rng = random.Random(0)
    for _ in range(4):
        step = step_of(CATALOG[name].sample(rng))
        p = make_pass(step)
        assert isinstance(p, tvm.transform.Pass)
        # the registry name is TVM's own (usable in disabled_pass), except for two TVM quirks
        assert p.info.name in (name, name + "Basic", TVM_NAME_QUIRKS.get(name))
        with tvm.transform.PassContext(opt_level=3, config=step.config):
            pass  # every config key and field is accepted by TVM


def test_tvm_name_quirks() -> None:
    basic = make_pass(step_of(PassSpec("s_tir.HoistIfThenElse", (("variant", "basic"),))))
    assert basic.info.name == "s_tir.HoistIfThenElseBasic"
    assert make_pass(step_of(PassSpec("s_tir.HoistIfThenElse"))).info.name == "s_tir.HoistIfThenElse"
    assert make_pass(step_of(PassSpec("tirx.ForceNarrowIndexToInt32"))).info.name == "tirx.NarrowDataType"


def test_step_of_routes_config_arguments() -> None:
    step = step_of(PassSpec("tirx.UnrollLoop", (("auto_max_step", 16), ("explicit_unroll", 0))))
    assert step.args == {}
    assert step.config == {"tirx.UnrollLoop": {"auto_max_step": 16, "explicit_unroll": 0}}
    step = step_of(PassSpec("tirx.VectorizeLoop", (("enable_vectorize", False), ("predication", True))))
    assert step.args == {"enable_vectorize": False}
    assert step.config == {"tirx.enable_buffer_level_predication": True}
    with pytest.raises(KeyError):
        step_of(PassSpec("tirx.UnrollLoop", (("no_such_arg", 1),)))
    with pytest.raises(KeyError):
        step_of(PassSpec("tirx.NoSuchPass"))


def test_sampling_and_sequences() -> None:
    rng = random.Random(1)
    seen = {sample_pass(rng).name for _ in range(2000)}
    assert len(seen) > 0.9 * len(PASS_NAMES)
    for _ in range(50):
        seq = random_sequence(rng)
        assert 1 <= len(seq) <= 50 and all(s.name in CATALOG for s in seq)
    assert len(random_sequence(rng, 3, 3)) == 3


def test_a_planned_sequence_runs() -> None:
    specs = [PassSpec("s_tir.LowerInitBlock"), PassSpec("tirx.UnrollLoop", (("auto_max_step", 8),))]
    steps = plan(specs)
    assert [s.name for s in steps if s.role == FUZZED] == ["s_tir.LowerInitBlock", "tirx.UnrollLoop"]
    out = apply_steps(_bound(SEEDS["matmul"]), steps)
    assert "target" in out["main"].attrs
    script = script_of(SEEDS["matmul"])
    assert observe(Case(script, tuple(steps), input_seed(script))).symptom is Symptom.OK


def test_the_kernel_reports_the_failing_step() -> None:
    """A step that raises is named, with its index in the flat steps (ForceNarrowIndexToInt32 refuses
    argmax's int64 output buffer)."""
    steps = [step_of(PassSpec("tirx.StmtSimplify")), step_of(PassSpec("s_tir.LowerInitBlock")),
             step_of(PassSpec("tirx.ForceNarrowIndexToInt32"))]
    with pytest.raises(StepFailure) as info:
        apply_steps(_bound(SEEDS["argmax"]), steps)
    failure = info.value.observation
    assert (failure.symptom, failure.stage) == (Symptom.EXCEPTION, Stage.PASS)
    assert (failure.pass_name, failure.step_index) == ("tirx.ForceNarrowIndexToInt32", 2)
    assert "tirx.ForceNarrowIndexToInt32" in str(info.value)


def test_contracts_run_a_pass_after_the_lowering_it_needs() -> None:
    """FlattenBuffer on block IR fails raw but succeeds once planned after its contract position."""
    conv = SEEDS["conv2d"]
    with pytest.raises(StepFailure) as info:
        apply_steps(_bound(conv), [step_of(PassSpec("tirx.FlattenBuffer"))])
    assert info.value.observation.pass_name == "tirx.FlattenBuffer" and info.value.observation.step_index == 0
    steps = plan([PassSpec("tirx.FlattenBuffer")])
    index = next(i for i, s in enumerate(steps) if s.role == FUZZED)
    assert steps[index - 1].name == "s_tir.LowerOpaqueBlock"  # where the pipeline runs it: no blocks left
    out = apply_steps(_bound(conv), steps[: index + 1])
    assert _forms(out) >= {"no_blocks", "flat"}
    script = script_of(conv)
    assert observe(Case(script, tuple(steps), input_seed(script))).symptom is Symptom.OK


def _forms(mod: Any) -> set[str]:
    """The pipeline forms (:attr:`PipelinePass.establishes`) that hold for every PrimFunc of ``mod``."""
    state = {"init": False, "nonopaque": False, "match": False, "blocks": False, "multidim": False,
             "vector": False}

    def on_block(b: Any) -> None:
        state["blocks"] = True
        state["init"] |= b.init is not None
        state["nonopaque"] |= len(b.iter_vars) > 0
        state["match"] |= len(b.match_buffers) > 0

    def on_access(x: Any) -> None:
        state["multidim"] |= len(x.indices) > 1

    def on_alloc(x: Any) -> None:
        state["multidim"] |= len(x.buffer.ty.shape) > 1

    def on_for(x: Any) -> None:
        state["vector"] |= int(x.kind) == int(tirx.ForKind.VECTORIZED)

    for func in mod.functions.values():
        if isinstance(func, tirx.PrimFunc):
            tvm_ffi.structural_walk(func.body, [(s_tir.SBlock, on_block),
                                                ((tvm.ir.TensorLoad, tirx.BufferStore), on_access),
                                                (tirx.AllocBuffer, on_alloc), (tirx.For, on_for)])
    out = {"vectorized"} if not state["vector"] else set()
    if not state["init"]:
        out.add("no_init")
    if not state["nonopaque"] and not state["init"]:
        out.add("opaque")
    if not state["match"]:
        out.add("no_match_buffer")
    if not state["blocks"]:
        out.add("no_blocks")
        if not state["multidim"]:
            out.add("flat")
    return out


@pytest.mark.parametrize("seed", ["softmax", "conv2d", "fused_matmul_add_relu"])
def test_the_pipeline_establishes_its_forms_in_order(seed: str) -> None:
    """Each form a pipeline pass establishes holds right after it and stays true up to the split;
    ConvertBlocksToOpaque leaves opaque blocks that only LowerOpaqueBlock removes."""
    mod = _bound(SEEDS[seed])
    assert "no_blocks" not in _forms(mod) and "no_init" not in _forms(mod)
    established: set[str] = set()
    forms_after: dict[str, set[str]] = {}

    def after(index: int, before: Any, out: Any) -> None:
        if index >= SPLIT_AT:
            return
        forms = _forms(out)
        name, form = PIPELINE_PASSES[index].name, PIPELINE_PASSES[index].establishes
        if form is not None:
            established.add(form)
        assert established <= forms, f"{name}: {sorted(established - forms)} lost"
        forms_after[name] = forms

    apply_steps(mod, pipeline_steps(), after=after)
    assert {"no_init", "opaque", "no_blocks", "flat", "vectorized"} <= established
    assert "no_blocks" not in forms_after["s_tir.ConvertBlocksToOpaque"]


def test_instruments_see_every_step() -> None:
    seen: list[str] = []

    @tvm.instrument.pass_instrument
    class Recorder:
        def run_before_pass(self, mod: object, info: object) -> None:
            seen.append(info.name)  # type: ignore[attr-defined]

    steps = plan([PassSpec("tirx.RemoveNoOp"), PassSpec("s_tir.HoistIfThenElse")])
    apply_steps(_bound(SEEDS["relu"]), steps, instruments=[Recorder()])
    remaining = iter(seen)
    assert all(step.name in remaining for step in steps)  # every step, in order (nested passes too)
    assert seen.count("tirx.RemoveNoOp") >= 2 and "s_tir.HoistIfThenElseBasic" not in seen


def test_optional_pipeline_passes_are_catalogue_passes() -> None:
    optional = [p for p in PIPELINE_PASSES if p.optional]
    assert optional and all(p.name in CATALOG for p in optional)
    vectorize = next(p for p in PIPELINE_PASSES if p.name == "tirx.VectorizeLoop")
    assert not vectorize.optional  # needed to lower vectorized loops: turned off, never left out
    assert vectorize.minimal == {"enable_vectorize": False}
    minimal = vectorize.step().minimized()
    assert minimal is not None and minimal.args == {"enable_vectorize": False}


# Still what TVM says on a violated precondition (was mutate.pass_errors; now oracles.preconditions).
REAL_PRECONDITIONS = [
    "Check failed: (!param->ty.as<BufferTypeNode>()) is false: This pass must be called after MakePackedAPI",
    "Check failed: (target.has_value()) is false: LowerIntrin: Require the target attribute",
    "Check failed: (opt) is false: MakePackedAPI required the function to be annotated with "
    "tvm::attr::kTarget (target), but the function only has attributes {}",
    "Check failed: (allow_not_defined) is false: Target context required. Please set it by constructing a",
    "Check failed: op->iter_vars.size() == 0 (3 vs. 0) : CompactBufferRegion only works on opaque blocks",
    "Check failed: (op->iter_values.empty()) is false: Non-opaque blocks are not allowed in FlattenBuffer. "
    "Please call pass ConvertBlocksToOpaque before.",
    "pass X requires LowerInitBlock to be run first",
    # ForceNarrowIndexToInt32 (for WebGPU) refuses wide integer buffers by design, e.g. argmax's output:
    "InternalError: The buffer parameter x0_red has dtype T.int64. The function is ...",
    "InternalError: The buffer T_argmax_v allocated in the function has dtype T.int64. The function is",
]
REAL_BUGS = [
    "structural mutate result does not match the declared type",
    "Check failed: undefined.size() == 0 (1 vs. 0) : In PrimFunc main variables (vi,) are used, "
    "but are not passed in as API arguments",
    "LLVM module verification failed with the following errors: !dbg attachment points at wrong subprogram",
    'unknown intrinsic ir.Op(name="tirx.fmod")',
    # a lowering-order error: contracts guarantee the lowering, so it points at a pass that broke the IR
    "Check failed: (it != flat_map_.end()) is false: Buffer pad_temp is used before its definition "
    "(AllocBuffer/DeclBuffer/PrimFunc param)",
    "Check failed: fb->value != 0 (0 vs. 0) : Divide by zero",
]


def test_precondition_errors() -> None:
    for message in REAL_PRECONDITIONS:
        assert is_precondition_error(message), message
    for message in REAL_BUGS:
        assert not is_precondition_error(message), message


def _observe(script: str, steps: list[Step]) -> dict[str, Any]:
    return observe(Case(script, tuple(steps), input_seed(script))).to_json()


@pytest.mark.parametrize("rng_seed", [4, 5])
def test_random_pass_sequences_within_contracts_apply_and_build(rng_seed: int) -> None:
    """Random sequences, planned within their contracts, never crash and raise only precondition
    errors (each case in a forked child: a crash fails the test instead of the session)."""
    rng = random.Random(rng_seed)
    for seed_name, seed in SEEDS.items():
        specs = random_sequence(rng, 5, 20)
        script, steps = script_of(seed), plan(specs)
        seen = in_child(functools.partial(_observe, script, steps))
        what = f"{seed_name} with {passes_to_json(specs)}: {seen['symptom']} at {seen['pass']}: {seen['message']}"
        assert seen["symptom"] == Symptom.OK.value or (
            seen["symptom"] == Symptom.EXCEPTION.value and is_precondition_error(seen["message"])), what
