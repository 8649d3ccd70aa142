"""Joining a Ray cluster is bounded (issue 45, row 1): an address that cannot be a cluster's is refused
in one line naming it, within a minute, and SIGTERM ends a connection attempt at any moment with the
campaign's lock released. The hostile addresses (a port out of range, an unknown host, a closed port,
a port that accepts TCP but speaks no Ray) are made in each test."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedzer.cli import main
from seedzer.errors import SeedzerError
from seedzer.execute.ray_cluster import Interrupted, probe, signals_interrupt, split_address
from seedzer.generate.seed_pool import PoolWriter
from seedzer.store.lock import is_locked
from tests.unit.generate.test_seed_pool import HEADER, tiny_model


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts TCP connections and never answers (no Ray behind it)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def tiny_pool(tmp_path: Path) -> Path:
    """A real seed pool of one small model (the checks before the connection read it)."""
    with PoolWriter(tmp_path / "pool", HEADER) as writer:
        writer.add_model(0, 0, tiny_model(1))
    return tmp_path / "pool"


@pytest.mark.parametrize(("address", "error"), [
    ("localhost:0", "port 0 is not a port"),
    ("localhost:70000", "port 70000 is not a port"),
    ("localhost", "not a cluster address"),
    (":6379", "not a cluster address"),
    ("host:port", "not a cluster address"),
])
def test_split_address_refuses_what_is_no_address(address: str, error: str) -> None:
    with pytest.raises(SeedzerError, match=f"^--ray {address}: {error}"):
        split_address(address)


def test_split_address_reads_the_forms_ray_takes() -> None:
    assert split_address("10.0.0.1:6379") == ("10.0.0.1", 6379)
    assert split_address("ray://head:10001") == ("head", 10001)
    assert split_address("[::1]:6379") == ("::1", 6379)


def test_probe_refuses_a_closed_port_at_once(closed_port: int) -> None:
    start = time.monotonic()
    with pytest.raises(SeedzerError, match=rf"^--ray 127.0.0.1:{closed_port}: no Ray cluster answers there"):
        probe(f"127.0.0.1:{closed_port}")
    assert time.monotonic() - start < 5


def test_probe_refuses_an_unknown_host() -> None:
    with pytest.raises(SeedzerError, match=r"^--ray no-such-host\.invalid:6379: (unknown host|the host .* did not)"):
        probe("no-such-host.invalid:6379", seconds=5)


def test_probe_passes_a_listening_port(silent_port: int) -> None:
    probe(f"127.0.0.1:{silent_port}")


@pytest.mark.usefixtures("restore_signals")
def test_signals_interrupt_turns_sigterm_into_one_line_and_restores_the_handler() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted, match=r"^--ray x:1: stopped by SIGTERM$"), signals_interrupt("--ray x:1"):
        signal.raise_signal(signal.SIGTERM)
        time.sleep(1)
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("address", ["999.1.1.1:1", "localhost:0"])
def test_fuzz_with_an_unreachable_address_ends_in_one_line(tiny_pool: Path, tmp_path: Path, address: str) -> None:
    """Before: Ray's client retried for ever and printed nothing of Seedzer's. After: one line, status 2."""
    start = time.monotonic()
    result = CliRunner().invoke(main, ["fuzz", "--pool", str(tiny_pool), "--out", str(tmp_path / "c"),
                                       "--minutes", "1", "--ray", address])
    assert time.monotonic() - start < 60
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --ray {address}: ")
    assert not is_locked(tmp_path / "c")


def test_join_that_never_completes_gives_up_at_its_limit(silent_port: int) -> None:
    """A port that accepts but is no Ray head: ``ray.init`` would wait for ever; the join gives up.
    Run in a child (Ray's stuck client thread stays behind in the process that tried)."""
    code = ("from seedzer.execute.ray_cluster import connect\n"
            f"connect('127.0.0.1:{silent_port}', seconds=3)\n")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert time.monotonic() - start < 30
    assert done.returncode == 1
    assert f"--ray 127.0.0.1:{silent_port}: the port answers but no Ray cluster joined within 3 s" in done.stderr


@pytest.mark.parametrize("after", [0.0, 0.5, 4.0])
def test_sigterm_while_joining_ends_the_campaign_and_frees_its_lock(tiny_pool: Path, tmp_path: Path,
                                                                    silent_port: int, after: float) -> None:
    """Before: SIGTERM did nothing while Ray's client retried (only SIGKILL ended it). After: it ends
    within 10 s with one line, and the campaign directory's lock is free."""
    out = tmp_path / "c"
    proc = subprocess.Popen([sys.executable, "-m", "seedzer.cli", "fuzz", "--pool", str(tiny_pool), "--out", str(out),
                             "--minutes", "1", "--ray", f"127.0.0.1:{silent_port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not is_locked(out) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)  # the campaign holds its lock from before the connection
    assert is_locked(out)
    time.sleep(after)
    proc.send_signal(signal.SIGTERM)
    start = time.monotonic()
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - start < 10
    assert proc.returncode == 2
    assert err.strip().splitlines()[-1] == f"error: --ray 127.0.0.1:{silent_port}: stopped by SIGTERM"
    assert not is_locked(out)


def test_auto_is_the_local_cluster_and_is_not_probed() -> None:
    """``--ray auto`` (Ray's own word for the cluster `ray start` made here) still reaches ray.init, which
    finds none here; run in a child (this process's Ray stays untouched)."""
    code = "from seedzer.execute.ray_cluster import connect\nconnect('auto')\n"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1
    assert "SeedzerError: --ray: cannot connect to a local cluster: Could not find any running Ray instance" \
        in done.stderr


def test_disconnect_without_a_finished_import_of_ray_leaves_ray_unimported() -> None:
    """A SIGTERM can stop ``import ray`` half-way (the campaign's signal handler is armed from its lock on);
    the clean-up then must not import Ray again (its half-made submodules would fail with a traceback).
    Run in a child: this process may have imported Ray already."""
    code = ("import sys\nfrom seedzer.execute.ray_cluster import disconnect\ndisconnect()\n"
            "assert 'ray' not in sys.modules, 'disconnect imported ray'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
