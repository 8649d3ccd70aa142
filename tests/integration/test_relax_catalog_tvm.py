"""The Relax pass catalogue on real TVM: every ``tvm.relax.transform`` name is accounted for, and every
catalogue pass builds with sampled arguments and runs in contract on a small imported ONNX model,
leaving a module ``relax.analysis.well_formed`` accepts."""

from __future__ import annotations

import inspect
import random

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tvm import relax  # noqa: E402

from seedzer.kernel.graph.case import GraphPass  # noqa: E402
from seedzer.kernel.graph.observe import apply_pass  # noqa: E402
from seedzer.passes.graph.catalog import EXCLUDED, NOT_PASSES, RELAX_CATALOG  # noqa: E402
from seedzer.passes.graph.contracts import (  # noqa: E402
    PIPELINE_ORDERS,
    is_mutation,
    out_of_contract,
    plan_relax,
)
from seedzer.seed import PassSpec  # noqa: E402

pytestmark = pytest.mark.integration


def _model() -> onnx.ModelProto:
    """x[1,3,8,8] -> Conv(4,3,3,3) -> Relu -> Reshape[1,144] -> MatMul[144,16] -> Add -> Concat with itself."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype("float32"), "w"),
        numpy_helper.from_array(np.array([1, 144], dtype="int64"), "shape"),
        numpy_helper.from_array(rng.standard_normal((144, 16)).astype("float32"), "m"),
        numpy_helper.from_array(rng.standard_normal((16,)).astype("float32"), "b"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Reshape", ["r", "shape"], ["f"]),
        helper.make_node("MatMul", ["f", "m"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["a"]),
        helper.make_node("Concat", ["a", "a"], ["y"], axis=1),
    ]
    model = helper.make_model(helper.make_graph(nodes, "small", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _rich_model() -> onnx.ModelProto:
    """Patterns the high-level rewrites look for: conv+batch_norm, softmax, a reshape chain, parallel
    matmuls on one input, transpose+matmul, take+matmul, matmul of a sum, concat."""
    rng = np.random.default_rng(2)

    def f(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype("float32")

    arrays = {"w": f(4, 3, 3, 3), "s": f(4) ** 2 + 0.5, "bb": f(4), "mu": f(4), "var": f(4) ** 2 + 0.5,
              "c": f(1, 16), "m1": f(16, 8), "m2": f(16, 8), "mt": f(8, 16), "idx": np.array([0, 2, 5]),
              "sh1": np.array([4, 16]), "sh2": np.array([2, 32])}
    inits = [numpy_helper.from_array(a, name) for name, a in arrays.items()]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 35])
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w"], ["cv"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["cv", "s", "bb", "mu", "var"], ["bn"]),
        n("MaxPool", ["bn"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Softmax", ["p"], ["sm"], axis=-1),
        n("Reshape", ["sm", "sh1"], ["r1"]),
        n("Reshape", ["r1", "sh2"], ["r2"]),
        n("Reshape", ["r2", "sh1"], ["t"]),
        n("Add", ["t", "c"], ["u"]),
        n("MatMul", ["u", "m1"], ["a1"]),
        n("MatMul", ["u", "m2"], ["a2"]),
        n("Transpose", ["mt"], ["mtt"], perm=[1, 0]),
        n("MatMul", ["u", "mtt"], ["a3"]),
        n("Gather", ["m1", "idx"], ["g"], axis=1),
        n("MatMul", ["u", "g"], ["a4"]),
        n("Add", ["t", "u"], ["tu"]),
        n("MatMul", ["tu", "m2"], ["a5"]),
        n("Concat", ["a1", "a2", "a3", "a4", "a5"], ["y"], axis=1),
    ]
    model = helper.make_model(helper.make_graph(nodes, "rich", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


MODELS = {"small": _model, "rich": _rich_model}


@pytest.fixture(scope="module", params=sorted(MODELS))
def imported(request: pytest.FixtureRequest) -> tvm.IRModule:
    from tvm.relax.frontend.onnx import from_onnx

    return from_onnx(MODELS[request.param](), keep_params_in_input=False)


def _run(mod: tvm.IRModule, passes: list[PassSpec]) -> tvm.IRModule:
    """The steps as the graph kernel runs them (a pass under the target, or a Relax IR mutation)."""
    for spec in passes:
        mod = apply_pass(mod, GraphPass(spec.name, dict(spec.args)), "llvm")
        relax.analysis.well_formed(mod)  # raises on the first violation
    return mod


_PREFIXES: dict[str, list[PassSpec]] = {
    "imported": [],
    "legalized": [PassSpec("relax.LegalizeOps")],
    "annotated": [PassSpec("relax.LegalizeOps"), PassSpec("relax.AnnotateTIROpPattern")],
    "grouped": [PassSpec("relax.LegalizeOps"), PassSpec("relax.AnnotateTIROpPattern"), PassSpec("relax.FuseOps")],
    "fused": PIPELINE_ORDERS["default-legalize"],
    "no_dataflow": [PassSpec("relax.ToNonDataflow")],
}


def test_every_relax_transform_name_is_accounted_for() -> None:
    names = {n for n, v in vars(relax.transform).items() if not n.startswith("_") and not inspect.ismodule(v)}
    known = {i.function for n, i in RELAX_CATALOG.items() if not is_mutation(n)} | {n for n, _ in EXCLUDED}
    known |= set(NOT_PASSES)
    assert sorted(names - known) == []
    assert sorted(known - names) == []


@pytest.mark.parametrize("name", sorted(RELAX_CATALOG))
def test_pass_runs_in_contract_and_keeps_the_module_well_formed(imported: tvm.IRModule, name: str) -> None:
    rng = random.Random(name)
    info = RELAX_CATALOG[name]
    ran = 0
    for prefix in _PREFIXES.values():
        for _ in range(3 if info.args else 1):
            spec = info.sample(rng)
            if out_of_contract([*prefix, spec]):
                continue
            _run(imported, [*prefix, spec])
            ran += 1
    assert ran > 0, f"{name} is in contract after none of the prefixes"


@pytest.mark.slow
@pytest.mark.parametrize("order", sorted(PIPELINE_ORDERS))
def test_pipeline_orders_compile_and_match_the_default(imported: tvm.IRModule, order: str) -> None:
    passes = PIPELINE_ORDERS[order]
    assert out_of_contract(passes) == []
    mod = _run(imported, plan_relax(passes))
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype("float32")

    def run(m: tvm.IRModule) -> np.ndarray:
        vm = relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())
        return vm["main"](tvm.runtime.tensor(x)).numpy()

    np.testing.assert_allclose(run(mod), run(imported), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_mutated_sequences_run_in_contract_compile_and_match(imported: tvm.IRModule) -> None:
    from seedzer.mutate.sequence import sequence_mutators
    from seedzer.mutate.weighted import pick
    from seedzer.passes.graph.contracts import exact_sequence
    from seedzer.passes.graph.family import RELAX_FAMILY

    rng = random.Random(7)
    mutators = sequence_mutators(RELAX_FAMILY)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype("float32")

    def run(m: tvm.IRModule) -> np.ndarray:
        vm = relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())
        return vm["main"](tvm.runtime.tensor(x)).numpy()

    reference = run(imported)
    seq: list[PassSpec] = []
    for _ in range(12):
        seq = pick(mutators, rng).mutate(seq, rng, other=rng.choice(list(PIPELINE_ORDERS.values())))
        assert out_of_contract(seq) == []
        passes = plan_relax([p for p in seq if not is_mutation(p.name)])  # the passes' soundness only:
        tol = 1e-4 if exact_sequence(passes) else 5e-2  # the IR mutations have their own test
        np.testing.assert_allclose(run(_run(imported, passes)), reference, rtol=tol, atol=tol,
                                   err_msg=str([p.label() for p in passes]))


@pytest.mark.xfail(strict=True, raises=tvm.error.InternalError,
                   reason="TVM 0.27 bug: to_mixed_precision.cc (kNever policy branch) calls "
                   "NTypeFrom on every argument of a call_tir/call_tir_inplace whose arguments changed upstream, "
                   "including the PrimFunc's GlobalVar: 'Expected TensorType, but got R.Callable(...)'")
def test_known_bug_to_mixed_precision_after_inplace_calls() -> None:
    from tvm.relax.frontend.onnx import from_onnx

    _run(from_onnx(_model(), keep_params_in_input=False),
         [PassSpec("relax.DataflowUseInplaceCalls"), PassSpec("relax.ToMixedPrecision")])


@pytest.mark.xfail(strict=True, raises=AttributeError,
                   reason="TVM 0.27 bug: fast_math.py visit_call_ reads call.op.name, which a GlobalVar lacks")
def test_known_bug_fast_math_on_a_call_of_a_relax_function() -> None:
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    with bb.function("helper", [x], private=True):
        bb.emit_func_output(bb.emit(relax.op.exp(x)))
    helper_gv = bb.get().get_global_var("helper")
    y = relax.Var("y", relax.TensorStructInfo((4,), "float32"))
    with bb.function("main", [y]):
        bb.emit_func_output(bb.emit(relax.Call(helper_gv, [y])))
    _run(bb.get(), [PassSpec("relax.FastMathTransform")])
