"""Text from outside as console output (:mod:`seedzer.console`): shown, never obeyed, one line per value;
and no module of Seedzer prints to the terminal around it."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.text import Text

from seedzer.console import SafeConsole, SafeTable, echo, echo_lines, visible

HOSTILE = "a [/] [bold red]b[link=file:///etc/passwd]c \x1b]0;pwned\x07 \x1b[2J\r\nd\x9b31m \u202eevil\udcff"
"""Markup that raises or styles, a set-title and a clear-screen sequence, a carriage return and a line
break, a C1 CSI, a right-to-left override and a non-UTF-8 file name's byte."""
RAW = ("\x1b", "\x07", "\x9b", "\r", "\u202e", "\udcff")


def test_visible_shows_every_control_character_as_an_escape_on_one_line() -> None:
    shown = visible(HOSTILE)
    assert "\n" not in shown and not any(c in shown for c in RAW)
    assert shown == ("a [/] [bold red]b[link=file:///etc/passwd]c \\x1b]0;pwned\\x07 \\x1b[2J\\r\\nd\\x9b31m "
                     "\\u202eevil\\xff")
    assert visible("tab\tstays") == "tab\tstays" and visible(Path("p/[x]")) == "p/[x]"


@pytest.mark.parametrize("plain_console", [True, False])
def test_a_safe_table_shows_its_cells_and_title_literally_on_any_console(plain_console: bool) -> None:
    out = io.StringIO()
    console = (Console(file=out, width=300, force_terminal=False) if plain_console
               else SafeConsole(file=out, width=300))
    table = SafeTable(title=f"title {HOSTILE}", caption="[/]")
    table.add_column("name")
    table.add_column("n", justify="right")
    table.add_row(HOSTILE, "1")
    table.add_row(Text("x"), None)
    console.print(table)  # a markup console raised MarkupError on "[/]"
    text = out.getvalue()
    assert not any(c in text for c in RAW)
    assert text.count("[bold red]b[link=file:///etc/passwd]c") == 2  # the title and the cell, as written
    assert sum("│" in line for line in text.splitlines()) == 2  # one line per row, whatever the cell held


def test_the_safe_console_reads_no_markup_and_shows_control_characters_of_any_text() -> None:
    out = io.StringIO()
    console = SafeConsole(file=out, width=300, force_terminal=True)
    console.print(f"plain {HOSTILE}")
    console.print(Text(f"built elsewhere {HOSTILE}"))  # a Text made without visible(): the last guard
    console.print(":smile: [bold]not bold[/bold]")
    text = out.getvalue()
    assert "\x1b]0;pwned" not in text and "\x1b[2J" not in text and "\x07" not in text and "\u202e" not in text
    assert text.count("\\x1b]0;pwned") == 2  # (a Text drops the bell itself)
    assert ":smile: [bold]not bold[/bold]" in text


def test_the_safe_console_keeps_its_minimum_width() -> None:
    assert SafeConsole(file=io.StringIO(), width=80, min_width=160).width == 160
    assert SafeConsole(file=io.StringIO(), width=200, min_width=160).width == 200


def test_echo_prints_one_visible_line_and_echo_lines_one_per_line() -> None:
    got = CliRunner().invoke(_cli, [])
    assert got.exit_code == 0, got.output
    assert got.stdout == (visible(HOSTILE) + "\n" + "first\n" + visible("sec\x1bond") + "\n" + "\rredrawn")
    assert got.stderr == visible(HOSTILE) + "\n"


@click.command()
def _cli() -> None:
    echo(HOSTILE)
    echo(HOSTILE, err=True)
    echo_lines(["first", "sec\x1bond"])
    echo("redrawn", nl=False, redraw=True)

# --- nothing prints to the terminal around seedzer.console -------------------------------------------
PACKAGE = Path(__file__).resolve().parents[2] / "seedzer"
NOT_THE_TERMINAL = {
    ("coverage/workload.py", "print"): "the workload child's JSON report to its parent (json.dumps escapes)",
    ("finding/minimal/harness.py", "print"): "inside the forked child running minimal.py, into its output file",
}
"""Calls the scan allows, each with why its output is not the terminal's."""
RICH_MAKERS = {"Console", "Table"}
"""rich's classes a module must not make (SafeConsole and SafeTable are theirs)."""
RICH_NEEDING_A_CONSOLE = {"Live", "Progress"}
"""rich's classes that would make a console of their own unless given one."""


def _rich_names(tree: ast.Module) -> set[str]:
    """The names a module imports from rich (``from rich.table import Table``)."""
    return {alias.asname or alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rich"
            for alias in node.names}


def _called(node: ast.Call, rich: set[str]) -> str | None:
    """What a call does that only seedzer.console may do, or None."""
    func = node.func
    if isinstance(func, ast.Name):
        if func.id == "print" or (func.id in rich and func.id in RICH_MAKERS):
            return func.id
        if func.id in rich and func.id in RICH_NEEDING_A_CONSOLE and \
                not any(k.arg == "console" for k in node.keywords):
            return f"{func.id} without console="
    if isinstance(func, ast.Attribute):
        owner = ast.unparse(func.value)
        if owner == "click" and func.attr in ("echo", "secho"):
            return f"click.{func.attr}"
        if owner.startswith("rich") and func.attr in RICH_MAKERS:
            return func.attr
        if owner in ("sys.stdout", "sys.stderr") and func.attr == "write":
            return f"{owner}.write"
    return None


def test_no_module_prints_to_the_terminal_but_through_seedzer_console() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "console.py" or rel.startswith("kernel/"):  # the kernel: the reproducers' own stand-alone code
            continue
        tree = ast.parse(path.read_text(), str(path))
        rich = _rich_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _called(node, rich)
                if name is not None and (rel, name) not in NOT_THE_TERMINAL:
                    found.append(f"{rel}:{node.lineno}: {name}(...)")
    assert not found, "print through seedzer.console (SafeConsole, SafeTable, echo):\n" + "\n".join(found)


def test_the_scan_finds_what_it_forbids() -> None:
    tree = ast.parse("from rich.console import Console\nfrom rich.live import Live\nprint(x)\nclick.echo(x)\n"
                     "Console()\nrich.table.Table()\nsys.stderr.write(x)\nLive(t)\nLive(t, console=c)\n"
                     "SafeTable()\necho(x)\nProgress(x)\n")
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert [_called(c, _rich_names(tree)) for c in calls] == [
        "print", "click.echo", "Console", "Table", "sys.stderr.write", "Live without console=", None, None, None,
        None]
