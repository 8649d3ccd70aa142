"""A markdown bug-report draft per finding (``report.md``), ready to paste into an issue tracker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seedzer.store.atomic import write_atomic
from seedzer.store.repro import TVM_VERSION
from seedzer.triage.registry import TriageResult

_ACTUAL = {
    "crash": "The process is killed by a signal ({message}).",
    "hang": "The {stage} stage does not finish within {timeout:.0f} s.",
    "exception": "TVM raises:\n\n```\n{message}\n```",
    "illformed": "The IR after `{pass_name}` fails TVM's well-formedness verifier:\n\n```\n{message}\n```",
    "mismatch": "The optimized and unoptimized builds disagree on the same inputs ({message}).",
    "perf": "The optimized build is slower than the unoptimized one ({message}).",
}
_EXPECTED = {
    "crash": "The pass sequence and the build complete, or TVM raises a diagnostic error.",
    "hang": "The stage completes in well under a second for an input this small.",
    "exception": "The passes and the build accept this well-formed PrimFunc (or reject it with a clear "
                 "precondition error).",
    "illformed": "Every pass keeps the IR well-formed.",
    "mismatch": "Both builds compute the same outputs (the optimizations preserve semantics).",
    "perf": "The optimizations do not slow the kernel down.",
}


def _passes_snippet(steps: list[dict[str, Any]]) -> str:
    out = []
    for s in steps:
        module, fn = s["pass"].split(".", 1)
        args = ", ".join(f"{k}={v!r}" for k, v in sorted((s.get("args") or {}).items()))
        cfg = f"  # config {s['config']}" if s.get("config") else ""
        out.append(f"tvm.{module}.transform.{fn}({args}){cfg}")
    return "\n".join(out) or "(no passes: the default build pipeline alone)"


def _headline(symptom: str, message: str) -> str:
    line = message.strip().splitlines()[-1] if message.strip() else ""
    return f": {line[:120]}" if line and symptom in ("exception", "illformed", "mismatch") else ""


def render_report(meta: dict[str, Any], case: dict[str, Any], result: TriageResult | None) -> str:
    """The markdown draft of one low-level finding from its meta, (reduced) case and triage result."""
    exp = case["expected"]
    symptom = exp["symptom"]
    fields = {"message": (exp.get("message") or "").strip()[:1500], "stage": exp.get("stage"),
              "pass_name": exp.get("pass"), "timeout": float(case.get("timeout", 0))}
    loose = symptom in ("mismatch", "perf")  # their pass is only the last one that changed the IR
    culprit = f" in `{exp['pass']}`" if exp.get("pass") and not loose else ""
    script = "\n".join(ln for ln in case["script"].strip().splitlines() if not ln.startswith("# from "))
    sizes = ""
    if result is not None and result.size_after is not None:
        sizes = (f"\nReduced by Seedzer from {result.size_before} to {result.size_after} TVMScript lines and "
                 f"from {result.passes_before} to {result.passes_after} passes.\n")
    return "\n".join([
        f"# [Bug] {symptom} at {exp.get('stage')}{culprit}" + _headline(symptom, fields["message"]),
        "",
        f"- TVM version: apache-tvm=={meta.get('tvm', TVM_VERSION)} (pip wheel), Python 3.11, x86-64 Linux",
        f"- Symptom: **{symptom}** at stage `{exp.get('stage')}`" + (f", pass `{exp['pass']}`" if culprit else ""),
        f"- Found by: Seedzer (finding `{meta.get('signature', '')}`)",
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
        "Passes, applied one by one inside `tvm.transform.PassContext(opt_level=3, config=...)` with "
        f"`tvm.target.Target({json.dumps(case['target'])})` current, then "
        f"`tvm.compile(mod, target={json.dumps(case['build_target'])})`:",
        "",
        "```python",
        _passes_snippet(case["steps"]),
        "```",
        "",
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
    ])


def write_report(folder: Path, meta: dict[str, Any], case: dict[str, Any], result: TriageResult | None) -> Path:
    """Write ``report.md`` into the finding folder; return its path."""
    path = folder / "report.md"
    write_atomic(path, render_report(meta, case, result))
    return path
