"""A local Ray cluster of two nodes on this machine, for the Ray benchmarks (issue 31's figures).

``ray start --head --node-ip-address 127.0.0.1 --port P --num-cpus C`` plus a second
``ray start --address 127.0.0.1:P --node-ip-address 127.0.0.1 --num-cpus C``: two raylets, one
machine. Stopping uses ``ray stop``, which stops every Ray process of this user on the machine:
run the benchmarks where no other Ray cluster is needed. The log monitors are left out (they forward
workers' logs to a driver: about 1% of a core each). (Ray 2.58 advertises 127.0.0.1 but its servers
still listen on every interface; there is no setting to change that.)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


def _ray(*args: str) -> None:
    subprocess.run([RAY, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                   env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})


@contextlib.contextmanager
def two_nodes(port: int = 6391, cpus_per_node: int = 1) -> Iterator[str]:
    """Start a head and a worker node on loopback; yield the head's address; stop both."""
    address = f"127.0.0.1:{port}"
    try:
        _ray("start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus",
             str(cpus_per_node), "--include-dashboard=false", "--include-log-monitor=false", "--disable-usage-stats")
        _ray("start", "--address", address, "--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus_per_node),
             "--include-log-monitor=false", "--disable-usage-stats")
        time.sleep(2.0)
        yield address
    finally:
        subprocess.run([RAY, "stop", "--force"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


DAEMONS = ("gcs_server", "raylet", "log_monitor", "dashboard", "autoscaler", "RuntimeEnvAgent", "DashboardAgent")
"""Command-line marks of Ray's own processes (the fixed cost of a node, whatever runs on it)."""


def cpu_seconds() -> dict[str, float]:
    """Processor seconds used so far by Ray's own processes (``daemons``) and by the campaign's worker
    actors (``actors``: the actor processes themselves, not the TVM workers they fork), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    got = {"daemons": 0.0, "actors": 0.0}
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        secs = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        if "ray::WorkerActor" in args:
            got["actors"] += secs
        elif any(mark in args for mark in DAEMONS):
            got["daemons"] += secs
    return got


def nodes(address: str) -> int:
    """Alive nodes of the cluster at ``address`` (asked in a child, so this process stays Ray-free)."""
    code = (f"import ray; ray.init(address={address!r}, log_to_driver=False); "
            "print(sum(1 for n in ray.nodes() if n['Alive']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else 0
