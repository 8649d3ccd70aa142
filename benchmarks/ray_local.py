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
import threading
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
ACTOR = "ray::NodeWorkerActor"
"""The command-line mark of a campaign's worker actor (Ray sets the process title)."""
RAY_WORKER = "default_worker.py"
"""The mark of Ray's other worker processes (idle ones Ray keeps started, before they become an actor)."""


def _processes() -> dict[int, tuple[int, str, float]]:
    """Every process now: pid -> (parent pid, command line, processor seconds used so far)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[int, str, float]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        out[int(proc.name)] = (int(fields[1]), args, (int(fields[11]) + int(fields[12])) / tick)
    return out


class CpuSampler:
    """Processor seconds of a campaign's processes by role, sampled from /proc every ``period`` seconds
    in a thread (a process's last sample counts, so one that exits between two loses at most a period).

    Roles: ``driver`` (the campaign's own process, ``root``), ``workers`` (the TVM processes forked
    below the driver or below an actor), ``actors`` (the worker actors themselves), ``ray workers``
    (Ray's other worker processes), ``daemons`` (Ray's own servers).
    """

    ROLES = ("driver", "workers", "actors", "ray workers", "daemons")

    def __init__(self, period: float = 1.0) -> None:
        self.period, self.root = period, 0
        self.seen: dict[int, tuple[str, float]] = {}
        self.base: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self, root: int) -> None:
        """Count from now (processes already running count only what they use from now on)."""
        self.root = root
        self.base = {pid: cpu for pid, (_, _, cpu) in _processes().items() if pid != root}
        self._thread.start()

    def stop(self) -> dict[str, float]:
        """Take a last sample and return the seconds per role."""
        self._stop.set()
        self._thread.join()
        self.sample()
        got = dict.fromkeys(self.ROLES, 0.0)
        for role, secs in self.seen.values():
            got[role] += secs
        return got

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.sample()

    def sample(self) -> None:
        """Record every process's use so far under its role."""
        procs = _processes()
        for pid, (_, _, cpu) in procs.items():
            role = self._role(pid, procs)
            if role is not None:
                self.seen[pid] = (role, cpu - self.base.get(pid, 0.0))

    def _role(self, pid: int, procs: dict[int, tuple[int, str, float]]) -> str | None:
        args = procs[pid][1]
        if pid == self.root:
            return "driver"
        if ACTOR in args:
            return "actors"
        if any(mark in args for mark in DAEMONS):
            return "daemons"
        if RAY_WORKER in args or args.startswith("ray::"):
            return "ray workers"
        parent, hops = procs[pid][0], 0
        while parent in procs and hops < 8:
            if parent == self.root or ACTOR in procs[parent][1]:
                return "workers"
            parent, hops = procs[parent][0], hops + 1
        return None


def nodes(address: str) -> int:
    """Alive nodes of the cluster at ``address`` (asked in a child, so this process stays Ray-free)."""
    code = (f"import ray; ray.init(address={address!r}, log_to_driver=False); "
            "print(sum(1 for n in ray.nodes() if n['Alive']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else 0
