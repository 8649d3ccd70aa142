"""The loader gate's rules, each judged on its own through ``judge(context)``: the re-run alone is a
fake ``observe`` (the real one forks a child running the importer) and the finding's failure is
picked by a fake ``match``; then in order by the gate's rule engine. No TVM."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from seedzer.finding.gate import GateRules
from seedzer.finding.load import gate
from seedzer.finding.load.gate import RULES
from seedzer.finding.load.rules import Alone, Culprit, InvalidInput, LoadContext, invalid_reason
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.oracles.signature import component_key, root_key
from tests.frames import at_import, real_failure

CRASH = Observation(Symptom.CRASH, Stage.LOAD, "legalize", "killed by signal SIGSEGV", signal=11)
ERROR = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "TVMError: Check failed: shape mismatch")


def _same_step(expected: Observation, observed: Sequence[Observation]) -> Observation | None:
    """A stand-in for the kernel's same_load_failure: the same symptom at the same step."""
    return next((o for o in observed if o.symptom is expected.symptom and o.pass_name == expected.pass_name), None)


class Rerun:
    """The re-run alone: ``observed`` whatever the case (and what it was asked to run)."""

    def __init__(self, observed: list[Observation]) -> None:
        self.observed = observed
        self.runs: list[tuple[Any, float]] = []

    def __call__(self, case: Any, timeout: float) -> list[Observation]:
        self.runs.append((case, timeout))
        return self.observed


def _context(expected: Observation, observed: list[Observation], got: Observation | None = None) -> LoadContext:
    return LoadContext("0123456789ab", "CASE", expected, 3.0, observe=Rerun(observed), match=_same_step, got=got,
                       check_types=lambda case, operator: None, check_lowering=lambda case, output: None)


def test_the_module_docstring_lists_the_rules_in_order() -> None:
    listed = re.findall(r"^\s*\d+\. \*\*([\w-]+)\.\*\*", gate.__doc__ or "", re.MULTILINE)
    assert listed == [rule.name for rule in RULES] == ["alone", "invalid-input", "culprit"]


def test_alone_reruns_the_case_within_its_limit_and_keeps_the_finding_s_failure() -> None:
    context = _context(CRASH, [ERROR, CRASH])
    assert Alone().judge(context) is None
    assert context.got == CRASH and context.observed == [ERROR, CRASH]
    assert isinstance(context.observe, Rerun) and context.observe.runs == [("CASE", 3.0)]


def test_alone_dismisses_a_case_that_fails_otherwise_or_not_at_all() -> None:
    verdict = Alone().judge(_context(CRASH, [ERROR]))
    assert verdict is not None and verdict.verdict == NOT_A_BUG and verdict.observation == ERROR
    assert verdict.reason == f"not-reproduced: run alone it gives {ERROR.headline()}"
    verdict = Alone().judge(_context(CRASH, []))
    assert verdict is not None and verdict.reason == "not-reproduced: run alone it gives every step passes"
    assert verdict.observation == Observation.ok() and verdict.case is None and verdict.tests == 1


def test_alone_calls_an_invalid_rerun_invalid() -> None:
    killed = Observation(Symptom.INVALID, Stage.LOAD, "build",
                         "killed by signal SIGKILL (out of memory or an operator)")
    verdict = Alone().judge(_context(CRASH, [killed]))
    assert verdict is not None and verdict.verdict == NOT_A_BUG
    assert verdict.reason == "invalid: killed by signal SIGKILL (out of memory or an operator)"


def test_invalid_input_dismisses_failures_about_the_input() -> None:
    unsupported = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "OpNotImplemented: Gelu is not supported")
    verdict = InvalidInput().judge(_context(unsupported, [], got=unsupported))
    assert verdict is not None and verdict.verdict == NOT_A_BUG
    assert verdict.reason == "invalid: unsupported operator: OpNotImplemented: Gelu is not supported"
    reference = Observation(Symptom.EXCEPTION, Stage.LOAD, "reference", "onnxruntime cannot run it")
    assert invalid_reason(reference) == "reference: onnxruntime cannot run it"
    assert InvalidInput().judge(_context(ERROR, [], got=ERROR)) is None
    assert InvalidInput().judge(_context(CRASH, [], got=CRASH)) is None


def test_bug_names_the_step_and_keys_the_root_on_it() -> None:
    verdict = Culprit().judge(_context(CRASH, [], got=CRASH))
    assert (verdict.verdict, verdict.culprit, verdict.observation) == (BUG, ["legalize"], CRASH)
    assert verdict.root == root_key("loader", CRASH, ["legalize"]).digest()
    nameless = Observation(Symptom.HANG, Stage.LOAD, None, "ran over 3s alone")  # at the import: the importer's
    importer = Culprit().judge(_context(nameless, [], got=nameless))
    assert importer.culprit == ["relax.frontend.onnx"]
    assert importer.root == component_key(nameless, "relax.frontend.onnx").digest()


def test_the_engine_marks_the_answering_rule() -> None:
    assert GateRules(RULES).first_answer(_context(CRASH, [CRASH])).rule == "culprit"
    assert GateRules(RULES).first_answer(_context(CRASH, [ERROR])).rule == "alone"
    invalid = Observation(Symptom.EXCEPTION, Stage.LOAD, "parse", "not a model")
    verdict = GateRules(RULES).first_answer(_context(invalid, [invalid]))
    assert (verdict.rule, verdict.reason) == ("invalid-input", "invalid: parse: not a model")


def test_one_converter_failing_on_two_input_dtypes_is_one_root() -> None:
    """The audit's EyeLike: two roots before, because the message names the input's dtype."""
    float_input, int_input = at_import("eyelike_float32"), at_import("eyelike_int32")
    assert float_input.message != int_input.message
    verdicts = [Culprit().judge(_context(o, [], got=o)) for o in (float_input, int_input)]
    assert [v.culprit for v in verdicts] == [["relax.frontend.onnx.EyeLike._impl_v9"]] * 2
    assert verdicts[0].root == verdicts[1].root


def test_a_pool_models_output_that_legalization_retyped_is_the_legalizations() -> None:
    """ReduceMean of int32 in a pool model: declared int32 as ONNX has it, legalized to int64."""
    from seedzer.finding.lowered_types import Retyped
    from seedzer.kernel.comparison import Difference

    diff = Difference(0, "shape/dtype: expected (2,) int32, got (2,) int64", 1, 1, operator="ReduceMean", name="y")
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"output 0 'y': 1/1 differ ({diff.reason})",
                        comparison="model-vs-onnxruntime", difference=diff)
    context = _context(wrong, [wrong], got=wrong)
    context.check_lowering = lambda case, output: Retyped("relax.mean", "gv", "int32", "int64", str(output), "dtype")
    verdict = Culprit().judge(context)
    assert verdict.culprit == ["legalize.statistical"]
    assert verdict.at_fault is not None and verdict.at_fault.rule == "lowering-retyped"
    context = _context(wrong, [wrong], got=wrong)  # the converter typed it otherwise: the operator rule, as before
    assert Culprit().judge(context).culprit == ["relax.frontend.onnx.ReduceMean"]


def test_a_pool_model_tvm_refuses_where_the_specification_defines_no_result_is_invalid() -> None:
    refused = real_failure("affine_grid_size_one_legalize", stage=Stage.LOAD, pass_name="legalize")
    assert (invalid_reason(refused) or "").startswith("the specification defines no result here: AffineGrid")
