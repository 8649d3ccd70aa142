"""Plot functions against golden data: the series each plot draws, read back from its axes.

Regenerate the golden files after an intended change with SEEDZER_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.patches import Rectangle

from seedzer.report import plots, stats
from seedzer.report.table import Tables, build_tables
from tests.fixtures.report.synth import make_experiment

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "report"


def axes_data(ax: Axes) -> dict[str, Any]:
    """Everything data-bearing drawn on ``ax``: lines, filled bands, scatter points, bars, images, texts."""
    r = lambda a: np.round(np.asarray(a, float), 6).tolist()  # noqa: E731
    out: dict[str, Any] = {
        "lines": [{"label": ln.get_label(), "xy": r(ln.get_xydata())} for ln in ax.get_lines()],
        "bands": [r(c.get_paths()[0].vertices) for c in ax.collections
                  if isinstance(c, PolyCollection) and c.get_paths()],
        "points": [r(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection)],
        "bars": [r([p.get_x(), p.get_y(), p.get_width(), p.get_height()]) for p in ax.patches
                 if isinstance(p, Rectangle)],
        "images": [r(im.get_array()) for im in ax.images],
        "texts": [t.get_text() for t in ax.texts],
        "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
    }
    return out


def _compare(name: str, got: dict[str, Any]) -> None:
    path = GOLDEN / f"golden_{name}.json"
    if os.environ.get("SEEDZER_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1) + "\n")
    want = json.loads(path.read_text())
    assert got.keys() == want.keys()
    for key in want:
        assert len(got[key]) == len(want[key]), f"{name}: {key}: count differs"
        for g, w in zip(got[key], want[key], strict=True):
            if isinstance(w, dict):
                assert g["label"] == w["label"]
                np.testing.assert_allclose(g["xy"], w["xy"], rtol=1e-6, atol=1e-9, err_msg=f"{name}: {key}")
            elif isinstance(w, str):
                assert g == w
            else:
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9, err_msg=f"{name}: {key}")


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Tables:
    return build_tables(make_experiment(tmp_path_factory.mktemp("exp")))


def test_coverage_over_time(tables: Tables) -> None:
    ot = stats.over_time(tables.long, "coverage", points=21)
    fig = plots.render(plots.plot_over_time, ot)
    got = axes_data(fig.axes[0])
    # independent of the golden file: the medians at the end are 40 (alpha) and 20 (beta) at 20 s
    ends = {ln["label"]: ln["xy"][-1] for ln in got["lines"]}
    assert ends == {"alpha": [pytest.approx(20 / 60), 40.0], "beta": [pytest.approx(20 / 60), 20.0]}
    assert len(got["bands"]) == 2
    _compare("coverage_over_time", got)


def test_final_coverage_box_and_violin(tables: Tables) -> None:
    finals = stats.final_values(tables.long)
    box = axes_data(plots.render(plots.plot_final_distribution, finals).axes[0])
    assert sorted(p[1] for p in box["points"][0]) == [38.0, 40.0, 44.0]
    assert box["xticklabels"] == ["alpha", "beta"]
    _compare("final_coverage", box)
    violin = axes_data(plots.render(plots.plot_final_distribution, finals, style="violin").axes[0])
    assert violin["bands"] and violin != box
    _compare("final_coverage_violin", violin)


def test_violin_falls_back_to_box_for_a_single_trial(tables: Tables) -> None:
    finals = stats.final_values(tables.long)
    one = finals[finals["trial"] == 1]
    got = axes_data(plots.render(plots.plot_final_distribution, one, style="violin").axes[0])
    assert not got["bands"] and len(got["points"]) == 2


def test_findings_by_symptom(tables: Tables) -> None:
    cats = stats.findings_by_category(tables.findings, ["alpha", "beta"])
    got = axes_data(plots.render(plots.plot_findings_by_category, cats).axes[0])
    heights = [b[3] for b in got["bars"]]  # category-major: segfault, other_crash, mismatch, other
    assert heights == [1, 0, 1, 0, 1, 0, 1, 2]
    assert got["texts"] == ["4", "2"]
    _compare("findings_by_symptom", got)


def test_a12_and_overlap_matrices(tables: Tables) -> None:
    finals = stats.final_values(tables.long)
    a12 = axes_data(plots.render(plots.plot_matrix, stats.a12_matrix(finals), vmin=0, vmax=1).axes[0])
    assert a12["images"] == [[[0.5, 1.0], [0.0, 0.5]]]
    _compare("a12", a12)
    ov = axes_data(plots.render(plots.plot_matrix, stats.overlap(tables.findings, ["alpha", "beta"]),
                                fmt="{:.0f}").axes[0])
    assert ov["images"] == [[[4.0, 1.0], [1.0, 2.0]]] and ov["texts"] == ["4", "1", "1", "2"]
    _compare("overlap", ov)


def test_write_figure_writes_png_and_svg(tables: Tables, tmp_path: Path) -> None:
    ot = stats.over_time(tables.long, "unique_findings", points=11)
    paths = plots.write_figure(plots.plot_over_time, ot, tmp_path / "u", title="t")
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in paths["svg"].read_bytes()[:400]
    assert oct(paths["svg"].stat().st_mode & 0o777) == "0o644"
