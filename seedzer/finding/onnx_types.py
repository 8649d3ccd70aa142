"""The converter whose output is first ill-typed: the importer's counterpart of the pass whose output is
first ill-formed.

A converter that fails on its input may only be the first to trip on a value another converter made with
a type ONNX does not give it: SplitToSequence into one chunk returns a tensor where ONNX has a sequence,
and whichever converter reads it (SequenceAt, SequenceLength) then fails, each with its own message. The
failing node's inputs are asked: the model cut before that node, with those inputs as its outputs, is
imported, and each value's Relax type is compared with ONNX's type inference (a sequence must be a Relax
tuple, a tensor a Relax tensor of its element type and rank). The first value whose type differs names its
producer's converter (class and version, as the installed importer dispatches the model's opset).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx

SEQUENCE_FOR_TENSOR = "a tensor where ONNX has a sequence"
TENSOR_FOR_SEQUENCE = "a tuple where ONNX has a tensor"
OTHER_DTYPE = "another element type than ONNX's"
OTHER_RANK = "another rank than ONNX's"
ILL_TYPED_OUTPUT = "ill-typed output: "
"""How the essence of a root keyed by a converter's ill-typed output starts (the mistake follows)."""
OWN_SLIPS: tuple[tuple[str, str], ...] = (
    ("'TensorType' object has no attribute 'fields'", SEQUENCE_FOR_TENSOR),
)
"""Messages of a converter tripping on a value it made itself with the wrong kind of Relax type, and the mistake
they are (a one-chunk ``relax.op.split`` typed a Tensor, whose tuple fields SplitToSequence then reads: the same
mistake as the Tensor its readers trip on, c53 audit 7ab933772512 and 5f7d5732a3b8)."""
CHECK_SECONDS = 120.0
"""The limit of one check (an import of the model cut before the failing node)."""


@dataclass(frozen=True)
class IllTyped:
    """A converter (``relax.frontend.onnx.X._impl_vN``) that gave ``value`` a type ONNX does not give it: ``mistake``
    (one of the module's constants) and the two types (``detail``)."""

    converter: str
    operator: str
    value: str
    mistake: str
    detail: str


ONNX_TO_NUMPY = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
                 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}
"""The element type of an ONNX tensor type (``TensorProto.DataType``) as Relax and numpy name it."""


def own_slip(message: str) -> str | None:
    """The mistake (:data:`OWN_SLIPS`) a converter's own failure ``message`` is, or None."""
    return next((mistake for text, mistake in OWN_SLIPS if text in message), None)


def _mismatch(want: onnx.TypeProto, got: object) -> tuple[str, str] | None:
    """How the Relax type ``got`` of a value differs from its ONNX type ``want`` (None: it does not)."""
    from tvm import relax

    if want.HasField("sequence_type"):
        return None if isinstance(got, relax.TupleType) else (SEQUENCE_FOR_TENSOR, f"ONNX: sequence, Relax: {got}")
    if not want.HasField("tensor_type"):
        return None  # an optional or a map: not judged
    if isinstance(got, relax.TupleType):
        return TENSOR_FOR_SEQUENCE, f"ONNX: tensor, Relax: {got}"
    if not isinstance(got, relax.TensorType):
        return None  # a shape or a prim value the importer keeps for a tensor: its own representation
    tensor = want.tensor_type
    dtype = ONNX_TO_NUMPY.get(tensor.elem_type)
    if dtype is not None and str(got.dtype) not in ("", "void") and str(got.dtype) != dtype:
        return OTHER_DTYPE, f"ONNX: {dtype}, Relax: {got.dtype}"
    if tensor.HasField("shape") and got.ndim >= 0 and got.ndim != len(tensor.shape.dim):
        return OTHER_RANK, f"ONNX: rank {len(tensor.shape.dim)}, Relax: rank {got.ndim}"
    return None


def ill_typed_input(data: bytes, operator: str) -> IllTyped | None:
    """The first input of a node of op type ``operator`` (in graph order) that its producer's converter gave a
    type ONNX does not give it (see the module docstring), or None. Imports TVM: call it in a forked child."""
    import onnx
    from tvm.relax.frontend.onnx import from_onnx
    from tvm.relax.frontend.onnx.onnx_frontend import _get_convert_map

    model = onnx.load_model_from_string(data)
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types: nothing to compare with
        return None
    types = {vi.name: vi for vi in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]}
    producers = {name: node for node in model.graph.node for name in node.output}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    converters = _get_convert_map()
    for index, node in enumerate(model.graph.node):
        if node.op_type != operator:
            continue
        for name in (n for n in node.input if n in producers and n in types):
            cut = onnx.ModelProto()
            cut.CopyFrom(model)
            del cut.graph.node[index:]
            del cut.graph.output[:]
            cut.graph.output.append(types[name])
            try:
                got = from_onnx(cut, keep_params_in_input=False)["main"].ret_ty
            except Exception:  # the cut model fails on its own: that failure is not this node's input
                continue
            found = _mismatch(types[name].type, got)
            producer = producers[name]
            if found is None or producer.op_type not in converters:
                continue
            qualname = getattr(converters[producer.op_type].get_converter(opset), "__qualname__", producer.op_type)
            return IllTyped(f"relax.frontend.onnx.{qualname}", producer.op_type, name, *found)
    return None


def ill_typed_forked(data: bytes, operator: str) -> IllTyped | None:
    """:func:`ill_typed_input` in a forked child (a crash, a timeout or an error: None, nothing decided)."""
    from seedzer.execute.forked import call_forked

    got = call_forked(ill_typed_input, data, operator, timeout=CHECK_SECONDS)
    return got.value if got.ok and isinstance(got.value, IllTyped) else None
