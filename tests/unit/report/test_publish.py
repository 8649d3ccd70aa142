"""The study's results page (``seedzer report --publish``): provenance, the plain-words answer, figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seedzer.report.build import build_report
from seedzer.report.publish import md_table, publish_study
from seedzer.report.table import ReportError
from seedzer.store.allocation_rows import ArmRow
from seedzer.store.db import CampaignDB
from tests.fixtures.report.synth import make_experiment, make_trial

MACHINE = {"processor": "Test CPU", "cores": 2, "memory_gib": 24.0, "system": "Linux", "python": "3.11.7"}


def _study(root: Path, trials: int) -> Path:
    """``strong`` always covers more than ``weak``; every trial records its commit and machine."""
    exp = root / "study"
    for n in range(1, trials + 1):
        for arm, top in (("strong", 100 + n), ("weak", 50 + n)):
            trial = make_trial(exp / arm / f"trial-{n}", [0, top // 2, top])
            db = CampaignDB(trial / "campaign.db")
            db.set_meta("versions", {"seedzer": "0", "tvm": "0", "source": {"commit": "abcdef1234", "dirty": False},
                                     "machine": MACHINE})
            db.close()
    spec = {"name": "study", "description": "Two arms.", "heuristics": ["strong", "weak"], "trials": trials,
            "minutes": 0.2, "jobs": 1, "coverage": "passes", "oracles": ["crash"], "pool": {"size": 3, "seed": 0}}
    (exp / "experiment.json").write_text(json.dumps(spec))
    return exp


def test_five_trials_per_arm_give_a_significant_answer_with_its_provenance(tmp_path: Path) -> None:
    exp = _study(tmp_path, 5)
    result = build_report(exp, importer=["Relu"])
    page = publish_study(exp, result.out, tmp_path / "docs")
    text = page.read_text()
    assert page == tmp_path / "docs" / "study.md"
    assert text.startswith("# study: which seed pool makes the fuzzer most effective?")
    assert "`abcdef1`" in text and "2 cores (Test CPU), 24.0 GiB, Linux, Python 3.11.7" in text
    assert "5 trials x 0.2 minutes per arm" in text and "Incomplete" not in text
    coverage = next(line for line in text.splitlines() if line.startswith("- **Coverage"))
    assert "strong has the highest median (103 features)" in coverage
    assert "strong over weak (p = 0.00794, A12 = 1.00)" in coverage
    roots = next(line for line in text.splitlines() if line.startswith("- **Bug roots"))
    assert "no difference between any two arms is significant" in roots
    assert (tmp_path / "docs" / "study" / "coverage_over_time.svg").is_file()
    assert "](study/coverage_over_time.svg)" in text


def test_too_few_trials_are_called_provisional_and_nothing_significant(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path)  # 3 trials per arm, no experiment.json, no provenance
    result = build_report(exp, importer=["Relu"])
    text = publish_study(exp, result.out, tmp_path / "docs").read_text()
    assert "**Incomplete:** alpha, beta finished fewer than 5 trials" in text
    assert "no difference between any two arms is significant** at p < 0.05 (1 pair; the smallest p is 0.1," in text
    assert "Code (Seedzer commit): not recorded" in text


def test_publishing_without_a_built_report_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no report tables"):
        publish_study(tmp_path, tmp_path / "missing", tmp_path / "docs")


def test_markdown_tables_escape_bars_and_format_floats() -> None:
    import pandas as pd

    table = md_table(pd.DataFrame({"a": ["x|y"], "b": [0.123456]}))
    assert table.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | 0.1235 |"]


def test_a_study_of_schedules_asks_about_the_schedule(tmp_path: Path) -> None:
    exp = _study(tmp_path, 3)
    spec = json.loads((exp / "experiment.json").read_text())
    (exp / "experiment.json").write_text(json.dumps({**spec, "allocations": ["adaptive", "fixed"]}))
    result = build_report(exp, importer=["Relu"])
    text = publish_study(exp, result.out, tmp_path / "docs").read_text()
    assert text.startswith("# study: does the adaptive schedule make the fuzzer more effective than fixed weights?")


def test_a_study_of_schedules_shows_the_level_weights_over_time_and_the_allocation(tmp_path: Path) -> None:
    exp = _study(tmp_path, 3)
    spec = json.loads((exp / "experiment.json").read_text())
    (exp / "experiment.json").write_text(json.dumps({**spec, "allocations": ["adaptive", "fixed"]}))
    for db_path in exp.glob("*/trial-*/campaign.db"):
        db = CampaignDB(db_path)
        for when, graph in ((5.0, 0.25), (60.0, 0.6)):
            db.record_allocation(when, [ArmRow("level", "graph", graph, 90.0, 10, 2, 40.0),
                                        ArmRow("level", "tir", 1 - graph, 30.0, 30, 0, 20.0)],
                                 {"version": 1, "groups": {}})
        db.close()
    result = build_report(exp, importer=["Relu"])
    text = publish_study(exp, result.out, tmp_path / "docs").read_text()
    assert "](study/level_weights_over_time.svg)" in text
    assert (tmp_path / "docs" / "study" / "level_weights_over_time.svg").is_file()
    assert "## Allocation: weights at the end and reward per worker-minute" in text
