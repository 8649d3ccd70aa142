"""A markdown bug-report draft (``report.md``) for a reduced graph finding, ready for an issue tracker.

Sections: title, environment (TVM, onnx, onnxruntime, numpy, Python versions), symptom, the minimal
trigger (the Relax pass sequence and the reduced ONNX graph in ONNX's text syntax), how to
reproduce, expected vs actual, and how the reduction went. Only ``onnx`` is needed (no TVM).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import onnx
import onnx.printer

from seedzer.finding.meta import ModelRecord
from seedzer.finding.onnx_finding import environment, failure_text, op_types
from seedzer.finding.reducer import PassStats, stats_table
from seedzer.finding.repro import TVM_VERSION
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.graph.case import GraphPass, ModelMutation
from seedzer.kernel.messages import key_line

MAX_TITLE = 120
MAX_TRIGGER_LINES = 60


@dataclass(frozen=True)
class GraphReportInput:
    """What a graph report draft is made of."""

    signature: str
    observation: Observation
    """The failure as the reduced case shows it."""
    model_name: str
    original: onnx.ModelProto
    reduced: onnx.ModelProto
    passes_before: tuple[GraphPass, ...]
    passes: tuple[GraphPass, ...]
    complete: bool
    evaluations: int
    seconds: float
    verified: str
    """How the standalone repro.py behaved in a clean process."""
    log: str = ""
    stats: Mapping[str, PassStats] = field(default_factory=dict)
    culprit: list[str] = field(default_factory=list)
    mutations: tuple[ModelMutation, ...] = ()
    """The recorded model mutations the reduced case applies to the model before importing it."""
    failing: onnx.ModelProto | None = None
    """The reduced model that fails (``reduced/model.onnx``: the reduced seed with the mutations applied)."""
    record: ModelRecord | None = None
    """What the failing model is (its opset against the seed's, what else the failure needs)."""


def _mutations(r: GraphReportInput) -> str:
    """The trigger's model mutations and what they promise (empty when there are none)."""
    if not r.mutations:
        return ""
    lines = "\n".join(f"- `{m.label()}`" for m in r.mutations)
    if any(m.kind in ("edge", "insert") for m in r.mutations):
        promise = ("A spec-edge change or an inserted operator keeps the model valid (onnx's checker, the "
                   "specification's rules, onnxruntime and onnx.reference take it): its reference is onnxruntime on "
                   "the changed model.")
    else:
        promise = ("Each relation (MT-DLComp's UOC/PIOC) adds a term that is zero for the model's input, so "
                   "the mutant computes what the seed model does: TVM must give both the same outputs "
                   "(onnxruntime does).")
    shown = "the model below is the mutant (`reduced/model.onnx`)" if r.failing is not None else \
        "the model below is the seed; `repro.py` builds the mutant from it"
    return (f"\nThe model is the seed (`reduced/seed.onnx`) with these recorded model mutations applied "
            f"({shown}):\n\n{lines}\n\n{promise}\n")


def _opset(r: GraphReportInput) -> str:
    """The opset the failing model declares and needs, and what else the failure needs besides it."""
    if r.record is None:
        return ""
    also = "".join(f"\n- {a}" for a in r.record.also)
    return f"\nThe model's {r.record.opset_note()}. Besides the model, the failure needs:{also}\n"


def title(r: GraphReportInput) -> str:
    """An issue title: component (the culprit pass), the trigger's operators, what goes wrong."""
    o = r.observation
    where = (r.culprit or [p.name for p in r.passes[-1:]] or [o.pass_name or "build"])[0]
    what = {
        Symptom.CRASH: f"crashes at {o.pass_name}",
        Symptom.HANG: f"hangs at {o.pass_name}",
        Symptom.MISMATCH: "results differ from TVM's default pipeline",
        Symptom.ILLFORMED: "emits ill-formed Relax",
    }.get(o.symptom, key_line(o.message))
    model = r.failing if r.failing is not None else r.reduced
    text = f"[Bug][Relax] {where} on {', '.join(op_types(model)) or 'an empty graph'}: {what}"
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 3] + "..."


def _trigger(model: onnx.ModelProto) -> str:
    text = onnx.printer.to_text(model.graph).splitlines()
    if len(text) > MAX_TRIGGER_LINES:
        text = [*text[:MAX_TRIGGER_LINES], f"... ({len(text) - MAX_TRIGGER_LINES} more lines; see repro.py)"]
    return "\n".join(text)


def _sequence(passes: tuple[GraphPass, ...]) -> str:
    if not passes:
        return "(none: TVM's default pipeline alone)"
    return "\n".join(f"{i}. `tvm.relax.transform.{p.name.removeprefix('relax.')}({_args(p)})`"
                     for i, p in enumerate(passes, 1))


def _args(p: GraphPass) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in sorted(p.args.items()))


def render_report(r: GraphReportInput) -> str:
    """The markdown draft."""
    o = r.observation
    shown = r.failing if r.failing is not None else r.reduced
    before, after = len(r.original.graph.node), len(shown.graph.node)
    status = "finished" if r.complete else "stopped at its time limit (a smaller trigger may exist)"
    stats = ("\nWhich reduction passes paid off:\n\n" + stats_table(r.stats) + "\n") if r.stats else ""
    return f"""# {title(r)}

## Environment

{environment()}

## Symptom

{o.symptom.value} at `{o.where()}`: an ONNX model imported with `tvm.relax.frontend.onnx.from_onnx`,
then the Relax passes below (each followed by `relax.analysis.well_formed`), then `tvm.compile`
(the rest of TVM's default pipeline) and the Relax VM, compared with TVM's default pipeline alone.

## Minimal trigger

Relax passes, in order:

{_sequence(r.passes)}
{_mutations(r)}
on {after} ONNX node(s) ({", ".join(op_types(shown)) or "none"}):

```
{_trigger(shown)}
```
{_opset(r)}

## Steps to reproduce

```bash
pip install apache-tvm=={TVM_VERSION} onnx onnxruntime numpy
python repro.py   # the seed is embedded (or seed.onnx beside it); exit status 1 while the bug is present
```

In a clean process the reduced `repro.py` {r.verified}.

## Expected behavior

Each pass transforms the module into well-formed Relax, `tvm.compile` builds it for `llvm`, and its
outputs match those of the same model built by TVM's default pipeline alone.

## Actual behavior

{failure_text(o, o.pass_name or 'build', "The outputs differ from TVM's default pipeline's", r.log)}

## How this was found

Found by Seedzer (graph-level fuzzing of TVM's Relax passes) on `{r.model_name}`; finding signature
`{r.signature}`. The reduction brought the sequence from {len(r.passes_before)} to {len(r.passes)} pass(es)
and the model from {before} to {after} node(s) with {r.evaluations} isolated runs in {r.seconds:.0f} s; it {status}.
{stats}"""
