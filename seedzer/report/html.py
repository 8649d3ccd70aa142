"""One self-contained HTML page: tables as HTML, figures embedded as base64 SVG (no external files)."""

from __future__ import annotations

import base64
import html
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}
tr.sig td{background:#eef6ee}
img{max-width:100%;height:auto;display:block;margin:.6em 0}
.note{color:#666;font-size:.88em}.warn{color:#a33}
code{background:#f6f6f6;padding:0 .2em}
"""


@dataclass
class Figure:
    """A figure of the page: its title, the SVG file to embed and a caption."""

    title: str
    svg: Path
    caption: str = ""


@dataclass
class Section:
    """A titled part of the page made of paragraphs, tables and figures, in order."""

    title: str
    blocks: list[str] = field(default_factory=list)

    def text(self, content: str, css: str = "") -> Section:
        """Append a paragraph (escaped)."""
        cls = f' class="{css}"' if css else ""
        self.blocks.append(f"<p{cls}>{html.escape(content)}</p>")
        return self

    def table(self, df: pd.DataFrame, *, index: bool = False, highlight: str | None = None) -> Section:
        """Append a table; rows whose boolean column ``highlight`` is true are shaded."""
        self.blocks.append(table_html(df, index=index, highlight=highlight))
        return self

    def figure(self, fig: Figure) -> Section:
        """Append an embedded figure with its caption."""
        self.blocks.append(figure_html(fig))
        return self


def _cell(value: Any) -> tuple[str, bool]:
    if isinstance(value, float):
        if value != value:  # NaN
            return "", False
        text = f"{value:.4g}" if abs(value) < 1e-3 and value != 0 else f"{value:,.3f}".rstrip("0").rstrip(".")
        return text, False
    if isinstance(value, bool):
        return ("yes" if value else "no"), True
    if isinstance(value, int):
        return f"{value:,}", False
    return str(value), True


def table_html(df: pd.DataFrame, *, index: bool = False, highlight: str | None = None) -> str:
    """An escaped HTML table of ``df``; text cells are left-aligned, numbers right-aligned."""
    if df.empty:
        return '<p class="note">(none)</p>'
    frame = df.reset_index() if index else df
    cols = [c for c in frame.columns if c != highlight]
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    rows = []
    for rec in frame.to_dict("records"):
        cells = []
        for c in cols:
            v = rec[c]
            v = v.item() if hasattr(v, "item") else v
            text, is_text = _cell(v)
            cells.append(f'<td{" class=l" if is_text else ""}>{html.escape(text)}</td>')
        cls = ' class="sig"' if highlight and bool(rec.get(highlight)) else ""
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def figure_html(fig: Figure) -> str:
    """The figure's SVG embedded as a base64 data URI, with title and caption."""
    try:
        data = base64.b64encode(Path(fig.svg).read_bytes()).decode("ascii")
    except OSError:
        return f'<p class="warn">figure {html.escape(fig.title)} missing ({html.escape(str(fig.svg))})</p>'
    caption = f'<p class="note">{html.escape(fig.caption)}</p>' if fig.caption else ""
    return (f"<h3>{html.escape(fig.title)}</h3>"
            f'<img alt="{html.escape(fig.title)}" src="data:image/svg+xml;base64,{data}">{caption}')


def render_page(title: str, intro: Sequence[str], sections: Sequence[Section], *,
                refresh: float | None = None) -> str:
    """The whole page; ``refresh`` (seconds) adds a meta refresh for pages rebuilt by ``--watch``."""
    meta = f'<meta http-equiv="refresh" content="{int(refresh)}">' if refresh else ""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>{meta}<title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             f'<p class="note">generated {html.escape(stamp)} by seedzer report</p>']
    parts.extend(f"<p>{html.escape(p)}</p>" for p in intro)
    for s in sections:
        parts.append(f"<h2>{html.escape(s.title)}</h2>")
        parts.extend(s.blocks)
    parts.append("</body></html>")
    return "\n".join(parts)
