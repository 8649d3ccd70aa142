"""The configuration's value checks: the limits of every field a YAML file or a CLI option may set,
and the conversion of a scalar field to its type, each failure one line naming the field."""

from __future__ import annotations

import math
import re
from typing import Any

from seedzer.environments.wheels import VERSION
from seedzer.errors import ConfigError, UsageError
from seedzer.oracles.registry import ORACLES
from seedzer.yamlfiles import INT64, MAX_JOBS, MAX_MINUTES, MAX_POOL, MAX_TIMEOUT, MIN_TIMEOUT

SCHEDULER_NAMES = ("cost", "uniform")
"""The seed schedulers ``fuzz.scheduler`` may name (:data:`seedzer.campaign.scheduler.SCHEDULERS` implements them)."""
ENERGY_NAMES = ("coverage", "rarity")
"""The energies ``fuzz.energy`` may name (:data:`seedzer.campaign.scheduler.ENERGIES`)."""


def finite(v: Any) -> bool:
    """Whether ``v`` is a finite number (not a bool)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def between(low: float, high: float) -> Any:
    """A check that a value is a finite number from ``low`` to ``high``."""
    return lambda v: finite(v) and low <= v <= high


def _known_heuristic(name: str) -> bool:
    from seedzer.generate.heuristics import heuristic_known  # lazy: config must not import the generator

    return heuristic_known(name)


_TIMEOUT = (f"must be a finite number of seconds between {MIN_TIMEOUT:g} and {MAX_TIMEOUT:g} (a day)",
            between(MIN_TIMEOUT, MAX_TIMEOUT))
_SEED = (f"must be an integer between {-INT64 - 1} and {INT64}", lambda v: -INT64 - 1 <= v <= INT64)

CHECKS: dict[str, tuple[str, Any]] = {
    "fuzz.jobs": (f"must be >= 1 and <= {MAX_JOBS}", lambda v: 1 <= v <= MAX_JOBS),
    "fuzz.minutes": (f"must be > 0 and <= {MAX_MINUTES:g} (a year), a finite number",
                     lambda v: finite(v) and 0 < v <= MAX_MINUTES),
    "fuzz.seed": _SEED,
    "fuzz.snapshot_period": ("must be between 0.5 and 10 seconds", between(0.5, 10)),
    "fuzz.tolerance": ("must be >= 1 and <= 1000000", lambda v: 1 <= v <= 1_000_000),
    "fuzz.max_passes": ("must be between 1 and 50", lambda v: 1 <= v <= 50),
    "fuzz.max_seeds_per_model": ("must be between 0 (all) and 1000000", lambda v: 0 <= v <= 1_000_000),
    "fuzz.coverage": ("must be one of: breakpoints, passes, sancov",
                      lambda v: v in ("breakpoints", "passes", "sancov")),
    "fuzz.block_granularity": ("must be one of: blocks, functions", lambda v: v in ("blocks", "functions")),
    "fuzz.block_cache": ("must be a directory name", lambda v: bool(v.strip()) and "\0" not in v),
    "fuzz.scheduler": (f"must be one of: {', '.join(SCHEDULER_NAMES)}", lambda v: v in SCHEDULER_NAMES),
    "fuzz.energy": (f"must be one of: {', '.join(ENERGY_NAMES)}", lambda v: v in ENERGY_NAMES),
    "epochs.count": ("must be between 0 (none) and 9", lambda v: 0 <= v <= 9),
    "epochs.models": ("must be between 1 and 1000", lambda v: 1 <= v <= 1000),
    "epochs.cpu_share": ("must be a share above 0 and at most 1", lambda v: finite(v) and 0 < v <= 1),
    "generate.heuristic": ("must name a shipped heuristic (see `seedzer pool heuristics`) or an existing "
                           ".yaml/.py heuristic file", _known_heuristic),
    "generate.count": (f"must be >= 1 and <= {MAX_POOL}", lambda v: 1 <= v <= MAX_POOL),
    "generate.seed": _SEED,
    "generate.max_nodes": ("must be between 1 and 100", lambda v: 1 <= v <= 100),
    "generate.pool_dir": ("must be a directory name", lambda v: bool(v.strip()) and "\0" not in v),
    "timeouts.load": _TIMEOUT,
    "timeouts.mutate": _TIMEOUT,
    "timeouts.passes": _TIMEOUT,
    "timeouts.build": _TIMEOUT,
    "timeouts.run": _TIMEOUT,
    "timeouts.compare": _TIMEOUT,
    "timeouts.relative": ("must be between 0 (fixed limits only) and 1000", between(0, 1000)),
    "timeouts.floor": _TIMEOUT,
    "timeouts.hang_share": ("must be a share between 0 and 1", between(0, 1)),
    "bounds.max_growth": ("must be between 1 and 1000", between(1, 1000)),
    "bounds.max_script_bytes": ("must be between 1024 and 2**30 bytes", lambda v: 1024 <= v <= 1 << 30),
    "bounds.max_unroll": ("must be between 1 and 2**20 iterations", lambda v: 1 <= v <= 1 << 20),
    "bounds.max_passes_growth": ("must be between 0 and 50", lambda v: 0 <= v <= 50),
    "bounds.perf_max_script_bytes": ("must be between 0 and 2**30 bytes", lambda v: 0 <= v <= 1 << 30),
    "graph.passes": ("must be between 0 (off) and 1000", between(0, 1000)),
    "graph.uoc": ("must be between 0 (off) and 1000", between(0, 1000)),
    "graph.pioc": ("must be between 0 (off) and 1000", between(0, 1000)),
    "graph.edge": ("must be between 0 (off) and 1000", between(0, 1000)),
    "graph.insert": ("must be between 0 (off) and 1000", between(0, 1000)),
    "graph.special": ("must be between 0 (off) and 1000", between(0, 1000)),
    "graph.max_model_mutations": ("must be between 0 and 100", lambda v: 0 <= v <= 100),
    "graph.llvm_opt_level": ("must be 0, 1, 2 or 3", lambda v: 0 <= v <= 3),
    "oracles.gate_share": ("must be a share between 0 (no limit) and 1", between(0, 1)),
    "limits.max_tensor_bytes": ("must be between 0 (no bound) and 2**62 bytes", lambda v: 0 <= v <= 1 << 62),
    "limits.max_model_bytes": ("must be between 0 (no bound) and 2**62 bytes", lambda v: 0 <= v <= 1 << 62),
    "limits.max_testcase_memory": ("must be 0 (no bound) or between 256 MiB and 2**62 bytes",
                                   lambda v: v == 0 or 256 << 20 <= v <= 1 << 62),
    "known_issues[].pattern": ("must be a valid regular expression", lambda v: _is_regex(v)),
    "oracles.enabled": (f"entries must be among {', '.join(ORACLES)}", lambda v: set(v) <= set(ORACLES)),
    "oracles.rtol": ("must be a finite number >= 0", lambda v: finite(v) and v >= 0),
    "oracles.atol": ("must be a finite number >= 0", lambda v: finite(v) and v >= 0),
    "oracles.perf_rate": ("must be between 0 and 1", between(0, 1)),
    "oracles.perf_factor": ("must be a finite number > 1 and <= 1000", lambda v: finite(v) and 1 < v <= 1000),
    "oracles.perf_repeats": ("must be >= 1 and <= 100", lambda v: 1 <= v <= 100),
    "reproducers.minutes": ("must be > 0 and <= 600", lambda v: finite(v) and 0 < v <= 600),
    "reproducers.venvs": ("must be a directory name", lambda v: bool(v.strip()) and "\0" not in v),
    "reproducers.venvs_max_gb": ("must be a finite number of GiB >= 0 (0: no bound)", lambda v: finite(v) and v >= 0),
    "reproducers.versions": ("entries must be TVM release numbers (e.g. 0.26.0) or paths to .whl files",
                             lambda v: all(isinstance(x, str) and (x.endswith(".whl") or VERSION.match(x)) for x in v)),
    "reproducers.pip_args": ("entries must be pip arguments (strings)", lambda v: all(isinstance(x, str) for x in v)),
    "ledger.path": ("must be a file name (empty: beside the seed pools)", lambda v: "\0" not in v),
}
"""The check of each field, by dotted name (``[]`` for every item of a list): the sentence a value that
fails it is told, and the test."""


def check_value(dotted: str, value: Any, culprit: str) -> None:
    """Apply the configuration's check of field ``dotted`` to a value given elsewhere (a CLI option).

    ``culprit`` names where the value came from (``--minutes``); raises a one-line
    :class:`~seedzer.errors.UsageError` naming it.
    """
    check = CHECKS.get(dotted)
    if check and not check[1](value):
        raise UsageError(f"{culprit}: {check[0]} (got {value!r})")


def _is_regex(text: str) -> bool:
    try:
        re.compile(text)
    except re.error:
        return False
    return True


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def convert_scalar(value: Any, tp: Any, where: str, source: str) -> Any:
    """``value`` of the YAML field ``where`` as the scalar type ``tp`` (an int where a float is
    expected, a whole float where an int is): a one-line :class:`ConfigError` naming the field
    when it is of another type."""
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise ConfigError(f"{source}: field '{where}' must be a finite number (got {value})") from None
    if tp is int and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)  # 1e9 or 4.0 where a whole number is expected
    if tp in (int, float, str, bool) and (not isinstance(value, tp) or (tp is int and isinstance(value, bool))):
        raise ConfigError(
            f"{source}: field '{where}' must be {_type_name(tp)}, got {type(value).__name__} {value!r}"
        )
    return value
