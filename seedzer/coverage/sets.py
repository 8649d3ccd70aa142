"""Coverage sets of campaigns: read them from campaign.db, export them, take unions and differences.

A *source* is a campaign directory (its ``campaign.db``), a directory holding campaigns (e.g. the
``<results>/<experiment>/<pool>/`` directory of an experiment, whose ``trial-<n>/`` are campaigns:
their union), a glob pattern over those, or a file written by :func:`write_set`. Sets compare
across trials because every backend's features are process-independent strings
(``sc:<module>:<offset>``, ``bp:...``, pass features). TVM-free; reads campaign.db read-only.
"""

from __future__ import annotations

import glob
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from seedzer.coverage.tracker import family_of
from seedzer.errors import SeedzerError
from seedzer.store.atomic import write_atomic
from seedzer.store.reader import CampaignReader, UnreadableCampaign
from seedzer.store.readonly import is_sqlite

FORMAT = "seedzer-coverage-set"
DB_NAME = "campaign.db"


class CoverageSetError(SeedzerError):
    """A coverage source is missing, unreadable or not a coverage set (the message names it)."""


@dataclass
class CoverageSet:
    """A set of coverage features and where it came from (campaign directories or files)."""

    features: set[str] = field(default_factory=set)
    sources: list[str] = field(default_factory=list)

    def by_backend(self) -> dict[str, int]:
        """Feature counts per backend, sorted by backend name."""
        return dict(sorted(Counter(family_of(f) for f in self.features).items()))

    def only(self, backend: str | None) -> CoverageSet:
        """The features of one backend (all when ``backend`` is None)."""
        if backend is None:
            return self
        return CoverageSet({f for f in self.features if family_of(f) == backend}, list(self.sources))

    def __or__(self, other: CoverageSet) -> CoverageSet:
        return CoverageSet(self.features | other.features, self.sources + other.sources)

    def __sub__(self, other: CoverageSet) -> CoverageSet:
        return CoverageSet(self.features - other.features, list(self.sources))


def read_campaign(directory: Path) -> CoverageSet:
    """The features recorded in ``directory/campaign.db`` (opened read-only; never created or written)."""
    db = directory / DB_NAME
    if not db.is_file():
        raise CoverageSetError(f"{directory}: not a campaign directory (no {DB_NAME})")
    try:
        with CampaignReader.open(db) as reader:
            features = reader.features()
    except UnreadableCampaign as exc:
        raise CoverageSetError(f"{db}: cannot read coverage features ({exc.cause})") from None
    except SeedzerError as exc:
        raise CoverageSetError(str(exc)) from None
    bad = [row for row in reader.corrupt if row.table == "coverage_features"]
    if bad:
        raise CoverageSetError(f"{db}: coverage_features holds {len(bad)} feature(s) that are not text "
                               f"(e.g. {bad[0].value}), so it was not written by Seedzer")
    return CoverageSet(set(features), [str(directory)])


def read_file(path: Path) -> CoverageSet:
    """A set written by :func:`write_set` (text or JSON, told apart by the first character)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise CoverageSetError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from exc
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CoverageSetError(f"{path}: invalid JSON ({exc})") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("features"), list):
            raise CoverageSetError(f"{path}: not a coverage set (no \"format\": \"{FORMAT}\" with features)")
        for i, feature in enumerate(data["features"]):
            if not isinstance(feature, str) or not feature or "\n" in feature:
                raise CoverageSetError(f"{path}: features[{i}] is not a coverage feature (a non-empty one-line "
                                       f"string), got {json.dumps(feature)[:80]}")
        return CoverageSet(set(data["features"]), [str(path)])
    lines = text.splitlines()
    if not lines or lines[0] != f"# {FORMAT}":
        raise CoverageSetError(f"{path}: not a coverage set (first line is not '# {FORMAT}')")
    return CoverageSet({ln for ln in lines if ln and not ln.startswith("#")}, [str(path)])


def campaigns_under(directory: Path) -> list[Path]:
    """Campaign directories at or below ``directory`` (sorted)."""
    if (directory / DB_NAME).is_file():
        return [directory]
    return sorted(p.parent for p in directory.rglob(DB_NAME))


def read_source(spec: str | Path) -> CoverageSet:
    """The union of every campaign or set file ``spec`` names (a path or a glob pattern)."""
    spec = str(spec)
    paths = source_paths(spec)
    if not paths:
        raise CoverageSetError(f"{spec}: no such file, directory or matching path")
    result = CoverageSet()
    for path in paths:
        if path.is_file():
            result = result | read_file(path)
            continue
        campaigns = campaigns_under(path)
        if not campaigns:
            raise CoverageSetError(f"{path}: no campaign directory (no {DB_NAME}) at or below it")
        for campaign in campaigns:
            result = result | read_campaign(campaign)
    return result


def union(specs: Iterable[str | Path]) -> CoverageSet:
    """The union of several sources."""
    result = CoverageSet()
    for spec in specs:
        result = result | read_source(spec)
    return result


@dataclass(frozen=True)
class Comparison:
    """Sizes of two sets, their intersection and both differences."""

    a: int
    b: int
    both: int
    only_a: int
    only_b: int

    def lines(self) -> list[str]:
        """Aligned ``|A|``, ``|B|``, ``|A&B|``, ``|A-B|``, ``|B-A|`` lines."""
        rows = [("|A|", self.a), ("|B|", self.b), ("|A&B|", self.both), ("|A-B|", self.only_a),
                ("|B-A|", self.only_b)]
        return [f"{name:<6} {value:>10}" for name, value in rows]


def compare(a: CoverageSet, b: CoverageSet) -> Comparison:
    """How ``a`` and ``b`` overlap."""
    both = len(a.features & b.features)
    return Comparison(len(a.features), len(b.features), both, len(a.features) - both, len(b.features) - both)


def render(cov: CoverageSet, fmt: str = "text", backend: str | None = None) -> str:
    """A stable text (header + one sorted feature per line) or JSON rendering of ``cov``."""
    features = sorted(cov.features)
    backends = cov.by_backend()
    if fmt == "json":
        doc = {"format": FORMAT, "version": 1, "backend": backend or "all", "backends": backends,
               "sources": cov.sources, "count": len(features), "features": features}
        return json.dumps(doc, indent=1) + "\n"
    header = [f"# {FORMAT}", f"# backend: {backend or 'all'}",
              "# backends: " + (" ".join(f"{k}={v}" for k, v in backends.items()) or "none"),
              f"# sources: {' '.join(cov.sources)}", f"# count: {len(features)}"]
    return "\n".join(header + features) + "\n"


def source_paths(spec: str | Path) -> list[Path]:
    """The paths a source names (itself, or what its glob matches)."""
    spec = str(spec)
    return [Path(spec)] if Path(spec).exists() else [Path(p) for p in sorted(glob.glob(spec))]


def is_set_file(path: Path) -> bool:
    """True when ``path`` holds a coverage set written by :func:`write_set` (text or JSON)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    text = head.decode("utf-8", "replace").lstrip()
    return text.startswith(f"# {FORMAT}") or (text.startswith("{") and f'"{FORMAT}"' in text)


def check_output(out: Path, sources: Iterable[str | Path] = (), option: str = "-o") -> None:
    """Refuse an output path that would destroy data: an input, a database, a directory, another file.

    A coverage set is written only to a new file, an empty one, or one holding a coverage set that is
    not among ``sources``; never to a file named ``campaign.db`` or to any SQLite database.
    """
    out = Path(out)
    label = f"{option} {out}"
    if out.name == DB_NAME:
        raise CoverageSetError(f"{label}: refusing to write a coverage set named {DB_NAME} (a campaign's database)")
    if out.is_dir():
        raise CoverageSetError(f"{label}: is a directory; name a file to write")
    if is_sqlite(out):
        raise CoverageSetError(f"{label}: is an SQLite database; refusing to overwrite it")
    try:
        target = out.resolve()
    except (OSError, RuntimeError) as exc:
        raise CoverageSetError(f"{label}: cannot resolve ({exc})") from None
    for spec in sources:
        for path in source_paths(spec):
            try:
                same = path.resolve() == target
            except (OSError, RuntimeError):
                same = False
            if same:
                raise CoverageSetError(f"{label}: is also an input ({spec}); write the result to another file")
    if out.exists() and out.stat().st_size > 0 and not is_set_file(out):
        raise CoverageSetError(f"{label}: exists and is not a coverage set; refusing to overwrite it "
                               "(remove it or choose another name)")


def write_set(cov: CoverageSet, out: Path, fmt: str | None = None, backend: str | None = None) -> None:
    """Write ``cov`` to ``out`` (JSON when ``fmt`` is json or the name ends in .json, else text)."""
    fmt = fmt or ("json" if out.suffix == ".json" else "text")
    write_atomic(out, render(cov, fmt, backend))
