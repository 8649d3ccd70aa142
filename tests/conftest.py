"""Shared pytest set-up.

Under CI (``SEEDZER_CI=1``, set by ``.ci/run``) a skipped test is a test that does not exist: a
test skipped because a tool or module is missing (clang, gcc, chromium, playwright, the C
extension...) is reported as a failure instead, and a module skipped at collection time fails the
run. A test whose skip is expected in some environments and says nothing about a missing tool (e.g.
"the installed TVM is a sancov build") carries ``@pytest.mark.ci_may_skip``. Expected failures
(xfail) are unaffected.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CI = os.environ.get("SEEDZER_CI", "").strip() not in ("", "0")
_skipped_modules: list[str] = []


def _reason(longrepr: Any) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: why")
        return str(longrepr[2])
    return str(longrepr)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ci_may_skip: this test's skip is legitimate under CI (SEEDZER_CI=1): "
                                       "it depends on the environment, not on a missing tool")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if not CI or not report.skipped or hasattr(report, "wasxfail") or item.get_closest_marker("ci_may_skip"):
        return
    report.outcome = "failed"
    report.longrepr = (f"skipped under SEEDZER_CI=1 ({_reason(report.longrepr)}): CI must install what this test "
                       "needs (.ci/run); mark it ci_may_skip only if the skip is not about a missing tool")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if CI and report.skipped:
        _skipped_modules.append(f"{report.nodeid}: {_reason(report.longrepr)}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped_modules and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _skipped_modules:
        terminalreporter.section("modules skipped under SEEDZER_CI=1 (the run fails)", red=True)
        for line in _skipped_modules:
            terminalreporter.line(line)
