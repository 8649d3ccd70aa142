"""Unit tests of loader outcome signatures and message normalization."""

from __future__ import annotations

from seedzer.load.signature import normalize_message, signature
from seedzer.outcome import Outcome, Stage, Symptom


def _outcome(message: str, symptom: Symptom = Symptom.EXCEPTION, substage: str = "import") -> Outcome:
    return Outcome(symptom, Stage.LOAD, None, message, {"substage": substage})


def test_numbers_paths_addresses_quotes_and_numbered_names_are_normalized() -> None:
    text = (
        "Error at /project/src/relax/ir/block_builder.cc:67 in m00012.onnx: 0x7ffe12ab "
        "param=v2_0 lv10 'x_1' \"foo\" has 12/300 bad, max 1.5e-02"
    )
    assert normalize_message(text) == (
        "Error at <path> in <file>: <addr> param=v<n> lv<n> '<v>' '<v>' has <n>/<n> bad, max <n>"
    )


def test_dtype_names_keep_their_width() -> None:
    assert normalize_message("expected float32 got int64") == "expected float32 got int64"


def test_same_error_in_different_models_has_one_signature() -> None:
    a = _outcome("InternalError: Reshape of lv10 at (1, 3) in /tmp/a/m1.onnx failed")
    b = _outcome("InternalError: Reshape of lv29 at (7, 2) in /data/pool/m77.onnx failed")
    assert signature(a) == signature(b)
    assert len(signature(a)) == 12


def test_symptom_substage_and_text_separate_signatures() -> None:
    base = _outcome("boom")
    assert signature(base) != signature(_outcome("boom", Symptom.CRASH))
    assert signature(base) != signature(_outcome("boom", substage="legalize"))
    assert signature(base) != signature(_outcome("bang"))


def test_signature_is_a_fixed_hash_of_symptom_substage_and_normalized_text() -> None:
    # Signatures are persisted in reports and finding folders, so their definition must not drift.
    outcome = Outcome(Symptom.CRASH, Stage.LOAD, None, "killed by signal SIGSEGV", {"substage": "import"})
    assert signature(outcome) == "317913cead63"
