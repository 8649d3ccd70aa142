"""The TIR worker's TVMScript parse: TVM's own parser, without the stack walk its decorator pays for.

To find which dialect parses a function, TVM's parser evaluates the decorator expression
(``T.prim_func(s_tir=True)``) and reads only its ``dispatch_token``; the flags it passes are read
from the syntax tree. Called with arguments, ``T.prim_func`` first calls ``inspect.stack()`` for
closures of a Python function, which a script has none of: a large share of a parse in a worker,
whose stack and module table are deep (docs/measurements.md, 'Workers and isolation').
:func:`quick_parser` parses with the same global names except that ``T.prim_func`` is a stand-in
carrying the same dispatch token, so the PrimFunc is the same
(``tests/integration/test_execute_parsing.py`` checks it structurally on seeds and mutants).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seedzer.kernel.tir.lowering import parse_func

DIALECT_NAMES = ("T", "tir")
"""The global names under which TVMScript offers the TIR dialect module."""


class _PrimFuncToken:
    """Stands in for ``T.prim_func`` while a script's decorator is evaluated: only its token is read."""

    def __init__(self, token: str) -> None:
        self.dispatch_token = token

    def __call__(self, *args: Any, **kwargs: Any) -> _PrimFuncToken:
        return self


class _Dialect:
    """TVM's TIR dialect module with ``prim_func`` replaced by :class:`_PrimFuncToken`."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self.prim_func = _PrimFuncToken(module.prim_func.dispatch_token)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def parser_names() -> dict[str, Any] | None:
    """TVMScript's global names for parsing, with the quick ``T.prim_func`` (None, TVMScript's own
    names, if this TVM does not expose them)."""
    try:
        from tvm.script.parser.core.entry import _default_globals
    except ImportError:
        return None
    names = dict(_default_globals())
    if "T" not in names:
        return None
    dialect = _Dialect(names["T"])
    for name in DIALECT_NAMES:
        names[name] = dialect
    return names


def quick_parser() -> Callable[[str], Any]:
    """A parse function (script -> PrimFunc) that gives what :func:`parse_func` gives, faster."""
    names = parser_names()
    if names is None:
        return parse_func
    return lambda script: parse_func(script, names)  # the parser only reads its global names
