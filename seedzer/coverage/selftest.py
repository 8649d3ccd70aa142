"""``seedzer coverage selftest``: the same workload with and without breakpoints must agree (TVM-free).

Each side runs :mod:`seedzer.coverage.workload` in a fresh Python process; the digests of the
legalized IR and of the outputs of every model must be identical, and both processes must exit
cleanly. A difference means the instrumentation changed TVM's behaviour.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from seedzer.coverage.blocktable import load_or_build, tvm_compiler_library
from seedzer.coverage.bpcollector import extension


@dataclass
class SelftestResult:
    """Both runs' reports and the list of differences (empty when the self-test passed)."""

    plain: dict[str, Any]
    armed: dict[str, Any]
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the two runs agreed."""
        return not self.differences


def run_workload(extra: list[str], timeout: float = 900) -> dict[str, Any]:
    """Run the workload in a fresh process; its JSON report, or ``{"error": ...}`` when it failed."""
    cmd = [sys.executable, "-m", "seedzer.coverage.workload", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [""])[-1]
        return {"error": f"exit status {proc.returncode}: {tail}"}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def compare(plain: dict[str, Any], armed: dict[str, Any]) -> list[str]:
    """Differences between the run without and the run with breakpoints."""
    diffs = [f"{side}: {rep['error']}" for side, rep in (("without", plain), ("with", armed)) if "error" in rep]
    if diffs:
        return diffs
    for side, rep in (("without", plain), ("with", armed)):
        if rep.get("unstable"):
            diffs.append(f"{side} breakpoints: results differ between rounds")
    a, b = plain["results"], armed["results"]
    for model in sorted(a.keys() | b.keys()):
        for key in ("ir", "out"):
            if a.get(model, {}).get(key) != b.get(model, {}).get(key):
                diffs.append(f"{model}: {key} digest {a.get(model, {}).get(key)} != {b.get(model, {}).get(key)}")
    return diffs


def selftest(cache_dir: str, granularity: str, rounds: int = 2) -> SelftestResult:
    """Run the workload without and with breakpoints (block table built first, with progress)."""
    extension()
    load_or_build(tvm_compiler_library(), cache_dir, granularity, progress=True)
    common = ["--rounds", str(rounds), "--cache", cache_dir, "--granularity", granularity]
    plain = run_workload(common)
    armed = run_workload([*common, "--breakpoints"])
    return SelftestResult(plain, armed, compare(plain, armed))
