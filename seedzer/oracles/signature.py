"""Finding signatures: the deduplication key (symptom, stage, pass, normalized message)."""

from __future__ import annotations

import hashlib
import re

from seedzer.outcome import Outcome

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"0x[0-9a-fA-F]+"), "ADDR"),
    (re.compile(r"<root>(\.\w+|\[\d+\])*"), "IRPATH"),  # TVM's object paths: where in the IR
    (re.compile(r"(/[\w.+-]+)+(\.\w+)?(:\d+)?"), "PATH"),
    (re.compile(r"\[\d{2}:\d{2}:\d{2}\]"), ""),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\""), "Q"),
    (re.compile(r"\b[A-Za-z_][A-Za-z_]*(_\d+|\d+)\w*\b"), "ID"),
    (re.compile(r"\b\d+(\.\d+)?([eE][-+]?\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
)

_NAMES_AT = 2  # IR names are replaced after addresses and IR paths, before the generic rules

_NOISE_LINE = re.compile(r"^\s*(File \"|Traceback|During handling|\^+$|File \"<unknown>\")")


def key_line(message: str) -> str:
    """The line of a TVM error that identifies it: the last 'Check failed'/error line, else the first."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip() and not _NOISE_LINE.match(ln)]
    if not lines:
        return ""
    for ln in reversed(lines):
        if "Check failed" in ln or re.match(r"^[\w.]*(Error|Exception)\b", ln):
            return ln
    return lines[0]


_DEFINITIONS = (
    re.compile(r"(\w+)\s*:\s*T\.(?:Buffer|handle|int\d+|float\d+|bool)"),  # parameters
    re.compile(r"\bfor\s+([\w\s,]+?)\s+in\b"),  # loop variables
    re.compile(r"^\s*([\w\s,]+?)\s*=\s*T\.", re.MULTILINE),  # buffers, block axes, lets
    re.compile(r"\bas\s+(\w+)"),
    re.compile(r"T\.(?:sblock|block)\(\"(\w+)\""),  # block names
)
_STOPWORDS = frozenset({"a", "an", "as", "at", "be", "by", "if", "in", "is", "of", "or", "to", "and", "for",
                        "not", "the", "main", "root", "T"})


def ir_names(script: str) -> frozenset[str]:
    """Names the TVMScript ``script`` defines (parameters, loop variables, buffers, blocks).

    Two occurrences of one bug in differently named IR print different names in their messages;
    :func:`normalize_message` replaces these names so that their signatures agree.
    """
    names: set[str] = set()
    for pattern in _DEFINITIONS:
        for match in pattern.finditer(script):
            names.update(n for n in re.split(r"[\s,]+", match.group(1)) if n)
    return frozenset(n for n in names if n.isidentifier() and n not in _STOPWORDS)


def normalize_message(message: str, names: frozenset[str] = frozenset()) -> str:
    """Remove what varies between two occurrences of one bug: numbers, names, paths, addresses.

    ``names`` are identifiers defined by the test case's IR (see :func:`ir_names`).
    """
    text = key_line(message)
    for index, (pattern, repl) in enumerate(_RULES):
        if index == _NAMES_AT and names:
            by_length = sorted(names, key=len, reverse=True)
            text = re.sub(r"\b(" + "|".join(map(re.escape, by_length)) + r")\b", "ID", text)
        text = pattern.sub(repl, text)
    return text.strip()[:300]


def signature(outcome: Outcome, names: frozenset[str] = frozenset()) -> str:
    """Stable 12-hex-digit signature of a bug outcome (``names``: see :func:`normalize_message`)."""
    parts = [
        outcome.symptom.value,
        outcome.stage.value if outcome.stage else "",
        outcome.pass_name or "",
        normalize_message(outcome.message, names),
    ]
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:12]
