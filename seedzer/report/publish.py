"""A study's results page for the documentation: ``seedzer report RESULTS --publish docs/results``.

From a built report (its CSV tables and SVG figures, :func:`seedzer.report.build.build_report`) and the
experiment's ``experiment.json``, it writes ``<dest>/<name>.md`` and the figures under
``<dest>/<name>/``: the question, how the study was run (the commands, the design, the code's commits
and the machines every trial recorded, :mod:`seedzer.provenance`), every arm's trials, the answer in
plain words (which differences are significant, and which are not), the figures and the statistics.
The answer is derived from the tables alone, so a rebuilt page always says what the data say.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from seedzer.report.plots import publish
from seedzer.report.table import ReportError

ALPHA = 0.05
"""The significance level the answer uses (two-sided Mann-Whitney U)."""
MIN_TRIALS = 5
"""Finished trials per arm below which the page says the study is incomplete."""
FIGURES = (("coverage_over_time", "Coverage over time (median over trials, band: 2.5-97.5 percentiles)"),
           ("final_coverage", "Final coverage, one point per trial"),
           ("unique_findings_over_time", "Unique findings over time"),
           ("findings_by_symptom", "Distinct findings by symptom"),
           ("a12", "Vargha-Delaney A12 on final coverage (row over column)"),
           ("level_weights_over_time", "Level weights over time (draw probability, median over trials)"))
"""The report's figures the page shows (file stems; a per-backend suffix is kept), with captions."""


@dataclass(frozen=True)
class Measure:
    """One figure of merit the answer speaks about: its name, ranking (or per-arm) table and pairwise tests."""

    name: str
    unit: str
    pairwise: pd.DataFrame
    medians: dict[str, float]


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.is_file() else pd.DataFrame()


def md_table(df: pd.DataFrame, columns: list[str] | None = None) -> str:
    """``df`` as a Markdown table (floats with 4 significant digits, p-values as written)."""
    if df.empty:
        return "(none)\n"
    cols = columns or [str(c) for c in df.columns]

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "" if math.isnan(v) else f"{v:.4g}"
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(row[c]) for c in cols) + " |" for _, row in df.iterrows()]
    return "\n".join(lines) + "\n"


def _pairs(measure: Measure) -> list[str]:
    """Plain-words sentences on ``measure``: the leader, every significant difference, and what is not."""
    if not measure.medians:
        return [f"- **{measure.name}:** no trial reached the comparison time."]
    top = max(measure.medians.values())
    leaders = sorted(arm for arm, v in measure.medians.items() if v == top)
    who = f"{leaders[0]} has" if len(leaders) == 1 else f"{', '.join(leaders)} share"
    line = f"- **{measure.name}:** {who} the highest median ({top:g} {measure.unit})"
    pw = measure.pairwise
    if pw.empty:
        return [line + "; there is no other arm to compare it with."]
    sig = pw[pw["p"] < ALPHA]
    if sig.empty:
        best = pw.sort_values("p").iloc[0]
        pairs = _count(len(pw), "pair")
        return [line + f"; **no difference between any two arms is significant** at p < {ALPHA} ({pairs}; "
                f"the smallest p is {best['p']:.3g}, {best['a']} against {best['b']})."]
    said = []
    for r in sig.itertuples():
        hi, lo, a12 = (r.a, r.b, r.a12) if r.a12 > 0.5 else (r.b, r.a, 1 - r.a12)
        said.append(f"{hi} over {lo} (p = {r.p:.3g}, A12 = {a12:.2f})")
    rest = len(pw) - len(sig)
    return [line + f". Significant at p < {ALPHA}: " + "; ".join(said) + "." +
            (f" The other {rest} of {len(pw)} pairs do not differ significantly." if rest else "")]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _medians(table: pd.DataFrame, column: str) -> dict[str, float]:
    return {str(r["heuristic"]): float(r[column]) for _, r in table.iterrows()} if not table.empty else {}


def _backends(report: Path) -> list[str]:
    """The coverage backends the report has tables for ('' for a report of one backend)."""
    if (report / "ranking.csv").is_file():
        return [""]
    return sorted(p.stem.removeprefix("ranking-") for p in report.glob("ranking-*.csv"))


def measures(report: Path) -> list[Measure]:
    """Coverage (per backend), bug roots and unique findings, read from the report's tables."""
    out = []
    for backend in _backends(report):
        sfx = f"-{backend}" if backend else ""
        ranking = _read(report / f"ranking{sfx}.csv")
        out.append(Measure(f"Coverage{' (' + backend + ')' if backend else ''}", "features",
                           _read(report / f"pairwise{sfx}.csv"), _medians(ranking, "median")))
    roots = _read(report / "roots_by_arm.csv")
    out.append(Measure("Bug roots per trial", "roots", _read(report / "pairwise_roots.csv"),
                       _medians(roots, "median_per_trial")))
    finals = _read(report / "data.csv")
    if not finals.empty:
        last = finals.sort_values("time").groupby(["heuristic", "trial"]).tail(1)
        med = last.groupby("heuristic")["unique_findings"].median()
        out.append(Measure("Unique findings per trial", "signatures", _read(report / "pairwise_findings.csv"),
                           {str(k): float(v) for k, v in med.items()}))
    return out


def _provenance(trials: pd.DataFrame) -> list[str]:
    lines = []
    for column, label in (("source", "Code (Seedzer commit)"), ("machine", "Machine")):
        values = sorted({str(v) for v in trials.get(column, pd.Series(dtype=str)).dropna() if str(v)})
        lines.append(f"- {label}: {', '.join(f'`{v}`' for v in values) if values else 'not recorded'}")
    return lines


def _design(spec: dict[str, Any]) -> str:
    levels = f", levels {' | '.join(spec['levels'])}" if spec.get("levels") else ""
    return (f"{len(spec.get('heuristics') or [])} pools ({', '.join(spec.get('heuristics') or [])}), "
            f"{spec.get('trials')} trials x {spec.get('minutes')} minutes per arm, {spec.get('jobs')} job(s) per trial"
            f"{levels}, coverage `{spec.get('coverage')}`, oracles {', '.join(spec.get('oracles') or [])}, "
            f"pools of {(spec.get('pool') or {}).get('size')} models (seed {(spec.get('pool') or {}).get('seed')}).")


def _per_arm(trials: pd.DataFrame, roots: pd.DataFrame, data: pd.DataFrame) -> pd.DataFrame:
    arms = trials.groupby("heuristic").agg(trials=("trial", "size"),
                                           done=("status", lambda s: int((s == "done").sum()))).reset_index()
    if not data.empty:
        last = data.sort_values("time").groupby(["heuristic", "trial"]).tail(1)
        per = last.groupby("heuristic").agg(median_execs=("execs", "median"),
                                            median_coverage=("coverage", "median")).reset_index()
        arms = arms.merge(per, on="heuristic", how="left")
    if not roots.empty:
        arms = arms.merge(roots[["heuristic", "roots", "exclusive"]], on="heuristic", how="left")
    return arms


def _question(spec: dict[str, Any]) -> str:
    """What the study's arms compare: schedules when it varies the allocation, else seed pools (with levels)."""
    if len(spec.get("allocations") or []) > 1:
        return "does the adaptive schedule make the fuzzer more effective than fixed weights?"
    return "which seed pool makes the fuzzer most effective?"


def publish_study(results: Path, report: Path, dest: Path, spec_file: str | None = None) -> Path:
    """Write the study's page ``<dest>/<name>.md`` and its figures; returns the page's path.
    Raises :class:`ReportError` when ``report`` holds no built report."""
    trials = _read(report / "trials.csv")
    if trials.empty:
        raise ReportError(f"{report}: no report tables (trials.csv); build the report first")
    try:
        spec: dict[str, Any] = json.loads((results / "experiment.json").read_text())
    except (OSError, ValueError):
        spec = {}
    name = str(spec.get("name") or results.name)
    figures = dest / name
    figures.mkdir(parents=True, exist_ok=True)
    roots, data = _read(report / "roots_by_arm.csv"), _read(report / "data.csv")
    incomplete = [str(r["heuristic"]) for _, r in _per_arm(trials, roots, data).iterrows() if r["done"] < MIN_TRIALS]
    lines = [f"# {name}: {_question(spec)}", ""]
    if spec.get("description"):
        lines += [str(spec["description"]).strip(), ""]
    lines += ["## How it was run", "",
              f"- Commands: `seedzer experiment run {spec_file or f'experiments/{name}.yaml'}` (with `--resume` "
              f"after a stop), then `seedzer report {results} --publish {dest}`",
              f"- Design: {_design(spec)}" if spec else "- Design: experiment.json not found",
              *_provenance(trials), ""]
    lines += ["## The answer", ""]
    if incomplete:
        lines += [f"**Incomplete:** {', '.join(incomplete)} finished fewer than {MIN_TRIALS} trials; "
                  "the statistics below are provisional.", ""]
    for measure in measures(report):
        lines += _pairs(measure)
    lines += ["", "## Arms", "", md_table(_per_arm(trials, roots, data))]
    for stem, caption in FIGURES:
        for svg in sorted(report.glob(f"{stem}*.svg")):
            if stem == "final_coverage" and "violin" in svg.stem:
                continue
            shutil.copyfile(svg, figures / svg.name)
            lines += [f"![{caption}]({name}/{svg.name})", "", f"*{caption}.*", ""]
    for title, file in (("Ranking by final coverage", "ranking.csv"), ("Coverage, pairwise", "pairwise.csv"),
                        ("Bug roots, pairwise", "pairwise_roots.csv"),
                        ("Unique findings, pairwise", "pairwise_findings.csv"),
                        ("Optimizations triggered", "triggers_by_arm.csv"), ("Importer operators", "operators.csv"),
                        ("Allocation: weights at the end and reward per worker-minute", "allocation_by_arm.csv")):
        table = _read(report / file)
        if not table.empty:
            lines += [f"## {title}", "", md_table(table)]
    lines += ["## Every trial", "", md_table(trials.drop(columns=[c for c in ("dir",) if c in trials]))]
    page = dest / f"{name}.md"
    publish(page, "\n".join(lines))
    return page
