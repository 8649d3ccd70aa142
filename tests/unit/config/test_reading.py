"""A configuration read from a file or a mapping: old key names moved to their new place (and named by
``config check``), the input left as it was."""

from pathlib import Path

import pytest

from seedzer.config import config_from_dict, load_config
from seedzer.config.reading import moved_keys
from seedzer.errors import ConfigError


def test_old_keys_of_the_levels_own_settings_are_still_read_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text("fuzz:\n  jobs: 2\n  tolerance: 7\n  max_passes: 20\ngraph:\n  uoc: 0\nlevels:\n  graph: 2\n")
    notes: list[str] = []
    cfg = load_config(path, notes)
    own = cfg.levels.settings()
    assert (own["tir"].tolerance, own["tir"].max_passes, own["graph"].uoc) == (7, 20, 0.0)
    assert cfg.fuzz.jobs == 2 and cfg.levels.weights() == {"tir": 3.0, "graph": 2.0}
    assert notes == [f"{path}: 'fuzz.tolerance' is read as 'levels.tir.tolerance' (its old name)",
                     f"{path}: 'fuzz.max_passes' is read as 'levels.tir.max_passes' (its old name)",
                     f"{path}: 'graph' is read as 'levels.graph' (its old name)"]
    assert load_config(path) == cfg  # silently without a list of notes


def test_a_recorded_configuration_of_an_older_campaign_reads_as_it_ran() -> None:
    recorded = {"fuzz": {"jobs": 1, "minutes": 3.0, "tolerance": 4, "max_passes": 50},
                "levels": {"tir": 3.0, "graph": 1.0},
                "graph": {"passes": 3.0, "uoc": 0.6, "pioc": 1.2, "edge": 4.0, "insert": 4.0, "special": 1.0,
                          "max_model_mutations": 8, "llvm_opt_level": 0}}
    before = repr(recorded)
    assert config_from_dict(recorded, "campaign.db") == config_from_dict({}, "defaults")
    assert repr(recorded) == before  # the caller's mapping is left as it was


def test_a_key_given_under_its_old_and_new_names_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^c\.yaml: field 'fuzz\.tolerance' is the old name of "
                                          r"'levels\.tir\.tolerance', which is given too; keep only the new one$"):
        config_from_dict({"fuzz": {"tolerance": 3}, "levels": {"tir": {"tolerance": 5}}}, "c.yaml")
    with pytest.raises(ConfigError, match=r"field 'graph' must be a mapping, got list"):
        config_from_dict({"graph": [1]}, "c.yaml")
    with pytest.raises(ConfigError, match=r"field 'levels\.graph\.uoc' must be between 0 \(off\) and 1000"):
        config_from_dict({"graph": {"uoc": -1}}, "c.yaml")


def test_anything_not_a_mapping_is_left_for_the_schema_to_name() -> None:
    assert moved_keys([1], "c.yaml") == [1]
    assert moved_keys({"levels": [1], "graph": {}}, "c.yaml") == {"levels": [1], "graph": {}}
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        config_from_dict([1], "c.yaml")
