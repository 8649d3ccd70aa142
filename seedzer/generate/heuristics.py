"""Heuristics: find them by name (repo checkout or installed wheel) or path, validate, select.

A heuristic is a YAML file with a ``generation:`` and a ``selection:`` part (and optionally an ``epochs:``
part, :mod:`seedzer.generate.epoch_plan`), or a Python file
exposing ``generation_options() -> dict`` (same keys as the YAML ``generation:`` part) and
``select(entries, count) -> list``; it may also define ``OVERSAMPLE`` (a float >= 1, default 1) to
generate that many times ``count`` candidates before selecting. Shipped heuristics live in the
top-level ``heuristics/`` directory, installed as the package ``seedzer._heuristics``.
"""

from __future__ import annotations

import bisect
import importlib.resources
import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import yaml

import seedzer
from seedzer.config import excerpt
from seedzer.errors import ConfigError
from seedzer.generate.epoch_plan import EpochPlan, parse_epoch_plan
from seedzer.generate.options import (
    GenerationOptions,
    SelectionOptions,
    parse_generation,
    parse_selection,
)

SUFFIXES = (".yaml", ".yml", ".py")


def _package_dir() -> Path | None:
    """The installed package-data directory ``seedzer._heuristics`` (a namespace package), if any."""
    try:
        root = importlib.resources.files("seedzer._heuristics")
    except ModuleNotFoundError:
        return None
    for entry in root.iterdir():
        path = Path(str(entry))
        if path.suffix in SUFFIXES and path.is_file():
            return path.parent
    return None


def heuristics_dir() -> Path:
    """The directory holding the shipped heuristics (installed package data or repo checkout)."""
    installed = _package_dir()
    if installed is not None:
        return installed
    checkout = Path(seedzer.__file__).resolve().parent.parent / "heuristics"
    if checkout.is_dir():
        return checkout
    raise ConfigError("heuristics: cannot find the shipped heuristics (package seedzer._heuristics)")


def available_heuristics() -> list[str]:
    """Names of every shipped heuristic (YAML or Python file stems), sorted."""
    names = {p.stem for p in heuristics_dir().iterdir() if p.suffix in SUFFIXES and not p.name.startswith(("_", "."))}
    return sorted(names)


class Heuristic(Protocol):
    """What chooses a seed pool: generation-time constraints plus a selection rule over a pool's manifest
    entries (:class:`YamlHeuristic` for data, :class:`PythonHeuristic` for a user's hooks)."""

    name: str
    path: Path
    generation: GenerationOptions
    description: str
    epochs: EpochPlan | None

    @property
    def oversample(self) -> float:
        """How many candidates to generate per pool slot before selecting."""
        ...

    @property
    def identity_selection(self) -> bool:
        """True when every generated model is kept as is."""
        ...

    def generation_options(self) -> dict[str, Any]:
        """Options for the generator (op include/exclude, weights, max nodes, dtypes, conv rules)."""
        ...

    def select(self, entries: Sequence[dict[str, Any]], count: int) -> list[dict[str, Any]]:
        """Choose at most ``count`` manifest entries that make up the heuristic's pool."""
        ...


@dataclass
class YamlHeuristic:
    """A heuristic defined as data: generation options plus a declarative selection rule."""

    name: str
    path: Path
    generation: GenerationOptions
    selection: SelectionOptions
    description: str = ""
    epochs: EpochPlan | None = None
    """Its ``epochs:`` part: how a campaign grows its pool while fuzzing (:mod:`seedzer.generate.epoch_plan`)."""

    @property
    def oversample(self) -> float:
        """How many candidates to generate per pool slot before selecting."""
        return self.selection.oversample

    @property
    def identity_selection(self) -> bool:
        """True when every generated model is kept as is."""
        return self.selection.identity

    def generation_options(self) -> dict[str, Any]:
        """The generation part as a plain dict (see :class:`GenerationOptions`)."""
        return self.generation.to_dict()

    def select(self, entries: Sequence[dict[str, Any]], count: int) -> list[dict[str, Any]]:
        """Filter, then sort by the sum of per-key ranks (ties: generation order); keep ``count``."""
        return rank_select(entries, count, self.selection)


@dataclass
class PythonHeuristic:
    """A heuristic implemented by a user's Python file with the two hooks."""

    name: str
    path: Path
    module: ModuleType
    generation: GenerationOptions
    oversample: float = 1.0
    identity_selection: bool = field(default=False)
    description: str = ""
    epochs: EpochPlan | None = None
    """Python heuristics declare no epochs."""

    def generation_options(self) -> dict[str, Any]:
        """The module's generation options, validated."""
        return self.generation.to_dict()

    def select(self, entries: Sequence[dict[str, Any]], count: int) -> list[dict[str, Any]]:
        """Delegate to the module's ``select`` hook; the result must be entries from the input."""
        chosen = self.module.select(list(entries), count)
        if not isinstance(chosen, list) or not all(isinstance(e, dict) for e in chosen):
            raise ConfigError(f"{self.path}: select: must return a list of manifest entries")
        files = {e["file"] for e in entries}
        for e in chosen:
            if e.get("file") not in files:
                raise ConfigError(f"{self.path}: select: returned an entry that is not in the pool")
        return chosen[:count]



def _sort_key(entry: dict[str, Any], key: str) -> float:
    if key == "distinct_ops":
        return float(len(entry["ops"]))
    if key == "convs":
        return float(len(entry.get("conv_kernels", [])))
    if key == "edge":  # pools made before edge features were recorded score 0
        return float(sum(entry.get("edge_features", {}).values()))
    return float(entry[key])


def rank_select(entries: Sequence[dict[str, Any]], count: int, selection: SelectionOptions) -> list[dict[str, Any]]:
    """Apply ``selection`` to manifest ``entries`` and return at most ``count`` of them."""
    kept = [e for e in entries if selection.filter.keeps(e)]
    if selection.sort_by:
        total = {id(e): 0.0 for e in kept}
        for key in selection.sort_by:
            values = sorted(_sort_key(e, key) for e in kept)
            for e in kept:  # average rank of the value under ties
                v = _sort_key(e, key)
                lo = _bisect(values, v, left=True)
                hi = _bisect(values, v, left=False)
                total[id(e)] += (lo + hi - 1) / 2
        sign = -1.0 if selection.order == "descending" else 1.0
        kept.sort(key=lambda e: (sign * total[id(e)], int(e.get("index", 0))))
    return kept[:count]


def _bisect(values: list[float], v: float, *, left: bool) -> int:
    return bisect.bisect_left(values, v) if left else bisect.bisect_right(values, v)


def _resolve(spec: str) -> Path:
    """A heuristic name or path to its file; unknown names raise a one-line ConfigError."""
    as_path = Path(spec)
    if as_path.suffix in SUFFIXES or "/" in spec or "\\" in spec:
        if not as_path.is_file():
            raise ConfigError(f"heuristic file {spec}: not found")
        return as_path
    base = heuristics_dir()
    for suffix in SUFFIXES:
        candidate = base / f"{spec}{suffix}"
        if candidate.is_file():
            return candidate
    known = ", ".join(available_heuristics())
    raise ConfigError(f"unknown heuristic {spec!r} (known: {known}; or pass a path to a .yaml/.py file)")


def heuristic_known(spec: str) -> bool:
    """True when ``spec`` names a shipped heuristic or an existing heuristic file (nothing is imported)."""
    try:
        _resolve(spec)
    except ConfigError:
        return False
    return True


def load_heuristic(spec: str) -> Heuristic:
    """Load a heuristic by shipped name (``conv3``) or by path (``my/h.yaml``, ``my/h.py``)."""
    path = _resolve(spec)
    if path.suffix == ".py":
        return _load_python(path)
    return _load_yaml(path)


def _load_yaml(path: Path) -> YamlHeuristic:
    from seedzer.config import load_bounded, read_text

    text = read_text(path, "heuristic")
    try:
        data = load_bounded(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"{path}:{where}: malformed YAML ({problem})") from None
    except (ValueError, OverflowError, RecursionError) as exc:
        raise ConfigError(f"{path}: malformed YAML ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with generation: and selection: parts")
    unknown = set(data) - {"description", "generation", "selection", "epochs"}
    if unknown:
        raise ConfigError(
            f"{path}: {sorted(map(str, unknown))[0]}: unknown key (allowed: description, generation, selection, "
            "epochs)"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{path}: description: expected a string, got {excerpt(description)}")
    return YamlHeuristic(
        name=path.stem,
        path=path,
        generation=parse_generation(data.get("generation"), str(path)),
        selection=parse_selection(data.get("selection"), str(path)),
        description=description.strip(),
        epochs=parse_epoch_plan(data.get("epochs"), str(path)),
    )


def _load_python(path: Path) -> PythonHeuristic:
    spec = importlib.util.spec_from_file_location(f"seedzer_heuristic_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot import")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a user's file: report any import failure on one line
        raise ConfigError(f"{path}: import failed ({type(exc).__name__}: {exc})") from None
    for hook in ("generation_options", "select"):
        if not callable(getattr(module, hook, None)):
            raise ConfigError(f"{path}: {hook}: missing hook (a Python heuristic defines a function {hook})")
    oversample = getattr(module, "OVERSAMPLE", 1.0)
    if isinstance(oversample, bool) or not isinstance(oversample, int | float) or not 1 <= oversample <= 100:
        raise ConfigError(f"{path}: OVERSAMPLE: expected a number between 1 and 100, got {excerpt(oversample)}")
    generation = parse_generation(module.generation_options(), str(path))
    doc = (module.__doc__ or "").strip().splitlines()
    return PythonHeuristic(path.stem, path, module, generation, float(oversample), description=doc[0] if doc else "")


def candidate_target(heuristic: Heuristic, count: int) -> int:
    """How many candidates to generate for a pool of ``count`` models."""
    return max(count, math.ceil(count * heuristic.oversample))
