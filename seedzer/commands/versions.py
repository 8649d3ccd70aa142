"""The ``seedzer versions`` verb: which TVM releases each bug root affects (:mod:`seedzer.finding.affected`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from seedzer.campaign.ledger_roots import campaign_ledger
from seedzer.cli_group import CONFIG_OPTION
from seedzer.config import load_config
from seedzer.console import SafeConsole, SafeTable, echo
from seedzer.environments.wheels import tvm_source
from seedzer.errors import SeedzerError, UsageError
from seedzer.finding.affected import VersionsTable, check_sources, root_programs, run_versions
from seedzer.finding.minimal.verify import VerifySettings
from seedzer.ledger.records import VersionVerdict
from seedzer.ledger.store import Ledger

VERSIONS_FILE = "versions.json"
"""What ``seedzer versions`` writes into each campaign directory it checked."""


def _table(table: VersionsTable) -> SafeTable:
    regressions = table.regressions()
    out = SafeTable(title="Which TVM releases each root affects (present / fixed / no verdict)")
    for col in ("root", "kind", "symptom", "component", "lines", *table.versions, "regression"):
        out.add_column(col, overflow="fold")
    for r in table.roots:
        cells = [table.cells.get((r.root, v)) for v in table.versions]
        shown = [c.verdict if c is not None else "-" for c in cells]
        regression = f"fixed in {regressions[r.root][0]}, present in {regressions[r.root][1]}" \
            if r.root in regressions else ""
        out.add_row(r.root, r.kind, r.symptom, r.component, str(r.lines), *shown, regression)
    return out


def _write(campaigns: tuple[Path, ...], table: VersionsTable) -> None:
    """``versions.json`` in each campaign: its roots' verdicts by version."""
    for campaign in campaigns:
        mine = [r for r in table.roots if Path(campaign).resolve() in r.folder.resolve().parents]
        data = {r.root: {v: {"verdict": c.verdict, "detail": c.detail} for v in table.versions
                         if (c := table.cells.get((r.root, v))) is not None} for r in mine}
        (Path(campaign) / VERSIONS_FILE).write_text(json.dumps({"versions": table.versions, "roots": data}, indent=1))


def _record(path: Path | None, table: VersionsTable) -> str:
    if path is None:
        return "the ledger is off"
    try:
        with Ledger(path) as ledger:
            for r in table.roots:
                ledger.record_versions(r.root, [VersionVerdict(v, c.verdict, c.detail) for v in table.versions
                                                if (c := table.cells.get((r.root, v))) is not None])
    except SeedzerError as exc:
        return f"not recorded in the ledger: {exc}"
    return f"recorded in the ledger {path}"


@click.command("versions")
@click.argument("campaigns", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--version", "versions", multiple=True, metavar="VERSION|WHEEL",
              help="Also run on this apache-tvm release (0.28.0) or local wheel (path to a .whl); repeatable.")
@click.option("--only-given", is_flag=True, help="Run only on the --version values, not on reproducers.versions.")
@click.option("--only", "only", multiple=True, help="Only these roots (repeatable).")
@CONFIG_OPTION
def versions_cmd(campaigns: tuple[Path, ...], versions: tuple[str, ...], only_given: bool, only: tuple[str, ...],
                 config_path: Path | None) -> None:
    """Run every bug root's plain reproducer (minimal.py, made by `seedzer triage`) against other TVM
    releases, each in a cached virtual environment (made once with pip, then reused): present, fixed,
    or no verdict (cannot run there: an import or an API that release lacks). A root present in a
    release and fixed in the release before it is marked a regression. Writes versions.json into each
    campaign and records the verdicts in the ledger.

    Example: seedzer versions campaigns/b1 --version 0.28.0 --version ~/wheels/tvm-nightly.whl
    """
    cfg = load_config(config_path)
    listed = list(versions) if only_given else [*cfg.reproducers.versions, *versions]
    if not listed:
        raise UsageError("--only-given: name at least one --version")
    sources = list({s.label: s for s in map(tvm_source, dict.fromkeys(listed))}.values())
    check_sources(sources, cfg.reproducers.pip_args)
    roots, missing = root_programs(campaigns)
    roots = [r for r in roots if not only or any(r.root.startswith(o) for o in only)]
    for root, why in sorted(missing.items()):
        echo(f"warning: root {root}: {why}; skipped", err=True)
    if not roots:
        raise UsageError(f"{', '.join(map(str, campaigns))}: no bug root with a verified minimal.py "
                         "(run `seedzer triage` first)")
    settings = VerifySettings(environments=cfg.reproducers.venvs, max_gb=cfg.reproducers.venvs_max_gb,
                              pip_args=tuple(cfg.reproducers.pip_args))
    table = run_versions(roots, sources, settings, lambda line: echo(line, err=True))
    SafeConsole(min_width=160).print(_table(table))
    for root, (fixed, present) in table.regressions().items():
        echo(f"regression: {root} is fixed in {fixed} and present in {present}")
    made = ", ".join(f"{name} ({seconds:.0f} s)" for name, seconds in table.created) or "none (all cached)"
    echo(f"{len(table.roots)} roots x {len(table.versions)} versions in {table.seconds:.0f} s; "
               f"environments created: {made}")
    _write(campaigns, table)
    echo(_record(campaign_ledger(campaigns[0], cfg), table))
