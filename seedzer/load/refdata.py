"""Reference data stored next to a model: ``<stem>.npz``, ``<stem>.ref.npz`` or ``<file>.ref.npz``.

Arrays named ``input:<name>`` are the model's inputs and ``output:<name>`` its expected outputs (in
graph output order when the file lists them all). Everything is optional.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

INPUT_PREFIX = "input:"
OUTPUT_PREFIX = "output:"


@dataclass
class RefData:
    """Inputs and expected outputs read from a reference ``.npz`` (both possibly empty)."""

    path: Path | None = None
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)


def find_reference(model_path: Path) -> Path | None:
    """The reference ``.npz`` of ``model_path`` if one of the accepted names exists."""
    for candidate in (
        model_path.with_suffix(".npz"),
        model_path.with_suffix(".ref.npz"),
        model_path.with_name(model_path.name + ".ref.npz"),
    ):
        if candidate.is_file():
            return candidate
    return None


def read_reference(model_path: Path) -> RefData:
    """Read the reference data of ``model_path``; empty :class:`RefData` when there is none.

    Raises ``ValueError`` with a one-line message naming the file when it exists but is unreadable.
    """
    path = find_reference(model_path)
    if path is None:
        return RefData()
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {key: np.asarray(npz[key]) for key in npz.files}
    except Exception as exc:
        raise ValueError(f"reference data {path.name} is unreadable: {exc}".splitlines()[0]) from exc
    return RefData(
        path=path,
        inputs={k[len(INPUT_PREFIX) :]: v for k, v in arrays.items() if k.startswith(INPUT_PREFIX)},
        outputs={k[len(OUTPUT_PREFIX) :]: v for k, v in arrays.items() if k.startswith(OUTPUT_PREFIX)},
    )
