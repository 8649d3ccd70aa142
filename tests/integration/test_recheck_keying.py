"""``seedzer recheck`` re-keys an old campaign (issue 53): a fixture campaign whose two EyeLike findings (one
per input dtype) an older Seedzer filed as two roots, keyed by the import step and the message that names the
dtype, is re-judged by today's gate with real TVM; the map merges them into the root of EyeLike's converter,
recheck.json records it, and the ledger's sightings of the old roots move to the new one."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from seedzer.cli import main
from seedzer.finding.load.folder import SALT, LoadFinding
from seedzer.finding.meta import BUG
from seedzer.finding.recheck import MERGED, RECHECK_FILE
from seedzer.finding.store import FindingStore
from seedzer.finding.verdict import Verdict
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.load.observe import LoadCase
from seedzer.ledger.records import CAMPAIGN
from seedzer.ledger.store import Ledger
from seedzer.load.loader import MODEL_FILE, LoaderFailure
from seedzer.oracles.signature import SignatureKey
from seedzer.store.db import CampaignDB

pytestmark = pytest.mark.integration
pytest.importorskip("tvm")

DTYPES = ((TensorProto.FLOAT, "float32"), (TensorProto.INT32, "int32"))


def _eyelike(dtype: int) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("EyeLike", ["x"], ["y"], dtype=TensorProto.DOUBLE)], "g",
                              [helper.make_tensor_value_info("x", dtype, [3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [3, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def old_campaign(out: Path) -> tuple[Path, list[str]]:
    """A campaign as an older Seedzer left it: the two findings judged bugs, each under its own root (the import
    step and the message, as the load gate keyed a failure whose frames named only "relax.frontend.onnx")."""
    out.mkdir(parents=True)
    db = CampaignDB(out / "campaign.db")
    db.set_meta("pool", str((out / "pool").resolve()))
    db.set_meta("ledger", str(out / "ledger.db"))
    store = FindingStore(out / "findings", db, [], upstream=[])
    roots = []
    for dtype, name in DTYPES:
        path = out / "pool" / f"eyelike_{name}.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(_eyelike(dtype), path)
        message = f"ValueError: dtype mismatch between input ({name}) and attribute (11)"
        obs = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", message)
        case = LoadCase(((("x", name, (3, 3)),)), model_file=MODEL_FILE, timeout=120).to_json()
        finding = LoadFinding.of(path, LoaderFailure(obs, "raw", case))
        store.record(finding)
        old = SignatureKey(SALT, "exception", ("import",), f"dtype mismatch between input ({name}) and attribute (N)")
        roots.append(old.digest())
        store.settle(finding.meta, Verdict(finding.meta.signature, BUG, "bug", None, obs, ["import"], roots[-1]))
    db.close()
    return out, roots


def test_recheck_merges_the_roots_of_one_converter_and_the_ledger_follows(tmp_path: Path) -> None:
    campaign, old = old_campaign(tmp_path / "camp")
    assert len(set(old)) == 2
    with Ledger(campaign / "ledger.db") as ledger:  # the campaign recorded its two roots when it ended
        from seedzer.campaign.ledger_roots import campaign_sightings

        ledger.record(campaign_sightings(campaign), CAMPAIGN)
        ledger.set_state(old[0], "reported", "https://github.com/apache/tvm/issues/424242")
    res = CliRunner().invoke(main, ["recheck", str(campaign)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert "2 findings: 1 distinct bugs (2 findings)" in res.output
    merged = next(line for line in res.output.splitlines() if line.startswith("merged: "))
    assert old[0] in merged and old[1] in merged and "relax.frontend.onnx.EyeLike._impl_v9" in merged
    assert "old roots 2 -> new roots 1: merged 2" in res.output
    data = json.loads((campaign / RECHECK_FILE).read_text())
    assert {r["old"] for r in data["roots"]} == set(old) and {r["change"] for r in data["roots"]} == {MERGED}
    (new,) = {r["new"][0]["root"] for r in data["roots"]}
    with Ledger(campaign / "ledger.db", create=False) as ledger:
        roots = {r.root: r for r in ledger.roots()}
    assert roots[new].campaigns == (str(campaign.resolve()),)
    assert roots[new].state == "reported" and roots[new].link.endswith("/424242")  # the report follows the bug
    assert all(roots[o].merged_into == new and roots[o].campaigns == () for o in old)
