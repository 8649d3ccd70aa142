"""``seedzer load MODEL.onnx|POOL_DIR``: load models into PrimFunc seeds and print the load report.

Before anything is loaded, every input is checked in this process (which never imports TVM):
a file that cannot be read, a file name that is not UTF-8, a pool model whose sha256 differs from
its manifest's, or bytes that do not parse as a valid ONNX model (empty, random, truncated). When
every input fails, that is one ``error:`` line and exit status 2; when only some do, each is
reported on its own ``error:`` line, the others are loaded, and the exit status is 1. The
``--target`` is checked against TVM 0.27's ``llvm`` target options without importing TVM, so a
typo is a usage error rather than a load finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from seedzer.commands.load_output import prepare, write_all
from seedzer.commands.load_report import build_report, invalid_notes, render, verdict_of
from seedzer.console import SafeConsole, echo
from seedzer.errors import ModelError, PoolError, UsageError, shown
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.load.loader import DEFAULT_INPUT_SEED, LoadOptions, ModelLoad, load_all

MAX_TIMEOUT = 24 * 3600.0

LLVM_OPTIONS: dict[str, str] = {
    "mcpu": "str", "mtriple": "str", "mfloat-abi": "str", "mabi": "str", "model": "str", "tag": "str",
    "device": "str", "jit": "str", "mattr": "list", "cl-opt": "list", "keys": "list", "libs": "list",
    "num-cores": "int", "opt-level": "int", "vector-width": "int", "fast-math": "bool",
    "fast-math-nnan": "bool", "fast-math-ninf": "bool", "fast-math-nsz": "bool", "fast-math-arcp": "bool",
    "fast-math-contract": "bool", "fast-math-reassoc": "bool",
}
"""The ``llvm`` target options of TVM 0.27 (``Target`` refuses any other) with their JSON types."""


def check_target(spec: str) -> None:
    """Refuse a ``--target`` TVM would reject, or one whose kernels could not run on this CPU.

    Accepted: ``llvm``, or a JSON object ``{"kind": "llvm", ...}`` with TVM 0.27's llvm options.
    """
    label = f"--target {spec!r}"
    text = spec.strip()
    data: dict[str, Any]
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{label}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(parsed, dict):
            raise UsageError(f"{label}: must be a JSON object such as {{\"kind\": \"llvm\"}}")
        data = parsed
    elif not text or any(c.isspace() for c in text):
        raise UsageError(f"{label}: TVM 0.27 takes target options only in JSON form, e.g. "
                         "'{\"kind\": \"llvm\", \"mcpu\": \"skylake\"}'")
    else:
        data = {"kind": text}
    kind = data.get("kind")
    if kind != "llvm":
        raise UsageError(f"{label}: the kind must be 'llvm' (loaded models are built and run on this "
                         f"machine's CPU), got {kind!r}")
    for key, value in data.items():
        if key == "kind":
            continue
        want = LLVM_OPTIONS.get(key)
        if want is None:
            known = ", ".join(sorted(LLVM_OPTIONS))
            raise UsageError(f"{label}: unknown llvm target option {key!r} (known: {known})")
        ok = {
            "str": isinstance(value, str),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "list": isinstance(value, list) and all(isinstance(v, str) for v in value),
        }[want]
        if not ok:
            kind_name = "a list of strings" if want == "list" else f"a JSON {want}"
            raise UsageError(f"{label}: option {key!r} must be {kind_name}, got {value!r}")
    level = data.get("opt-level")
    if level is not None and not 0 <= level <= 3:
        raise UsageError(f"{label}: option 'opt-level' must be between 0 and 3, got {level}")
    for key in ("num-cores", "vector-width"):
        if key in data and not 1 <= data[key] <= 4096:
            raise UsageError(f"{label}: option {key!r} must be between 1 and 4096, got {data[key]}")


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def resolve_models(target: Path) -> list[tuple[Path, str | None]]:
    """The model files named by ``target`` with their recorded sha256 (pool manifests), if any.

    A pool directory with a ``manifest.json`` is read strictly (paths must stay inside the pool); one
    without is read as its ``*.onnx`` files.
    """
    from seedzer.generate.seed_pool import MANIFEST, read_manifest

    if target.is_dir():
        if (target / MANIFEST).exists():
            data = read_manifest(target)
            models = [(target / str(e["file"]), e.get("sha256")) for e in data["models"]]
            if not models:
                raise PoolError(f"pool {target}: the manifest lists no models")
            return models
        found = sorted(target.glob("*.onnx"))
        if not found:
            raise PoolError(f"pool directory {target} holds no *.onnx models")
        return [(p, None) for p in found]
    if not target.exists():
        raise ModelError(f"{target}: no such model file")
    if not target.is_file():
        raise ModelError(f"{target}: not a regular file")
    return [(target, None)]


def model_problem(path: Path, sha256: str | None) -> str | None:
    """Why ``path`` cannot be loaded (unreadable, altered, not ONNX), or None when it parses and checks."""
    from seedzer.generate.seed_pool import sha256_file
    from seedzer.load.onnx_import import InvalidModel, read_model

    if not _utf8(str(path)):
        return "the file name is not UTF-8 text; rename the file"
    if not path.exists():
        return "no such file"
    if not path.is_file():
        return "not a regular file"
    if sha256 is not None:
        try:
            if sha256_file(path) != sha256:
                return "corrupt: its sha256 differs from the one in the pool's manifest.json"
        except OSError as exc:
            return f"cannot read ({exc.strerror or exc})"
    try:
        read_model(path)
    except InvalidModel as exc:
        return " ".join(str(exc).split())
    return None


def check_out(out: Path, target: Path) -> None:
    """Refuse an ``--out`` that would write over the input or over a directory the load does not own."""
    label = f"--out {out}"
    if out.exists() and not out.is_dir():
        raise UsageError(f"{label}: exists and is not a directory")
    try:
        inputs = {target.resolve(), (target if target.is_dir() else target.parent).resolve()}
        same = out.resolve() in inputs
    except (OSError, RuntimeError):
        same = False
    if same:
        raise UsageError(f"{label}: is where the input models are; write the seeds to a directory of their own")
    for name, what in (("campaign.db", "a campaign directory"), ("manifest.json", "a seed pool")):
        if (out / name).exists():
            raise UsageError(f"{label}: is {what}; write the seeds elsewhere")
    if out.is_dir() and not (out / "load_report.json").exists() and any(out.iterdir()):
        raise UsageError(f"{label}: exists, is not empty and holds no earlier load (no load_report.json); "
                         "refusing to write into it")


def _summary(r: ModelLoad) -> str:
    """One line per model; a model refused (over the limits, unknown opset) or ``invalid`` at the
    reference says so with its reason, as its failure-table row does."""
    bugs = r.findings()
    invalid = invalid_notes(r)
    refused = [o for o in invalid if o.pass_name == "parse"]
    if refused:
        return f"{shown(r.model)}: invalid: {' '.join(refused[0].message.split())[:300]}"
    verdict = {True: "matched", False: "MISMATCH", None: "unchecked"}[verdict_of(r)]
    if r.matched is True and verdict_of(r) is None:
        verdict = f"invalid at {invalid[0].pass_name}"
    notes = f", {len(bugs)} finding(s)" if bugs else ""
    attempt = "folded" if r.folded else "raw"
    return f"{shown(r.model)}: {len(r.seeds)} seeds ({attempt}), {verdict}{notes}"


@click.command("load")
@click.argument("target", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write seeds/<id>.py, seeds.jsonl, mismatch reproducers and load_report.json here.",
)
@click.option("--no-diff", is_flag=True, help="Skip the whole-model differential check against onnxruntime.")
@click.option("--no-fold", is_flag=True, help="Do not retry failed models after ONNX constant folding.")
@click.option(
    "--jobs",
    type=click.IntRange(min=1, max=1024),
    default=1,
    show_default=True,
    help="Models loaded in parallel (each in its own isolated process).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1, max=MAX_TIMEOUT),
    default=300.0,
    show_default=True,
    help="Seconds one loading attempt may take before it counts as a hang.",
)
@click.option(
    "--input-seed",
    type=click.IntRange(min=0, max=2**63 - 1),
    default=DEFAULT_INPUT_SEED,
    show_default=True,
    help="Seed of the random inputs of the differential check.",
)
@click.option(
    "--target",
    "build_target",
    default="llvm",
    show_default=True,
    help='TVM target of the differential build: a kind or a JSON dict such as \'{"kind": "llvm", "opt-level": 0}\'.',
)
@click.option("--quiet", is_flag=True, help="Print only the report, not one line per model.")
def load_cmd(
    target: Path,
    out: Path | None,
    no_diff: bool,
    no_fold: bool,
    jobs: int,
    timeout: float,
    input_seed: int,
    build_target: str,
    quiet: bool,
) -> None:
    """Load an ONNX model or a pool directory into TVM PrimFunc seeds, with load findings.

    Unreadable, altered or invalid ONNX files are errors: alone (or all of them) they end the
    command with exit status 2; among good models they are listed and the status is 1.
    """
    import math

    if math.isnan(timeout):
        raise UsageError(f"--timeout: must be a number of seconds between 1 and {MAX_TIMEOUT:g} (got nan)")
    check_target(build_target)
    listed = resolve_models(target)
    if out is not None:
        check_out(out, target)
    problems = [(path, model_problem(path, sha)) for path, sha in listed]
    bad = [(p, why) for p, why in problems if why is not None]
    if len(bad) == len(listed):
        if len(bad) == 1:
            raise ModelError(f"{bad[0][0]}: {bad[0][1]}")
        first = "; ".join(f"{shown(p.name)}: {why}" for p, why in bad[:2])
        more = f"; and {len(bad) - 2} more" if len(bad) > 2 else ""
        raise ModelError(f"{target}: none of its {len(bad)} models can be loaded ({first}{more})")
    for path, why in bad:
        echo(f"error: {shown(path)}: {why}", err=True)
    models = [p for p, why in problems if why is None]
    if out is not None:
        prepare(out)
    options = LoadOptions(
        differential=not no_diff, fold=not no_fold, timeout=timeout, input_seed=input_seed, target=build_target
    )
    console = SafeConsole()

    def progress(r: ModelLoad) -> None:
        if not quiet:
            console.print(_summary(r), highlight=False, markup=False)

    results = load_all(OnnxLoader(options), models, jobs=jobs, on_result=progress)
    report = build_report(results, differential=options.differential)
    render(report, console)
    if out is not None:
        unique = write_all(out, results, report)
        console.print(f"wrote {unique} unique seeds and load_report.json to {shown(out)}", highlight=False,
                      markup=False)
    if bad:
        echo(f"error: {shown(target)}: {len(bad)} of {len(listed)} models were not loaded "
                   "(unreadable or corrupt, listed above)", err=True)
        click.get_current_context().exit(1)
