"""The campaign configuration: a validated YAML schema whose defaults work with no file at all.

Every field is a dataclass field with a ``doc`` in its metadata; validation walks the YAML
mapping against the dataclasses and reports the first problem as a one-line
:class:`~seedzer.errors.ConfigError` naming the file and the dotted field.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from seedzer.environments.wheels import VERSION
from seedzer.errors import ConfigError, UsageError
from seedzer.level_table import LEVELS, level_entry
from seedzer.load.bounds import (
    DEFAULT_MAX_MODEL_BYTES,
    DEFAULT_MAX_TENSOR_BYTES,
    DEFAULT_MAX_TESTCASE_MEMORY,
    Limits,
)
from seedzer.oracles.registry import ORACLES
from seedzer.yamlfiles import (  # noqa: F401 - re-exported: the limits and YAML reading of config files
    INT64,
    MAX_JOBS,
    MAX_MINUTES,
    MAX_POOL,
    MAX_TIMEOUT,
    MAX_YAML_BYTES,
    MIN_TIMEOUT,
    StrictLoader,
    parse_yaml,
    read_text,
    read_yaml,
)


def _f(default: Any, doc: str) -> Any:
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata={"doc": doc})
    return field(default=default, metadata={"doc": doc})


SCHEDULER_NAMES = ("cost", "uniform")
"""The seed schedulers ``fuzz.scheduler`` may name (:data:`seedzer.campaign.scheduler.SCHEDULERS` implements them)."""
ENERGY_NAMES = ("coverage", "rarity")
"""The energies ``fuzz.energy`` may name (:data:`seedzer.campaign.scheduler.ENERGIES`)."""


@dataclass
class GenerateConfig:
    """How ``seedzer run`` makes its seed pool."""

    heuristic: str = _f("basic", "Heuristic name (a file in heuristics/) or path to a heuristic YAML.")
    count: int = _f(20, "Number of models in the generated pool.")
    seed: int = _f(0, "Generation seed; the same seed gives the same pool.")
    max_nodes: int = _f(10, "Maximum operators per generated model.")
    pool_dir: str = _f("seedpools", "Directory under which pools are written (one sub-directory per heuristic).")


@dataclass
class TimeoutConfig:
    """Per-stage time limits in seconds; a stage running longer is a hang finding."""

    load: float = _f(120.0, "Import + lowering of one model.")
    mutate: float = _f(20.0, "One mutation of IR and passes.")
    passes: float = _f(20.0, "Applying the whole pass sequence.")
    build: float = _f(60.0, "One build (opt or nopt) with LLVM.")
    run: float = _f(20.0, "Running one built kernel.")
    compare: float = _f(20.0, "Comparing outputs (and the determinism re-run).")
    relative: float = _f(10.0, "A mutant's stage limit: this many times its parent's measured seconds per test "
                         "case, within [floor, the stage's limit above] (0: the fixed limits only). A mutant "
                         "stopped there is counted as slow, never filed.")
    floor: float = _f(4.0, "The shortest relative stage limit (seconds).")
    hang_share: float = _f(0.1, "Share of mutants run with the full stage limits above: the ones whose hangs "
                           "are candidates for filing.")


def stage_limits(timeouts: TimeoutConfig | None = None) -> dict[str, float]:
    """Every stage's time limit by the stage's name (``load``, ``mutate``, ``pass``, ``build``, ``run``,
    ``compare``): the one place stage limits are named and defaulted (``timeouts`` None: the defaults)."""
    t = timeouts or TimeoutConfig()
    return {"load": t.load, "mutate": t.mutate, "pass": t.passes, "build": t.build, "run": t.run,
            "compare": t.compare}


@dataclass
class OracleConfig:
    """Which oracles judge executions and their tolerances."""

    enabled: list[str] = _f(list(ORACLES), f"Oracles to run ({', '.join(ORACLES)}).")
    rtol: float = _f(1e-4, "Relative tolerance when builds of one test case are compared (floats).")
    atol: float = _f(1e-5, "Absolute tolerance when builds of one test case are compared (floats).")
    confirm_crashes: bool = _f(True, "Re-run every crash the gate files from its repro.py in a clean interpreter.")
    perf_rate: float = _f(0.05, "Share of passing test cases the perf oracle times (O3 builds, costly).")
    perf_factor: float = _f(2.0, "perf: optimized slower than TVM's own pipeline by more than this factor is a bug.")
    perf_repeats: int = _f(3, "perf: alternating timing repeats that must all show the slowdown.")
    verifier_issues: bool = _f(False, "File ill-formed IR that TVM's default pipeline itself produces (and then "
                               "builds correctly) as bugs; the gate counts it apart otherwise.")
    gate_share: float = _f(0.05, "Share of the workers' time (elapsed x jobs) the filing gate may use: over it no "
                           "new gate run starts until the share falls or the campaign's end (0: no limit).")
    witnesses: bool = _f(True, "File a failure reached only outside the pass contracts when its witness (the IR "
                         "just before the failing pass, as a user program through TVM's pipeline) fails the same "
                         "way; the gate dismisses it as 'contract' otherwise.")


@dataclass
class KnownIssue:
    """A pattern that files matching findings as known rather than new."""

    pattern: str = _f("", "Regular expression searched in the finding's symptom, pass and message.")
    note: str = _f("", "Why it is known (e.g. an upstream issue link).")


@dataclass
class FuzzConfig:
    """The fuzzing loop."""

    jobs: int = _f(1, "Worker processes (one long-lived worker per job).")
    minutes: float = _f(3.0, "Campaign budget in minutes (total, including time before a --resume).")
    seed: int = _f(0, "Fuzzing rng seed.")
    snapshot_period: float = _f(5.0, "Seconds between coverage snapshots written to campaign.db.")
    tolerance: int = _f(4, "Tzer's tolerance: IR mutations without new coverage before passes are mutated.")
    max_passes: int = _f(50, "Longest pass sequence.")
    max_seeds_per_model: int = _f(8, "Most PrimFunc seeds kept from one model (0 = all).")
    differential_load: bool = _f(False, "Also compare each whole model against onnxruntime while loading.")
    coverage: str = _f("breakpoints", "Coverage backend that decides what is kept: breakpoints (int3 on every "
                       "basic block of libtvm_compiler.so), passes (pure Python, coarse) or sancov (a "
                       "sancov-instrumented TVM build). The passes totals are always recorded too.")
    block_granularity: str = _f("blocks", "breakpoints: basic blocks (the finer table, built once per TVM "
                                "build, takes minutes) or functions (function entries from .eh_frame only, "
                                "built in seconds).")
    block_cache: str = _f("~/.cache/seedzer/blocks", "breakpoints: directory of the cached block tables "
                          "(one per library build id and granularity).")
    scheduler: str = _f("cost", "Seed scheduler: cost (entries weighted by measured speed, favoring the cheapest "
                        "holder of each coverage feature, after AFL++ and LibAFL) or uniform (Tzer's joint pool).")
    energy: str = _f("coverage", "Energy of the cost scheduler: coverage (as above) or rarity (entries that trigger "
                     "passes few entries trigger weigh up to 4x more, after AFLFast, and the pass mutators "
                     "prefer inserting passes the entry has not triggered; needs scheduler cost).")


@dataclass
class EpochsConfig:
    """Generation epochs (``fuzz --epochs``): the budget split into epochs, each but the first fuzzing
    models a generator process made, weighted by what earlier models yielded."""

    count: int = _f(0, "Epochs the budget is split into (0 or 1: none; epoch 0 is the --pool given; at most 9).")
    models: int = _f(10, "Models generated for each epoch after the first.")
    cpu_share: float = _f(0.25, "Share of one core the generator process may use on average (it sleeps to "
                          "keep its CPU seconds within this share of its wall seconds).")


class LevelsConfig:
    """The levels a campaign fuzzes (docs/design.md §11) and how often the schedule picks each: a weight per
    registered level (:mod:`seedzer.level_table`), 0 turns it off; a level not given keeps its default.
    A graph test case costs a whole-model build (several TIR cases' time). In YAML a mapping
    ``{tir: 3, graph: 1}``."""

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self.by_level = {name: entry.weight for name, entry in LEVELS.items()}
        for name, weight in (weights or {}).items():
            level_entry(name)  # an unknown level is a one-line error
            self.by_level[name] = float(weight)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LevelsConfig) and self.by_level == other.by_level

    def __repr__(self) -> str:
        return f"LevelsConfig({self.by_level!r})"

    def weight(self, name: str) -> float:
        """The weight of level ``name`` (0: off)."""
        return self.by_level.get(name, 0.0)

    def weights(self) -> dict[str, float]:
        """Level -> weight, of the levels turned on, in table order."""
        return {name: w for name, w in self.by_level.items() if w > 0}

    @staticmethod
    def from_mapping(data: Any, where: str, source: str) -> LevelsConfig:
        """The section ``where`` of a configuration file: a mapping of registered level names to weights
        (one-line :class:`ConfigError` naming the field otherwise)."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: field '{where}' must be a mapping, got {type(data).__name__}")
        weights: dict[str, float] = {}
        for key, value in data.items():
            dotted = f"{where}.{key}"
            if key not in LEVELS:
                close = difflib.get_close_matches(str(key), list(LEVELS), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ConfigError(f"{source}: unknown field '{dotted}'{hint}")
            weight = _convert(value, float, dotted, source)
            if not _between(0, 1000)(weight):
                raise ConfigError(f"{source}: field '{dotted}' must be between 0 (off) and 1000 (got {value!r})")
            weights[str(key)] = weight
        return LevelsConfig(weights)

    def reference(self, prefix: str) -> list[tuple[str, str, str]]:
        """Rows (dotted field, default, doc) of the configuration reference, one per level."""
        return [(f"{prefix}{name}", json.dumps(entry.weight), f"Weight of the {name} level: {entry.doc}")
                for name, entry in LEVELS.items()]


@dataclass
class GraphConfig:
    """How the graph level mutates a test case: the weight of each kind of mutation (0 turns it off)
    and how many model mutations one test case may carry."""

    passes: float = _f(3.0, "Weight of mutating the Relax step sequence (passes and Relax IR mutations).")
    uoc: float = _f(0.6, "Weight of adding an MT-DLComp universal obscure condition (UOC) with garbage nodes: the "
                    "model keeps its outputs for every input.")
    pioc: float = _f(1.2, "Weight of adding a per-input obscure condition (PIOC): the model keeps its outputs for the "
                     "case's input.")
    edge: float = _f(4.0, "Weight of a spec-edge change (an attribute or operand moved to a value the ONNX "
                     "specification allows and generators rarely choose): a new model, judged against onnxruntime.")
    insert: float = _f(4.0, "Weight of inserting a node of an operator TVM's ONNX importer converts (drawn from its "
                       "converter map, operators not yet exercised first), its attributes and inputs from the "
                       "operator's schema: a new model, judged against onnxruntime and onnx.reference.")
    special: float = _f(1.0, "Weight of switching a test case to special input values (NaN, +-Inf, -0, denormals, "
                        "extremes, out-of-range indices), judged by the specification (oracle special-values).")
    max_model_mutations: int = _f(8, "Most model mutations one test case carries (a mutant with more is not made).")

    def weights(self) -> dict[str, float]:
        """Mutation kind -> weight, of the kinds turned on."""
        return {k: w for k, w in (("passes", self.passes), ("uoc", self.uoc), ("pioc", self.pioc),
                                  ("edge", self.edge), ("insert", self.insert), ("special", self.special)) if w > 0}


def parse_levels(text: str, current: LevelsConfig, option: str = "--levels") -> LevelsConfig:
    """``tir,graph`` (the levels on, at their configured weight, 1 where it was 0) or ``tir=3,graph=1``
    (explicit weights); the levels not named are turned off. A typo is a one-line error naming ``option``."""
    weights = dict.fromkeys(LEVELS, 0.0)
    names = ", ".join(LEVELS)
    for item in (part.strip() for part in text.split(",") if part.strip()):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in weights:
            raise UsageError(f"{option}: unknown level {name!r} (levels: {names})")
        try:
            weight = float(value) if value else (current.weight(name) or 1.0)
        except ValueError:
            raise UsageError(f"{option}: the weight of {name} must be a number, got {value!r}") from None
        if not _finite(weight) or not 0 < weight <= 1000:
            raise UsageError(f"{option}: the weight of {name} must be > 0 and <= 1000 (got {value})")
        weights[name] = weight
    if not any(weights.values()):
        raise UsageError(f"{option}: name at least one level ({names})")
    return LevelsConfig(weights)


@dataclass
class BoundsConfig:
    """How far a mutant may grow before it is not run: counted as out of bounds, never filed or kept
    (:mod:`seedzer.mutate.bounds`; the campaign figures behind the defaults are in
    docs/measurements.md, 'Mutant bounds'). A script's size counts every explicitly unrolled loop
    written out."""

    max_growth: float = _f(4.0, "A mutant's TVMScript (unrolled loops written out) at most this many times the "
                           "size of its parent's (a mutant that unrolls a whole kernel grows far more; why "
                           "this default: docs/measurements.md).")
    max_script_bytes: int = _f(256 * 1024, "A mutant's TVMScript (unrolled loops written out) at most this many "
                               "bytes, well above the largest seed's (why this default: docs/measurements.md).")
    max_unroll: int = _f(64, "Most iterations one unrolled loop nest may ask for (the product of an explicit "
                         "T.unroll nest's extents, UnrollLoop's auto_max_step, and auto_max_extent to the power of "
                         "its levels); the pass catalogue samples auto_max_step below it (why this default: "
                         "docs/measurements.md).")
    max_passes_growth: int = _f(8, "A mutant's pass sequence at most this many passes longer than its parent's "
                                "(why this default: docs/measurements.md).")
    perf_max_script_bytes: int = _f(32 * 1024, "The perf oracle times only test cases whose TVMScript is at "
                                    "most this many bytes, since timing big kernels is slow (why this default: "
                                    "docs/measurements.md).")


@dataclass
class LimitsConfig:
    """Resource bounds of models and test cases, checked before TVM runs anything (bytes; 0 = none)."""

    max_tensor_bytes: int = _f(DEFAULT_MAX_TENSOR_BYTES, "Largest tensor a model may declare (inputs, outputs, "
                               "value_info, initializers; why this default: docs/measurements.md).")
    max_model_bytes: int = _f(DEFAULT_MAX_MODEL_BYTES, "Inputs plus initializers of a model (why this default: "
                              "docs/measurements.md).")
    max_testcase_memory: int = _f(DEFAULT_MAX_TESTCASE_MEMORY, "Address space (RLIMIT_AS) of a load attempt and "
                                  "of a fuzz worker, several times a worker's peak: an allocation past it is an "
                                  "invalid test case (why this default: docs/measurements.md).")

    def limits(self) -> Limits:
        """The bounds as the loader takes them."""
        return Limits(self.max_tensor_bytes, self.max_model_bytes, self.max_testcase_memory)


RELEASED_TVM = ["0.25.0", "0.26.0", "0.27.0", "0.27.0.post1"]
"""The apache-tvm releases ``seedzer versions`` checks by default (those on the package index)."""


@dataclass
class ReproducersConfig:
    """Plain reproducers (``minimal.py``): how triage makes and runs them, and which TVM releases
    ``seedzer versions`` runs them against."""

    minutes: float = _f(3.0, "Time the search for one finding's plain reproducer may take (printing the module the "
                        "failing pass receives, shrinking it, checking each candidate).")
    fresh_env: bool = _f(True, "Run every minimal.py in a fresh virtual environment holding only the packages it "
                         "names (created once with pip from the package index, then reused); false: with the "
                         "triage's own interpreter (no network).")
    venvs: str = _f("~/.cache/seedzer/venvs", "Directory of those virtual environments (one per TVM and package "
                    "set).")
    versions: list[str] = _f(list(RELEASED_TVM), "The TVM releases `seedzer versions` runs every root's minimal.py "
                             "against (a path to a local .whl works too).")
    pip_args: list[str] = _f([], "Extra arguments pip gets when it makes those environments and lists TVM's releases "
                             "(e.g. --index-url of a mirror; --no-index --find-links DIR for wheels on disk only).")


@dataclass
class LedgerConfig:
    """The ledger of bug roots across campaigns (SQLite): first and last seen, campaigns, versions affected
    and a state a user sets."""

    path: str = _f("", "The ledger's file. Empty: ledger.db in the directory that holds the campaign's seed pool "
                   "(for verbs without a campaign, in generate.pool_dir).")
    enabled: bool = _f(True, "Campaigns, experiment trials and recheck record their bug roots in the ledger.")


@dataclass
class Config:
    """Top-level configuration; every section is optional in the YAML file."""

    generate: GenerateConfig = field(default_factory=GenerateConfig, metadata={"doc": "Pool generation."})
    fuzz: FuzzConfig = field(default_factory=FuzzConfig, metadata={"doc": "Fuzzing loop."})
    timeouts: TimeoutConfig = field(default_factory=TimeoutConfig, metadata={"doc": "Stage time limits."})
    oracles: OracleConfig = field(default_factory=OracleConfig, metadata={"doc": "Oracles."})
    known_issues: list[KnownIssue] = field(default_factory=list, metadata={"doc": "Known-issue patterns."})
    limits: LimitsConfig = field(default_factory=LimitsConfig, metadata={"doc": "Resource bounds."})
    bounds: BoundsConfig = field(default_factory=BoundsConfig, metadata={"doc": "Mutant bounds."})
    levels: LevelsConfig = field(default_factory=LevelsConfig, metadata={"doc": "Levels fuzzed and their weights."})
    graph: GraphConfig = field(default_factory=GraphConfig, metadata={"doc": "Graph-level mutation."})
    reproducers: ReproducersConfig = field(default_factory=ReproducersConfig,
                                           metadata={"doc": "Plain reproducers and the TVM versions they run on."})
    ledger: LedgerConfig = field(default_factory=LedgerConfig, metadata={"doc": "The ledger of bug roots."})
    epochs: EpochsConfig = field(default_factory=EpochsConfig, metadata={"doc": "Generation epochs."})




def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _between(low: float, high: float) -> Any:
    return lambda v: _finite(v) and low <= v <= high


def _known_heuristic(name: str) -> bool:
    from seedzer.generate.heuristics import heuristic_known  # lazy: config must not import the generator

    return heuristic_known(name)


_TIMEOUT = (f"must be a finite number of seconds between {MIN_TIMEOUT:g} and {MAX_TIMEOUT:g} (a day)",
            _between(MIN_TIMEOUT, MAX_TIMEOUT))
_SEED = (f"must be an integer between {-INT64 - 1} and {INT64}", lambda v: -INT64 - 1 <= v <= INT64)

_CHECKS: dict[str, tuple[str, Any]] = {
    "fuzz.jobs": (f"must be >= 1 and <= {MAX_JOBS}", lambda v: 1 <= v <= MAX_JOBS),
    "fuzz.minutes": (f"must be > 0 and <= {MAX_MINUTES:g} (a year), a finite number",
                     lambda v: _finite(v) and 0 < v <= MAX_MINUTES),
    "fuzz.seed": _SEED,
    "fuzz.snapshot_period": ("must be between 0.5 and 10 seconds", _between(0.5, 10)),
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
    "epochs.cpu_share": ("must be a share above 0 and at most 1", lambda v: _finite(v) and 0 < v <= 1),
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
    "timeouts.relative": ("must be between 0 (fixed limits only) and 1000", _between(0, 1000)),
    "timeouts.floor": _TIMEOUT,
    "timeouts.hang_share": ("must be a share between 0 and 1", _between(0, 1)),
    "bounds.max_growth": ("must be between 1 and 1000", _between(1, 1000)),
    "bounds.max_script_bytes": ("must be between 1024 and 2**30 bytes", lambda v: 1024 <= v <= 1 << 30),
    "bounds.max_unroll": ("must be between 1 and 2**20 iterations", lambda v: 1 <= v <= 1 << 20),
    "bounds.max_passes_growth": ("must be between 0 and 50", lambda v: 0 <= v <= 50),
    "bounds.perf_max_script_bytes": ("must be between 0 and 2**30 bytes", lambda v: 0 <= v <= 1 << 30),
    "graph.passes": ("must be between 0 (off) and 1000", _between(0, 1000)),
    "graph.uoc": ("must be between 0 (off) and 1000", _between(0, 1000)),
    "graph.pioc": ("must be between 0 (off) and 1000", _between(0, 1000)),
    "graph.edge": ("must be between 0 (off) and 1000", _between(0, 1000)),
    "graph.insert": ("must be between 0 (off) and 1000", _between(0, 1000)),
    "graph.special": ("must be between 0 (off) and 1000", _between(0, 1000)),
    "graph.max_model_mutations": ("must be between 0 and 100", lambda v: 0 <= v <= 100),
    "oracles.gate_share": ("must be a share between 0 (no limit) and 1", _between(0, 1)),
    "limits.max_tensor_bytes": ("must be between 0 (no bound) and 2**62 bytes", lambda v: 0 <= v <= 1 << 62),
    "limits.max_model_bytes": ("must be between 0 (no bound) and 2**62 bytes", lambda v: 0 <= v <= 1 << 62),
    "limits.max_testcase_memory": ("must be 0 (no bound) or between 256 MiB and 2**62 bytes",
                                   lambda v: v == 0 or 256 << 20 <= v <= 1 << 62),
    "known_issues[].pattern": ("must be a valid regular expression", lambda v: _is_regex(v)),
    "oracles.enabled": (f"entries must be among {', '.join(ORACLES)}", lambda v: set(v) <= set(ORACLES)),
    "oracles.rtol": ("must be a finite number >= 0", lambda v: _finite(v) and v >= 0),
    "oracles.atol": ("must be a finite number >= 0", lambda v: _finite(v) and v >= 0),
    "oracles.perf_rate": ("must be between 0 and 1", _between(0, 1)),
    "oracles.perf_factor": ("must be a finite number > 1 and <= 1000", lambda v: _finite(v) and 1 < v <= 1000),
    "oracles.perf_repeats": ("must be >= 1 and <= 100", lambda v: 1 <= v <= 100),
    "reproducers.minutes": ("must be > 0 and <= 600", lambda v: _finite(v) and 0 < v <= 600),
    "reproducers.venvs": ("must be a directory name", lambda v: bool(v.strip()) and "\0" not in v),
    "reproducers.versions": ("entries must be TVM release numbers (e.g. 0.26.0) or paths to .whl files",
                             lambda v: all(isinstance(x, str) and (x.endswith(".whl") or VERSION.match(x)) for x in v)),
    "reproducers.pip_args": ("entries must be pip arguments (strings)", lambda v: all(isinstance(x, str) for x in v)),
    "ledger.path": ("must be a file name (empty: beside the seed pools)", lambda v: "\0" not in v),
}


def check_value(dotted: str, value: Any, culprit: str) -> None:
    """Apply the configuration's check of field ``dotted`` to a value given elsewhere (a CLI option).

    ``culprit`` names where the value came from (``--minutes``); raises a one-line
    :class:`~seedzer.errors.UsageError` naming it.
    """
    check = _CHECKS.get(dotted)
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


def _convert(value: Any, tp: Any, where: str, source: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is LevelsConfig:
        return LevelsConfig.from_mapping(value, where, source)
    if is_dataclass(tp):
        return _build(tp, value, where, source)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{source}: field '{where}' must be a list, got {type(value).__name__}")
        return [_convert(v, item_tp, f"{where}[{i}]", source) for i, v in enumerate(value)]
    if origin in (typing.Union, types.UnionType):
        return value
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


def _build(cls: Any, data: Any, where: str, source: str) -> Any:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        label = f"field '{where}'" if where else "top level"
        raise ConfigError(f"{source}: {label} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in fields(cls)}
    for key in data:
        if key not in known:
            dotted = f"{where}.{key}" if where else str(key)
            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{source}: unknown field '{dotted}'{hint}")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in data:
            dotted = f"{where}.{f.name}" if where else f.name
            value = _convert(data[f.name], hints[f.name], dotted, source)
            check = _CHECKS.get(re.sub(r"\[\d+\]", "[]", dotted))
            if check and not check[1](value):
                raise ConfigError(f"{source}: field '{dotted}' {check[0]} (got {value!r})")
            kwargs[f.name] = value
    return cls(**kwargs)


def config_from_dict(data: Any, source: str = "<config>") -> Config:
    """Validate a parsed YAML mapping and build a :class:`Config` (missing fields take defaults)."""
    cfg: Config = _build(Config, data, "", source)
    if not cfg.levels.weights():
        raise ConfigError(f"{source}: field 'levels' turns every level off (give one of {', '.join(LEVELS)} "
                          "a weight > 0)")
    if cfg.fuzz.energy == "rarity" and cfg.fuzz.scheduler != "cost":
        raise ConfigError(f"{source}: field 'fuzz.energy' rarity needs fuzz.scheduler cost "
                          f"(got {cfg.fuzz.scheduler!r})")
    if not cfg.graph.weights():
        raise ConfigError(f"{source}: field 'graph' turns every graph mutation off (give passes, uoc, pioc, edge, "
                          "insert or special a weight > 0)")
    return cfg


def load_config(path: Path | None) -> Config:
    """Load and validate a YAML config file; ``None`` gives the embedded defaults."""
    if path is None:
        return Config()
    return config_from_dict(read_yaml(path, "config"), str(path))


def to_dict(obj: Any) -> Any:
    """Plain-data form of a config (for campaign metadata and ``seedzer config show``)."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, LevelsConfig):
        return dict(obj.by_level)
    if isinstance(obj, list):
        return [to_dict(v) for v in obj]
    return obj


def reference(cls: Any = Config, prefix: str = "") -> list[tuple[str, str, str]]:
    """Rows (dotted field, default, doc) documenting every field, for the README and the CLI."""
    rows: list[tuple[str, str, str]] = []
    hints = typing.get_type_hints(cls)
    for f in fields(cls):
        dotted = f"{prefix}{f.name}"
        tp = hints[f.name]
        if tp is LevelsConfig:
            rows.extend(LevelsConfig().reference(dotted + "."))
            continue
        if is_dataclass(tp):
            rows.extend(reference(tp, dotted + "."))
            continue
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = None
        rows.append((dotted, json.dumps(to_dict(default)), f.metadata["doc"]))
        if typing.get_origin(tp) is list and is_dataclass(typing.get_args(tp)[0]):
            rows.extend(reference(typing.get_args(tp)[0], dotted + "[]."))
    return rows
