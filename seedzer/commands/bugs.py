"""The ``seedzer bugs`` verbs: the ledger of bug roots across campaigns (:mod:`seedzer.ledger`): list it
(with which campaigns found which roots), mark a root's state, record a campaign, export reports, and the
table of known upstream bugs (list, export, import)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import click

from seedzer.campaign.ledger_roots import campaign_ledger, record_campaign
from seedzer.cli_group import CONFIG_OPTION
from seedzer.commands.bugs_export import export_root, plan_export
from seedzer.config import Config, load_config, read_text
from seedzer.console import SafeConsole, SafeTable, echo
from seedzer.errors import UsageError, shown
from seedzer.finding.known_upstream import parse_table, shipped
from seedzer.ledger.location import ledger_path
from seedzer.ledger.records import CAMPAIGN, IMPORT, RECHECK, REPORTED, STATES, TRIAL, LedgerRoot
from seedzer.ledger.store import Ledger
from seedzer.ledger.upstream import ReportedRoot, dump_table, merged

LEDGER_OPTION = click.option("--ledger", "ledger", type=click.Path(path_type=Path), default=None,
                             help="The ledger file (default: ledger.path, else ledger.db beside the seed pools).")


def _path(ledger: Path | None, cfg: Config, campaign: Path | None = None) -> Path:
    if ledger is not None:
        return ledger
    if campaign is not None:
        found = campaign_ledger(campaign, cfg)
        if found is not None:
            return found
    return ledger_path(cfg.ledger.path, None, cfg.generate.pool_dir)


def _day(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds)) if seconds else "-"


def _name(campaign: str) -> str:
    return Path(campaign).name


def _roots_table(path: Path, roots: list[LedgerRoot]) -> SafeTable:
    table = SafeTable(title=f"Ledger {path}: {len(roots)} bug roots")
    for col in ("root", "kind", "symptom", "culprit", "state", "first seen", "last seen", "campaigns",
                "present in", "what happened"):
        table.add_column(col, overflow="fold")
    for r in roots:
        state = r.state + (f" {r.link}" if r.link else "") + (f"; merged into {r.merged_into}" if r.merged_into else "")
        table.add_row(r.root, r.kind, r.symptom, r.culprit or "-", state, _day(r.first_seen), _day(r.last_seen),
                      ", ".join(_name(c) for c in r.campaigns), ", ".join(r.affected()) or "-", r.headline[:100])
    return table


def _overlap(roots: list[LedgerRoot], campaigns: list[str]) -> SafeTable:
    """Which of ``campaigns`` found which roots: every one of them, and each one alone."""
    table = SafeTable(title="Roots by campaign")
    table.add_column("found by")
    table.add_column("roots")
    table.add_column("which", overflow="fold")
    everyone = [r.root for r in roots if all(c in r.campaigns for c in campaigns)]
    label = "both" if len(campaigns) == 2 else f"all {len(campaigns)}"
    table.add_row(f"{label} ({', '.join(_name(c) for c in campaigns)})", str(len(everyone)), ", ".join(everyone))
    for c in campaigns:
        alone = [r.root for r in roots if c in r.campaigns and not any(o in r.campaigns for o in campaigns if o != c)]
        table.add_row(f"only {_name(c)}", str(len(alone)), ", ".join(alone))
    return table


@click.group("bugs", invoke_without_command=True)
@LEDGER_OPTION
@click.option("--campaign", "campaigns", multiple=True, type=click.Path(path_type=Path),
              help="Only roots these campaigns found, and which of them found which (repeatable).")
@click.option("--state", "states", multiple=True, type=click.Choice(STATES), help="Only roots in this state.")
@CONFIG_OPTION
@click.pass_context
def bugs_group(ctx: click.Context, ledger: Path | None, campaigns: tuple[Path, ...], states: tuple[str, ...],
               config_path: Path | None) -> None:
    """The ledger of bug roots across campaigns: with no sub-command, list it (first and last seen,
    campaigns, the versions each affects, its state), and which campaigns found which roots.

    Example: seedzer bugs --campaign campaigns/b1 --campaign campaigns/b2
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = (ledger, config_path)
        return
    cfg = load_config(config_path)
    path = _path(ledger, cfg, campaigns[0] if campaigns else None)
    with Ledger(path, readonly=True) as book:
        roots = book.roots()
    wanted = [str(Path(c).resolve()) for c in campaigns]
    known = {c for r in roots for c in r.campaigns}
    for c, given in zip(wanted, campaigns, strict=True):
        if c not in known:
            raise UsageError(f"--campaign {shown(given)}: not in the ledger {path} (record it: seedzer bugs add)")
    if wanted:
        roots = [r for r in roots if any(c in r.campaigns for c in wanted)]
    if states:
        roots = [r for r in roots if r.state in states]
    console = SafeConsole(min_width=160)
    console.print(_roots_table(path, roots))
    together = wanted or sorted(known)
    if len(together) >= 2:
        console.print(_overlap(roots, together))


def _context(ctx: click.Context) -> tuple[Path | None, Config]:
    ledger, config_path = ctx.obj or (None, None)
    return ledger, load_config(config_path)


@bugs_group.command("mark")
@click.argument("root")
@click.argument("state", type=click.Choice(STATES))
@click.option("--link", default="", help="Where it is reported (required for `reported`).")
@click.option("--note", default="", help="A note kept with the root.")
@click.pass_context
def bugs_mark(ctx: click.Context, root: str, state: str, link: str, note: str) -> None:
    """Give a root (or the one root a prefix names) a state: new, reported (with --link), fixed, wont-fix.
    Campaigns count a root marked reported, fixed or wont-fix as known instead of reporting it again.

    Example: seedzer bugs mark e980fcbed2ef reported --link https://github.com/apache/tvm/issues/12345
    """
    ledger, cfg = _context(ctx)
    if state == REPORTED and not link:
        raise UsageError("reported: give the report's --link")
    path = _path(ledger, cfg)
    with Ledger(path, create=False) as book:
        full = book.set_state(root, state, link, note)
        known = next(r for r in book.roots() if r.root == full)
        issue = ReportedRoot(full, known.kind, known.symptom, known.culprit, known.headline, link).issue() \
            if state == REPORTED else None
        table = {i.name: i for i in merged(shipped(), book.upstream())}
        if issue is not None:  # the user's upstream table: the issue (as the table knows it), now covering this root
            had = table.get(issue.name)
            if had is not None:
                roots = tuple(dict.fromkeys([*had.fingerprint.roots, full]))
                issue = dataclasses.replace(had, fingerprint=dataclasses.replace(had.fingerprint, roots=roots))
            book.put_upstream([issue])
    echo(f"{full}: {state}" + (f" {link}" if link else "") + f" ({path})"
         + (f"; upstream table: {issue.name} covers it" if issue is not None else ""))


@bugs_group.command("add")
@click.argument("campaigns", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--as", "source", type=click.Choice([CAMPAIGN, TRIAL, RECHECK, IMPORT]), default=IMPORT,
              show_default=True, help="What the ledger records the campaign as.")
@click.pass_context
def bugs_add(ctx: click.Context, campaigns: tuple[Path, ...], source: str) -> None:
    """Record the bug roots of campaigns in the ledger (those a ledger could not record when they ended, or
    made before it existed).

    Example: seedzer bugs add campaigns/b1
    """
    ledger, cfg = _context(ctx)
    for campaign in campaigns:
        path = _path(ledger, cfg, campaign)
        new = record_campaign(campaign, path, source)
        echo(f"{campaign}: roots recorded in {path} ({len(new)} new: {', '.join(new) or 'none'})")


@bugs_group.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.argument("roots", nargs=-1)
@click.option("--state", "states", multiple=True, type=click.Choice(STATES), help="Every root in this state.")
@click.option("--force", is_flag=True, help="Replace files of an earlier export that differ (your edits to them too).")
@click.pass_context
def bugs_export(ctx: click.Context, out: Path, roots: tuple[str, ...], states: tuple[str, ...], force: bool) -> None:
    """Copy the reports of the roots chosen (by signature or prefix, or by --state) into OUT/<root>/:
    report.md, minimal.py, minimal.json, repro.py of the newest finding folder of each root that holds a
    report. A file an earlier export left there that differs (edited since) is never replaced without
    --force; a root named without a report in any campaign is an error; nothing is written then.

    Example: seedzer bugs export reports/ e980fcbed2ef 7e74 --state new
    """
    ledger, cfg = _context(ctx)
    path = _path(ledger, cfg)
    with Ledger(path, readonly=True) as book:
        named = {book.find(r) for r in roots}
        every = book.roots()
    chosen = [r for r in every if r.root in named or r.state in states]
    if not chosen:
        raise UsageError(f"--state {' / '.join(states)}: no root in that state" if states
                         else "name roots to export, or --state")
    plan = plan_export(chosen, named, out, force)
    if not plan.exports:
        raise UsageError(f"--state {' / '.join(states)}: none of its {len(plan.unreported)} root(s) has a report.md "
                         "yet (run `seedzer triage`)")
    for r in plan.unreported:
        echo(f"warning: {r.root}: no report.md in any campaign that found it (run `seedzer triage` there); "
             "skipped", err=True)
    for export in plan.exports:
        copied = export_root(export)
        echo(f"{export.root}: {', '.join(copied)} -> {export.target} (from {export.source})")


@bugs_group.group("upstream", invoke_without_command=True)
@click.pass_context
def bugs_upstream(ctx: click.Context) -> None:
    """The known upstream bugs: with no sub-command, list the table (the rows shipped with Seedzer and the
    ledger's own, which replace shipped rows of the same issue). A root that matches a row is counted as
    known ("known upstream apache/tvm#N") instead of being drafted as a new report.

    Example: seedzer bugs upstream
    """
    if ctx.invoked_subcommand is not None:
        return
    ledger, cfg = _context(ctx)
    path = _path(ledger, cfg)
    mine = []
    if path.exists():
        with Ledger(path, create=False) as book:
            mine = book.upstream()
    names = {i.name for i in mine}
    table = SafeTable(title=f"Known upstream bugs ({len(shipped())} shipped, {len(mine)} in {path})")
    for col in ("issue", "state", "title", "fingerprint", "fixed in", "from"):
        table.add_column(col, overflow="fold")
    for issue in merged(shipped(), mine):
        printed = ", ".join(f"{k}={v}" for k, v in issue.fingerprint.to_json().items())
        table.add_row(issue.url, issue.state, issue.title[:100], printed, issue.fixed_in or "-",
                      "ledger" if issue.name in names else "shipped")
    SafeConsole(min_width=160).print(table)


@bugs_upstream.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.pass_context
def bugs_upstream_export(ctx: click.Context, out: Path) -> None:
    """Write the ledger's own upstream rows (those `bugs mark ... reported` and `bugs upstream import` made) to
    OUT, a table another ledger imports.

    Example: seedzer bugs upstream export my-upstream.yaml
    """
    ledger, cfg = _context(ctx)
    path = _path(ledger, cfg)
    with Ledger(path, create=False) as book:
        rows = book.upstream()
    try:
        Path(out).write_text(dump_table(rows), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{shown(out)}: cannot write ({exc.strerror or exc})") from None
    echo(f"{out}: {len(rows)} upstream row(s) of {path}")


@bugs_upstream.command("import")
@click.argument("table_file", type=click.Path(path_type=Path))
@click.pass_context
def bugs_upstream_import(ctx: click.Context, table_file: Path) -> None:
    """Add the rows of TABLE_FILE (as `bugs upstream export` writes it, or upstream.yaml's form) to the ledger's
    upstream table; a row of an issue the ledger has replaces it. A file that is no table is a one-line error
    and changes nothing.

    Example: seedzer bugs upstream import my-upstream.yaml
    """
    ledger, cfg = _context(ctx)
    rows = parse_table(read_text(table_file, "upstream table"), shown(table_file))
    path = _path(ledger, cfg)
    with Ledger(path) as book:
        names = book.put_upstream(rows)
    echo(f"{path}: {len(names)} upstream row(s) imported ({', '.join(names) or 'none'})")
