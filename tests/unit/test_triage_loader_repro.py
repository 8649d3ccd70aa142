"""Rendering of standalone loader reproducers and bug-report drafts (no TVM)."""

from __future__ import annotations

import ast
import base64
import json

import onnx

from seedzer.load import compare
from seedzer.outcome import Outcome, Stage, Symptom
from seedzer.triage.loader_report import LoaderReportInput, render_report, short_message, title
from seedzer.triage.loader_repro import MODEL_FILE, expected_of, render_loader_repro, standalone_code
from seedzer.triage.loader_standalone import normalize
from tests.triage_models import prelu_scalar_model

PRELU_MSG = (
    'ValueError: In ir.Op(span=None, ty=ir.Type(span=None), name="relax.nn.prelu", description="", '
    "num_inputs=2, support_level=10), the input axis -1 is out of range. The input tensor has 0 dimensions, "
    "so axis should be in range [0, 0)."
)


def _outcome(symptom: Symptom = Symptom.EXCEPTION, msg: str = PRELU_MSG, **detail: object) -> Outcome:
    return Outcome(symptom, Stage.LOAD, None, msg, {"step": "import", "substage": "import", **detail})


def _case(script: str) -> dict[str, object]:
    tree = ast.parse(script)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "CASE":
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict)
            return value
    raise AssertionError("no CASE in repro.py")


def test_repro_is_standalone_and_embeds_the_model() -> None:
    model = prelu_scalar_model()
    repro = render_loader_repro(model, _outcome(), "PRelu on a scalar")
    compile(repro.script, "repro.py", "exec")
    assert "from seedzer" not in repro.script and "import seedzer" not in repro.script
    imports = {n.names[0].name.split(".")[0] for n in ast.walk(ast.parse(repro.script))
               if isinstance(n, ast.Import)}
    imports |= {n.module.split(".")[0] for n in ast.walk(ast.parse(repro.script))
                if isinstance(n, ast.ImportFrom) and n.module}
    assert imports <= {"base64", "faulthandler", "os", "re", "sys", "typing", "json", "numpy", "onnx", "tvm",
                       "onnxruntime"}
    case = _case(repro.script)
    embedded = onnx.load_model_from_string(base64.b64decode(str(case["model_b64"])))
    assert len(embedded.graph.node) == 9 and embedded.ir_version <= 10
    assert case["specs"] == [["x", "float32", [2, 3, 4]]]
    assert case["expected"] == {"symptom": "exception", "step": "import", "key": normalize(PRELU_MSG)}
    assert case["tolerances"] == {k: list(v) for k, v in compare.TOLERANCES.items()}
    assert not repro.files


def test_the_loaders_comparison_is_inlined() -> None:
    code = standalone_code()
    assert "def compare_outputs(" in code and "def random_inputs(" in code
    assert "from seedzer" not in code


def test_large_models_are_saved_beside_the_script() -> None:
    repro = render_loader_repro(prelu_scalar_model(), _outcome(), "t", embed_limit=10)
    assert set(repro.files) == {MODEL_FILE}
    assert _case(repro.script)["model_file"] == MODEL_FILE


def test_normalize_keeps_the_failure_and_drops_what_varies() -> None:
    assert normalize("output 0: 3/12 elements out of tolerance (rtol=0.01, atol=0.001); max abs error -2.5") == (
        "output N: N/N elements out of tolerance (rtol=N, atol=N)"
    )
    assert normalize("KeyError: 'lv12' at 0xdeadbeef\nmore") == normalize("KeyError: 'lv3' at 0x1234")
    assert expected_of(_outcome(Symptom.CRASH, "killed by signal SIGSEGV", step="legalize"))["step"] == "legalize"


def test_report_draft_names_trigger_versions_and_behaviour() -> None:
    model = prelu_scalar_model()
    reduced = onnx.ModelProto()
    reduced.CopyFrom(model)
    keep = [n for n in reduced.graph.node if n.op_type == "PRelu"]
    del reduced.graph.node[:]
    reduced.graph.node.extend(keep)
    o = _outcome(traceback='Traceback\n  File "/x/site-packages/tvm/relax/frontend/onnx/onnx_frontend.py", line 9\n')
    report = LoaderReportInput("abc123", o, "m.onnx", model, reduced, True, 12, 30.0, "exits with status 1")
    text = render_report(report)
    assert text.startswith("# [Bug][Relax][Frontend][ONNX] PRelu: ValueError: In relax.nn.prelu: the input axis")
    for needle in ("## Environment", "apache-tvm==0.27.0.post1", "onnxruntime", "## Minimal trigger",
                   "## Expected behavior", "## Actual behavior", "from\n9 to 1 node(s)", "exits with status 1",
                   'File "tvm/relax/frontend/onnx/onnx_frontend.py"', "PRelu"):
        assert needle in text, needle
    assert short_message(PRELU_MSG).startswith("ValueError: In relax.nn.prelu: the input axis -1")
    mismatch = _outcome(Symptom.MISMATCH, "output 0: 1/4 elements differ", problems=["output 0: 1/4 elements differ"])
    assert title(mismatch, reduced).endswith("PRelu: result differs from onnxruntime")
    assert json.dumps(expected_of(mismatch))
