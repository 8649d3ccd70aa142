"""The finding kinds' registry: lookup by name, lazy import, and no branching on a kind elsewhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from seedzer.errors import SeedzerError
from seedzer.finding.kind import FindingKind
from seedzer.finding.registry import KINDS, kind, register

PACKAGE = Path(__file__).resolve().parents[3] / "seedzer"


def test_every_registered_kind_answers_to_its_name_with_its_kernel() -> None:
    for name in ("tir", "load", "graph"):
        found = kind(name)
        assert found.name == name
        assert all((PACKAGE / "kernel" / f"{module.replace('.', '/')}.py").is_file()
                   for module in found.kernel.split("+"))
        assert "numpy" in found.needs


def test_a_kind_answers_to_its_older_name_and_keeps_hashing_it() -> None:
    """Campaign folders written before the kinds were named after their levels say ``lowlevel`` and
    ``loader``; their signatures hashed those names, which the kinds keep hashing."""
    assert (kind("lowlevel").name, kind("lowlevel").salt) == ("tir", "lowlevel")
    assert (kind("loader").name, kind("loader").salt) == ("load", "loader")
    assert (kind("graph").name, kind("graph").salt) == ("graph", "graph")


def test_an_unknown_kind_is_a_one_line_error_naming_the_known_ones() -> None:
    with pytest.raises(SeedzerError, match=r"no finding kind 'nope' \(known: graph, load, sched, tir\)"):
        kind("nope")


def test_a_registered_kind_is_found_by_name() -> None:
    register("test-kind", "seedzer.finding.tir.kind:KIND")
    try:
        found: FindingKind = kind("test-kind")
        assert found is kind("lowlevel")
    finally:
        del KINDS["test-kind"]


def test_looking_up_the_registry_imports_no_kind() -> None:
    code = ("import sys, seedzer.finding.registry, seedzer.finding.store, seedzer.finding.recheck\n"
            "print(sorted(m for m in sys.modules if m.startswith(('seedzer.finding.lo', 'seedzer.finding.graph'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_nothing_outside_the_registry_branches_on_a_finding_kind() -> None:
    kinds = "(lowlevel|loader|graph)"
    branch = re.compile(rf"""\bkind\s*[!=]=\s*["']{kinds}["']|["']{kinds}["']\s*[!=]=\s*\w*kind""")
    offenders = [f"{path.relative_to(PACKAGE)}:{n}" for path in PACKAGE.rglob("*.py")
                 for n, line in enumerate(path.read_text().splitlines(), 1) if branch.search(line)]
    assert offenders == []
