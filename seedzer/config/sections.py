"""The house's sections of the configuration and the :class:`Config` that holds them.

Every field is declared with :func:`~seedzer.config.fields.setting`: its default, its doc (the
configuration reference) and its check together. Each level's own settings are not here: a level
declares its section (:attr:`seedzer.level_table.LevelEntry.settings`) and the ``levels`` section
holds it (:mod:`seedzer.config.levels`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from seedzer.config.fields import (
    INT64,
    MAX_JOBS,
    MAX_MINUTES,
    MAX_POOL,
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    Check,
    between,
    finite,
    setting,
)
from seedzer.config.levels import LevelsConfig
from seedzer.environments.wheels import VERSION
from seedzer.load.bounds import (
    DEFAULT_MAX_MODEL_BYTES,
    DEFAULT_MAX_TENSOR_BYTES,
    DEFAULT_MAX_TESTCASE_MEMORY,
    Limits,
)
from seedzer.oracles.registry import ORACLES

COST, UNIFORM = "cost", "uniform"
SCHEDULER_NAMES = (COST, UNIFORM)
"""The seed schedulers ``fuzz.scheduler`` may name (:data:`seedzer.campaign.scheduler.SCHEDULERS` implements
each, keyed by these names)."""
COVERAGE, RARITY = "coverage", "rarity"
ENERGY_NAMES = (COVERAGE, RARITY)
"""The energies ``fuzz.energy`` may name (:data:`seedzer.campaign.scheduler.ENERGIES`, keyed by these names)."""

_TIMEOUT = Check(f"must be a finite number of seconds between {MIN_TIMEOUT:g} and {MAX_TIMEOUT:g} (a day)",
                 between(MIN_TIMEOUT, MAX_TIMEOUT))
_SEED = Check(f"must be an integer between {-INT64 - 1} and {INT64}", lambda v: -INT64 - 1 <= v <= INT64)
_DIRECTORY = Check("must be a directory name", lambda v: bool(v.strip()) and "\0" not in v)


def _one_of(*names: str) -> Check:
    return Check(f"must be one of: {', '.join(names)}", lambda v: v in names)


def _is_regex(text: str) -> bool:
    try:
        re.compile(text)
    except re.error:
        return False
    return True


@dataclass
class GenerateConfig:
    """How ``seedzer run`` makes its seed pool."""

    heuristic: str = setting("basic", "Heuristic name (a file in heuristics/) or path to a heuristic YAML.")
    count: int = setting(20, "Number of models in the generated pool.",
                         Check(f"must be >= 1 and <= {MAX_POOL}", lambda v: 1 <= v <= MAX_POOL))
    seed: int = setting(0, "Generation seed; the same seed gives the same pool.", _SEED)
    max_nodes: int = setting(10, "Maximum operators per generated model.",
                             Check("must be between 1 and 100", lambda v: 1 <= v <= 100))
    pool_dir: str = setting("seedpools", "Directory under which pools are written (one sub-directory per "
                            "heuristic).", _DIRECTORY)


@dataclass
class TimeoutConfig:
    """Per-stage time limits in seconds; a stage running longer is a hang finding."""

    load: float = setting(120.0, "Import + lowering of one model.", _TIMEOUT)
    mutate: float = setting(20.0, "One mutation of IR and passes.", _TIMEOUT)
    passes: float = setting(20.0, "Applying the whole pass sequence.", _TIMEOUT)
    build: float = setting(60.0, "One build (opt or nopt) with LLVM.", _TIMEOUT)
    run: float = setting(20.0, "Running one built kernel.", _TIMEOUT)
    compare: float = setting(20.0, "Comparing outputs (and the determinism re-run).", _TIMEOUT)
    schedule: float = setting(20.0, "Applying a schedule plan: its primitives one by one (each checked), then the "
                              "postprocessors.", _TIMEOUT)
    relative: float = setting(10.0, "A mutant's stage limit: this many times its parent's measured seconds per test "
                              "case, within [floor, the stage's limit above] (0: the fixed limits only). A mutant "
                              "stopped there is counted as slow, never filed.",
                              Check("must be between 0 (fixed limits only) and 1000", between(0, 1000)))
    floor: float = setting(4.0, "The shortest relative stage limit (seconds).", _TIMEOUT)
    hang_share: float = setting(0.1, "Share of mutants run with the full stage limits above: the ones whose hangs "
                                "are candidates for filing.", Check("must be a share between 0 and 1", between(0, 1)))


def stage_limits(timeouts: TimeoutConfig | None = None) -> dict[str, float]:
    """Every stage's time limit by the stage's name (``load``, ``mutate``, ``pass``, ``build``, ``run``,
    ``compare``, ``schedule``): the one place stage limits are named and defaulted (``timeouts`` None: the
    defaults)."""
    t = timeouts or TimeoutConfig()
    return {"load": t.load, "mutate": t.mutate, "pass": t.passes, "build": t.build, "run": t.run,
            "compare": t.compare, "schedule": t.schedule}


@dataclass
class OracleConfig:
    """Which oracles judge executions and their tolerances."""

    enabled: list[str] = setting(list(ORACLES), f"Oracles to run ({', '.join(ORACLES)}).",
                                 Check(f"entries must be among {', '.join(ORACLES)}", lambda v: set(v) <= set(ORACLES)))
    rtol: float = setting(1e-4, "Relative tolerance when builds of one test case are compared (floats).",
                          Check("must be a finite number >= 0", lambda v: finite(v) and v >= 0))
    atol: float = setting(1e-5, "Absolute tolerance when builds of one test case are compared (floats).",
                          Check("must be a finite number >= 0", lambda v: finite(v) and v >= 0))
    confirm_crashes: bool = setting(True, "Re-run every crash the gate files from its repro.py in a clean "
                                    "interpreter.")
    perf_rate: float = setting(0.05, "Share of passing test cases the perf oracle times (O3 builds, costly).",
                               Check("must be between 0 and 1", between(0, 1)))
    perf_factor: float = setting(2.0, "perf: optimized slower than TVM's own pipeline by more than this factor is a "
                                 "bug.", Check("must be a finite number > 1 and <= 1000",
                                               lambda v: finite(v) and 1 < v <= 1000))
    perf_repeats: int = setting(3, "perf: alternating timing repeats that must all show the slowdown.",
                                Check("must be >= 1 and <= 100", lambda v: 1 <= v <= 100))
    verifier_issues: bool = setting(False, "File ill-formed IR that TVM's default pipeline itself produces (and then "
                                    "builds correctly) as bugs; the gate counts it apart otherwise.")
    gate_share: float = setting(0.05, "Share of the workers' time (elapsed x jobs) the filing gate may use: over it "
                                "no new gate run starts until the share falls or the campaign's end (0: no limit).",
                                Check("must be a share between 0 (no limit) and 1", between(0, 1)))
    witnesses: bool = setting(True, "File a failure reached only outside the pass contracts when its witness (the "
                              "IR just before the failing pass, as a user program through TVM's pipeline) fails the "
                              "same way; the gate dismisses it as 'contract' otherwise.")


@dataclass
class KnownIssue:
    """A pattern that files matching findings as known rather than new."""

    pattern: str = setting("", "Regular expression searched in the finding's symptom, pass and message.",
                           Check("must be a valid regular expression", lambda v: _is_regex(v)))
    note: str = setting("", "Why it is known (e.g. an upstream issue link).")


@dataclass
class FuzzConfig:
    """The fuzzing loop."""

    jobs: int = setting(1, "Worker processes (one long-lived worker per job).",
                        Check(f"must be >= 1 and <= {MAX_JOBS}", lambda v: 1 <= v <= MAX_JOBS))
    minutes: float = setting(3.0, "Campaign budget in minutes (total, including time before a --resume).",
                             Check(f"must be > 0 and <= {MAX_MINUTES:g} (a year), a finite number",
                                   lambda v: finite(v) and 0 < v <= MAX_MINUTES))
    seed: int = setting(0, "Fuzzing rng seed.", _SEED)
    snapshot_period: float = setting(5.0, "Seconds between coverage snapshots written to campaign.db.",
                                     Check("must be between 0.5 and 10 seconds", between(0.5, 10)))
    max_seeds_per_model: int = setting(8, "Most PrimFunc seeds kept from one model (0 = all).",
                                       Check("must be between 0 (all) and 1000000", lambda v: 0 <= v <= 1_000_000))
    differential_load: bool = setting(False, "Also compare each whole model against onnxruntime while loading.")
    coverage: str = setting("breakpoints", "Coverage backend that decides what is kept: breakpoints (int3 on every "
                            "basic block of libtvm_compiler.so), passes (pure Python, coarse) or sancov (a "
                            "sancov-instrumented TVM build). The passes totals are always recorded too.",
                            _one_of("breakpoints", "passes", "sancov"))
    block_granularity: str = setting("blocks", "breakpoints: basic blocks (the finer table, built once per TVM "
                                     "build, takes minutes) or functions (function entries from .eh_frame only, "
                                     "built in seconds).", _one_of("blocks", "functions"))
    block_cache: str = setting("~/.cache/seedzer/blocks", "breakpoints: directory of the cached block tables "
                               "(one per library build id and granularity).", _DIRECTORY)
    scheduler: str = setting(COST, "Seed scheduler: cost (entries weighted by measured speed, favoring the cheapest "
                             "holder of each coverage feature, after AFL++ and LibAFL) or uniform (Tzer's joint "
                             "pool).", _one_of(*SCHEDULER_NAMES))
    energy: str = setting(COVERAGE, "Energy of the cost scheduler: coverage (as above) or rarity (entries that "
                          "trigger passes few entries trigger weigh up to 4x more, after AFLFast, and the pass "
                          "mutators prefer inserting passes the entry has not triggered; needs scheduler cost).",
                          _one_of(*ENERGY_NAMES))

    def conflict(self, where: str) -> str | None:
        """Why these fields cannot go together, in one line naming the field (None when they can)."""
        if self.energy == RARITY and self.scheduler != COST:
            return f"field '{where}.energy' {RARITY} needs {where}.scheduler {COST} (got {self.scheduler!r})"
        return None


@dataclass
class EpochsConfig:
    """Generation epochs (``fuzz --epochs``): the budget split into epochs, each but the first fuzzing
    models a generator process made, weighted by what earlier models yielded."""

    count: int = setting(0, "Epochs the budget is split into (0 or 1: none; epoch 0 is the --pool given; at most "
                         "9).", Check("must be between 0 (none) and 9", lambda v: 0 <= v <= 9))
    models: int = setting(10, "Models generated for each epoch after the first.",
                          Check("must be between 1 and 1000", lambda v: 1 <= v <= 1000))
    cpu_share: float = setting(0.25, "Share of one core the generator process may use on average (it sleeps to "
                               "keep its CPU seconds within this share of its wall seconds).",
                               Check("must be a share above 0 and at most 1", lambda v: finite(v) and 0 < v <= 1))


@dataclass
class BoundsConfig:
    """How far a mutant may grow before it is not run: counted as out of bounds, never filed or kept
    (checked by the level's mutators before the mutant runs; the campaign figures behind the defaults
    are in docs/measurements.md, 'Mutant bounds'). A script's size counts every explicitly unrolled loop
    written out."""

    max_growth: float = setting(4.0, "A mutant's TVMScript (unrolled loops written out) at most this many times the "
                                "size of its parent's (a mutant that unrolls a whole kernel grows far more; why "
                                "this default: docs/measurements.md).",
                                Check("must be between 1 and 1000", between(1, 1000)))
    max_script_bytes: int = setting(256 * 1024, "A mutant's TVMScript (unrolled loops written out) at most this many "
                                    "bytes, well above the largest seed's (why this default: docs/measurements.md).",
                                    Check("must be between 1024 and 2**30 bytes", lambda v: 1024 <= v <= 1 << 30))
    max_unroll: int = setting(64, "Most iterations one unrolled loop nest may ask for (the product of an explicit "
                              "T.unroll nest's extents, UnrollLoop's auto_max_step, and auto_max_extent to the power "
                              "of its levels); the pass catalogue samples auto_max_step below it (why this default: "
                              "docs/measurements.md).",
                              Check("must be between 1 and 2**20 iterations", lambda v: 1 <= v <= 1 << 20))
    max_passes_growth: int = setting(8, "A mutant's pass sequence at most this many passes longer than its parent's "
                                     "(why this default: docs/measurements.md).",
                                     Check("must be between 0 and 50", lambda v: 0 <= v <= 50))
    perf_max_script_bytes: int = setting(32 * 1024, "The perf oracle times only test cases whose TVMScript is at "
                                         "most this many bytes, since timing big kernels is slow (why this default: "
                                         "docs/measurements.md).",
                                         Check("must be between 0 and 2**30 bytes", lambda v: 0 <= v <= 1 << 30))


_BYTES = Check("must be between 0 (no bound) and 2**62 bytes", lambda v: 0 <= v <= 1 << 62)


@dataclass
class LimitsConfig:
    """Resource bounds of models and test cases, checked before TVM runs anything (bytes; 0 = none)."""

    max_tensor_bytes: int = setting(DEFAULT_MAX_TENSOR_BYTES, "Largest tensor a model may declare (inputs, outputs, "
                                    "value_info, initializers; why this default: docs/measurements.md).", _BYTES)
    max_model_bytes: int = setting(DEFAULT_MAX_MODEL_BYTES, "Inputs plus initializers of a model (why this default: "
                                   "docs/measurements.md).", _BYTES)
    max_testcase_memory: int = setting(DEFAULT_MAX_TESTCASE_MEMORY, "Address space (RLIMIT_AS) of a load attempt and "
                                       "of a fuzz worker, several times a worker's peak: an allocation past it is an "
                                       "invalid test case (why this default: docs/measurements.md).",
                                       Check("must be 0 (no bound) or between 256 MiB and 2**62 bytes",
                                             lambda v: v == 0 or 256 << 20 <= v <= 1 << 62))

    def limits(self) -> Limits:
        """The bounds as the loader takes them."""
        return Limits(self.max_tensor_bytes, self.max_model_bytes, self.max_testcase_memory)


RELEASED_TVM = ["0.25.0", "0.26.0", "0.27.0", "0.27.0.post1"]
"""The apache-tvm releases ``seedzer versions`` checks by default (those on the package index)."""


@dataclass
class ReproducersConfig:
    """Plain reproducers (``minimal.py``): how triage makes and runs them, and which TVM releases
    ``seedzer versions`` runs them against."""

    minutes: float = setting(3.0, "Time the search for one finding's plain reproducer may take (printing the module "
                             "the failing pass receives, shrinking it, checking each candidate).",
                             Check("must be > 0 and <= 600", lambda v: finite(v) and 0 < v <= 600))
    fresh_env: bool = setting(True, "Run every minimal.py in a fresh virtual environment holding only the packages "
                              "it names (created once with pip from the package index, then reused); false: with the "
                              "triage's own interpreter (no network).")
    venvs: str = setting("~/.cache/seedzer/venvs", "Directory of those virtual environments (one per TVM and package "
                         "set).", _DIRECTORY)
    venvs_max_gb: float = setting(4.0, "Bound of that directory in GiB (an environment takes about 0.41): when a new "
                                  "environment is made, the least recently used others are removed down to it (0: no "
                                  "bound; `seedzer envs` lists and prunes them).",
                                  Check("must be a finite number of GiB >= 0 (0: no bound)",
                                        lambda v: finite(v) and v >= 0))
    versions: list[str] = setting(list(RELEASED_TVM), "The TVM releases `seedzer versions` runs every root's "
                                  "minimal.py against (a path to a local .whl works too).",
                                  Check("entries must be TVM release numbers (e.g. 0.26.0) or paths to .whl files",
                                        lambda v: all(isinstance(x, str) and (x.endswith(".whl") or VERSION.match(x))
                                                      for x in v)))
    pip_args: list[str] = setting([], "Extra arguments pip gets when it makes those environments and lists TVM's "
                                  "releases (e.g. --index-url of a mirror; --no-index --find-links DIR for wheels on "
                                  "disk only).", Check("entries must be pip arguments (strings)",
                                                       lambda v: all(isinstance(x, str) for x in v)))


@dataclass
class LedgerConfig:
    """The ledger of bug roots across campaigns (SQLite): first and last seen, campaigns, versions affected
    and a state a user sets."""

    path: str = setting("", "The ledger's file. Empty: ledger.db in the directory that holds the campaign's seed "
                        "pool (for verbs without a campaign, in generate.pool_dir).",
                        Check("must be a file name (empty: beside the seed pools)", lambda v: "\0" not in v))
    enabled: bool = setting(True, "Campaigns, experiment trials and recheck record their bug roots in the ledger.")


ALLOCATION_FAMILIES = ("levels", "mutations", "models")
"""The families of draws ``allocation.pinned`` may name (:data:`seedzer.campaign.allocation.FAMILIES`)."""


@dataclass
class AllocationConfig:
    """Where the machine's time goes: the weights of levels, mutations and seed models, adapted to what
    they yield per second of worker time (docs/campaigns.md, 'The allocation'), or fixed."""

    adaptive: bool = setting(True, "Adapt the weights of levels, mutations and seed models to their reward per "
                             "worker-second; false keeps the configured weights (the seed-pool study's fixed arms).")
    pinned: list[str] = setting([], f"Families kept at their configured weights even when adaptive "
                                f"({', '.join(ALLOCATION_FAMILIES)}).",
                                Check(f"must list some of: {', '.join(ALLOCATION_FAMILIES)}",
                                      lambda v: all(x in ALLOCATION_FAMILIES for x in v)))
    floor: float = setting(0.1, "Share of its family's draws kept for exploration, spread evenly: every arm keeps "
                           "at least floor / arms of them.",
                           Check("must be a number between 0 and 0.5", between(0.0, 0.5)))
    half_life: float = setting(900.0, "Worker-seconds of its family after which an observation counts half "
                               "(the weights follow a campaign whose best arm changes).",
                               Check("must be a number of seconds between 1 and 10^7", between(1.0, 1e7)))
    prior_seconds: float = setting(10.0, "Pseudo worker-seconds of the family's average yield every arm starts "
                                   "with (an arm with little data weighs like the average); the configured "
                                   "weights count as this many seconds of data against the yields.",
                                   Check("must be a number of seconds between 0 and 10^6", between(0.0, 1e6)))
    reward_coverage: float = setting(1.0, "Reward of a test case's new coverage features, times log2(1 + n).",
                                     Check("must be a number between 0 and 10^6", between(0.0, 1e6)))
    reward_trigger: float = setting(2.0, "Reward of each pass a test case triggered first in the campaign.",
                                    Check("must be a number between 0 and 10^6", between(0.0, 1e6)))
    reward_root: float = setting(1000.0, "Reward of a bug root new to the ledger, credited to the arms of the test "
                                 "case that reached it (a root already known, or a repeat, earns nothing).",
                                 Check("must be a number between 0 and 10^6", between(0.0, 1e6)))


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
    levels: LevelsConfig = field(default_factory=LevelsConfig,
                                 metadata={"doc": "Levels fuzzed, their weights and their own settings."})
    reproducers: ReproducersConfig = field(default_factory=ReproducersConfig,
                                           metadata={"doc": "Plain reproducers and the TVM versions they run on."})
    ledger: LedgerConfig = field(default_factory=LedgerConfig, metadata={"doc": "The ledger of bug roots."})
    epochs: EpochsConfig = field(default_factory=EpochsConfig, metadata={"doc": "Generation epochs."})
    allocation: AllocationConfig = field(default_factory=AllocationConfig,
                                         metadata={"doc": "Where the workers' time goes (adaptive or fixed weights)."})
