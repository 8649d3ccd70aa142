"""Campaign-side set-up of native coverage backends, before any worker starts (TVM-free).

``prepare_collector(name, out, known, cache_dir, granularity)`` returns the
:class:`~seedzer.coverage.collectors.CollectorSpec` workers build their collector from, or None for
``passes`` (pure Python, nothing to set up). Set-up functions are looked up in :data:`SETUPS`; a
native backend without one gets a spec with no options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from seedzer.coverage.blocktable import load_or_build, tvm_compiler_library
from seedzer.coverage.bpcollector import extension
from seedzer.coverage.collectors import CollectorSpec
from seedzer.coverage.hitmap import HitMap

HITMAP_FILE = "coverage.hitmap"

SetupFn = Callable[[Path, Iterable[str], str, str], CollectorSpec]
"""(campaign dir, features already known, block cache dir, granularity) -> collector spec."""


def setup_breakpoints(out: Path, known: Iterable[str], cache_dir: str, granularity: str) -> CollectorSpec:
    """Build or load the block table of TVM's compiler library, and a fresh hit map with known blocks marked.

    The map lives in the campaign directory and is rebuilt from ``known`` (campaign.db's features)
    at every start, so ``--resume`` never re-reports a block and never misses one.
    """
    extension()  # one clear line now, rather than a dying worker later, when the C extension is missing
    lib = tvm_compiler_library()
    table = load_or_build(lib, cache_dir, granularity, progress=True)
    hitmap = HitMap.create(out / HITMAP_FILE, len(table.offsets))
    hitmap.mark(table.indices_of(f for f in known if f.startswith("bp:")).tolist())
    return CollectorSpec("breakpoints", {"library": str(lib), "cache_dir": str(Path(cache_dir).expanduser()),
                                         "granularity": granularity, "hitmap": str(out / HITMAP_FILE)})


def setup_sancov(out: Path, known: Iterable[str], cache_dir: str, granularity: str) -> CollectorSpec:
    """Check, without importing TVM, that the installed TVM is a sancov build; one line if it is not.

    Nothing is shared between workers: each reads its own copy of the counters (they fork from the
    zygote with the import-time counts) and the campaign de-duplicates the features.
    """
    from seedzer.coverage.sancov import collector_spec

    return collector_spec()


SETUPS: dict[str, SetupFn] = {"breakpoints": setup_breakpoints, "sancov": setup_sancov}


def prepare_collector(name: str, out: Path, known: Iterable[str], cache_dir: str,
                      granularity: str) -> CollectorSpec | None:
    """The worker collector spec of backend ``name`` (None for ``passes``)."""
    if name == "passes":
        return None
    setup = SETUPS.get(name)
    return setup(out, known, cache_dir, granularity) if setup else CollectorSpec(name)
