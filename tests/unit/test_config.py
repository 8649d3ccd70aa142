from pathlib import Path

import pytest

from seedzer.config import Config, config_from_dict, load_config, reference
from seedzer.errors import ConfigError


def test_defaults_without_file() -> None:
    cfg = load_config(None)
    assert isinstance(cfg, Config)
    assert cfg.fuzz.jobs == 1 and cfg.fuzz.coverage == "breakpoints"
    assert cfg.oracles.enabled == ["crash", "hang", "illformed", "exception", "mismatch", "special-values", "perf"]


def test_partial_file_keeps_other_defaults(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("fuzz:\n  jobs: 2\n  minutes: 1\nknown_issues:\n  - pattern: 'LoopPartition'\n    note: x\n")
    cfg = load_config(p)
    assert cfg.fuzz.jobs == 2 and cfg.fuzz.minutes == 1.0 and cfg.fuzz.tolerance == 4
    assert cfg.known_issues[0].pattern == "LoopPartition"


@pytest.mark.parametrize(
    "text, needle",
    [
        ("fuzz:\n  jobz: 2\n", "unknown field 'fuzz.jobz' (did you mean 'jobs'?)"),
        ("fuzz:\n  jobs: two\n", "field 'fuzz.jobs' must be int"),
        ("fuzz:\n  jobs: 0\n", "field 'fuzz.jobs' must be >= 1 and <= 1024"),
        ("fuzz: [1, 2]\n", "field 'fuzz' must be a mapping"),
        ("fuzz:\n  scheduler: afl\n", "field 'fuzz.scheduler' must be one of: cost, uniform"),
        ("fuzz:\n  energy: fast\n", "field 'fuzz.energy' must be one of: coverage, rarity"),
        ("fuzz:\n  energy: rarity\n  scheduler: uniform\n", "field 'fuzz.energy' rarity needs fuzz.scheduler cost"),
        ("timeouts:\n  hang_share: 2\n", "field 'timeouts.hang_share' must be a share between 0 and 1"),
        ("bounds:\n  max_growth: 0.5\n", "field 'bounds.max_growth' must be between 1 and 1000"),
        ("oracles:\n  gate_share: -1\n", "field 'oracles.gate_share' must be a share between 0 (no limit) and 1"),
        ("graph:\n  llvm_opt_level: 4\n", "field 'graph.llvm_opt_level' must be 0, 1, 2 or 3"),
        ("oracles:\n  enabled: [crash, telepathy]\n", "field 'oracles.enabled'"),
        ("known_issues:\n  - pattern: 'a('\n", "known_issues[0].pattern' must be a valid regular expression"),
        ("fuzz:\n  jobs: [\n", "invalid YAML at line"),
        ("- just\n- a list\n", "top level must be a mapping"),
    ],
)
def test_bad_config_is_one_line_naming_file_and_field(tmp_path: Path, text: str, needle: str) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    msg = str(exc.value)
    assert needle in msg
    assert str(p) in msg
    assert "\n" not in msg


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read"):
        load_config(tmp_path / "nope.yaml")


def test_bool_is_not_an_int() -> None:
    with pytest.raises(ConfigError, match="must be int"):
        config_from_dict({"fuzz": {"jobs": True}})


def test_reference_documents_every_field() -> None:
    rows = reference()
    names = {r[0] for r in rows}
    assert {"fuzz.jobs", "timeouts.build", "oracles.rtol", "known_issues[].pattern"} <= names
    assert all(doc for _, _, doc in rows)


def test_a_config_turning_every_level_off_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("levels:\n  tir: 0\n  graph: 0\n")
    with pytest.raises(ConfigError, match="turns every level off"):
        load_config(path)


def test_graph_mutation_weights_have_defaults_ranges_and_cannot_all_be_off(tmp_path: Path) -> None:
    assert Config().graph.weights() == {"passes": 3.0, "uoc": 0.6, "pioc": 1.2, "edge": 4.0, "insert": 4.0,
                                        "special": 1.0}
    path = tmp_path / "c.yaml"
    path.write_text("graph:\n  uoc: -1\n")
    with pytest.raises(ConfigError, match=r"field 'graph\.uoc' must be between 0"):
        load_config(path)
    path.write_text("graph:\n  passes: 0\n  uoc: 0\n  pioc: 0\n  edge: 0\n  insert: 0\n  special: 0\n")
    with pytest.raises(ConfigError, match="turns every graph mutation off"):
        load_config(path)
