"""``seedzer report RESULTS_DIR``: build (or, with ``--watch``, keep rebuilding) an experiment report."""

from __future__ import annotations

import math
import time
from pathlib import Path

import click

from seedzer.console import echo
from seedzer.errors import SeedzerError


def _echo_result(result: object) -> None:
    from seedzer.report.build import ReportResult

    assert isinstance(result, ReportResult)
    echo(f"report: {result.html} ({result.trials} trials, {len(result.files)} files in {result.out})")
    for backend, ranking in result.ranking.items():
        for r in ranking.itertuples():
            echo(f"  #{r.rank} {r.heuristic}: median final coverage ({backend}) {r.median:g} "
                       f"over {r.trials} trial(s), average rank {r.average_rank:.2f}, wins {r.wins}")
    if result.findings is not None and not result.findings.empty:
        for h, row in result.findings.iterrows():
            parts = ", ".join(f"{c} {int(row[c])}" for c in result.findings.columns if c != "total" and row[c])
            echo(f"  {h}: {int(row['total'])} distinct finding(s){' (' + parts + ')' if parts else ''}")


def _warn(msg: str) -> None:
    echo(f"warning: {msg}", err=True)


@click.command("report", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Output directory (default: RESULTS_DIR/report).")
@click.option("--watch", "watch", type=float, default=None, metavar="SECONDS",
              help="Rebuild every SECONDS until interrupted (trials may still be running).")
@click.option("--publish", "publish", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Also write the study's results page DIR/<name>.md with its figures (e.g. docs/results).")
def report_cmd(results_dir: Path, out: Path | None, watch: float | None, publish: Path | None) -> None:
    """Build an experiment report: long-format CSV, coverage and findings plots (PNG+SVG),
    Mann-Whitney U / Vargha-Delaney A12 tables, a ranking and one self-contained report.html.

    RESULTS_DIR holds <heuristic>/trial-<n>/campaign.db (as written by `seedzer experiment
    run`) or <heuristic>-<n>/campaign.db (docker compose replicas); running or incomplete
    trials are read as far as they got.

    Example: seedzer report experiments/results/quick
    Example: seedzer report experiments/results/seedzer-paper --publish docs/results
    """
    try:
        if publish is not None and watch is not None:
            raise SeedzerError("--publish: cannot be combined with --watch (publish a finished report)")
        _report(results_dir, out, watch, publish)
    except SeedzerError as exc:  # one line, also when the command is used outside the seedzer group
        echo(f"error: {exc}", err=True)
        click.get_current_context().exit(2)


MAX_WATCH = 86400.0


def check_out(results_dir: Path, out: Path) -> None:
    """Refuse an explicit ``--out`` that would write over something the report does not own."""
    label = f"--out {out}"
    if out.exists() and not out.is_dir():
        raise SeedzerError(f"{label}: exists and is not a directory")
    try:
        same = out.resolve() == results_dir.resolve()
    except (OSError, RuntimeError):
        same = False
    if same:
        raise SeedzerError(f"{label}: is the results directory; write the report to a directory of its own")
    if (out / "campaign.db").exists():
        raise SeedzerError(f"{label}: is a campaign directory; write the report elsewhere")
    if (out / "manifest.json").exists():
        raise SeedzerError(f"{label}: is a seed pool; write the report elsewhere")
    if out.is_dir() and not (out / "report.html").exists() and any(out.iterdir()):
        raise SeedzerError(f"{label}: exists, is not empty and holds no earlier report (no report.html); "
                           "refusing to write into it")


def _report(results_dir: Path, out: Path | None, watch: float | None, publish: Path | None = None) -> None:
    from seedzer.report.build import build_report
    from seedzer.report.publish import publish_study

    if watch is not None and not (math.isfinite(watch) and 0 < watch <= MAX_WATCH):
        raise SeedzerError(f"--watch: must be a positive number of seconds, at most {MAX_WATCH:g} (got {watch:g})")
    if out is not None:
        check_out(results_dir, out)
    if watch is None:
        result = build_report(results_dir, out, warn=_warn)
        _echo_result(result)
        if publish is not None:
            echo(f"published: {publish_study(results_dir, result.out, publish)}")
        return
    try:
        while True:
            try:
                _echo_result(build_report(results_dir, out, refresh=watch, warn=_warn))
            except SeedzerError as exc:  # e.g. no trial yet: keep waiting
                echo(f"waiting: {exc}", err=True)
            time.sleep(watch)
    except KeyboardInterrupt:
        echo("report: watch stopped", err=True)
