"""The graph level's own settings section (``levels.graph.*``)."""

from pathlib import Path

import pytest

from seedzer.config import Config, load_config
from seedzer.errors import ConfigError
from seedzer.levels.graph.settings import GraphSettings


def test_graph_mutation_weights_have_defaults_ranges_and_cannot_all_be_off(tmp_path: Path) -> None:
    assert Config().levels.settings()["graph"] == GraphSettings()
    assert GraphSettings().weights() == {"passes": 3.0, "uoc": 0.6, "pioc": 1.2, "edge": 4.0, "insert": 4.0,
                                         "special": 1.0}
    path = tmp_path / "c.yaml"
    path.write_text("levels:\n  graph:\n    uoc: -1\n")
    with pytest.raises(ConfigError, match=r"field 'levels\.graph\.uoc' must be between 0"):
        load_config(path)
    path.write_text("levels:\n  graph:\n    passes: 0\n    uoc: 0\n    pioc: 0\n    edge: 0\n    insert: 0\n"
                    "    special: 0\n")
    with pytest.raises(ConfigError, match=r"field 'levels\.graph' turns every graph mutation off"):
        load_config(path)
