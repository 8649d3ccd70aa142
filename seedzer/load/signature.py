"""Stable signatures of loader outcomes, for grouping failures across models.

A signature hashes the symptom, the substage and the message after normalization: file paths,
addresses, quoted names, numbers and numbered identifiers (``lv10``, ``v3_0``) are replaced by
placeholders, so the same importer error in two models gets one signature.
"""

from __future__ import annotations

import hashlib
import re

from seedzer.outcome import Outcome

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\w)\]])(?:~|\.{1,2})?/(?:[\w.\-+]+/)*[\w.\-+]+(?::\d+)?"), "<path>"),
    (re.compile(r"\b[\w\-+]+\.(?:onnx|npz|py|cc|h|so|json)\b"), "<file>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "'<v>'"),
    (re.compile(r"\b(?!(?:float|int|uint|bfloat|bool|complex)\d)([A-Za-z_][A-Za-z_]*?)\d+(?:_\d+)*\b"), r"\1<n>"),
    (re.compile(r"[-+]?\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b"), "<n>"),
    (re.compile(r"\s+"), " "),
)

MAX_MESSAGE = 300


def normalize_message(message: str) -> str:
    """The message with paths, addresses, quoted names, numbers and numbered names replaced."""
    text = message.strip()
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text.strip()[:MAX_MESSAGE]


def signature(outcome: Outcome) -> str:
    """12-hex-digit stable hash of (symptom, substage, normalized message)."""
    substage = str(outcome.detail.get("substage", outcome.stage.value if outcome.stage else ""))
    key = "|".join((outcome.symptom.value, substage, normalize_message(outcome.message)))
    return hashlib.sha256(key.encode()).hexdigest()[:12]
