"""Build a whole report: tables (CSV), statistics, plots (PNG+SVG) and report.html in one directory."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from seedzer.campaign.throughput import CAMPAIGN_STAGES, WORKER_STAGES
from seedzer.load.importer_ops import importer_operators
from seedzer.report import allocation, api, levels, mutations, operators, plots, roots, stats, triggers
from seedzer.report.html import Figure, Section, render_page
from seedzer.report.table import CATEGORIES, ReportError, Tables, build_tables, discover


@dataclass
class ReportResult:
    """What a report build produced, with the headline numbers for the command line."""

    out: Path
    html: Path
    trials: int
    heuristics: list[str]
    ranking: dict[str, pd.DataFrame] = field(default_factory=dict)
    findings: pd.DataFrame | None = None
    levels: pd.DataFrame | None = None
    mutations: pd.DataFrame | None = None
    oracles: pd.DataFrame | None = None
    operators: pd.DataFrame | None = None
    operator_bugs: pd.DataFrame | None = None
    triggers: pd.DataFrame | None = None
    allocation: pd.DataFrame | None = None
    api: pd.DataFrame | None = None
    roots: pd.DataFrame | None = None
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _csv(df: pd.DataFrame, path: Path, files: list[Path], *, index: bool = False) -> None:
    plots.publish(path, df.to_csv(index=index, float_format="%.6g"))
    files.append(path)


def _fig(plot: plots.PlotFn, data: pd.DataFrame, stem: Path, files: list[Path], title: str,
         caption: str, **kw: Any) -> Figure:
    written = plots.write_figure(plot, data, stem, title=title, **kw)
    files.extend(written.values())
    return Figure(title, written["svg"], caption)


def _trials_section(tables: Tables) -> Section:
    t = tables.trials
    sec = Section("Trials")
    if t.empty:
        return sec.text("No trial has written a snapshot yet.")
    summary = t.groupby("heuristic").agg(
        trials=("trial", "size"), done=("status", lambda s: int((s == "done").sum())),
        incomplete=("status", lambda s: int((s != "done").sum())),
        median_elapsed_min=("elapsed", lambda s: float(s.median()) / 60)).reset_index()
    last = tables.long.sort_values("time").groupby(["heuristic", "trial"]).tail(1)
    if not last.empty:
        per = last.groupby("heuristic").agg(median_execs=("execs", "median"),
                                            median_corpus=("corpus", "median")).reset_index()
        summary = summary.merge(per, on="heuristic", how="left")
    return sec.table(summary)


def _time_section(tables: Tables) -> Section | None:
    """Where the time went, per heuristic: the median over its trials of each stage's share of the
    workers' time over the whole trial, with the median executions per second; None without timings."""
    st = tables.stages
    if st.empty:
        return None
    shares = st.pivot_table(index="heuristic", columns="stage", values="share", aggfunc="median").fillna(0.0)
    order = [*WORKER_STAGES, "other", *CAMPAIGN_STAGES, "idle"]
    cols = [c for c in order if c in shares.columns] + sorted(c for c in shares.columns
                                                             if c not in order and c != "busy")
    table = (100 * shares[cols]).round(1)
    last = tables.long.sort_values("time").groupby(["heuristic", "trial"]).tail(1)
    rate = (last["execs"] / last["time"].where(last["time"] > 0)).groupby(last["heuristic"]).median()
    table.insert(0, "execs_per_s", rate.reindex(table.index).round(2))
    sec = Section("Where the time went")
    sec.text("Median over a heuristic's trials of each stage's share (%) of the workers' time (elapsed x jobs) "
             "over the whole trial: worker stages, other (the rest of a test case in a worker), the campaign's "
             "bookkeeping, the filing gate's processor time, idle (workers not on a test case). Per-window "
             "executions/s are the execs_per_s column of data.csv; `seedzer status` shows them by window.", "note")
    return sec.table(table, index=True)


def _levels_section(tables: Tables, out: Path, files: list[Path], result: ReportResult) -> Section:
    """Executions and distinct findings per arm and level (campaigns without levels: all TIR)."""
    arms = levels.by_arm(tables.levels, tables.findings, tables.trials)
    result.levels = arms
    _csv(tables.levels, out / "levels.csv", files)
    _csv(arms, out / "levels_by_arm.csv", files)
    sec = Section("Levels")
    sec.text("Executions and findings by level, per arm: median and total executions over the arm's trials, "
             "the level's share (%) of the arm's executions, distinct finding signatures found there (load: "
             "while loading the pool). A campaign from before the levels counts all its executions as tir.", "note")
    return sec.table(arms)


def _mutations_section(tables: Tables, out: Path, files: list[Path], result: ReportResult) -> Section:
    """Mutants run and bugs per arm and mutation, bugs per arm and oracle (``seedzer status``'s figures)."""
    result.mutations = mutations.mutations_by_arm(tables.mutants, tables.bugs)
    result.oracles = mutations.oracles_by_arm(tables.bugs)
    _csv(result.mutations, out / "mutations.csv", files)
    _csv(result.oracles, out / "oracles.csv", files)
    sec = Section("Mutations and oracles")
    sec.text("Per arm and mutation (graph level first: model mutations model_*, step mutators relax_*; then the "
             "TIR mutators): the trials that recorded mutants (campaigns from before the mutation counters "
             "recorded none), median and total mutants run over them, and bugs: distinct root causes whose first "
             "finding, in any of the arm's trials, the mutation made (a root made by no mutation, a seed or pool "
             "model as loaded, is in no row).", "note")
    sec.table(result.mutations)
    sec.text("Bugs per arm, level and oracle: distinct root causes by their first finding's oracle, a mismatch "
             "by the two sides that disagree (mutant-vs-seed: metamorphic), any other symptom by itself.", "note")
    return sec.table(result.oracles)


def _operators_section(tables: Tables, out: Path, files: list[Path], result: ReportResult,
                       importer: Sequence[str]) -> Section:
    """The importer's operators each arm exercised, and bugs per arm and operator."""
    result.operators = operators.reach_by_arm(tables.operators, tables.trials, importer)
    result.operator_bugs = operators.bugs_by_operator(tables.root_operators)
    _csv(result.operators, out / "operators.csv", files)
    _csv(result.operator_bugs, out / "operator_bugs.csv", files)
    sec = Section("Importer operators")
    sec.text(f"Per arm: how many of the {len(importer)} operators TVM's ONNX importer converts (its converter map, "
             "read from the installed TVM) a trial exercised (handed to the importer: a loaded pool model, a graph "
             "test case's model), median over the arm's trials, and over all of them (share of the importer's), "
             "with those none exercised.", "note")
    sec.table(result.operators)
    sec.text("Bugs per arm and operator: distinct root causes whose root names the operator (an insertion's or a "
             "spec-edge change's).", "note")
    return sec.table(result.operator_bugs)


def _triggers_section(tables: Tables, out: Path, files: list[Path], result: ReportResult,
                      step_minutes: float = 5.0) -> Section:
    """Optimizations triggered per arm and level, at the end of the trials and over time."""
    result.triggers = triggers.triggers_by_arm(tables.triggers)
    over_time = triggers.triggers_over_time(tables.triggers, step_minutes)
    _csv(tables.triggers, out / "triggers.csv", files)
    _csv(result.triggers, out / "triggers_by_arm.csv", files)
    _csv(over_time, out / "triggers_over_time.csv", files)
    sec = Section("Optimizations triggered")
    sec.text(triggers.NOTE, "note")
    sec.table(result.triggers)
    sec.text(f"Over time, every {step_minutes:g} minutes: the median over an arm's trials of the passes triggered "
             "so far.", "note")
    return sec.table(over_time)


def _allocation_section(tables: Tables, out: Path, files: list[Path], result: ReportResult) -> Section | None:
    """Where each arm's workers' time went: the allocation's weights and yields per level and mutation, and
    the levels' weights over time (None: no trial recorded an allocation)."""
    if tables.allocation.empty:
        return None
    result.allocation = allocation.allocation_by_arm(tables.allocation)
    _csv(tables.allocation, out / "allocation.csv", files)
    _csv(result.allocation, out / "allocation_by_arm.csv", files)
    sec = Section("Allocation")
    sec.text(allocation.NOTE, "note")
    sec.table(result.allocation)
    weights = allocation.level_weights_long(tables.allocation)
    sec.figure(_fig(plots.plot_over_time, stats.over_time(weights, "weight"), out / "level_weights_over_time", files,
                    "Level weights over time", "Median over an arm's trials of each level's draw weight "
                    "(<arm>:<level>); band: 2.5-97.5 percentiles of trials.", ylabel="draw weight"))
    return sec


def _api_section(tables: Tables, out: Path, files: list[Path], result: ReportResult) -> Section | None:
    """The TVM API each arm exercised: operations exercised of M, and each one's test cases, refusal rate and
    failures (None: no trial recorded its API)."""
    if tables.api.empty:
        return None
    result.api = api.api_by_arm(tables.api)
    exercised = api.exercised_by_arm(tables.api)
    _csv(tables.api, out / "api.csv", files)
    _csv(exercised, out / "api_exercised_by_arm.csv", files)
    _csv(result.api, out / "api_by_arm.csv", files)
    sec = Section("TVM API exercised")
    sec.text(api.NOTE, "note")
    sec.table(exercised)
    return sec.table(result.api)


def _coverage_sections(long: pd.DataFrame, out: Path, files: list[Path], colors: dict[str, Any],
                       result: ReportResult) -> list[Section]:
    sections = []
    backends = sorted(long["coverage_backend"].dropna().unique())
    for backend in backends:
        sub = long[long["coverage_backend"] == backend]
        sfx = "" if len(backends) == 1 else f"-{backend}"
        finals = stats.final_values(sub, "coverage")
        t_cmp = stats.comparison_time(sub)
        ranking, pw, a12m = stats.ranking(finals), stats.pairwise(finals), stats.a12_matrix(finals)
        result.ranking[backend] = ranking
        pw["significant"] = pw["p"] < 0.05
        for name, df, idx in (("ranking", ranking, False), ("pairwise", pw, False), ("a12", a12m, True),
                              ("final_coverage", finals, False)):
            _csv(df, out / f"{name}{sfx}.csv", files, index=idx)
        sec = Section(f"Coverage ({backend})")
        sec.text(f"Final values are taken at {t_cmp / 60:.2f} min of campaign time, the end of the shortest "
                 "trial among those that reached at least half of the longest (running trials included).",
                 "note")
        sec.text("Ranking by median final coverage; average_rank is the mean rank of a heuristic's trials "
                 "among all trials (1 = most coverage); wins counts heuristics beaten with p < 0.05.", "note")
        sec.table(ranking)
        ot = stats.over_time(sub, "coverage")
        sec.figure(_fig(plots.plot_over_time, ot, out / f"coverage_over_time{sfx}", files,
                        f"Coverage over time ({backend})", "Median over trials; the band spans the 2.5-97.5 "
                        "percentiles of trials.", ylabel=f"coverage ({backend})", colors=colors))
        sec.figure(_fig(plots.plot_final_distribution, finals, out / f"final_coverage{sfx}", files,
                        "Final coverage", "One point per trial.", colors=colors,
                        ylabel=f"final coverage ({backend})"))
        sec.figure(_fig(plots.plot_final_distribution, finals, out / f"final_coverage_violin{sfx}", files,
                        "Final coverage (violin)", "", style="violin", colors=colors,
                        ylabel=f"final coverage ({backend})"))
        sec.text("Pairwise two-sided Mann-Whitney U tests on final coverage; A12 is the probability that a "
                 "trial of a beats a trial of b (0.5: no difference). Shaded: p < 0.05.", "note")
        sec.table(pw, highlight="significant")
        if len(a12m) > 1:
            sec.figure(_fig(plots.plot_matrix, a12m, out / f"a12{sfx}", files, "Vargha-Delaney A12 (row over "
                            "column)", "", vmin=0.0, vmax=1.0, label="A12", size=(6.0, 5.0)))
        sections.append(sec)
    return sections


def _roots_section(tables: Tables, out: Path, files: list[Path], result: ReportResult) -> Section:
    """Bug roots per arm (distinct over its trials and per trial), with pairwise tests on roots per trial."""
    result.roots = roots.roots_by_arm(tables.bugs, tables.trials)
    pw = stats.pairwise(roots.roots_per_trial(tables.bugs, tables.trials))
    pw["significant"] = pw["p"] < 0.05
    _csv(result.roots, out / "roots_by_arm.csv", files)
    _csv(pw, out / "pairwise_roots.csv", files)
    sec = Section("Bug roots")
    sec.text("Per arm: distinct bug roots over its trials (a root is one bug however many findings, as seedzer "
             "status counts them), roots per trial, and roots no other arm found.", "note")
    sec.table(result.roots)
    sec.text("Pairwise two-sided Mann-Whitney U tests on each trial's number of roots. Shaded: p < 0.05.", "note")
    return sec.table(pw, highlight="significant")


def _findings_section(tables: Tables, heuristics: list[str], out: Path, files: list[Path],
                      colors: dict[str, Any]) -> Section:
    f, long = tables.findings, tables.long
    by_cat = stats.findings_by_category(f, heuristics)
    ov = stats.overlap(f, heuristics)
    excl = stats.exclusive(f, heuristics)
    _csv(by_cat, out / "findings_by_category.csv", files, index=True)
    _csv(ov, out / "overlap.csv", files, index=True)
    sec = Section("Findings")
    sec.text("Distinct signatures per heuristic over all its trials. Crashes are split by signal "
             "(segfault: SIGSEGV, from the finding's meta.json); other: exceptions, hangs and the rest.", "note")
    sec.table(by_cat.assign(exclusive=excl.reindex(by_cat.index).fillna(0).astype(int)), index=True)
    sec.figure(_fig(plots.plot_findings_by_category, by_cat, out / "findings_by_symptom", files,
                    "Findings by symptom", ""))
    ot = stats.over_time(long, "unique_findings")
    sec.figure(_fig(plots.plot_over_time, ot, out / "unique_findings_over_time", files,
                    "Unique findings over time", "Median over trials of each trial's unique findings; "
                    "band: 2.5-97.5 percentiles.", ylabel="unique findings", colors=colors))
    finals = stats.final_values(long, "unique_findings")
    pw = stats.pairwise(finals)
    pw["significant"] = pw["p"] < 0.05
    _csv(pw, out / "pairwise_findings.csv", files)
    sec.text("Pairwise tests on each trial's final number of unique findings.", "note")
    sec.table(pw, highlight="significant")
    sec.text("Overlap: signatures found by both the row and the column heuristic (diagonal: by the row).", "note")
    sec.table(ov, index=True)
    if len(ov) > 1:
        sec.figure(_fig(plots.plot_matrix, ov, out / "overlap", files, "Finding overlap", "",
                        fmt="{:.0f}", cmap="Blues", vmin=0.0, size=(6.0, 5.0)))
    if not f.empty:
        agg = f.sort_values("time").groupby("signature").agg(
            category=("category", "first"), symptom=("symptom", "first"), stage=("stage", "first"),
            pass_=("pass", "first"), heuristics=("heuristic", lambda s: ", ".join(sorted(set(s)))),
            trials=("trial", "size"), first_min=("time", lambda s: float(s.min()) / 60),
            message=("message", "first")).reset_index().rename(columns={"pass_": "pass"})
        sec.text("Every distinct finding (first_min: earliest campaign time it was found, in minutes).", "note")
        agg["order"] = agg["category"].map({c: i for i, c in enumerate(CATEGORIES)})
        sec.table(agg.sort_values(["order", "first_min"]).drop(columns="order"))
    return sec


def build_report(results: Path, out: Path | None = None, *, refresh: float | None = None,
                 warn: Callable[[str], None] | None = None, importer: Sequence[str] | None = None) -> ReportResult:
    """Read every trial under ``results`` and write CSVs, plots and report.html into ``out``
    (default ``results/report``); raises :class:`ReportError` when there is no trial at all, or no
    readable one (nothing is written then: an empty report would say nothing). ``importer``: the
    operators TVM's importer converts (default: the installed TVM's)."""
    results = Path(results)
    out = Path(out) if out is not None else results / "report"
    found = discover(results)
    if not found:
        raise ReportError(f"{results}: no campaigns found (no campaign.db below it, e.g. <heuristic>/trial-<n>/)")
    tables = build_tables(results)
    if tables.trials.empty:
        first = tables.warnings[0] if tables.warnings else f"{results}: no trial has a snapshot yet"
        raise ReportError(f"{results}: no readable trial ({len(found)} found; {first})")
    for message in tables.warnings:
        if warn is not None:
            warn(message)
    files: list[Path] = []
    _csv(tables.long, out / "data.csv", files)
    _csv(tables.findings, out / "findings.csv", files)
    _csv(tables.trials, out / "trials.csv", files)
    _csv(tables.stages, out / "stages.csv", files)
    heuristics = sorted(tables.trials["heuristic"].unique())
    colors = plots.heuristic_colors(heuristics)
    result = ReportResult(out, out / "report.html", len(tables.trials), heuristics, files=files,
                          findings=stats.findings_by_category(tables.findings, heuristics),
                          warnings=list(tables.warnings))
    sections = [_trials_section(tables)]
    time_section = _time_section(tables)
    if time_section is not None:
        sections.append(time_section)
    sections.append(_levels_section(tables, out, files, result))
    sections.append(_mutations_section(tables, out, files, result))
    sections.append(_operators_section(tables, out, files, result, importer if importer is not None else
                                       importer_operators()))
    sections.append(_triggers_section(tables, out, files, result))
    allocation_section = _allocation_section(tables, out, files, result)
    if allocation_section is not None:
        sections.append(allocation_section)
    api_section = _api_section(tables, out, files, result)
    if api_section is not None:
        sections.append(api_section)
    if not tables.long.empty:
        sections += _coverage_sections(tables.long, out, files, colors, result)
        sections.append(_findings_section(tables, heuristics, out, files, colors))
        sections.append(_roots_section(tables, out, files, result))
    if tables.warnings:
        warn_sec = Section("Warnings")
        for w in tables.warnings:
            warn_sec.text(w, "warn")
        sections.append(warn_sec)
    names = sorted(tables.trials["experiment"].unique())
    intro = [f"Results: {results} ({len(tables.trials)} trials, heuristics: {', '.join(heuristics)})."]
    spec = _experiment_json(results)
    if spec:
        intro.append(f"Experiment: {spec.get('trials')} trials x {spec.get('minutes')} min per "
                     f"{'arm' if spec.get('levels') else 'heuristic'}, "
                     f"{spec.get('jobs')} job(s) per trial, coverage {spec.get('coverage')}, oracles "
                     f"{', '.join(spec.get('oracles') or [])}"
                     f"{', levels ' + ' | '.join(spec['levels']) if spec.get('levels') else ''}. "
                     f"{spec.get('description') or ''}".strip())
    page = render_page(f"Seedzer report: {', '.join(names) or results.name}", intro, sections, refresh=refresh)
    plots.publish(result.html, page)
    files.append(result.html)
    return result


def _experiment_json(results: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((results / "experiment.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

