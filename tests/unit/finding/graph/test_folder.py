"""Graph finding folders: the files a candidate is filed with, read back, rewritten from the gate's
minimal case, and the seam the registry hands out (no TVM)."""

from __future__ import annotations

import ast
import base64
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from seedzer.errors import SeedzerError
from seedzer.finding.graph import folder as gf
from seedzer.finding.graph.folder import (
    CASE_FILE,
    LOG_FILE,
    MODEL_FILE,
    PASSES_FILE,
    SEED_FILE,
    FailingCase,
    GraphFinding,
    finding_case,
    graph_log,
    graph_signature,
    passes_text,
    read_passes,
    write_case,
)
from seedzer.finding.kind import GateContext
from seedzer.finding.layout import META_FILE, REPRO_FILE
from seedzer.finding.meta import FindingMeta, ModelRecord
from seedzer.finding.registry import kind
from seedzer.finding.store import dump
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.graph.case import GraphCase, GraphPass

LAYOUT = GraphPass("relax.ConvertLayout", {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "default"]}})
FOLD = GraphPass("relax.FoldConstant")
ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.ConvertLayout",
                    "InternalError: Check failed: Invalid SLayout:can't find S in source layoutAB", step_index=1)
MODEL = b"\x08\x08fake onnx bytes"
CASE = GraphCase((("x", "float32", (2, 3)),), (FOLD, LAYOUT), input_seed=7)


def _meta() -> FindingMeta:
    return FindingMeta(signature=graph_signature(ERROR, CASE.passes), kind="graph", observation=ERROR,
                       model=MODEL_FILE, origin="model_000007.onnx")


def _filed(tmp_path: Path) -> tuple[Path, FindingMeta]:
    meta = _meta()
    folder = dump(tmp_path / meta.signature, GraphFinding(meta, CASE, MODEL, graph_log(ERROR, "Traceback ...")))
    return folder, meta


def _repro_case(script: str) -> dict[str, object]:
    found: dict[str, object] = {}
    for node in ast.parse(script).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("CASE", "MODEL"):
            found[node.targets[0].id] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
    case = found["CASE"]
    assert isinstance(case, dict)
    if "MODEL" in found:
        case["model"] = found["MODEL"]
    return case


def test_a_filed_candidate_is_its_case_model_passes_repro_and_log(tmp_path: Path) -> None:
    folder, _ = _filed(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [CASE_FILE, SEED_FILE, MODEL_FILE, PASSES_FILE, REPRO_FILE, LOG_FILE, META_FILE])
    assert (folder / SEED_FILE).read_bytes() == MODEL  # no model mutation: the seed is the model that fails
    assert (folder / MODEL_FILE).read_bytes() == MODEL
    stored = json.loads((folder / CASE_FILE).read_text())
    assert stored["model"] is None and stored["model_file"] == SEED_FILE
    assert Observation.from_json(stored["expected"]) == ERROR
    assert (folder / LOG_FILE).read_text().startswith(ERROR.message + "\n\nTraceback ...")
    assert read_passes((folder / PASSES_FILE).read_text()) == CASE.passes
    assert '"label": "relax.FoldConstant"' in (folder / PASSES_FILE).read_text()
    assert FindingMeta.load(folder).kind == "graph"


def test_the_case_reads_back_with_its_model_embedded(tmp_path: Path) -> None:
    folder, _ = _filed(tmp_path)
    case = finding_case(folder)
    assert case.passes == CASE.passes and case.specs == CASE.specs and case.input_seed == 7
    assert case.model is not None and base64.b64decode(case.model) == MODEL and case.expected == ERROR


def test_a_case_without_expected_failure_takes_the_meta_s(tmp_path: Path) -> None:
    folder, _ = _filed(tmp_path)
    data = json.loads((folder / CASE_FILE).read_text())
    (folder / CASE_FILE).write_text(json.dumps({**data, "expected": None}))
    assert finding_case(folder).expected == ERROR


def test_a_missing_model_or_case_is_a_one_line_error(tmp_path: Path) -> None:
    folder, _ = _filed(tmp_path)
    (folder / SEED_FILE).unlink()
    with pytest.raises(SeedzerError, match=r"seed model seed\.onnx is missing"):
        finding_case(folder)
    (folder / CASE_FILE).unlink()
    with pytest.raises(SeedzerError, match="not a graph case"):
        finding_case(folder)


def test_repro_is_standalone_embeds_the_model_and_names_the_kernels(tmp_path: Path) -> None:
    folder, meta = _filed(tmp_path)
    script = (folder / REPRO_FILE).read_text()
    compile(script, "repro.py", "exec")
    assert "pip install apache-tvm==0.27.0.post1 onnx onnxruntime numpy" in script
    for module in ("onnx.model", "graph.case", "graph.observe"):
        assert f"# ---- seedzer.kernel.{module} ----" in script
    assert "from seedzer" not in script and meta.signature in script
    case = _repro_case(script)
    assert isinstance(case["model"], str) and base64.b64decode(case["model"]) == MODEL


def test_large_models_are_read_from_beside_the_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gf, "EMBED_LIMIT", 4)
    folder, _ = _filed(tmp_path)
    case = _repro_case((folder / REPRO_FILE).read_text())
    assert case["model"] is None and case["model_file"] == SEED_FILE


def test_write_case_rewrites_case_passes_and_repro_from_the_minimal_case(tmp_path: Path) -> None:
    folder, meta = _filed(tmp_path)
    minimal = gf.stored(CASE.with_passes((LAYOUT,)), ERROR)
    write_case(folder, meta, minimal)
    assert read_passes((folder / PASSES_FILE).read_text()) == (LAYOUT,)
    assert finding_case(folder).passes == (LAYOUT,)
    assert "relax.FoldConstant" not in _repro_case((folder / REPRO_FILE).read_text())["passes"].__repr__()
    assert (folder / MODEL_FILE).read_bytes() == MODEL


RECORD = ModelRecord(MODEL_FILE, SEED_FILE, "model_000007.onnx", "aa", "bb", {"": 18}, {"": 14}, ("insert@x[Abs]",),
                     ("random inputs from input seed 7 (repro.py makes them)",))


def test_a_bug_s_failing_model_and_its_record_are_written_beside_the_seed(tmp_path: Path) -> None:
    """Issue 53: ``model.onnx`` is the model that fails (the gate's, the seed's model mutations applied),
    the seed stays ``seed.onnx`` (what case.json and repro.py start from), and meta.json says what the
    model is: its opset (raised by the mutations), the seed's origin and hash, what else is applied."""
    folder, meta = _filed(tmp_path)
    minimal = gf.stored(CASE.with_passes((LAYOUT,)), ERROR)
    kind("graph").write_case(folder, meta, FailingCase(minimal, b"failing model bytes", RECORD))
    assert (folder / MODEL_FILE).read_bytes() == b"failing model bytes" and (folder / SEED_FILE).read_bytes() == MODEL
    assert finding_case(folder).model == base64.b64encode(MODEL).decode()  # the kernel starts from the seed
    assert meta.failing_model == RECORD
    again = FindingMeta.from_json(json.loads(meta.dump(folder / META_FILE)))
    assert again.failing_model == RECORD
    assert RECORD.opset_note() == ("opset: ai.onnx 18, raised by the model mutations from the seed's ai.onnx 14: the "
                                   "model needs it")


def test_a_folder_of_an_older_seedzer_keeps_its_seed_when_a_verdict_rewrites_it(tmp_path: Path) -> None:
    """An older folder holds the seed as model.onnx (its case.json names it): it reads as it is, and the
    failing model written into it first moves the seed to seed.onnx."""
    folder, meta = _filed(tmp_path)
    (folder / SEED_FILE).unlink()
    data = json.loads((folder / CASE_FILE).read_text())
    (folder / CASE_FILE).write_text(json.dumps({**data, "model_file": MODEL_FILE}))
    assert base64.b64decode(str(finding_case(folder).model)) == MODEL
    write_case(folder, meta, gf.stored(CASE.with_passes((LAYOUT,)), ERROR), FailingCase(CASE, b"mutant", RECORD))
    assert (folder / SEED_FILE).read_bytes() == MODEL and (folder / MODEL_FILE).read_bytes() == b"mutant"
    assert json.loads((folder / CASE_FILE).read_text())["model_file"] == SEED_FILE
    assert base64.b64decode(str(finding_case(folder).model)) == MODEL


def test_the_signature_separates_failures_and_mismatching_sequences() -> None:
    assert graph_signature(ERROR, CASE.passes) == graph_signature(ERROR, (LAYOUT,))  # an error: where it surfaced
    other = Observation(Symptom.EXCEPTION, Stage.BUILD, "build", "unknown intrinsic tirx.atan")
    assert graph_signature(other) != graph_signature(ERROR)
    mismatch = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "values differ")
    assert graph_signature(mismatch, (FOLD,)) != graph_signature(mismatch, (LAYOUT,))


def test_passes_text_of_no_pass_is_an_empty_list() -> None:
    assert read_passes(passes_text(())) == ()


def test_the_registry_s_graph_kind_writes_and_gates_from_the_folder(tmp_path: Path) -> None:
    folder, meta = _filed(tmp_path)
    found = kind("graph")
    assert (found.name, found.needs) == ("graph", "onnx onnxruntime numpy")
    assert found.kernel == ("onnx.inputs+onnx.runtime+onnx.validity+onnx.conditioning+onnx.model+onnx.undefined"
                            "+graph.case+graph.model_mutations+graph.insertion+graph.mutant+graph.inputs+graph.feeds+graph.special+graph.relax_build"
                            "+graph.relax_consistency+graph.relax_mutations+graph.memo+graph.observe")
    call = found.gate_call(folder, meta, GateContext(timeout=30.0))
    assert call.fn.__name__ == "run_graph_gate_on_folder" and call.args[:2] == (str(folder), 30.0)
    (folder / REPRO_FILE).unlink()
    assert found.ensure_repro(folder, meta).is_file()
    found.write_case(folder, meta, gf.stored(CASE.with_passes((LAYOUT,)), ERROR))
    assert finding_case(folder).passes == (LAYOUT,)


def test_looking_up_and_filing_a_graph_finding_imports_no_tvm() -> None:
    code = ("import sys\nfrom seedzer.finding.registry import kind\nk = kind('graph')\n"
            "import seedzer.finding.graph.gate, seedzer.finding.graph.folder\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tvm', 'onnx', 'onnxruntime')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_graph_finding_is_filed_as_the_campaign_files_it_and_reads_back(tmp_path: Path) -> None:
    """The kind's one path: the worker's case (naming the pool's model file) filed by
    :meth:`GraphKind.file` with the model copied in, written by the house and read back the same."""
    from seedzer.finding.kind import FileSettings, Observed, Provenance

    model = tmp_path / "pool" / "model_000007.onnx"
    model.parent.mkdir()
    model.write_bytes(MODEL)
    ran = dataclasses.replace(CASE, model_file=str(model))
    observed = Observed(ERROR, ran, Provenance(origin="model_000007.onnx", testcase=3), log="Traceback ...")
    graph = kind("graph")
    filed = graph.file(observed, FileSettings())
    assert filed.meta.signature == graph.signature(observed) == graph_signature(ERROR, CASE.passes)
    assert filed.gate_case is None  # the graph gate reads the folder
    folder = dump(tmp_path / filed.meta.signature, filed.finding)
    assert (folder / MODEL_FILE).read_bytes() == MODEL
    assert GraphFinding.load(folder) == filed.finding
    with pytest.raises(SeedzerError, match="cannot read its model"):
        graph.file(Observed(ERROR, dataclasses.replace(CASE, model_file=str(tmp_path / "gone.onnx"))), FileSettings())


def test_a_candidate_whose_failure_is_in_no_pass_gets_no_pass_guess(tmp_path: Path) -> None:
    """Issue 53: a graph candidate failing at import, build or run (no pass of its case) was filed with a
    guess naming that step as its culprit and a predicted root; it gets neither now. One failing in a
    Relax pass keeps its prediction (the gate's known-root rule counts by it)."""
    from seedzer.finding.kind import FileSettings, Observed
    from seedzer.finding.known import GUESS, PREDICTED

    model = tmp_path / "model_000007.onnx"
    model.write_bytes(MODEL)
    ran = dataclasses.replace(CASE, model_file=str(model))
    build = Observation(Symptom.EXCEPTION, Stage.BUILD, "build", "InternalError: Check failed: something")
    assert not {PREDICTED, GUESS} & set(kind("graph").file(Observed(build, ran), FileSettings()).meta.extra)
    extra = kind("graph").file(Observed(ERROR, ran), FileSettings()).meta.extra
    assert extra[GUESS] == ["relax.ConvertLayout"] and isinstance(extra[PREDICTED], str)
