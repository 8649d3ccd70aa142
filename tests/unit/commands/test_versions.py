"""`seedzer versions` end to end on wheels built in the test (nothing downloaded): two fake TVM releases, a
root whose plain reproducer is present only in the newer one (a regression), the environments made once
and reused, versions.json and the ledger written."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from seedzer.cli import main
from seedzer.finding.minimal.program import MinimalProgram, MinimalRecord, write_minimal
from seedzer.ledger.store import Ledger
from tests.unit.campaign.fake_campaigns import fake_campaign
from tests.unit.environments.fake_wheel import fake_tvm

PRESENT_IN_0_0_2 = """import sys
import tvm
present = tvm.__version__ == "0.0.2"
print("reproduced: the bug is present" if present else "not reproduced: fixed here")
sys.exit(1 if present else 0)
"""


def test_a_regression_across_two_releases_with_cached_environments(tmp_path: Path) -> None:
    for version in ("0.0.1", "0.0.2"):
        fake_tvm(tmp_path / "wheels", version)
    camp = fake_campaign(tmp_path / "camp", tmp_path / "pool", {"aaaa00000001": ["111111111111"]},
                         ledger=tmp_path / "ledger.db")
    program = MinimalProgram(PRESENT_IN_0_0_2, ("apache-tvm",), "pass-failure", "tirx.X")
    record = MinimalRecord.of(program).verified_by(True, 1, "present", "test", {})
    write_minimal(camp / "findings" / "111111111111", program, record)
    (tmp_path / "c.yaml").write_text(f"reproducers:\n  venvs: {tmp_path / 'envs'}\n  versions: [0.0.2, 0.0.1]\n"
                                     f"  pip_args: [--no-index, --find-links, {tmp_path / 'wheels'}]\n")
    added = CliRunner().invoke(main, ["bugs", "--config", str(tmp_path / "c.yaml"), "add", str(camp)])
    assert added.exit_code == 0 and "1 new: aaaa00000001" in added.stdout, added.output
    first = CliRunner().invoke(main, ["versions", str(camp), "--config", str(tmp_path / "c.yaml")])
    assert first.exit_code == 0, first.output
    assert "regression: aaaa00000001 is fixed in 0.0.1 and present in 0.0.2" in first.stdout
    assert "environments created: tvm-0.0.1-alone" in first.stdout
    again = CliRunner().invoke(main, ["versions", str(camp), "--config", str(tmp_path / "c.yaml")])
    assert again.exit_code == 0 and "environments created: none (all cached)" in again.stdout
    saved = json.loads((camp / "versions.json").read_text())
    assert saved["versions"] == ["0.0.1", "0.0.2"]
    assert {v: c["verdict"] for v, c in saved["roots"]["aaaa00000001"].items()} == {"0.0.1": "fixed",
                                                                                   "0.0.2": "present"}
    with Ledger(tmp_path / "ledger.db", create=False) as ledger:
        (root,) = ledger.roots()
    assert root.root == "aaaa00000001" and root.affected() == ("0.0.2",)
