"""A short real campaign with the breakpoints backend: coverage rises, both totals land in snapshots,
new-coverage test cases are kept, and --resume neither loses nor re-reports blocks; plus the self-test."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
pytest.importorskip("seedzer.coverage._bpcov", reason="C extension not built (no compiler)")


def seedzer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "seedzer.cli", *args], capture_output=True, text=True, timeout=600)


def rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_breakpoints_campaign_rises_keeps_and_resumes(tiny_pool: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "bp.yaml"
    cfg.write_text("fuzz:\n  coverage: breakpoints\n  snapshot_period: 1\noracles:\n  enabled: [crash, hang]\n")
    out = tmp_path / "camp"
    db = out / "campaign.db"
    budget = 0.4
    r = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(out), "--minutes", str(budget), "--config", str(cfg),
                "--monitor", "quiet")
    assert r.returncode == 0, r.stderr[-2000:]
    # the budget is wall time: on a busy machine (a campaign beside the tests) loading may take most of it, so the
    # campaign resumes with more until fuzzed test cases were kept (at most 3 minutes; one round when idle)
    while budget < 3.0 and not rows(db, "SELECT 1 FROM corpus WHERE mutators NOT LIKE '%initial%' LIMIT 1"):
        budget += 0.4
        r = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(out), "--minutes", str(budget), "--config",
                    str(cfg), "--monitor", "quiet", "--resume")
        assert r.returncode == 0, r.stderr[-2000:]
    snaps = rows(db, "SELECT execs, coverage, coverage_backend, coverage_detail FROM snapshots ORDER BY id")
    covs = [c for _, c, _, _ in snaps]
    assert all(b == "breakpoints" for _, _, b, _ in snaps)
    assert covs == sorted(covs) and covs[-1] > covs[0] and covs[-1] > 10_000  # rises over time
    last = json.loads(snaps[-1][3])
    assert last["breakpoints"] == covs[-1] and last["passes"] > 0
    assert last["breakpoints_tvm"] > 0 and last["breakpoints_llvm"] > 0
    assert last["breakpoints_tvm"] + last["breakpoints_llvm"] == last["breakpoints"]
    feats = [f for (f,) in rows(db, "SELECT feature FROM coverage_features WHERE feature LIKE 'bp:%'")]
    assert len(feats) == covs[-1] and len(set(feats)) == len(feats)
    kept = rows(db, "SELECT coverage_gain FROM corpus WHERE mutators NOT LIKE '%initial%'")
    assert kept and all(g > 0 for (g,) in kept)  # fuzzed test cases are kept only for new blocks

    r = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(out), "--minutes", str(budget + 0.2), "--config",
                str(cfg), "--monitor", "quiet", "--resume")
    assert r.returncode == 0, r.stderr[-2000:]
    after = rows(db, "SELECT coverage, coverage_detail FROM snapshots ORDER BY id")[len(snaps):]
    assert after[0][0] == covs[-1]  # restored exactly
    assert [c for c, _ in after] == sorted(c for c, _ in after)
    feats2 = [f for (f,) in rows(db, "SELECT feature FROM coverage_features WHERE feature LIKE 'bp:%'")]
    assert len(feats2) == after[-1][0]
    hitmap = (out / "coverage.hitmap").read_bytes()
    assert hitmap.count(1) >= len(feats2)  # known blocks were marked before the workers started


@pytest.mark.slow
def test_selftest_verb_passes() -> None:
    r = seedzer("coverage", "selftest", "--rounds", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "selftest ok: 3 models" in r.stdout
