"""``report.md`` in TVM's bug template: what a maintainer reads first.

Sections, in TVM's order (``.github/ISSUE_TEMPLATE/bug-report.md``): a title naming the component at
fault, **Expected behavior**, **Actual behavior**, **Environment** (TVM version and the commit its wheel
was built from, LLVM, Python, OS, read from the environment the plain reproducer ran in), **Steps to
reproduce** (``minimal.py`` inline, then the minimal pass list), **Triage** (labels); then what a
maintainer asks next: how the verdict was reached (the filing gate's rules in order, the one that decided
and the evidence ``meta.json`` holds), whether the model is valid by ONNX's checker, onnxruntime and
``onnx.reference``, a one-line proposed regression test; the kind's own notes (how the finding was
reduced) come last. TVM-free.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from seedzer.environments.facts import EnvironmentFacts
from seedzer.finding.kind import Described
from seedzer.finding.known_upstream import upstream_note
from seedzer.finding.meta import FindingMeta
from seedzer.finding.minimal.program import IMPORTER, PASS_FAILURE, WRONG_RESULT, MinimalRecord
from seedzer.kernel.common import Symptom
from seedzer.kernel.messages import key_line

MAX_TITLE = 110
JUDGES = (("checker", "onnx.checker (full check)"), ("onnxruntime", "onnxruntime"),
          ("reference", "onnx.reference"))
"""The judges of a model's validity, as ``minimal.json`` names them and as the report shows them."""


@dataclass(frozen=True)
class ReportInput:
    """What a report is made of: the finding's record, its plain reproducer (record and text; None when it
    has none), the gate's rules in order, the environment, how to reproduce without a plain reproducer,
    and the kind's own notes (markdown, headings from level 3)."""

    meta: FindingMeta
    minimal: MinimalRecord | None
    minimal_text: str | None
    rules: Sequence[Described]
    facts: EnvironmentFacts | None
    fallback: str = "Run the attached `repro.py` (`python repro.py`; exit 1 while the bug is present)."
    notes: str = ""
    labels: tuple[str, ...] = field(default_factory=tuple)


AREAS = (("relax.frontend", "Frontend][ONNX"), ("relax.", "Relax"), ("tirx.", "TIR"), ("s_tir.", "TIR"),
         ("topi.", "TOPI"), ("legalize.", "Relax"), ("arith.", "Arith"), ("codegen.", "CodeGen"))
"""A component's namespace -> the part of TVM it belongs to, as TVM's issue titles tag it (first match)."""


def area(component: str) -> str:
    """The part of TVM a component belongs to (:data:`AREAS`; ``TVM`` when none matches)."""
    return next((tag for prefix, tag in AREAS if component.startswith(prefix)), "TVM")


SPECIFIC_SHARED = ("relax.frontend.onnx",)
"""Shared components the plain reproducer names more precisely (the importer as a whole, where the frames named
no converter: the plain reproducer names its operator)."""


def fault_component(meta: FindingMeta, minimal_component: str = "") -> str:
    """The component at fault: a shared component the gate found the failure raised in (a TOPI operator,
    a legalization rule, the arithmetic analyzer: every pass only reached it), else the plain
    reproducer's (``minimal_component``), else the gate's culprit. A pass the gate decided is at fault
    (one pass, ``ns.Name``, not the bisected ``A + B`` or a load step) comes before the plain
    reproducer's failing pass too."""
    fault = meta.at_fault
    if fault is not None and fault.shared and fault.code and fault.code not in SPECIFIC_SHARED:
        return fault.code
    if fault is not None and not fault.shared and "." in fault.code and " + " not in fault.code:  # a pass
        return fault.code
    if minimal_component:
        return minimal_component
    return " + ".join(meta.culprit) or (meta.observation.pass_name or "tvm.compile")


def component_of(r: ReportInput) -> str:
    """The component at fault of a report (:func:`fault_component`)."""
    return fault_component(r.meta, r.minimal.component if r.minimal is not None else "")


def title(r: ReportInput) -> str:
    """``[Bug][Area] component: what goes wrong``, at most :data:`MAX_TITLE` characters."""
    o = r.meta.observation
    what = {Symptom.CRASH: "crashes (killed by a signal)", Symptom.HANG: "hangs",
            Symptom.ILLFORMED: "leaves ill-formed IR",
            Symptom.MISMATCH: "computes wrong results", Symptom.PERF: "slows the kernel down"}.get(
        o.symptom, key_line(o.message))
    component = component_of(r)
    text = f"[Bug][{area(component)}] {component}: {what}"
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 3] + "..."


def _expected(r: ReportInput) -> str:
    form = r.minimal.form if r.minimal is not None else ""
    symptom = r.meta.observation.symptom
    if form == IMPORTER:
        return ("`from_onnx` imports the model (valid by ONNX's checker, onnxruntime and `onnx.reference`), or "
                "rejects it with a diagnostic that names an unsupported feature.")
    if symptom is Symptom.MISMATCH:
        return "Both programs compute the same outputs, within the tolerances of the assertion."
    if symptom is Symptom.ILLFORMED:
        return "Every pass leaves well-formed IR."
    return ("The passes run to the end, or reject the input with a diagnostic that names what is wrong with "
            "it (an internal check failing, or a crash, is neither).")


def _actual(r: ReportInput) -> str:
    o = r.meta.observation
    if o.symptom is Symptom.CRASH:
        signal = f" {o.signal}" if o.signal else ""
        where = o.pass_name or component_of(r)
        return f"The process is killed by signal{signal} in `{where}` ({o.message.strip()[:200]})."
    if o.symptom is Symptom.MISMATCH:
        return f"The outputs differ: {o.message.strip()[:600]}"
    return f"`{o.pass_name or component_of(r)}` fails:\n\n```\n{key_line(o.message)[:1500]}\n```"


def environment(facts: EnvironmentFacts | None, meta: FindingMeta) -> list[str]:
    """The environment lines: what the plain reproducer ran with (else what filed the finding)."""
    if facts is None:
        return [f"- TVM: apache-tvm=={meta.tvm or '?'} (pip wheel)", "- (the environment was not probed)"]
    packages = ", ".join(f"{k} {v}" for k, v in sorted(facts.packages.items()) if k != "apache-tvm")
    return [f"- TVM: apache-tvm=={facts.tvm or '?'} (pip wheel), built from commit `{facts.commit or 'unknown'}`",
            f"- LLVM: {facts.llvm or 'unknown'}", f"- Python: {facts.python}", f"- OS: {facts.os}",
            *([f"- Other packages: {packages}"] if packages else [])]


def _steps(r: ReportInput) -> list[str]:
    if r.minimal is None or r.minimal_text is None or not r.minimal.lines:
        why = f" (no plain reproducer: {r.minimal.why_not})" if r.minimal is not None and r.minimal.why_not else ""
        return [r.fallback + why]
    m = r.minimal
    where = f"in a fresh virtual environment ({m.environment})" if m.environment else "here"
    ran = (f"It exits 1 {where}: {m.verdict}." if m.verified else
           f"It was not confirmed {where}: {m.verdict or 'not run'}.")
    needs = " ".join(m.needs)
    lines = [f"`minimal.py` ({m.lines} lines; needs only `pip install {needs}`). {ran}", "",
             "```python", r.minimal_text.rstrip(), "```", ""]
    if m.passes:
        lines += ["The minimal pass list:", "", *[f"{i}. `{p}`" for i, p in enumerate(m.passes, 1)], ""]
    if m.notes:
        lines += ["How it was made: " + "; ".join(m.notes) + "."]
    return lines


def _verdict(r: ReportInput) -> list[str]:
    meta = r.meta
    names = [d.name for d in r.rules]
    decided = meta.extra.get("gate_rule") if isinstance(meta.extra.get("gate_rule"), str) else None
    rule = decided or "culprit"
    before = names[: names.index(rule)] if rule in names else names
    doc = next((d.doc for d in r.rules if d.name == rule), "")
    lines = [f"Seedzer's filing gate for `{meta.kind}` findings re-ran the candidate alone and applied its rules "
             f"in order; none of {', '.join(f'`{n}`' for n in before) or 'the earlier rules'} dismissed it, and "
             f"`{rule}` decided **{meta.verdict}** ({meta.verdict_reason or '-'}): {doc}", "",
             "Evidence (`meta.json`):", "",
             f"- observed: {meta.observation.headline()[:300]}",
             f"- culprit passes: {' + '.join(meta.culprit) or '-'}; root signature `{meta.root_signature or '-'}`"
             f" (finding `{meta.signature}`)"]
    if meta.at_fault is not None:
        fault = meta.at_fault
        shared = " (shared by every pass reaching it)" if fault.shared else ""
        lines.append(f"- code at fault: `{fault.code}`{shared}: {fault.evidence}")
        if fault.reached:
            lines.append(f"- passes that only reach it: {', '.join(f'`{p}`' for p in fault.reached)}")
    extra = meta.extra
    if extra.get("gate_tests") is not None:
        seconds = f" in {meta.gate_seconds:.1f} s" if meta.gate_seconds else ""
        lines.append(f"- the gate ran {extra['gate_tests']} test(s){seconds}")
    for note in extra.get("gate_notes") or []:
        lines.append(f"- gate note: {note}")
    if meta.confirm_returncode is not None:
        lines.append(f"- re-run from `repro.py` in a clean interpreter: exit status {meta.confirm_returncode} "
                     f"(status `{meta.status}`)")
    if meta.mutators:
        lines.append(f"- made by Seedzer's mutations {', '.join(meta.mutators)} of pool model `{meta.origin}`")
    return lines


def _validity(r: ReportInput) -> list[str]:
    if r.minimal is None or not r.minimal.validity:
        form = r.minimal.form if r.minimal is not None else ""
        program = "a model" if form == IMPORTER else "a TVMScript program"
        return [f"Not applicable: the program is {program} built without ONNX." if form in (PASS_FAILURE, WRONG_RESULT)
                else "Not checked (no model in the plain reproducer)."]
    return [f"- {label}: {r.minimal.validity.get(key, 'not checked')}" for key, label in JUDGES]


def regression_test(r: ReportInput) -> str:
    """One line a maintainer could add to TVM's tests."""
    component = component_of(r)
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", component.split(".")[-1].split(" ")[0]).lower().strip("_")
    form = r.minimal.form if r.minimal is not None else ""
    if form == WRONG_RESULT:
        check = "assert the outputs match the reference within the tolerances above"
    elif form == IMPORTER:
        check = "assert `from_onnx(model)` (and `tvm.compile`) succeed"
    elif r.meta.observation.symptom is Symptom.ILLFORMED:
        check = "assert the output passes the well-formedness verifier"
    else:
        check = "assert the pass list runs to the end without an internal error"
    return f"`test_{snake}_seedzer_{r.meta.root_signature or r.meta.signature}`: on the program above, {check}."


def known_upstream_note(r: ReportInput, upstream: str) -> str:
    """The short note ``report.md`` is for a root that is a known upstream bug: where it is reported, what
    Seedzer found, how to reproduce it; no new report to file."""
    found = re.search(r"(\S+/\S+)#(\d+)", upstream)
    url = f"https://github.com/{found.group(1)}/issues/{found.group(2)}" if found else ""
    fault = r.meta.at_fault
    return "\n".join([
        f"# Known upstream: {upstream.removeprefix('known upstream ').strip()}", "",
        f"This root (`{r.meta.root_signature}`) is a bug already reported upstream{f': {url}' if url else ''}. "
        "Do not file a new report; add this case to the upstream issue if it shows something the issue does not.",
        "",
        f"- observed: {r.meta.observation.headline()[:300]}",
        f"- code at fault: `{fault.code if fault else ' + '.join(r.meta.culprit) or '-'}`"
        + (f" (reached through {', '.join(f'`{p}`' for p in fault.reached)})" if fault and fault.reached else ""),
        f"- finding `{r.meta.signature}` (kind `{r.meta.kind}`); reproduce: "
        + ("`minimal.py` beside this note" if r.minimal_text
           else "`python repro.py` (exit 1 while the bug is present)"),
        ""])


def render(r: ReportInput) -> str:
    """The report's markdown (a short note pointing at the upstream issue for a known upstream bug)."""
    upstream = upstream_note(r.meta)
    if upstream is not None:
        return known_upstream_note(r, upstream)
    labels = r.labels or ("needs-triage", "type: bug", area(component_of(r)).split("]")[0].lower())
    return "\n".join([
        f"# {title(r)}", "",
        "### Expected behavior", "", _expected(r), "",
        "### Actual behavior", "", _actual(r), "",
        "### Environment", "", *environment(r.facts, r.meta), "",
        "### Steps to reproduce", "", *_steps(r), "",
        "### Triage", "", *[f"* {label}" for label in labels], "",
        "### How the verdict was reached", "", *_verdict(r), "",
        "### Is the model valid?", "", *_validity(r), "",
        "### Proposed regression test", "", regression_test(r), "",
        *(["### Notes from Seedzer", "", r.notes.strip(), ""] if r.notes.strip() else []),
    ])


DUPLICATES = ("expected", "actual", "environment", "how to reproduce", "reproduce")
"""Sections of a kind's own draft the template already has (dropped from its notes)."""


def demoted(markdown: str) -> str:
    """A kind's own draft as notes: its title and the sections the template already has dropped, its
    headings from level 4."""
    out: list[str] = []
    skipping = False
    for line in markdown.splitlines():
        if line.startswith("# "):
            continue
        if line.startswith("#"):
            skipping = line.lstrip("#").strip().lower().startswith(DUPLICATES)
            if not skipping:
                out.append("##" + line)
            continue
        if not skipping:
            out.append(line)
    return "\n".join(out).strip()
