"""Mutants run and bugs (root causes) by kind of mutation, and bugs by oracle, per arm.

The figures ``seedzer status`` shows for one campaign (:mod:`seedzer.campaign.breakdown`), over an
arm's trials: a trial's mutants come from campaign.db's ``mutator_summary`` (summed over symptoms; a
campaign.db without that table, from before it, records none), its bugs from the findings the filing
gate judged bugs (:func:`seedzer.campaign.summary.findings_view`), one per root cause, each counted
under its first finding's mutations and oracle (:func:`seedzer.campaign.breakdown.origins`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from seedzer.campaign.breakdown import mutants_by_mutation, mutation_levels, mutation_order, origins
from seedzer.campaign.summary import findings_view
from seedzer.store.reader import CampaignReader

MUTANT_COLUMNS = ["experiment", "heuristic", "trial", "mutation", "mutants"]
"""One trial's mutants run (every symptom) by one mutation."""
BUG_COLUMNS = ["experiment", "heuristic", "trial", "root", "level", "oracle", "mutations"]
"""One trial's bug (root cause) with its first finding's level, oracle and mutations (a sorted tuple)."""
MUTATION_COLUMNS = ["heuristic", "mutation", "trials", "median_mutants", "total_mutants", "bugs"]
ORACLE_COLUMNS = ["heuristic", "level", "oracle", "bugs"]


def read_trial_mutations(ident: dict[str, Any], trial_dir: Path,
                         reader: CampaignReader) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One trial's rows of :data:`MUTANT_COLUMNS` and :data:`BUG_COLUMNS`, read from its open campaign.db
    and its finding folders."""
    mutants = pd.DataFrame([{**ident, "mutation": m, "mutants": n} for m, n in mutants_by_mutation(reader).items()],
                           columns=MUTANT_COLUMNS)
    bugs = pd.DataFrame([{**ident, "root": root, "level": o.level, "oracle": o.oracle,
                          "mutations": tuple(sorted(o.mutations))}
                         for root, o in origins(findings_view(trial_dir, reader).bugs).items()], columns=BUG_COLUMNS)
    return mutants, bugs


def mutations_by_arm(mutants: pd.DataFrame, bugs: pd.DataFrame) -> pd.DataFrame:
    """Per arm (``heuristic``) and mutation (by the level that makes it, as ``status`` orders them): the arm's
    trials that recorded mutants, the median and total mutants run over them (a trial that did not run
    the mutation counts 0), and the distinct bugs (roots) whose first finding, in any of the arm's
    trials, the mutation made. A mutation that made a bug but has no recorded mutants shows 0."""
    made = bugs[["heuristic", "root", "mutations"]].explode("mutations").dropna(subset=["mutations"])
    rows = []
    made_by = mutation_levels()
    for arm in sorted(set(mutants["heuristic"]) | set(made["heuristic"])):
        mine = mutants[mutants["heuristic"] == arm]
        trials = mine["trial"].unique()
        found = made[made["heuristic"] == arm].groupby("mutations")["root"].nunique()
        for name in sorted(set(mine["mutation"]) | set(found.index), key=lambda n: mutation_order(n, made_by)):
            per_trial = mine[mine["mutation"] == name].groupby("trial")["mutants"].sum()
            per_trial = per_trial.reindex(trials, fill_value=0)
            rows.append({"heuristic": arm, "mutation": name, "trials": len(trials),
                         "median_mutants": float(per_trial.median()) if len(trials) else 0.0,
                         "total_mutants": int(per_trial.sum()), "bugs": int(found.get(name, 0))})
    return pd.DataFrame(rows, columns=MUTATION_COLUMNS)


def oracles_by_arm(bugs: pd.DataFrame) -> pd.DataFrame:
    """Per arm, level and oracle (a mismatch's comparison, ``mutant-vs-seed`` being the metamorphic one;
    any other symptom by itself): the distinct bugs (roots) whose first finding, in any of the arm's
    trials, it was."""
    if bugs.empty:
        return pd.DataFrame(columns=ORACLE_COLUMNS)
    counts = bugs.groupby(["heuristic", "level", "oracle"])["root"].nunique().rename("bugs").reset_index()
    return counts[ORACLE_COLUMNS].sort_values(["heuristic", "level", "oracle"], ignore_index=True)
