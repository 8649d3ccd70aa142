"""Reading loader finding folders, old and new, and the case their reduction checks (no TVM builds)."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from seedzer.errors import SeedzerError
from seedzer.finding.load.folder import LoadFinding, base_case
from seedzer.finding.store import dump
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, Observation, Stage, Symptom
from seedzer.load.loader import LoaderFailure
from tests.triage_models import chain_model, foldable_model

CASE = {"specs": [["x", "float32", [2, 3]]], "model": None, "model_file": "model.onnx", "input_seed": 9,
        "target": "llvm", "differential": False, "roundtrip": True, "timeout": 60.0, "reference": None,
        "expected": None}


def _outcome(symptom: str = "exception", msg: str = "ValueError: axis 3 out of range", **detail: object
             ) -> dict[str, object]:
    """An ``outcome`` as Seedzer wrote it before observations."""
    stage = "compare" if symptom == "mismatch" else "load"
    return {"symptom": symptom, "stage": stage, "pass_name": None, "message": msg,
            "detail": {"step": "import", "attempt": "raw", **detail}}


def _folder(tmp_path: Path, meta: dict[str, object], name: str = "meta.json") -> Path:
    folder = tmp_path / "findings" / "abc"
    folder.mkdir(parents=True)
    (folder / name).write_text(json.dumps(meta))
    return folder


def test_reads_a_loader_finding_folder(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(chain_model(), model)
    obs = Observation(Symptom.EXCEPTION, Stage.LOAD, "legalize", "ValueError: axis 3 out of range")
    finding = LoadFinding.of(model, LoaderFailure(obs, "folded", CASE, b"folded", "log"))
    folder = dump(tmp_path / "findings" / finding.signature, finding)
    model.unlink()  # the folder is self-contained
    found = LoadFinding.load(folder)
    assert found.observation == obs and found.model == b"folded" and found.attempt == "folded"
    assert found.signature == finding.signature and found.model_name == "m.onnx" and "log" in found.log
    assert base_case(found, 30)["input_seed"] == 9 and base_case(found, 30)["expected"] == obs.to_json()


def test_reads_an_older_campaign_finding(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(chain_model(), model)
    found = LoadFinding.load(_folder(tmp_path, {"kind": "loader", "model": str(model), "signature": "abc",
                                            "outcome": _outcome(step="legalize", traceback="Traceback x")}))
    assert found.model == model.read_bytes() and found.model_name == "m.onnx" and found.case is None
    assert found.observation.pass_name == "legalize" and found.observation.symptom is Symptom.EXCEPTION
    assert found.attempt == "raw" and found.log == "Traceback x"


def test_an_older_mismatch_is_a_model_versus_onnxruntime_mismatch(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(chain_model(), model)
    outcome = _outcome("mismatch", "output 0: 1/4 elements differ", step="compare", input_seed=7)
    found = LoadFinding.load(_folder(tmp_path, {"kind": "loader", "model": str(model), "outcome": outcome}))
    obs = found.observation
    assert (obs.stage, obs.pass_name, obs.comparison) == (Stage.COMPARE, "compare", MODEL_VS_ONNXRUNTIME)
    assert found.input_seed == 7


def test_an_older_finding_of_the_folded_attempt_is_folded_again(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(foldable_model(), model)
    found = LoadFinding.load(_folder(tmp_path, {"kind": "loader", "model": str(model),
                                            "outcome": _outcome(attempt="folded")}))
    folded = onnx.load_model_from_string(found.model)
    assert found.attempt == "folded" and len(folded.graph.node) < len(foldable_model().graph.node)


def test_reads_an_older_load_command_finding(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"outcome": _outcome()}, "finding.json")
    onnx.save(chain_model(), folder / "model.onnx")
    found = LoadFinding.load(folder)
    assert found.model == (folder / "model.onnx").read_bytes() and found.observation.pass_name == "import"


@pytest.mark.parametrize(
    ("meta", "needle"),
    [
        (None, "not a finding folder"),
        ({"kind": "lowlevel", "outcome": _outcome()}, "not a load finding"),
        ({"kind": "loader", "model": "/nonexistent.onnx", "outcome": _outcome()}, "does not exist"),
        ({"kind": "loader", "model": "model.onnx", "outcome": _outcome()}, "does not exist"),  # relative: refused
        ({"kind": "loader"}, "unreadable finding metadata"),
    ],
)
def test_bad_folders_are_one_line_errors(tmp_path: Path, meta: dict[str, object] | None, needle: str) -> None:
    folder = _folder(tmp_path, meta) if meta is not None else tmp_path
    with pytest.raises(SeedzerError) as err:
        LoadFinding.load(folder)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_model_path_that_is_not_onnx_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "secret.txt"
    other.write_text("not a model")
    with pytest.raises(SeedzerError, match="does not exist"):
        LoadFinding.load(_folder(tmp_path, {"kind": "loader", "model": str(other), "outcome": _outcome()}))


def test_a_moved_model_of_an_older_finding_is_found_by_name_in_models(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"kind": "loader", "model": "/gone/pool/m7.onnx", "outcome": _outcome()})
    with pytest.raises(SeedzerError, match=r"/gone/pool/m7.onnx does not exist .*give --models DIR"):
        LoadFinding.load(folder)
    pool = tmp_path / "pool"
    pool.mkdir()
    with pytest.raises(SeedzerError, match=r"does not exist .*nor is it in .*pool"):
        LoadFinding.load(folder, pool)
    onnx.save(chain_model(), pool / "m7.onnx")
    found = LoadFinding.load(folder, pool)
    assert found.model == (pool / "m7.onnx").read_bytes() and found.model_name == "m7.onnx"


def test_the_case_of_an_older_finding_follows_its_outcome(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(chain_model(), model)

    def case_of(outcome: dict[str, object]) -> dict[str, object]:
        folder = tmp_path / f"f{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        (folder / "meta.json").write_text(json.dumps({"kind": "loader", "model": str(model), "outcome": outcome}))
        return base_case(LoadFinding.load(folder), 30)

    plain = case_of(_outcome())
    assert (plain["differential"], plain["timeout"], plain["specs"]) == (False, 30, [["x", "float32", [2, 3]]])
    assert case_of(_outcome(step="legalize"))["differential"] is False
    assert case_of(_outcome(step="build", target='{"kind": "llvm", "opt-level": 0}'))["target"] == {
        "kind": "llvm", "opt-level": 0}
    mm = case_of(_outcome("mismatch", "output 0: 1/4 elements differ", step="compare", input_seed=7))
    assert mm["differential"] and mm["input_seed"] == 7


def test_an_older_loader_finding_gets_the_repro_of_its_original_model(tmp_path: Path) -> None:
    from seedzer.finding.load.triage import write_original_repro

    model = tmp_path / "m.onnx"
    onnx.save(chain_model(), model)
    folder = _folder(tmp_path, {"kind": "loader", "model": str(model), "outcome": _outcome()})
    assert write_original_repro(folder)["nodes"] == 3
    script = (folder / "repro.py").read_text()
    compile(script, "repro.py", "exec")  # a complete Python program
    assert "import seedzer" not in script and "from seedzer" not in script
