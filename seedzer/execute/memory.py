"""Memory figures from /proc, recorded with worker deaths (a SIGKILL is often the OOM killer), the
kernel's count of processes its OOM killer took (the evidence that a SIGKILL was for memory), and the
address-space limit of the children that run models and test cases."""

from __future__ import annotations

import contextlib
from pathlib import Path


def _field_kb(path: str, name: str) -> float | None:
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(name + ":"):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def peak_rss_mb(pid: int) -> float | None:
    """The peak resident size of process ``pid`` in MiB (None when it is gone)."""
    kb = _field_kb(f"/proc/{pid}/status", "VmHWM")
    return None if kb is None else kb / 1024.0


def available_mb() -> float | None:
    """The machine's available memory in MiB."""
    kb = _field_kb("/proc/meminfo", "MemAvailable")
    return None if kb is None else kb / 1024.0


def _oom_kill_field(path: Path) -> int | None:
    """The ``oom_kill`` line of a kernel counter file (``memory.events``, ``memory.oom_control``,
    ``/proc/vmstat``), None when the file or the line is missing."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        return None
    return None


def _own_cgroup() -> str:
    """This process's cgroup path (the v2 line of /proc/self/cgroup, else the v1 memory controller's)."""
    found = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            found[controllers] = path
    return found.get("") or found.get("memory") or "/"


def oom_kill_files() -> list[Path]:
    """Where the kernel counts its OOM kills, narrowest first: this process's cgroup (v2
    ``memory.events``, v1 ``memory.oom_control``, also as a container sees its own at the root), then
    the machine (``/proc/vmstat``, Linux 4.13 and later)."""
    own = _own_cgroup().strip("/")
    root = Path("/sys/fs/cgroup")
    candidates = [root / own / "memory.events", root / "memory" / own / "memory.oom_control",
                  root / "memory.events", root / "memory" / "memory.oom_control", Path("/proc/vmstat")]
    return list(dict.fromkeys(candidates))


def oom_kills(files: list[Path] | None = None) -> int | None:
    """The count of processes the kernel's OOM killer has taken, from the narrowest file of ``files``
    (default :func:`oom_kill_files`) that says; None when none does (dmesg, the other witness, is not
    readable unprivileged). Only its growth means something: a SIGKILL while it grew may be the OOM
    killer's, one while it stayed put was not."""
    for path in files if files is not None else oom_kill_files():
        count = _oom_kill_field(path)
        if count is not None:
            return count
    return None


def limit_address_space(nbytes: int) -> None:
    """Bound this process's address space (RLIMIT_AS) to ``nbytes`` (0: leave it); never raises it
    above an existing hard limit. An allocation past it fails (MemoryError, std::bad_alloc) instead
    of swapping the machine or calling the OOM killer. RLIMIT_AS rather than RLIMIT_DATA: TVM's
    and numpy's large buffers are mmap'ed, which RLIMIT_DATA did not count before Linux 4.7."""
    import resource

    if nbytes <= 0:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = nbytes if hard == resource.RLIM_INFINITY else min(nbytes, hard)
    if soft == resource.RLIM_INFINITY or want < soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))


def out_of_memory_message(exc: BaseException, limit: int) -> str:
    """One line for an allocation that failed under the address-space limit, with its figures."""
    bound = f"limits.max_testcase_memory {limit / 2**30:.1f} GiB" if limit > 0 else "no address-space limit"
    text = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return f"out of memory ({type(exc).__name__}: {text}) under {bound}: the input's size, not a TVM bug"
