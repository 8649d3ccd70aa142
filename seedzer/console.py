"""Where text from outside becomes console output: the one console, table and line printer of Seedzer.

Text Seedzer did not write itself reaches the terminal from many places: names in models (nodes,
tensors, graphs), TVM's messages, files on disk (pool file names, ``meta.json`` fields), the ledger
(links, notes) and campaign.db rows. Any of it may hold rich markup (``[/]`` makes rich raise
``MarkupError``; ``[bold red]`` or ``[link=...]`` would style the output) or terminal control
sequences (``ESC ]0;title BEL`` sets the window's title, ``ESC [2J`` clears the screen). Every command,
the live monitor and the error boundary print through this module, so that neither can happen:

* :func:`visible` is the rule: a value as one line of plain text, each control character (C0 but the
  tab, DEL, C1, the line and paragraph separators, the bidirectional overrides) shown as an escape
  (``\\x1b``, ``\\n``, ``\\u202e``), a non-UTF-8 file name's bytes as ``\\xNN``;
* :class:`SafeConsole` never interprets markup or emoji codes, and shows control characters visibly in
  every string and every segment it renders (line breaks stay: they are its own layout);
* :class:`SafeTable` makes every cell, its title and caption :func:`visible` text that no console
  reads as markup (one line per row, whatever the console);
* :func:`echo` prints one line with click (standard output or error, or a stream).

``tests/unit/test_console.py`` checks that no module of Seedzer makes a rich ``Console`` or ``Table``,
calls ``click.echo`` or ``print`` for the terminal itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any

import click
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from seedzer.errors import shown

_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}
_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
_SEPARATORS_AND_OVERRIDES = [0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def _escape(code: int) -> str:
    return _NAMED.get(chr(code), f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


_ONE_LINE = {code: _escape(code) for code in [*_CONTROLS, *_SEPARATORS_AND_OVERRIDES] if code != ord("\t")}
"""What :func:`visible` replaces: every control character but the tab, with the line breaks."""
_LAYOUT = {code: text for code, text in _ONE_LINE.items() if code != ord("\n")}
"""What the console and :func:`echo` replace in text of their own: the same but the line break."""


def visible(value: object) -> str:
    """``value`` as one line of text that is safe on a terminal: control characters and sequences shown
    as escapes (``\\x1b``, ``\\n``), bytes of a non-UTF-8 file name as ``\\xNN``. It holds no markup
    either, but only the module's console and table keep it from being read as markup."""
    return shown(value).translate(_ONE_LINE)


def _layout_only(text: str) -> str:
    """``text`` with every control character shown but its line breaks (and tabs) kept."""
    return shown(text).translate(_LAYOUT)


def _is_plain(text: str) -> bool:
    return text.isprintable() or _layout_only(text) == text


class SafeConsole(Console):
    """A rich console for Seedzer's output: no markup, no emoji codes, no highlighting, and control
    characters shown visibly in every string and segment it renders (a Text, a table, a live line).

    ``min_width``: at least this many columns, even on a narrower terminal or a pipe (tables of long
    names fold less)."""

    def __init__(self, *, min_width: int = 0, **kwargs: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, **kwargs)
        if min_width and self.width < min_width:
            self.width = min_width

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """A string as Text, never read as markup or emoji codes, its control characters shown."""
        kwargs.update(markup=False, emoji=False)
        return super().render_str(_layout_only(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """rich's segments, those of text (not the console's own cursor controls) with their control
        characters shown: the last guard for a Text made from outside text elsewhere."""
        for segment in super().render(renderable, options):
            if segment.control or _is_plain(segment.text):
                yield segment
            else:
                yield Segment(_layout_only(segment.text), segment.style)


def _cell(value: RenderableType | None) -> RenderableType | None:
    return Text(visible(value)) if isinstance(value, str) else value


class SafeTable(Table):
    """A rich table whose title, caption and string cells are :func:`visible` Text: one line each, never
    markup, on any console."""

    def __init__(self, *headers: str, title: str | None = None, caption: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*headers, **kwargs)
        self.title = None if title is None else Text(visible(title), style=self.title_style or "table.title")
        self.caption = None if caption is None else Text(visible(caption),
                                                         style=self.caption_style or "table.caption")

    def add_row(self, *renderables: RenderableType | None, **kwargs: Any) -> None:
        """Add a row; a string cell is shown as :func:`visible` text."""
        super().add_row(*(_cell(value) for value in renderables), **kwargs)


def echo(text: object, *, err: bool = False, file: IO[str] | None = None, nl: bool = True,
         redraw: bool = False) -> None:
    """Print ``text`` as one :func:`visible` line on standard output (``err``: standard error; ``file``:
    that stream); ``redraw``: over the line the cursor is on (a carriage return first)."""
    click.echo(("\r" if redraw else "") + visible(text), file=file, err=err, nl=nl)


def echo_lines(lines: Iterable[object], *, err: bool = False, file: IO[str] | None = None) -> None:
    """Print several lines at once (a listing, a file's text): each one :func:`visible`."""
    click.echo("".join(visible(line) + "\n" for line in lines), file=file, err=err, nl=False)
