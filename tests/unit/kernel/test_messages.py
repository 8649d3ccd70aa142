"""The kernel's failure identity: an error's key line and whether an observation is the expected failure."""

import pytest

from seedzer.kernel.common import REFERENCE_VS_MINIMAL, Observation, Stage, Symptom
from seedzer.kernel.messages import key_line, same_failure


def test_key_line_picks_the_failed_check_without_the_error_type() -> None:
    msg = "Traceback (most recent call last):\n  File \"x\", line 1\nInternalError: Check failed: (a) is false: b"
    assert key_line(msg) == "Check failed: (a) is false: b"
    assert key_line("TVMError: LLVM module verification failed") == "LLVM module verification failed"


@pytest.mark.parametrize(("expected", "observed", "same"), [
    (Observation(Symptom.EXCEPTION, Stage.PASS, "p", "Check failed: x_1"),
     Observation(Symptom.EXCEPTION, Stage.PASS, "p", "InternalError: Check failed: x_2"), True),
    (Observation(Symptom.EXCEPTION, Stage.PASS, "p", "Check failed: x"),
     Observation(Symptom.EXCEPTION, Stage.PASS, "q", "Check failed: x"), False),
    (Observation(Symptom.MISMATCH, comparison=REFERENCE_VS_MINIMAL),
     Observation(Symptom.MISMATCH, comparison="opt-vs-reference"), False),
    (Observation(Symptom.MISMATCH), Observation(Symptom.MISMATCH, comparison="opt-vs-reference"), True),
    (Observation(Symptom.PERF), Observation(Symptom.OK), False),
])
def test_same_failure(expected: Observation, observed: Observation, same: bool) -> None:
    assert same_failure(expected, observed) is same


def test_a_tensor_layout_glued_to_its_word_is_not_the_identity() -> None:
    """ConvertLayout's check names the source layout, whose length is the tensor's rank: one bug."""
    from seedzer.kernel.messages import normalize

    two = "InternalError: Check failed: (res != std::string::npos) is false: can't find S in source layoutAB"
    four = two.replace("layoutAB", "layoutABCD")
    assert normalize(two) == normalize(four) and "layoutL" in normalize(two)


def test_the_same_error_at_another_step_is_the_bug_moved_not_a_different_one() -> None:
    """A repro once exited 2 on a present bug: the same check now failed one pass away from where the
    case expected it. The identity of an error is its check, wherever it shows."""
    from seedzer.kernel.common import Observation, Stage, Symptom
    from seedzer.kernel.messages import moved_failure

    check = "InternalError: Check failed: (lanes == 1) is false: vector let x_12"
    expected = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.InjectVirtualThread", check)
    moved = Observation(Symptom.EXCEPTION, Stage.BUILD, "codegen", check.replace("x_12", "x_3"))
    assert not same_failure(expected, moved) and moved_failure(expected, moved)
    other = Observation(Symptom.EXCEPTION, Stage.BUILD, "codegen", "InternalError: Check failed: (a) is false")
    assert not moved_failure(expected, other)
    assert not moved_failure(expected, Observation(Symptom.CRASH, Stage.BUILD, "codegen", check))
    mismatch = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "values")
    assert not moved_failure(mismatch, mismatch)  # a mismatch has no step to move from: same_failure judges it


def test_ir_names_finds_a_typed_let() -> None:
    from seedzer.kernel.messages import ir_names

    script = ("def main(A: T.Buffer((4,), 'float32')):\n    x: T.let[T.int64] = T.int64(3)\n"
              "    A[0] = T.Cast('float32', x)\n")
    assert {"A", "x"} <= ir_names(script)


def test_a_message_word_an_ir_may_name_a_buffer_is_one_identity_whatever_the_names() -> None:
    """d53: RemoveNoOp's 'A SeqStmt of length 1 is prohibited' was two roots, one IR having a buffer ``A``."""
    from seedzer.kernel.messages import normalize

    message = "InternalError: Check failed: seq.size() != 1 (1 vs. 1) : A SeqStmt of length 1 is prohibited."
    assert normalize(message, {"A", "B"}) == normalize(message, {"compute", "k0"}) == normalize(message)
    assert normalize("buffer A is undefined", {"A"}) == normalize("buffer B is undefined", {"B"})
