"""The report's "Mutations and oracles" section: mutants run and bugs by mutation, bugs by oracle, per arm.

Trials are small fake campaign.db files (the real CampaignDB) with mutator counts and findings whose
meta.json carries the mutations and the oracle, as a campaign writes them; the figures must follow
``seedzer status``'s rule (bugs only, one per root cause, counted under its first finding).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest
from rich.table import Table

from seedzer.campaign.breakdown import RootOrigin, mutation_table, oracle_table, origins
from seedzer.finding.meta import BUG, NOT_A_BUG, PENDING, FindingMeta
from seedzer.kernel.common import Observation, Symptom
from seedzer.report.build import build_report
from seedzer.report.mutations import BUG_COLUMNS, MUTATION_COLUMNS, ORACLE_COLUMNS, mutations_by_arm, oracles_by_arm
from seedzer.report.table import build_tables
from seedzer.store.db import CampaignDB, FindingRow
from tests.fixtures.report.synth import WALL0, make_experiment, make_trial

GRAPH, TIR = "basic@tir+graph", "basic@tir"


@dataclass
class Bug:
    """A finding of a fake trial: its signature, kind, symptom, verdict, root, mutations and oracle."""

    sig: str
    kind: str
    symptom: str
    verdict: str = BUG
    root: str | None = None
    mutators: list[str] = field(default_factory=list)
    comparison: str | None = None


def _trial(trial_dir: Path, counts: dict[tuple[str, str], int] | None, finds: list[Bug]) -> None:
    """A finished trial with ``counts`` in mutator_summary (None: a campaign.db without that table) and
    ``finds`` in the findings table and their folders, in order of first sighting."""
    make_trial(trial_dir, [0, 5, 9])
    db = CampaignDB(trial_dir / "campaign.db")
    if counts is None:
        db.conn.execute("DROP TABLE mutator_summary")
        db.conn.commit()
    else:
        db.add_mutator_counts(counts)
    for i, f in enumerate(finds):
        folder = trial_dir / "findings" / f.sig
        folder.mkdir(parents=True)
        obs = Observation(Symptom(f.symptom), message="boom", comparison=f.comparison)
        root = (f.root or f.sig) if f.verdict == BUG else None
        meta = FindingMeta(f.sig, f.kind, obs, verdict=f.verdict, root_signature=root, mutators=f.mutators)
        (folder / "meta.json").write_text(json.dumps(meta.to_json()))
        db.upsert_finding(FindingRow(f.sig, f.symptom, "pass", "P", "boom", WALL0 + i, WALL0 + i, 1, "new",
                                     str(folder), kind=f.kind, verdict=f.verdict, root=root))
    db.close()


def _experiment(root: Path) -> Path:
    """Two arms: the graph arm (two trials, the same root in both), the TIR arm (one trial from before
    the mutation counters)."""
    exp = root / "mx"
    r1 = "aaaaaaaaaaa1"
    _trial(exp / GRAPH / "trial-1",
           {("model_uoc", "ok"): 10, ("model_uoc", "invalid"): 2, ("relax_insert", "ok"): 5, ("flip", "ok"): 7},
           [Bug(r1, "graph", "mismatch", mutators=["model_uoc", "relax_insert"], comparison="mutant-vs-seed"),
            Bug("aaaaaaaaaaa2", "graph", "mismatch", root=r1, mutators=["flip"], comparison="model-vs-onnxruntime"),
            Bug("aaaaaaaaaaa3", "lowlevel", "crash", mutators=["flip"]),
            Bug("aaaaaaaaaaa4", "graph", "exception", verdict=PENDING, mutators=["model_uoc"]),
            Bug("aaaaaaaaaaa5", "graph", "exception", verdict=NOT_A_BUG, mutators=["model_edge"])])
    _trial(exp / GRAPH / "trial-2", {("model_uoc", "ok"): 20, ("model_edge", "ok"): 4},
           [Bug("bbbbbbbbbbb1", "graph", "mismatch", root=r1, mutators=["model_uoc"], comparison="mutant-vs-seed"),
            Bug("bbbbbbbbbbb2", "loader", "exception")])
    _trial(exp / TIR / "trial-1", {("flip", "ok"): 3, ("loop_kind", "invalid"): 1},
           [Bug("ccccccccccc1", "lowlevel", "mismatch", mutators=["loop_kind"], comparison="reference-vs-minimal")])
    _trial(exp / TIR / "trial-2", None, [Bug("ccccccccccc2", "lowlevel", "exception", mutators=["flip"])])
    return exp


def _records(df: pd.DataFrame) -> list[tuple[object, ...]]:
    return [tuple(r) for r in df.itertuples(index=False)]


def test_mutants_and_bugs_by_mutation_per_arm(tmp_path: Path) -> None:
    t = build_tables(_experiment(tmp_path))
    arms = mutations_by_arm(t.mutants, t.bugs)
    assert list(arms.columns) == MUTATION_COLUMNS
    # (arm, mutation, trials with counts, median mutants, total mutants, bugs); by the level that makes them
    assert _records(arms) == [
        (TIR, "flip", 1, 3.0, 3, 1),  # its bug from the trial without counters still counts
        (TIR, "loop_kind", 1, 1.0, 1, 1),
        (GRAPH, "flip", 2, 3.5, 7, 1),  # r1's later finding (flip) does not count, the TIR crash does
        (GRAPH, "model_edge", 2, 2.0, 4, 0),  # its only finding is not a bug
        (GRAPH, "model_uoc", 2, 16.0, 32, 1),  # every symptom counts; r1 made in both trials is one bug
        (GRAPH, "relax_insert", 2, 2.5, 5, 1),
    ]


def test_bugs_by_oracle_per_arm(tmp_path: Path) -> None:
    t = build_tables(_experiment(tmp_path))
    oracles = oracles_by_arm(t.bugs)
    assert list(oracles.columns) == ORACLE_COLUMNS
    assert _records(oracles) == [
        (TIR, "tir", "exception", 1), (TIR, "tir", "reference-vs-minimal", 1),
        (GRAPH, "graph", "mutant-vs-seed", 1),  # r1 by its first finding, not its model-vs-onnxruntime one
        (GRAPH, "load", "exception", 1), (GRAPH, "tir", "crash", 1),
    ]


def test_trial_tables_hold_bugs_only_one_per_root(tmp_path: Path) -> None:
    t = build_tables(_experiment(tmp_path))
    g1 = t.bugs[(t.bugs["heuristic"] == GRAPH) & (t.bugs["trial"] == 1)]
    assert _records(g1[["root", "level", "oracle", "mutations"]]) == [
        ("aaaaaaaaaaa1", "graph", "mutant-vs-seed", ("model_uoc", "relax_insert")),
        ("aaaaaaaaaaa3", "tir", "crash", ("flip",))]
    assert set(t.mutants.loc[t.mutants["heuristic"] == TIR, "trial"]) == {1}  # trial 2 has no mutator_summary


def test_the_report_page_and_csvs(tmp_path: Path) -> None:
    result = build_report(_experiment(tmp_path), tmp_path / "out")
    page = result.html.read_text()
    assert page.index("<h2>Levels</h2>") < page.index("<h2>Mutations and oracles</h2>")
    assert "<td class=l>relax_insert</td>" in page and "<td class=l>mutant-vs-seed</td>" in page
    mutations = pd.read_csv(result.out / "mutations.csv")
    oracles = pd.read_csv(result.out / "oracles.csv")
    assert result.mutations is not None and result.oracles is not None
    assert _records(mutations) == _records(result.mutations) and len(mutations) == 6
    assert _records(oracles) == _records(result.oracles) and len(oracles) == 5
    assert {result.out / "mutations.csv", result.out / "oracles.csv"} <= set(result.files)


def test_an_experiment_without_mutation_counts_or_bugs_keeps_the_section(tmp_path: Path) -> None:
    result = build_report(make_experiment(tmp_path), tmp_path / "out")
    page = result.html.read_text()
    assert "<h2>Mutations and oracles</h2>" in page
    assert result.mutations is not None and result.mutations.empty
    assert result.oracles is not None and result.oracles.empty
    assert list(pd.read_csv(result.out / "mutations.csv").columns) == MUTATION_COLUMNS


def test_several_experiments_keep_arms_apart(tmp_path: Path) -> None:
    _trial(tmp_path / "e1" / "basic" / "trial-1", {("flip", "ok"): 2}, [])
    _trial(tmp_path / "e2" / "basic" / "trial-1", {("flip", "ok"): 5}, [])
    arms = mutations_by_arm(build_tables(tmp_path).mutants, pd.DataFrame(columns=BUG_COLUMNS))
    assert _records(arms) == [("e1:basic", "flip", 1, 2.0, 2, 0), ("e2:basic", "flip", 1, 5.0, 5, 0)]


@dataclass
class _Line:
    kind: str
    mutators: list[str]
    comparison: str
    symptom: str


def test_status_and_report_share_the_origin_of_a_root() -> None:
    bugs = {"r": [_Line("graph", ["model_pioc", "relax_swap"], "", "exception"), _Line("graph", ["flip"], "x", "m")],
            "s": [_Line("lowlevel", [], "opt-vs-reference", "mismatch")]}
    assert origins(bugs) == {"r": RootOrigin("graph", "exception", frozenset({"model_pioc", "relax_swap"})),
                             "s": RootOrigin("tir", "opt-vs-reference", frozenset())}
    by_mutation = {row[0]: row[1:] for row in _rows(mutation_table(bugs, {"flip": 3, "model_pioc": 2}))}
    assert by_mutation == {"model_pioc": ("graph", "2", "1"), "relax_swap": ("graph", "0", "1"),
                           "flip": ("tir", "3", "0")}
    assert list(by_mutation) == ["flip", "model_pioc", "relax_swap"]  # by the level that makes them
    assert _rows(oracle_table(bugs)) == [("graph", "exception", "1"), ("tir", "opt-vs-reference", "1")]


def _rows(table: Table) -> list[tuple[str, ...]]:
    """A rich table's cells, row by row."""
    cols = [list(c.cells) for c in table.columns]
    return [tuple(str(col[i]) for col in cols) for i in range(len(cols[0]))] if cols else []


@pytest.mark.parametrize("counts", [None, {}])
def test_a_trial_without_counts_contributes_no_mutants(tmp_path: Path,
                                                       counts: dict[tuple[str, str], int] | None) -> None:
    _trial(tmp_path / "e" / "h" / "trial-1", counts, [Bug("ddddddddddd1", "lowlevel", "crash", mutators=["flip"])])
    t = build_tables(tmp_path / "e")
    assert t.mutants.empty
    assert _records(mutations_by_arm(t.mutants, t.bugs)) == [("h", "flip", 0, 0.0, 0, 1)]
