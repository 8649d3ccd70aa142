"""Unit tests of the load report, the output writer, pool listing and crash bookkeeping (no TVM)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.commands.load import resolve_models
from seedzer.commands.load_output import write_findings, write_seeds
from seedzer.commands.load_report import build_report, render
from seedzer.errors import ModelError, PoolError
from seedzer.execute.isolated_load import died
from seedzer.finding.load.folder import load_signature
from seedzer.finding.meta import FindingMeta
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, Observation, Stage, Symptom
from seedzer.load.attempt import LOG_FILE, MODEL_COPY, PARTIAL_FILE, STEP_FILE
from seedzer.load.loader import AttemptResult, ModelLoad, ScriptSeed, pool_models

CASE = {"specs": [["x", "float32", [2]]], "model": None, "model_file": "model.onnx", "input_seed": 3,
        "target": "llvm", "differential": True, "roundtrip": True, "timeout": 60.0, "reference": None,
        "expected": None}


def _reshape_error(model: str, var: str) -> Observation:
    return Observation(Symptom.EXCEPTION, Stage.LOAD, "import", f"InternalError: Reshape of {var} in "
                       f"/data/pool/{model} has no shape")


def _run(attempt: str, reached: list[str], *observations: Observation, seeds: tuple[str, ...] = (),
         fused: tuple[str, ...] = (), **kw: object) -> AttemptResult:
    run = AttemptResult(attempt, list(observations), reached=reached, case=dict(CASE), **kw)  # type: ignore[arg-type]
    run.seeds = [ScriptSeed(f"# {s}\n", s, False) for s in seeds] + [ScriptSeed(f"# {s}\n", s, True) for s in fused]
    return run


def _load(name: str, *runs: AttemptResult) -> ModelLoad:
    result = ModelLoad(model=name, path=name)
    for run in runs:
        result.merge(run)
    result.folded = "folded" in result.attempts
    return result


def _results() -> list[ModelLoad]:
    ok = _load("a.onnx", _run("raw", ["parse", "import", "legalize", "fuse", "build", "run", "reference", "compare"],
                              seeds=("add",), fused=("fused_add_relu",), matched=True,
                              timings={"import": 0.5, "legalize": 1.0}))
    mismatch = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: 3/10 elements differ (values)",
                           comparison=MODEL_VS_ONNXRUNTIME)
    rescued = _load("b.onnx", _run("raw", ["parse"], _reshape_error("b.onnx", "lv10"), timings={"import": 1.5}),
                    _run("folded", ["parse", "fold", "import", "legalize", "fuse", "build", "run", "reference",
                                    "compare"], mismatch, seeds=("add", "pad"), matched=False, model=b"folded bytes",
                         timings={"fold": 0.1}))
    crash = Observation(Symptom.CRASH, Stage.LOAD, "import", "killed by signal SIGSEGV", signal=11)
    failed = _load("c.onnx", _run("raw", ["parse"], _reshape_error("c.onnx", "lv29")),
                   _run("folded", ["parse", "fold"], crash))
    invalid = AttemptResult("raw", [Observation(Symptom.INVALID, Stage.LOAD, "parse", "ONNX model d.onnx is empty")])
    return [ok, rescued, failed, _load("d.onnx", invalid)]


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
    assert top.attempts == {"raw": 2} and top.signature == load_signature(_reshape_error("b.onnx", "lv10"))
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
    row = data["per_model"][1]["observations"][0]
    assert row["signature"] == report.groups[0].signature and row["attempt"] == "raw" and row["pass"] == "import"


def test_write_seeds_deduplicates_across_models(tmp_path: Path) -> None:
    results = _results()
    assert write_seeds(tmp_path, results) == 3
    lines = [json.loads(line) for line in (tmp_path / "seeds.jsonl").read_text().splitlines()]
    shared = next(e for e in lines if e["op"] == "add")
    assert [s["model"] for s in shared["sources"]] == ["a.onnx", "b.onnx"]
    assert (tmp_path / shared["file"]).read_text() == "# add\n"
    assert shared["passes"] == [] and shared["origin"] == "a.onnx"


def test_write_findings_makes_a_loader_finding_folder_per_model_and_signature(tmp_path: Path) -> None:
    results = _results()
    for r in results:
        r.path = str(tmp_path / r.model)
        Path(r.path).write_bytes(b"raw bytes of " + r.model.encode())
    folders = write_findings(tmp_path / "out", results)
    names = sorted(f.name.split("-")[0] for f in folders)
    assert names == ["b", "b", "c", "c"]  # not a.onnx (clean), not d.onnx (invalid input)
    mismatch = next(f for f in folders if FindingMeta.load(f).observation.symptom is Symptom.MISMATCH)
    meta = FindingMeta.load(mismatch)
    assert meta.kind == "load" and meta.model == "model.onnx" and meta.origin == "b.onnx"
    assert mismatch.name == f"b-{meta.signature}" and meta.extra["attempt"] == "folded"
    assert (mismatch / "model.onnx").read_bytes() == b"folded bytes"  # the model the folded attempt imported
    raw = next(f for f in folders if f.name.startswith("b-") and f != mismatch)
    assert (raw / "model.onnx").read_bytes() == b"raw bytes of b.onnx"
    case = json.loads((mismatch / "case.json").read_text())
    assert case["model_file"] == "model.onnx" and case["input_seed"] == 3
    assert Observation.from_json(case["expected"]) == meta.observation
    repro = (mismatch / "repro.py").read_text()
    compile(repro, "repro.py", "exec")
    assert "from seedzer" not in repro and "CASE['model'] = MODEL" in repro


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


def test_died_worker_keeps_checkpointed_seeds_case_and_model_and_names_the_step(tmp_path: Path) -> None:
    partial = AttemptResult("folded", seeds=[ScriptSeed("s", "add", False)], timings={"import": 0.1},
                            reached=["parse", "fold", "import", "legalize", "fuse"], case=dict(CASE))
    (tmp_path / PARTIAL_FILE).write_text(json.dumps(partial.to_json()))
    (tmp_path / MODEL_COPY).write_bytes(b"folded")
    (tmp_path / STEP_FILE).write_text("build")
    (tmp_path / LOG_FILE).write_text("!!! TVM encountered a Segfault\n")
    data = died(Symptom.CRASH, "killed by signal SIGSEGV", "folded", tmp_path)
    assert data.seeds == partial.seeds and data.retryable and data.died and data.case == CASE
    assert data.model == b"folded"
    (obs,) = data.observations
    assert obs.symptom is Symptom.CRASH and obs.pass_name == "build" and obs.signal == 11
    assert "Segfault" in data.log
    (failure,) = _load("m.onnx", data).failures()
    assert failure.observation == obs and failure.model == b"folded" and "Segfault" in failure.log


def test_died_worker_without_progress_defaults_to_parse(tmp_path: Path) -> None:
    data = died(Symptom.HANG, "no result after 5s", "folded", tmp_path)
    assert data.seeds == [] and data.attempt == "folded"
    (obs,) = data.observations
    assert obs.symptom is Symptom.HANG and obs.pass_name == "parse"
    assert _load("m.onnx", data).failures() == []  # no case yet: nothing to file


def test_a_sigkill_is_never_a_crash(tmp_path: Path) -> None:
    (tmp_path / STEP_FILE).write_text("build")
    (obs,) = died(Symptom.CRASH, "killed by signal SIGKILL", "raw", tmp_path).observations
    assert obs.symptom is Symptom.INVALID and "not a TVM bug" in obs.message


def test_onnx_loader_implements_the_loader_protocol() -> None:
    from seedzer.execute.isolated_load import OnnxLoader
    from seedzer.load.loader import LoadOptions
    from seedzer.protocols import Loader, LoadResult

    loader = OnnxLoader(LoadOptions(differential=False))
    assert isinstance(loader, Loader)
    assert issubclass(ModelLoad, LoadResult)
    assert loader.options.differential is False


def test_attempt_results_round_trip_through_their_checkpoint() -> None:
    run = _run("raw", ["parse", "import"], _reshape_error("m.onnx", "lv1"), seeds=("add",), matched=False,
               reference="onnxruntime", tracebacks={"import": "Traceback ..."}, bound_dims={"x": [1, 3]})
    again = AttemptResult.from_json(json.loads(json.dumps(run.to_json())))
    assert again == run
