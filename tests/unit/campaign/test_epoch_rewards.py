"""Each fuzzed model's reward for the operator bandit (seedzer.campaign.epoch_rewards)."""

from __future__ import annotations

import json
from pathlib import Path

from seedzer.campaign.epoch_rewards import ROOT_WEIGHT, ModelInfo, finding_origins, models_of_manifest, rewards
from seedzer.store.corpus import CorpusEntry
from seedzer.store.db import FindingRow


def entry(seed_id: str, origin: str, parent: str | None = None, triggered: tuple[str, ...] = ()) -> CorpusEntry:
    return CorpusEntry(seed_id, seed_id, "[]", origin, parent, triggered=triggered, level="tir")


def finding(folder: Path, signature: str, origin: str, verdict: str, root: str | None) -> FindingRow:
    (folder / signature).mkdir(parents=True)
    (folder / signature / "meta.json").write_text(json.dumps({"origin": origin}))
    return FindingRow(signature, "exception", "pass", "p", "m", 0, 0, 1, "new", f"findings/{signature}",
                      verdict=verdict, root=root)


def test_a_reward_adds_kept_mutants_rare_triggers_and_roots(tmp_path: Path) -> None:
    models = [ModelInfo("a.onnx", 0, ("Relu",), ("Relu",)), ModelInfo("b.onnx", 1, ("Add",), ("Add",)),
              ModelInfo("c.onnx", 1, (), ())]
    entries = [entry("a0", "a.onnx", triggered=("FoldConstant", "Simplify")),
               entry("a1", "a.onnx", "a0", triggered=("Simplify",)), entry("a2", "a.onnx", "a1"),
               entry("b0", "b.onnx", triggered=("Simplify", "FuseOps"))]
    found = tmp_path / "findings"
    rows = [finding(found, "111111111111", "b.onnx", "bug", "aaaaaaaaaaaa"),
            finding(found, "222222222222", "b.onnx", "pending", None),
            finding(found, "333333333333", "b.onnx", "bug", "aaaaaaaaaaaa"),  # the same root again
            finding(found, "444444444444", "a.onnx", "not-a-bug", None)]
    roots = finding_origins(found, rows)
    assert roots == {"b.onnx": {"aaaaaaaaaaaa", "222222222222"}}
    got = {o.model: o.reward for o in rewards(models, entries, roots)}
    # a: 2 kept mutants + FoldConstant (only a's entries: 1) + Simplify (3 entries: 1/3)
    assert got["a.onnx"] == round(2 + 1 + 1 / 3, 6)
    # b: FuseOps 1 + Simplify 1/3 + two roots
    assert got["b.onnx"] == round(1 + 1 / 3 + 2 * ROOT_WEIGHT, 6)
    assert got["c.onnx"] == 0.0


def test_models_of_a_manifest_carry_both_operator_lists_and_their_attributes() -> None:
    manifest = {"models": [{"file": "model_100000.onnx", "nnsmith_ops": ["Conv2d"], "ops": ["Conv", "Shape"],
                            "attributes": ["nodes=more", "kernel=3"]},
                           {"file": "zoo.onnx"}, "junk"]}
    assert models_of_manifest(manifest, 1) == [ModelInfo("model_100000.onnx", 1, ("Conv2d",), ("Conv", "Shape"),
                                                         ("nodes=more", "kernel=3")),
                                               ModelInfo("zoo.onnx", 1, (), ())]
