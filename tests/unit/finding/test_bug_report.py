"""report.md in TVM's bug template."""

from __future__ import annotations

from seedzer.environments.facts import EnvironmentFacts
from seedzer.finding.bug_report import ReportInput, area, demoted, render, title
from seedzer.finding.kind import Described
from seedzer.finding.meta import BUG, FindingMeta
from seedzer.finding.minimal.program import MinimalProgram, MinimalRecord
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import Observation, Stage, Symptom

RULES = [Described("alone", "The case runs again alone."), Described("culprit", "Bisection names the passes.")]
FACTS = EnvironmentFacts("3.11.7", "Linux-x86_64", "0.27.0.post1", "7b5acb32b", "22", {"apache-tvm": "0.27.0.post1",
                                                                                      "numpy": "2.4.6"})


def _meta(symptom: Symptom = Symptom.CRASH) -> FindingMeta:
    obs = Observation(symptom, Stage.PASS, "relax.ConvertLayout", "killed by signal SIGFPE", signal=8)
    return FindingMeta("7e7405684159", "graph", obs, verdict=BUG, verdict_reason="bug", root_signature="7e7405684159",
                       culprit=["relax.ConvertLayout"], gate_seconds=1.4, confirm_returncode=-8, status="confirmed",
                       extra={"gate_rule": "culprit", "gate_tests": 7})


def _report(meta: FindingMeta, validity: dict[str, str] | None = None) -> ReportInput:
    program = MinimalProgram("print('x')\n", ("apache-tvm", "numpy"), "pass-failure", "relax.ConvertLayout",
                             ("relax.transform.ConvertLayout({'relax.nn.conv2d': ['NHWC', 'OHWI']})",))
    record = MinimalRecord.of(program, validity).verified_by(True, 1, "present", "tvm-0.27.0.post1-numpy", {})
    return ReportInput(meta, record, program.text, RULES, FACTS, notes=demoted("## Reduction\n\nfrom 23 to 1 nodes"))


def test_the_template_sections_in_tvms_order_with_the_environment_and_the_program() -> None:
    text = render(_report(_meta()))
    order = ["# [Bug][Relax] relax.ConvertLayout: crashes (killed by a signal)", "### Expected behavior",
             "### Actual behavior", "### Environment", "### Steps to reproduce", "### Triage",
             "### How the verdict was reached", "### Is the model valid?", "### Proposed regression test"]
    assert [text.index(h) for h in order] == sorted(text.index(h) for h in order)
    assert "built from commit `7b5acb32b`" in text and "- LLVM: 22" in text and "- Python: 3.11.7" in text
    assert "```python\nprint('x')\n```" in text and "1. `relax.transform.ConvertLayout(" in text
    assert "none of `alone` dismissed it, and `culprit` decided **bug**" in text
    assert "the gate ran 7 test(s) in 1.4 s" in text and "exit status -8 (status `confirmed`)" in text
    assert "`test_convert_layout_seedzer_7e7405684159`" in text
    assert "#### Reduction" in text  # the kind's notes, below the template


def test_the_models_validity_is_each_judges_answer() -> None:
    text = render(_report(_meta(Symptom.EXCEPTION), {"checker": "ok", "onnxruntime": "ok",
                                                     "reference": "not implemented: NotImplementedError: Foo"}))
    assert "- onnx.checker (full check): ok\n- onnxruntime: ok\n- onnx.reference: not implemented" in text


def test_areas_and_titles_and_demoted_notes() -> None:
    components = ("relax.frontend.onnx (Reshape)", "relax.FuseTIR", "s_tir.X", "tirx.Y", "topi.image.resize", "x")
    assert [area(c) for c in components] == ["Frontend][ONNX", "Relax", "TIR", "TIR", "TOPI", "TVM"]
    assert title(_report(_meta(Symptom.MISMATCH))).endswith("computes wrong results")
    assert demoted("# Title\n## Expected behaviour\nx\n## Minimal trigger\ny") == "#### Minimal trigger\ny"


def test_the_code_at_fault_names_the_report_and_its_evidence_and_the_passes_that_reached_it() -> None:
    import dataclasses

    from seedzer.finding.verdict import AtFault

    fault = AtFault("topi.image.resize", "raised in topi::image::resize, code every pass reaching it shares",
                    ("relax.LegalizeOps",), shared=True)
    text = render(_report(dataclasses.replace(_meta(Symptom.EXCEPTION), at_fault=fault)))
    assert text.startswith("# [Bug][TOPI] topi.image.resize: ")
    assert "- code at fault: `topi.image.resize` (shared by every pass reaching it): raised in topi::image" in text
    assert "- passes that only reach it: `relax.LegalizeOps`" in text
    undecided = AtFault("s_tir.LoopPartition + tirx.StmtSimplify", "culprit bisection")
    assert "relax.ConvertLayout:" in title(_report(dataclasses.replace(_meta(), at_fault=undecided)))


def test_a_shared_component_the_gate_blamed_names_the_report_not_the_importer_that_reached_it() -> None:
    meta = _meta(Symptom.EXCEPTION)
    meta.observation = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "Check failed: fb->value != 0")
    meta.at_fault = AtFault("topi.image.resize", "raised in get_inx (tvm/topi/image/resize.py:168)", ("edge:Resize",),
                            shared=True)
    program = MinimalProgram("print('x')\n", ("apache-tvm", "numpy", "onnx"), "importer",
                             "relax.frontend.onnx (Resize)", ("from_onnx",))
    record = MinimalRecord.of(program, None).verified_by(True, 1, "present", "env", {})
    report = ReportInput(meta, record, program.text, RULES, FACTS)
    assert title(report).startswith("[Bug][TOPI] topi.image.resize: ")
    assert "`test_resize_seedzer_7e7405684159`" in render(report) and "* topi\n" in render(report)
    meta.at_fault = AtFault("relax.frontend.onnx", "raised in the importer", shared=True)
    assert title(report).startswith("[Bug][Frontend][ONNX] relax.frontend.onnx (Resize): ")


def test_a_converter_at_fault_names_the_report() -> None:
    meta = _meta(Symptom.EXCEPTION)
    meta.at_fault = AtFault("relax.frontend.onnx.SequenceAt._impl_v11", "raised in SequenceAt._impl_v11",
                            ("insert:SequenceAt",), shared=True)
    assert title(_report(meta)).startswith("[Bug][Frontend][ONNX] relax.frontend.onnx.SequenceAt._impl_v11: ")


def test_a_known_upstream_root_gets_a_note_pointing_at_the_issue_not_a_new_report() -> None:
    from seedzer.kernel.common import SPECIAL_VALUES
    from seedzer.kernel.comparison import Difference

    meta = _meta(Symptom.MISMATCH)
    meta.observation = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: 1/4 elements differ (nan "
                                   "positions)", comparison=SPECIAL_VALUES,
                                   difference=Difference(0, "nan positions", 1, 4, operator="Relu"))
    meta.at_fault = AtFault("codegen.llvm.max_min", "Relu computes the first wrong output", ("inputs:special",),
                            shared=True, rule="operator")
    text = render(_report(meta))
    assert text.startswith("# Known upstream: apache/tvm#19579 (open)")
    assert "https://github.com/apache/tvm/issues/19579" in text and "Do not file a new report" in text
    assert "### Expected behavior" not in text and "reached through `inputs:special`" in text
    meta.known_issue = "known upstream apache/tvm#424242 (open)"  # filed against the user's own row
    assert render(_report(meta)).startswith("# Known upstream: apache/tvm#424242 (open)")
