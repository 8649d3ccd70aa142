"""The kernel's shared parts: steps, step labels, cases and observations."""

import json

from seedzer.kernel.common import REFERENCE_VS_MINIMAL, Observation, Slowdown, Stage, Symptom
from seedzer.kernel.comparison import Difference
from seedzer.kernel.tir.case import FUZZED, PIPELINE, Case, Checks, Step, minimal_steps, reference_steps


def test_program_step_lists() -> None:
    steps = [Step("a"), Step("b", optional=True), Step("v", {"on": True}, optional=True, minimal={"on": False}),
             Step("f", role=FUZZED, optional=True)]
    assert [s.name for s in reference_steps(steps)] == ["a", "b", "v"]
    minimal = minimal_steps(steps)
    assert [s.name for s in minimal] == ["a", "v"] and minimal[1].args == {"on": False}
    assert all(s.role == PIPELINE for s in minimal)


def test_case_and_observation_round_trip_through_json() -> None:
    obs = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "m", comparison=REFERENCE_VS_MINIMAL,
                      difference=Difference(0, "values", 1, 4, 0.5, (1,), 1.0, 2.0),
                      slowdown=Slowdown(3.0, (3.0, 3.5), 0.3, 0.1, 2.0, 2))
    case = Case("script", (Step("tirx.X", {"k": 1}, {"c": {"d": 2}}, FUZZED, True),), 7, checks=Checks(perf=True),
                expected=obs)
    again = Case.from_json(json.loads(json.dumps(case.to_json())))
    assert again == case
    assert Observation.from_json({"symptom": "exception", "stage": "pass", "pass_name": "old", "message": "x"}) \
        .pass_name == "old"


def test_a_step_label_splits_back_into_program_and_step() -> None:
    from seedzer.kernel.common import MINIMAL, OPT, REFERENCE, label_parts, step_label

    assert label_parts("<reference>:codegen") == (REFERENCE, "codegen")
    assert label_parts("<minimal>:run") == (MINIMAL, "run")
    assert label_parts("codegen") == (OPT, "codegen") and label_parts("tirx.UnrollLoop") == (OPT, "tirx.UnrollLoop")
    for program in (OPT, REFERENCE, MINIMAL):
        assert label_parts(step_label("tirx.VectorizeLoop", program)) == (program, "tirx.VectorizeLoop")
