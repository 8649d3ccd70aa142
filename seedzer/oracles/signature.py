"""Finding signatures: the deduplication key (symptom, stage, pass, normalized message)."""

from __future__ import annotations

import hashlib
import re

from seedzer.outcome import Outcome

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"0x[0-9a-fA-F]+"), "ADDR"),
    (re.compile(r"(/[\w.+-]+)+(\.\w+)?(:\d+)?"), "PATH"),
    (re.compile(r"\[\d{2}:\d{2}:\d{2}\]"), ""),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\""), "Q"),
    (re.compile(r"\b[A-Za-z_][A-Za-z_]*(_\d+|\d+)\w*\b"), "ID"),
    (re.compile(r"\b\d+(\.\d+)?([eE][-+]?\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
)

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


def normalize_message(message: str) -> str:
    """Remove what varies between two occurrences of one bug: numbers, names, paths, addresses."""
    text = key_line(message)
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text.strip()[:300]


def signature(outcome: Outcome) -> str:
    """Stable 12-hex-digit signature of a bug outcome."""
    parts = [
        outcome.symptom.value,
        outcome.stage.value if outcome.stage else "",
        outcome.pass_name or "",
        normalize_message(outcome.message),
    ]
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:12]
