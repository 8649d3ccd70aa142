"""Strict, bounded YAML reading: numbers in exponent notation (issue 45 row 6: ``1e9`` was read as the
string "1e9" by YAML 1.1 and refused as "got str"), and aliases that cannot exhaust memory (issue 55
row 2: a "billion laughs" value in a number field made ``config check`` grow past 1.5 GB)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from seedzer.config import MAX_YAML_VALUES, load_config, parse_yaml
from seedzer.errors import ConfigError


@pytest.mark.parametrize(("text", "value"), [
    ("1e9", 1e9), ("1E9", 1e9), ("-2.5e-3", -2.5e-3), ("+1e+2", 100.0), (".5e1", 5.0), ("1_000e0", 1000.0),
    ("1.0e+9", 1e9), ("1.5", 1.5), ("7", 7),
])
def test_exponent_notation_is_a_number(text: str, value: float) -> None:
    got = parse_yaml(f"x: {text}\n", "t.yaml")["x"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text", ["e9", "1e", "1e9x", "'1e9'", "0x1e9", "1.2.3e4", "1e9.5"])
def test_what_is_no_number_stays_text(text: str) -> None:
    assert isinstance(parse_yaml(f"x: {text}\n", "t.yaml")["x"], str | int)
    assert parse_yaml("x: '1e9'\n", "t.yaml")["x"] == "1e9"


def test_plain_pyyaml_is_left_alone() -> None:
    assert yaml.safe_load("x: 1e9") == {"x": "1e9"}  # the resolver belongs to Seedzer's loader only


def test_a_configuration_takes_1e9_where_a_number_is_expected(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("limits:\n  max_testcase_memory: 4e9\nfuzz:\n  minutes: 1e1\n  jobs: 2.0\n")
    cfg = load_config(path)
    assert (cfg.limits.max_testcase_memory, cfg.fuzz.minutes, cfg.fuzz.jobs) == (4_000_000_000, 10.0, 2)
    assert type(cfg.limits.max_testcase_memory) is int and type(cfg.fuzz.jobs) is int
    path.write_text("fuzz:\n  jobs: 2.5e0\n")
    with pytest.raises(ConfigError, match=r"c.yaml: field 'fuzz.jobs' must be int, got float 2.5"):
        load_config(path)


def laughs(depth: int, width: int = 9) -> str:
    """``fuzz.jobs`` holding a nest of aliases: ``width ** depth`` strings once expanded, ~100 bytes written."""
    items = ["&l0 [" + ", ".join(["lol"] * width) + "]"]
    items += [f"&l{d} [" + ", ".join([f"*l{d - 1}"] * width) + "]" for d in range(1, depth)]
    return "fuzz:\n  jobs: [" + ", ".join(items) + "]\n"


@pytest.mark.timeout(60)  # before the bound it never ended (and grew past 1.5 GB)
def test_a_billion_laughs_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(laughs(10))  # 9**10 values once expanded
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(f"{path}: invalid YAML at line 2, column ") and "\n" not in message
    assert f"aliases expand this value to more than {MAX_YAML_VALUES} values" in message


def test_a_value_under_the_bound_is_shown_as_a_bounded_excerpt(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(laughs(6))  # 9**6 = 531441 values: read, and refused by the field's type
    with pytest.raises(ConfigError, match=r"field 'fuzz\.jobs' must be int, got list \[\[") as err:
        load_config(path)
    assert len(str(err.value)) < len(str(path)) + 200


def test_an_alias_making_a_value_contain_itself_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"t\.yaml: invalid YAML at line 1, column \d+: an alias makes a value "
                                          r"contain itself"):
        parse_yaml("x: &a [1, *a]\n", "t.yaml")


def test_aliases_and_merge_keys_within_the_bound_still_read() -> None:
    data = parse_yaml("base: &b {rtol: 0.1, atol: 0.2}\nx: {<<: *b, atol: 0.3}\ny: [*b, *b]\n", "t.yaml")
    assert data["x"] == {"rtol": 0.1, "atol": 0.3} and data["y"] == [{"rtol": 0.1, "atol": 0.2}] * 2
