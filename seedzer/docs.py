"""Keeps the manual's generated sections in step with the code.

The configuration reference lives in ``docs/configuration.md`` between the markers :data:`START`
and :data:`END`. ``python -m seedzer.docs [PATH]`` rewrites it (``PATH`` defaults to
:data:`CONFIG_PAGE`, relative to the working directory: run it from the repository root); a test
fails when it is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from seedzer.config import reference

START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"
CONFIG_PAGE = "docs/configuration.md"
"""The page that holds the generated configuration reference, relative to the repository root."""


def config_reference_markdown() -> str:
    """The configuration reference as a Markdown table."""
    lines = ["| field | default | meaning |", "| --- | --- | --- |"]
    for name, default, doc in reference():
        lines.append(f"| `{name}` | `{default}` | {doc} |")
    return "\n".join(lines)


def render(page: str) -> str:
    """``page`` with its generated section replaced by the current one."""
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    return pattern.sub(lambda _: f"{START}\n{config_reference_markdown()}\n{END}", page)


def main(path: str = CONFIG_PAGE) -> int:
    """Rewrite the generated sections of ``path`` in place.

    A missing page, or one without the markers, is a one-line error and exit status 2 (as the CLI's
    user errors are), never a silent no-op.
    """
    p = Path(path)
    if not p.is_file():
        print(f"error: {path}: no such file (run from the repository root)", file=sys.stderr)
        return 2
    text = p.read_text()
    if START not in text or END not in text:
        print(f"error: {path}: no {START} ... {END} section to rewrite", file=sys.stderr)
        return 2
    p.write_text(render(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
