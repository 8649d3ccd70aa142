"""The parsed PrimFuncs a TIR worker keeps, by their TVMScript.

Parsing TVMScript costs more than a whole LLVM build at opt-level 0 (docs/measurements.md, 'Workers
and isolation'), and a worker parses the same corpus entries again and again, so it keeps the parsed
functions; a mutant the worker just made is put in under its printed script, so executing it needs
no parse at all. TVM-free (the parse function is given: :func:`seedzer.levels.tir.parsing.quick_parser`
in a worker).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seedzer.execute.lru import LRU


class ParsedScripts:
    """PrimFuncs by TVMScript text, parsed on first use (``parse`` raises for unusable text).

    Two LRUs: the scripts a worker mutates from (corpus entries, asked for with ``parent=True``) and
    the fresh ones (its own mutants, and scripts it only runs). A worker makes one mutant per test
    case and the campaign keeps few of them, so with one cache the mutants evicted the corpus
    entries after ``size`` test cases and a parent was parsed again in ever more of them (what that
    cost: docs/measurements.md, 'Workers and isolation'). A fresh script asked for as a parent moves
    to the parents' cache.
    """

    def __init__(self, parse: Callable[[str], Any], size: int, fresh: int) -> None:
        self._parse = parse
        self._parents: LRU[str, Any] = LRU(size)
        self._fresh: LRU[str, Any] = LRU(fresh)
        self.hits = 0
        self.misses = 0

    def get(self, script: str, parent: bool = False) -> Any:
        """The PrimFunc of ``script``; ``parent``: it is about to be mutated (a corpus entry)."""
        func = self._parents.get(script)
        if func is None:
            func = self._fresh.get(script)
            if func is not None and parent:
                self._parents.put(script, func)
        if func is None:
            self.misses += 1
            func = self._parse(script)
            (self._parents if parent else self._fresh).put(script, func)
        else:
            self.hits += 1
        return func

    def put(self, script: str, func: Any) -> None:
        """Remember that ``script`` is the text of ``func`` (a mutant printed by the worker)."""
        self._fresh.put(script, func)
