"""Worker-side coverage collectors: per-execution native coverage features, looked up by name.

A campaign with ``fuzz.coverage`` set to a native backend (``breakpoints``, ``sancov``) asks each
worker to build the collector of that name once, at worker start, from :data:`COLLECTORS`. The
worker calls :meth:`Collector.start` once before its first execution and :meth:`Collector.take`
after every execution; the strings ``take`` returns are added to the execution record's
``features`` next to the ``passes`` features (which every record always carries).

Features are prefixed by backend so the campaign can keep per-backend totals, e.g.
``bp:tvm:1a2b3c`` (a block of ``libtvm_compiler.so`` at that offset, in TVM's own code) or
``sancov:...``. This module imports neither TVM nor a backend's implementation: factories import
lazily so that registering a backend costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from seedzer.coverage.spec import CollectorSpec
from seedzer.errors import ConfigError

__all__ = ["COLLECTORS", "Collector", "CollectorSpec", "make_collector", "register"]


@runtime_checkable
class Collector(Protocol):
    """Collects native coverage inside one worker process."""

    name: str

    def start(self) -> None:
        """Prepare collection (attach shared state, arm instrumentation); called once per worker."""
        ...

    def take(self) -> list[str]:
        """Features first reached by this process since the previous call (prefixed by backend)."""
        ...


CollectorFactory = Callable[[dict[str, Any]], Collector]
"""Builds a collector from :attr:`CollectorSpec.options`."""


def _breakpoints(options: dict[str, Any]) -> Collector:
    from seedzer.coverage.bpcollector import BreakpointCollector

    return BreakpointCollector.from_options(options)


def _sancov(options: dict[str, Any]) -> Collector:
    from seedzer.coverage.sancov import SancovCollector

    return SancovCollector.from_options(options)


COLLECTORS: dict[str, CollectorFactory] = {
    "breakpoints": _breakpoints,
    "sancov": _sancov,
}
"""Backend name -> factory. Other native backends (``sancov``) register here the same way."""


def register(name: str, factory: CollectorFactory) -> None:
    """Register a collector factory under ``name`` (replacing an earlier one of that name)."""
    COLLECTORS[name] = factory


def make_collector(spec: CollectorSpec) -> Collector:
    """Build the worker-side collector described by ``spec``; unknown names are a ConfigError."""
    try:
        factory = COLLECTORS[spec.name]
    except KeyError:
        raise ConfigError(
            f"unknown coverage collector '{spec.name}' (known: {', '.join(sorted(COLLECTORS))})"
        ) from None
    return factory(spec.options)
