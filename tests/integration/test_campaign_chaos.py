"""Workers under chaos (issue 13): a real campaign survives 100 worker kills in 10 minutes, then its own
SIGKILL, and resumes to use its whole budget with every finding and corpus entry on disk; (issue 45)
so does a graph-only campaign, with no entry quarantined and campaign.db's integrity check ok; (issue
55) load attempts SIGKILLed while the pool loads lose no model: the resume loads them.

It drives ``benchmarks/chaos.py`` (the same code the benchmark runs) on a pool made by
``seedzer generate --heuristic basic --count 6``, with the default coverage backend.
"""

from __future__ import annotations

import importlib.util
import signal
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BUDGET_MINUTES = 12.0
CHAOS_SECONDS = 600.0
EVERY_SECONDS = 6.0  # 100 kills in 10 minutes


def chaos_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("seedzer_chaos_benchmark", ROOT / "benchmarks" / "chaos.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(int(BUDGET_MINUTES * 60 + 1800))
@pytest.mark.parametrize("levels", [None, "graph"])
def test_hundred_worker_kills_then_campaign_kill_then_resume(tmp_path: Path, levels: str | None) -> None:
    chaos = chaos_module()
    pool = chaos.make_pool(tmp_path / "pool", count=6, heuristic="basic")
    lines: list[str] = []
    report = chaos.run_chaos(pool, tmp_path / "campaign", BUDGET_MINUTES, CHAOS_SECONDS, EVERY_SECONDS,
                             logs=tmp_path / "logs", say=lines.append, levels=levels)
    chaos.print_report(report, say=lines.append)
    summary = "\n".join(lines)

    assert report.kills >= 95, summary  # a kill is skipped only while no worker is recorded alive
    assert report.runs[0].role == "chaos" and not report.runs[0].stopped_by_itself, summary
    assert report.runs[0].returncode == -signal.SIGKILL, summary  # it was still running when killed
    assert report.resumes >= 1 and all(r.returncode == 0 for r in report.runs[1:]), summary
    assert report.elapsed >= report.budget - 1.0, summary  # the whole budget, no early "finishing"
    # every kill is a worker_killed event with memory figures, never a crash finding
    assert report.worker_killed >= report.kills, summary
    assert report.killed_with_memory == report.worker_killed, summary
    assert not report.crash_sigkill and not report.crash_near_kill, summary
    # nothing lost: every row has its files
    assert report.corpus > 0 and not report.missing_corpus, summary
    assert not report.missing_findings, summary
    assert report.integrity == "ok" and not report.quarantined, summary
    assert report.load_kills >= 1 and not report.models_lost, summary  # every pool model loaded in the end
    if levels == "graph":
        assert set(report.levels) == {"graph"}, summary
    assert not report.problems(), summary
