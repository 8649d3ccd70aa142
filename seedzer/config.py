"""The campaign configuration: a validated YAML schema whose defaults work with no file at all.

Every field is a dataclass field with a ``doc`` in its metadata; validation walks the YAML
mapping against the dataclasses and reports the first problem as a one-line
:class:`~seedzer.errors.ConfigError` naming the file and the dotted field.
"""

from __future__ import annotations

import difflib
import json
import re
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from seedzer.config_checks import (  # noqa: F401 - re-exported: the names and checks fields are validated by
    CHECKS,
    ENERGY_NAMES,
    SCHEDULER_NAMES,
    check_value,
    convert_scalar,
)
from seedzer.config_levels import LevelsConfig, parse_levels  # noqa: F401 - re-exported: the levels section
from seedzer.errors import ConfigError
from seedzer.level_table import LEVELS
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
    llvm_opt_level: int = _f(0, "LLVM opt-level of a test case's builds, fuzzed and reference alike (0-3). 0, as the "
                             "TIR level's result oracle: LLVM's own IR optimization, no TVM code, is ~80% of a fresh "
                             "tvm.compile (why this default: docs/measurements.md); 3 builds as tvm.compile's default "
                             "does. A finding's reproducer uses tvm.compile's default target when it fails there too.")

    def weights(self) -> dict[str, float]:
        """Mutation kind -> weight, of the kinds turned on."""
        return {k: w for k, w in (("passes", self.passes), ("uoc", self.uoc), ("pioc", self.pioc),
                                  ("edge", self.edge), ("insert", self.insert), ("special", self.special)) if w > 0}


@dataclass
class BoundsConfig:
    """How far a mutant may grow before it is not run: counted as out of bounds, never filed or kept
    (:mod:`seedzer.mutate.tir.bounds`; the campaign figures behind the defaults are in
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
    return convert_scalar(value, tp, where, source)

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
            check = CHECKS.get(re.sub(r"\[\d+\]", "[]", dotted))
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
