"""The inputs of inserted layers, by role: dense and convolution weights, normalization parameters,
resampling, regions, quantization, and the operators that make a tensor from constants (TVM-free).

The roles of :mod:`seedzer.mutate.graph.insert_roles` (its docstring says what a role is); :data:`ROLES`
holds them all. Shapes follow the data's and the attributes drawn before (``group``,
``kernel_shape``, ``transA``, ``axis``, ``mode``...), so the operator is valid by construction where
the specification says how, and the validity check decides the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seedzer.mutate.graph.insert_roles import TENSOR_ROLES
from seedzer.mutate.graph.insert_values import Role, add_node, const, fill, index_tensor, values_like
from seedzer.mutate.graph.op_schema import OPTIONAL, Formal
from seedzer.mutate.graph.schema_draw import Draw, elements

MAX_CHANNELS = 8
"""Most output channels (or features) an inserted weight makes per group."""


def matmul(d: Draw, formal: Formal) -> Any:
    """``MatMul``'s right operand: ``[K, N]``, batched like the data, or a vector ``[K]``."""
    k, n = d.shape[-1], d.rng.randint(1, MAX_CHANNELS)
    dtype = d.dtype if d.schema.name != "MatMulInteger" else d.rng.choice(["uint8", "int8"])
    d.scratch["b_dtype"] = dtype
    shape = d.rng.choice([(k, n), (k,), (*d.shape[:-2], k, n)] if d.rank > 2 else [(k, n), (k,)])
    if d.rank == 1 and len(shape) == 1:
        shape = (k, n)
    return values_like(d, tuple(shape), dtype)


def zero_point(d: Draw, formal: Formal) -> Any:
    """A zero point: the data's type (``a_``/``x_``), the right operand's (``b_``), or uint8/int8
    (``y_``, which sets QuantizeLinear's output type); absent a third of the time (and for int32 data)."""
    if d.rng.random() < 0.33 or (formal.name == "x_zero_point" and d.dtype == "int32"):
        if formal.name == "y_zero_point":
            d.scratch["q_dtype"] = "uint8"
        return ""
    dtype = {"b_zero_point": d.scratch.get("b_dtype", d.dtype), "y_zero_point": d.rng.choice(["uint8", "int8"])
             }.get(formal.name, d.dtype)
    info = np.iinfo(dtype)
    value = d.rng.choice([0, int(info.min), int(info.max), d.rng.randint(int(info.min), int(info.max))])
    return const(value, dtype)


def scale(d: Draw, formal: Formal) -> Any:
    """A quantization scale: a positive scalar, or one per slice of the ``axis`` dimension."""
    if d.rank and d.rng.random() < 0.3:
        dim = d.shape[d.axis("axis", 1)] if d.rank > 1 else d.shape[0]
        return fill((dim,), "float32", 0.01, 2.0)
    return const(d.rng.choice([0.01, 0.1, 1.0, 0.5, 3.0]), np.float32)


def gemm_b(d: Draw, formal: Formal) -> Any:
    """``Gemm``'s B: ``[K, N]`` (``[N, K]`` with ``transB``), K from the data as ``transA`` reads it."""
    k = d.shape[0] if d.attrs.get("transA") else d.shape[1]
    n = d.rng.randint(1, MAX_CHANNELS)
    d.scratch["gemm"] = (d.shape[1] if d.attrs.get("transA") else d.shape[0], n)
    return values_like(d, (n, k) if d.attrs.get("transB") else (k, n))


def gemm_c(d: Draw, formal: Formal) -> Any:
    """``Gemm``'s C: broadcast to ``[M, N]`` (a scalar, ``[N]``, ``[1, N]``, ``[M, 1]``, ``[M, N]``), or absent."""
    m, n = d.scratch.get("gemm", (1, 1))
    if d.rng.random() < 0.3:
        return ""
    return values_like(d, d.rng.choice([(), (n,), (1, n), (m, 1), (m, n)]))


def einsum(d: Draw, formal: Formal) -> Any:
    """``Einsum``'s equation and operands: a permutation or a reduction of the data, a product with
    another operand over a shared letter, or an elementwise product."""
    letters = "abcde"[: d.rank]
    form = d.rng.choice(["unary", "contract", "elementwise"] if d.rank else ["elementwise"])
    if form == "unary":
        kept = list(letters)
        d.rng.shuffle(kept)
        d.attrs["equation"] = f"{letters}->{''.join(kept[: d.rng.randint(0, len(kept))])}"
        return []
    if form == "contract":
        shared, extra = letters[-1], "z"
        n = d.rng.randint(1, MAX_CHANNELS)
        out = letters[:-1] + extra
        d.attrs["equation"] = f"{letters},{shared}{extra}->{out}"
        return [values_like(d, (d.shape[-1], n))]
    d.attrs["equation"] = f"{letters},{letters}->{letters}"
    return [values_like(d, d.shape)]


def conv_weight(d: Draw, formal: Formal) -> Any:
    """``Conv``'s W ``[M, C/group, k...]``: M a multiple of the group, kernels that fit the padded
    input once dilated (its attributes adjusted where they would not)."""
    channels, spatial = d.shape[1], d.shape[2:]
    group = int(d.attrs.get("group", 1))
    if channels % group:
        group = d.attrs["group"] = 1
    kernel = list(d.attrs.get("kernel_shape") or [d.rng.randint(1, max(1, min(s, 3))) for s in spatial])
    dilations = list(d.attrs.get("dilations") or [1] * len(spatial))
    pads = list(d.attrs.get("pads") or [0] * (2 * len(spatial)))
    for i, size in enumerate(spatial):
        while kernel[i] > 1 and (kernel[i] - 1) * dilations[i] + 1 > size + pads[i] + pads[i + len(spatial)]:
            kernel[i] -= 1
        if (kernel[i] - 1) * dilations[i] + 1 > size + pads[i] + pads[i + len(spatial)]:
            dilations[i] = 1
    if "kernel_shape" in d.attrs:
        d.attrs["kernel_shape"] = kernel
    if "dilations" in d.attrs:
        d.attrs["dilations"] = dilations
    out = group * d.rng.randint(1, max(1, MAX_CHANNELS // group))
    d.scratch["out_channels"] = out
    return fill((out, channels // group, *kernel), d.dtype, -1.0, 1.0)


def convt_weight(d: Draw, formal: Formal) -> Any:
    """``ConvTranspose``'s W ``[C, M/group, k...]``; output padding below the stride."""
    channels, spatial = d.shape[1], d.shape[2:]
    group = int(d.attrs.get("group", 1))
    if channels % group:
        group = d.attrs["group"] = 1
    kernel = list(d.attrs.get("kernel_shape") or [d.rng.randint(1, 3) for _ in spatial])
    strides = list(d.attrs.get("strides") or [1] * len(spatial))
    if "output_padding" in d.attrs:
        d.attrs["output_padding"] = [min(p, s - 1) for p, s in zip(d.attrs["output_padding"], strides, strict=False)]
    if "kernel_shape" in d.attrs:
        d.attrs["kernel_shape"] = kernel
    per_group = d.rng.randint(1, 3)
    d.scratch["out_channels"] = per_group * group
    return fill((channels, per_group, *kernel), d.dtype, -1.0, 1.0)


def out_channels(d: Draw, formal: Formal) -> Any:
    """A convolution's bias ``[M]``, or absent."""
    return "" if d.rng.random() < 0.4 else values_like(d, (int(d.scratch.get("out_channels", 1)),))


def unpool_indices(d: Draw, formal: Formal) -> Any:
    """``MaxUnpool``'s X and I: a ``MaxPool`` of the data with the same kernel, strides and pads."""
    attrs = {k: d.attrs[k] for k in ("kernel_shape", "strides", "pads") if k in d.attrs}
    pooled = add_node(d, "MaxPool", [d.data], outputs=2, **attrs)
    d.data = pooled
    return f"{pooled}.1"


def channels(d: Draw, formal: Formal) -> Any:
    """A per-channel vector ``[C]``."""
    return values_like(d, (d.shape[1],))


def variance(d: Draw, formal: Formal) -> Any:
    """A per-channel variance: positive, ``[C]``."""
    return fill((d.shape[1],), d.dtype, 0.1, 2.0)


def groups(d: Draw, formal: Formal) -> Any:
    """``GroupNormalization``'s scale and bias: per group (opset 18), per channel (opset 21)."""
    count = int(d.attrs.get("num_groups", 1)) if d.schema.since < 21 else d.shape[1]
    return values_like(d, (count,))


def norm_scale(d: Draw, formal: Formal) -> Any:
    """A normalization's scale or bias: the data's dimensions from ``axis`` on (bias: or absent)."""
    if formal.option == OPTIONAL and d.rng.random() < 0.4:
        return ""
    return values_like(d, d.shape[d.axis("axis", -1):])


def ratio(d: Draw, formal: Formal) -> Any:
    """``Dropout``'s ratio, in [0, 1) (inference: the identity whatever it is), or absent."""
    return "" if d.rng.random() < 0.4 else const(d.rng.choice([0.0, 0.5, 0.99]), d.dtype)


def resize(d: Draw, formal: Formal) -> Any:
    """``Resize``'s roi, scales and sizes, drawn together: ``roi`` exactly when the coordinate mode is
    ``tf_crop_and_resize`` (the input that value requires), one of scales and sizes; batch and channel
    kept."""
    if "resize" not in d.scratch:
        rng, spatial = d.rng, d.rank - 2
        factors = [1.0, 1.0] + [rng.choice([0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 0.34]) for _ in range(spatial)]
        crop = d.attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize"
        roi = [0.0] * d.rank + [1.0] * d.rank
        if crop:
            roi = [0.0, 0.0] + [rng.choice([0.0, 0.25]) for _ in range(spatial)] + [1.0, 1.0] + \
                [rng.choice([0.75, 1.0]) for _ in range(spatial)]
        use_sizes = rng.random() < 0.5
        if not use_sizes:
            d.attrs.pop("keep_aspect_ratio_policy", None)
        sizes = [max(1, int(s * f)) for s, f in zip(d.shape, factors, strict=True)]
        d.scratch["resize"] = {"roi": const(roi, np.float32) if crop else "",
                               "scales": "" if use_sizes else const(factors, np.float32),
                               "sizes": const(sizes, np.int64) if use_sizes else ""}
    return d.scratch["resize"][formal.name]


def upsample(d: Draw, formal: Formal) -> Any:
    """``Upsample``'s scales: 1 for batch and channel, 1 to 3 for the spatial dimensions."""
    return const([1.0, 1.0] + [d.rng.choice([1.0, 2.0, 3.0]) for _ in range(d.rank - 2)], np.float32)


def grid(d: Draw, formal: Formal) -> Any:
    """``GridSample``'s grid ``[N, H_out, W_out, 2]``, coordinates a little past [-1, 1]."""
    return fill((d.shape[0], d.rng.randint(1, 4), d.rng.randint(1, 4), 2), d.dtype, -1.2, 1.2)


def affine(d: Draw, formal: Formal) -> Any:
    """``AffineGrid``'s theta ``[N, 2, 3]`` and size ``[N, C, H, W]``."""
    n = d.scratch.setdefault("n", d.rng.randint(1, 2))
    if formal.name == "theta":
        return fill((n, 2, 3), d.dtype if d.dtype.startswith("float") else "float32", -1.0, 1.0)
    return const([n, d.rng.randint(1, 3), d.rng.randint(1, 5), d.rng.randint(1, 5)], np.int64)


def _boxes(d: Draw, count: int) -> np.ndarray:
    height, width = d.shape[2], d.shape[3]
    boxes = []
    for _ in range(count):
        x1, y1 = d.rng.uniform(0, width - 1), d.rng.uniform(0, height - 1)
        boxes.append([x1, y1, d.rng.uniform(x1, width), d.rng.uniform(y1, height)])
    return np.array(boxes, np.float32)


def rois(d: Draw, formal: Formal) -> Any:
    """``RoiAlign``'s boxes ``[num, 4]`` inside the image and their batch indices."""
    count = d.scratch.setdefault("rois", d.rng.randint(1, 3))
    if formal.name == "rois":
        return const(_boxes(d, count))
    return index_tensor(d, np.array([d.rng.randrange(d.shape[0]) for _ in range(count)]), 0, d.shape[0] - 1)


def rois5(d: Draw, formal: Formal) -> Any:
    """``MaxRoiPool``'s rois ``[num, 5]``: a batch index and a box inside the image."""
    count = d.rng.randint(1, 3)
    boxes = _boxes(d, count)
    batch = np.array([[d.rng.randrange(d.shape[0])] for _ in range(count)], np.float32)
    return const(np.concatenate([batch, np.floor(boxes)], axis=1))


def nms(d: Draw, formal: Formal) -> Any:
    """``NonMaxSuppression``'s boxes ``[1, n, 4]`` and scores ``[1, c, n]``, a count, thresholds."""
    n = d.scratch.setdefault("boxes", d.rng.randint(1, 6))
    if formal.name == "boxes":
        corners = np.array([[a, b, a + d.rng.uniform(0.1, 2), b + d.rng.uniform(0.1, 2)]
                            for a, b in ((d.rng.uniform(0, 3), d.rng.uniform(0, 3)) for _ in range(n))], np.float32)
        return const(corners[None])
    if formal.name == "scores":
        return const(np.array([[d.rng.uniform(0, 1) for _ in range(n)] for _ in range(d.rng.randint(1, 2))],
                              np.float32)[None])
    if formal.name == "max_output_boxes_per_class":
        return "" if d.rng.random() < 0.3 else const([d.rng.choice([0, 1, n, 100])], np.int64)
    return "" if d.rng.random() < 0.3 else const([d.rng.choice([0.0, 0.5, 1.0])], np.float32)


def range_bounds(d: Draw, formal: Formal) -> Any:
    """``Range``'s start, limit and delta (scalars): at most 64 elements, counting down too."""
    if "range" not in d.scratch:
        start = d.rng.randint(-5, 5)
        delta = d.rng.choice([1, 2, -1, -3]) if d.dtype != "float32" else d.rng.choice([0.5, 1.0, -0.25, 2.0])
        count = d.rng.randint(0, 20)
        d.scratch["range"] = {"start": start, "limit": start + delta * count, "delta": delta}
    return const(d.scratch["range"][formal.name], d.dtype)


def onehot(d: Draw, formal: Formal) -> Any:
    """``OneHot``'s indices (within [-depth, depth-1]), depth and [off, on] values."""
    depth = d.scratch.setdefault("depth", d.rng.randint(2, 6))
    if formal.name == "indices":
        shape = tuple(d.rng.randint(1, 3) for _ in range(d.rng.randint(1, 2)))
        d.attrs["axis"] = d.rng.randint(-len(shape) - 1, len(shape))
        values = np.array([d.rng.randint(-depth, depth - 1) for _ in range(elements(shape))]).reshape(shape)
        return index_tensor(d, values, -depth, depth - 1)
    if formal.name == "depth":
        return const(depth, d.rng.choice([np.int64, np.float32]))
    return const([d.rng.choice([0, -1]), d.rng.choice([1, 5])], d.rng.choice([np.float32, np.int64]))


def compress(d: Draw, formal: Formal) -> Any:
    """``Compress``'s condition: booleans along the axis (no longer than it), or over the flattened data."""
    length = d.shape[d.axis()] if "axis" in d.attrs else elements(d.shape)
    return const([d.rng.random() < 0.5 for _ in range(d.rng.randint(1, min(length, 64)))], np.bool_)


def embed(d: Draw, formal: Formal) -> Any:
    """``EmbedLayerNormalization``'s ids ``[B, S]`` (within the vocabulary), embeddings ``[*, H]``,
    gamma and beta ``[H]``."""
    b, s, h, vocab = d.scratch.setdefault("embed", (d.rng.randint(1, 2), d.rng.randint(1, 4), 4, 6))
    shapes = {"word_embedding": (vocab, h), "position_embedding": (s + 2, h), "segment_embedding": (2, h),
              "gamma": (h,), "beta": (h,)}
    if formal.name in shapes:
        return fill(shapes[formal.name], "float32", -1.0, 1.0)
    if formal.name == "input_ids":
        return index_tensor(d, np.array([[d.rng.randrange(vocab) for _ in range(s)] for _ in range(b)]), 0,
                            vocab - 1, "int32")
    if formal.name == "segment_ids":
        return const(np.array([[d.rng.randint(0, 1) for _ in range(s)] for _ in range(b)]), np.int32)
    return "" if d.rng.random() < 0.5 else const(np.ones((b, s)), np.int32)


def attention(d: Draw, formal: Formal) -> Any:
    """Contrib ``Attention``'s weights ``[H, 3H]`` and bias ``[3H]`` for a data ``[B, S, H]``."""
    hidden = d.shape[-1]
    if formal.name == "weights":
        return fill((hidden, 3 * hidden), d.dtype, -0.5, 0.5)
    return fill((3 * hidden,), d.dtype, -0.5, 0.5)


LAYER_ROLES: dict[str, Role] = {
    "matmul": matmul, "zero_point": zero_point, "scale": scale, "gemm_b": gemm_b, "gemm_c": gemm_c,
    "einsum": einsum, "conv_weight": conv_weight, "convt_weight": convt_weight, "out_channels": out_channels,
    "unpool_indices": unpool_indices, "channels": channels, "variance": variance, "groups": groups,
    "norm_scale": norm_scale, "ratio": ratio, "resize": resize, "upsample": upsample, "grid": grid,
    "affine": affine, "rois": rois, "rois5": rois5, "nms": nms, "range": range_bounds, "onehot": onehot,
    "compress": compress, "embed": embed, "attention": attention,
}
"""The layer roles by name."""
ROLES: dict[str, Role] = {**TENSOR_ROLES, **LAYER_ROLES}
"""Every role by name (:attr:`seedzer.mutate.graph.op_table.OpRule.roles` names them)."""
