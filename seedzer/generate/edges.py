"""The ``edge`` biases on NNSmith generation: steer it toward the edges the ONNX specification allows.

Generation (:class:`EdgeSymbolicGen`, only where NNSmith's own constraints allow it):

* ``broadcast``: a broadcasting op (NNSmith's ``BcastBinaryOp`` family and ``Where``) gets a rank-0
  or lower-rank operand: backward insertion deduces such operand ranks, forward insertion picks an
  operand of a lower rank among the graph's tensors;
* ``attributes``: each symbolic attribute of an op (strides, kernels, pads, slice bounds, softmax
  dim...) is pinned with this probability to a range end (0, 1, -1, a related dimension or one
  less); the pins are extra z3 assumptions, tried all together, then one of them, then none;
* ``unit_dims``: each dimension of a new placeholder is pinned to 1 the same way;
* ``negative_axes`` is applied after export, by :func:`seedzer.generate.onnx_edges.negate_axes`.

Selection counts edge features of the exported model with
:func:`seedzer.generate.onnx_edges.edge_features`; the manifest records them and the ``edge`` sort
key is their sum.
"""

from __future__ import annotations

import random
from typing import Any

import z3

from seedzer.generate.constraints import WeightedSymbolicGen
from seedzer.generate.options import EdgeOptions

PIN_VALUES = (0, 1, -1)


# ----------------------------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------------------------


def _is_broadcasting(op: Any) -> bool:
    from nnsmith.abstract.op import BcastBinaryOp, Where

    return isinstance(op, BcastBinaryOp | Where)


def symbolic_params(op: Any) -> list[Any]:
    """The op's attributes that are still free z3 integer constants (NNSmith's ``op<N>_<k>``)."""
    found: list[Any] = []
    for value in vars(op).values():
        items = value if isinstance(value, list | tuple) else [value]
        for v in items:
            if isinstance(v, z3.ArithRef) and z3.is_const(v) and v.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                found.append(v)
    return found


def _dims(tensors: list[Any]) -> list[Any]:
    return [d for t in tensors for d in t.shape]


def attribute_pins(op: Any, related: list[Any], probability: float) -> list[Any]:
    """Edge assumptions for ``op``'s symbolic attributes: each, with ``probability``, equals a range
    end (0, 1, -1) or a related dimension (or one less) when there is one."""
    pins: list[Any] = []
    for param in symbolic_params(op):
        if random.random() >= probability:
            continue
        choices: list[Any] = list(PIN_VALUES)
        if related:
            d = random.choice(related)
            choices += [d, d - 1]
        pins.append(param == random.choice(choices))
    return pins


class EdgeSymbolicGen(WeightedSymbolicGen):
    """:class:`WeightedSymbolicGen` with the ``edge`` biases (see the module docstring)."""

    def __init__(self, opset: list[Any], seed: int, *, edge: EdgeOptions, **kwargs: Any) -> None:
        self._edge = edge
        self._pins: list[Any] = []
        self.edge_pins = 0
        super().__init__(opset, seed, **kwargs)

    def make_symbolic_placeholder(self, rank: int, dtype: Any = None) -> Any:
        """A new placeholder; each dimension is pinned to 1 with probability ``unit_dims``."""
        ph = super().make_symbolic_placeholder(rank, dtype)
        for dim in ph.ttype.shape:
            if not isinstance(dim, int) and random.random() < self._edge.unit_dims:
                self._pins.append(dim == 1)
        return ph

    def check_sat(self, *assumptions: Any) -> Any:
        """Solve with the pending pins (all, then one), else as usual; kept pins become assertions."""
        pins, self._pins = self._pins, []
        if pins and assumptions:
            trials = [pins] if len(pins) == 1 else [pins, [random.choice(pins)]]
            for trial in trials:
                # NNSmith's plain solve: a refused pin is not an unsat insertion
                if super(WeightedSymbolicGen, self).check_sat(*assumptions, *trial) == z3.sat:
                    for pin in trial:
                        self.solver.add(pin)
                    self.edge_pins += len(trial)
                    return z3.sat
        return super().check_sat(*assumptions)

    def try_forward_insert(self, op: Any) -> bool:
        """Forward insertion; a broadcasting op may be asked for an operand of a lower rank."""
        if self._edge.broadcast and _is_broadcasting(op) and random.random() < self._edge.broadcast:
            ranks = sorted({v.ndims for v in self.ir.vars.values()})
            if len(ranks) > 1:
                low = random.choice(ranks[:-1])
                higher = tuple(r for r in ranks if r > low)
                slot = random.randrange(len(op.inp_ranks))
                op.inp_ranks = [(low,) if k == slot else higher for k in range(len(op.inp_ranks))]
        return bool(super().try_forward_insert(op))

    def try_backward_insert(self, op: Any) -> bool:
        """Backward insertion; a broadcasting op may deduce rank-0 or lower-rank operands."""
        if self._edge.broadcast and _is_broadcasting(op) and random.random() < self._edge.broadcast:
            original = op.deduct_inp_ranks_and_dtype

            def deduct(out: list[Any]) -> list[tuple[int, Any]]:
                specs = list(original(out))
                rank = out[0].ndims
                if rank == 0:
                    return specs
                keep = random.randrange(len(specs))
                return [
                    (rank if k == keep else (0 if random.random() < 0.5 else random.randint(0, rank - 1)), dt)
                    for k, (_, dt) in enumerate(specs)
                ]

            op.deduct_inp_ranks_and_dtype = deduct
        return bool(super().try_backward_insert(op))

    def try_forward_insert_at(self, node: Any, input_vars: list[str]) -> bool:
        """Forward insertion at chosen inputs, with attribute pins related to their dimensions."""
        if self._edge.attributes:
            related = _dims([self.ir.vars[v] for v in input_vars])
            self._pins += attribute_pins(node, [d for d in related if not isinstance(d, int)], self._edge.attributes)
        return bool(super().try_forward_insert_at(node, input_vars))

    def try_occupy_placeholder(self, node: Any, phvars: list[str]) -> bool:
        """Backward insertion into placeholders, with attribute pins related to their dimensions."""
        if self._edge.attributes:
            related = _dims([self.ir.vars[v] for v in phvars])
            self._pins += attribute_pins(node, [d for d in related if not isinstance(d, int)], self._edge.attributes)
        return bool(super().try_occupy_placeholder(node, phvars))
