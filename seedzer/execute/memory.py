"""Memory figures from /proc, recorded with worker deaths (a SIGKILL is often the OOM killer), and
the address-space limit of the children that run models and test cases."""

from __future__ import annotations

import contextlib


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
