"""The script kinds' shared tester: an unparsable script is invalid without a child, a child's answer is
returned and what it learned kept for the next child, a death is a crash described with what the kind
read of it, a timeout a hang described by the kind. Driven by a cheap kind whose "kernel" is a few
lines of Python run in real forked children (the tir and sched testers drive TVM in the integration
tests)."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from seedzer.execute.forked import Forked, call_forked
from seedzer.finding.script_tester import ScriptTester
from seedzer.kernel.common import Observation, Stage, Symptom


@dataclass(frozen=True)
class TextCase:
    script: str


class TextBuilder:
    """Parses a script unless it says ``unparsable``; knows what earlier children learned."""

    def __init__(self) -> None:
        self.known: dict[str, int] = {}

    def parse(self, script: str) -> str:
        if "unparsable" in script:
            raise SyntaxError(f"cannot parse {script!r}")
        return script


def _child(case: TextCase, known: dict[str, int]) -> tuple[Observation, dict[str, int]]:
    if case.script == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if case.script == "sleep":
        time.sleep(60)
    return Observation(Symptom.OK, Stage.RUN, None, f"ran {case.script} knowing {sorted(known)}"), {case.script: 1}


class TextTester(ScriptTester[TextCase]):
    def __init__(self) -> None:
        super().__init__(TextBuilder())

    def run(self, case: TextCase, timeout: float) -> tuple[Forked, str]:
        res = call_forked(_child, case, self.builder.known, timeout=timeout, progress=self.progress)
        return res, " [report read]" if res.signal is not None else ""

    def learn(self, learned: dict[str, int]) -> None:
        self.builder.known.update(learned)

    def slow(self, stage: Stage | None, timeout: float) -> str:
        return super().slow(stage, timeout) + " (text is slow)"


def test_an_unparsable_script_is_an_invalid_case_without_a_child() -> None:
    tester = TextTester()
    observed = tester.observe(TextCase("unparsable"), 5)
    assert observed.symptom is Symptom.INVALID and observed.message.startswith("unusable test case: ")
    assert tester.tests == 1


def test_a_childs_answer_is_returned_and_what_it_learned_is_handed_to_the_next() -> None:
    tester = TextTester()
    first = tester.observe(TextCase("a"), 30)
    second = tester.observe(TextCase("b"), 30)
    assert (first.symptom, first.message) == (Symptom.OK, "ran a knowing []")
    assert second.message == "ran b knowing ['a']"
    assert tester.builder.known == {"a": 1, "b": 1} and tester.tests == 2


def test_a_death_is_a_crash_described_with_what_the_kind_read_of_it() -> None:
    observed = TextTester().observe(TextCase("segfault"), 30)
    assert observed.symptom is Symptom.CRASH and observed.signal == signal.SIGSEGV
    assert observed.message.endswith(" [report read]")


def test_a_timeout_is_a_hang_described_by_the_kind() -> None:
    observed = TextTester().observe(TextCase("sleep"), 1)
    assert observed.symptom is Symptom.HANG
    assert observed.message == "start stage ran over 1s alone (text is slow)"
