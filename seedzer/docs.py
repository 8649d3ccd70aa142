"""Keeps the manual's generated sections in step with the code.

Each :class:`Section` is a block of a page of ``docs/`` between two markers, written from the code:
the configuration reference (``docs/configuration.md``, from the configuration's dataclasses and
the level table), the filing gate's rules, the rules of the code at fault and the reducer's passes of
every registered finding kind (``docs/findings.md``, from each kind's
:meth:`~seedzer.finding.kind.FindingKind.gate_rules`, :meth:`~seedzer.finding.kind.FindingKind.fault_rules`
and :meth:`~seedzer.finding.kind.FindingKind.reduction_passes`: their docstrings), the known upstream bugs
and the operators and values whose result the specification leaves undefined (``docs/findings.md``, from
:data:`seedzer.kernel.onnx.undefined.UNDEFINED`). ``python -m
seedzer.docs`` rewrites them all (run it from the repository root; ``PATH`` rewrites one page); a
test fails when one is stale.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from seedzer.config import reference
from seedzer.console import echo
from seedzer.finding.kind import Described
from seedzer.finding.known_upstream import shipped
from seedzer.finding.meta import KIND_ALIASES
from seedzer.finding.registry import KINDS, kind
from seedzer.kernel.onnx.undefined import REFUSALS, UNDEFINED

START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"
CONFIG_PAGE = "docs/configuration.md"
"""The page that holds the generated configuration reference, relative to the repository root."""
FINDINGS_PAGE = "docs/findings.md"
"""The page that holds the generated gate rules and reduction passes."""


def config_reference_markdown() -> str:
    """The configuration reference as a Markdown table."""
    lines = ["| field | default | meaning |", "| --- | --- | --- |"]
    for name, default, doc in reference():
        lines.append(f"| `{name}` | `{default}` | {doc} |")
    return "\n".join(lines)


def _kind_heading(name: str) -> str:
    older = [old for old, new in KIND_ALIASES.items() if new == name]
    return f"**`{name}`**" + (f" (older folders: `{'`, `'.join(older)}`)" if older else "")


def _per_kind(column: str, parts: Callable[[str], list[Described]]) -> str:
    """A table per registered kind of its ``parts`` (name and what it does), in their order."""
    blocks = []
    for name in KINDS:
        rows = [f"| {i} | `{d.name}` | {d.doc} |" for i, d in enumerate(parts(name), 1)]
        blocks.append("\n".join([_kind_heading(name), "", f"| # | {column} | what it does |", "| --- | --- | --- |",
                                 *rows]))
    return "\n\n".join(blocks)


def gate_rules_markdown() -> str:
    """Every kind's gate rules, in the order they judge (the first answer wins)."""
    return _per_kind("rule", lambda name: kind(name).gate_rules())


def reduction_passes_markdown() -> str:
    """Every kind's reduction passes, in the order they run."""
    return _per_kind("pass", lambda name: kind(name).reduction_passes())


def undefined_markdown() -> str:
    """The operators and classes of values whose result the specification leaves undefined or disputes
    (:data:`seedzer.kernel.onnx.undefined.UNDEFINED`), then the settings of that kind TVM refuses
    (:data:`~seedzer.kernel.onnx.undefined.REFUSALS`), one row each, with its reference."""
    lines = ["| operators | values | setting | why no result is judged | reference |",
             "| --- | --- | --- | --- | --- |"]
    def link(reference: str) -> str:
        url, _, note = reference.partition(" ")
        page = re.search(r"onnx__(\w+)\.html$|github\.com/([\w-]+/[\w-]+)/issues/(\d+)$", url)
        text = url if page is None else f"ONNX {page.group(1)}" if page.group(1) else f"{page.group(2)}#{page.group(3)}"
        return f"[{text}]({url})" + (f" {note}" if note else "")

    for row in UNDEFINED:
        lines.append(f"| {', '.join(f'`{op}`' for op in row.operators)} | {', '.join(row.values)} | "
                     f"{row.condition or 'any'} | {row.why} | {link(row.reference)} |")
    for refusal in REFUSALS:
        lines.append(f"| {', '.join(f'`{op}`' for op in refusal.operators)} | any | {refusal.condition}; TVM "
                     f"refuses it (\"{refusal.message}\"): not a bug | {refusal.why} | {link(refusal.reference)} |")
    return "\n".join(lines)


def fault_rules_markdown() -> str:
    """Every kind's rules of the code at fault, in the order they decide."""
    return _per_kind("rule", lambda name: kind(name).fault_rules())


def upstream_table_markdown() -> str:
    """The known upstream bugs shipped with Seedzer (:mod:`seedzer.ledger.upstream`)."""
    lines = ["| issue | state | title | fingerprint | fixed in |", "| --- | --- | --- | --- | --- |"]
    for issue in shipped():
        printed = "; ".join(f"{k}: `{v}`" for k, v in issue.fingerprint.to_json().items()).replace("|", "\\|")
        title = issue.title.replace("|", "\\|")
        lines.append(f"| [{issue.name}]({issue.url}){' (pull request)' if issue.pull else ''} | {issue.state} | "
                     f"{title} | {printed} | {issue.fixed_in or '-'} |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Section:
    """A generated block of a page: its marker name and what writes it."""

    page: str
    marker: str
    render: Callable[[], str]

    @property
    def start(self) -> str:
        """The line the block starts after."""
        return f"<!-- {self.marker}:start -->"

    @property
    def end(self) -> str:
        """The line the block ends before."""
        return f"<!-- {self.marker}:end -->"


SECTIONS = (
    Section(CONFIG_PAGE, "config-reference", config_reference_markdown),
    Section(FINDINGS_PAGE, "gate-rules", gate_rules_markdown),
    Section(FINDINGS_PAGE, "reduction-passes", reduction_passes_markdown),
    Section(FINDINGS_PAGE, "fault-rules", fault_rules_markdown),
    Section(FINDINGS_PAGE, "upstream-table", upstream_table_markdown),
    Section(FINDINGS_PAGE, "undefined-values", undefined_markdown),
)
"""Every generated block of the manual."""


def render(text: str, page: str = CONFIG_PAGE) -> str:
    """``text`` (the page ``page``) with each of its generated blocks replaced by the current one."""
    for section in (s for s in SECTIONS if s.page == page):
        pattern = re.compile(re.escape(section.start) + ".*?" + re.escape(section.end), re.S)
        block = f"{section.start}\n{section.render()}\n{section.end}"
        text = pattern.sub(lambda _: block, text)  # noqa: B023 - used at once, in this iteration
    return text


def rewrite(path: Path, page: str) -> str | None:
    """Rewrite the generated blocks of the file ``path`` (the page ``page``); the one-line reason when
    it cannot (missing, or without a block's markers)."""
    if not path.is_file():
        return f"{path}: no such file (run from the repository root)"
    text = path.read_text()
    for section in (s for s in SECTIONS if s.page == page):
        if section.start not in text or section.end not in text:
            return f"{path}: no {section.start} ... {section.end} section to rewrite"
    path.write_text(render(text, page))
    return None


def main(path: str | None = None) -> int:
    """Rewrite the generated blocks of every page (or of ``path`` only).

    A missing page, or one without its markers, is a one-line error and exit status 2 (as the CLI's
    user errors are), never a silent no-op.
    """
    pages = sorted({s.page for s in SECTIONS})
    targets = [(Path(path), next((p for p in pages if Path(path).as_posix().endswith(p)), CONFIG_PAGE))] \
        if path is not None else [(Path(page), page) for page in pages]
    for target, page in targets:
        problem = rewrite(target, page)
        if problem is not None:
            echo(f"error: {problem}", err=True)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
