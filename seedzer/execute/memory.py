"""Memory figures from /proc, recorded with worker deaths (a SIGKILL is often the OOM killer)."""

from __future__ import annotations


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
