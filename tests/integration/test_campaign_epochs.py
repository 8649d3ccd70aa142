"""A real campaign with generation epochs: NNSmith makes the starting pool, the generator process makes
and loads epoch 1's models while TVM is fuzzed, the campaign takes them in and records their weights."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def seedzer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "seedzer.cli", *args], capture_output=True, text=True, timeout=600)


def test_an_epochs_campaign_generates_loads_and_records_epoch_one(tmp_path: Path) -> None:
    pool, out = tmp_path / "pool", tmp_path / "campaign"
    made = seedzer("generate", "--heuristic", "basic", "--count", "2", "--max-nodes", "5", "--out", str(pool),
                   "--seed", "3")
    assert made.returncode == 0, made.stderr
    config = tmp_path / "c.yaml"
    config.write_text("fuzz: {coverage: passes}\nepochs: {models: 2, cpu_share: 0.5}\n")
    run = seedzer("fuzz", "--pool", str(pool), "--out", str(out), "--minutes", "1.5", "--jobs", "1",
                  "--epochs", "2", "--levels", "tir", "--config", str(config), "--monitor", "plain")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "Generation epochs" in run.stdout and "epoch 1 of 2 starts" in run.stderr
    folder = out / "epochs" / "epoch-1"
    manifest = json.loads((folder / "manifest.json").read_text())
    models = [e["file"] for e in manifest["models"]]
    assert models and all(m.startswith("model_1") for m in models)  # numbered from 100000: names of their own
    # each model drew its own attribute values (uniformly: the pool given was made with one setting)
    assert manifest["attribute_weights"] == {} and all(
        any(a.startswith("nodes=") for a in e["attributes"]) for e in manifest["models"])
    weights = json.loads((folder / "weights.json").read_text())
    assert weights["weights"] and weights["posterior"] and weights["models"] == models
    assert weights["attribute_weights"] == {} and weights["attribute_posterior"] == {}
    assert {o["model"] for o in weights["outcomes"]} <= {e["file"] for e in
                                                        json.loads((pool / "manifest.json").read_text())["models"]}
    con = sqlite3.connect(f"file:{out / 'campaign.db'}?mode=ro", uri=True)
    try:
        taken = {r[0] for r in con.execute("SELECT model FROM models")}
        origins = {r[0] for r in con.execute("SELECT origin_model FROM corpus")}
        rows = con.execute("SELECT epoch, made, loaded, weights FROM epochs ORDER BY epoch").fetchall()
    finally:
        con.close()
    assert taken & set(models), "no epoch-1 model was taken in"
    assert origins & set(models), "no corpus entry descends from an epoch-1 model"
    assert [r[0] for r in rows] == [0, 1] and rows[1][1] == len(models) and rows[1][2] >= 1
    assert json.loads(rows[1][3]) == weights["weights"]
    share = json.loads((folder / "governor.json").read_text())
    assert share["cpu_share"] <= 0.5 * 1.2  # within its share (one unit of work may overshoot)
