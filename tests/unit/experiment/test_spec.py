"""Experiment files: the shipped ones validate; every mistake is one line naming file and field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from seedzer.config import load_config
from seedzer.errors import ConfigError
from seedzer.experiment.spec import load_spec, reference, spec_from_dict

ROOT = Path(__file__).resolve().parents[3]


def _spec(**over: object) -> dict[str, object]:
    data: dict[str, object] = {"name": "t", "heuristics": ["basic", "conv3"], "trials": 2, "minutes": 1}
    data.update(over)
    return data


@pytest.mark.parametrize("name", ["quick.yaml", "seedzer-paper.yaml", "levels.yaml", "allocation.yaml"])
def test_shipped_experiments_validate(name: str) -> None:
    spec = load_spec(ROOT / "experiments" / name)
    assert spec.name == Path(name).stem
    assert spec.trials >= 2 and spec.minutes > 0 and spec.heuristics


def test_paper_experiment_compares_the_heuristics_with_the_zoo_and_the_adaptive_pool() -> None:
    spec = load_spec(ROOT / "experiments" / "seedzer-paper.yaml")
    assert set(spec.heuristics) == {"basic", "conv1", "conv3", "conv5", "small", "big", "zoo", "adaptive"}
    assert spec.minutes == 10 and spec.trials >= 5
    assert [a.name for a in spec.arms()] == spec.heuristics  # one level setting: arms keep the pools' names
    assert spec.trial_config(1, spec.arms()[0].levels).levels.weights() == {"tir": 3.0, "graph": 1.0}
    assert spec.trial_config(1, "", "adaptive").epochs.count == 3


def test_quick_experiment_is_about_two_minutes_on_two_cores() -> None:
    spec = load_spec(ROOT / "experiments" / "quick.yaml")
    core_minutes = len(spec.heuristics) * spec.trials * spec.minutes * spec.jobs
    assert core_minutes / 2 <= 2.5


def test_trial_config_carries_the_experiment_settings(tmp_path: Path) -> None:
    spec = spec_from_dict(_spec(jobs=2, snapshot_period=2, oracles=["crash"], seed=10,
                                campaign={"timeouts": {"build": 30}}), "e.yaml", check_heuristics=False)
    cfg = spec.trial_config(3)
    assert (cfg.fuzz.minutes, cfg.fuzz.jobs, cfg.fuzz.snapshot_period, cfg.fuzz.seed) == (1.0, 2, 2.0, 13)
    assert cfg.oracles.enabled == ["crash"] and cfg.timeouts.build == 30.0
    assert spec.pool_names == ["basic", "conv3"]
    assert str(spec.pool_path("my/dir/h.yaml")) == "seedpools/h"


@pytest.mark.parametrize(("over", "needle"), [
    ({"trails": 3}, "e.yaml: unknown field 'trails' (did you mean 'trials'?)"),
    ({"trials": 0}, "e.yaml: field 'trials' must be >= 1"),
    ({"trials": "five"}, "e.yaml: field 'trials' must be int, got str"),
    ({"minutes": 0}, "e.yaml: field 'minutes' must be > 0"),
    ({"snapshot_period": 60}, "e.yaml: field 'snapshot_period' must be between 0.5 and 10 seconds"),
    ({"jobs": 0}, "e.yaml: field 'jobs' must be >= 1"),
    ({"coverage": "gcov"}, "e.yaml: field 'coverage' must be one of"),
    ({"oracles": ["crash", "psychic"]}, "e.yaml: field 'oracles' entries must be among"),
    ({"heuristics": []}, "e.yaml: field 'heuristics' must list at least one heuristic"),
    ({"heuristics": ["basic", "basic"]}, "e.yaml: field 'heuristics[1]' repeats a heuristic"),
    ({"name": "a b"}, "e.yaml: field 'name' must be a non-empty name"),
    ({"pool": {"size": 0}}, "e.yaml: field 'pool.size' must be >= 1"),
    ({"pool": {"max_nodes": "x"}}, "e.yaml: field 'pool.max_nodes' must be int or null"),
    ({"pool": {"sise": 3}}, "e.yaml: unknown field 'pool.sise' (did you mean 'size'?)"),
    ({"campaign": {"fuzz": {"minutes": 3}}}, "e.yaml: field 'campaign.fuzz.minutes' is set by the experiment"),
    ({"campaign": {"timeouts": {"buld": 3}}}, "e.yaml: campaign: unknown field 'timeouts.buld'"),
    ({"campaign": 3}, "e.yaml: field 'campaign' must be a mapping"),
    ({"levels": ["tir", "tyr"]}, "e.yaml: field 'levels[1]': unknown level 'tyr' (levels: tir, graph, sched)"),
    ({"levels": ["tir=0"]}, "e.yaml: field 'levels[0]': the weight of tir must be > 0 and <= 1000"),
    ({"levels": ["tir=x"]}, "e.yaml: field 'levels[0]': the weight of tir must be a number"),
    ({"levels": [""]}, "e.yaml: field 'levels[0]' must be a --levels string"),
    ({"levels": [3]}, "e.yaml: field 'levels[0]' must be str, got int"),
    ({"levels": "tir"}, "e.yaml: field 'levels' must be a list, got str"),
    ({"levels": ["tir,graph", "graph,tir"]}, "e.yaml: field 'levels[1]' repeats a level setting"),
])
def test_errors_name_file_and_field(over: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        spec_from_dict(_spec(**over), "e.yaml", check_heuristics=False)
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg


def test_unknown_heuristic_without_a_pool_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"e.yaml: field 'heuristics\[1\]': unknown heuristic 'conv7'"):
        spec_from_dict(_spec(heuristics=["basic", "conv7"]), "e.yaml")


def test_a_pool_made_elsewhere_needs_no_heuristic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seedpools" / "mine").mkdir(parents=True)
    (tmp_path / "seedpools" / "mine" / "manifest.json").write_text('{"models": []}')
    assert spec_from_dict(_spec(heuristics=["mine"]), "e.yaml").heuristics == ["mine"]


def test_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: invalid YAML at line"):
        load_spec(bad)
    with pytest.raises(ConfigError, match=r"missing.yaml: cannot read experiment file"):
        load_spec(tmp_path / "missing.yaml")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match=r"empty.yaml: empty experiment file"):
        load_spec(empty)


def test_generated_trial_config_is_a_valid_config_file(tmp_path: Path) -> None:
    import yaml

    from seedzer.config import to_dict

    spec = spec_from_dict(_spec(), "e.yaml", check_heuristics=False)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(to_dict(spec.trial_config(1))))
    assert load_config(path).fuzz.minutes == 1.0


def test_reference_documents_every_field() -> None:
    names = {row[0] for row in reference()}
    assert {"name", "heuristics", "trials", "minutes", "snapshot_period", "jobs", "coverage", "oracles",
            "pool.size", "campaign"} <= names
    assert "source" not in names


def test_readme_reference_is_current() -> None:
    text = (ROOT / "experiments" / "README.md").read_text()
    block = text.split("<!-- experiment-reference:start -->")[1].split("<!-- experiment-reference:end -->")[0]
    rows = [f"| `{name}` | `{default}` | {doc} |" for name, default, doc in reference()]
    assert block.strip().splitlines()[2:] == rows


def test_without_levels_arms_are_the_pools_as_before() -> None:
    spec = spec_from_dict(_spec(heuristics=["basic", "my/dir/h.yaml"]), "e.yaml", check_heuristics=False)
    assert [(a.name, a.heuristic, a.levels) for a in spec.arms()] == [("basic", "basic", ""),
                                                                       ("h", "my/dir/h.yaml", "")]
    assert "levels" not in spec.to_dict()  # experiment.json as before the field existed
    assert spec.trial_config(1).levels == load_config(None).levels


def test_levels_make_one_arm_per_pool_and_setting() -> None:
    spec = spec_from_dict(_spec(levels=["tir", "tir,graph", "graph=2, tir=0.5"],
                                campaign={"levels": {"tir": 2, "graph": 0}}), "e.yaml", check_heuristics=False)
    assert [a.name for a in spec.arms()] == ["basic@tir", "basic@tir+graph", "basic@tir0.5+graph2",
                                             "conv3@tir", "conv3@tir+graph", "conv3@tir0.5+graph2"]
    assert {a.heuristic for a in spec.arms()[:3]} == {"basic"}
    lv = spec.trial_config(2, "tir,graph").levels
    assert (lv.weight("tir"), lv.weight("graph")) == (2.0, 1.0)  # named: the campaign's weight (1 where 0)
    lv = spec.trial_config(2, "tir").levels
    assert (lv.weight("tir"), lv.weight("graph")) == (2.0, 0.0)
    assert spec.to_dict()["levels"] == ["tir", "tir,graph", "graph=2, tir=0.5"]
    assert spec.fingerprint()["levels"] == ["tir", "tir,graph", "graph=2, tir=0.5"]
    one = spec_from_dict(_spec(levels=["graph"]), "e.yaml", check_heuristics=False)
    assert [(a.name, a.levels) for a in one.arms()] == [("basic", "graph"), ("conv3", "graph")]
    assert one.trial_config(1, "graph").levels.weights() == {"graph": 1.0}


@pytest.mark.parametrize(("levels", "culprit"), [
    (["tir", "tir=3"], "levels[1]' is the same setting as levels[0] ('tir')"),
    (["tir=1,graph=1", "graph=2,tir=2"], "levels[1]' is the same setting as levels[0] ('tir=1,graph=1')"),
    (["graph", "tir", "graph=0.5"], "levels[2]' is the same setting as levels[0] ('graph')"),
])
def test_two_arms_of_one_effective_setting_are_refused(levels: list[str], culprit: str) -> None:
    """Issue 45 row 6. Before: ``levels: [tir, "tir=3"]`` made two arms that are one setting. The rule:
    a setting is the levels on and their shares (weights count only relative to each other)."""
    with pytest.raises(ConfigError, match=re.escape(f"e.yaml: field '{culprit}: the same levels in the same "
                                                    "proportions")):
        spec_from_dict(_spec(levels=levels), "e.yaml", check_heuristics=False)


def test_arms_whose_weights_differ_in_proportion_are_different_settings() -> None:
    spec = spec_from_dict(_spec(levels=["tir=3,graph=1", "tir=1,graph=1", "tir", "graph"]), "e.yaml",
                          check_heuristics=False)
    assert len(spec.arms()) == 4 * len(spec.heuristics)


def test_levels_experiment_compares_tir_with_tir_and_graph() -> None:
    spec = load_spec(ROOT / "experiments" / "levels.yaml")
    assert [a.name for a in spec.arms()] == ["basic@tir", "basic@tir+graph"]
    assert spec.coverage == "breakpoints" and spec.jobs == 1 and spec.parallel == 2


def test_trials_and_minutes_from_the_command_line_replace_the_file_s_and_are_checked(tmp_path: Path) -> None:
    from seedzer.experiment.spec import overridden

    path = tmp_path / "e.yaml"
    path.write_text("name: e\nheuristics: [basic]\ntrials: 5\nminutes: 10\n")
    spec = load_spec(path, check_heuristics=False)
    short = overridden(spec, trials=2, minutes=3)
    assert (short.trials, short.minutes, spec.trials, spec.minutes) == (2, 3, 5, 10)
    assert overridden(spec) is spec and overridden(spec, minutes=0.5).trials == 5
    with pytest.raises(ConfigError, match=r"with --trials/--minutes: field 'trials'"):
        overridden(spec, trials=0)


def test_two_allocations_make_an_adaptive_and_a_fixed_arm_per_pool() -> None:
    spec = spec_from_dict(_spec(heuristics=["basic"], allocations=["adaptive", "fixed"]), "e.yaml",
                          check_heuristics=False)
    arms = spec.arms()
    assert [(a.name, a.allocation) for a in arms] == [("basic@adaptive", "adaptive"), ("basic@fixed", "fixed")]
    assert spec.trial_config(1, allocation="fixed").allocation.adaptive is False
    assert spec.trial_config(1, allocation="adaptive").allocation.adaptive is True
    assert spec.fingerprint()["allocations"] == ["adaptive", "fixed"]


@pytest.mark.parametrize(("allocations", "problem"), [(["greedy"], "allocations[0]' must be one of: adaptive, fixed"),
                                                      (["fixed", "fixed"], "repeats an allocation")])
def test_a_bad_allocation_list_is_one_line(allocations: list[str], problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)):
        spec_from_dict(_spec(allocations=allocations), "e.yaml", check_heuristics=False)


def test_the_seed_pool_study_fixes_its_weights() -> None:
    spec = load_spec(ROOT / "experiments" / "seedzer-paper.yaml", check_heuristics=False)
    assert all(spec.trial_config(1, arm.levels, arm.heuristic).allocation.adaptive is False for arm in spec.arms())
