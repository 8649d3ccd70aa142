"""A seed pool of hostile models (issue 45): models onnxruntime refuses to run, inputs TVM's ONNX
importer does not take, and nested If nodes; each must be counted ``invalid`` (or unsupported) by a
campaign, never filed as a TVM bug.

Usage::

    python benchmarks/hostile_pool.py OUT_DIR          # writes OUT_DIR/<name>.onnx, one per model
    seedzer fuzz --pool OUT_DIR --out C --minutes 5 --jobs 2
    seedzer status C --all

The models are :func:`tests.hostile_models.hostile_models` (what each is: that module's docstring).
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.hostile_models import hostile_models


def write_pool(out: Path) -> list[Path]:
    """Write every hostile model as ``out/<name>.onnx`` (a pool without a manifest); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, model in hostile_models().items():
        path = out / f"{name}.onnx"
        onnx.save(model, str(path))
        paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python benchmarks/hostile_pool.py OUT_DIR")
    for written in write_pool(Path(sys.argv[1])):
        print(written)
