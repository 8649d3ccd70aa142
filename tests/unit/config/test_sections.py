"""The house's sections of the configuration: defaults, checks and one-line errors naming file and field."""

from pathlib import Path

import pytest

from seedzer.config import Config, check_of, check_value, config_from_dict, load_config, reference
from seedzer.errors import ConfigError, UsageError


def test_defaults_without_file() -> None:
    cfg = load_config(None)
    assert isinstance(cfg, Config)
    assert cfg.fuzz.jobs == 1 and cfg.fuzz.coverage == "breakpoints"
    assert cfg.oracles.enabled == ["crash", "hang", "illformed", "exception", "mismatch", "special-values", "perf"]


def test_partial_file_keeps_other_defaults(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("fuzz:\n  jobs: 2\n  minutes: 1\nknown_issues:\n  - pattern: 'LoopPartition'\n    note: x\n")
    cfg = load_config(p)
    assert cfg.fuzz.jobs == 2 and cfg.fuzz.minutes == 1.0 and cfg.fuzz.seed == 0
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
        ("levels:\n  graph:\n    llvm_opt_level: 4\n", "field 'levels.graph.llvm_opt_level' must be 0, 1, 2 or 3"),
        ("graph:\n  llvm_opt_level: 4\n", "field 'levels.graph.llvm_opt_level' must be 0, 1, 2 or 3"),  # old key
        ("fuzz:\n  jobs: [1, 2]\n", "field 'fuzz.jobs' must be int, got list [1, 2]"),
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


def test_a_cross_field_conflict_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^c\.yaml: field 'fuzz\.energy' rarity needs fuzz\.scheduler cost "
                                          r"\(got 'uniform'\)$"):
        config_from_dict({"fuzz": {"energy": "rarity", "scheduler": "uniform"}}, "c.yaml")


def test_a_field_declares_its_check_and_a_cli_value_is_checked_by_it() -> None:
    jobs, pattern = check_of("fuzz.jobs"), check_of("known_issues[].pattern")
    assert jobs is not None and jobs.test(2) and not jobs.test(0)
    assert pattern is not None and not pattern.test("a(") and pattern.test("a+")
    assert check_of("fuzz.differential_load") is None and check_of("fuzz.nope") is None and check_of("nope") is None
    check_value("fuzz.jobs", 2, "--jobs")
    check_value("no.such.field", -1, "--x")  # a field without a check accepts anything
    with pytest.raises(UsageError, match=r"^--minutes: must be > 0") as err:
        check_value("fuzz.minutes", 0, "--minutes")
    assert "\n" not in str(err.value)


def test_the_checks_of_the_reference_fields_are_found_by_their_dotted_names() -> None:
    checked = [name for name, _, _ in reference() if check_of(name) is not None]
    assert {"fuzz.jobs", "timeouts.load", "oracles.enabled", "known_issues[].pattern", "ledger.path"} <= set(checked)
