"""A markdown bug-report draft (``report.md``) for a reduced load finding, ready for an issue tracker.

Sections: title, environment (TVM, onnx, onnxruntime, numpy, Python versions), symptom, the minimal
trigger (the reduced ONNX graph in ONNX's text syntax), how to reproduce, expected vs actual, and
how the reduction went. Only ``onnx`` is needed (no TVM).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import onnx
import onnx.printer

from seedzer.finding.load.folder import short_message
from seedzer.finding.onnx_finding import environment, failure_text, op_types
from seedzer.finding.reducer import PassStats, stats_table
from seedzer.finding.repro import TVM_VERSION
from seedzer.kernel.common import Observation, Symptom
from seedzer.load.bounds import opset_of

MAX_TITLE = 120
MAX_TRIGGER_LINES = 60


@dataclass(frozen=True)
class LoadReportInput:
    """What a loader report draft is made of."""

    signature: str
    observation: Observation  # the finding as the reduced model shows it
    model_name: str  # the original model's file name
    original: onnx.ModelProto
    reduced: onnx.ModelProto
    complete: bool  # the reduction finished (else: stopped at its deadline)
    evaluations: int
    seconds: float
    verified: str  # how the standalone repro.py behaved in a clean process
    tolerance: tuple[float, float]  # float32 (rtol, atol) of the comparison with onnxruntime
    log: str = ""  # the finding's log (tracebacks)
    stats: Mapping[str, PassStats] = field(default_factory=dict)  # the reducer's per-pass statistics


def title(observation: Observation, reduced: onnx.ModelProto) -> str:
    """An issue title: component, the trigger's operators, what goes wrong."""
    ops = ", ".join(op_types(reduced)) or "empty graph"
    step = observation.pass_name or "import"
    what = {
        Symptom.CRASH: f"crashes ({short_message(observation.message)}) at {step}",
        Symptom.HANG: f"hangs at {step}",
        Symptom.MISMATCH: "result differs from onnxruntime",
    }.get(observation.symptom, short_message(observation.message))
    text = f"[Bug][Relax][Frontend][ONNX] {ops}: {what}"
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 3] + "..."


def _expected_actual(o: Observation, log: str, tolerance: tuple[float, float]) -> tuple[str, str]:
    rtol, atol = tolerance
    expected = (
        "`tvm.relax.frontend.onnx.from_onnx` imports the model, `LegalizeOps` and the default pipeline "
        "lower it, `tvm.compile` builds it for `llvm`, and its outputs match onnxruntime's "
        f"(float32 within rtol={rtol}, atol={atol})."
    )
    actual = failure_text(o, o.pass_name or "import", "TVM's outputs differ from onnxruntime's", log)
    return expected, actual


def _trigger(model: onnx.ModelProto) -> str:
    text = onnx.printer.to_text(model.graph).splitlines()
    if len(text) > MAX_TRIGGER_LINES:
        text = [*text[:MAX_TRIGGER_LINES], f"... ({len(text) - MAX_TRIGGER_LINES} more lines; see repro.py)"]
    return "\n".join(text)


def render_report(r: LoadReportInput) -> str:
    """The markdown draft."""
    expected, actual = _expected_actual(r.observation, r.log, r.tolerance)
    before, after = len(r.original.graph.node), len(r.reduced.graph.node)
    status = "finished" if r.complete else "stopped at its time limit (a smaller trigger may exist)"
    return f"""# {title(r.observation, r.reduced)}

## Environment

{environment()}

## Symptom

{r.observation.symptom.value} at step `{r.observation.pass_name or "import"}` of loading an ONNX model
(import, legalization/fusion, build, run, comparison with onnxruntime).

## Minimal trigger

{after} ONNX node(s) ({", ".join(op_types(r.reduced)) or "none"}), opset {opset_of(r.reduced)}:

```
{_trigger(r.reduced)}
```

## Steps to reproduce

```bash
pip install apache-tvm=={TVM_VERSION} onnx onnxruntime numpy
python repro.py   # the model is embedded; exit status 1 while the bug is present
```

The script imports the model with `tvm.relax.frontend.onnx.from_onnx`, lowers, builds and runs it
and compares with onnxruntime. In a clean process it {r.verified}.

## Expected behavior

{expected}

## Actual behavior

{actual}

## How this was found

Found by Seedzer (fuzzing TVM with NNSmith-generated models) in `{r.model_name}`; finding signature
`{r.signature}`. Graph-aware reduction (ddmin over nodes, then whole sub-graphs) brought it from
{before} to {after} node(s) with {r.evaluations} isolated loads in {r.seconds:.0f} s; the reduction {status}.
{_passes_table(r.stats)}"""


def _passes_table(stats: Mapping[str, PassStats]) -> str:
    if not stats:
        return ""
    return ("\nWhich reduction passes paid off (size removed: nodes, and elements of initializers):\n\n"
            + stats_table(stats) + "\n")

