"""Slow integration test: every model of the onnx package's light model zoo loads into seeds."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from seedzer.execute.isolated_load import OnnxLoader
from seedzer.load.loader import LoadOptions

ZOO = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(p.name for p in ZOO.glob("light_*.onnx"))

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_zoo_is_present() -> None:
    assert len(MODELS) == 9


@pytest.mark.parametrize("name", MODELS)
def test_zoo_model_imports_and_lowers(name: str) -> None:
    result = OnnxLoader(LoadOptions(differential=False, timeout=900)).load(ZOO / name)
    assert [o.message for o in result.observations] == []
    assert result.attempts == ["raw"] and len(result.seeds) > 50
    assert any(s.fused for s in result.seeds)
