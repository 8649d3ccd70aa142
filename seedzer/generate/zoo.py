"""The model-zoo baseline: the classic architectures the ``onnx`` package ships as test data.

``onnx/backend/test/data/light/light_*.onnx`` hold AlexNet, DenseNet-121, Inception v1/v2,
ResNet-50, ShuffleNet, SqueezeNet, VGG-19 and ZFNet-512 with their weights replaced by
``ConstantOfShape`` nodes (same architecture and parameter counts, tiny files). Nothing is
downloaded; the pool can hold at most as many models as are installed.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx

from seedzer.errors import ConfigError
from seedzer.generate.errors import Rejected
from seedzer.generate.onnx_facts import model_facts
from seedzer.generate.options import GenerationOptions
from seedzer.generate.reference import ReferenceFailure, all_finite, npz_bytes, reference_outputs
from seedzer.protocols import GeneratedModel


def zoo_dir() -> Path:
    """Where the installed onnx package keeps its light model-zoo files."""
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "light"


def zoo_name(path: Path) -> str:
    """Short name of a zoo file: ``light_resnet50.onnx`` -> ``resnet50``."""
    return path.stem.removeprefix("light_")


def zoo_models(opts: GenerationOptions) -> list[Path]:
    """The zoo files selected by ``opts.zoo_models`` (all when unset), sorted by name."""
    files = sorted(zoo_dir().glob("light_*.onnx"))
    if not files:
        raise ConfigError(f"zoo: no models found under {zoo_dir()} (is the onnx package complete?)")
    if opts.zoo_models is None:
        return files
    by_name = {zoo_name(p): p for p in files}
    unknown = [n for n in opts.zoo_models if n not in by_name]
    if unknown:
        raise ConfigError(
            f"generation.zoo_models: unknown zoo model {unknown[0]!r} (available: {', '.join(sorted(by_name))})"
        )
    return [by_name[n] for n in opts.zoo_models]


def _random_inputs(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    inputs = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        inputs[vi.name] = rng.uniform(0.0, 1.0, size=shape).astype(dtype)
    return inputs


def zoo_model(path: Path, seed: int) -> GeneratedModel:
    """One zoo model with its facts and reference outputs (random inputs drawn from ``seed``)."""
    start = time.perf_counter()
    data = path.read_bytes()
    model = onnx.load_model_from_string(data)
    inputs = _random_inputs(model, seed)
    try:
        outputs, provider = reference_outputs(data, inputs)
    except ReferenceFailure as exc:
        raise Rejected(exc.reason, exc.detail) from None
    facts = model_facts(model)
    meta = {
        "zoo_model": zoo_name(path),
        "input_seed": seed,
        **facts,
        "reference_provider": provider,
        "finite": all_finite(outputs),
        "gen_seconds": round(time.perf_counter() - start, 4),
        "reference_npz": npz_bytes(inputs, outputs, provider),
    }
    return GeneratedModel(onnx_bytes=data, meta=meta)
