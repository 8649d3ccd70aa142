"""Binding the pass catalogue to TVM: building passes, and applying a sequence to a module.

:data:`PASSES` maps every name of :mod:`seedzer.mutate.pass_catalog` to its :class:`PassInfo`;
:func:`tvm_pass_names` enumerates ``tvm.tirx.transform`` and ``tvm.s_tir.transform`` for the check
that the catalogue is complete.

Many passes only accept IR at a certain lowering stage (see :mod:`seedzer.mutate.stages`);
:func:`apply_passes` by default *repairs* a sequence by running the standard lowering passes a pass
needs just before it, so random sequences are not wasted on precondition errors.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, tirx

from seedzer.mutate.pass_catalog import (
    CATALOG,
    EXCLUDED,
    REQUIRED_ARG_DEFAULTS,
    PassInfo,
    optional_pass_names,
    random_sequence,
    sample_pass,
)
from seedzer.mutate.stages import default_target, ensure
from seedzer.seed import PassSpec

__all__ = [
    "EXCLUDED",
    "PASSES",
    "PassFailure",
    "PassInfo",
    "apply_passes",
    "factory",
    "instantiate",
    "optional_pass_names",
    "random_sequence",
    "sample_pass",
    "tvm_pass_names",
]

PASSES: dict[str, PassInfo] = CATALOG
"""Every registry pass by name (the catalogue; build one with :func:`instantiate`)."""

_MODULES = {"tirx": tirx.transform, "s_tir": s_tir.transform}


def tvm_pass_names() -> list[str]:
    """Every pass constructor of ``tvm.tirx.transform`` and ``tvm.s_tir.transform`` (qualified)."""
    out = []
    for prefix, module in _MODULES.items():
        for attr in dir(module):
            if attr[:1].isupper() and inspect.isfunction(getattr(module, attr)):
                out.append(f"{prefix}.{attr}")
    return sorted(out)


def factory(name: str) -> Callable[..., Any]:
    """The TVM function that constructs pass ``name``."""
    info = PASSES[name]
    return getattr(_MODULES[info.module], info.function)  # type: ignore[no-any-return]


class PassFailure(Exception):
    """A pass of a sequence raised. ``pass_name`` and ``index`` say which one; ``exc`` is the cause."""

    def __init__(self, pass_name: str, index: int, exc: BaseException, repaired: bool = True) -> None:
        self.pass_name = pass_name
        self.index = index
        self.exc = exc
        self.repaired = repaired
        super().__init__(f"pass #{index} {pass_name} failed: {type(exc).__name__}: {exc}")

    @property
    def precondition(self) -> bool:
        """Whether the failure is a precondition error (invalid input) rather than a bug."""
        from seedzer.mutate.pass_errors import classify_pass_error

        return classify_pass_error(str(self.exc), repaired=self.repaired)


def instantiate(spec: PassSpec) -> tuple[Any, dict[str, Any]]:
    """Build the TVM pass of ``spec`` and the PassContext config entries its arguments set."""
    info = PASSES.get(spec.name)
    if info is None:
        raise KeyError(f"unknown pass {spec.name!r}")
    known = {a.name: a for a in info.args}
    ctor: dict[str, Any] = dict(REQUIRED_ARG_DEFAULTS.get(spec.name, {}))
    config: dict[str, Any] = {}
    for key, value in spec.args:
        arg = known.get(key)
        if arg is None:
            raise KeyError(f"pass {spec.name} has no argument {key!r} (known: {sorted(known)})")
        if arg.config_key is None:
            ctor[key] = value
        elif arg.config_field is None:
            config[arg.config_key] = value
        else:
            config.setdefault(arg.config_key, {})[arg.config_field] = value
    return factory(spec.name)(**ctor), config


def apply_passes(
    mod: Any,
    specs: Sequence[PassSpec],
    instruments: Sequence[Any] | None = None,
    repair: bool = True,
    target: Any = None,
    unchanged: list[int] | None = None,
) -> Any:
    """Apply ``specs`` one by one, each in its own ``PassContext(opt_level=3, config=...)`` and
    with ``target`` as the current target; ``instruments`` are passed to every PassContext.

    With ``repair`` (the default) the module is first bound to ``target`` (default: llvm at
    opt-level 0 with an llvm host) and, before each pass, the standard lowering passes it requires
    are run (:func:`seedzer.mutate.stages.ensure`). The bound ``target`` attribute persists: a later
    ``tvm.compile(mod, target=...)`` does not override it, so pass the target the build should use
    (e.g. opt-level 3 for a performance oracle). Raises :class:`PassFailure` naming the first pass
    that raised (a failing repair pass is reported under the name of the pass it was run for).
    ``unchanged``, when given, receives the index of every spec that left the module structurally
    unchanged (repairs included): such passes add nothing and can be dropped from a stored sequence.
    """
    target = target if target is not None else default_target()
    instruments = list(instruments or [])
    if repair:
        with tvm.transform.PassContext(opt_level=3, instruments=instruments):
            mod = ensure(mod, frozenset({"target"}), target)
    for index, spec in enumerate(specs):
        try:
            p, config = instantiate(spec)
            with tvm.transform.PassContext(opt_level=3, config=config, instruments=instruments), target:
                before = mod
                if repair:
                    mod = ensure(mod, PASSES[spec.name].requires, target)
                mod = p(mod)
            if unchanged is not None and tvm_ffi.structural_equal(before, mod):
                unchanged.append(index)
        except Exception as exc:
            raise PassFailure(spec.name, index, exc, repaired=repair) from exc
    return mod
