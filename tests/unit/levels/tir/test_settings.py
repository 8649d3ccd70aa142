"""The TIR level's own settings section (``levels.tir.*``)."""

from pathlib import Path

import pytest

from seedzer.config import load_config
from seedzer.errors import ConfigError
from seedzer.levels.tir.settings import TirSettings


def test_tzer_s_schedule_settings_have_defaults_and_ranges(tmp_path: Path) -> None:
    assert (TirSettings().tolerance, TirSettings().max_passes) == (4, 50)
    path = tmp_path / "c.yaml"
    path.write_text("levels:\n  tir:\n    tolerance: 2\n")
    assert load_config(path).levels.settings()["tir"] == TirSettings(tolerance=2)
    path.write_text("levels:\n  tir:\n    tolerance: 0\n")
    with pytest.raises(ConfigError, match=r"field 'levels\.tir\.tolerance' must be >= 1 and <= 1000000 \(got 0\)"):
        load_config(path)
