"""The levels section of the configuration: each level's weight (short or mapping form) and its own
settings section, and the ``--levels`` option."""

from dataclasses import dataclass
from typing import ClassVar

import pytest

from seedzer.config import Config, config_from_dict, reference, setting, to_dict
from seedzer.config.levels import LevelsConfig, parse_levels, settings_class
from seedzer.errors import ConfigError, SeedzerError, UsageError
from seedzer.level_table import LEVELS, LevelEntry


def test_levels_default_to_both_and_parse_from_the_command_line() -> None:
    assert Config().levels.weights() == {"tir": 3.0, "graph": 1.0}
    assert parse_levels("graph", LevelsConfig()).weights() == {"graph": 1.0}
    assert parse_levels("tir=2, graph=0.5", LevelsConfig()).weights() == {"tir": 2.0, "graph": 0.5}
    assert parse_levels("graph", LevelsConfig({"graph": 0.0})).weights() == {"graph": 1.0}  # named: on
    assert config_from_dict({"levels": {"graph": 2}}).levels.weights() == {"tir": 3.0, "graph": 2.0}
    with pytest.raises(ConfigError, match=r"unknown field 'levels\.grph' \(did you mean 'graph'\?\)"):
        config_from_dict({"levels": {"grph": 2}})


def test_an_opt_in_level_is_off_until_named_then_at_its_table_weight() -> None:
    sched = LEVELS["sched"]
    assert sched.opt_in and Config().levels.weight("sched") == 0.0
    assert parse_levels("tir,sched", LevelsConfig()).weights() == {"tir": 3.0, "sched": sched.weight}
    assert parse_levels("sched=0.5", LevelsConfig()).weights() == {"sched": 0.5}
    assert config_from_dict({"levels": {"sched": 4}}).levels.weights() == {"tir": 3.0, "graph": 1.0, "sched": 4.0}


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
    with pytest.raises(ConfigError, match=r"field 'levels\.tir\.weight' must be between 0 \(off\) and 1000"):
        LevelsConfig.from_mapping({"tir": {"weight": -1}}, "levels", "c.yaml")
    with pytest.raises(ConfigError, match="must be a mapping"):
        LevelsConfig.from_mapping([1], "levels", "c.yaml")


def test_the_mapping_form_sets_a_weight_and_the_level_s_own_settings() -> None:
    levels = config_from_dict({"levels": {"tir": {"weight": 2, "tolerance": 9}, "graph": {"uoc": 0}}}).levels
    assert levels.weights() == {"tir": 2.0, "graph": 1.0}
    own = levels.settings()
    assert own["tir"].tolerance == 9 and own["tir"].max_passes == 50 and own["graph"].uoc == 0.0
    with pytest.raises(ConfigError, match=r"unknown field 'levels\.tir\.tolerence' \(did you mean 'tolerance'\?\)"):
        config_from_dict({"levels": {"tir": {"tolerence": 9}}}, "c.yaml")
    with pytest.raises(ConfigError, match=r"^c\.yaml: field 'levels\.tir\.max_passes' must be between 1 and 50 "
                                          r"\(got 99\)$"):
        config_from_dict({"levels": {"tir": {"max_passes": 99}}}, "c.yaml")


def test_the_weights_option_keeps_every_level_s_settings() -> None:
    levels = config_from_dict({"levels": {"tir": {"tolerance": 9}}}).levels
    assert parse_levels("graph", levels).settings() == levels.settings()


def test_a_configuration_round_trips_through_its_plain_form() -> None:
    cfg = config_from_dict({"levels": {"tir": {"weight": 2, "tolerance": 9}, "graph": 0.5}})
    plain = to_dict(cfg)
    assert plain["levels"]["tir"] == {"weight": 2.0, "tolerance": 9, "max_passes": 50}
    assert config_from_dict(plain) == cfg


def test_the_reference_documents_every_level_s_weight_and_settings() -> None:
    names = [name for name, _, _ in reference()]
    assert {"levels.tir.weight", "levels.tir.tolerance", "levels.graph.weight", "levels.graph.llvm_opt_level"} \
        <= set(names)


@dataclass
class Clash:
    OLD_KEYS: ClassVar[dict[str, str]] = {}
    weight: int = setting(1, "A setting that takes the weight's name.")


def test_a_settings_section_is_a_dataclass_without_a_weight_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(LEVELS, "clash", LevelEntry("clash", "x:Y", 1.0, "a clash.", ".clash",
                                                    f"{__name__}:Clash"))
    with pytest.raises(SeedzerError, match="may not be named 'weight'"):
        settings_class("clash")
    not_a_class = f"{__name__}:test_the_weights_option_keeps_every_level_s_settings"
    monkeypatch.setitem(LEVELS, "clash", LevelEntry("clash", "x:Y", 1.0, "a clash.", ".clash", not_a_class))
    with pytest.raises(SeedzerError, match="must be a dataclass"):
        settings_class("clash")
