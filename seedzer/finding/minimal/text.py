"""The pieces every plain reproducer is made of: its docstring, the guard that turns an import or API error
into "cannot run here", and the three checks (an error with a given text, a death by a signal, outputs
that must agree), each ending the program with the house's exit statuses.

Exit statuses: 1 while the bug is present (after the house's :data:`~seedzer.kernel.common.PRESENT_LINE`),
0 once it is gone (after a line starting :data:`~seedzer.kernel.common.GONE_LINE`), 2 on a different
failure of the step under test, 3 when the program cannot run here (an import, or an API this TVM does
not have: never a verdict on the bug).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from seedzer.console import visible
from seedzer.kernel.common import GONE_LINE, PRESENT_LINE
from seedzer.kernel.messages import key_line

CANNOT_RUN = 3
"""Exit status of a plain reproducer that cannot run in an environment (an import or API error)."""
CANNOT_RUN_LINE = "cannot run here"
"""How the line a plain reproducer prints before exiting with :data:`CANNOT_RUN` starts."""
DIFFERENT = 2
"""Exit status of a plain reproducer whose step under test failed another way."""
DIFFERENT_LINE = "a different failure"
"""The line a plain reproducer prints before exiting with :data:`DIFFERENT`."""
EXITS = (f"Exit status: 1 = the bug is present, 0 = fixed, {DIFFERENT} = a different failure, "
         f"{CANNOT_RUN} = cannot run here (import or API error).")
GUARD = ("guard = lambda kind, err, tb: (print(f\"" + CANNOT_RUN_LINE
         + ": {kind.__name__}: {err}\", flush=True), os._exit(" + str(CANNOT_RUN) + "))")
"""The hook that makes any error outside the checked step exit :data:`CANNOT_RUN` (never 1)."""
API_ERRORS = "(AttributeError, ImportError, NameError)"
"""Errors of the step under test that say this TVM lacks an API the program uses: no verdict."""
_VARYING = re.compile(r"0x[0-9a-fA-F]+|<root>(\.\w+|\[\d+\])*|'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"
                      r"|\b[A-Za-z_]\w*?(_\d+|\d+)\w*\b|[-+]?\b\d+(\.\d+)?([eE][-+]?\d+)?\b")
"""What differs between two occurrences of one error: addresses, IR paths, quoted text, numbered names,
numbers (the rules of :func:`~seedzer.kernel.messages.normalize`)."""


@dataclass(frozen=True)
class Docs:
    """What a plain reproducer's docstring says: its title line, the lines after it, and the apache-tvm
    release it pins (the one it was made with)."""

    title: str
    about: tuple[str, ...] = ()
    tvm: str = ""


def error_mark(message: str, names: Iterable[str] = ()) -> str:
    """The longest part of an error's identifying line that holds none of what varies (numbers, quoted
    text, the IR's own ``names``): what a plain reproducer looks for in the error it catches."""
    line = key_line(message)
    by_length = sorted((n for n in set(names) if n), key=len, reverse=True)
    spans = [m.span() for m in _VARYING.finditer(line)]
    if by_length:
        spans += [m.span() for m in re.finditer(r"\b(" + "|".join(map(re.escape, by_length)) + r")\b", line)]
    cut = [False] * len(line)
    for start, end in spans:
        for i in range(start, end):
            cut[i] = True
    parts: list[str] = []
    current: list[str] = []
    for ch, gone in zip(line, cut, strict=True):
        if gone:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    best = max((p.strip(" :.,;()[]") for p in parts), key=len, default="")
    return best if len(best) >= 6 else line.strip()[:80]


def _docstring_line(text: str) -> str:
    """``text`` as one line of a raw docstring: its backslashes kept as written (a message's ``\\N`` or ``\\x``
    is no escape), control characters shown (no NUL that cannot compile, no sequence that would drive the
    terminal of someone reading the file), and never three double quotes that would end it."""
    return visible(text).replace('"""', "'''")


def docstring(docs: Docs, needs: Sequence[str]) -> list[str]:
    """The docstring of a plain reproducer: what it shows, how to install what it needs, its exit statuses."""
    pins = " ".join(f"{n}=={docs.tvm}" if n == "apache-tvm" and docs.tvm else n for n in needs)
    return ['r"""' + _docstring_line(docs.title), *[_docstring_line(a) for a in docs.about],
            f"Needs only: pip install {pins}", EXITS + '"""']


def preamble(imports: Sequence[str]) -> list[str]:
    """``import os, sys``, the guard, ``imports`` (an import that fails is "cannot run here"), then the guard
    again (importing TVM installs its own ``sys.excepthook``)."""
    return ["import os", "import sys", "", GUARD,
            "sys.excepthook = guard  # an error outside the check (an import, a missing API): no verdict", "",
            *imports, "sys.excepthook = guard  # again: importing TVM installs its own hook"]


def indent(lines: Sequence[str], by: int = 4) -> list[str]:
    """``lines`` indented by ``by`` spaces (empty lines stay empty)."""
    return [(" " * by + ln) if ln else ln for ln in lines]


def present(why: str = "") -> list[str]:
    """Print the house's present line and exit 1."""
    return [f"print({PRESENT_LINE!r}{(' + ' + repr(': ' + why)) if why else ''})", "sys.exit(1)"]


def error_check(body: Sequence[str], mark: str, gone: str) -> list[str]:
    """Run ``body``; an error whose text holds ``mark`` is the bug (exit 1), another error exit 2,
    none the bug gone (exit 0, saying ``gone``)."""
    return ["try:", *indent(body),
            f"except Exception as err:  # the bug (exit 1), an API this TVM lacks ({CANNOT_RUN}) or another failure "
            f"({DIFFERENT})",
            f"    found, api = {mark!r} in str(err), isinstance(err, {API_ERRORS})",
            f'    print(f"{{type(err).__name__}}: {{err}}\\n" + ({PRESENT_LINE!r} if found else {CANNOT_RUN_LINE!r} '
            f'if api else {DIFFERENT_LINE!r}))',
            f"    sys.exit(1 if found else {CANNOT_RUN} if api else {DIFFERENT})",
            f"print({GONE_LINE + ' ' + gone!r})"]


def crash_check(body: Sequence[str], gone: str) -> list[str]:
    """Run ``body`` in a forked child: its death by a signal is the bug (exit 1); an error exit 2; a
    clean end the bug gone (exit 0)."""
    return ["pid = os.fork()",
            "if pid == 0:  # a child runs it: the bug kills the process",
            "    try:", *indent(body, 8), "        os._exit(0)",
            "    except BaseException:", "        os._exit(1)",
            "status = os.waitpid(pid, 0)[1]",
            "if os.WIFSIGNALED(status):",
            '    print(f"killed by signal {os.WTERMSIG(status)}")', *indent(present()),
            f"print({GONE_LINE + ' ' + gone!r} if status == 0 else {DIFFERENT_LINE!r})",
            f"sys.exit(0 if status == 0 else {DIFFERENT})"]


def outputs_check(expected: str, actual: str, rtol: float, atol: float, gone: str) -> list[str]:
    """Compare every array of ``actual`` with ``expected`` (names of lists of arrays): a difference beyond
    the tolerances is the bug (exit 1), agreement the bug gone (exit 0)."""
    return ["try:",
            f"    for want, got in zip({expected}, {actual}, strict=True):",
            f"        np.testing.assert_allclose(got, want, rtol={rtol:g}, atol={atol:g})",
            "except AssertionError as err:",
            "    print(err)", *indent(present()),
            f"print({GONE_LINE + ' ' + gone!r})"]


def program(parts: Sequence[Sequence[str]]) -> str:
    """The text of a plain reproducer from its parts (blank lines between them)."""
    out: list[str] = []
    for part in parts:
        if not part:
            continue
        if out:
            out.append("")
        out.extend(part)
    return "\n".join(out).rstrip() + "\n"
