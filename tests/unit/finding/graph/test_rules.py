"""The graph gate's rules, each judged on its own through ``judge(context)``: every TVM run is a fake
``observe`` (the real one forks a child running the graph kernel), the finding's failure is picked
by a fake ``match`` and the Relax contracts by an injected checker; then in order by the engine. No TVM."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from seedzer.finding.gate import GateRules, GateSettings
from seedzer.finding.graph import gate
from seedzer.finding.graph.at_fault import mutation_label
from seedzer.finding.graph.gate import RULES
from seedzer.finding.graph.layout_rule import LayoutCulprit
from seedzer.finding.graph.rules import (
    Alone,
    Contract,
    Culprit,
    GraphContext,
    InvalidInput,
    Parent,
    failing_pass,
    invalid_reason,
)
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.verdict import Verdict
from seedzer.kernel.common import SPECIAL_VALUES, Observation, Stage, Symptom
from seedzer.kernel.comparison import Difference
from seedzer.kernel.graph.case import GraphCase, GraphPass, ModelMutation
from seedzer.oracles.signature import component_key, root_key
from seedzer.seed import PassSpec
from tests.frames import at_import, real_failure

FOLD, NORM = GraphPass("relax.FoldConstant"), GraphPass("relax.Normalize")
LAYOUT = GraphPass("relax.ConvertLayout", {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "default"]}})
DCE = GraphPass("relax.DeadCodeElimination")
LAYOUT_ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.ConvertLayout",
                           "InternalError: Check failed: Invalid SLayout:can't find S in source layoutAB", step_index=2)
BUILD_ERROR = Observation(Symptom.EXCEPTION, Stage.BUILD, "build", "TVMError: unknown intrinsic tirx.atan")
CASE = GraphCase((("x", "float32", (2, 3)),), (FOLD, NORM, LAYOUT, DCE), model="AAAA")


def _same(expected: Observation, observed: Observation) -> bool:
    """A stand-in for the kernel's same_graph_failure: the same symptom, step and message."""
    return (expected.symptom, expected.pass_name, expected.message) == (
        observed.symptom, observed.pass_name, observed.message)


class Runs:
    """The runs alone: ``decide(passes)`` says what a case with those passes shows; every case is kept."""

    def __init__(self, decide: Callable[[tuple[GraphPass, ...]], Observation]) -> None:
        self.decide = decide
        self.cases: list[GraphCase] = []

    def __call__(self, case: GraphCase, timeout: float) -> Observation:
        self.cases.append(case)
        return self.decide(case.passes)


def _layout_fails(passes: tuple[GraphPass, ...]) -> Observation:
    return LAYOUT_ERROR if LAYOUT in passes else Observation.ok()


def _context(expected: Observation, decide: Callable[[tuple[GraphPass, ...]], Observation],
             got: Observation | None = None, broken: Sequence[tuple[int, str]] = (),
             case: GraphCase = CASE) -> GraphContext:
    def contracts(passes: Sequence[PassSpec]) -> list[tuple[int, str]]:
        return [(i, why) for i, why in broken if i < len(passes)]

    return GraphContext("0123456789ab", case, expected, 5.0, GateSettings(max_tests=40, max_seconds=60.0),
                        observe=Runs(decide), match=_same, contracts=contracts, got=got,
                        check_types=lambda case, operator: None, locate_layout=lambda case, observed, timeout: None,
                        check_lowering=lambda case, output: None, locate_build=lambda case, observed: None,
                        check_mirror=lambda case, operator: None)


def test_the_module_docstring_lists_the_rules_in_order() -> None:
    listed = re.findall(r"^\s*\d+\. \*\*([\w-]+)\.\*\*", gate.__doc__ or "", re.MULTILINE)
    assert listed == [rule.name for rule in RULES] == ["alone", "invalid-input", "contract", "parent", "culprit"]


def test_alone_keeps_the_failure_the_case_shows_again() -> None:
    context = _context(LAYOUT_ERROR, _layout_fails)
    assert Alone().judge(context) is None
    assert context.got == LAYOUT_ERROR and context.tests == 1
    assert isinstance(context.observe, Runs) and context.observe.cases == [CASE]


def test_alone_dismisses_a_case_that_fails_otherwise_or_not_at_all() -> None:
    verdict = Alone().judge(_context(LAYOUT_ERROR, lambda p: Observation.ok()))
    assert verdict is not None and verdict.verdict == NOT_A_BUG and verdict.case is None
    assert verdict.reason.startswith("not-reproduced: run alone it gives ok")
    killed = Observation(Symptom.INVALID, Stage.BUILD, "build", "killed by signal SIGKILL (not a TVM bug)")
    verdict = Alone().judge(_context(LAYOUT_ERROR, lambda p: killed))
    assert verdict is not None and verdict.reason == "invalid: killed by signal SIGKILL (not a TVM bug)"


def test_invalid_input_dismisses_failures_about_the_input() -> None:
    unsupported = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "OpNotImplemented: Gelu is not supported")
    verdict = InvalidInput().judge(_context(unsupported, _layout_fails, got=unsupported))
    assert verdict is not None and verdict.verdict == NOT_A_BUG
    assert verdict.reason == "invalid: unsupported operator: OpNotImplemented: Gelu is not supported"
    checker = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "ValidationError: bad node")
    assert invalid_reason(checker) == "invalid model: ValidationError: bad node"
    precondition = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.X", "RewriteSimplifier exceeded maximum number")
    assert (invalid_reason(precondition) or "").startswith("precondition: ")
    assert InvalidInput().judge(_context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR)) is None
    assert InvalidInput().judge(_context(BUILD_ERROR, _layout_fails, got=BUILD_ERROR)) is None


def test_what_the_importer_says_it_does_not_support_and_engine_failures_are_about_the_input() -> None:
    limit = Observation(Symptom.EXCEPTION, Stage.LOAD, "import",
                        "AssertionError: SkipLayerNormalization import currently only supports required beta and bias")
    assert (invalid_reason(limit) or "").startswith("unsupported by TVM's importer: AssertionError")
    for step in ("reference", "onnx-reference", "validate"):  # an engine crashing there is not TVM's
        crash = Observation(Symptom.CRASH, Stage.COMPARE, step, "killed by signal SIGSEGV", signal=11)
        assert (invalid_reason(crash) or "").startswith(f"{step}: killed by signal")
    genuine = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "TypeError: object of type 'Call' has no len()")
    assert invalid_reason(genuine) is None


def test_tvm_refusing_a_setting_the_specification_does_not_define_is_not_a_bug() -> None:
    """AffineGrid with align_corners=1 over a spatial size of 1 (the audited campaign's a07590376e1d): TOPI asserts;
    onnx.reference, onnxruntime and PyTorch give three grids. The same assertion of another kind is not one."""
    refused = real_failure("affine_grid_size_one_legalize")
    verdict = InvalidInput().judge(_context(refused, lambda p: refused, got=refused))
    assert verdict is not None and verdict.verdict == NOT_A_BUG
    assert verdict.reason.startswith("invalid: the specification defines no result here: AffineGrid (align_corners=1")
    assert invalid_reason(dataclasses.replace(refused, symptom=Symptom.CRASH)) is None


def test_a_mutation_names_its_operator_among_the_ways_a_root_was_reached() -> None:
    assert mutation_label(ModelMutation("insert", "t", params={"op": "TopK", "nodes": []})) == "insert:TopK"
    assert mutation_label(ModelMutation("edge", "t", params={"op": "Resize"})) == "edge:Resize"
    assert mutation_label(ModelMutation("uoc", "t", ("a", "b"), ("Conv", "Add"))) == "uoc:Conv+Add"


def test_contract_dismisses_a_pass_out_of_its_contract_and_names_it() -> None:
    verdict = Contract().judge(_context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR, broken=[(1, "why not")]))
    assert verdict is not None and verdict.verdict == NOT_A_BUG
    assert verdict.reason == "contract: relax.Normalize (pass 2 of the sequence) is out of its contract: why not"
    assert Contract().judge(_context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR)) is None


def test_contract_judges_only_the_passes_that_ran() -> None:
    after = [(3, "DeadCodeElimination never ran")]
    assert Contract().judge(_context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR, broken=after)) is None
    verdict = Contract().judge(_context(BUILD_ERROR, _layout_fails, got=BUILD_ERROR, broken=after))
    assert verdict is not None and "relax.DeadCodeElimination" in verdict.reason


def test_the_real_contract_checker_is_asked_by_default() -> None:
    context = GraphContext("0123456789ab", CASE.with_passes((GraphPass("relax.FuseTIR"),)), BUILD_ERROR, 5.0,
                           got=BUILD_ERROR)
    verdict = Contract().judge(context)
    assert verdict is not None and verdict.reason.startswith("contract: relax.FuseTIR (pass 1 of the sequence)")


def test_parent_dismisses_a_failure_of_the_default_pipeline_alone() -> None:
    context = _context(BUILD_ERROR, lambda p: BUILD_ERROR, got=BUILD_ERROR)
    verdict = Parent().judge(context)
    assert verdict is not None and verdict.verdict == NOT_A_BUG and verdict.reason.startswith("invalid: TVM's default")
    assert isinstance(context.observe, Runs) and context.observe.cases[-1].passes == ()


def test_parent_passes_when_the_default_pipeline_alone_does_not_fail_so() -> None:
    context = _context(BUILD_ERROR, lambda p: BUILD_ERROR if p else Observation.ok(), got=BUILD_ERROR)
    assert Parent().judge(context) is None and context.parent == Observation.ok()
    assert context.notes and context.notes[0].startswith("the seed model alone (no model mutation, no Relax step")


def test_parent_of_a_special_case_runs_the_load_kinds_random_inputs() -> None:
    special = GraphCase(CASE.specs, (FOLD,), model="AAAA", input_mode="special", input_seed=9)
    context = _context(BUILD_ERROR, lambda p: BUILD_ERROR if p else Observation.ok(), got=BUILD_ERROR, case=special)
    assert Parent().judge(context) is None
    assert isinstance(context.observe, Runs) and context.observe.cases[-1].input_mode == "random"


def test_a_special_case_without_passes_or_mutations_is_keyed_by_where_it_failed_not_its_input_mode() -> None:
    crash = Observation(Symptom.CRASH, Stage.RUN, "run", "killed by signal SIGSEGV", signal=11)
    special = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9)
    verdict = Culprit().judge(_context(crash, lambda p: crash, got=crash, case=special))
    assert verdict.verdict == BUG and verdict.culprit == ["run"]
    assert verdict.at_fault is not None and verdict.at_fault.reached == ("inputs:special",)


def test_a_special_values_mismatch_is_rooted_at_the_operator_whose_output_differed() -> None:
    def mismatch(operator: str) -> Observation:
        diff = Difference(0, "nan positions", 1, 6, operator=operator)
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: nan lost", comparison=SPECIAL_VALUES,
                           difference=diff)

    special = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9)
    relu, sign = (Culprit().judge(_context(m, lambda p, m=m: m, got=m, case=special))
                  for m in (mismatch("Relu"), mismatch("Sign")))
    assert relu.culprit == ["codegen.llvm.max_min"] and sign.culprit == ["relax.frontend.onnx.Sign"]
    assert relu.root != sign.root  # two NaN bugs, two roots
    assert relu.at_fault is not None and relu.at_fault.rule == "operator" and relu.at_fault.shared
    assert "inputs:special" in relu.at_fault.reached


def test_the_nan_that_max_and_min_lose_is_one_root_whichever_operator_reached_it() -> None:
    def mismatch(operator: str) -> Observation:
        diff = Difference(0, "nan positions", 1, 6, operator=operator)
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"output {len(operator)}: nan lost",
                           comparison=SPECIAL_VALUES, difference=diff)

    special = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9)
    edged = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9,
                      model_mutations=(ModelMutation("edge", "t", params={"op": "Clip"}),))
    roots = {Culprit().judge(_context(m, lambda p, m=m: m, got=m, case=c)).root
             for m, c in ((mismatch("Relu"), special), (mismatch("Clip"), edged), (mismatch("Max"), special),
                          (mismatch("ReduceMax"), special), (mismatch("ReduceMin"), edged))}
    assert len(roots) == 1


def test_a_lost_nan_and_a_lost_infinity_of_one_operator_are_two_roots() -> None:
    def mismatch(reason: str) -> Observation:
        diff = Difference(0, reason, 1, 6, operator="ReduceMin")
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"output 0: {reason}", comparison=SPECIAL_VALUES,
                           difference=diff)

    special = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9)
    nan, inf, values = (Culprit().judge(_context(m, lambda p, m=m: m, got=m, case=special))
                        for m in (mismatch("nan positions"), mismatch("inf positions"), mismatch("values")))
    assert nan.culprit == ["codegen.llvm.max_min"] and inf.culprit == ["tirx.op.min_max_reduction_identity"]
    assert values.culprit == ["relax.frontend.onnx.ReduceMin"] and len({nan.root, inf.root, values.root}) == 3


def test_parent_does_not_run_for_a_failure_in_a_pass() -> None:
    context = _context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR)
    assert Parent().judge(context) is None and context.tests == 0


def test_culprit_minimizes_the_sequence_and_names_the_failing_pass() -> None:
    context = _context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR)
    verdict = Culprit().judge(context)
    assert (verdict.verdict, verdict.culprit) == (BUG, ["relax.ConvertLayout"])
    assert verdict.root == root_key("graph", LAYOUT_ERROR, ["relax.ConvertLayout"]).digest()
    assert verdict.case is not None and verdict.case.passes == (LAYOUT,)
    assert verdict.case.model is None and verdict.case.model_file == "seed.onnx"
    assert verdict.case.expected == LAYOUT_ERROR
    assert "minimal sequence: relax.ConvertLayout[" in verdict.notes[-1]


def test_culprit_of_a_convert_layout_failure_is_the_layout_rule_it_failed_in() -> None:
    asked: list[tuple[tuple[GraphPass, ...], Observation]] = []

    def locate(case: GraphCase, observed: Observation, timeout: float) -> LayoutCulprit:
        asked.append((case.passes, observed))
        return LayoutCulprit("relax.stack", "relax.ConvertLayout fails first at main's binding 3 of 4")

    def judged(error: Observation) -> Verdict:
        context = _context(error, lambda passes: error if LAYOUT in passes else Observation.ok(), got=error)
        context.locate_layout = locate
        return Culprit().judge(context)

    verdict = judged(LAYOUT_ERROR)
    assert verdict.culprit == ["relax.stack.FRelaxInferLayout"] and asked == [((LAYOUT,), LAYOUT_ERROR)]
    assert verdict.at_fault is not None and verdict.at_fault.rule == "layout-rule" and verdict.at_fault.shared
    assert "relax.ConvertLayout" in verdict.at_fault.reached
    other = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.ConvertLayout", "Check failed: axis in range: 7 vs 6")
    assert judged(other).root == verdict.root  # one rule, one root, whatever message it fails with
    assert verdict.root == component_key(LAYOUT_ERROR, "relax.stack.FRelaxInferLayout", keyed_on="layout rule").digest()


def test_culprit_of_a_convert_layout_failure_no_rule_is_located_in_stays_the_pass() -> None:
    context = _context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR)
    assert Culprit().judge(context).culprit == ["relax.ConvertLayout"]


def test_culprit_of_a_build_failure_is_the_last_pass_of_the_minimal_sequence() -> None:
    def needs_fold_and_dce(passes: tuple[GraphPass, ...]) -> Observation:
        return BUILD_ERROR if FOLD in passes and DCE in passes else Observation.ok()

    verdict = Culprit().judge(_context(BUILD_ERROR, needs_fold_and_dce, got=BUILD_ERROR))
    assert verdict.culprit == ["relax.DeadCodeElimination"]
    assert verdict.case is not None and verdict.case.passes == (FOLD, DCE)


def test_one_bug_through_two_sequences_is_one_root() -> None:
    other = CASE.with_passes((DCE, LAYOUT))
    first = Culprit().judge(_context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR))
    second = Culprit().judge(_context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR, case=other))
    assert first.root == second.root


def test_culprit_stops_at_its_test_budget() -> None:
    context = _context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR)
    context.settings = GateSettings(max_tests=1, max_seconds=60.0)
    verdict = Culprit().judge(context)
    assert verdict.verdict == BUG and context.tests == 1
    assert any("may not be minimal" in note for note in verdict.notes)


def test_failing_pass_strips_the_well_formed_check() -> None:
    bad = Observation(Symptom.ILLFORMED, Stage.PASS, "relax.FuseOps:well-formed", "not well formed")
    assert failing_pass(bad) == "relax.FuseOps"
    assert failing_pass(BUILD_ERROR) is None


def test_the_engine_marks_the_answering_rule() -> None:
    assert GateRules(RULES).first_answer(_context(LAYOUT_ERROR, _layout_fails)).rule == "culprit"
    assert GateRules(RULES).first_answer(_context(LAYOUT_ERROR, lambda p: Observation.ok())).rule == "alone"
    verdict = GateRules(RULES).first_answer(_context(LAYOUT_ERROR, _layout_fails, broken=[(0, "no")]))
    assert verdict.rule == "contract"
    assert GateRules(RULES).first_answer(_context(BUILD_ERROR, lambda p: BUILD_ERROR)).rule == "parent"


def test_culprit_keeps_the_minimal_sequence_in_contract() -> None:
    """A campaign's gate filed FuseOps without the AnnotateTIROpPattern its contract needs (dropping it
    still failed the same way): the repro was no sequence a user may run. Subsets out of contract are
    never tried."""

    def contracts(passes: Sequence[PassSpec]) -> list[tuple[int, str]]:  # LAYOUT needs FOLD before it
        names = [p.name for p in passes]
        if LAYOUT.name in names and FOLD.name not in names[: names.index(LAYOUT.name)]:
            return [(names.index(LAYOUT.name), "needs relax.FoldConstant before it")]
        return []

    context = _context(LAYOUT_ERROR, _layout_fails, got=LAYOUT_ERROR)
    context.contracts = contracts
    verdict = Culprit().judge(context)
    assert verdict.case is not None and [p.name for p in verdict.case.passes] == [FOLD.name, LAYOUT.name]
    runs = context.observe
    assert isinstance(runs, Runs) and all(not contracts([PassSpec(p.name) for p in c.passes]) for c in runs.cases)


# --- issue 45 row 3: Seedzer's own rewrite is never filed as a TVM bug --------------------------------
DUPLICATE = GraphPass("mutate.DuplicateFunction", {"mode": "outline", "index": 2, "length": 3})
IF_IN_DATAFLOW = Observation(Symptom.ILLFORMED, Stage.PASS, "mutate.DuplicateFunction",
                             "ValueError: If nodes are not allowed to appear in dataflow blocks.", step_index=1)


def test_a_failure_in_or_right_after_a_relax_ir_mutation_is_invalid() -> None:
    """Before: an If in a dataflow block after mutate.DuplicateFunction (a model with nested Ifs) was
    filed with that mutation as its only culprit. After: invalid-input dismisses it, whatever its symptom."""
    case = CASE.with_passes((FOLD, DUPLICATE, DCE))
    for observed in (IF_IN_DATAFLOW, Observation(Symptom.CRASH, Stage.PASS, "mutate.DuplicateFunction", "SIGSEGV"),
                     Observation(Symptom.ILLFORMED, Stage.PASS, "mutate.SplitDataflow:well-formed", "bad")):
        verdict = InvalidInput().judge(_context(observed, lambda p, seen=observed: seen, got=observed, case=case))
        assert verdict is not None and verdict.verdict == NOT_A_BUG
        assert verdict.reason.startswith(f"invalid: Seedzer's own rewrite: {observed.symptom.value} in mutate."), \
            verdict.reason
    assert GateRules(RULES).first_answer(_context(IF_IN_DATAFLOW, lambda p: IF_IN_DATAFLOW, case=case)).rule == \
        "invalid-input"


def test_a_failure_whose_minimal_sequence_is_only_relax_ir_mutations_is_invalid() -> None:
    """A build failure that needs mutate.DuplicateFunction and no Relax pass: the module TVM failed on
    is Seedzer's rewrite alone, so the case is Seedzer's (culprit), not TVM's."""
    def needs_duplicate(passes: tuple[GraphPass, ...]) -> Observation:
        return BUILD_ERROR if DUPLICATE in passes else Observation.ok()

    case = CASE.with_passes((FOLD, DUPLICATE, DCE))
    verdict = Culprit().judge(_context(BUILD_ERROR, needs_duplicate, got=BUILD_ERROR, case=case))
    assert verdict.verdict == NOT_A_BUG and verdict.case is None
    assert verdict.reason.startswith("invalid: Seedzer's own rewrite is the only culprit (the minimal sequence "
                                     "mutate.DuplicateFunction"), verdict.reason


def test_a_relax_pass_the_failure_needs_beside_a_mutation_is_the_culprit() -> None:
    """A failure that needs a Relax pass too is TVM's to answer for: the pass is the culprit, never the
    mutation after it."""
    def needs_both(passes: tuple[GraphPass, ...]) -> Observation:
        return BUILD_ERROR if DUPLICATE in passes and FOLD in passes else Observation.ok()

    case = CASE.with_passes((FOLD, DUPLICATE, DCE))
    verdict = Culprit().judge(_context(BUILD_ERROR, needs_both, got=BUILD_ERROR, case=case))
    assert (verdict.verdict, verdict.culprit) == (BUG, ["relax.FoldConstant"])
    assert verdict.case is not None and verdict.case.passes == (FOLD, DUPLICATE)


def test_one_converter_reached_through_two_mutations_is_one_root() -> None:
    """The audit's SequenceAt negative position: two roots before (one per mutation label). The real errors
    differ in the position, the split's operand name and the importer's path; both are raised in
    SequenceAt._impl_v11, which keys the root; the mutations are only ways there."""
    inserted = GraphCase(CASE.specs, (), model="AAAA", model_mutations=(
        ModelMutation("insert", "t", params={"op": "SequenceAt", "nodes": []}),))
    edged = GraphCase(CASE.specs, (FOLD,), model="AAAA", model_mutations=(
        ModelMutation("edge", "u", params={"op": "SplitToSequence"}), ModelMutation("pioc", "v", garbage=("MatMul",))))
    verdicts = []
    for name, case in (("sequence_at_negative_a", inserted), ("sequence_at_negative_b", edged)):
        observed = at_import(name)
        context = _context(observed, lambda p, observed=observed: observed, got=observed, case=case)
        needs = case.model_mutations  # the failure needs every mutation of its case, and no pass

        def run(candidate: GraphCase, timeout: float, observed: Observation = observed,
                needs: tuple[ModelMutation, ...] = needs) -> Observation:
            return observed if candidate.model_mutations == needs else Observation.ok()

        context.observe = run
        verdicts.append(Culprit().judge(context))
    assert [v.culprit for v in verdicts] == [["relax.frontend.onnx.SequenceAt._impl_v11"]] * 2
    assert verdicts[0].root == verdicts[1].root
    fault = verdicts[1].at_fault
    assert fault is not None and fault.rule == "component" and fault.shared
    assert set(fault.reached) == {"edge:SplitToSequence", "pioc:MatMul"}  # reached through, never keyed


def test_a_topi_defect_reached_by_a_relax_pass_is_the_root_the_load_kind_files() -> None:
    """rms_norm over every axis: LegalizeOps in a graph case, FoldConstant in another, the build of a pool
    model: one root, keyed by topi.nn.rms_norm."""
    from seedzer.finding.load.rules import Culprit as LoadCulprit
    from seedzer.finding.load.rules import LoadContext

    legalize = real_failure("rms_norm_legalize_ops", step_index=0)
    fold = real_failure("rms_norm_fold_constant", step_index=0)
    roots = {Culprit().judge(_context(o, lambda p, o=o: o, got=o, case=GraphCase(CASE.specs, (step,), model="AAAA")))
             .root for o, step in ((legalize, GraphPass("relax.LegalizeOps")), (fold, FOLD))}
    built = real_failure("rms_norm_build", stage=Stage.LOAD, pass_name="build")
    roots.add(LoadCulprit().judge(LoadContext("0123456789ab", "CASE", built, 3.0, got=built,
                                              check_types=lambda case, operator: None)).root)
    assert len(roots) == 1


def test_a_converter_tripping_on_a_value_another_converter_typed_wrongly_blames_that_converter() -> None:
    """SplitToSequence into one chunk: SequenceAt and SequenceLength fail on its tensor, each with its own
    message (real errors of 0.27.0.post1): one root, keyed by SplitToSequence's converter and the mistake."""
    from seedzer.finding.onnx_types import SEQUENCE_FOR_TENSOR, IllTyped

    made = IllTyped("relax.frontend.onnx.SplitToSequence._impl_v11", "SplitToSequence", "s", SEQUENCE_FOR_TENSOR,
                    "ONNX: sequence, Relax: R.Tensor((1, 2))")
    at = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "InternalError: Check failed: (opt) is false: The type "
                     "of Tuple must be TupleType, but expression lv has type R.Tensor((1, 2), dtype=\"float32\")",
                     frames=("ONNXGraphImporter._convert_operator (tvm/relax/frontend/onnx/onnx_frontend.py:6642) "
                             "[converting SequenceAt._impl_v11]", "normalize (tvm/relax/block_builder.py:673)"))
    length = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "TypeError: object of type 'Call' has no len()",
                         frames=("SequenceLength._impl_v11 (tvm/relax/frontend/onnx/onnx_frontend.py:5701)",))
    asked: list[str] = []

    def check(case: GraphCase, operator: str) -> IllTyped:
        asked.append(operator)
        return made

    verdicts = []
    for observed in (at, length):
        context = _context(observed, lambda p, o=observed: o, got=observed)
        context.check_types = check
        verdicts.append(Culprit().judge(context))
    assert asked == ["SequenceAt", "SequenceLength"]
    assert [v.culprit for v in verdicts] == [["relax.frontend.onnx.SplitToSequence._impl_v11"]] * 2
    assert verdicts[0].root == verdicts[1].root
    fault = verdicts[0].at_fault
    assert fault is not None and fault.rule == "ill-typed-input" and "relax.frontend.onnx.SequenceAt._impl_v11" in (
        fault.reached) and fault.essence == f"ill-typed output: {SEQUENCE_FOR_TENSOR}"
    context = _context(at, lambda p: at, got=at)  # no ill-typed input: the converter that raised is at fault
    assert Culprit().judge(context).culprit == ["relax.frontend.onnx.SequenceAt._impl_v11"]
    # c53 audit (7ab933772512 = 5f7d5732a3b8): SplitToSequence with keepdims=0 trips on its own one-chunk split,
    # typed a Tensor: the same mistake its readers trip on, one root
    own = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "AttributeError: 'TensorType' object has no attribute "
                      "'fields'", frames=("SplitToSequence._impl_v11 (tvm/relax/frontend/onnx/onnx_frontend.py:5762)",))
    itself = Culprit().judge(_context(own, lambda p: own, got=own))
    assert itself.culprit == verdicts[0].culprit and itself.root == verdicts[0].root
    assert itself.at_fault is not None and itself.at_fault.rule == "component"
    negative = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "IndexError: Check failed: index >= 0 (-1 vs. 0) : "
                           "Index out of bounds: Tuple R.split(lv5, indices_or_sections=1, axis=-3) cannot be "
                           "accessed with negative index -1",
                           frames=("SequenceAt._impl_v11 (tvm/relax/frontend/onnx/onnx_frontend.py:5783)",
                                   "Expr.__getitem__ (tvm/ir/expr.py:57)"))
    context = _context(negative, lambda p: negative, got=negative)  # b53 audit, 18e07307e66b: a one-chunk split
    context.check_types = check  # read at -1: SplitToSequence's fix alone (a relax.Tuple) makes it import
    assert Culprit().judge(context).culprit == ["relax.frontend.onnx.SplitToSequence._impl_v11"]


def test_an_infinity_a_min_or_max_reduction_turns_into_the_largest_float_is_one_root_whichever_operator() -> None:
    """camp-before: ReduceMin of +inf, and the variadic Max the importer stacks and reduces, of -inf."""
    def mismatch(operator: str) -> Observation:
        diff = Difference(0, "inf positions", 1, 1, operator=operator)
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "expected -inf, got -3.40282e+38",
                           comparison=SPECIAL_VALUES, difference=diff)

    special = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9)
    verdicts = [Culprit().judge(_context(m, lambda p, m=m: m, got=m, case=special))
                for m in (mismatch("ReduceMin"), mismatch("Max"), mismatch("ReduceMax"))]
    assert {v.root for v in verdicts} == {verdicts[0].root}
    assert verdicts[1].culprit == ["tirx.op.min_max_reduction_identity"]


def test_a_nan_from_special_inputs_and_one_an_operator_made_are_one_root() -> None:
    """a53 audit: ThresholdedRelu gives NaN where onnxruntime gives 0, reached through special inputs (082ed671ecc8)
    and through the NaN an inserted Asin made on random inputs (95f85ccb8b6a): one defect, one root."""
    from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME

    def nan(comparison: str) -> Observation:
        diff = Difference(5, "nan positions", 2, 10, operator="ThresholdedRelu")
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "expected 0, got nan", comparison=comparison,
                           difference=diff)

    special = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9)
    verdicts = [Culprit().judge(_context(nan(SPECIAL_VALUES), lambda p: nan(SPECIAL_VALUES), got=nan(SPECIAL_VALUES),
                                         case=special)),
                Culprit().judge(_context(nan(MODEL_VS_ONNXRUNTIME), lambda p: nan(MODEL_VS_ONNXRUNTIME),
                                         got=nan(MODEL_VS_ONNXRUNTIME)))]
    assert verdicts[0].root == verdicts[1].root
    assert verdicts[0].culprit == ["relax.frontend.onnx.ThresholdedRelu"]


def test_a_run_failure_of_one_inserted_operator_that_no_frame_names_is_that_operators() -> None:
    run = Observation(Symptom.EXCEPTION, Stage.RUN, "run", "RuntimeError: Check failed: input_shape.size() == size "
                      "(2 vs. 1) : ErrorContext(match_cast, ty=R.Tensor((inverse_0,), dtype='int64'))")
    case = GraphCase(CASE.specs, (), model="AAAA", model_mutations=(
        ModelMutation("insert", "t", params={"op": "Unique", "nodes": []}),))
    context = _context(run, lambda p: run, got=run, case=case)
    context.observe = lambda candidate, timeout: run if candidate.model_mutations else Observation.ok()
    verdict = Culprit().judge(context)
    assert verdict.culprit == ["relax.frontend.onnx.Unique"] and verdict.at_fault is not None
    assert verdict.at_fault.reached == ("insert:Unique",)


def test_one_converters_wrong_outputs_are_one_root_whichever_output_shows_it() -> None:
    """LayerNormalization's Mean/InvStdDev placeholders: outputs 7 and 8 of two mutants (two roots before)."""
    def mismatch(output: int) -> Observation:
        diff = Difference(output, "shape/dtype", 1, 1, operator="LayerNormalization")
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"output {output}: shape differs",
                           comparison="model-vs-onnxruntime", difference=diff)

    inserted = GraphCase(CASE.specs, (), model="AAAA", model_mutations=(
        ModelMutation("insert", "t", params={"op": "LayerNormalization", "nodes": []}),))
    roots = set()
    for m in (mismatch(7), mismatch(8)):
        context = _context(m, lambda p, m=m: m, got=m, case=inserted)
        context.observe = lambda candidate, timeout, m=m: m if candidate.model_mutations else Observation.ok()
        verdict = Culprit().judge(context)
        assert verdict.culprit == ["relax.frontend.onnx.LayerNormalization"]
        roots.add(verdict.root)
    assert len(roots) == 1


def _int_mean_returned_as_int64() -> Observation:
    """The audited campaign's ReduceMean finding (3bbae213f2ac): an int32 mean that TVM returns as int64."""
    diff = Difference(2, "shape/dtype: expected (59, 23) int32, got (59, 23) int64", 1, 1, operator="ReduceMean",
                      name="v2_0")
    return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"output 2 'v2_0': 1/1 elements differ "
                       f"({diff.reason})", comparison="model-vs-onnxruntime", difference=diff)


def test_an_output_the_importer_typed_right_and_legalization_retyped_is_that_legalizations() -> None:
    """ReduceMean of int32: the importer declares ``R.mean`` int32 as ONNX does; LegalizeOps' ``_te_mean`` makes it
    int64. The rule between the last pass and the operator names the legalization, asked by the output's name."""
    from seedzer.finding.lowered_types import Retyped

    wrong = _int_mean_returned_as_int64()
    case = GraphCase(CASE.specs, (), model="AAAA", model_mutations=(
        ModelMutation("edge", "t", params={"op": "Cast", "nodes": []}),))
    asked: list[str | int] = []

    def lowering(case: GraphCase, output: str | int) -> Retyped:
        asked.append(output)
        return Retyped("relax.mean", "lv17", 'R.Tensor((59, 1, 23), dtype="int32")',
                       'R.Tensor((59, 1, 23), dtype="int64")', "v2_0", "dtype")

    context = _context(wrong, lambda p: wrong, got=wrong, case=case)
    context.observe = lambda candidate, timeout: wrong if candidate.model_mutations else Observation.ok()
    context.check_lowering = lowering
    verdict = Culprit().judge(context)
    assert asked == ["v2_0"] and verdict.culprit == ["legalize.statistical"]
    fault = verdict.at_fault
    assert fault is not None and fault.rule == "lowering-retyped" and fault.reached == ("edge:Cast",)
    assert fault.essence == "lowering retypes: dtype" and "relax.mean" in fault.evidence


def test_a_build_failure_no_frame_names_is_the_lowering_of_the_operator_whose_call_alone_fails_so() -> None:
    """a53 audit (713d49e9a96f): ScatterND of bool with reduction mul fails the build. With no frame naming the
    code, the operator whose call alone fails the build so is located and its legalization named. Without a
    located call (or with a Relax pass in the case) the operator rule decides as before."""
    from seedzer.finding.unbuildable import Unbuildable

    build = Observation(Symptom.EXCEPTION, Stage.BUILD, "build", "InternalError: Check failed: "
                        "(t.MatchesCode(DLDataTypeCode::kDLFloat)) is false: ")
    case = GraphCase(CASE.specs, (), model="AAAA", model_mutations=(
        ModelMutation("insert", "t", params={"op": "ScatterND", "nodes": []}),))
    asked: list[str] = []

    def locate(case: GraphCase, observed: Observation) -> Unbuildable:
        asked.append(observed.message)
        return Unbuildable("relax.scatter_nd", "lv17", build.message)

    context = _context(build, lambda p: build, got=build, case=case)
    context.observe = lambda candidate, timeout: build if candidate.model_mutations else Observation.ok()
    context.locate_build = locate
    verdict = Culprit().judge(context)
    assert asked == [build.message] and verdict.culprit == ["legalize.manipulate"]
    fault = verdict.at_fault
    assert fault is not None and fault.rule == "unbuildable-lowering" and fault.reached == ("insert:ScatterND",)
    assert fault.essence == "lowering does not build: relax.scatter_nd"
    context = _context(build, lambda p: build, got=build, case=case)
    context.observe = lambda candidate, timeout: build if candidate.model_mutations else Observation.ok()
    assert Culprit().judge(context).culprit == ["relax.frontend.onnx.ScatterND"]


def test_an_output_the_importer_typed_wrongly_is_left_to_the_operator_rule() -> None:
    """No retyping lowering found (the converter declared another type than ONNX's): the converter, as before."""
    wrong = _int_mean_returned_as_int64()
    case = GraphCase(CASE.specs, (), model="AAAA")
    context = _context(wrong, lambda p: wrong, got=wrong, case=case)
    assert Culprit().judge(context).culprit == ["relax.frontend.onnx.ReduceMean"]


def test_a_wrong_value_never_asks_for_the_lowering() -> None:
    diff = Difference(0, "values", 3, 6, operator="Relu")
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: 3/6 elements differ (values)",
                        comparison="model-vs-onnxruntime", difference=diff)

    def lowering(case: GraphCase, output: str | int) -> None:
        raise AssertionError("asked for a wrong value")

    context = _context(wrong, lambda p: wrong, got=wrong, case=GraphCase(CASE.specs, (), model="AAAA"))
    context.check_lowering = lowering
    assert Culprit().judge(context).culprit == ["relax.frontend.onnx.Relu"]


def test_a_wrong_result_of_an_operator_its_converter_hands_to_one_relax_call_is_that_calls_lowering() -> None:
    """Four audited campaigns (9828df026767): NonMaxSuppression with iou_threshold 0 selects nothing, which TOPI's
    _nms_loop decides; the converter emitted only R.vision.all_class_non_max_suppression. Without that one call
    (the converter emitted more) the converter keeps it, and special values are left to the operator table."""
    from seedzer.finding.mirrored import MirroredCall

    diff = Difference(0, "shape/dtype: expected (2, 3) int64, got (0, 3) int64", 1, 1, operator="NonMaxSuppression")
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: shape differs",
                        comparison="model-vs-onnxruntime", difference=diff)
    inserted = GraphCase(CASE.specs, (), model="AAAA", model_mutations=(
        ModelMutation("insert", "t", params={"op": "NonMaxSuppression", "nodes": []}),))
    asked: list[str] = []

    def mirror(case: GraphCase, operator: str) -> MirroredCall:
        asked.append(operator)
        return MirroredCall(operator, "relax.vision.all_class_non_max_suppression", "topi.vision.nms")

    def judged(check: Callable[[GraphCase, str], MirroredCall | None], observed: Observation) -> Verdict:
        context = _context(observed, lambda p: observed, got=observed, case=inserted)
        context.observe = lambda candidate, timeout: observed if candidate.model_mutations else Observation.ok()
        context.check_mirror = check
        return Culprit().judge(context)

    verdict = judged(mirror, wrong)
    assert asked == ["NonMaxSuppression"] and verdict.culprit == ["topi.vision.nms"]
    fault = verdict.at_fault
    assert fault is not None and fault.rule == "mirrored-operator" and fault.reached == ("insert:NonMaxSuppression",)
    assert fault.essence == "wrong result: relax.vision.all_class_non_max_suppression"
    assert judged(lambda case, operator: None, wrong).culprit == ["relax.frontend.onnx.NonMaxSuppression"]
    nan = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: nan lost", comparison=SPECIAL_VALUES,
                      difference=Difference(0, "nan positions", 1, 6, operator="NonMaxSuppression"))
    asked.clear()
    assert judged(mirror, nan).culprit == ["relax.frontend.onnx.NonMaxSuppression"] and asked == []


def test_a_nan_lost_downstream_of_an_infinity_an_operator_got_wrong_is_that_operators_infinity() -> None:
    """c53 audit (df875e4bb194): the judged output loses a NaN, but the located Max made -FLT_MAX of -inf (its
    own output differs in infinities): the min/max reduction identity's root, keyed on infinities, not the NaN
    family's."""
    diff = Difference(0, "nan positions", 1, 6, operator="Max", operator_reason="inf positions")
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: nan lost", comparison=SPECIAL_VALUES,
                        difference=diff)
    inf = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: inf wrong", comparison=SPECIAL_VALUES,
                      difference=Difference(0, "inf positions", 1, 6, operator="ReduceMax"))
    special = GraphCase(CASE.specs, (), model="AAAA", input_mode="special", input_seed=9)
    via_mul, direct = (Culprit().judge(_context(m, lambda p, m=m: m, got=m, case=special)) for m in (wrong, inf))
    assert via_mul.culprit == direct.culprit == ["tirx.op.min_max_reduction_identity"]
    assert via_mul.root == direct.root
    assert Difference.from_json(diff.to_json()) == diff and "operator_reason" not in Difference(0, "values").to_json()


def test_a_build_failure_raised_in_llvm_code_generation_is_that_component() -> None:
    """e53 audit (e36b84bfb8df): ScatterElements of bool with reduction mul; LLVM's CreateMul has no case for a
    bool product, and plain R.multiply, R.add and R.maximum of bools (or a bool product written in TIR) fail the
    same way: the code generator is at fault, not the legalization that only forwarded the product (its frame
    returns a pointer, ``llvm::Value*``, which the frame reader missed before)."""
    from seedzer.finding.component import component_of

    build = Observation(Symptom.EXCEPTION, Stage.BUILD, "build", "InternalError: Check failed: "
                        "(t.MatchesCode(DLDataTypeCode::kDLFloat)) is false: ",
                        frames=("llvm::Value* tvm::codegen::CodeGenLLVM::CreateMul(tvm::PrimType, llvm::Value*, "
                                "llvm::Value*) (src/target/llvm/codegen_llvm.cc:1616)",))
    found = component_of(build)
    assert found is not None and found.name == "codegen.CodeGenLLVM"
