"""The experiment report as a user sees it: report.html opened in a real headless Chromium.

A report of the synthetic experiment (two heuristics x three trials, findings of every category) is
built with the real builder, served on 127.0.0.1 and opened with Debian's ``chromium`` driven by
Playwright (no browser download: ``executable_path``). The test fails on any console error or
uncaught page error, any failed or non-local request, and any figure that did not load or rendered
blank; it checks the sections, figures and tables a reader expects, and saves a full-page
screenshot (a CI artifact) at ``build/test-artifacts/report.png`` (``SEEDZER_ARTIFACTS`` overrides
the directory), next to the page itself.
"""

from __future__ import annotations

import base64
import functools
import io
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from seedzer.report.build import build_report
from tests.fixtures.report.synth import make_experiment

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("SEEDZER_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("SEEDZER_ARTIFACTS", ROOT / "build" / "test-artifacts"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# (section, figure titles in it) in page order, as the synthetic experiment (one backend) produces them
EXPECTED = [
    ("Trials", []),
    ("Levels", []),
    ("Mutations and oracles", []),
    ("Importer operators", []),
    ("Optimizations triggered", []),
    ("Coverage (passes)", ["Coverage over time (passes)", "Final coverage", "Final coverage (violin)",
                           "Vargha-Delaney A12 (row over column)"]),
    ("Findings", ["Findings by symptom", "Unique findings over time", "Finding overlap"]),
    ("Bug roots", []),
]
# what the SVG of a figure must contain to be the plot it claims to be (matplotlib's element ids)
SVG_MARKS = {
    "Coverage over time (passes)": ("FillBetweenPolyCollection", 2),  # one 2.5-97.5 % band per heuristic
    "Unique findings over time": ("FillBetweenPolyCollection", 2),
    "Final coverage (violin)": ("FillBetweenPolyCollection", 2),  # one violin body per heuristic
    "Final coverage": ("PathCollection", 2),  # the trials' points over the boxes
    "Vargha-Delaney A12 (row over column)": ("<image", 1),  # the heatmap
    "Finding overlap": ("<image", 1),
}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    result = build_report(make_experiment(root), root / "report")
    assert result.html.is_file()
    return result.out


@pytest.fixture(scope="module")
def served(report_dir: Path) -> Iterator[str]:
    """The report directory on http://127.0.0.1:<free port>/ (as the report container serves it)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(report_dir)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def browser_context() -> Iterator[Any]:
    """A fresh headless Chromium profile (Debian's chromium, never a downloaded browser)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright not installed (pip install -e '.[dev]')")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="seedzer-chromium-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900}, timeout=60_000)
        try:
            yield context
        finally:
            context.close()


def _blank(png: bytes) -> bool:
    """True when a rendered element is (almost) a single color."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("L")
    hist = img.histogram()
    used = [v for v, n in enumerate(hist) if n]
    non_white = sum(hist[:240])
    return used[-1] - used[0] < 32 or non_white < 0.005 * img.width * img.height


def test_report_renders_in_chromium(browser_context: Any, served: str, report_dir: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    problems: list[str] = []
    page = browser_context.new_page()

    def route(r: Any) -> None:  # the page is self-contained: only the report itself may be requested
        if r.request.url.startswith(served):
            r.continue_()
        else:
            problems.append(f"request outside the report: {r.request.url}")
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "assert") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

    response = page.goto(served + "report.html", wait_until="load")
    assert response is not None and response.ok
    page.wait_for_load_state("networkidle")
    images = page.eval_on_selector_all(
        "img", "els => els.map(e => ({alt: e.alt, complete: e.complete, w: e.naturalWidth, h: e.naturalHeight, "
               "shown: e.getBoundingClientRect().width, src: e.getAttribute('src')}))")

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    shutil.copy(report_dir / "report.html", ARTIFACTS / "report.html")
    with capsys.disabled():
        print(f"\nreport screenshot (CI artifact): {shot}")

    assert page.title().startswith("Seedzer report: synth")
    # every figure loaded, is shown at a readable size and is not blank
    for img in images:
        if not img["complete"] or img["w"] == 0 or img["h"] == 0:
            problems.append(f"image did not load: {img['alt']}")
        elif img["shown"] < 300:
            problems.append(f"image {img['alt']} shown {img['shown']:.0f} px wide")
    for el in page.query_selector_all("img"):
        if _blank(el.screenshot()):
            problems.append(f"image {el.get_attribute('alt')} rendered blank")
    assert not problems, "\n".join(problems)

    # the sections and, in each, its figures, in page order
    outline = page.eval_on_selector_all("h2, h3", "els => els.map(e => [e.tagName, e.textContent])")
    got: list[tuple[str, list[str]]] = []
    for tag, text in outline:
        if tag == "H2":
            got.append((text, []))
        else:
            got[-1][1].append(text)
    assert got == EXPECTED
    assert [i["alt"] for i in images] == [t for _, titles in EXPECTED for t in titles]
    for img in images:
        mark, count = SVG_MARKS.get(img["alt"], ("<svg", 1))
        svg = base64.b64decode(img["src"].split(",", 1)[1]).decode()
        assert svg.count(mark) >= count, f"{img['alt']}: {mark!r} x{svg.count(mark)}, expected >= {count}"

    # the tables a reader compares heuristics with
    headers = page.eval_on_selector_all("table", "ts => ts.map(t => [...t.rows[0].cells].map(c => c.textContent))")
    pairwise = [h for h in headers if {"a", "b", "p", "a12"} <= set(h)]
    assert len(pairwise) == 3, headers  # Mann-Whitney/A12 on final coverage, unique findings and bug roots
    assert any({"heuristic", "rank", "median", "average_rank", "wins"} <= set(h) for h in headers), headers
    assert any({"segfault", "other_crash", "mismatch", "other"} <= set(h) for h in headers), headers
    body = page.inner_text("body")
    assert "Mann-Whitney" in body and "A12" in body
    for sig in ("seg1", "abrt1", "mis1", "exc1", "hang1"):  # every distinct finding is listed
        assert sig in body


def test_heatmap_values_stay_readable_on_dark_cells() -> None:
    """Seen in the screenshot: black annotations on the dark cells of the A12 and overlap heatmaps were
    unreadable; a dark cell gets a white value."""
    import pandas as pd

    from seedzer.report import plots

    a12 = pd.DataFrame([[0.5, 1.0], [0.0, 0.5]], index=["a", "b"], columns=["a", "b"])
    ax = plots.render(plots.plot_matrix, a12, vmin=0.0, vmax=1.0).axes[0]
    assert [t.get_color() for t in ax.texts] == ["black", "white", "white", "black"]
    overlap = pd.DataFrame([[4.0, 1.0], [1.0, 2.0]], index=["a", "b"], columns=["a", "b"])
    ax = plots.render(plots.plot_matrix, overlap, fmt="{:.0f}", cmap="Blues", vmin=0.0).axes[0]
    assert [t.get_color() for t in ax.texts] == ["white", "black", "black", "black"]
