"""Connecting to a Ray cluster (the optional ``seedzer[ray]`` extra), shared by experiments and campaigns.

Ray is imported here and only when a command asks for it (``--ray``): without the extra nothing in
Seedzer imports it. ``address`` is what the user gave: ``None`` lets Ray find a cluster started on
this machine with ``ray start`` (or ``RAY_ADDRESS``) and otherwise start a private one bound to
127.0.0.1; ``host:port`` joins that cluster.

Joining a cluster is bounded: Ray's own client retries an address that does not answer forever, and
while it waits inside its C++ client no signal handler of the process runs. So an address is first
checked (a port 1-65535, a host that resolves, a GCS port that accepts a TCP connection, each within
:data:`PROBE_SECONDS`), then ``ray.init`` runs in a helper thread while the main thread waits at most
:data:`CONNECT_SECONDS`, free to take SIGINT and SIGTERM (:func:`signals_interrupt` turns them into
:class:`Interrupted`). Either failure is one line naming the address.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType, ModuleType

from seedzer.errors import SeedzerError

RAY_HINT = "install the extra: pip install 'seedzer[ray]' (ray==2.58.0)"
LOOPBACK = "127.0.0.1"
PROBE_SECONDS = 10.0
"""Longest wait for an address's host to resolve, and again for its port to accept a connection."""
CONNECT_SECONDS = 40.0
"""Longest wait for ``ray.init`` to join a cluster whose port answered (Ray's client itself retries
without end); with the probe, an address that never answers is refused within a minute."""
CLIENT_SCHEME = "ray://"
LOCAL_ADDRESSES = (None, "local", "auto")
"""Addresses Ray resolves on this machine (a cluster ``ray start`` made here, or a new one): no probe."""


class Interrupted(SeedzerError):
    """SIGINT or SIGTERM arrived while Seedzer waited to join a cluster (the message names the address)."""


def import_ray() -> ModuleType:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise SeedzerError(f"--ray: Ray is not installed ({exc}); {RAY_HINT}") from None
    return ray


@dataclass(frozen=True)
class ClusterInfo:
    """What a connection found: the address, the nodes alive and their CPUs."""

    address: str
    nodes: int
    cpus: float

    def describe(self) -> str:
        """One line for the user, e.g. ``ray 127.0.0.1:6379: 2 nodes, 4 CPUs``."""
        return f"ray {self.address}: {self.nodes} node(s), {self.cpus:g} CPU(s)"


def split_address(address: str) -> tuple[str, int]:
    """``(host, port)`` of ``host:port`` (or ``ray://host:port``, ``[v6]:port``); a one-line error
    naming the address when it is not one."""
    rest = address.removeprefix(CLIENT_SCHEME)
    host, sep, port_text = rest.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port_text.isdigit():
        raise SeedzerError(f"--ray {address}: not a cluster address (expected HOST:PORT, e.g. 10.0.0.1:6379)")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise SeedzerError(f"--ray {address}: port {port} is not a port (1-65535)")
    return host, port


def _bounded(call: Callable[[], object], seconds: float, name: str) -> tuple[bool, object, BaseException | None]:
    """Run ``call`` in a daemon thread and wait at most ``seconds`` in this one (signal handlers run
    meanwhile): ``(finished, its result, its exception)``. A call still running is left behind."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + seconds
    while thread.is_alive() and time.monotonic() < deadline:
        thread.join(0.1)
    if thread.is_alive():
        return False, None, None
    error = box.get("error")
    return True, box.get("result"), error if isinstance(error, BaseException) else None


def probe(address: str, seconds: float = PROBE_SECONDS) -> None:
    """Check that ``address`` can be a running cluster's: its port in range, its host resolving and its
    port accepting a TCP connection, each within ``seconds``; else a one-line error naming it."""
    host, port = split_address(address)
    done, found, error = _bounded(lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM), seconds,
                                  "seedzer-ray-resolve")
    if not done:
        raise SeedzerError(f"--ray {address}: the host {host} did not resolve within {seconds:g} s")
    if error is not None or not isinstance(found, list) or not found:
        raise SeedzerError(f"--ray {address}: unknown host {host} ({error or 'no address'})")
    reasons = []
    for family, socktype, proto, _, where in found:
        try:
            with socket.socket(family, socktype, proto) as sock:
                sock.settimeout(seconds)
                sock.connect(where)
                return
        except OSError as exc:
            reasons.append(exc.strerror or type(exc).__name__)
    raise SeedzerError(f"--ray {address}: no Ray cluster answers there ({reasons[0] if reasons else 'unreachable'}); "
                       "start one with `ray start --head` or check the address")


def described(address: str | None) -> str:
    """How messages name the cluster at ``address``: the address itself, or "a local cluster"."""
    return "a local cluster" if address in LOCAL_ADDRESSES else str(address)


@contextlib.contextmanager
def signals_interrupt(what: str) -> Iterator[None]:
    """While the block runs (in the main thread), SIGINT and SIGTERM raise :class:`Interrupted` naming
    ``what``; the previous handlers come back afterwards. Elsewhere than the main thread: no change."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(f"{what}: stopped by {signal.Signals(signum).name}")

    old = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def connect(address: str | None = None, *, num_cpus: int | None = None, private: bool = False,
            seconds: float = CONNECT_SECONDS) -> ClusterInfo:
    """Join the cluster at ``address`` (``None``: a local one, found or started; ``private``: always a new
    one of this process's own, never a cluster ``ray start`` left running here, as tests need;
    ``num_cpus`` applies only to one started here). Connecting twice in one process reuses the first
    connection. An address is probed first and joined within ``seconds`` (see the module docstring)."""
    ray = import_ray()
    if not ray.is_initialized():
        kwargs: dict[str, object] = {"include_dashboard": False, "log_to_driver": False,
                                     "configure_logging": False}
        if address is None:
            kwargs.update(_node_ip_address=LOOPBACK)
            if num_cpus is not None:
                kwargs["num_cpus"] = num_cpus
            if private:
                address = "local"
        where = described(address)
        with signals_interrupt(f"--ray {where}"):
            if address in LOCAL_ADDRESSES:
                _init(ray, address, kwargs, where)
            else:
                assert address is not None
                probe(address)
                _join(ray, address, kwargs, seconds)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = float(sum(n.get("Resources", {}).get("CPU", 0.0) for n in nodes))
    ctx = ray.get_runtime_context()
    gcs = getattr(ctx, "gcs_address", None) or address or "local"
    return ClusterInfo(str(gcs), len(nodes), cpus)


def _init(ray: ModuleType, address: str | None, kwargs: dict[str, object], where: str) -> None:
    """``ray.init`` here, its failure one line naming ``where``."""
    try:
        ray.init(address=address, **kwargs)
    except Exception as exc:  # Ray raises plain Exception too ("node timed out during startup")
        raise _failed(where, exc) from None


class _NotMainThread(logging.Filter):
    """Drops Ray's warning that ``ray.init`` outside the main thread installs no SIGTERM handler (the
    main thread keeps Seedzer's own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for that warning."""
        return "not the main thread" not in record.getMessage()


def _join(ray: ModuleType, address: str, kwargs: dict[str, object], seconds: float) -> None:
    """``ray.init(address)`` in a helper thread, waited for at most ``seconds`` (module docstring)."""
    logging.getLogger("ray._private.worker").addFilter(_NotMainThread())
    done, _, error = _bounded(lambda: ray.init(address=address, **kwargs), seconds, "seedzer-ray-connect")
    if not done:
        raise SeedzerError(f"--ray {address}: the port answers but no Ray cluster joined within {seconds:g} s "
                           "(is it a Ray head's GCS port, e.g. 6379?)")
    if error is not None:
        raise _failed(address, error) from None


def _failed(where: str, exc: BaseException) -> SeedzerError:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return SeedzerError(f"--ray: cannot connect to {where}: {text}")


def disconnect() -> None:
    """Leave the cluster (a private local one is shut down with it). Without a finished ``import ray``
    (none asked for, or a signal stopped it half-way, which leaves its submodules unusable) there is no
    connection to leave, and Ray is not imported again."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
