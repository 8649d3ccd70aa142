"""``seedzer coverage export|diff|union``: coverage sets of campaigns and trials, without TVM.

Each SOURCE is a campaign directory, a directory of campaigns (an experiment's
``<results>/<experiment>/<pool>/``: the union of its trials), a quoted glob over those, or a file
written by ``export``/``union``/``diff -o``.
"""

from __future__ import annotations

from pathlib import Path

import click

from seedzer.console import echo, echo_lines
from seedzer.coverage.sets import CoverageSetError, check_output, compare, read_source, render, union, write_set
from seedzer.coverage.tracker import PREFIXES

BACKENDS = sorted({"passes", *PREFIXES})
_backend = click.option("--backend", type=click.Choice(BACKENDS), default=None,
                        help="Keep only this backend's features (default: all).")
_format = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
                       help="Output format (default: json for a .json file name, else text).")


@click.command("export")
@click.argument("source")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="Write here (default: print to standard output).")
@_backend
@_format
def export_cmd(source: str, out: Path | None, backend: str | None, fmt: str | None) -> None:
    """Write the coverage set of a campaign (or of several trials) as a stable sorted file.

    Example: seedzer coverage export campaigns/b1 -o b1.cov --backend sancov
    """
    if out is not None:
        check_output(out, [source])
    cov = read_source(source).only(backend)
    if out is None:
        echo_lines(render(cov, fmt or "text", backend).splitlines())
        return
    write_set(cov, out, fmt, backend)
    echo(f"{out}: {len(cov.features)} features from {len(cov.sources)} source(s)", err=True)


@click.command("diff")
@click.argument("a")
@click.argument("b")
@_backend
@click.option("--only-a", type=click.Path(path_type=Path), default=None, help="Write the features of A not in B.")
@click.option("--only-b", type=click.Path(path_type=Path), default=None, help="Write the features of B not in A.")
@_format
def diff_cmd(a: str, b: str, backend: str | None, only_a: Path | None, only_b: Path | None,
             fmt: str | None) -> None:
    """Compare two coverage sets: |A|, |B|, |A&B|, |A-B|, |B-A|.

    A and B are each the union of their campaigns, so comparing two heuristics of an experiment
    shows which blocks one reached in any trial that the other reached in none.

    Example: seedzer coverage diff experiments/results/quick/conv3 experiments/results/quick/basic
    """
    for option, path in (("--only-a", only_a), ("--only-b", only_b)):
        if path is not None:
            check_output(path, [a, b], option)
    if only_a is not None and only_b is not None and only_a.resolve() == only_b.resolve():
        raise CoverageSetError(f"--only-a {only_a}: is also --only-b; the two differences need two files")
    set_a, set_b = read_source(a).only(backend), read_source(b).only(backend)
    echo(f"A = {a} ({len(set_a.sources)} source(s))")
    echo(f"B = {b} ({len(set_b.sources)} source(s))")
    for line in compare(set_a, set_b).lines():
        echo(line)
    for path, side in ((only_a, set_a - set_b), (only_b, set_b - set_a)):
        if path is not None:
            write_set(side, path, fmt, backend)
            echo(f"{path}: {len(side.features)} features", err=True)


@click.command("union")
@click.argument("sources", nargs=-1, required=True)
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True, help="File to write.")
@_backend
@_format
def union_cmd(sources: tuple[str, ...], out: Path, backend: str | None, fmt: str | None) -> None:
    """Write the union of several coverage sets (campaigns, trial directories, globs or files).

    Example: seedzer coverage union 'experiments/results/quick/conv3/trial-*' -o conv3.cov
    """
    check_output(out, sources)
    cov = union(sources).only(backend)
    write_set(cov, out, fmt, backend)
    echo(f"{out}: {len(cov.features)} features from {len(cov.sources)} source(s)", err=True)


SET_COMMANDS = (export_cmd, diff_cmd, union_cmd)
"""The verbs this module adds to the ``coverage`` group."""
