"""Reading ONNX files, describing their inputs, and importing them into Relax.

Dynamic shapes: a symbolic or unknown input dimension is bound to the size the reference ``.npz``
gives for that input, else to 1 (see :func:`input_specs`). Fuzzing needs concrete buffer shapes,
and binding keeps such models useful instead of discarding them; every binding is recorded in the
load result. An input of unknown rank, or one that is not a tensor, cannot be bound and makes the
model invalid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper

from seedzer.kernel.onnx.inputs import UNSUPPORTED_INPUT, unsupported_input
from seedzer.load.bounds import Limits, model_problem

DYNAMIC_DIM_DEFAULT = 1
"""Size given to a symbolic input dimension when no reference input fixes it."""


class InvalidModel(Exception):
    """The file is not a usable ONNX model; the message is one line and names the file."""


class OverBounds(InvalidModel):
    """The model is valid ONNX but over the resource bounds or of an unknown opset
    (:mod:`seedzer.load.bounds`): ``invalid``, never loaded."""


@dataclass(frozen=True)
class InputSpec:
    """One graph input the caller must feed: name, numpy dtype name, concrete shape."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    def as_tuple(self) -> tuple[str, str, tuple[int, ...]]:
        """``(name, dtype, shape)``: the loader kernel's form of one input."""
        return (self.name, self.dtype, tuple(self.shape))


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0] if lines else ""


def read_model(path: Path, limits: Limits | None = None) -> onnx.ModelProto:
    """Parse and check an ONNX file; raise :class:`InvalidModel` with a one-line message otherwise.

    Before its external data is read or anything runs, the model's opset and declared tensor sizes
    are checked against ``limits`` (the defaults when None): :class:`OverBounds` when over.
    """
    name = path.name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidModel(f"cannot read ONNX model {name}: {exc.strerror or exc}") from exc
    if not data:
        raise InvalidModel(f"ONNX model {name} is empty (0 bytes)")
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise InvalidModel(f"ONNX model {name} is truncated or corrupt: {_first_line(str(exc))}") from exc
    problem = model_problem(model, limits)
    if problem is not None:
        raise OverBounds(f"ONNX model {name}: {problem}")
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        try:
            onnx.load_external_data_for_model(model, str(path.parent))
        except Exception as exc:
            raise InvalidModel(f"ONNX model {name}: external data unreadable: {_first_line(str(exc))}") from exc
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # ValidationError
        raise InvalidModel(f"ONNX model {name} is not valid ONNX: {_first_line(str(exc))}") from exc
    return model


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs that are not initializers (what a caller must feed)."""
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def input_specs(
    model: onnx.ModelProto, name: str, given: dict[str, np.ndarray] | None = None
) -> tuple[list[InputSpec], dict[str, list[int]]]:
    """Concrete specs of the model's inputs plus the dimensions that had to be bound.

    A static dimension is kept; a symbolic or unknown one takes its size from ``given[input]`` (the
    reference input) when that matches the rank, else :data:`DYNAMIC_DIM_DEFAULT`. The second result
    maps each input with bound dimensions to its bound shape. Raises :class:`InvalidModel` for an
    input without a tensor type, element type or rank, and for one of a type TVM's importer does not
    take (:mod:`seedzer.kernel.onnx.inputs`: ``string``, ``complex64``...).
    """
    given = given or {}
    specs: list[InputSpec] = []
    bound: dict[str, list[int]] = {}
    for info in graph_inputs(model):
        if not info.type.HasField("tensor_type"):
            raise InvalidModel(f"ONNX model {name}: input {info.name!r} is not a tensor (unsupported)")
        ttype = info.type.tensor_type
        if not ttype.elem_type:
            raise InvalidModel(f"ONNX model {name}: input {info.name!r} has no element type")
        if not ttype.HasField("shape"):
            raise InvalidModel(f"ONNX model {name}: input {info.name!r} has unknown rank (unsupported)")
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(ttype.elem_type)).name
        except (KeyError, TypeError, ValueError):
            raise InvalidModel(f"ONNX model {name}: input {info.name!r} has element type {ttype.elem_type}, "
                               f"which ONNX does not define ({UNSUPPORTED_INPUT})") from None
        unsupported = unsupported_input([(info.name, dtype)])
        if unsupported is not None:
            raise InvalidModel(f"ONNX model {name}: {unsupported}")
        ref = given.get(info.name)
        dims: list[int] = []
        dynamic = False
        for axis, dim in enumerate(ttype.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                dims.append(int(dim.dim_value))
                continue
            if dim.HasField("dim_value") and not dim.dim_param:
                dims.append(0)  # a genuine zero-sized dimension
                continue
            dynamic = True
            if ref is not None and ref.ndim == len(ttype.shape.dim):
                dims.append(int(ref.shape[axis]))
            else:
                dims.append(DYNAMIC_DIM_DEFAULT)
        if dynamic:
            bound[info.name] = dims
        specs.append(InputSpec(info.name, dtype, tuple(dims)))
    return specs, bound


def import_relax(model: onnx.ModelProto, specs: list[InputSpec]) -> Any:
    """Import ``model`` into a Relax ``IRModule`` with the given concrete input shapes and dtypes
    (the loader kernel's importer step; imports TVM)."""
    from seedzer.kernel.onnx.model import import_model

    return import_model(model, [s.as_tuple() for s in specs])

