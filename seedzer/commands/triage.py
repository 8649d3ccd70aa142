"""The ``seedzer triage``, ``seedzer replay`` and ``seedzer recheck`` verbs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from seedzer.errors import SeedzerError
from seedzer.finding.kind import TriageOptions, TriageResult
from seedzer.finding.meta import FindingMeta
from seedzer.finding.recheck import RecheckRow, recheck
from seedzer.finding.registry import kind
from seedzer.finding.replay import finding_dirs, replay_one

PYTHON_OPTION = click.option(
    "--python", "python", default=sys.executable, show_default="this interpreter",
    help="Python interpreter that runs the reproducers (e.g. a virtualenv with another TVM version).")


def _triage_one(folder: Path, options: TriageOptions) -> TriageResult:
    meta = FindingMeta.load(folder)
    try:
        return kind(meta.kind).triage(folder, meta, options)
    except SeedzerError as exc:
        return TriageResult(folder.name, meta.kind, meta.observation.symptom.value, meta.observation.where(),
                            "error", note=str(exc))


def _fmt(before: int | None, after: int | None) -> str:
    if before is None:
        return "-"
    return f"{before} -> {after}" if after is not None else f"{before} -> ?"


@click.command("triage")
@click.argument("campaign", type=click.Path(path_type=Path))
@click.option("--minutes", type=float, default=5.0, show_default=True,
              help="Reduction budget per finding (a finding not finished in time resumes on the next run).")
@click.option("--only", "only", multiple=True, help="Triage only these signatures (repeatable).")
@click.option("--force", is_flag=True, help="Start reductions again instead of resuming or skipping them.")
@PYTHON_OPTION
def triage_cmd(campaign: Path, minutes: float, only: tuple[str, ...], force: bool, python: str) -> None:
    """Reduce every unreduced finding of a campaign (or one finding folder) and draft bug reports.

    Writes reduced/repro.py, reduced/state.json and report.md in each finding folder and prints
    one row per finding: signature, symptom, stage/pass, size and passes before -> after, status.

    Example: seedzer triage campaigns/basic-1 --minutes 5
    """
    if minutes <= 0:
        raise SeedzerError("--minutes must be > 0")
    folders = [f for f in finding_dirs(campaign) if not only or f.name in only]
    if not folders:
        raise SeedzerError(f"{campaign}: no finding matches --only {', '.join(only)}")
    options = TriageOptions(minutes=minutes, force=force, python=python)
    table = Table(title=f"triage of {campaign}")
    for col in ("signature", "kind", "symptom", "stage/pass", "size", "passes", "tests", "status"):
        table.add_column(col)
    results = []
    for folder in folders:
        click.echo(f"triage: {folder.name} ...", err=True)
        res = _triage_one(folder, options)
        results.append(res.to_dict())
        table.add_row(res.signature, res.kind, res.symptom, res.where, _fmt(res.size_before, res.size_after)
                      + (f" {res.unit}" if res.size_before is not None else ""),
                      _fmt(res.passes_before, res.passes_after), str(res.tests), res.status)
    Console(width=max(Console().width, 140)).print(table)
    summary = Path(campaign) / "triage.json" if (Path(campaign) / "findings").is_dir() else None
    if summary is not None:
        summary.write_text(json.dumps(results, indent=1))


@click.command("replay")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--reduced", is_flag=True, help="Run reduced/repro.py (written by `seedzer triage`) instead.")
@PYTHON_OPTION
def replay_cmd(path: Path, reduced: bool, python: str) -> None:
    """Re-run the reproducer of one finding or of every finding of a campaign in a clean process.

    Prints still-present / fixed / error per finding; exit status 1 when any bug is still present.

    Example: seedzer replay campaigns/basic-1 --python /opt/tvm-next/bin/python
    """
    table = Table(title=f"replay of {path}")
    for col in ("signature", "symptom", "verdict", "exit", "seconds", "detail"):
        table.add_column(col)
    present = False
    for folder in finding_dirs(path):
        res = replay_one(folder, python, reduced)
        present |= res.verdict == "still-present"
        table.add_row(res.signature, res.symptom, res.verdict, str(res.returncode), f"{res.seconds:.1f}",
                      res.detail)
    Console(width=max(Console().width, 140)).print(table)
    sys.exit(1 if present else 0)


@click.command("recheck")
@click.argument("campaign", type=click.Path(path_type=Path))
@click.option("--only", "only", multiple=True, help="Re-judge only these signatures (repeatable).")
@click.option("--models", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Where the pool models of older loader findings are now (looked up by file name).")
def recheck_cmd(campaign: Path, only: tuple[str, ...], models: Path | None) -> None:
    """Re-judge every finding of a campaign with the current filing gate (also campaigns written by
    older Seedzer versions) and record each verdict in its meta.json and campaign.db.

    Prints one line per finding: signature, bug or not-a-bug, reason (for a bug: its culprit passes
    and root signature), then the number of bugs and the not-a-bug counts by reason.

    Example: seedzer recheck campaigns/basic-1 --models seedpools/basic
    """
    from collections import Counter

    from seedzer.finding.verdict import reason_code

    def line(row: RecheckRow) -> None:
        why = (f"{' + '.join(row.culprit) or '-'} (root {row.root})" if row.verdict == "bug" else row.reason)
        click.echo(f"{row.signature}  {row.verdict:<9}  {row.symptom:<9}  {why[:200]}")

    rows = recheck(campaign, only, line, models)
    roots = {r.root for r in rows if r.verdict == "bug"}
    dismissed = Counter(reason_code(r.reason) for r in rows if r.verdict == "not-a-bug")
    errors = sum(r.verdict == "error" for r in rows)
    click.echo(f"{len(rows)} findings: {len(roots)} distinct bugs ({sum(r.verdict == 'bug' for r in rows)} "
               f"findings), not bugs: " + (", ".join(f"{k} {v}" for k, v in dismissed.most_common()) or "none")
               + (f"; {errors} could not be judged" if errors else ""))
