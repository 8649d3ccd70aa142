"""``seedzer load MODEL.onnx|POOL_DIR``: load models into PrimFunc seeds and print the load report."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from seedzer.errors import ModelError, PoolError
from seedzer.load.loader import DEFAULT_INPUT_SEED, LoadOptions, ModelLoad, OnnxLoader, load_all, pool_models
from seedzer.load.output import prepare, write_all
from seedzer.load.report import build_report, render


def resolve_models(target: Path) -> list[Path]:
    """The model files named by ``target``: the file itself, or a pool directory's models."""
    if target.is_dir():
        models = pool_models(target)
        if not models:
            raise PoolError(f"pool directory {target} holds no *.onnx models")
        return models
    if not target.is_file():
        raise ModelError(f"model {target} does not exist")
    return [target]


def _summary(r: ModelLoad) -> str:
    bugs = [o for o in r.outcomes if o.symptom.is_bug]
    verdict = {True: "matched", False: "MISMATCH", None: "unchecked"}[r.matched]
    notes = f", {len(bugs)} finding(s)" if bugs else ""
    attempt = "folded" if r.folded else "raw"
    return f"{r.model}: {len(r.seeds)} seeds ({attempt}), {verdict}{notes}"


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
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Models loaded in parallel (each in its own isolated process).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Seconds one loading attempt may take before it counts as a hang.",
)
@click.option(
    "--input-seed",
    type=int,
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
    """Load an ONNX model or a pool directory into TVM PrimFunc seeds, with loader findings."""
    models = resolve_models(target)
    if out is not None:
        prepare(out)
    options = LoadOptions(
        differential=not no_diff, fold=not no_fold, timeout=timeout, input_seed=input_seed, target=build_target
    )
    console = Console()

    def progress(r: ModelLoad) -> None:
        if not quiet:
            console.print(_summary(r), highlight=False)

    results = load_all(OnnxLoader(options), models, jobs=jobs, on_result=progress)
    report = build_report(results, differential=options.differential)
    render(report, console)
    if out is not None:
        unique = write_all(out, results, report)
        console.print(f"wrote {unique} unique seeds and load_report.json to {out}", highlight=False)
