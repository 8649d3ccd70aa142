"""Worker-side "optimizations triggered": which passes a test case ran, and which of them changed the IR.

WhiteFox's headline metric counts an optimization as *triggered* by a test case when it changed the
program. Here a pass is triggered when the module it returns differs structurally from the one it was
given (:func:`module_changed`); every pass a test case runs (a fuzzed one or one of TVM's own
pipeline) is recorded in a :class:`PassTriggers` by its name, triggered if any of its runs changed the
module. A worker reports the passes run and those triggered with each execution; the campaign makes
the triggered ones coverage features ``triggered/<level>/<pass>`` and counts, per pass, the test cases
that ran and that triggered it (:mod:`seedzer.campaign.triggers`).

The check is cheap on the hot path: a module a pass returns as the same object is unchanged without
a walk; otherwise ``structural_equal`` compares them, stopping at the first difference (a changed
module costs little, an unchanged one a walk of both). A module of several functions (the graph
level's, in ``tvm.compile``) is compared function by function, skipping those the pass returned as
the same object (a quarter less time there; on the TIR level's one-function modules the whole-module
comparison is the cheaper). Measured: docs/measurements.md, 'Optimizations triggered'.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import tvm
import tvm_ffi


def module_changed(before: Any, after: Any) -> bool:
    """Whether ``after`` (what a pass returned) differs structurally from ``before`` (its input)."""
    if after.same_as(before):
        return False
    if not isinstance(before, tvm.IRModule) or not isinstance(after, tvm.IRModule) or len(before.functions) < 2:
        return not tvm_ffi.structural_equal(before, after)
    old = {gv.name_hint: func for gv, func in before.functions.items()}
    new = {gv.name_hint: func for gv, func in after.functions.items()}
    if old.keys() != new.keys():
        return True
    for name, func in new.items():
        if not func.same_as(old[name]) and not tvm_ffi.structural_equal(old[name], func):
            return True
    if after.attrs.same_as(before.attrs) and after.global_infos.same_as(before.global_infos):
        return False
    return not tvm_ffi.structural_equal(before.attrs, after.attrs) \
        or not tvm_ffi.structural_equal(before.global_infos, after.global_infos)


class PassTriggers:
    """The passes one test case ran, by name, and whether any run of each changed the module."""

    def __init__(self) -> None:
        self.ran: dict[str, bool] = {}

    def record(self, pass_name: str, changed: bool) -> None:
        """One run of ``pass_name``; ``changed``: it changed the module."""
        self.ran[pass_name] = self.ran.get(pass_name, False) or changed

    def clear(self) -> None:
        """Forget the test case (the next one starts)."""
        self.ran = {}

    def replay(self, passes: dict[str, bool]) -> None:
        """Record again the runs ``passes`` holds (a reused build's, :meth:`captured`)."""
        for name, changed in passes.items():
            self.record(name, changed)

    @contextmanager
    def captured(self) -> Iterator[dict[str, bool]]:
        """Record the runs inside the block in a dict of their own (yielded), also counted for the
        test case: what a build ran, kept to be replayed when its result is reused."""
        outer, self.ran = self.ran, {}
        own = self.ran
        try:
            yield own
        finally:
            self.ran = outer
            self.replay(own)

    def triggered(self) -> list[str]:
        """The passes that changed the module at least once, sorted."""
        return sorted(name for name, changed in self.ran.items() if changed)


SKIPPED_PASSES = frozenset({"sequential", "_pipeline"})
"""Names of pass containers (``tvm.transform.Sequential``, the Relax build's pipeline wrapper): their
passes are recorded one by one."""


@tvm.ir.instrument.pass_instrument
class TriggerInstrument:
    """A PassInstrument recording every pass run inside its PassContext into ``triggers`` (nested
    passes too: a stack of inputs). ``active()`` says whether the current pass belongs to the test
    case (the graph level's reference build, cached per model, does not)."""

    def __init__(self, triggers: PassTriggers, active: Any = None) -> None:
        self.triggers = triggers
        self.active = active
        self._inputs: list[Any] = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Remember the pass's input."""
        self._inputs.append(mod)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Record the pass, triggered when its output differs from its input."""
        before = self._inputs.pop() if self._inputs else None
        name = str(info.name)
        if before is None or name in SKIPPED_PASSES or (self.active is not None and not self.active()):
            return
        if self.triggers.ran.get(name):  # triggered already in this case: another run adds nothing
            self.triggers.record(name, True)
            return
        self.triggers.record(name, module_changed(before, mod))
