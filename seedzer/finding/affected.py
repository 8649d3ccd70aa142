"""The TVM versions a bug affects: every root's plain reproducer (``minimal.py``) run against other TVM
releases (or local wheels), each in a cached virtual environment holding that TVM and the packages the
reproducer names (:mod:`seedzer.environments`: created once, then reused).

A run is ``present`` (exit 1 with its present line), ``fixed`` (exit 0 with its gone line), or no verdict:
``cannot-run`` (an import or an API this TVM does not have), ``different`` (the step under test fails
another way), ``error``. A root present in a release and fixed in the release before it is a
**regression** of that release. Versions are checked against the package index before anything is
created: a release it does not have, or a wheel that holds no TVM, is a one-line error.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seedzer.environments.cache import GB, ensure_bounded
from seedzer.environments.wheels import TVM_DISTRIBUTION, TvmSource
from seedzer.errors import SeedzerError, UsageError
from seedzer.finding.bug_report import fault_component
from seedzer.finding.meta import BUG, FindingMeta
from seedzer.finding.minimal.program import MINIMAL_FILE, read_record
from seedzer.finding.minimal.verify import VerifySettings, env_spec, minimal_verdict
from seedzer.finding.replay import finding_dirs
from seedzer.finding.repro import run_repro


@dataclass(frozen=True)
class RootProgram:
    """A root and the plain reproducer it is checked with (the folder holding the shortest verified one)."""

    root: str
    kind: str
    symptom: str
    component: str
    folder: Path
    needs: tuple[str, ...]
    lines: int


@dataclass(frozen=True)
class VersionCell:
    """One root on one TVM: the verdict, why there is none, and the run's seconds."""

    verdict: str
    detail: str = ""
    seconds: float = 0.0


@dataclass
class VersionsTable:
    """Roots by versions: the cells, the environments this run created (name, seconds) and its seconds."""

    versions: list[str]
    roots: list[RootProgram]
    cells: dict[tuple[str, str], VersionCell] = field(default_factory=dict)
    created: list[tuple[str, float]] = field(default_factory=list)
    seconds: float = 0.0

    def regressions(self) -> dict[str, tuple[str, str]]:
        """Root -> (the last release it was fixed in, the next one it is present in), for roots present in
        a release and fixed in the release before it (releases in version order; local wheels last)."""
        out: dict[str, tuple[str, str]] = {}
        for r in self.roots:
            for before, after in zip(self.versions, self.versions[1:], strict=False):
                fixed = self.cells.get((r.root, before))
                present = self.cells.get((r.root, after))
                if fixed and present and fixed.verdict == "fixed" and present.verdict == "present":
                    out[r.root] = (before, after)
        return out


def version_key(label: str) -> tuple[int, ...]:
    """A release number's order (``0.27.0`` < ``0.27.0.post1`` < ``0.28.0rc1`` < ``0.28.0``); anything
    else (a wheel's file name) sorts last."""
    found = re.match(r"^(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?", label)
    if found is None:
        return (1 << 30,)
    numbers = tuple(int(x) for x in found.group(1).split("."))
    numbers += (0,) * (4 - len(numbers))
    pre = {"a": 0, "b": 1, "rc": 2}.get(found.group(2) or "", 3)
    return (*numbers, pre, int(found.group(3) or 0), int(found.group(4) or 0))


def root_programs(campaigns: Sequence[Path]) -> tuple[list[RootProgram], dict[str, str]]:
    """The bug roots of ``campaigns`` with the plain reproducer each is checked with, and the roots that
    have none (root -> why: no ``minimal.py`` yet, or none verified)."""
    best: dict[str, RootProgram] = {}
    missing: dict[str, str] = {}
    for campaign in campaigns:
        for folder in finding_dirs(Path(campaign)):
            try:
                meta = FindingMeta.load(folder)
                record = read_record(folder)
            except SeedzerError:
                continue
            root = meta.root_signature or meta.signature
            if meta.verdict != BUG:
                continue
            if record is None or not record.lines or not (folder / MINIMAL_FILE).is_file():
                missing.setdefault(root, "no minimal.py (run `seedzer triage`)" if record is None else
                                   f"no minimal.py ({record.why_not or 'none made'})")
                continue
            if not record.verified:
                missing.setdefault(root, f"minimal.py was not verified ({record.verdict or 'not run'})")
                continue
            component = fault_component(meta, record.component)
            found = RootProgram(root, meta.kind, meta.observation.symptom.value, component, folder, record.needs,
                                record.lines)
            if root not in best or found.lines < best[root].lines:
                best[root] = found
    return list(best.values()), {r: why for r, why in missing.items() if r not in best}


def index_versions(pip_args: Sequence[str] = ()) -> list[str] | None:
    """The apache-tvm releases the package index has (None: the index cannot be asked)."""
    try:
        proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", TVM_DISTRIBUTION,
                               "--disable-pip-version-check", *pip_args], capture_output=True, text=True,
                              timeout=120, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"Available versions:\s*(.+)", proc.stdout)
    return [v.strip() for v in found.group(1).split(",")] if found else None


def check_sources(sources: Sequence[TvmSource], pip_args: Sequence[str] = ()) -> None:
    """Refuse, before anything is created, a release the package index does not have."""
    wanted = [s.version for s in sources if s.version is not None]
    if not wanted:
        return
    have = index_versions(pip_args)
    if have is None:
        return  # the index cannot be asked here: pip's own error will name a missing release
    for version in wanted:
        if version not in have:
            raise UsageError(f"--version {version}: {TVM_DISTRIBUTION} has no such release on the package index "
                             f"(it has: {', '.join(sorted(have, key=version_key))})")


def run_versions(roots: Sequence[RootProgram], sources: Sequence[TvmSource], settings: VerifySettings,
                 say: Callable[[str], None] = lambda line: None) -> VersionsTable:
    """Run every root's plain reproducer on every source (environments created once, then reused)."""
    start = time.monotonic()
    ordered = sorted(sources, key=lambda s: version_key(s.label))
    table = VersionsTable([s.label for s in ordered], list(roots))
    for source in ordered:
        for root in roots:
            env, pruned = ensure_bounded(env_spec(root.needs, source), Path(settings.environments),
                                         settings.pip_args, settings.max_gb)
            if env.created:
                table.created.append((env.spec.name, env.seconds))
                say(f"created {env.path} in {env.seconds:.0f} s")
            if pruned is not None and pruned.removed:
                say(f"removed {len(pruned.removed)} least recently used environment(s) "
                    f"({pruned.freed() / GB:.1f} GiB): the cache is bounded by reproducers.venvs_max_gb")
            with env.in_use():
                run = run_repro(root.folder / MINIMAL_FILE, str(env.python), settings.timeout)
            verdict, why = minimal_verdict(run.returncode, run.output)
            table.cells[(root.root, source.label)] = VersionCell(verdict, why, run.seconds)
            say(f"{root.root} on {source.label}: {verdict}" + (f" ({why})" if why else ""))
    table.seconds = time.monotonic() - start
    return table
