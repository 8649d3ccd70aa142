"""z3 constraints on NNSmith's conv ops and the weighted, bounded graph generator (no torch export)."""

from __future__ import annotations

import time
from typing import Any

import pytest

z3 = pytest.importorskip("z3")
op_mod = pytest.importorskip("nnsmith.abstract.op")

from nnsmith.abstract.dtype import DType  # noqa: E402
from nnsmith.abstract.tensor import AbsTensor  # noqa: E402

from seedzer.generate.constraints import (  # noqa: E402
    constrain_opset,
    constrained_conv1d,
    constrained_conv2d,
    make_graph_generator,
)
from seedzer.generate.options import ConvOptions  # noqa: E402


def _solve_conv2d(conv: ConvOptions, budget: int, *extra: Any) -> Any:
    op_t = constrained_conv2d(conv, budget)
    op = op_t(*[z3.Int(f"p{i}") for i in range(op_t.get_num_var_param())])
    x = AbsTensor([z3.Int(f"x{i}") for i in range(4)], DType.float32)
    solver = z3.Solver()
    solver.add(*[d >= 1 for d in x.shape], *[d <= 64 for d in x.shape])
    solver.add(*op.checked_requires([x]))
    solver.add(*[c(op) for c in extra])
    return solver, op


def test_conv2d_subclass_keeps_nnsmith_identity() -> None:
    op_t = constrained_conv2d(ConvOptions(kernel_sizes=(3,)), 100)
    assert op_t.name() == "core.NCHWConv2d" and issubclass(op_t, op_mod.NCHWConv2d)
    assert constrained_conv1d(ConvOptions(), 100).name() == "core.Conv1d"
    opset = constrain_opset([op_mod.ReLU, op_mod.NCHWConv2d], ConvOptions(kernel_sizes=(1,)), 10)
    assert opset[0] is op_mod.ReLU and opset[1] is not op_mod.NCHWConv2d and opset[1].name() == "core.NCHWConv2d"


def test_conv2d_kernel_and_weight_budget_are_enforced() -> None:
    solver, op = _solve_conv2d(ConvOptions(kernel_sizes=(3,)), 200)
    assert solver.check() == z3.sat
    m = solver.model()
    kh, kw = m.eval(op.kernel_h_size).as_long(), m.eval(op.kernel_w_size).as_long()
    weight = m.eval(op.out_channels * op.in_channels * op.kernel_h_size * op.kernel_w_size).as_long()
    assert (kh, kw) == (3, 3) and weight <= 200
    other_kernel, _ = _solve_conv2d(ConvOptions(kernel_sizes=(3,)), 200, lambda o: o.kernel_w_size != 3)
    assert other_kernel.check() == z3.unsat
    too_heavy, _ = _solve_conv2d(ConvOptions(kernel_sizes=(3,)), 200, lambda o: o.out_channels * o.in_channels > 22)
    assert too_heavy.check() == z3.unsat


def test_kernel_range_and_square() -> None:
    solver, op = _solve_conv2d(ConvOptions(min_kernel=5, max_kernel=7), 10_000, lambda o: o.kernel_h_size != 6)
    assert solver.check() == z3.sat
    m = solver.model()
    kh, kw = m.eval(op.kernel_h_size).as_long(), m.eval(op.kernel_w_size).as_long()
    assert kh == kw and kh in (5, 7)


def test_impossible_conv_constraints_are_unsat() -> None:
    solver, _ = _solve_conv2d(ConvOptions(kernel_sizes=(300,)), 1000)
    assert solver.check() == z3.unsat


OPS = [op_mod.ReLU, op_mod.Sin, op_mod.Add, op_mod.NCHWConv2d]


def _graph(
    seed: int, weights: list[float], required: list[Any], nodes: int = 6, conv: ConvOptions | None = None
) -> Any:
    opset = constrain_opset(OPS, conv or ConvOptions(), 1 << 16)
    req = [op for op in opset if any(op.name() == r.name() for r in required)]
    return make_graph_generator(
        opset, seed, weights=weights, required=req, max_nodes=nodes, method="symbolic-cinit",
        timeout_ms=5000, dtype_choices=["float32"],
    )  # fmt: skip


def _op_names(gen: Any) -> list[str]:
    return [type(i.iexpr.op).__name__ for i in gen.ir.insts]


def test_zero_weight_ops_are_never_sampled_and_required_ops_appear() -> None:
    for seed in range(4):
        gen = _graph(seed, [1.0, 1.0, 0.0, 1.0], [op_mod.NCHWConv2d])
        names = _op_names(gen)
        assert "Add" not in names and "NCHWConv2d" in names and not gen.missing_required()


def test_same_seed_same_graph() -> None:
    a = _graph(7, [1.0] * 4, [])
    b = _graph(7, [1.0] * 4, [])
    assert str(a.make_concrete()) == str(b.make_concrete())


def test_impossible_required_op_ends_quickly() -> None:
    start = time.perf_counter()
    gen = _graph(0, [1.0] * 4, [op_mod.NCHWConv2d], nodes=3, conv=ConvOptions(kernel_sizes=(300,)))
    assert gen.missing_required() and time.perf_counter() - start < 10
    assert gen.z3_unsat > 0


class _EmptyGen:
    """What NNSmith leaves when no operator could be inserted."""

    def __init__(self, unsat: int, unknown: int) -> None:
        self.z3_unsat, self.z3_unknown, self.last_solution = unsat, unknown, None
        self.ir = type("IR", (), {"n_compute_inst": staticmethod(lambda: 0)})()


@pytest.mark.parametrize(("unsat", "unknown", "reason"), [(5, 0, "z3 unsat"), (1, 4, "z3 timeout")])
def test_empty_graph_is_rejected_as_unsat_or_timeout(
    monkeypatch: pytest.MonkeyPatch, unsat: int, unknown: int, reason: str
) -> None:
    from seedzer.generate import constraints
    from seedzer.generate.errors import Rejected
    from seedzer.generate.nnsmith_adapter import NNSmithGenerator
    from seedzer.generate.options import GenerationOptions

    monkeypatch.setattr(constraints, "make_graph_generator", lambda *a, **k: _EmptyGen(unsat, unknown))
    gen = object.__new__(NNSmithGenerator)
    gen.opts, gen.opset, gen.weights, gen.required = GenerationOptions(), [], [], []
    with pytest.raises(Rejected) as info:
        gen.generate(1)
    assert info.value.reason == reason
