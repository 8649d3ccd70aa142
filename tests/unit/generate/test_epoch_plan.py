"""A heuristic's epochs: part (seedzer.generate.epoch_plan) and the shipped adaptive heuristic."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedzer.errors import ConfigError
from seedzer.generate.epoch_plan import EpochPlan, parse_epoch_plan
from seedzer.generate.heuristics import YamlHeuristic, load_heuristic


def test_the_adaptive_heuristic_is_a_small_basic_pool_grown_in_epochs() -> None:
    adaptive, basic = load_heuristic("adaptive"), load_heuristic("basic")
    assert isinstance(adaptive, YamlHeuristic) and adaptive.identity_selection
    assert adaptive.generation == basic.generation
    assert adaptive.epochs == EpochPlan(3, 15, 20) and basic.epochs is None


def test_a_heuristic_file_declares_its_epochs(tmp_path: Path) -> None:
    path = tmp_path / "grow.yaml"
    path.write_text("generation: {max_nodes: 5}\nepochs: {count: 4}\n")
    assert load_heuristic(str(path)).epochs == EpochPlan(4, 10, None)


@pytest.mark.parametrize(("raw", "message"), [
    ({"count": 1}, "epochs.count: expected an integer between 2 and 9, got 1"),
    ({"count": 3, "models": 0}, "epochs.models: expected an integer between 1 and 1000, got 0"),
    ({"count": 3, "pool": True}, "epochs.pool: expected an integer between 1 and 100000, got True"),
    ({"models": 3}, "epochs.count: missing"),
    ({"count": 3, "share": 1}, "epochs.share: unknown key"),
    ([3], "epochs: expected a mapping"),
])
def test_a_bad_epochs_part_is_one_line_naming_the_field(raw: object, message: str) -> None:
    with pytest.raises(ConfigError, match=r"^h\.yaml: ") as info:
        parse_epoch_plan(raw, "h.yaml")
    assert message in str(info.value) and "\n" not in str(info.value)
