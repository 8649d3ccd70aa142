"""What a campaign exercised of TVM's importer (seedzer.campaign.operators), read from campaign.db."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import onnx
from onnx import TensorProto, helper
from rich.console import Console

from seedzer.campaign.operators import bug_operators, exercised_operators, operator_bug_table, reach_table
from seedzer.load.importer_ops import operator_reach
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader

IMPORTER = ("Add", "Conv", "Relu", "TopK", "Unique")


@dataclass
class Line:
    culprit: list[str] = field(default_factory=list)


def _pool_model(path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(graph), path)


def test_the_operators_of_graph_cases_and_loaded_pool_models_count(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    _pool_model(pool / "m.onnx")
    db = CampaignDB(tmp_path / "campaign.db")
    db.set_meta("pool", str(pool))
    db.set_model("m.onnx", "ok", 1, {})
    db.add_features(["onnx-op/TopK", "onnx-op/Shape", "graph/relax.FoldConstant", "bp:tvm:1"], 1.0)
    db.close()
    with CampaignReader.open(tmp_path / "campaign.db") as reader:
        found = exercised_operators(reader)
    assert found == {"Relu", "TopK", "Shape"}
    reach = operator_reach(found, IMPORTER)
    assert (reach.covered, reach.missing) == (["Relu", "TopK"], ["Add", "Conv", "Unique"])
    assert reach.line() == "importer operators exercised 2 of 5 (40%)"
    console = Console(width=120, record=True)
    console.print(reach_table(reach))
    text = console.export_text()
    assert "2 of 5 (40%)" in text and "Add, Conv, Unique" in text


def test_bugs_count_under_the_operator_their_root_names() -> None:
    assert bug_operators([Line(["insert:TopK", "relax.FuseOps"]), Line(["edge:Resize"])]) == ["TopK"]
    assert bug_operators([Line(["edge:Resize", "insert:-"])]) == ["Resize"]
    assert bug_operators([Line(["relax.ConvertLayout"])]) == []
    assert bug_operators([Line(["inputs:special:Sign"])]) == ["Sign"]  # the output that differed on special values
    assert bug_operators([Line(["inputs:special:ReduceMin:inf"])]) == ["ReduceMin"]  # and the kind of value
    assert bug_operators([Line(["inputs:special"])]) == []
    console = Console(width=120, record=True)
    console.print(operator_bug_table({"a": [Line(["insert:TopK"])], "b": [Line(["insert:TopK"])],
                                      "c": [Line(["build"])]}))
    text = console.export_text()
    assert "TopK" in text and "2" in text and "no operator named" in text


def test_unknown_importer_says_so() -> None:
    assert operator_reach({"Relu"}, ()).line() == ("importer operators exercised unknown (TVM's ONNX importer "
                                                   "cannot be imported)")
