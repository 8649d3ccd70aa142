"""The intermediate IR's index dtypes with the real TVM (issue 53): ForceNarrowIndexToInt32 on S-TIR narrows the
loops and the domains of a matmul's block iterators to int32 but leaves the reduction iterator ``v_k`` int64
(apache/tvm#20409); TVM's verifier accepts it and the printer hides it, so CompactBufferAllocation's later
"mismatched types" was filed under both passes. The witness IR now says which iterator is mixed, and the fault
rule names ForceNarrowIndexToInt32 alone."""

from __future__ import annotations

import pytest

from seedzer.finding.tir.witness import ir_before
from seedzer.kernel.tir.case import FUZZED, Case, Step

pytestmark = pytest.mark.integration
pytest.importorskip("tvm")

MATMUL = '''
# from tvm.script import tirx as T
@T.prim_func(s_tir=True)
def main(lv7: T.Buffer((T.int64(52), T.int64(10)), "float32"),
         lv9: T.Buffer((T.int64(39), T.int64(10), T.int64(8)), "float32"),
         matmul: T.Buffer((T.int64(39), T.int64(52), T.int64(8)), "float32")):
    T.func_attr({"tirx.noalias": True})
    for i0, i1, i2, k in T.grid(T.int64(39), T.int64(52), T.int64(8), T.int64(10)):
        with T.sblock("matmul"):
            v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
            T.reads(lv9[T.int64(0):T.int64(39), T.int64(0):T.int64(10), T.int64(0):T.int64(8)],
                    lv7[T.int64(0):T.int64(52), T.int64(0):T.int64(10)])
            T.writes(matmul[v_i0, v_i1, v_i2])
            with T.init():
                matmul[v_i0, v_i1, v_i2] = lv9[v_i2 % T.int64(39), (v_i0 + T.int64(3)) % T.int64(10), v_i2]
            matmul[v_i0, v_i1, v_i2] = lv7[v_i1, v_i2]
'''


def test_force_narrow_index_leaves_the_reduction_iterator_int64() -> None:
    case = Case(MATMUL, (Step("tirx.ForceNarrowIndexToInt32", role=FUZZED, optional=True),), 0)
    before, after = ir_before(case, 0), ir_before(case, 1)
    assert before.problem is None and before.mixed is None, before
    assert after.mixed == "block 'matmul': iterator v_k is int64, its domain int32, its binding int32", after
    assert "T.int64" not in after.script.split("T.sblock")[1].split("T.reads")[0]  # the printer hides it


UNROLLED = '''
@T.prim_func
def main(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (64,), "float32")
    for i in T.unroll(n):
        A[i] = T.float32(1)
    for j in T.unroll(4):
        A[j] = T.float32(2)
'''


def test_an_unrolled_loop_over_a_nonconstant_extent_is_found_and_a_constant_one_is_not() -> None:
    from seedzer.finding.tir.witness import unrolled_nonconstant
    from seedzer.kernel.tir.lowering import parse_func

    assert unrolled_nonconstant(parse_func(UNROLLED)) == "loop i is unrolled over the non-constant extent n"
    assert unrolled_nonconstant(parse_func(UNROLLED.replace("T.unroll(n)", "T.serial(n)"))) is None
