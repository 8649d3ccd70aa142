"""Nothing outside the registries and the levels' and kinds' own packages branches on a level or a kind.

The campaign, the workers, the store, the reports and the commands iterate over the registered levels
(:mod:`seedzer.level_table`, :mod:`seedzer.levels.registry`) and reach a kind through
:mod:`seedzer.finding.registry`: an ``if`` (or a loop's filter, a conditional expression) that names a
level or a kind, a configuration attribute of one (``cfg.levels.tir``) or an ``isinstance`` test of a
level's case type is a dispatch that a new level would have to edit. This test reads the source (it
runs nothing) and lists every such dispatch outside the places that own the names.

The configuration and the settings a worker gets go further: they do not name a level at all (not in
code, strings, docstrings or comments). A level's settings are its own section, found through its
entry in the level table; a level with settings adds no field, check or key to the house.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "seedzer"
NAMES = frozenset({"tir", "graph", "sched", "load", "lowlevel", "loader"})
"""Every level's and kind's name, today's and older."""
CASE_TYPES = frozenset({"Case", "GraphCase", "LoadCase", "SchedCase", "GraphSeed", "LoaderFailure", "TirFinding",
                        "GraphFinding", "LoadFinding", "SchedFinding"})
"""The types whose class tells a level or a kind."""
OWNERS = ("level_table.py", "levels/", "finding/registry.py", "finding/meta.py", "finding/tir/", "finding/graph/",
          "finding/load/", "finding/sched/", "kernel/")
"""Where the names are owned: the registries and the levels' and kinds' own code (relative to the package)."""
LEVEL_NAMES = frozenset({"tir", "graph", "sched", "lowlevel"})
"""Every level's name, today's and older."""
NAMELESS = ("config/", "execute/settings.py")
"""What names no level at all (relative to the package)."""
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def _tests(tree: ast.AST) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.IfExp | ast.While):
            found.append(node.test)
        elif isinstance(node, ast.comprehension):
            found.extend(node.ifs)
    return found


def dispatches(source: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every dispatch on a level or a kind in ``source`` (see the module docstring)."""
    tree = ast.parse(source)
    hits: list[tuple[int, str]] = []
    for test in _tests(tree):
        named = any(isinstance(n, ast.Constant) and n.value in NAMES for n in ast.walk(test))
        configured = any(isinstance(n, ast.Attribute) and n.attr in NAMES and isinstance(n.value, ast.Attribute)
                         and n.value.attr == "levels" for n in ast.walk(test))
        if named or configured:
            hits.append((test.lineno, ast.unparse(test)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2:
            classes = {getattr(n, "id", getattr(n, "attr", "")) for n in ast.walk(node.args[1])}
            if classes & CASE_TYPES:
                hits.append((node.lineno, ast.unparse(node)))
    return hits


def test_the_scanner_sees_the_dispatches_it_forbids() -> None:
    source = '''
if level_of(script) == "graph":
    pass
entries = [e for e in found if cfg.levels.tir > 0]
kind = "x" if isinstance(case, GraphCase) else "y"
if roots.get("load"):
    pass
if model.graph.input and isinstance(x, int) and stage == "run":
    pass
'''
    assert sorted(line for line, _ in dispatches(source)) == [2, 4, 5, 6]


def test_no_dispatch_on_a_level_or_a_kind_outside_their_owners() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(OWNERS):
            continue
        found.extend(f"seedzer/{rel}:{line}: {code}" for line, code in dispatches(path.read_text()))
    assert found == [], "dispatch on a level or a kind outside the registries:\n" + "\n".join(found)


def level_words(source: str) -> list[tuple[int, str]]:
    """``(line, token)`` of every token of ``source`` (a name, a string, a comment) holding a word that names
    a level: ``GraphConfig``, ``"fuzz.tolerance of the TIR level"``, ``# the graph level``."""
    hits = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        words = {w.lower() for w in _WORD.findall(token.string)}
        if token.type in (tokenize.NAME, tokenize.STRING, tokenize.COMMENT) and words & LEVEL_NAMES:
            hits.append((token.start[0], token.string.splitlines()[0][:80]))
    return hits


def test_the_word_scanner_sees_a_level_in_names_strings_and_comments() -> None:
    source = '''
graph: GraphConfig = field(default_factory=GraphConfig)  # fine
x = "levels.tir.weight"
y = 1  # the TIR level
paragraph = "graphs of a tire"
'''
    assert sorted({line for line, _ in level_words(source)}) == [2, 3, 4]


def test_the_configuration_and_the_worker_settings_name_no_level() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(NAMELESS):
            found.extend(f"seedzer/{rel}:{line}: {text}" for line, text in level_words(path.read_text()))
    assert found == [], "a level named where no level may be:\n" + "\n".join(found)
