"""What a campaign's configuration asks of its workers: the checks the enabled oracles need, the
memory a test case may use, and each stage's time limit."""

from __future__ import annotations

from seedzer.config import Config, OracleConfig
from seedzer.config import stage_limits as config_stage_limits
from seedzer.execute.settings import ExecSettings
from seedzer.kernel.common import Stage
from seedzer.load.bounds import DEFAULT_MAX_TESTCASE_MEMORY


def exec_settings(oracles: OracleConfig, coverage: str, max_memory: int = DEFAULT_MAX_TESTCASE_MEMORY) -> ExecSettings:
    """What workers must check for the enabled oracles (costly checks only when asked for), and the
    address space a worker's test cases may use (``max_memory`` bytes, 0: unbounded).

    The ``passes`` features describe how each step changed the IR only when ``passes`` is the
    coverage that decides what is kept (that detail triples the cost of a build).
    """
    on = set(oracles.enabled)
    return ExecSettings(rtol=oracles.rtol, atol=oracles.atol, compare="mismatch" in on, pipeline="mismatch" in on,
                        illformed="illformed" in on, pipeline_illformed=oracles.verifier_issues,
                        perf_rate=oracles.perf_rate if "perf" in on else 0.0,
                        perf_factor=oracles.perf_factor, perf_repeats=oracles.perf_repeats,
                        detailed_build_coverage=coverage == "passes", max_memory=max_memory)


def stage_limits(cfg: Config) -> dict[Stage, float]:
    """The configured time limit of every stage."""
    return {Stage(name): limit for name, limit in config_stage_limits(cfg.timeouts).items()}
