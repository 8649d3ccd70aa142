"""Generation-time constraints on NNSmith: constrained op subclasses and a weighted graph generator.

* Convolution kernels: subclasses of NNSmith's ``NCHWConv2d`` and ``Conv1d`` add z3 constraints on
  the kernel sizes and cap ``out_channels * in_channels * kernel`` (the weight's element count) so
  that no weight exceeds the budget. ``torch.Linear`` gets the same weight cap. The subclasses keep
  their parent's class name, so ``name()`` (``core.NCHWConv2d``), the op-support table and the torch
  materializer (dispatch by type, subclasses included) all treat them as the original op.
* Op weights and required ops: NNSmith 0.1.0's ``model_gen`` has no op weighting (it picks ops
  with ``random.choice``), so :class:`WeightedSymbolicGen` overrides the op-sampling hook
  ``pick_next_op_type``. It also bounds the number of insertion attempts (so impossible
  constraints end quickly and deterministically) and counts z3 unsat/unknown answers.
"""

from __future__ import annotations

import math
import random
import warnings
from typing import Any

import z3

with warnings.catch_warnings():  # nnsmith.util warns at import that pygraphviz is missing
    warnings.simplefilter("ignore")
    from nnsmith.abstract.arith import nnsmith_le, nnsmith_mul
    from nnsmith.abstract.op import AbsOpBase, Conv1d, NCHWConv2d
    from nnsmith.graph_gen import SymbolicGen

from seedzer.generate.options import ConvOptions

# Required ops are tried with this probability while the graph lacks one of them.
REQUIRED_OP_PROBABILITY = 0.5
# A generation stops after this many insertion attempts per requested node.
ATTEMPTS_PER_NODE = 16


def _in_set(x: Any, values: tuple[int, ...]) -> Any:
    if isinstance(x, int):
        return x in values
    return z3.Or(*[x == v for v in values])


def kernel_constraints(kernel: Any, conv: ConvOptions) -> list[Any]:
    """z3 (or Python bool) constraints restricting one kernel dimension."""
    cons: list[Any] = []
    if conv.kernel_sizes is not None:
        cons.append(_in_set(kernel, conv.kernel_sizes))
    if conv.min_kernel is not None:
        cons.append(kernel >= conv.min_kernel)
    if conv.max_kernel is not None:
        cons.append(kernel <= conv.max_kernel)
    return cons


def _product(*xs: Any) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = nnsmith_mul(out, x)
    return out


def largest_kernel(conv: ConvOptions) -> int | None:
    """The largest kernel size ``conv`` allows, or None when kernels are unbounded."""
    bounds = [b for b in (conv.max_kernel, max(conv.kernel_sizes) if conv.kernel_sizes else None) if b is not None]
    return min(bounds) if bounds else None


def weight_budget(out_ch: Any, in_ch: Any, kernel: tuple[Any, ...], conv: ConvOptions, max_weight: int) -> list[Any]:
    """Constraints keeping ``out_ch * in_ch * prod(kernel) <= max_weight``.

    With bounded kernels this caps each channel count linearly (``c * c * k_max^d <= max_weight``),
    which z3 solves far faster than the product; with unbounded kernels the product is used.
    """
    k_max = largest_kernel(conv)
    if k_max is not None:
        cap = math.isqrt(max_weight // k_max ** len(kernel))
        return [nnsmith_le(out_ch, cap), nnsmith_le(in_ch, cap)]
    return [nnsmith_le(_product(out_ch, in_ch, *kernel), max_weight)]


def constrained_conv2d(conv: ConvOptions, max_weight: int) -> type[AbsOpBase]:
    """A ``core.NCHWConv2d`` whose kernel obeys ``conv`` and whose weight has <= ``max_weight`` elements."""

    class NCHWConv2d(_BaseConv2d):  # same name: NNSmith identifies ops by class name
        def requires(self, input_shapes: list[Any]) -> list[Any]:
            cons: list[Any] = list(super().requires(input_shapes))
            cons += kernel_constraints(self.kernel_h_size, conv)
            cons += kernel_constraints(self.kernel_w_size, conv)
            if conv.square:
                cons.append(self.kernel_h_size == self.kernel_w_size)
            kernel = (self.kernel_h_size, self.kernel_w_size)
            cons += weight_budget(self.out_channels, self.in_channels, kernel, conv, max_weight)
            return cons

    NCHWConv2d.__qualname__ = "NCHWConv2d"
    return NCHWConv2d


def constrained_conv1d(conv: ConvOptions, max_weight: int) -> type[AbsOpBase]:
    """A ``core.Conv1d`` whose kernel obeys ``conv`` and whose weight has <= ``max_weight`` elements."""

    class Conv1d(_BaseConv1d):
        def requires(self, input_shapes: list[Any]) -> list[Any]:
            cons: list[Any] = list(super().requires(input_shapes))
            cons += kernel_constraints(self.kernel_size, conv)
            cons += weight_budget(self.out_channels, self.in_channels, (self.kernel_size,), conv, max_weight)
            return cons

    Conv1d.__qualname__ = "Conv1d"
    return Conv1d


def constrained_linear(max_weight: int) -> type[AbsOpBase]:
    """A ``torch.Linear`` whose weight matrix has <= ``max_weight`` elements (imports torch)."""
    from nnsmith.materialize.torch.dialect import Linear as _BaseLinear

    class Linear(_BaseLinear):  # type: ignore[misc]
        def requires(self, input_shapes: list[Any]) -> list[Any]:
            cons: list[Any] = list(super().requires(input_shapes))
            cons.append(nnsmith_le(nnsmith_mul(self.ifeat, self.ofeat), max_weight))
            return cons

    Linear.__qualname__ = "Linear"
    return Linear


_BaseConv2d: Any = NCHWConv2d
_BaseConv1d: Any = Conv1d


def constrain_opset(opset: list[Any], conv: ConvOptions, max_weight: int) -> list[Any]:
    """Replace the conv and linear ops of ``opset`` by their constrained subclasses."""
    makers = {
        "core.NCHWConv2d": lambda: constrained_conv2d(conv, max_weight),
        "core.Conv1d": lambda: constrained_conv1d(conv, max_weight),
        "torch.Linear": lambda: constrained_linear(max_weight),
    }
    return [makers[op.name()]() if op.name() in makers else op for op in opset]


def _first_input_rank(op_type: Any) -> int | None:
    """The rank an op's first input must have, when it is a single fixed rank (4 for Conv2d)."""
    params = [z3.Int(f"_probe{k}") for k in range(op_type.get_num_var_param())]
    ranks = op_type(*params).inp_ranks
    if ranks and len(ranks[0]) == 1:
        return int(ranks[0][0])
    return None


class WeightedSymbolicGen(SymbolicGen):  # type: ignore[misc]
    """NNSmith's symbolic generator with weighted op sampling, required ops and bounded attempts."""

    def __init__(
        self,
        opset: list[Any],
        seed: int,
        *,
        weights: list[float],
        required: list[Any],
        symbolic_init: bool,
        **kwargs: Any,
    ) -> None:
        self._weights = weights
        self._required = required
        self._required_rank = {op: _first_input_rank(op) for op in required}
        self._attempts = 0
        self._max_nodes = 0
        self.z3_unsat = 0
        self.z3_unknown = 0
        super().__init__(opset, seed, symbolic_init=symbolic_init, **kwargs)

    def check_sat(self, *assumptions: Any) -> Any:
        """Solve as NNSmith does, counting unsat and unknown (timeout) answers."""
        result = super().check_sat(*assumptions)
        if result == z3.unsat:
            self.z3_unsat += 1
        elif result == z3.unknown:
            self.z3_unknown += 1
        return result

    def missing_required(self) -> list[Any]:
        """Required op types not yet present in the graph."""
        present = {type(inst.iexpr.op).__name__ for inst in self.ir.insts}
        return [op for op in self._required if op.__name__ not in present]

    def random_rank(self) -> int:
        """Placeholder ranks: while a required op is missing, the rank its first input needs."""
        for op in self.missing_required():
            rank = self._required_rank.get(op)
            if rank is not None and rank in self.rank_choices:
                return rank
        return int(random.choice(self.rank_choices))

    def pick_next_op_type(self) -> Any:
        """The op-sampling hook: a missing required op (always on the last slot), else by weight."""
        missing = self.missing_required()
        if missing:
            last_slot = self.num_op() >= self._max_nodes - 1
            if last_slot or random.random() < REQUIRED_OP_PROBABILITY:
                return random.choice(missing)
        return random.choices(self.op_candidates, weights=self._weights)[0]

    def extra_exit_check(self, max_node_size: int) -> bool:
        """Stop after a bounded number of insertion attempts."""
        self._max_nodes = max_node_size
        self._attempts += 1
        return self._attempts > ATTEMPTS_PER_NODE * max_node_size


def fresh_z3_context() -> None:
    """Make z3's default context a new one (the old one lives on while its terms do)."""
    z3.z3._main_ctx = None


def make_graph_generator(
    opset: list[Any],
    seed: int,
    *,
    weights: list[float],
    required: list[Any],
    max_nodes: int,
    method: str,
    timeout_ms: int,
    generator: type[WeightedSymbolicGen] | None = None,
    **kwargs: Any,
) -> WeightedSymbolicGen:
    """Run NNSmith's abstract generation with the op-sampling hook; ``make_concrete()`` gives the graph.

    Mirrors ``nnsmith.graph_gen.model_gen`` (same construction and ``abstract_gen`` call), with
    :class:`WeightedSymbolicGen` in place of ``SymbolicGen``. Each graph is solved in a fresh z3
    context: z3 hash-conses terms per context and its search depends on term ids, so a shared
    context would make a seed's model depend on what the process solved before. ``generator`` is
    the class to build (a subclass such as :class:`~seedzer.generate.edges.EdgeSymbolicGen`, with
    its own keyword arguments in ``kwargs``).
    """
    fresh_z3_context()
    cls = generator or WeightedSymbolicGen
    gen = cls(
        opset,
        seed,
        weights=weights,
        required=required,
        symbolic_init=method in ("symbolic", "symbolic-sinit"),
        **kwargs,
    )
    gen.abstract_gen(max_node_size=max_nodes, max_gen_millisec=timeout_ms)
    return gen
