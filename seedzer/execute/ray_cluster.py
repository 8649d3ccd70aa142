"""Connecting to a Ray cluster (the optional ``seedzer[ray]`` extra), shared by experiments and campaigns.

Ray is imported here and only when a command asks for it (``--ray``): without the extra nothing in
Seedzer imports it. ``address`` is what the user gave: ``None`` lets Ray find a cluster started on
this machine with ``ray start`` (or ``RAY_ADDRESS``) and otherwise start a private one bound to
127.0.0.1; ``host:port`` joins that cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from seedzer.errors import SeedzerError

RAY_HINT = "install the extra: pip install 'seedzer[ray]' (ray==2.58.0)"
LOOPBACK = "127.0.0.1"


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


def connect(address: str | None = None, *, num_cpus: int | None = None, private: bool = False) -> ClusterInfo:
    """Join the cluster at ``address`` (``None``: a local one, found or started; ``private``: always a new
    one of this process's own, never a cluster ``ray start`` left running here, as tests need;
    ``num_cpus`` applies only to one started here). Connecting twice in one process reuses the first
    connection."""
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
        try:
            ray.init(address=address, **kwargs)
        except Exception as exc:  # Ray raises plain Exception too ("node timed out during startup")
            where = "a local cluster" if address in (None, "local") else address
            raise SeedzerError(f"--ray: cannot connect to {where}: {str(exc).splitlines()[0] if str(exc) else exc}") \
                from None
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = float(sum(n.get("Resources", {}).get("CPU", 0.0) for n in nodes))
    ctx = ray.get_runtime_context()
    gcs = getattr(ctx, "gcs_address", None) or address or "local"
    return ClusterInfo(str(gcs), len(nodes), cpus)


def disconnect() -> None:
    """Leave the cluster (a private local one is shut down with it)."""
    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown()
