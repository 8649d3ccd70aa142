"""Kernel: whether an output is ill-conditioned where TVM and onnxruntime differ on it.

Two correct engines round differently (another summation order, a fused multiply-add): a few units
in the last place apart. Most outputs carry that along within the comparison's tolerance, but an
output computed through a discontinuity (``Round`` of a sum at a ``.5`` tie, ``Floor``/``Ceil``, a
cast to an integer) or a near-singularity (``Tan`` near its pole) turns it into a large difference,
and ``onnx.reference``, summing in yet another order, may side with either engine by chance. The
study's audit found such false alarms (a ``Cos(Round(Conv))`` output at a tie, ``Tan`` near its pole).

The check asks the reference itself: moved by a relative :data:`PERTURBATION` (a few float32 units
in the last place, far inside every tolerance), do the graph's floating inputs move the reference's
output beyond the tolerance at the elements where TVM and onnxruntime differ? Then the difference
says nothing about either engine. Integer and boolean inputs are left as they are; an output that
the moved inputs give another shape or dtype (a size computed from values) is not called
ill-conditioned. A TVM bug at an exact discontinuity (a rounding mode at a tie) is given up by
this check: random inputs rarely sit there, and a false alarm costs a maintainer more.

Depends on numpy, onnx and :mod:`seedzer.kernel.comparison` only (copied verbatim into repro.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from seedzer.kernel.comparison import differing

# --- kernel code (everything below is copied verbatim into repro.py) ---
PERTURBATION = 2.0 ** -19
"""Relative change of each floating input (about 4 float32 units in the last place)."""
LOSSY_PERTURBATION = 2.0 ** -11
"""Relative change of inputs and constants after a lossy pass (``ToMixedPrecision``: a float16 unit in
the last place), which rounds both."""


def moved_inputs(feeds: dict[str, np.ndarray], sign: int, relative: float = PERTURBATION, *,
                 spare_extremes: bool = False) -> dict[str, np.ndarray]:
    """``feeds`` with every floating input scaled by ``1 + sign * relative`` (in its own dtype);
    ``spare_extremes``: values beyond half the dtype's largest stay as they are (special inputs: moving
    the largest finite value would overflow it to an infinity)."""

    def move(v: np.ndarray) -> np.ndarray:
        if v.dtype.kind != "f":
            return v
        with np.errstate(over="ignore", invalid="ignore"):
            moved = (v * (1 + sign * relative)).astype(v.dtype)
            return np.where(np.abs(v) > np.finfo(v.dtype).max / 2, v, moved) if spare_extremes else moved

    return {k: move(v) for k, v in feeds.items()}


def moved_constants(model: onnx.ModelProto, sign: int, relative: float) -> onnx.ModelProto:
    """``model`` with every floating initializer and ``Constant`` value scaled by ``1 + sign * relative``
    (what a lossy pass, casting constants to float16, does to them)."""
    moved = onnx.ModelProto()
    moved.CopyFrom(model)
    tensors = list(moved.graph.initializer) + [a.t for n in moved.graph.node if n.op_type == "Constant"
                                               for a in n.attribute if a.name == "value"]
    for tensor in tensors:
        value = numpy_helper.to_array(tensor)
        if value.dtype.kind == "f":
            tensor.CopyFrom(numpy_helper.from_array((value * (1 + sign * relative)).astype(value.dtype), tensor.name))
    return moved


def rounded_to_half(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with every float32 tensor a node of its main graph makes rounded to float16 and back (a
    ``Cast`` pair after the node): what a lossy pass computing in float16 does to intermediate values (a
    sum of 4.50149 held as 4.5 rounds to 4, not 5). ``model`` unchanged when shape inference cannot type it."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types
        return model
    infos = [*inferred.graph.value_info, *inferred.graph.output]
    floats = {vi.name for vi in infos if vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    rounded = onnx.ModelProto()
    rounded.CopyFrom(model)
    nodes: list[onnx.NodeProto] = []
    for node in rounded.graph.node:
        casts = []
        for i, name in enumerate(node.output):
            if name in floats:
                node.output[i] = f"{name}__full"
                half = onnx.TensorProto.FLOAT16
                casts += [onnx.helper.make_node("Cast", [f"{name}__full"], [f"{name}__half"], to=half),
                          onnx.helper.make_node("Cast", [f"{name}__half"], [name], to=onnx.TensorProto.FLOAT)]
        nodes += [node, *casts]
    del rounded.graph.node[:]
    rounded.graph.node.extend(nodes)
    return rounded


def ill_conditioned(moved_output: Callable[[int], Any], spec: Any, actual: Any, expected: Any,
                    limits: dict[str, tuple[float, float]]) -> bool:
    """Whether ``spec`` (one output of the reference) moves beyond the tolerance, when what it is computed
    from is moved either way (``moved_output(+1)``, ``moved_output(-1)``: the reference's output then), at
    an element where ``actual`` (TVM's) and ``expected`` (the other side's) differ. A failure of
    ``moved_output``, or an output of another shape or dtype, counts as no evidence."""
    s, a, e = np.asarray(spec), np.asarray(actual), np.asarray(expected)
    if not (s.shape == a.shape == e.shape) or s.dtype.kind != "f" or a.dtype != e.dtype:
        return False
    rtol, atol = limits.get(str(e.dtype), (0.0, 0.0))
    differing_now = differing(e, a, rtol, atol)
    if not differing_now.any():
        return False
    for sign in (1, -1):
        try:
            moved = np.asarray(moved_output(sign))
        except Exception:  # the reference implementation raises many types
            continue
        if moved.shape == s.shape and moved.dtype == s.dtype and differing(s, moved, rtol, atol)[differing_now].any():
            return True
    return False


def has_floating_input(feeds: dict[str, np.ndarray]) -> bool:
    """Whether any of ``feeds`` is floating (else moving the inputs changes nothing)."""
    return any(v.dtype.kind == "f" for v in feeds.values())
