"""`seedzer report` and `seedzer experiment` on the command line (click's test runner)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedzer.commands import report as report_cli
from seedzer.commands.experiment import experiment_group
from seedzer.commands.report import report_cmd
from tests.fixtures.report.synth import make_experiment, make_level_experiment

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One report of the synthetic experiment, built through the command with --out."""
    root = tmp_path_factory.mktemp("rep")
    exp = make_experiment(root)
    res = CliRunner().invoke(report_cmd, [str(exp), "--out", str(root / "out")])
    assert res.exit_code == 0, res.output
    return root / "out", res.output


def test_report_writes_csv_plots_and_one_self_contained_page(built: tuple[Path, str]) -> None:
    out, output = built
    assert "#1 alpha: median final coverage (passes) 40" in output
    assert "alpha: 4 distinct finding(s) (segfault 1, other_crash 1, mismatch 1, other 1)" in output
    for name in ("data.csv", "findings.csv", "pairwise.csv", "ranking.csv", "overlap.csv",
                 "coverage_over_time.png", "coverage_over_time.svg", "final_coverage.svg",
                 "findings_by_symptom.png", "unique_findings_over_time.svg", "a12.svg", "overlap.svg"):
        assert (out / name).stat().st_size > 0, name
    page = (out / "report.html").read_text()
    assert page.count("data:image/svg+xml;base64,") >= 6
    assert not re.search(r"(src|href)=[\"'](?!data:)", page)  # nothing outside the page
    assert "Mann-Whitney" in page and "A12" in page and "seg1" in page


def test_report_csv_is_the_long_table(built: tuple[Path, str]) -> None:
    import pandas as pd

    from seedzer.report.table import LONG_COLUMNS

    data = pd.read_csv(built[0] / "data.csv")
    assert list(data.columns) == LONG_COLUMNS and len(data) == 30
    pw = pd.read_csv(built[0] / "pairwise.csv")
    assert pw[["a", "b", "a12"]].values.tolist() == [["alpha", "beta", 1.0]]
    assert pw["p"].item() == pytest.approx(0.1)  # exact two-sided p of 3 vs 3 fully separated trials


def test_report_compares_arms_by_level(tmp_path: Path) -> None:
    import pandas as pd

    exp = make_level_experiment(tmp_path)
    (exp / "experiment.json").write_text('{"trials": 2, "minutes": 0.17, "jobs": 1, "coverage": "passes", '
                                         '"oracles": ["crash"], "levels": ["tir", "tir,graph"]}')
    res = CliRunner().invoke(report_cmd, [str(exp), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    assert "#1 basic@tir+graph: median final coverage (passes)" in res.output
    pw = pd.read_csv(out / "pairwise.csv")
    assert ["basic@tir", "basic@tir+graph"] in pw[["a", "b"]].values.tolist()
    arms = pd.read_csv(out / "levels_by_arm.csv")
    assert arms[["heuristic", "level", "total_execs"]].values.tolist() == [
        ["basic@tir", "tir", 300], ["basic@tir+graph", "tir", 120], ["basic@tir+graph", "graph", 62],
        ["old", "tir", 20]]
    page = (out / "report.html").read_text()
    assert "Levels" in page and "min per arm" in page and "levels tir | tir,graph" in page


def test_a_report_without_levels_shows_every_execution_as_tir(built: tuple[Path, str]) -> None:
    import pandas as pd

    arms = pd.read_csv(built[0] / "levels_by_arm.csv")
    assert arms[["heuristic", "level"]].values.tolist() == [["alpha", "tir"], ["beta", "tir"]]
    assert arms["execs_share"].tolist() == [100.0, 100.0]


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(report_cmd, [str(tmp_path / "missing")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [f"error: {tmp_path / 'missing'}: results directory does not exist"]
    empty = tmp_path / "empty"
    empty.mkdir()
    res = CliRunner().invoke(report_cmd, [str(empty)])
    assert res.exit_code == 2 and "no campaigns found" in res.output
    res = CliRunner().invoke(report_cmd, [str(empty), "--watch", "0"])
    assert res.exit_code == 2 and "--watch: must be a positive number" in res.output


@pytest.mark.parametrize("content", [b"not a database\n", b""])
def test_a_results_folder_whose_only_trial_is_unreadable_is_one_line_and_no_report(tmp_path: Path,
                                                                                    content: bytes) -> None:
    """Issue 45 row 6. Before: exit 0 and an empty report ("0 trials"). After: exit 2, one line naming
    the unreadable trial, and no report written."""
    trial = tmp_path / "res" / "basic" / "trial-1"
    trial.mkdir(parents=True)
    (trial / "campaign.db").write_bytes(content)
    res = CliRunner().invoke(report_cmd, [str(tmp_path / "res")])
    assert res.exit_code == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {tmp_path / 'res'}: no readable trial (1 found; "
                                                   f"{trial}: skipped, campaign.db unreadable ("), lines
    assert not (tmp_path / "res" / "report").exists()


def test_watch_rebuilds_until_interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps: list[float] = []

    def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 1:  # results appear while watching
            make_experiment(tmp_path)
        else:
            raise KeyboardInterrupt

    monkeypatch.setattr(report_cli.time, "sleep", fake_sleep)
    res = CliRunner().invoke(report_cmd, [str(tmp_path / "synth"), "--watch", "7"])
    assert res.exit_code == 0, res.output
    assert sleeps == [7.0, 7.0] and "waiting:" in res.output and "watch stopped" in res.output
    assert 'http-equiv="refresh" content="7"' in (tmp_path / "synth" / "report" / "report.html").read_text()


def test_help_everywhere() -> None:
    for group, args in ((report_cmd, ["--help"]), (experiment_group, ["--help"]),
                        (experiment_group, ["run", "--help"]), (experiment_group, ["check", "--help"])):
        res = CliRunner().invoke(group, args)
        assert res.exit_code == 0 and "Usage:" in res.output


def test_experiment_check_and_one_line_errors(tmp_path: Path) -> None:
    res = CliRunner().invoke(experiment_group, ["check", str(ROOT / "experiments" / "quick.yaml")])
    assert res.exit_code == 0 and "2 heuristics x 2 trials = 4 campaigns of 1 min" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nheuristics: [basic]\nminutes: -1\n")
    for args in (["check", str(bad)], ["run", str(bad), "--results", str(tmp_path / "r")]):
        res = CliRunner().invoke(experiment_group, args)
        assert res.exit_code == 2
        assert res.output.strip().splitlines() == [
            f"error: {bad}: field 'minutes' must be > 0 and <= 527040 (a year), a finite number (got -1.0)"]
