"""The levels section of the configuration and the ``--levels`` option."""

import pytest

from seedzer.config import Config, config_from_dict
from seedzer.config_levels import LevelsConfig, parse_levels
from seedzer.errors import ConfigError, UsageError


def test_levels_default_to_both_and_parse_from_the_command_line() -> None:
    assert Config().levels.weights() == {"tir": 3.0, "graph": 1.0}
    assert parse_levels("graph", LevelsConfig()).weights() == {"graph": 1.0}
    assert parse_levels("tir=2, graph=0.5", LevelsConfig()).weights() == {"tir": 2.0, "graph": 0.5}
    assert parse_levels("graph", LevelsConfig({"graph": 0.0})).weights() == {"graph": 1.0}  # named: on
    assert config_from_dict({"levels": {"graph": 2}}).levels.weights() == {"tir": 3.0, "graph": 2.0}
    with pytest.raises(ConfigError, match=r"unknown field 'levels\.grph' \(did you mean 'graph'\?\)"):
        config_from_dict({"levels": {"grph": 2}})


@pytest.mark.parametrize(("text", "needle"), [("tri", "unknown level 'tri'"), ("tir=x", "must be a number"),
                                              ("graph=0", "must be > 0"), (",", "name at least one level")])
def test_bad_levels_option_is_one_line_naming_it(text: str, needle: str) -> None:
    with pytest.raises(UsageError, match="--levels") as err:
        parse_levels(text, LevelsConfig())
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_level_weight_is_a_number_in_range_named_by_its_field() -> None:
    assert LevelsConfig.from_mapping({"graph": 2}, "levels", "c.yaml").weights() == {"tir": 3.0, "graph": 2.0}
    with pytest.raises(ConfigError, match=r"c\.yaml: field 'levels\.tir' must be between 0 \(off\) and 1000"):
        LevelsConfig.from_mapping({"tir": 5000}, "levels", "c.yaml")
    with pytest.raises(ConfigError, match=r"field 'levels\.tir' must be float, got str"):
        LevelsConfig.from_mapping({"tir": "high"}, "levels", "c.yaml")
    with pytest.raises(ConfigError, match="must be a mapping"):
        LevelsConfig.from_mapping([1], "levels", "c.yaml")
