"""Invalid test cases and unloadable pool models in ``seedzer status --all`` (issue 45: a hostile pool
must show each invalid or unsupported count with its reason). Campaigns run the real loop on the fake
worker (its ``INVALID`` line makes an invalid test case)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.invalid import invalid_class, invalid_table, unloaded_models_table
from seedzer.campaign.summary import campaign_summary
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader
from tests.unit.campaign.test_loop_campaigns import by_symptom, campaign, query
from tests.unit.fake_gate import FakeGate

pytestmark = pytest.mark.usefixtures("restore_signals")


@pytest.mark.parametrize(("message", "cls"), [
    ("onnxruntime cannot run the model (Fail: [ONNXRuntimeError] : 1 : FAIL : Reshape)",
     "onnxruntime cannot run the model"),
    ("the Relax mutation made ill-formed IR (Seedzer's own rewrite, not TVM): ValueError: If nodes",
     "the Relax mutation made ill-formed IR"),
    ("bounds: unrolled nest of 128 iterations > 64", "bounds: unroll"),
    ("bounds: something new", "bounds: other"),
    ("precondition: InternalError: Check failed: LowerOpaqueBlock must be called after ConvertBlocksToOpaque",
     "precondition: must be called after"),
    ("precondition: no pattern matches this", "precondition: other"),
    ("out of memory (MemoryError: ) under limits.max_testcase_memory 4.0 GiB: the input's size, not a TVM bug",
     "out of memory"),
    ("UnsupportedInput: unsupported input type: input 'x' is complex64", "UnsupportedInput"),
    ("\n\n", "(no reason given)"),
])
def test_a_reason_s_class_is_its_first_clause_a_precondition_s_its_pattern_a_bound_its_kind(message: str,
                                                                                            cls: str) -> None:
    assert invalid_class(message) == cls


def test_status_all_lists_invalid_test_cases_by_reason_and_models_without_seeds(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a", "INVALID"], FakeGate(by_symptom), lambda c: c.stats.invalid >= 3)
    c.run()
    rows = query(out / "campaign.db", "SELECT level, reason, count FROM filter_summary")
    assert [(lv, reason) for lv, reason, _ in rows] == [("tir", "unusable test case")] and rows[0][2] >= 3
    db = CampaignDB(out / "campaign.db")
    reason = ("ONNX model string_input.onnx: unsupported input type: input 'x' is string, which TVM's ONNX "
              "importer does not take")
    db.set_model("string_input.onnx", "failed", 0,
                 {"observations": [{"symptom": "invalid", "pass": "parse", "message": reason}]})
    db.close()
    console = Console(width=200, record=True)
    console.print(campaign_summary(out, show_all=True))
    text = console.export_text()
    assert "turned away before the gate" in text and "unusable test case" in text
    assert "Pool models that gave no seed" in text and "unsupported input type: input 'x' is string" in text
    console = Console(width=200, record=True)
    console.print(campaign_summary(out))
    assert "turned away before the gate" not in console.export_text()  # --all or --invalid only
    console = Console(width=200, record=True)
    console.print(campaign_summary(out, show_invalid=True))
    assert "turned away before the gate" in console.export_text()


def test_a_campaign_from_before_the_table_shows_none(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.db")
    conn.execute("CREATE TABLE models (model TEXT, status TEXT, seeds INTEGER, detail TEXT)")
    assert invalid_table(CampaignReader(conn, tmp_path / "old.db")) is None
    assert unloaded_models_table(CampaignReader(conn, tmp_path / "old.db")) is None
    conn.execute("INSERT INTO models VALUES ('m.onnx', 'failed', 0, 'not json')")
    table = unloaded_models_table(CampaignReader(conn, tmp_path / "old.db"))
    assert table is not None and table.row_count == 1
    conn.close()


def test_status_shows_a_corrupt_count_as_corrupt_never_as_a_count(tmp_path: Path) -> None:
    """Issue 55 row 8: counts such as ``abc``, ``1e+20``, ``-5`` or bytes in ``filter_summary`` were printed
    as counts by ``status --invalid`` / ``--all``. Each is one line naming its row; the table counts only
    the real row."""
    from click.testing import CliRunner

    from seedzer.cli import main
    from tests.unit.store.test_reader import HOSTILE, hostile_campaign

    hostile_campaign(tmp_path / "camp")
    for option in ("--invalid", "--all"):
        res = CliRunner().invoke(main, ["status", str(tmp_path / "camp"), option])
        assert res.exit_code == 0, res.output
        lines = res.stdout.splitlines()
        table = [ln for ln in lines if ln.startswith("│")]
        assert any("fine" in ln and "│ 7 " in ln for ln in table)
        corrupt = [ln for ln in lines if ln.startswith("corrupt row in campaign.db: filter_summary")]
        assert len(corrupt) == len(HOSTILE) - 1
        for (_, reason, _, _), line in zip(HOSTILE, corrupt, strict=False):
            assert f"reason '{reason}'" in line and line.endswith("is not a count; left out")
            assert not any(reason in ln for ln in table)  # never a row of the table
