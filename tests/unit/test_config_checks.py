"""The configuration's value checks and scalar conversion, each failure one line naming the field."""

import math

import pytest

from seedzer.config_checks import CHECKS, between, check_value, convert_scalar, finite
from seedzer.errors import ConfigError, UsageError


def test_finite_and_between_refuse_bools_infinities_and_values_outside() -> None:
    assert finite(3) and finite(2.5) and not finite(True) and not finite(math.inf) and not finite("3")
    assert between(0, 1)(0.5) and between(0, 1)(1) and not between(0, 1)(1.5) and not between(0, 1)(math.nan)


def test_a_scalar_is_converted_to_its_field_type_or_refused_naming_the_field() -> None:
    assert convert_scalar(3, float, "fuzz.minutes", "c.yaml") == 3.0
    assert convert_scalar(1e9, int, "fuzz.seed", "c.yaml") == 10**9
    assert isinstance(convert_scalar(4.0, int, "x", "c"), int)
    with pytest.raises(ConfigError, match=r"c\.yaml: field 'fuzz\.jobs' must be int, got bool True"):
        convert_scalar(True, int, "fuzz.jobs", "c.yaml")
    with pytest.raises(ConfigError, match="must be a finite number"):
        convert_scalar(10**400, float, "fuzz.minutes", "c.yaml")
    with pytest.raises(ConfigError, match=r"must be int, got float 2\.5"):
        convert_scalar(2.5, int, "fuzz.jobs", "c.yaml")


def test_a_cli_value_is_checked_as_its_field_and_the_error_names_the_option() -> None:
    check_value("fuzz.jobs", 2, "--jobs")
    check_value("no.such.field", -1, "--x")  # a field without a check accepts anything
    with pytest.raises(UsageError, match=r"^--minutes: must be > 0") as err:
        check_value("fuzz.minutes", 0, "--minutes")
    assert "\n" not in str(err.value)


def test_every_check_names_a_real_field() -> None:
    from seedzer.config import reference

    fields = {row[0] for row in reference()}
    assert set(CHECKS) <= fields, sorted(set(CHECKS) - fields)
