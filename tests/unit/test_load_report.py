"""Unit tests of the load report, the output writer, pool listing and crash bookkeeping (no TVM)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.errors import ModelError, PoolError
from seedzer.load.cli import resolve_models
from seedzer.load.loader import ModelLoad, _died, pool_models
from seedzer.load.output import write_findings, write_seeds
from seedzer.load.report import build_report, render
from seedzer.load.worker import LOG_FILE, PARTIAL_FILE, STEP_FILE, finding
from seedzer.outcome import Outcome, Stage, Symptom
from seedzer.protocols import LoadedSeed
from seedzer.seed import JointSeed


def _seed(text: str, origin: str, fused: bool = False) -> LoadedSeed:
    return LoadedSeed(JointSeed(f"# {text}\n", [], origin), op=text, fused=fused)


def _reshape_error(model: str, var: str) -> Outcome:
    return Outcome.from_dict(
        finding("exception", "import", "raw", f"InternalError: Reshape of {var} in {model} has no shape")
    )


def _results() -> list[ModelLoad]:
    ok = ModelLoad(model="a.onnx", path="a.onnx", attempts=["raw"], matched=True)
    ok.reached["raw"] = ["parse", "import", "legalize", "fuse", "build", "run", "reference", "compare"]
    ok.seeds = [_seed("add", "a.onnx"), _seed("fused_add_relu", "a.onnx", fused=True)]
    ok.timings = {"import": 0.5, "legalize": 1.0}
    rescued = ModelLoad(model="b.onnx", path="b.onnx", attempts=["raw", "folded"], folded=True, matched=False)
    rescued.reached = {
        "raw": ["parse"],
        "folded": ["parse", "fold", "import", "legalize", "fuse", "build", "run", "reference", "compare"],
    }
    rescued.seeds = [_seed("add", "b.onnx"), _seed("pad", "b.onnx")]
    rescued.outcomes = [
        _reshape_error("b.onnx", "lv10"),
        Outcome.from_dict(finding("mismatch", "compare", "folded", "output 0: 3/10 elements differ")),
    ]
    rescued.timings = {"import": 1.5, "fold": 0.1}
    failed = ModelLoad(model="c.onnx", path="c.onnx", attempts=["raw", "folded"], folded=True)
    failed.reached = {"raw": ["parse"], "folded": ["parse", "fold"]}
    failed.outcomes = [
        _reshape_error("c.onnx", "lv29"),
        Outcome(Symptom.CRASH, Stage.LOAD, None, "killed", {"substage": "import", "attempt": "folded"}),
    ]
    invalid = ModelLoad(model="d.onnx", path="d.onnx", attempts=["raw"])
    invalid.reached = {"raw": []}
    invalid.outcomes = [Outcome.from_dict(finding("invalid", "parse", "raw", "ONNX model d.onnx is empty"))]
    return [ok, rescued, failed, invalid]


def test_funnel_counts_raw_and_after_folding() -> None:
    report = build_report(_results())
    assert report.models == 4
    assert report.raw_counts["primfuncs"] == 1 and report.counts["primfuncs"] == 2
    assert report.counts["imported"] == 2 and report.counts["matched"] == 1 and report.counts["checked"] == 2
    assert report.folded_attempts == 2 and report.rescued_by_folding == 1
    assert report.invalid_inputs == 1
    assert report.seeds == {"total": 4, "op": 3, "fused": 1}
    assert report.percent("primfuncs") == 50.0 and report.percent("primfuncs", raw=True) == 25.0


def test_failures_group_by_signature_across_models() -> None:
    report = build_report(_results())
    top = report.groups[0]
    assert top.count == 2 and top.models == ["b.onnx", "c.onnx"] and top.substage == "import"
    assert top.attempts == {"raw": 2}
    assert {g.symptom for g in report.groups} == {"exception", "mismatch", "crash", "invalid"}


def test_timings_sum_per_step_in_pipeline_order() -> None:
    report = build_report(_results())
    assert list(report.timings) == ["fold", "import", "legalize"]
    assert report.timings["import"]["total"] == 2.0 and report.timings["import"]["models"] == 2


def test_render_and_json(tmp_path: Path) -> None:
    report = build_report(_results())
    console = Console(record=True, width=200)
    render(report, console)
    text = console.export_text()
    assert "Load funnel (4 models)" in text and report.groups[0].signature in text and "legalize" in text
    report.write(tmp_path / "load_report.json")
    data = json.loads((tmp_path / "load_report.json").read_text())
    assert data["counts"]["primfuncs"] == 2
    assert data["per_model"][1]["outcomes"][0]["signature"] == report.groups[0].signature


def test_write_seeds_deduplicates_across_models(tmp_path: Path) -> None:
    results = _results()
    assert write_seeds(tmp_path, results) == 3
    lines = [json.loads(line) for line in (tmp_path / "seeds.jsonl").read_text().splitlines()]
    shared = next(e for e in lines if e["op"] == "add")
    assert [s["model"] for s in shared["sources"]] == ["a.onnx", "b.onnx"]
    assert (tmp_path / shared["file"]).read_text() == "# add\n"
    assert shared["passes"] == [] and shared["origin"] == "a.onnx"


def test_write_findings_makes_a_repro_folder_per_mismatch(tmp_path: Path) -> None:
    model = tmp_path / "b.onnx"
    model.write_bytes(b"model bytes")
    (tmp_path / "b.npz").write_bytes(b"npz")
    results = _results()
    results[1].path = str(model)
    results[1].outcomes[1].detail.update({"specs": [["x", "float32", [2]]], "input_seed": 3, "ref_npz": "b.npz"})
    (folder,) = write_findings(tmp_path / "out", results)
    assert folder.name.startswith("b-")
    assert (folder / "model.onnx").read_bytes() == b"model bytes"  # no folded bytes kept: original copied
    assert (folder / "b.npz").is_file()
    repro = (folder / "repro.py").read_text()
    assert "MODEL = 'model.onnx'" in repro and "INPUT_SEED = 3" in repro
    compile(repro, "repro.py", "exec")


def test_pool_models_follows_the_manifest_else_globs(tmp_path: Path) -> None:
    for name in ("b.onnx", "a.onnx", "c.onnx"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in pool_models(tmp_path)] == ["a.onnx", "b.onnx", "c.onnx"]
    (tmp_path / "manifest.json").write_text(json.dumps({"models": [{"file": "c.onnx"}, {"file": "a.onnx"}]}))
    assert [p.name for p in pool_models(tmp_path)] == ["c.onnx", "a.onnx"]
    (tmp_path / "manifest.json").write_text("{not json")
    assert len(pool_models(tmp_path)) == 3


def test_resolve_models_errors(tmp_path: Path) -> None:
    with pytest.raises(PoolError, match=re.escape(str(tmp_path))):
        resolve_models(tmp_path)
    with pytest.raises(ModelError, match=r"nope\.onnx"):
        resolve_models(tmp_path / "nope.onnx")


def test_died_worker_keeps_checkpointed_seeds_and_names_the_step(tmp_path: Path) -> None:
    partial = {
        "attempt": "raw",
        "seeds": [{"script": "s", "op": "add", "fused": False}],
        "outcomes": [],
        "timings": {"import": 0.1},
        "reached": ["parse", "import", "legalize", "fuse"],
    }
    (tmp_path / PARTIAL_FILE).write_text(json.dumps(partial))
    (tmp_path / STEP_FILE).write_text("build")
    (tmp_path / LOG_FILE).write_text("!!! TVM encountered a Segfault\n")
    data = _died(Outcome(Symptom.CRASH, Stage.LOAD, None, "killed by signal SIGSEGV"), "raw", tmp_path)
    assert data["seeds"] == partial["seeds"] and data["retryable"]
    (outcome,) = data["outcomes"]
    assert outcome["symptom"] == "crash" and outcome["detail"]["substage"] == "build"
    assert "Segfault" in outcome["detail"]["log"]


def test_died_worker_without_progress_defaults_to_parse(tmp_path: Path) -> None:
    data = _died(Outcome(Symptom.HANG, Stage.LOAD, None, "no result after 5s"), "folded", tmp_path)
    assert data["seeds"] == [] and data["outcomes"][0]["detail"]["substage"] == "import"
    assert data["outcomes"][0]["detail"]["attempt"] == "folded"


def test_onnx_loader_implements_the_loader_protocol() -> None:
    from seedzer.load.loader import LoadOptions, OnnxLoader
    from seedzer.protocols import Loader, LoadResult

    loader = OnnxLoader(LoadOptions(differential=False))
    assert isinstance(loader, Loader)
    assert issubclass(ModelLoad, LoadResult)
    assert loader.options.worker_options()["differential"] is False
