"""Strict YAML reading: numbers in exponent notation (issue 45 row 6: ``1e9`` was read as the string
"1e9" by YAML 1.1 and refused as "got str")."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from seedzer.config import load_config
from seedzer.errors import ConfigError
from seedzer.yamlfiles import parse_yaml


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
