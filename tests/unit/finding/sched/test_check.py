"""The schedule gate's tester: a case runs in a forked child, its failure observed as the kernel sees
it; the unscheduled build the child made is kept for later children; a death is a crash with its
signal (drives TVM, on the schedule bug fixtures). Whether TVM prints its segfault report (the frames
the description appends) depends on the signal handlers the process inherited: not asserted here."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from seedzer.finding.sched.check import Tester
from seedzer.kernel.common import Symptom
from seedzer.kernel.messages import ir_names, same_failure
from seedzer.kernel.sched.case import SchedCase

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sched"


def _case(name: str) -> SchedCase:
    return SchedCase.from_json(json.loads((FIXTURES / name).read_text())["case"])


def test_a_wrong_result_is_observed_as_the_kernel_sees_it_and_the_reference_build_is_kept() -> None:
    case = _case("bug_pad_einsum_max_reduction.json")
    assert case.expected is not None and case.expected.symptom is Symptom.MISMATCH
    tester = Tester()
    observed = tester.observe(case, 300)
    assert same_failure(case.expected, observed, ir_names(case.script)), observed.headline()
    assert tester.tests == 1 and tester.builder.memo.references  # the unscheduled build, for the next child


def test_a_death_in_the_child_is_a_crash_with_its_signal() -> None:
    case = _case("bug_reindex_loopless_block.json")
    observed = Tester().observe(case, 300)
    assert observed.symptom is Symptom.CRASH and observed.signal == signal.SIGSEGV
    assert observed.message.startswith("killed by signal SIGSEGV"), observed.message
