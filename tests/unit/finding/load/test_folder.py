"""Loader finding folders: files, standalone reproducers, signatures and bug-report drafts (no TVM)."""

from __future__ import annotations

import ast
import base64
import json
from pathlib import Path

import onnx
import pytest

from seedzer.finding.load import folder as lf
from seedzer.finding.load.folder import LoadFinding, load_signature, short_message
from seedzer.finding.load.report_md import LoadReportInput, render_report, title
from seedzer.finding.meta import FindingMeta
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import normalize
from seedzer.load.loader import LoaderFailure
from tests.triage_models import prelu_scalar_model

PRELU_MSG = (
    'ValueError: In ir.Op(span=None, ty=ir.Type(span=None), name="relax.nn.prelu", description="", '
    "num_inputs=2, support_level=10), the input axis -1 is out of range. The input tensor has 0 dimensions, "
    "so axis should be in range [0, 0)."
)
CASE = {"specs": [["x", "float32", [2, 3, 4]]], "model": None, "model_file": "model.onnx", "input_seed": 7,
        "target": "llvm", "differential": False, "roundtrip": True, "timeout": 60.0, "reference": None,
        "expected": None}


def _obs(symptom: Symptom = Symptom.EXCEPTION, msg: str = PRELU_MSG, step: str = "import") -> Observation:
    return Observation(symptom, Stage.COMPARE if symptom is Symptom.MISMATCH else Stage.LOAD, step, msg)


def _case(script: str) -> dict[str, object]:
    tree = ast.parse(script)
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("CASE", "MODEL"):
            found[node.targets[0].id] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
    case = found["CASE"]
    assert isinstance(case, dict)
    if "MODEL" in found:
        case["model"] = found["MODEL"]
    return case


def _files(tmp_path: Path, attempt: str = "raw", model: bytes | None = None, log: str = ""
           ) -> tuple[FindingMeta, dict[str, str | bytes]]:
    path = tmp_path / "model_000007.onnx"
    onnx.save(prelu_scalar_model(), path)
    finding = LoadFinding.of(path, LoaderFailure(_obs(), attempt, CASE, model, log))
    return finding.meta, finding.files()


def test_a_finding_is_its_model_case_repro_and_meta(tmp_path: Path) -> None:
    meta, files = _files(tmp_path, log="Traceback ...")
    assert set(files) == {"model.onnx", "case.json", "repro.py", "log.txt"}
    assert files["model.onnx"] == (tmp_path / "model_000007.onnx").read_bytes()
    assert meta.kind == "load" and meta.model == "model.onnx" and meta.signature == load_signature(_obs())
    assert meta.origin == "model_000007.onnx" and meta.extra["attempt"] == "raw"
    case = json.loads(str(files["case.json"]))
    assert case["expected"] == _obs().to_json() and case["model_file"] == "model.onnx" and case["input_seed"] == 7
    assert "Traceback" in str(files["log.txt"])


def test_the_folded_attempts_model_is_the_findings_model(tmp_path: Path) -> None:
    meta, files = _files(tmp_path, attempt="folded", model=b"folded model")
    assert files["model.onnx"] == b"folded model" and meta.extra["attempt"] == "folded"


def test_repro_is_standalone_and_embeds_the_model(tmp_path: Path) -> None:
    _, files = _files(tmp_path)
    script = str(files["repro.py"])
    compile(script, "repro.py", "exec")
    assert "from seedzer" not in script and "import seedzer" not in script
    tree = ast.parse(script)
    imports = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
    imports |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imports <= {"__future__", "base64", "contextlib", "dataclasses", "enum", "faulthandler", "io", "json",
                       "os", "re", "resource", "sys", "time", "traceback", "collections", "typing", "numpy", "onnx",
                       "tvm", "onnxruntime"}
    case = _case(script)
    embedded = onnx.load_model_from_string(base64.b64decode(str(case["model"])))
    assert len(embedded.graph.node) == 9 and case["model_file"] is None
    assert case["specs"] == [["x", "float32", [2, 3, 4]]]
    assert case["expected"] == _obs().to_json()
    assert "In relax.nn.prelu: the input axis -1" in script.split("\n", 2)[1]  # the title names the failure


def test_large_models_are_read_from_beside_the_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lf, "EMBED_LIMIT", 10)
    _, files = _files(tmp_path)
    case = _case(str(files["repro.py"]))
    assert case["model"] is None and case["model_file"] == "model.onnx" and "model.onnx" in files


def test_same_error_in_different_models_has_one_signature() -> None:
    a = _obs(msg="InternalError: Reshape of lv10 at (1, 3) in /tmp/a/m1.onnx failed")
    b = _obs(msg="InternalError: Reshape of lv29 at (7, 2) in /data/pool/m77.onnx failed")
    assert load_signature(a) == load_signature(b) and len(load_signature(a)) == 12


def test_symptom_step_and_text_separate_signatures() -> None:
    base = _obs(msg="boom")
    assert load_signature(base) != load_signature(_obs(Symptom.CRASH, "boom"))
    assert load_signature(base) != load_signature(_obs(msg="boom", step="legalize"))
    assert load_signature(base) != load_signature(_obs(msg="bang"))


def test_signature_is_a_fixed_hash_of_kind_symptom_step_and_essence() -> None:
    # Signatures name finding folders and group load reports, so their definition must not drift.
    crash = Observation(Symptom.CRASH, Stage.LOAD, "import", "killed by signal SIGSEGV", signal=11)
    assert load_signature(crash) == "bf0def1e62a4"


def test_normalize_keeps_dtype_widths_and_drops_what_varies() -> None:
    assert normalize("expected float32 got int64") == "expected float32 got int64"
    assert normalize("KeyError: 'lv12' at 0xdeadbeef\nmore") == normalize("KeyError: 'lv3' at 0x1234")


def test_report_draft_names_trigger_versions_and_behaviour() -> None:
    model = prelu_scalar_model()
    reduced = onnx.ModelProto()
    reduced.CopyFrom(model)
    keep = [n for n in reduced.graph.node if n.op_type == "PRelu"]
    del reduced.graph.node[:]
    reduced.graph.node.extend(keep)
    log = 'Traceback\n  File "/x/site-packages/tvm/relax/frontend/onnx/onnx_frontend.py", line 9\n'
    report = LoadReportInput("abc123", _obs(), "m.onnx", model, reduced, True, 12, 30.0, "exits with status 1",
                               (1e-2, 1e-3), log)
    text = render_report(report)
    assert text.startswith("# [Bug][Relax][Frontend][ONNX] PRelu: ValueError: In relax.nn.prelu: the input axis")
    for needle in ("## Environment", "apache-tvm==0.27.0.post1", "onnxruntime", "## Minimal trigger",
                   "## Expected behavior", "## Actual behavior", "from\n9 to 1 node(s)", "exits with status 1",
                   'File "tvm/relax/frontend/onnx/onnx_frontend.py"', "PRelu", "rtol=0.01, atol=0.001"):
        assert needle in text, needle
    assert short_message(PRELU_MSG).startswith("ValueError: In relax.nn.prelu: the input axis -1")
    mismatch = _obs(Symptom.MISMATCH, "output 0: 1/4 elements differ (values)", "compare")
    assert title(mismatch, reduced).endswith("PRelu: result differs from onnxruntime")
    assert "output 0: 1/4 elements differ" in render_report(LoadReportInput(
        "abc", mismatch, "m.onnx", model, reduced, False, 1, 1.0, "was not run", (1e-2, 1e-3)))


def test_a_load_finding_is_filed_through_the_registry_and_reads_back(tmp_path: Path) -> None:
    """The campaign files a pool model's failure as a ``load`` finding by the registry (the kind's
    :meth:`~seedzer.finding.load.kind.LoadKind.file`); the folder the house writes reads back as the
    same finding, and a model that cannot be read is a one-line error, not a crash."""
    from seedzer.errors import SeedzerError
    from seedzer.finding.kind import FileSettings, Observed, Provenance
    from seedzer.finding.registry import POOL_KIND, kind
    from seedzer.finding.store import dump

    path = tmp_path / "model_000007.onnx"
    onnx.save(prelu_scalar_model(), path)
    failure = LoaderFailure(_obs(), "raw", CASE, None, "Traceback ...")
    observed = Observed(failure.observation, failure, Provenance(origin=path.name), source=path)
    load = kind(POOL_KIND)
    filed = load.file(observed, FileSettings())
    assert load.signature(observed) == filed.meta.signature == load_signature(_obs()) and filed.gate_case is None
    folder = dump(tmp_path / "findings" / filed.meta.signature, filed.finding)
    back = LoadFinding.load(folder)
    assert (back.meta, back.model, back.case, back.log) == (filed.meta, path.read_bytes(), CASE | {
        "expected": _obs().to_json()}, filed.finding.files()["log.txt"])
    gone = Observed(failure.observation, failure, source=tmp_path / "gone.onnx")
    with pytest.raises(SeedzerError, match=r"gone\.onnx: cannot read the model"):
        load.file(gone, FileSettings())
