"""The text of a TIR plain reproducer: a wrong result compares TVM's default build with the same build
without the culprit passes, which must exist in the TVM that runs it."""

from __future__ import annotations

from seedzer.finding.minimal.text import Docs
from seedzer.finding.tir.minimal_text import Param, present_checks, wrong_result

SCRIPT = '''@T.prim_func
def main(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    for i in range(4):
        b[i] = a[i] + T.float32(1)
'''


def test_a_pass_turned_off_by_name_must_exist_in_the_tvm_that_runs_the_program() -> None:
    assert present_checks(["s_tir.StmtSimplify"]) == \
        ["assert tvm.s_tir.transform.StmtSimplify().info.name == 's_tir.StmtSimplify'  # else: cannot run here"]
    text = wrong_result(Docs("t", (), "0.27.0.post1"), SCRIPT, [Param((4,), "float32")] * 2, 7,
                        ["s_tir.StmtSimplify"], "llvm", (1e-4, 1e-5)).text
    assert text.index("tvm.s_tir.transform.StmtSimplify().info.name") < text.index("expected = run(") < \
        text.index("try:")


def test_a_pass_turned_off_by_its_config_needs_no_name_check() -> None:
    text = wrong_result(Docs("t", (), "0.27.0.post1"), SCRIPT, [Param((4,), "float32")] * 2, 7,
                        ["tirx.VectorizeLoop"], "llvm", (1e-4, 1e-5)).text
    assert "tirx.disable_vectorize" in text and ".info.name" not in text
