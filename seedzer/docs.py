"""Keeps README.md's generated sections (config reference, CLI verbs) in step with the code.

``python -m seedzer.docs`` rewrites them; a test fails when they are stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from seedzer.config import reference

START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"


def config_reference_markdown() -> str:
    """The configuration reference as a Markdown table."""
    lines = ["| field | default | meaning |", "| --- | --- | --- |"]
    for name, default, doc in reference():
        lines.append(f"| `{name}` | `{default}` | {doc} |")
    return "\n".join(lines)


def render(readme: str) -> str:
    """``readme`` with its generated section replaced by the current one."""
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    return pattern.sub(lambda _: f"{START}\n{config_reference_markdown()}\n{END}", readme)


def main(path: str = "README.md") -> int:
    """Rewrite the generated sections of ``path`` in place."""
    p = Path(path)
    p.write_text(render(p.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
