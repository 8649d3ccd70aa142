"""What the ONNX schemas cannot say about an operator: the one table of per-operator knowledge the
insertion sampler (:mod:`seedzer.mutate.graph.insertion`) adds to the schemas. TVM-free.

The operators to reach come from TVM's importer at run time, and each one's inputs, attributes,
types and versions from its schema (:mod:`seedzer.mutate.graph.op_schema`). A schema does not say which
input is an index into which dimension, how an input's shape follows the data's, which ranks an
operator accepts, or which attribute values leave its result undefined: an operator that needs such
knowledge has an :class:`OpRule` here. Every input without a role is drawn by its type: the data
input is the model's tensor the insertion reads, an input of the data's type a tensor that
broadcasts with it, an optional one present or absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

USABLE_DTYPES: dict[str, float] = {"float32": 8.0, "float64": 1.0, "float16": 0.5, "int64": 2.0, "int32": 2.0,
                                   "int8": 0.7, "uint8": 0.7, "bool": 1.0}
"""Element types an insertion draws (the ones onnxruntime, onnx.reference and TVM all handle), weighted."""
MAX_ELEMENTS = 4096
"""Largest tensor (elements) an inserted operator reads as its data, unless its rule says otherwise."""


@dataclass(frozen=True)
class OpRule:
    """Per-operator knowledge (see the module docstring).

    ``rank``: the data's rank range (the data is reshaped into it when the target's is outside);
    ``data``: the formal input the model's tensor feeds (``""``: the first; None: none, the operator
    makes its tensor from constants); ``roles``: formal input -> role (:mod:`seedzer.mutate.graph.insert_roles`);
    ``attrs``: attribute -> the values to draw from (instead of the schema's draw); ``absent``:
    attributes never set (their default is the only defined behaviour); ``dtypes``: the data types
    allowed (narrower than the schema's); ``max_elements``: the largest data it reads; ``outputs``: the
    most outputs asked of it; ``domain``: the domain TVM's converter means (when ONNX and onnxruntime's
    contrib operators share the name)."""

    rank: tuple[int, int] = (0, 5)
    data: str | None = ""
    roles: dict[str, str] = field(default_factory=dict)
    attrs: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    absent: tuple[str, ...] = ()
    dtypes: tuple[str, ...] | None = None
    max_elements: int = MAX_ELEMENTS
    outputs: int | None = None
    domain: str | None = None


FLOATS = ("float32", "float64", "float16")
CONV = OpRule(rank=(3, 5), roles={"W": "conv_weight", "B": "out_channels"}, dtypes=("float32", "float64"),
              max_elements=2048)
POOL = OpRule(rank=(3, 5), dtypes=("float32", "float64"), max_elements=1024)
REDUCE = OpRule(roles={"axes": "axes"})
NORM_AXIS = OpRule(rank=(1, 5), roles={"Scale": "norm_scale", "B": "norm_scale", "scale": "norm_scale"},
                   dtypes=("float32", "float64"))
INT_DIVISOR = {"B": "divisor"}

RULES: dict[str, OpRule] = {
    # elementwise with an operand whose values matter
    "Div": OpRule(roles=INT_DIVISOR), "Mod": OpRule(roles=INT_DIVISOR),
    "Pow": OpRule(roles={"Y": "exponent"}, dtypes=("float32", "float64", "int32", "int64")),
    "BitShift": OpRule(roles={"Y": "shift"}, dtypes=("uint8",)),
    "PRelu": OpRule(roles={"slope": "unidirectional"}),
    "Where": OpRule(data="X", roles={"condition": "condition"}),
    "Clip": OpRule(roles={"min": "clip_bounds", "max": "clip_bounds"}),
    "Cast": OpRule(attrs={"to": ("float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bool")},
                   absent=("round_mode", "saturate")),
    "CastLike": OpRule(roles={"target_type": "like_dtype"}, absent=("round_mode", "saturate")),
    "Shrink": OpRule(dtypes=FLOATS),
    # reductions, orders, scans
    **{op: REDUCE for op in ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                             "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare")},
    "ArgMax": OpRule(rank=(1, 5)), "ArgMin": OpRule(rank=(1, 5)),
    "TopK": OpRule(rank=(1, 5), roles={"K": "topk_k"}),
    "CumSum": OpRule(rank=(1, 5), roles={"axis": "axis_scalar"}),
    "Hardmax": OpRule(rank=(1, 5)), "Softmax": OpRule(rank=(1, 5)), "LogSoftmax": OpRule(rank=(1, 5)),
    "Unique": OpRule(rank=(1, 3), max_elements=256),
    "NonZero": OpRule(max_elements=1024),
    # shapes
    "Reshape": OpRule(roles={"shape": "reshape"}), "Expand": OpRule(roles={"shape": "expand"}),
    "Tile": OpRule(roles={"repeats": "repeats"}, max_elements=1024),
    "Squeeze": OpRule(roles={"axes": "unit_axes"}), "Unsqueeze": OpRule(roles={"axes": "new_axes"}),
    "Slice": OpRule(rank=(1, 5), roles={"starts": "slice", "ends": "slice", "axes": "slice", "steps": "slice"}),
    "Split": OpRule(rank=(1, 5), roles={"split": "split"}),
    "SplitToSequence": OpRule(rank=(1, 5), roles={"split": "split"}),
    "Pad": OpRule(roles={"pads": "pads", "constant_value": "scalar", "axes": "pads"}, max_elements=2048),
    "Concat": OpRule(rank=(1, 5), roles={"inputs": "concat"}),
    "Flatten": OpRule(attrs={"axis": ("flatten_axis",)}),
    "Transpose": OpRule(rank=(1, 5)),
    "Trilu": OpRule(rank=(2, 4), roles={"k": "trilu_k"}),
    "EyeLike": OpRule(rank=(2, 2), attrs={"dtype": ("float32", "int64", "int32", "bool", "float64")}),
    "DepthToSpace": OpRule(rank=(4, 4), attrs={"blocksize": ("depth_block",)}),
    "SpaceToDepth": OpRule(rank=(4, 4), attrs={"blocksize": ("space_block",)}),
    "ConstantOfShape": OpRule(data=None, roles={"input": "shape_of"}),
    "Range": OpRule(data=None, roles={"start": "range", "limit": "range", "delta": "range"},
                    dtypes=("float32", "int32", "int64")),
    "OneHot": OpRule(data=None, roles={"indices": "onehot", "depth": "onehot", "values": "onehot"}),
    "Compress": OpRule(rank=(1, 4), roles={"condition": "compress"}),
    "Shape": OpRule(attrs={"start": ("shape_bound",), "end": ("shape_bound",)}),
    # indices
    "Gather": OpRule(rank=(1, 4), roles={"indices": "gather"}),
    "GatherElements": OpRule(rank=(1, 4), roles={"indices": "elements"}),
    "GatherND": OpRule(rank=(1, 4), roles={"indices": "nd"}, absent=("batch_dims",)),
    "ScatterElements": OpRule(rank=(1, 4), roles={"indices": "elements", "updates": "updates"}),
    "ScatterND": OpRule(rank=(1, 4), roles={"indices": "nd", "updates": "updates"}),
    # dense and convolution
    "MatMul": OpRule(rank=(1, 4), roles={"B": "matmul"}, max_elements=2048),
    "MatMulInteger": OpRule(rank=(2, 3), roles={"B": "matmul", "a_zero_point": "zero_point",
                                               "b_zero_point": "zero_point"}, dtypes=("uint8", "int8")),
    "MatMulInteger16": OpRule(rank=(2, 2), roles={"B": "matmul"}, dtypes=("int16",)),
    "Gemm": OpRule(rank=(2, 2), roles={"B": "gemm_b", "C": "gemm_c"}, dtypes=("float32", "float64"),
                   max_elements=2048),
    "Einsum": OpRule(rank=(1, 4), data="Inputs", roles={"Inputs": "einsum"}, dtypes=("float32", "float64")),
    "Conv": CONV,
    "ConvTranspose": OpRule(rank=(3, 4), roles={"W": "convt_weight", "B": "out_channels"},
                            dtypes=("float32", "float64"), max_elements=1024, absent=("output_shape",)),
    "AveragePool": POOL, "MaxPool": POOL, "LpPool": POOL,
    "GlobalAveragePool": OpRule(rank=(3, 5), dtypes=FLOATS), "GlobalMaxPool": OpRule(rank=(3, 5), dtypes=FLOATS),
    "GlobalLpPool": OpRule(rank=(3, 5), dtypes=FLOATS),
    "MaxUnpool": OpRule(rank=(4, 4), roles={"I": "unpool_indices", "output_shape": "absent"},
                        dtypes=("float32",), max_elements=1024),
    "LRN": OpRule(rank=(4, 4), attrs={"size": (1, 3, 5)}, dtypes=("float32",)),
    # normalizations
    "BatchNormalization": OpRule(rank=(2, 5), roles={"scale": "channels", "B": "channels",
                                                      "input_mean": "channels", "input_var": "variance"},
                                 absent=("training_mode",), dtypes=("float32", "float64"), outputs=1),
    "InstanceNormalization": OpRule(rank=(3, 5), roles={"scale": "channels", "B": "channels"},
                                    dtypes=("float32", "float64")),
    "GroupNormalization": OpRule(rank=(3, 5), roles={"scale": "groups", "bias": "groups"},
                                 attrs={"num_groups": ("channel_divisor",)}, dtypes=("float32",)),
    "LayerNormalization": NORM_AXIS, "RMSNormalization": NORM_AXIS,
    "MeanVarianceNormalization": OpRule(rank=(4, 4), dtypes=("float32", "float64")),
    "SkipLayerNormalization": OpRule(rank=(3, 3), roles={"skip": "like", "gamma": "last_dim", "beta": "last_dim",
                                                          "bias": "last_dim"}, dtypes=("float32",)),
    "EmbedLayerNormalization": OpRule(data=None, roles={"input_ids": "embed", "segment_ids": "embed",
                                                        "word_embedding": "embed", "position_embedding": "embed",
                                                        "segment_embedding": "embed", "gamma": "embed",
                                                        "beta": "embed", "mask": "embed", "position_ids": "absent"}),
    "BiasGelu": OpRule(rank=(1, 4), roles={"B": "last_dim"}, dtypes=("float32",)),
    "FastGelu": OpRule(rank=(1, 4), roles={"bias": "last_dim"}, dtypes=("float32",)),
    "Attention": OpRule(rank=(3, 3), roles={"weights": "attention", "bias": "attention", "mask_index": "absent",
                                            "past": "absent", "attention_bias": "absent",
                                            "past_sequence_length": "absent"},
                        attrs={"num_heads": ("heads",)}, absent=("do_rotary", "past_present_share_buffer", "scale",
                                                                 "unidirectional", "qkv_hidden_sizes",
                                                                 "rotary_embedding_dim", "mask_filter_value"),
                        dtypes=("float32",), max_elements=1024, outputs=1, domain="com.microsoft"),
    "Dropout": OpRule(roles={"ratio": "ratio", "training_mode": "absent"}, absent=("seed",)),
    # resampling and regions
    "Resize": OpRule(rank=(3, 5), roles={"roi": "resize", "scales": "resize", "sizes": "resize"},
                     absent=("axes",), max_elements=1024),
    "Upsample": OpRule(rank=(3, 4), roles={"scales": "upsample"}, max_elements=1024),
    "GridSample": OpRule(rank=(4, 4), roles={"grid": "grid"}, dtypes=("float32",), max_elements=1024),
    "AffineGrid": OpRule(data=None, roles={"theta": "affine", "size": "affine"}),
    "RoiAlign": OpRule(rank=(4, 4), roles={"rois": "rois", "batch_indices": "rois"}, dtypes=("float32",),
                       max_elements=2048),
    "MaxRoiPool": OpRule(rank=(4, 4), roles={"rois": "rois5"}, attrs={"pooled_shape": ("pooled",)},
                         dtypes=("float32",), max_elements=2048),
    "NonMaxSuppression": OpRule(data=None, roles={"boxes": "nms", "scores": "nms",
                                                  "max_output_boxes_per_class": "nms", "iou_threshold": "nms",
                                                  "score_threshold": "nms"}),
    # quantization
    "QuantizeLinear": OpRule(roles={"y_scale": "scale", "y_zero_point": "zero_point"},
                             absent=("block_size", "output_dtype", "precision", "saturate"),
                             attrs={"axis": ("axis",)}, dtypes=("float32",)),
    "DequantizeLinear": OpRule(roles={"x_scale": "scale", "x_zero_point": "zero_point"},
                               absent=("block_size", "output_dtype"), dtypes=("uint8", "int8", "int32")),
    "DynamicQuantizeLinear": OpRule(dtypes=("float32",)),
    # sequences and optionals
    "SequenceAt": OpRule(roles={"position": "position"}),
    "SequenceErase": OpRule(roles={"position": "position"}),
    "SequenceInsert": OpRule(data="tensor", roles={"position": "position"}),
    "SequenceEmpty": OpRule(data=None, attrs={"dtype": ("float32",)}),
    "Optional": OpRule(absent=("type",)),
    # nothing a mutation adds: every exported model has them, or only a model's own constants fit
    "Constant": OpRule(data=None, roles={}),
}
"""The per-operator knowledge (see the module docstring); an operator not listed takes the defaults."""
NEVER_INSERTED = frozenset({"Constant", "AllClassNMS"})
"""Operators the sampler never inserts: ``Constant`` (in every exported model already) and operators no
engine of the specification runs (no schema in onnx or onnxruntime: nothing could validate them)."""
DEPRECATED_AT = {"Scatter": 11, "Upsample": 10}
"""Operators removed from ONNX at an opset: reachable only by a model of an older opset (the pool
side, :mod:`seedzer.generate.reach`, builds such models)."""


def rule(op: str) -> OpRule:
    """The knowledge of ``op`` (the defaults for an operator the table does not list)."""
    return RULES.get(op, DEFAULT_RULE)


DEFAULT_RULE = OpRule()
