"""Facts about the installed TVM that the campaign needs without importing TVM itself."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.execute.isolated import run_isolated

PASS_BUILDER_MODULE = "seedzer.mutate.pass_builder"


def _optional_pass_names() -> list[str]:
    from seedzer.mutate.passes import optional_pass_names

    return list(optional_pass_names())


@functools.lru_cache(maxsize=1)
def nopt_disabled_passes() -> list[str]:
    """The passes an unoptimized build disables (asked of a zygote child, so TVM stays out)."""
    res = run_isolated(_optional_pass_names, timeout=120)
    if not res.ok:
        raise SeedzerError(f"cannot list TVM's optional passes: {res.outcome.message if res.outcome else ''}")
    return list(res.value)


@functools.lru_cache(maxsize=1)
def pass_builder_source() -> str:
    """Source text of the pass-building module, embedded verbatim in every repro.py."""
    spec = importlib.util.find_spec(PASS_BUILDER_MODULE)
    if spec is None or spec.origin is None:
        raise SeedzerError(f"cannot find {PASS_BUILDER_MODULE}")
    return Path(spec.origin).read_text()
