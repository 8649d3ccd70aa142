"""Reading loader finding folders and choosing the predicate's loader options (no TVM)."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from seedzer.errors import SeedzerError
from seedzer.oracles.signature import signature
from seedzer.outcome import Outcome, Stage, Symptom
from seedzer.triage.loader_case import read_finding
from seedzer.triage.loader_predicate import load_options, same_finding
from tests.triage_models import chain_model


def _outcome(symptom: Symptom = Symptom.EXCEPTION, msg: str = "ValueError: axis 3 out of range", **detail: object
             ) -> Outcome:
    stage = Stage.COMPARE if symptom is Symptom.MISMATCH else Stage.LOAD
    return Outcome(symptom, stage, None, msg, {"step": "import", "attempt": "raw", **detail})


def _folder(tmp_path: Path, meta: dict[str, object], name: str = "meta.json") -> Path:
    folder = tmp_path / "findings" / "abc"
    folder.mkdir(parents=True)
    (folder / name).write_text(json.dumps(meta))
    return folder


def test_reads_a_campaign_loader_finding(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(chain_model(), model)
    o = _outcome()
    found = read_finding(_folder(tmp_path, {"kind": "loader", "model": str(model), "outcome": o.to_dict()}))
    assert found.model == model and found.outcome == o and found.signature == signature(o)


def test_reads_a_load_command_finding(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"outcome": _outcome().to_dict()}, "finding.json")
    onnx.save(chain_model(), folder / "model.onnx")
    assert read_finding(folder).model == folder / "model.onnx"


@pytest.mark.parametrize(
    ("meta", "needle"),
    [
        (None, "not a finding folder"),
        ({"kind": "lowlevel", "outcome": _outcome().to_dict()}, "not a loader finding"),
        ({"kind": "loader", "model": "/nonexistent.onnx", "outcome": _outcome().to_dict()}, "does not exist"),
        ({"kind": "loader"}, "unreadable finding metadata"),
    ],
)
def test_bad_folders_are_one_line_errors(tmp_path: Path, meta: dict[str, object] | None, needle: str) -> None:
    folder = _folder(tmp_path, meta) if meta is not None else tmp_path
    with pytest.raises(SeedzerError) as err:
        read_finding(folder)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_loader_options_follow_the_finding() -> None:
    plain = load_options(_outcome(), 30)
    assert (plain.differential, plain.fold, plain.timeout) == (False, False, 30)
    folded = load_options(_outcome(attempt="folded", step="legalize"), 30)
    assert (folded.differential, folded.fold) == (False, True)
    assert load_options(_outcome(step="build"), 30).differential
    mm = load_options(_outcome(Symptom.MISMATCH, "output 0: 1/4 elements differ", step="compare", input_seed=7), 30)
    assert mm.differential and mm.input_seed == 7


def test_same_finding_needs_signature_and_step() -> None:
    o = _outcome()
    assert same_finding(o, _outcome(msg="ValueError: axis 5 out of range"))  # numbers are normalized away
    assert not same_finding(o, _outcome(msg="ValueError: something else"))
    crash = _outcome(Symptom.CRASH, "killed by signal SIGSEGV")
    assert not same_finding(crash, _outcome(Symptom.CRASH, "killed by signal SIGSEGV", step="build"))


def test_materialize_writes_the_original_models_repro_for_a_loader_finding(tmp_path: Path) -> None:
    from seedzer.triage.materialize import main as materialize_main

    model = tmp_path / "m.onnx"
    onnx.save(chain_model(), model)
    folder = _folder(tmp_path, {"kind": "loader", "model": str(model), "outcome": _outcome().to_dict()})
    assert materialize_main([str(folder)]) == 0
    script = (folder / "repro.py").read_text()
    compile(script, "repro.py", "exec")  # a complete Python program
    assert "import seedzer" not in script and "from seedzer" not in script
