"""Report plots. Every plot function draws on given matplotlib axes from a DataFrame and returns
nothing; :func:`write_figure` wraps any of them into PNG and SVG files. Only the Agg backend is
used (no display, no pyplot global state).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from seedzer.report.table import CATEGORIES
from seedzer.store.atomic import write_atomic


def publish(path: Path, data: str | bytes) -> None:
    """Write a report file atomically and world-readable (served by the report container)."""
    write_atomic(path, data)
    os.chmod(path, 0o644)

matplotlib.use("Agg")  # files only: never a display

PlotFn = Callable[..., None]

CATEGORY_LABELS = {"segfault": "segfault (SIGSEGV)", "other_crash": "other crash",
                   "mismatch": "wrong result (mismatch)", "other": "other (exception, hang...)"}
CATEGORY_COLORS = {"segfault": "#b2182b", "other_crash": "#ef8a62", "mismatch": "#2166ac", "other": "#999999"}


def heuristic_colors(names: Sequence[str]) -> dict[str, Any]:
    """A stable color per heuristic (tab10 in sorted-name order)."""
    cmap = matplotlib.colormaps["tab10"]
    return {h: cmap(i % 10) for i, h in enumerate(sorted(names))}


def plot_over_time(ax: Axes, data: pd.DataFrame, *, ylabel: str = "coverage",
                   colors: dict[str, Any] | None = None) -> None:
    """Median over trials per heuristic (a line) with the 2.5-97.5 percentile band of trials (shaded),
    from :func:`seedzer.report.stats.over_time` output; time in minutes."""
    names = sorted(data["heuristic"].unique()) if not data.empty else []
    colors = colors or heuristic_colors(names)
    for h in names:
        g = data[data["heuristic"] == h].sort_values("time")
        minutes = g["time"].to_numpy(float) / 60.0
        ax.plot(minutes, g["median"].to_numpy(float), label=h, color=colors[h], linewidth=1.6)
        ax.fill_between(minutes, g["low"].to_numpy(float), g["high"].to_numpy(float), color=colors[h],
                        alpha=0.2, linewidth=0)
    ax.set_xlabel("campaign time (minutes)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if names:
        ax.legend(loc="best", fontsize="small")


def plot_final_distribution(ax: Axes, data: pd.DataFrame, *, ylabel: str = "final coverage",
                            style: str = "box", colors: dict[str, Any] | None = None) -> None:
    """Final values per heuristic (columns heuristic, value) as box or violin plots with every trial
    drawn as a point; a violin needs two distinct values per heuristic, else a box is drawn."""
    names = sorted(data["heuristic"].unique()) if not data.empty else []
    colors = colors or heuristic_colors(names)
    groups = [data.loc[data["heuristic"] == h, "value"].to_numpy(float) for h in names]
    pos = np.arange(1, len(names) + 1)
    if names:
        if style == "violin" and all(len(np.unique(g)) > 1 for g in groups):
            parts = ax.violinplot(groups, positions=pos, showmedians=True)
            for body, h in zip(parts["bodies"], names, strict=True):  # type: ignore[call-overload]
                body.set_facecolor(colors[h])
        else:
            ax.boxplot(groups, positions=pos, widths=0.5, showfliers=False)
        for p, g, h in zip(pos, groups, names, strict=True):
            offsets = np.linspace(-0.12, 0.12, len(g)) if len(g) > 1 else np.zeros(1)
            ax.scatter(p + offsets, g, color=colors[h], s=14, zorder=3)
    ax.set_xticks(pos, names, rotation=30 if len(names) > 4 else 0)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)


def plot_findings_by_category(ax: Axes, data: pd.DataFrame) -> None:
    """Stacked bars: distinct findings per heuristic split by category (index heuristic, one column
    per category, from :func:`seedzer.report.stats.findings_by_category`)."""
    names = list(data.index)
    x = np.arange(len(names))
    bottom = np.zeros(len(names))
    for cat in CATEGORIES:
        vals = data[cat].to_numpy(float) if cat in data else np.zeros(len(names))
        ax.bar(x, vals, bottom=bottom, color=CATEGORY_COLORS[cat], label=CATEGORY_LABELS[cat], width=0.6)
        bottom += vals
    for xi, total in zip(x, bottom, strict=True):
        ax.annotate(f"{int(total)}", (xi, total), ha="center", va="bottom", fontsize="small")
    ax.set_xticks(x, names, rotation=30 if len(names) > 4 else 0)
    ax.set_ylabel("distinct findings (all trials)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)


def plot_matrix(ax: Axes, data: pd.DataFrame, *, fmt: str = "{:.2f}", cmap: str = "RdBu_r",
                vmin: float | None = None, vmax: float | None = None, label: str = "") -> None:
    """A labelled heatmap of a square table (row x column), each cell annotated with its value (white on
    dark cells, black on light ones, so every value stays readable)."""
    values = data.to_numpy(float)
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax)
    rows, cols = list(data.index), list(data.columns)
    ax.set_xticks(range(len(cols)), cols, rotation=30 if len(cols) > 4 else 0)
    ax.set_yticks(range(len(rows)), rows)
    for i in range(len(rows)):
        for j in range(len(cols)):
            r, g, b, _ = image.to_rgba(values[i, j]) if np.isfinite(values[i, j]) else (1.0, 1.0, 1.0, 1.0)
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(j, i, fmt.format(values[i, j]), ha="center", va="center", fontsize="small",
                    color="white" if dark else "black")
    if label and ax.figure is not None:
        ax.figure.colorbar(image, ax=ax, label=label)


def render(plot: PlotFn, data: pd.DataFrame, *, title: str = "", size: tuple[float, float] = (7.0, 4.2),
           **kwargs: Any) -> Figure:
    """A new Agg figure with ``plot`` drawn on its single axes."""
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    plot(ax, data, **kwargs)
    if title:
        ax.set_title(title)
    return fig


def write_figure(plot: PlotFn, data: pd.DataFrame, stem: Path, *, formats: Sequence[str] = ("png", "svg"),
                 title: str = "", size: tuple[float, float] = (7.0, 4.2), **kwargs: Any) -> dict[str, Path]:
    """Draw ``plot`` from ``data`` and write ``stem.<format>`` for each format (atomically)."""
    fig = render(plot, data, title=title, size=size, **kwargs)
    out: dict[str, Path] = {}
    for fmt in formats:
        buf = BytesIO()
        fig.savefig(buf, format=fmt, dpi=110, metadata={"Date": None} if fmt == "svg" else None)
        path = Path(stem).with_suffix(f".{fmt}")
        publish(path, buf.getvalue())
        out[fmt] = path
    return out
