"""Known upstream bugs: TVM issues a root may already be, and how a root is recognised as one of them.

Seedzer ships a table of upstream TVM issues (``upstream.yaml`` beside this module, :data:`TABLE_FILE`), each
with its fingerprint (what a root must match: its kind, symptom, code at fault, the kind of special
value it gets wrong, a pattern of its message, or its root signature outright), the versions it affects,
the version that fixed it, and how the row was checked. The user's own rows live in the ledger (``seedzer
bugs mark ROOT reported --link URL`` writes one; ``seedzer bugs upstream import/export`` move tables
between ledgers); a user's row of the same issue replaces the shipped one. A root that matches a row is
filed with status ``known`` ("known upstream apache/tvm#19579"): counted, never drafted as a new report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from seedzer.errors import ConfigError

TABLE_FILE = Path(__file__).with_name("upstream.yaml")
"""The shipped table (read by :func:`seedzer.finding.known_upstream.shipped`: YAML is read by the configuration's
reader, a layer above this one)."""
KNOWN_UPSTREAM = "known upstream"
"""How a root's known-issue note starts when it matches an upstream issue (``known upstream apache/tvm#N``)."""
ISSUE_URL = re.compile(r"^https://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)/?(?:[#?].*)?$")
"""A GitHub issue's or pull request's address."""
STATES = ("open", "closed")


@dataclass(frozen=True)
class RootFacts:
    """What a root is matched on: its signature, kind, symptom, code at fault, normalized message and the
    kind of special value it gets wrong (``nan``, ``inf``; empty for any other failure)."""

    root: str
    kind: str
    symptom: str
    code: str
    message: str
    value: str = ""


@dataclass(frozen=True)
class Fingerprint:
    """What matches a root: every field given must hold (``code`` and ``message`` are regular expressions,
    ``code`` matched whole, ``message`` searched), or the root's signature is one of ``roots``."""

    code: str = ""
    symptom: str = ""
    kind: str = ""
    value: str = ""
    message: str = ""
    roots: tuple[str, ...] = ()

    def matches(self, facts: RootFacts) -> bool:
        """Whether ``facts`` is this bug."""
        if facts.root and facts.root in self.roots:
            return True
        if not (self.code or self.message):
            return False  # a fingerprint naming only roots matches nothing else
        return ((not self.code or re.fullmatch(self.code, facts.code) is not None)
                and (not self.symptom or self.symptom == facts.symptom)
                and (not self.kind or self.kind == facts.kind)
                and (not self.value or self.value == facts.value)
                and (not self.message or re.search(self.message, facts.message) is not None))

    def to_json(self) -> dict[str, Any]:
        """The non-empty fields."""
        data: dict[str, Any] = {k: v for k, v in (("code", self.code), ("symptom", self.symptom), ("kind", self.kind),
                                                  ("value", self.value), ("message", self.message)) if v}
        if self.roots:
            data["roots"] = list(self.roots)
        return data


@dataclass(frozen=True)
class UpstreamIssue:
    """One upstream issue (or pull request) of TVM and the roots it covers."""

    repo: str
    number: int
    title: str
    state: str
    fingerprint: Fingerprint
    affected: str = ""
    """The versions it affects (free text, e.g. ``0.27.0.post1``)."""
    fixed_in: str = ""
    """The release or pull request that fixed it (empty: not fixed)."""
    checked: str = ""
    """How the row was verified."""
    pull: bool = False
    """A pull request rather than an issue."""
    related: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        """``apache/tvm#19579``."""
        return f"{self.repo}#{self.number}"

    @property
    def url(self) -> str:
        """Its address."""
        return f"https://github.com/{self.repo}/{'pull' if self.pull else 'issues'}/{self.number}"

    def note(self) -> str:
        """The known-issue note of a root that matches it."""
        return f"{KNOWN_UPSTREAM} {self.name} ({self.state}{', fixed in ' + self.fixed_in if self.fixed_in else ''})"

    def to_json(self) -> dict[str, Any]:
        """The row as the table file writes it."""
        data: dict[str, Any] = {"repo": self.repo, "number": self.number, "title": self.title, "state": self.state,
                                "fingerprint": self.fingerprint.to_json()}
        for key, value in (("affected", self.affected), ("fixed_in", self.fixed_in), ("checked", self.checked)):
            if value:
                data[key] = value
        if self.pull:
            data["pull"] = True
        if self.related:
            data["related"] = list(self.related)
        return data


def _text(row: dict[str, Any], key: str, where: str, required: bool = False) -> str:
    value = row.get(key, "")
    if (required and not value) or not isinstance(value, str | int | float):
        raise ConfigError(f"{where}: '{key}' must be {'a non-empty' if required else 'a'} string")
    return str(value)


def _pattern(value: str, where: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ConfigError(f"{where}: not a regular expression ({exc})") from None
    return value


def issue_from(row: Any, where: str) -> UpstreamIssue:
    """One row of a table (a one-line :class:`~seedzer.errors.ConfigError` naming ``where`` when it is not one)."""
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: a row must be a mapping")
    unknown = set(row) - {"repo", "number", "title", "state", "fingerprint", "affected", "fixed_in", "checked", "pull",
                          "related"}
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    number = row.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise ConfigError(f"{where}: 'number' must be a positive integer")
    state = _text(row, "state", where, required=True)
    if state not in STATES:
        raise ConfigError(f"{where}: 'state' must be one of {', '.join(STATES)}, not {state!r}")
    found = row.get("fingerprint") or {}
    if not isinstance(found, dict) or set(found) - {"code", "symptom", "kind", "value", "message", "roots"}:
        raise ConfigError(f"{where}: 'fingerprint' must be a mapping of code, symptom, kind, value, message, roots")
    roots = found.get("roots") or []
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise ConfigError(f"{where}: 'fingerprint.roots' must be a list of root signatures")
    printed = Fingerprint(_pattern(_text(found, "code", where), f"{where} (fingerprint.code)"),
                          _text(found, "symptom", where), _text(found, "kind", where), _text(found, "value", where),
                          _pattern(_text(found, "message", where), f"{where} (fingerprint.message)"), tuple(roots))
    if not (printed.code or printed.message or printed.roots):
        raise ConfigError(f"{where}: the fingerprint names no code, message or root (it would match nothing)")
    related = row.get("related") or []
    if not isinstance(related, list) or not all(isinstance(n, int) for n in related):
        raise ConfigError(f"{where}: 'related' must be a list of issue numbers")
    return UpstreamIssue(_text(row, "repo", where) or "apache/tvm", number, _text(row, "title", where, required=True),
                         state, printed, _text(row, "affected", where), _text(row, "fixed_in", where),
                         _text(row, "checked", where), bool(row.get("pull", False)), tuple(related))


def table_from(data: Any, source: str) -> list[UpstreamIssue]:
    """The rows of a parsed table file (``issues:`` a list of rows); one-line errors name ``source``."""
    rows = data.get("issues") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ConfigError(f"{source}: not an upstream table (expected 'issues:' with a list of rows)")
    issues = [issue_from(row, f"{source}: row {i + 1}") for i, row in enumerate(rows)]
    seen: set[str] = set()
    for issue in issues:
        if issue.name in seen:
            raise ConfigError(f"{source}: {issue.name} is listed twice")
        seen.add(issue.name)
    return issues


def dump_table(issues: Iterable[UpstreamIssue]) -> str:
    """A table file's text holding ``issues`` (what :func:`seedzer.finding.known_upstream.parse_table` reads back)."""
    return yaml.safe_dump({"issues": [i.to_json() for i in issues]}, sort_keys=False, allow_unicode=True, width=100)


def merged(*tables: Sequence[UpstreamIssue]) -> list[UpstreamIssue]:
    """One table of several: a later table's row of an issue replaces an earlier one's."""
    rows: dict[str, UpstreamIssue] = {}
    for table in tables:
        for issue in table:
            rows[issue.name] = issue
    return list(rows.values())


def match(issues: Sequence[UpstreamIssue], facts: RootFacts) -> UpstreamIssue | None:
    """The first issue whose fingerprint ``facts`` matches (one naming the root itself first), or None."""
    direct = next((i for i in issues if facts.root and facts.root in i.fingerprint.roots), None)
    return direct or next((i for i in issues if i.fingerprint.matches(facts)), None)


def issue_link(link: str) -> tuple[str, int, bool] | None:
    """``(repo, number, pull)`` of a GitHub issue's or pull request's address, or None for any other link."""
    found = ISSUE_URL.match(link.strip())
    return (found.group(1), int(found.group(2)), "/pull/" in link) if found else None


@dataclass
class ReportedRoot:
    """What ``bugs mark ROOT reported --link URL`` knows of the root it files upstream."""

    root: str
    kind: str
    symptom: str
    culprit: str
    headline: str
    link: str

    def issue(self) -> UpstreamIssue | None:
        """The user's row for the issue the link names (None: the link is no GitHub issue)."""
        found = issue_link(self.link)
        if found is None:
            return None
        repo, number, pull = found
        return UpstreamIssue(repo, number, self.headline[:200] or f"root {self.root}", "open",
                             Fingerprint(roots=(self.root,)),
                             checked=f"marked reported by the user for root {self.root} ({self.kind}, {self.symptom}, "
                             f"{self.culprit or 'no culprit'})", pull=pull)
