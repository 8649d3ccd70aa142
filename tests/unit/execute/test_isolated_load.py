"""How an isolated load attempt that died is recorded (:func:`seedzer.execute.isolated_load.died`): a
SIGKILL from outside is ``invalid`` and marks the attempt ``killed`` (the load says nothing about the
model: issue 55 row 5), any other death is the model's own observation."""

from __future__ import annotations

from pathlib import Path

from seedzer.execute.isolated_load import died
from seedzer.kernel.common import Symptom
from seedzer.load.loader import AttemptResult, ModelLoad


def test_a_sigkilled_attempt_is_killed_and_invalid_and_a_segfault_is_a_crash(tmp_path: Path) -> None:
    (tmp_path / "step").write_text("legalize")
    killed = died(Symptom.CRASH, "killed by signal SIGKILL", "raw", tmp_path)
    assert killed.killed and killed.died and killed.observations[0].symptom is Symptom.INVALID
    assert killed.observations[0].pass_name == "legalize"
    crashed = died(Symptom.CRASH, "killed by signal SIGSEGV", "raw", tmp_path)
    assert not crashed.killed and crashed.observations[0].symptom is Symptom.CRASH
    hung = died(Symptom.HANG, "no result after 60s", "raw", tmp_path)
    assert not hung.killed and hung.observations[0].symptom is Symptom.HANG


def test_a_load_is_killed_when_an_attempt_was_and_the_flag_survives_the_checkpoint() -> None:
    load = ModelLoad(model="m.onnx")
    load.merge(AttemptResult("raw"))
    assert not load.killed
    load.merge(AttemptResult.from_json(AttemptResult("folded", killed=True).to_json()))
    assert load.killed
    assert not AttemptResult.from_json({"attempt": "raw"}).killed  # a checkpoint from before the flag
