"""The README and the manual (docs/*.md) stay current and connected.

The generated configuration reference in docs/configuration.md is what ``python -m seedzer.docs``
writes; the README states the two set-up commands and links every page of the manual; every
relative link of the README and of the manual leads to a file that exists, and a link to a heading
(``page.md#anchor``) to a heading that exists.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from seedzer.docs import CONFIG_PAGE, END, FINDINGS_PAGE, SECTIONS, START, Section, main, render

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
CONFIGURATION = REPO / CONFIG_PAGE

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def links(path: Path) -> list[str]:
    """The targets of the Markdown links in ``path``, outside code blocks and code spans."""
    text = _CODE.sub("", _FENCE.sub("", path.read_text()))
    return _LINK.findall(text)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces turned into hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of the headings of a Markdown file (outside code blocks)."""
    text = _FENCE.sub("", path.read_text())
    return {anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def broken_links(path: Path) -> list[str]:
    """The relative links of ``path`` that lead to no file, or to no heading of their file."""
    problems = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:...
            continue
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{path.relative_to(REPO)}: {target}: no such file")
            continue
        if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(f"{path.relative_to(REPO)}: {target}: no heading with that anchor")
    return problems


def manual_pages() -> list[Path]:
    """The pages of the manual."""
    return sorted(DOCS.glob("*.md"))


def test_config_reference_is_current() -> None:
    text = CONFIGURATION.read_text()
    assert START in text and END in text
    assert render(text) == text, f"{CONFIG_PAGE}'s config reference is stale: run `python -m seedzer.docs`"


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.marker)
def test_every_generated_section_is_current(section: Section) -> None:
    text = (REPO / section.page).read_text()
    assert section.start in text and section.end in text
    stale = f"{section.page}: {section.marker} is stale: run `python -m seedzer.docs`"
    assert render(text, section.page) == text, stale


def test_the_findings_page_lists_every_kinds_gate_rules_and_reduction_passes() -> None:
    from seedzer.finding.registry import KINDS, kind

    text = (REPO / FINDINGS_PAGE).read_text()
    for name in KINDS:
        assert f"**`{name}`**" in text
        for part in (*kind(name).gate_rules(), *kind(name).reduction_passes()):
            assert f"| `{part.name}` | {part.doc} |" in text and part.doc


def test_docs_writes_every_page_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for page in {s.page for s in SECTIONS}:
        path = tmp_path / page
        path.parent.mkdir(exist_ok=True)
        blocks = "".join(f"{s.start}\nstale-table\n{s.end}\n" for s in SECTIONS if s.page == page)
        path.write_text("# Page\n\n" + blocks)
    monkeypatch.chdir(tmp_path)
    assert main() == 0
    for page in {s.page for s in SECTIONS}:
        text = (tmp_path / page).read_text()
        assert render(text, page) == text and "stale-table" not in text


def test_docs_refuses_a_page_without_the_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "README.md"
    page.write_text("# Seedzer\n")
    assert main(str(page)) == 2
    assert page.read_text() == "# Seedzer\n"
    assert "error:" in capsys.readouterr().err


def test_readme_states_the_two_commands() -> None:
    text = README.read_text()
    assert "make run" in text and "make test" in text


def test_readme_links_every_page_of_the_manual() -> None:
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in links(README)}
    missing = [p.name for p in manual_pages() if p.resolve() not in linked]
    assert not missing, f"README.md does not link {missing}"


def test_readme_links_lead_somewhere() -> None:
    assert any(t.startswith("docs/") for t in links(README))
    assert not broken_links(README)


@pytest.mark.parametrize("page", manual_pages(), ids=lambda p: p.name)
def test_manual_links_lead_somewhere(page: Path) -> None:
    assert not broken_links(page)


def test_broken_links_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## The `sancov` backend (instrumented TVM)\n")
    page = tmp_path / "README.md"
    page.write_text("[a](docs/a.md) [b](docs/b.md) [s](docs/a.md#the-sancov-backend-instrumented-tvm)\n"
                    "[x](docs/a.md#nowhere) [w](https://example.org/x.md) `[c](docs/c.md)`\n"
                    "```\n[d](docs/d.md)\n```\n")
    assert broken_links(page) == ["README.md: docs/b.md: no such file",
                                  "README.md: docs/a.md#nowhere: no heading with that anchor"]


def test_every_path_the_design_names_exists() -> None:
    """design.md §12 says where each aim lives by path instead of a status column: the paths must be
    real, so a renamed or removed module shows here."""
    named = set(re.findall(r"`(seedzer/[\w/.]+?)/?`", (DOCS / "design.md").read_text()))
    assert len(named) >= 10
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert not missing, f"docs/design.md names paths that do not exist: {missing}"
