"""Replay a finished campaign's graph corpus entries in one worker, with and without a graph worker's
build caches, and check that the caches change nothing but the processor time.

Usage::

    python benchmarks/graph_replay.py CAMPAIGN [--cases 120] [--rounds 1]

Each entry (oldest first, as the campaign kept them) runs as a graph test case in a
:class:`~seedzer.levels.graph.fuzzer.GraphFuzzer`, as a worker runs it: imports, TVM's default
outputs and equal modules' builds are remembered across the cases of one run in both modes. The
mode ``plain`` leaves ``tirx.build`` and ``target.build.llvm`` to TVM; ``folds`` installs the worker's
:class:`~seedzer.levels.graph.fold_builds.FoldBuilds`; ``cached`` that and its
:class:`~seedzer.levels.graph.codegen_reuse.CodegenReuse` (as a worker runs). A case that kills
its process (a real crash the campaign kept in its corpus) is skipped: the run goes on after it in a
fresh child, in every mode alike. Printed: per mode the processor seconds of the cases (their own
clock), the builds reused, and whether every case gave the same observation, coverage features,
passes ran and passes triggered in every mode as in ``plain`` (any difference is listed). Figures
are printed, never asserted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import click

MODES = ("plain", "folds", "cached")
"""``plain``: TVM's own ``tirx.build`` and code generation; ``folds``: the worker's cache of
FoldConstant's builds; ``cached``: that and its cache of LLVM's code (a worker's caches)."""


def corpus_entries(campaign: Path, limit: int) -> list[tuple[str, str]]:
    """The first ``limit`` graph entries of a campaign (their script text and pass sequence)."""
    conn = sqlite3.connect(f"file:{campaign / 'campaign.db'}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT path, passes FROM corpus WHERE level = 'graph' ORDER BY added_time").fetchall()
    finally:
        conn.close()
    return [((campaign / path).read_text(), passes) for path, passes in rows[:limit]]


def _serve(entries: list[tuple[str, str]], start: int, mode: str, fd: int) -> None:
    """In a forked child: run the entries from ``start`` on, one JSON line per case on ``fd``."""
    from seedzer.levels.graph.fuzzer import GraphFuzzer

    fuzzer = GraphFuzzer(lambda stage, step, program: None, None)
    if mode in ("folds", "cached"):
        fuzzer.folds.install()
    if mode == "cached":
        fuzzer.codegen.install()
    with os.fdopen(fd, "w", buffering=1) as out:
        for index in range(start, len(entries)):
            script, passes = entries[index]
            case = fuzzer.case(script, passes)
            began = time.process_time()
            result = fuzzer.execute(case, passes)
            seconds = time.process_time() - began
            obs = result.observation
            out.write(json.dumps({"index": index, "cpu": seconds, "folds": fuzzer.folds.hits,
                                  "builds": fuzzer.memo.reused, "codegen": fuzzer.codegen.hits,
                                  "result": [obs.symptom.value, str(obs.stage), obs.pass_name, obs.message,
                                             sorted(result.features), result.passes_ran,
                                             result.passes_triggered]}) + "\n")
    os._exit(0)


def replay(entries: list[tuple[str, str]], mode: str) -> dict[str, Any]:
    """Every entry run in ``mode``: results by index, processor seconds, reuse counts, crashed indices."""
    import tvm  # noqa: F401 - imported once, before the children fork

    results: dict[int, Any] = {}
    cpu, folds, builds, codegen, crashed, start = 0.0, 0, 0, 0, [], 0
    while start < len(entries):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _serve(entries, start, mode, write)
        os.close(write)
        last, base = start - 1, (folds, builds, codegen)
        with os.fdopen(read) as lines:
            for line in lines:
                row = json.loads(line)
                results[row["index"]] = row["result"]
                cpu += row["cpu"]
                folds, builds = base[0] + row["folds"], base[1] + row["builds"]
                codegen = base[2] + row["codegen"]
                last = row["index"]
        os.waitpid(pid, 0)
        if last + 1 < len(entries):
            crashed.append(last + 1)
        start = last + 2
    return {"results": results, "cpu": cpu, "folds": folds, "builds": builds, "codegen": codegen, "crashed": crashed}


@click.command()
@click.argument("campaign", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--cases", type=int, default=120, show_default=True, help="Graph corpus entries replayed.")
@click.option("--rounds", type=int, default=1, show_default=True, help="Alternated rounds of the modes.")
def main(campaign: Path, cases: int, rounds: int) -> None:
    """Replay CAMPAIGN's graph corpus entries with and without a graph worker's build caches."""
    entries = corpus_entries(campaign, cases)
    if not entries:
        raise click.ClickException(f"{campaign}: no graph corpus entries")
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for _ in range(rounds):
        for mode in MODES:
            runs[mode].append(replay(entries, mode))
            got = runs[mode][-1]
            done = len(got["results"])
            click.echo(f"{mode:>6}: {done} cases, {got['cpu']:.1f} s of processor ({1000 * got['cpu'] / done:.0f} ms "
                       f"per case), FoldConstant builds reused {got['folds']}, LLVM code reused {got['codegen']}, "
                       f"builds reused {got['builds']}, crashed {got['crashed'] or 'none'}")
    plain = runs["plain"][0]["results"]
    for mode in MODES[1:]:
        ratios = [c["cpu"] / p["cpu"] for p, c in zip(runs["plain"], runs[mode], strict=True) if p["cpu"] > 0]
        differ = sorted(i for i in plain if plain[i] != runs[mode][0]["results"].get(i))
        listed = f" ({differ[:20]})" if differ else ""
        click.echo(f"{mode}: processor time {mode}/plain {', '.join(f'{r:.3f}' for r in ratios)}; "
                   f"cases with a result other than plain's: {len(differ)} of {len(plain)}{listed}")

if __name__ == "__main__":
    main()
