"""The prediction a candidate is filed with: keyed as the gate will key it."""

from __future__ import annotations

from seedzer.finding.known import GUESS, PREDICTED, predict
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.oracles.signature import component_key, root_key
from tests.frames import real_failure


def test_a_failure_in_a_shared_component_is_predicted_under_that_component() -> None:
    legalize = real_failure("rms_norm_legalize_ops")
    made = predict("graph", legalize, (), [])
    assert made == {PREDICTED: component_key(legalize, "topi.nn.rms_norm").digest(), GUESS: ["topi.nn.rms_norm"]}
    assert predict("graph", real_failure("rms_norm_fold_constant"), (), [])[PREDICTED] == made[PREDICTED]


def test_a_pass_of_its_own_is_predicted_under_the_failing_step() -> None:
    own = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.ConvertLayout", "InternalError: Invalid SLayout")
    assert predict("graph", own, (), []) == {PREDICTED: root_key("graph", own, ["relax.ConvertLayout"]).digest(),
                                             GUESS: ["relax.ConvertLayout"]}
