"""The ``seedzer triage``, ``seedzer replay`` and ``seedzer recheck`` verbs."""

from __future__ import annotations

import errno
import json
import os
import sys
import tempfile
from pathlib import Path

import click

from seedzer.cli_group import CONFIG_OPTION, MINUTES
from seedzer.config import Config, load_config
from seedzer.console import SafeConsole, SafeTable, echo
from seedzer.errors import SeedzerError, shown
from seedzer.finding.kind import FindingKind, TriageOptions, TriageResult
from seedzer.finding.known_upstream import shipped
from seedzer.finding.layout import REDUCED_DIR
from seedzer.finding.meta import FindingMeta
from seedzer.finding.minimal.verify import VerifySettings
from seedzer.finding.recheck import (
    DISMISSED,
    RECHECK_FILE,
    REKEYED,
    UNCHANGED,
    RecheckRow,
    RootMove,
    recheck,
    root_changes,
    root_map,
)
from seedzer.finding.registry import kind
from seedzer.finding.replay import finding_dirs, replay_one
from seedzer.finding.repro import check_interpreter
from seedzer.ledger.records import RECHECK
from seedzer.ledger.upstream import UpstreamIssue

PYTHON_OPTION = click.option(
    "--python", "python", default=sys.executable, show_default="this interpreter",
    help="Python interpreter that runs the reproducers (e.g. a virtualenv with another TVM version).")




def _usable(folder: Path) -> tuple[FindingMeta, FindingKind] | str:
    """The finding's metadata and kind, or the one line saying why it cannot be triaged."""
    try:
        meta = FindingMeta.load(folder)  # its errors name the meta.json
    except SeedzerError as exc:
        return str(exc)
    try:
        return meta, kind(meta.kind)
    except SeedzerError as exc:
        return f"{folder}: {exc}"


def _unusable_row(folder: Path, why: str) -> TriageResult:
    try:
        meta = FindingMeta.load(folder)
    except SeedzerError:
        return TriageResult(folder.name, "?", "?", "?", "error", note=why)
    obs = meta.observation
    return TriageResult(folder.name, meta.kind, obs.symptom.value, obs.where(), "error", note=why)


def _write_problem(directory: Path) -> str | None:
    """Why nothing can be written in ``directory`` (None: a file could be created there).

    Asks the file system itself (root passes any permission check, but not a read-only mount)."""
    try:
        handle, name = tempfile.mkstemp(prefix=".seedzer-write-probe-", dir=directory)
    except OSError as exc:
        if exc.errno == errno.EROFS:
            return "read-only file system"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return "permission denied"
        return exc.strerror or str(exc)
    os.close(handle)
    os.unlink(name)
    return None


def check_writable(folders: list[Path], summary: Path | None) -> None:
    """Refuse, before any reduction starts, a finding folder (or its reduced/) triage cannot write into."""
    for folder in folders:
        for directory in (folder, folder / REDUCED_DIR):
            if directory.is_dir():
                why = _write_problem(directory)
                if why is not None:
                    raise SeedzerError(f"{shown(directory)}: cannot write there ({why}); triage writes the "
                                       f"reduction, reduced/repro.py and report.md into every finding folder")
    if summary is not None:
        why = _write_problem(summary.parent)
        if why is not None:
            raise SeedzerError(f"{shown(summary.parent)}: cannot write {summary.name} there ({why})")


def _triage_one(folder: Path, meta: FindingMeta, found: FindingKind, options: TriageOptions) -> TriageResult:
    try:
        return found.triage(folder, meta, options)
    except SeedzerError as exc:
        return TriageResult(folder.name, meta.kind, meta.observation.symptom.value, meta.observation.where(),
                            "error", note=str(exc))


def _fmt(before: int | None, after: int | None) -> str:
    if before is None:
        return "-"
    return f"{before} -> {after}" if after is not None else f"{before} -> ?"


@click.command("triage")
@click.argument("campaign", type=click.Path(path_type=Path))
@click.option("--minutes", type=MINUTES, default=5.0, show_default=True,
              help="Reduction budget per finding (a finding not finished in time resumes on the next run).")
@click.option("--only", "only", multiple=True, help="Triage only these signatures (repeatable).")
@click.option("--force", is_flag=True, help="Start reductions again instead of resuming or skipping them.")
@click.option("--no-fresh-env", "no_fresh_env", is_flag=True,
              help="Run minimal.py with --python instead of a fresh virtual environment (no download).")
@PYTHON_OPTION
@CONFIG_OPTION
def triage_cmd(campaign: Path, minutes: float, only: tuple[str, ...], force: bool, no_fresh_env: bool, python: str,
               config_path: Path | None) -> None:
    """Reduce every unreduced finding of a campaign (or one finding folder), make its plain reproducer and
    write its bug report.

    Writes reduced/repro.py, reduced/state.json, minimal.py (plain TVM, run in a fresh virtual
    environment holding only the packages it names), minimal.json and report.md (TVM's bug template) in
    each finding folder and prints one row per finding: signature, symptom, stage/pass, size and passes
    before -> after, status, the plain reproducer's lines and verdict, and a note.

    Checked before any finding is touched: that the findings have a readable meta.json of a known
    kind (when none has, that is the error), the interpreter (--python), and that every finding
    folder can be written.

    Example: seedzer triage campaigns/basic-1 --minutes 5
    """
    folders = [f for f in finding_dirs(campaign) if not only or f.name in only]
    if not folders:
        raise SeedzerError(f"{campaign}: no finding matches --only {', '.join(only)}")
    checked = {folder: _usable(folder) for folder in folders}
    problems = {folder: got for folder, got in checked.items() if isinstance(got, str)}
    if len(problems) == len(folders):
        first = next(iter(problems.values()))
        more = f" (and {len(problems) - 1} more finding(s) that cannot be triaged)" if len(problems) > 1 else ""
        raise SeedzerError(first + more)
    check_interpreter(python)
    summary = Path(campaign) / "triage.json" if (Path(campaign) / "findings").is_dir() else None
    check_writable([f for f in folders if f not in problems], summary)
    cfg = load_config(config_path).reproducers
    verify = VerifySettings(environments=cfg.venvs, max_gb=cfg.venvs_max_gb, fresh=cfg.fresh_env and not no_fresh_env,
                            python=python, pip_args=tuple(cfg.pip_args))
    options = TriageOptions(minutes=minutes, force=force, python=python, minimal_seconds=cfg.minutes * 60.0,
                            verify=verify)
    table = SafeTable(title=f"triage of {campaign}")
    for col in ("signature", "kind", "symptom", "stage/pass", "size", "passes", "tests", "status", "minimal.py",
                "note"):
        table.add_column(col)
    results = []
    for folder, got in checked.items():
        if isinstance(got, str):
            echo(f"warning: {got}; skipped", err=True)
            res = _unusable_row(folder, got)
        else:
            echo(f"triage: {folder.name} ...", err=True)
            res = _triage_one(folder, *got, options)
        results.append(res.to_dict())
        table.add_row(res.signature, res.kind, res.symptom, res.where, _fmt(res.size_before, res.size_after)
                      + (f" {res.unit}" if res.size_before is not None else ""),
                      _fmt(res.passes_before, res.passes_after), str(res.tests), res.status, res.minimal[:80] or "-",
                      res.note[:120])
    SafeConsole(min_width=160).print(table)
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
    folders = finding_dirs(path)
    check_interpreter(python)
    table = SafeTable(title=f"replay of {path}")
    for col in ("signature", "symptom", "verdict", "exit", "seconds", "detail"):
        table.add_column(col)
    present = False
    for folder in folders:
        res = replay_one(folder, python, reduced)
        present |= res.verdict == "still-present"
        table.add_row(res.signature, res.symptom, res.verdict, str(res.returncode), f"{res.seconds:.1f}",
                      res.detail)
    SafeConsole(min_width=140).print(table)
    sys.exit(1 if present else 0)


@click.command("recheck")
@click.argument("campaign", type=click.Path(path_type=Path))
@click.option("--only", "only", multiple=True, help="Re-judge only these signatures (repeatable).")
@click.option("--models", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Where the pool models of older load findings are now (looked up by file name).")
@CONFIG_OPTION
def recheck_cmd(campaign: Path, only: tuple[str, ...], models: Path | None, config_path: Path | None) -> None:
    """Re-judge every finding of a campaign with the current filing gate (also campaigns written by
    older Seedzer versions) and record each verdict in its meta.json and campaign.db, and the campaign's
    bug roots in the ledger.

    Prints one line per finding: signature, bug or not-a-bug, reason (for a bug: its culprit, the code
    at fault, and root signature), then the number of bugs and the not-a-bug counts by reason, then
    the old -> new root map: ``merged: A (culprit), B (culprit) -> C (culprit): evidence`` when several
    old roots are one bug now (e.g. one TOPI defect reached through two passes, or one converter reached
    through two model mutations), ``split:`` when one old root is several, ``re-blamed:`` when one root
    now names other code, ``re-keyed:`` when only its signature changed, ``dismissed:`` when none of its
    findings is a bug now. The map is also written to recheck.json in the campaign, and the ledger's rows
    of the campaign follow it (an old root's sightings move to its new roots; `seedzer bugs` says it was
    merged).

    Example: seedzer recheck campaigns/basic-1 --models seedpools/basic
    """
    from collections import Counter

    from seedzer.finding.verdict import reason_code

    def line(row: RecheckRow) -> None:
        why = (f"{' + '.join(row.culprit) or '-'} (root {row.root})" if row.verdict == "bug" else row.reason)
        echo(f"{row.signature}  {row.verdict:<9}  {row.symptom:<9}  {why[:200]}")

    cfg = load_config(config_path)
    rows = recheck(campaign, only, line, models, _upstream(campaign, cfg))
    roots = {r.root for r in rows if r.verdict == "bug"}
    dismissed = Counter(reason_code(r.reason) for r in rows if r.verdict == "not-a-bug")
    errors = sum(r.verdict == "error" for r in rows)
    echo(f"{len(rows)} findings: {len(roots)} distinct bugs ({sum(r.verdict == 'bug' for r in rows)} "
         f"findings), not bugs: " + (", ".join(f"{k} {v}" for k, v in dismissed.most_common()) or "none")
         + (f"; {errors} could not be judged" if errors else ""))
    for change in root_changes(rows):
        before = ", ".join(f"{root} ({culprit})" for root, culprit in change.before)
        after = ", ".join(f"{root} ({culprit})" for root, culprit in change.after)
        echo(f"{change.change}: {before} -> {after}" + (f": {change.evidence[:200]}" if change.evidence else ""))
    moves = root_map(rows)
    for move in (m for m in moves if m.change in (REKEYED, DISMISSED)):
        after = ", ".join(f"{root} ({culprit})" for root, culprit in move.new) or "not a bug"
        echo(f"{move.change}: {move.old} ({move.old_culprit}) -> {after}")
    counts = Counter(m.change for m in moves)
    old, new = len(moves), len({root for m in moves for root, _ in m.new})
    echo(f"old roots {old} -> new roots {new}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
         + f" (the map: {campaign / RECHECK_FILE})")
    _record(campaign, cfg, moves)


def _upstream(campaign: Path, cfg: Config) -> list[UpstreamIssue]:
    """The known upstream bugs for re-judging ``campaign``: the shipped table and its ledger's rows."""
    from seedzer.campaign.ledger_roots import campaign_ledger, upstream_table

    try:
        return upstream_table(campaign_ledger(campaign, cfg))
    except SeedzerError as exc:
        echo(f"warning: {exc}; only the upstream bugs shipped with Seedzer are recognised", err=True)
        return shipped()


def _record(campaign: Path, cfg: Config, moves: list[RootMove]) -> None:
    """Record the re-judged campaign's roots in its ledger and move the campaign's sightings of the roots the
    recheck re-keyed to their new roots (a ledger that cannot take them: one line)."""
    from seedzer.campaign.ledger_roots import campaign_ledger, record_campaign
    from seedzer.ledger.store import Ledger

    try:
        path = campaign_ledger(campaign, cfg)
        if path is None:
            return
        new = record_campaign(campaign, path, RECHECK)
        with Ledger(path) as ledger:
            gone = ledger.rekey(str(Path(campaign).resolve()),
                                {m.old: [root for root, _ in m.new] for m in moves if m.change != UNCHANGED}, RECHECK)
    except SeedzerError as exc:
        echo(f"warning: {exc}; the ledger was not updated (`seedzer bugs add {campaign}` does it later)", err=True)
        return
    echo(f"ledger {path}: roots recorded ({len(new)} new to it); {len(gone)} old root(s) no campaign sees any "
         "more, marked merged into their new roots")
