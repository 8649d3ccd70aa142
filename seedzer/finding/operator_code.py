"""The TVM code that decides an ONNX operator's result: what a wrong result of one operator is filed under.

A wrong result has no frames to read. When the gate knows the operator at fault (the kernel locates the
first node whose output TVM computes differently while its inputs agree,
:func:`seedzer.kernel.graph.special.locate_operator`; else the one operator a model mutation inserted
or edited), the code at fault is the code that implements that operator's semantics in TVM:

- by default **the importer's converter** of that operator (``relax.frontend.onnx.LayerNormalization``):
  it chooses the Relax operators, attributes and placeholders an ONNX operator becomes, so it owns the
  operator's meaning whatever lowers it later;
- for the values a lowering shared by several operators decides (:data:`SHARED_LOWERINGS`), that
  lowering: one defect reached through several operators is one root (the NaN that ``T.max``/``T.min``
  lose in LLVM code generation, whether Relu, Clip, Max, Min, ReduceMax, ReduceMin or MaxPool computed it).

The key adds the kind of value the result gets wrong (:func:`seedzer.oracles.signature.root_essence`):
a lost NaN and a wrong infinity of one operator are two roots.
"""

from __future__ import annotations

from dataclasses import dataclass

from seedzer.finding.component import IMPORTER


@dataclass(frozen=True)
class SharedLowering:
    """One lowering that decides, for the kinds of special value ``values`` (``nan``, ``inf``), the result
    of every ONNX operator in ``operators``; ``code`` is its name as a root's code at fault, ``why`` how
    the operators reach it, ``reference`` where that was checked."""

    code: str
    operators: frozenset[str]
    values: frozenset[str]
    why: str
    reference: str


SHARED_LOWERINGS: tuple[SharedLowering, ...] = (
    SharedLowering(
        "codegen.llvm.max_min", frozenset({"Relu", "Clip", "HardSigmoid", "Max", "Min", "ReduceMax", "ReduceMin",
                                           "MaxPool", "GlobalMaxPool", "Elu", "Selu"}),
        frozenset({"nan"}),
        "each lowers to tirx Max/Min (relu = max(x, 0), clip = min(max(x, lo), hi), hardsigmoid a clip, elu and "
        "selu built by the importer from two relus (Elu._impl_v1, Selu._impl_v1), the "
        "reductions' and the max pools' combiner: topi pool's tvm::max); "
        "LLVM code generation emits them as an ordered compare and select, which returns the other operand "
        "when the first is NaN",
        "apache/tvm#19579 (maximum/minimum/relu/clip do not propagate NaN); the audit of seedzer-paper "
        "(docs/results/seedzer-paper-audit.md: ReduceMin and ReduceMax lose NaN the same way); HardSigmoid(NaN) "
        "is 1 on 0.27.0.post1 (apache/tvm#17999); the A/B audit of issue 57 (1159b581edb1: MaxPool over a window of "
        "+inf and NaN gives the max of the elements after the last NaN, CodeGenLLVM's Max a select); the d53 "
        "campaign filed Selu(NaN) = 0 to the Selu converter (1f2ee3272958), whose relus lose it"),
    SharedLowering(
        "tirx.op.min_max_reduction_identity", frozenset({"ReduceMax", "ReduceMin", "Max", "Min"}), frozenset({"inf"}),
        "the min and max reductions (tvm::min / tvm::max over a reduction domain, src/tirx/op/op.cc) start from "
        "the dtype's largest (smallest) finite value, max_value / min_value, not from +inf (-inf), so a reduction "
        "over infinities returns FLT_MAX instead; TOPI's MinOp/MaxOp (include/tvm/topi/reduction.h) only call "
        "them; the importer converts a variadic Max or Min of inputs of static shapes by stacking them and "
        "reducing (MultiInputBase._impl_v1)",
        "the audit of seedzer-paper (fab9d570e406: ReduceMin of +inf gives FLT_MAX); camp-before's Max of -inf "
        "gave -FLT_MAX (b30548c34bf9, c96d3b5dba38); the d53 audit (0e3dfc7e1cef) named op.cc's identity, "
        "not TOPI's wrappers"),
)
"""Lowerings one defect of which several ONNX operators share, for some kinds of value."""


def operator_code(operator: str, value: str | None = None) -> str:
    """The code at fault of a wrong result of ``operator`` (an ONNX op type) on values of kind ``value``
    (``nan``, ``inf``; None: ordinary values): the shared lowering that decides it, else the converter."""
    row = next((r for r in SHARED_LOWERINGS if operator in r.operators and value in r.values), None)
    return row.code if row is not None else f"{IMPORTER}.{operator}"


def evidence(operator: str, value: str | None = None) -> str:
    """Why :func:`operator_code` names what it names."""
    row = next((r for r in SHARED_LOWERINGS if operator in r.operators and value in r.values), None)
    if row is None:
        return (f"{operator} computes the first wrong output from inputs TVM computes right; its converter owns "
                "the operator's meaning")
    return f"{operator} computes the first wrong output ({value}): {row.why} ({row.reference})"
