"""The load report of a pool: how far models got, failures grouped by signature, time per step.

A group's signature is the raw signature its load finding is filed under
(the ``load`` kind's :meth:`~seedzer.finding.kind.FindingKind.signature`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from seedzer.console import SafeConsole, SafeTable
from seedzer.finding.kind import Observed
from seedzer.finding.registry import POOL_KIND, kind
from seedzer.kernel.common import Observation
from seedzer.kernel.messages import normalize
from seedzer.load.loader import STEPS, SUBSTAGE, ModelLoad


def _signature(observation: Observation) -> str:
    """The raw signature a ``load`` finding of ``observation`` is filed under."""
    return kind(POOL_KIND).signature(Observed(observation, None))


COUNT_KEYS = ("imported", "legalized", "primfuncs", "built", "ran", "checked", "matched")
"""Funnel counters: import ok, LegalizeOps ok, >= 1 PrimFunc seed, built, ran, compared, matched."""


def funnel(reached: list[str], seeds: int, matched: bool | None) -> dict[str, bool]:
    """Which funnel counters one attempt satisfies."""
    return {
        "imported": "import" in reached,
        "legalized": "legalize" in reached,
        "primfuncs": seeds > 0,
        "built": "build" in reached,
        "ran": "run" in reached,
        "checked": "compare" in reached,
        "matched": matched is True,
    }


def invalid_notes(r: ModelLoad) -> list[Observation]:
    """The ``invalid`` observations of ``r``'s final attempt (what its failure-table rows say)."""
    runs = [run for run in r.runs if run.attempt == r.final_attempt]
    return [o for run in runs[-1:] for o in run.observations if o.symptom.value == "invalid"]


def verdict_of(r: ModelLoad) -> bool | None:
    """The differential verdict the summary and the funnel count: a match only when nothing in the
    final attempt was ``invalid`` at the reference or the comparison (a model onnxruntime refuses,
    e.g. of an opset it does not know, is listed ``invalid`` in the failure table, never ``matched``)."""
    if r.matched is True and any(o.pass_name in ("reference", "compare") for o in invalid_notes(r)):
        return None
    return r.matched


@dataclass
class FailureGroup:
    """Loader observations sharing one signature."""

    signature: str
    symptom: str
    substage: str
    steps: list[str]
    attempts: dict[str, int]
    count: int
    message: str
    normalized: str
    models: list[str] = field(default_factory=list)


@dataclass
class LoadReport:
    """Aggregate of a pool's :class:`ModelLoad` results (JSON-able through :meth:`to_json`)."""

    models: int
    counts: dict[str, int]
    raw_counts: dict[str, int]
    folded_attempts: int
    rescued_by_folding: int
    invalid_inputs: int
    seeds: dict[str, int]
    timings: dict[str, dict[str, float]]
    groups: list[FailureGroup]
    per_model: list[dict[str, Any]]
    differential: bool = True

    def to_json(self) -> dict[str, Any]:
        """Plain-data form written to ``load_report.json``."""
        return asdict(self)

    def write(self, path: Path) -> None:
        """Write the JSON report to ``path`` (atomically)."""
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1, sort_keys=True))
        tmp.replace(path)

    def percent(self, key: str, raw: bool = False) -> float:
        """Share of models (in %) reaching funnel counter ``key`` (raw attempt only with ``raw``)."""
        src = self.raw_counts if raw else self.counts
        return 100.0 * src.get(key, 0) / self.models if self.models else 0.0


def build_report(results: list[ModelLoad], differential: bool = True) -> LoadReport:
    """Aggregate per-model results into a :class:`LoadReport`."""
    counts: Counter[str] = Counter()
    raw_counts: Counter[str] = Counter()
    seeds: Counter[str] = Counter()
    totals: dict[str, list[float]] = {}
    groups: dict[str, FailureGroup] = {}
    per_model: list[dict[str, Any]] = []
    folded_attempts = rescued = invalid = 0
    for r in results:
        verdict = verdict_of(r)
        final = funnel(r.final_reached(), len(r.seeds), verdict)
        raw_seeds = len(r.seeds) if r.final_attempt == "raw" else 0
        raw = funnel(r.reached.get("raw", []), raw_seeds, verdict if r.final_attempt == "raw" else None)
        counts.update(k for k, v in final.items() if v)
        raw_counts.update(k for k, v in raw.items() if v)
        if "folded" in r.attempts:
            folded_attempts += 1
            rescued += bool(r.seeds)
        invalid += any(o.pass_name == "parse" and o.symptom.value == "invalid" for o in r.observations)
        seeds["total"] += len(r.seeds)
        seeds["fused"] += sum(s.fused for s in r.seeds)
        seeds["op"] += sum(not s.fused for s in r.seeds)
        for step, secs in r.timings.items():
            totals.setdefault(step, []).append(secs)
        for run in r.runs:
            for o in run.observations:
                _group(groups, o, run.attempt, r.model)
        per_model.append(_model_row(r, final))
    order = {s: i for i, s in enumerate(STEPS)}
    timings = {
        step: {"total": sum(v), "mean": sum(v) / len(v), "max": max(v), "models": len(v)}
        for step, v in sorted(totals.items(), key=lambda kv: order.get(kv[0], 99))
    }
    return LoadReport(
        models=len(results),
        counts={k: counts.get(k, 0) for k in COUNT_KEYS},
        raw_counts={k: raw_counts.get(k, 0) for k in COUNT_KEYS},
        folded_attempts=folded_attempts,
        rescued_by_folding=rescued,
        invalid_inputs=invalid,
        seeds={k: seeds.get(k, 0) for k in ("total", "op", "fused")},
        timings=timings,
        groups=sorted(groups.values(), key=lambda g: (-g.count, g.signature)),
        per_model=per_model,
        differential=differential,
    )


def _group(groups: dict[str, FailureGroup], o: Observation, attempt: str, model: str) -> None:
    """Count observation ``o`` of ``model``'s ``attempt`` in its signature's group."""
    sig = _signature(o)
    step = o.pass_name or ""
    g = groups.get(sig)
    if g is None:
        g = groups[sig] = FailureGroup(sig, o.symptom.value, SUBSTAGE.get(step, step), [], {}, 0, o.message,
                                       normalize(o.message))
    g.count += 1
    if step not in g.steps:
        g.steps.append(step)
    g.attempts[attempt] = g.attempts.get(attempt, 0) + 1
    if model not in g.models:
        g.models.append(model)


def _model_row(r: ModelLoad, final: dict[str, bool]) -> dict[str, Any]:
    return {
        "model": r.model,
        "attempts": r.attempts,
        "folded": r.folded,
        "folded_nodes": r.folded_nodes,
        "seeds": len(r.seeds),
        "reached": r.reached,
        "matched": r.matched,
        "reference": r.reference,
        "bound_dims": r.bound_dims,
        "funnel": final,
        "observations": [{**o.to_json(), "attempt": run.attempt, "signature": _signature(o)}
                         for run in r.runs for o in run.observations],
        "timings": r.timings,
    }


def render(report: LoadReport, console: SafeConsole | None = None, max_models: int = 8) -> None:
    """Print the funnel, the failures by signature and the time per step as rich tables."""
    console = console or SafeConsole()
    funnel_t = SafeTable(title=f"Load funnel ({report.models} models)")
    funnel_t.add_column("stage")
    funnel_t.add_column("raw", justify="right")
    funnel_t.add_column("after folding", justify="right")
    for key in COUNT_KEYS:
        if not report.differential and key in ("built", "ran", "checked", "matched"):
            continue
        funnel_t.add_row(
            key,
            f"{report.raw_counts[key]} ({report.percent(key, raw=True):.0f}%)",
            f"{report.counts[key]} ({report.percent(key):.0f}%)",
        )
    console.print(funnel_t)
    console.print(
        f"folded retries: {report.folded_attempts}, rescued by folding: {report.rescued_by_folding}, "
        f"invalid inputs: {report.invalid_inputs}, seeds: {report.seeds['total']} "
        f"({report.seeds['op']} per-op, {report.seeds['fused']} fused)"
    )
    fail_t = SafeTable(title=f"Failures by signature ({len(report.groups)})")
    for col in ("signature", "n", "symptom", "substage", "attempts", "message", "models"):
        fail_t.add_column(col, overflow="fold")
    for g in report.groups:
        models = ", ".join(g.models[:max_models]) + (" …" if len(g.models) > max_models else "")
        attempts = ", ".join(f"{k}:{v}" for k, v in g.attempts.items())
        fail_t.add_row(g.signature, str(g.count), g.symptom, g.substage, attempts, g.message[:160], models)
    console.print(fail_t)
    time_t = SafeTable(title="Time per step (s)")
    for col in ("step", "models", "total", "mean", "max"):
        time_t.add_column(col, justify="right" if col != "step" else "left")
    for step, t in report.timings.items():
        time_t.add_row(step, str(int(t["models"])), f"{t['total']:.1f}", f"{t['mean']:.2f}", f"{t['max']:.2f}")
    console.print(time_t)
