"""Running a plain reproducer where a maintainer would: a fresh virtual environment holding only the
packages it names (the apache-tvm release it was made with, the others pinned to this interpreter's
versions), created once under the environments' directory and reused (:mod:`seedzer.environments`).
Its verdict (exit 1 with the house's present line) and the environment's facts go into ``minimal.json``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from seedzer.environments.cache import ensure_bounded
from seedzer.environments.facts import probe
from seedzer.environments.venv import EnvSpec, pinned
from seedzer.environments.wheels import TVM_DISTRIBUTION, TvmSource
from seedzer.finding.minimal.program import MINIMAL_FILE, MinimalProgram, MinimalRecord, write_minimal
from seedzer.finding.minimal.text import CANNOT_RUN, CANNOT_RUN_LINE, DIFFERENT, DIFFERENT_LINE
from seedzer.finding.repro import run_repro
from seedzer.kernel.common import GONE_LINE, PRESENT_LINE

DEFAULT_ENVIRONMENTS = "~/.cache/seedzer/venvs"
"""Where the virtual environments of plain reproducers live by default."""


@dataclass(frozen=True)
class VerifySettings:
    """Where the environments are (``environments``), whether to run in a fresh one (``fresh``; else with
    ``python``, e.g. in tests, which never download), pip's extra arguments and the run's time limit."""

    environments: str = DEFAULT_ENVIRONMENTS
    max_gb: float = 0.0
    """Bound of the environments' directory in GiB (0: none): a new environment prunes the least recently
    used others down to it (:func:`~seedzer.environments.cache.ensure_bounded`)."""
    fresh: bool = True
    python: str = sys.executable
    pip_args: tuple[str, ...] = ()
    timeout: float = 600.0


def installed_tvm() -> str:
    """The apache-tvm release this interpreter has (the one findings are made with)."""
    try:
        return metadata.version(TVM_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        from seedzer.finding.repro import TVM_VERSION

        return TVM_VERSION


TVM_FFI_DISTRIBUTION = "apache-tvm-ffi"
"""The FFI library apache-tvm runs on: pinned with this interpreter's release (a newer one may not fit it)."""


def env_spec(needs: tuple[str, ...], tvm: TvmSource | None = None) -> EnvSpec:
    """The environment a reproducer needing ``needs`` runs in: ``tvm`` (this interpreter's release by
    default, with this interpreter's FFI) and the other packages pinned."""
    names = [n for n in needs if n != TVM_DISTRIBUTION]
    if tvm is None:
        names.append(TVM_FFI_DISTRIBUTION)
    return EnvSpec(tvm or TvmSource(version=installed_tvm()), pinned(names))


def _said_before(output: str, line: str) -> str:
    """The error a reproducer printed right before its own ``line`` (TVM's warnings, printed after it on
    stderr, are not the reason); empty when it printed no such line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    at = next((i for i, ln in enumerate(lines) if ln == line), None)
    return lines[at - 1] if at else ""


def _cannot_run_reason(output: str) -> str:
    """The line saying why a reproducer cannot run: the guard's own (``cannot run here: <error>``), or,
    for an API error inside the checked step, the error printed on the line before the bare one."""
    lines = output.splitlines()
    at = next((i for i, ln in enumerate(lines) if ln.startswith(CANNOT_RUN_LINE)), None)
    if at is None:
        return ""
    if lines[at].strip() == CANNOT_RUN_LINE and at > 0 and lines[at - 1].strip():
        return f"{CANNOT_RUN_LINE}: {lines[at - 1].strip()}"
    return lines[at]


def minimal_verdict(returncode: int | None, output: str) -> tuple[str, str]:
    """``(present | fixed | cannot-run | different | error, why)`` of a plain reproducer's run: a verdict
    needs both the exit status and the line the program prints with it."""
    if returncode == 1 and PRESENT_LINE in output:
        return "present", ""
    if returncode == 0 and GONE_LINE in output:
        return "fixed", ""
    if returncode == CANNOT_RUN:
        return "cannot-run", _cannot_run_reason(output)[:200] or "an import or API error"
    if returncode == DIFFERENT:
        return "different", _said_before(output, DIFFERENT_LINE)[:200]
    if returncode is None:
        return "error", "ran over its time limit"
    return "error", f"exit status {returncode} without its verdict line"


def verify_minimal(folder: Path, program: MinimalProgram, validity: dict[str, str] | None,
                   settings: VerifySettings) -> MinimalRecord:
    """Write ``minimal.py`` into ``folder`` and run it (in a fresh environment unless ``settings`` says
    otherwise); its record, written as ``minimal.json``."""
    record = MinimalRecord.of(program, validity)
    path = write_minimal(folder, program, record)
    if settings.fresh:
        env, _ = ensure_bounded(env_spec(program.needs), Path(settings.environments), settings.pip_args,
                                settings.max_gb)
        with env.in_use():
            run = run_repro(path, str(env.python), settings.timeout)
            facts = probe(str(env.python)).to_json()
        name = env.spec.name
    else:
        run, name = run_repro(path, settings.python, settings.timeout), "this interpreter"
        facts = probe(settings.python).to_json()
    verdict, why = minimal_verdict(run.returncode, run.output)
    record = record.verified_by(verdict == "present", run.returncode, verdict + (f": {why}" if why else ""), name,
                                facts)
    write_minimal(folder, program, record)
    return record


__all__ = ["DEFAULT_ENVIRONMENTS", "MINIMAL_FILE", "VerifySettings", "env_spec", "installed_tvm",
           "minimal_verdict", "verify_minimal"]
