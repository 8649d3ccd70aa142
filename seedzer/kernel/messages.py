"""Kernel: the identity of a failure's message, and whether an observation is the expected failure.

``key_line`` picks the line of an error that identifies it, ``normalize`` strips from it what
varies between two occurrences of one bug (addresses, paths, numbers, the IR's own names, which
``ir_names`` reads off a TVMScript text), and ``same_failure`` decides whether an observation is
the failure a finding describes: what every reproducer, the reducer and the gate check.
Depends on the standard library and :mod:`seedzer.kernel.common` only; copied verbatim into every
``repro.py`` after it (see :mod:`seedzer.kernel`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from seedzer.kernel.common import Observation, Symptom

# --- kernel code (everything below is copied verbatim into repro.py) ---
_NOISE_LINE = re.compile(r"^\s*(File \"|Traceback|During handling|\^+$|Stack trace|\d+: )")
_KEY_LINE = re.compile(r"^[\w.]*(Error|Exception)\b")
_ERROR_TYPE = re.compile(r"^[\w.]*(Error|Exception): ")


def key_line(message: str) -> str:
    """The line of an error that identifies it: the last 'Check failed'/error line, else the first."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip() and not _NOISE_LINE.match(ln)]
    for line in reversed(lines):
        if "Check failed" in line:
            return line[line.index("Check failed"):]
        if _KEY_LINE.match(line):
            return _ERROR_TYPE.sub("", line)
    return _ERROR_TYPE.sub("", lines[0]) if lines else ""


_RULES = (
    (re.compile(r"0x[0-9a-fA-F]+"), "ADDR"),
    (re.compile(r"<root>(\.\w+|\[\d+\])*"), "IRPATH"),  # TVM's object paths: where in the IR
    (re.compile(r"(?<![\w)\]])(?:~|\.{1,2})?(/[\w.+-]+)+(:\d+)?"), "PATH"),
    (re.compile(r"\[\d{2}:\d{2}:\d{2}\]"), ""),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "Q"),
    (re.compile(r"\blayout[A-Z]{2,}\b"), "layoutL"),  # a tensor layout glued to the word (ABCD: the rank)
    (re.compile(r"\b(?!(?:float|int|uint|bfloat|bool)\d)[A-Za-z_][A-Za-z_]*(_\d+|\d+)\w*\b"), "ID"),
    (re.compile(r"[-+]?\b\d+(\.\d+)?([eE][-+]?\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
)
_NAMES_AT = 2  # the IR's own names are replaced after addresses and IR paths, before the generic rules
WORD_NAMES = frozenset({"A", "I"})
"""Names an IR often defines (a buffer ``A``) that are also words of TVM's messages ("A SeqStmt of length 1 is
prohibited"): always replaced, whether the IR defines them or not, so the message's identity does not depend
on the IR's names (the d53 campaign filed one RemoveNoOp defect as two roots: one IR had a buffer ``A``)."""


def normalize(message: str, names: Iterable[str] = ()) -> str:
    """The identity of an error message: its key line without what varies between two occurrences of
    one bug (addresses, IR paths, file paths, quoted text, numbers, numbered and IR-defined names)."""
    text = key_line(message)
    by_length = sorted(set(names) | WORD_NAMES, key=len, reverse=True)
    for index, (pattern, repl) in enumerate(_RULES):
        if index == _NAMES_AT and by_length:
            text = re.sub(r"\b(" + "|".join(map(re.escape, by_length)) + r")\b", "ID", text)
        text = pattern.sub(repl, text)
    return text.strip()[:300]


_DEFINITIONS = (
    re.compile(r"(\w+)\s*:\s*T\.(?:Buffer|handle|let|int\d+|float\d+|bool)"),  # parameters, typed lets
    re.compile(r"\bfor\s+([\w\s,]+?)\s+in\b"),  # loop variables
    re.compile(r"^\s*([\w\s,]+?)\s*=\s*T\.", re.MULTILINE),  # buffers, block axes, lets
    re.compile(r"\bas\s+(\w+)"),
    re.compile(r"T\.(?:sblock|block)\(\"(\w+)\""),  # block names
)
_STOPWORDS = frozenset({"a", "an", "as", "at", "be", "by", "if", "in", "is", "of", "or", "to", "and", "for",
                        "not", "the", "main", "root", "T"})


def ir_names(script: str) -> frozenset[str]:
    """Names a TVMScript text defines (parameters, loop variables, buffers, blocks): two occurrences
    of one bug in differently named IR print different names; :func:`normalize` replaces them."""
    names: set[str] = set()
    for pattern in _DEFINITIONS:
        for match in pattern.finditer(script):
            names.update(n for n in re.split(r"[\s,]+", match.group(1)) if n)
    return frozenset(n for n in names if n.isidentifier() and n not in _STOPWORDS)


def same_failure(expected: Observation, observed: Observation, names: Iterable[str] = ()) -> bool:
    """Whether ``observed`` is the failure ``expected`` describes: the same symptom; for errors and
    ill-formed IR the same step and the same normalized message; for a mismatch the same two builds
    (any two when ``expected`` does not say)."""
    if observed.symptom != expected.symptom:
        return False
    if expected.symptom in (Symptom.EXCEPTION, Symptom.ILLFORMED):
        names = list(names)
        return (observed.pass_name == expected.pass_name
                and normalize(observed.message, names) == normalize(expected.message, names))
    if expected.symptom is Symptom.MISMATCH:
        return expected.comparison is None or observed.comparison == expected.comparison
    return True


def moved_failure(expected: Observation, observed: Observation, names: Iterable[str] = ()) -> bool:
    """Whether ``observed`` is the error or ill-formed IR ``expected`` describes, surfacing at another
    step (the same check failing one pass earlier or later, e.g. once TVM's pipeline or the case's
    steps changed around it): the bug is present, and a reproducer says so rather than "different"."""
    if observed.symptom != expected.symptom or expected.symptom not in (Symptom.EXCEPTION, Symptom.ILLFORMED):
        return False
    names = list(names)
    return normalize(observed.message, names) == normalize(expected.message, names)


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation that failed (Python's MemoryError, C++'s std::bad_alloc as
    TVM relays it): under the workers' address-space limit the input's size, ``invalid``, not a bug."""
    return isinstance(exc, MemoryError) or "std::bad_alloc" in str(exc)
