"""Fixtures shared by the unit tests that run fake campaigns (``test_campaign_fake``, ``test_execute_ray_pool``)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def restore_signals() -> Iterator[None]:
    """A campaign installs SIGINT/SIGTERM handlers: give pytest its own back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


@pytest.fixture
def pool(tmp_path: Path) -> Path:
    """A seed-pool folder of one model file that the fake seed loader never reads (a campaign, and a Ray
    actor, check only that its path is there)."""
    root = tmp_path / "pool"
    root.mkdir()
    (root / "m.onnx").write_bytes(b"not read by the fake loader")
    return root
