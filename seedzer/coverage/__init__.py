"""Coverage feedback behind one interface (docs/design.md §6).

Workers collect raw features of an execution (``passes`` features always, plus a native backend's
prefixed ones through :mod:`seedzer.coverage.collectors`); the campaign process merges them into a
:class:`~seedzer.protocols.CoverageBackend` (a :class:`CoverageTracker` keeping every family's total).
Backends are looked up by name in ``BACKENDS``.
"""

from __future__ import annotations

from collections.abc import Callable

from seedzer.coverage.tracker import CoverageTracker
from seedzer.errors import ConfigError
from seedzer.protocols import CoverageBackend

BACKENDS: dict[str, Callable[[], CoverageBackend]] = {
    "passes": lambda: CoverageTracker("passes"),
    "breakpoints": lambda: CoverageTracker("breakpoints"),
    "sancov": lambda: CoverageTracker("sancov"),
}


def make_backend(name: str) -> CoverageBackend:
    """Build the campaign-side coverage backend called ``name``."""
    try:
        return BACKENDS[name]()
    except KeyError:
        raise ConfigError(f"unknown coverage backend '{name}' (known: {', '.join(sorted(BACKENDS))})") from None
