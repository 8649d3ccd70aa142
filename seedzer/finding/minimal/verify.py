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

from seedzer.environments.facts import probe
from seedzer.environments.venv import EnvSpec, ensure_env, pinned
from seedzer.environments.wheels import TVM_DISTRIBUTION, TvmSource
from seedzer.finding.minimal.program import MINIMAL_FILE, MinimalProgram, MinimalRecord, write_minimal
from seedzer.finding.minimal.text import CANNOT_RUN, CANNOT_RUN_LINE, DIFFERENT
from seedzer.finding.repro import run_repro
from seedzer.kernel.common import GONE_LINE, PRESENT_LINE

DEFAULT_ENVIRONMENTS = "~/.cache/seedzer/venvs"
"""Where the virtual environments of plain reproducers live by default."""


@dataclass(frozen=True)
class VerifySettings:
    """Where the environments are (``environments``), whether to run in a fresh one (``fresh``; else with
    ``python``, e.g. in tests, which never download), pip's extra arguments and the run's time limit."""

    environments: str = DEFAULT_ENVIRONMENTS
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


def env_spec(needs: tuple[str, ...], tvm: TvmSource | None = None) -> EnvSpec:
    """The environment a reproducer needing ``needs`` runs in: ``tvm`` (this interpreter's release by
    default) and the other packages pinned."""
    return EnvSpec(tvm or TvmSource(version=installed_tvm()), pinned([n for n in needs if n != TVM_DISTRIBUTION]))


def minimal_verdict(returncode: int | None, output: str) -> tuple[str, str]:
    """``(present | fixed | cannot-run | different | error, why)`` of a plain reproducer's run: a verdict
    needs both the exit status and the line the program prints with it."""
    if returncode == 1 and PRESENT_LINE in output:
        return "present", ""
    if returncode == 0 and GONE_LINE in output:
        return "fixed", ""
    said = next((ln for ln in output.splitlines() if ln.startswith(CANNOT_RUN_LINE)), "")
    if returncode == CANNOT_RUN:
        return "cannot-run", said[:200] or "an import or API error"
    if returncode == DIFFERENT:
        tail = [ln for ln in output.strip().splitlines() if ln.strip()]
        return "different", (tail[-2] if len(tail) > 1 else "")[:200]
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
        env = ensure_env(env_spec(program.needs), Path(settings.environments), settings.pip_args)
        python, name = str(env.python), env.spec.name
    else:
        python, name = settings.python, "this interpreter"
    run = run_repro(path, python, settings.timeout)
    verdict, why = minimal_verdict(run.returncode, run.output)
    facts = probe(python).to_json()
    record = record.verified_by(verdict == "present", run.returncode, verdict + (f": {why}" if why else ""), name,
                                facts)
    write_minimal(folder, program, record)
    return record


__all__ = ["DEFAULT_ENVIRONMENTS", "MINIMAL_FILE", "VerifySettings", "env_spec", "installed_tvm",
           "minimal_verdict", "verify_minimal"]
