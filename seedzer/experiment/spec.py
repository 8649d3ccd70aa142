"""Experiment definitions (``experiments/<name>.yaml``): schema, validation and trial configs.

An experiment runs ``trials`` campaigns of ``minutes`` each for every *arm*: a heuristic's seed pool,
and, when the experiment lists ``levels``, one arm per (pool, level setting) pair (``<pool>@<label>``).
Validation happens up front and reports the first problem as a one-line
:class:`~seedzer.errors.ConfigError` naming the file and the field, in the style of
:mod:`seedzer.config` (whose schema walker and field checks are reused here).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedzer import config as _config
from seedzer.config import Config, config_from_dict, read_yaml, setting, to_dict
from seedzer.errors import ConfigError, SeedzerError, UsageError
from seedzer.generate.epoch_plan import EpochPlan
from seedzer.level_table import level_names
from seedzer.oracles.registry import ORACLES


class ExperimentError(SeedzerError):
    """An experiment cannot be run or resumed (message names the file or directory)."""


NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAX_TRIALS = 1000
"""Most trials per heuristic an experiment may define."""

# Campaign fields an experiment sets at its top level; its ``campaign:`` section may not set them.
RESERVED = {
    "fuzz": ("minutes", "jobs", "snapshot_period", "coverage", "seed"),
    "oracles": ("enabled",),
}


FINGERPRINT_DEFAULTS: dict[str, Any] = {"levels": [], "allocations": []}
"""Fingerprint fields added after the first results were written: their value in older experiment.json."""


@dataclass
class PoolSpec:
    """How missing seed pools are generated (``seedpools/<heuristic>``)."""

    size: int = setting(20, "Models per generated pool.")
    seed: int = setting(0, "Generation seed (the same seed gives the same pool).")
    max_nodes: int | None = setting(None, "Override of the heuristic's maximum operators per model (null: its own).")
    dir: str = setting("seedpools", "Directory holding one pool per heuristic (relative to the working directory).")


@dataclass(frozen=True)
class Arm:
    """One compared configuration: a heuristic's pool fuzzed at one level setting (``levels``: a
    ``--levels`` string, empty for the campaign section's levels) with one allocation (adaptive or fixed
    weights); ``name`` is its results directory."""

    name: str
    heuristic: str
    levels: str = ""
    allocation: str = ""
    """``adaptive`` or ``fixed`` (empty: the campaign section's ``allocation.adaptive``)."""


@dataclass
class ExperimentSpec:
    """One experiment: heuristics x trials campaigns of a fixed duration."""

    name: str = setting("", "Experiment name; results go to <results>/<name>/.")
    description: str = setting("", "Free text shown in the report.")
    heuristics: list[str] = field(default_factory=list, metadata={
        "doc": "Heuristic names (or paths); each names a pool seedpools/<stem>."})
    trials: int = setting(5, "Independent campaigns per heuristic.")
    minutes: float = setting(10.0, "Duration of each trial in minutes.")
    snapshot_period: float = setting(5.0, "Seconds between coverage snapshots.")
    jobs: int = setting(1, "Worker processes per trial.")
    coverage: str = setting("passes", "Coverage backend of every trial.")
    oracles: list[str] = field(default_factory=lambda: list(ORACLES),
                               metadata={"doc": "Oracles every trial runs."})
    seed: int = setting(0, "Base fuzzing seed; trial n uses seed + n.")
    levels: list[str] = field(default_factory=list, metadata={
        "doc": "Level settings compared, each a --levels string (tir, graph, \"tir,graph\", \"tir=3,graph=1\"): "
               "one arm <pool>@<label> per heuristic and setting (empty: one arm <pool> per heuristic with "
               "the campaign section's levels). Two settings with the same levels on in the same proportions "
               "are one setting, refused."})
    allocations: list[str] = field(default_factory=list, metadata={
        "doc": "Allocations compared (adaptive, fixed): with two, one arm <arm>@adaptive and one <arm>@fixed per "
               "heuristic and level setting (empty: the campaign section's allocation.adaptive; the seed-pool "
               "study fixes its weights there)."})
    parallel: int = setting(0, "Trials run at once (0: as many as cores allow, cores // jobs).")
    pool: PoolSpec = field(default_factory=PoolSpec, metadata={"doc": "Pool generation."})
    campaign: dict[str, Any] = field(default_factory=dict, metadata={
        "doc": "Further campaign settings (a seedzer config mapping: timeouts...)."})
    source: str = field(default="", metadata={"doc": "The file this spec was read from (set on load)."})

    @property
    def pool_names(self) -> list[str]:
        """The pool (directory) name of each heuristic, in order."""
        return [pool_name(h) for h in self.heuristics]

    def pool_path(self, heuristic: str) -> Path:
        """Where the pool of ``heuristic`` lives."""
        return Path(self.pool.dir) / pool_name(heuristic)

    def arms(self) -> list[Arm]:
        """Every arm, heuristic by heuristic: ``<pool>`` with one level setting (or none), else
        ``<pool>@<label>`` per setting in the order listed; with two allocations, each of those twice,
        ``@adaptive`` and ``@fixed`` added."""
        settings = self.levels or [""]
        allocations = self.allocations or [""]
        arms: list[Arm] = []
        for h in self.heuristics:
            for lv in settings:
                base = pool_name(h) if len(settings) == 1 else f"{pool_name(h)}@{level_label(lv)}"
                arms.extend(Arm(base if len(allocations) == 1 else f"{base}@{a}", h, lv, a) for a in allocations)
        return arms

    def pool_size(self, heuristic: str) -> int:
        """The size of ``heuristic``'s pool: its ``epochs.pool`` (a starting pool that grows while it is
        fuzzed), else the experiment's ``pool.size``."""
        plan = heuristic_epochs(heuristic)
        return plan.pool if plan is not None and plan.pool is not None else self.pool.size

    def trial_config(self, trial: int, levels: str = "", heuristic: str = "", allocation: str = "") -> Config:
        """The campaign configuration of trial number ``trial`` (1-based) of the arm fuzzing at ``levels``
        (a ``--levels`` string; empty: the campaign section's levels) the pool of ``heuristic``, with
        ``allocation`` (``adaptive``, ``fixed``; empty: the campaign section's): with the generation epochs
        the heuristic declares (``epochs:``, :mod:`seedzer.generate.epoch_plan`)."""
        cfg = config_from_dict(self.campaign, f"{self.source or '<experiment>'}: campaign")
        if levels:
            cfg.levels = parse_levels(levels, cfg.levels)
        if allocation:
            cfg.allocation.adaptive = allocation == ADAPTIVE
        plan = heuristic_epochs(heuristic) if heuristic else None
        if plan is not None:
            cfg.epochs.count, cfg.epochs.models = plan.count, plan.models
        cfg.fuzz.minutes = self.minutes
        cfg.fuzz.jobs = self.jobs
        cfg.fuzz.snapshot_period = self.snapshot_period
        cfg.fuzz.coverage = self.coverage
        cfg.fuzz.seed = self.seed + trial
        cfg.oracles.enabled = list(self.oracles)
        return cfg

    def fingerprint(self) -> dict[str, Any]:
        """The fields that make trials comparable; a resumed experiment must not change them."""
        return {"minutes": self.minutes, "snapshot_period": self.snapshot_period, "jobs": self.jobs,
                "coverage": self.coverage, "oracles": sorted(self.oracles), "seed": self.seed,
                "campaign": self.campaign, "levels": list(self.levels), "allocations": list(self.allocations)}

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (written to the results directory as experiment.json; without ``levels`` or
        ``allocations`` when there are none, as before those fields existed)."""
        data: dict[str, Any] = to_dict(self)
        data.pop("source", None)
        for optional in ("levels", "allocations"):
            if not data.get(optional):
                data.pop(optional, None)
        return data


def heuristic_epochs(heuristic: str) -> EpochPlan | None:
    """The generation epochs ``heuristic`` declares (None: none, or a heuristic that cannot be loaded
    here, e.g. one whose pool was made elsewhere)."""
    from seedzer.generate.heuristics import load_heuristic

    try:
        return load_heuristic(heuristic).epochs
    except ConfigError:
        return None


def pool_name(heuristic: str) -> str:
    """A heuristic's pool name: its own name, or the file stem of a heuristic given by path."""
    return Path(heuristic).stem if heuristic.endswith((".yaml", ".yml", ".py")) or "/" in heuristic else heuristic


def _level_items(text: str) -> dict[str, str]:
    """Level -> explicit weight text ('' when only named) of a ``--levels`` string."""
    items = {}
    for item in (part.strip() for part in text.split(",") if part.strip()):
        name, _, value = item.partition("=")
        items[name.strip()] = value.strip()
    return items


def level_label(text: str) -> str:
    """A filesystem-safe label of a level setting, levels in their usual order: ``tir``, ``tir+graph``,
    ``tir3+graph1`` (``tir=3,graph=1``)."""
    items = _level_items(text)
    order = level_names()
    names = [n for n in order if n in items] + sorted(n for n in items if n not in order)
    return "+".join(f"{n}{float(items[n]):g}" if items[n] else n for n in names)


def parse_levels(text: str, current: _config.LevelsConfig, option: str = "levels") -> _config.LevelsConfig:
    """:func:`seedzer.config.parse_levels`, its usage error turned into a ConfigError."""
    try:
        return _config.parse_levels(text, current, option)
    except UsageError as exc:
        raise ConfigError(str(exc)) from None


def _fail(source: str, where: str, what: str, value: Any) -> ConfigError:
    return ConfigError(f"{source}: field '{where}' {what} (got {_config.excerpt(value)})")


def _check_with_config(source: str, where: str, dotted: str, value: Any) -> None:
    """Apply seedzer.config's own check for the matching campaign field (keeps both in step)."""
    check = _config.check_of(dotted)
    if check is not None and not check.test(value):
        raise _fail(source, where, check.sentence, value)


def effective_levels(levels: _config.LevelsConfig) -> tuple[tuple[str, float], ...]:
    """What a level setting does: the levels on and the share of test cases each gets (a campaign draws a
    level by weight, so only the weights' proportions matter: ``tir`` and ``tir=3`` are one setting,
    ``tir=3,graph=1`` and ``tir=1,graph=1`` are two)."""
    weights = levels.weights()
    total = sum(weights.values())
    return tuple(sorted((name, round(weight / total, 9)) for name, weight in weights.items()))


def _check_levels(spec: ExperimentSpec, source: str) -> None:
    current = config_from_dict(spec.campaign, f"{source}: campaign").levels
    seen: dict[tuple[tuple[str, float], ...], int] = {}
    labels: set[str] = set()
    for i, text in enumerate(spec.levels):
        where = f"levels[{i}]"
        if not isinstance(text, str) or not text.strip():
            raise _fail(source, where, "must be a --levels string such as tir, graph or 'tir,graph'", text)
        effect = effective_levels(parse_levels(text, current, f"{source}: field '{where}'"))
        label = level_label(text)
        if label in labels:
            raise _fail(source, where, f"repeats a level setting (arm label {label!r})", text)
        if effect in seen:
            same = spec.levels[seen[effect]]
            raise _fail(source, where, f"is the same setting as levels[{seen[effect]}] ({same!r}): the same levels "
                        "in the same proportions (weights only matter relative to each other), so the two arms "
                        "would be one", text)
        labels.add(label)
        seen[effect] = i


ADAPTIVE, FIXED = "adaptive", "fixed"
ALLOCATIONS = (ADAPTIVE, FIXED)
"""What ``allocations`` may list."""


def _check_allocations(spec: ExperimentSpec, source: str) -> None:
    for i, name in enumerate(spec.allocations):
        if name not in ALLOCATIONS:
            raise _fail(source, f"allocations[{i}]", f"must be one of: {', '.join(ALLOCATIONS)}", name)
    if len(set(spec.allocations)) != len(spec.allocations):
        raise _fail(source, "allocations", "repeats an allocation (the two arms would be one)", spec.allocations)


def _check_heuristics(spec: ExperimentSpec, source: str, check_known: bool) -> None:
    if not spec.heuristics:
        raise ConfigError(f"{source}: field 'heuristics' must list at least one heuristic")
    seen: set[str] = set()
    for i, h in enumerate(spec.heuristics):
        where = f"heuristics[{i}]"
        name = pool_name(h) if h else ""
        if not name or not NAME_RE.match(name):
            raise _fail(source, where, "must be a heuristic name or path", h)
        if name in seen:
            raise _fail(source, where, "repeats a heuristic (pool names must be unique)", h)
        seen.add(name)
        if check_known and not _pool_has_models(spec.pool_path(h)):
            _check_heuristic_known(source, where, h)


def _pool_has_models(path: Path) -> bool:
    return (path / "manifest.json").is_file() or (path.is_dir() and any(path.glob("*.onnx")))


def _check_heuristic_known(source: str, where: str, heuristic: str) -> None:
    """A heuristic without an existing pool must be loadable, since its pool will be generated."""
    try:
        from seedzer.generate.heuristics import load_heuristic
    except ImportError:  # the generator is optional at validation time; generation fails later
        return
    try:
        load_heuristic(heuristic)
    except ConfigError as exc:
        raise ConfigError(f"{source}: field '{where}': {exc}") from None


def validate(spec: ExperimentSpec, source: str, *, check_heuristics: bool = True) -> ExperimentSpec:
    """Check every field's range and consistency; raise a one-line ConfigError on the first problem."""
    if not spec.name or not NAME_RE.match(spec.name):
        raise _fail(source, "name", "must be a non-empty name of letters, digits, '.', '_' or '-'", spec.name)
    if spec.trials < 1:
        raise _fail(source, "trials", "must be >= 1", spec.trials)
    if spec.trials > MAX_TRIALS:
        raise _fail(source, "trials", f"must be at most {MAX_TRIALS}", spec.trials)
    if spec.parallel < 0:
        raise _fail(source, "parallel", "must be >= 0", spec.parallel)
    if spec.parallel > _config.MAX_JOBS:
        raise _fail(source, "parallel", f"must be at most {_config.MAX_JOBS}", spec.parallel)
    _check_with_config(source, "seed", "fuzz.seed", spec.seed)
    _check_with_config(source, "seed", "fuzz.seed", spec.seed + spec.trials)
    _check_with_config(source, "pool.seed", "generate.seed", spec.pool.seed)
    _check_with_config(source, "pool.dir", "generate.pool_dir", spec.pool.dir)
    _check_with_config(source, "minutes", "fuzz.minutes", spec.minutes)
    _check_with_config(source, "snapshot_period", "fuzz.snapshot_period", spec.snapshot_period)
    _check_with_config(source, "jobs", "fuzz.jobs", spec.jobs)
    _check_with_config(source, "coverage", "fuzz.coverage", spec.coverage)
    _check_with_config(source, "oracles", "oracles.enabled", spec.oracles)
    _check_with_config(source, "pool.size", "generate.count", spec.pool.size)
    if spec.pool.max_nodes is not None:
        if isinstance(spec.pool.max_nodes, bool) or not isinstance(spec.pool.max_nodes, int):
            raise _fail(source, "pool.max_nodes", "must be int or null", spec.pool.max_nodes)
        _check_with_config(source, "pool.max_nodes", "generate.max_nodes", spec.pool.max_nodes)
    for section, names in RESERVED.items():
        sub = spec.campaign.get(section)
        if isinstance(sub, dict):
            for key in names:
                if key in sub:
                    top = {"enabled": "oracles"}.get(key, key)
                    raise ConfigError(f"{source}: field 'campaign.{section}.{key}' is set by the experiment;"
                                      f" use the top-level field '{top}' instead")
    spec.trial_config(1)  # validates the campaign section against the campaign schema
    _check_levels(spec, source)
    _check_allocations(spec, source)
    _check_heuristics(spec, source, check_heuristics)
    return spec


def spec_from_dict(data: Any, source: str = "<experiment>", *, check_heuristics: bool = True) -> ExperimentSpec:
    """Build and validate an :class:`ExperimentSpec` from a parsed YAML mapping."""
    if isinstance(data, dict) and "source" in data:
        raise ConfigError(f"{source}: unknown field 'source'")
    spec: ExperimentSpec = _config.build(ExperimentSpec, data, "", source)
    spec.source = source
    if spec.campaign is None:
        spec.campaign = {}
    if not isinstance(spec.campaign, dict):
        raise _fail(source, "campaign", "must be a mapping of campaign settings", spec.campaign)
    return validate(spec, source, check_heuristics=check_heuristics)


def overridden(spec: ExperimentSpec, *, trials: int | None = None, minutes: float | None = None) -> ExperimentSpec:
    """``spec`` with the command line's ``--trials`` / ``--minutes`` instead of the file's, checked as
    the file's values are (a one-line error names the option)."""
    if trials is None and minutes is None:
        return spec
    changed = dataclasses.replace(spec, trials=spec.trials if trials is None else trials,
                                  minutes=spec.minutes if minutes is None else minutes)
    return validate(changed, f"{spec.source or '<experiment>'} with --trials/--minutes")


def load_spec(path: Path, *, check_heuristics: bool = True) -> ExperimentSpec:
    """Read and validate an experiment YAML file."""
    data = read_yaml(path, "experiment")
    if data is None:
        raise ConfigError(f"{path}: empty experiment file (needs at least 'name' and 'heuristics')")
    return spec_from_dict(data, str(path), check_heuristics=check_heuristics)


def reference() -> list[tuple[str, str, str]]:
    """Rows (field, default, doc) documenting the experiment schema (for the README)."""
    return [r for r in _config.reference(ExperimentSpec) if r[0] != "source"]
