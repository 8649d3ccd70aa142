"""A schedule finding's own notes in its ``report.md`` (below TVM's template, :mod:`seedzer.finding.bug_report`):
the PrimFunc, the trace as Schedule calls, what happens and what should, and the reduction passes that
paid off."""

from __future__ import annotations

from collections.abc import Mapping

from seedzer.finding.kind import TriageResult
from seedzer.finding.meta import FindingMeta
from seedzer.finding.reducer import PassStats, stats_table
from seedzer.finding.repro import TVM_VERSION
from seedzer.finding.sched.minimal_text import schedule_lines
from seedzer.kernel.sched.case import SchedCase
from seedzer.kernel.sched.trace import parse_trace

_ACTUAL = {
    "crash": "The process is killed by a signal ({message}).",
    "hang": "The {stage} stage does not finish within {timeout:.0f} s.",
    "exception": "TVM raises, at `{pass_name}`:\n\n```\n{message}\n```",
    "illformed": "The IR after `{pass_name}` fails TVM's checks:\n\n```\n{message}\n```",
    "mismatch": "The scheduled function computes other outputs than the same function unscheduled on the same "
                "inputs ({message}).",
}
_EXPECTED = {
    "crash": "The primitive accepts its arguments and transforms the schedule, or refuses them with a "
             "`ScheduleError`; the build completes.",
    "hang": "The stage completes in well under a second for a function this small.",
    "exception": "A primitive that accepts its arguments leaves a schedule that the later primitives and "
                 "`tvm.compile` handle (or it refuses them with a `ScheduleError`).",
    "illformed": "Every primitive that accepts its arguments keeps the IR well-formed and its accesses in bounds.",
    "mismatch": "A schedule never changes what the function computes (up to the reassociation of a float "
                "reduction it reorders).",
}


def render_report(meta: FindingMeta, case: SchedCase, result: TriageResult | None,
                  stats: Mapping[str, PassStats] | None = None) -> str:
    """The notes of one schedule finding from its meta, (reduced) case and triage result; ``stats`` (the
    reducer's per-pass statistics) add a table of the passes that paid off."""
    exp = case.expected or meta.observation
    symptom = exp.symptom.value
    fields = {"message": exp.message.strip()[:1500], "stage": exp.stage.value if exp.stage else "?",
              "pass_name": exp.pass_name or "-", "timeout": float(case.timeout)}
    script = "\n".join(ln for ln in case.script.strip().splitlines() if not ln.startswith("# from "))
    sizes = ""
    if result is not None and result.size_after is not None:
        sizes = (f"Reduced by Seedzer from {result.size_before} to {result.size_after} TVMScript lines and from "
                 f"{result.passes_before} to {result.passes_after} trace instructions.")
    table = ["## Reduction passes", "", "Which of Seedzer's reduction passes paid off (size removed: TVMScript "
             "lines and trace instructions):", "", stats_table(stats), ""] if stats else []
    return "\n".join([
        f"# [Bug] {symptom} in `{' + '.join(meta.culprit) or exp.where()}`",
        "",
        f"- TVM version: apache-tvm=={meta.tvm or TVM_VERSION} (pip wheel), Python 3.11, x86-64 Linux",
        f"- Symptom: **{symptom}** at stage `{fields['stage']}`"
        + (f", step `{exp.pass_name}`" if exp.pass_name else ""),
        f"- Code at fault: {' + '.join(meta.culprit) or '-'}",
        f"- Found by: Seedzer (finding `{meta.signature}`, root signature `{meta.root_signature or '-'}`)",
        "", sizes, "",
        "## Minimal trigger", "", "PrimFunc:", "", "```python", "from tvm.script import tirx as T", script.strip(),
        "```", "",
        "Schedule (each line one instruction of the trace, as the `tvm.s_tir.Schedule` call that makes it):", "",
        "```python", *schedule_lines(parse_trace(case.trace), case.postprocs), "```", "",
        "The scheduled module is then built with `tvm.compile` and compared with the unscheduled function's build "
        "on the same inputs. The attached `repro.py` runs exactly this with only `pip install apache-tvm numpy` "
        "and exits 1 while the bug is present" + (" (here it dies by the signal)." if symptom == "crash" else "."),
        "", "## Expected behaviour", "", _EXPECTED.get(symptom, "No failure."), "",
        "## Actual behaviour", "", _ACTUAL.get(symptom, "{message}").format(**fields), "",
        *table,
    ])
