"""A markdown bug-report draft per finding (``report.md``), ready to paste into an issue tracker."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from seedzer.finding.kind import TriageResult
from seedzer.finding.layout import REPORT_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.finding.reducer import PassStats, stats_table
from seedzer.finding.repro import TVM_VERSION
from seedzer.kernel.tir.case import FUZZED, Case, Step
from seedzer.store.atomic import write_atomic

_ACTUAL = {
    "crash": "The process is killed by a signal ({message}).",
    "hang": "The {stage} stage does not finish within {timeout:.0f} s.",
    "exception": "TVM raises:\n\n```\n{message}\n```",
    "illformed": "The IR after `{pass_name}` fails TVM's well-formedness verifier:\n\n```\n{message}\n```",
    "mismatch": "Two builds of the same PrimFunc disagree on the same inputs ({message}).",
    "perf": "The build with the passes above is slower than `tvm.compile` alone ({message}).",
}
_EXPECTED = {
    "crash": "The pass sequence and the build complete, or TVM raises a diagnostic error.",
    "hang": "The stage completes in well under a second for an input this small.",
    "exception": "The passes and the build accept this well-formed PrimFunc (or reject it with a clear "
                 "precondition error).",
    "illformed": "Every pass keeps the IR well-formed.",
    "mismatch": "Every build computes the same outputs (the optimizations preserve semantics).",
    "perf": "The optimizations do not slow the kernel down.",
}


def _passes_snippet(steps: tuple[Step, ...]) -> str:
    out = []
    for s in steps:
        module, fn = s.name.split(".", 1)
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(s.args.items()))
        cfg = f"  # PassContext config {s.config}" if s.config else ""
        mark = "  # inserted" if s.role == FUZZED else ""
        out.append(f"mod = tvm.{module}.transform.{fn}({args})(mod){cfg}{mark}")
    return "\n".join(out)


def _headline(symptom: str, message: str) -> str:
    line = message.strip().splitlines()[-1] if message.strip() else ""
    return f": {line[:120]}" if line and symptom in ("exception", "illformed", "mismatch") else ""


def _passes_table(stats: Mapping[str, PassStats] | None) -> list[str]:
    if not stats:
        return []
    return ["## Reduction passes", "", "Which of Seedzer's reduction passes paid off (size removed: TVMScript "
            "lines and inserted passes):", "", stats_table(stats), ""]


def render_report(meta: FindingMeta, case: Case, result: TriageResult | None,
                  stats: Mapping[str, PassStats] | None = None) -> str:
    """The markdown draft of one TIR finding from its meta, (reduced) case and triage result;
    ``stats`` (the reducer's per-pass statistics) add a table of the passes that paid off."""
    exp = case.expected or meta.observation
    symptom = exp.symptom.value
    fields = {"message": exp.message.strip()[:1500], "stage": exp.stage.value if exp.stage else "?",
              "pass_name": exp.pass_name, "timeout": float(case.timeout)}
    culprit = f" in `{' + '.join(meta.culprit)}`" if meta.culprit else ""
    script = "\n".join(ln for ln in case.script.strip().splitlines() if not ln.startswith("# from "))
    fuzzed = [s for s in case.steps if s.role == FUZZED]
    sizes = ""
    if result is not None and result.size_after is not None:
        sizes = (f"\nReduced by Seedzer from {result.size_before} to {result.size_after} TVMScript lines and "
                 f"from {result.passes_before} to {result.passes_after} inserted passes.\n")
    how = ("`tvm.compile` on this PrimFunc at `opt_level=3` (no other pass involved)." if not fuzzed else
           "TVM's default pipeline with the passes marked `inserted` added, each pass applied in "
           "`tvm.transform.PassContext(opt_level=3, config=...)` after `tvm.tirx.transform.BindTarget`, then "
           "LLVM code generation, as `tvm.tirx.build` does it:")
    return "\n".join([
        f"# [Bug] {symptom}{culprit}" + _headline(symptom, exp.message),
        "",
        f"- TVM version: apache-tvm=={meta.tvm or TVM_VERSION} (pip wheel), Python 3.11, x86-64 Linux",
        f"- Symptom: **{symptom}** at stage `{fields['stage']}`"
        + (f", pass `{exp.pass_name}`" if exp.pass_name else ""),
        f"- Culprit (bisection over the inserted and the pipeline's passes): {' + '.join(meta.culprit) or '-'}",
        f"- Found by: Seedzer (finding `{meta.signature}`, root signature `{meta.root_signature or '-'}`)",
        sizes,
        "## Minimal trigger",
        "",
        "PrimFunc:",
        "",
        "```python",
        "from tvm.script import tirx as T",
        script.strip(),
        "```",
        "",
        how,
        "",
        *(["```python", _passes_snippet(case.steps), "```", ""] if fuzzed else []),
        "The attached `repro.py` runs exactly this with only `pip install apache-tvm numpy` and exits "
        "1 while the bug is present" + (" (here it dies by the signal)." if symptom == "crash" else "."),
        "",
        "## Expected behaviour",
        "",
        _EXPECTED.get(symptom, "No failure."),
        "",
        "## Actual behaviour",
        "",
        _ACTUAL.get(symptom, "{message}").format(**fields),
        "",
        *_passes_table(stats),
    ])


def write_report(folder: Path, meta: FindingMeta, case: Case, result: TriageResult | None,
                 stats: Mapping[str, PassStats] | None = None) -> Path:
    """Write ``report.md`` into the finding folder; return its path."""
    path = folder / REPORT_FILE
    write_atomic(path, render_report(meta, case, result, stats))
    return path
