"""A tiny C shared library compiled with gcc for the breakpoints-backend tests (not a test module)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = r"""
#include <stdint.h>
int64_t classify(int64_t x) {
    if (x < 0) return -1;
    if (x == 0) return 0;
    if (x > 1000) return 2;
    return 1;
}
int64_t sum_to(int64_t n) {
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i % 3 == 0) s += i; else s -= 1;
    }
    return s;
}
int64_t pick(int64_t k) {
    switch (k) {
    case 0: return 11; case 1: return 23; case 2: return 37; case 3: return 41;
    case 4: return 53; case 5: return 67; default: return -7;
    }
}
"""
FUNCTIONS = ("classify", "sum_to", "pick")


def build_toylib(dest: Path, name: str = "libtoy.so") -> Path:
    """Compile SOURCE into ``dest/name`` (skips the test when gcc is missing)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    src = dest / "toy.c"
    src.write_text(SOURCE)
    lib = dest / name
    subprocess.run([gcc, "-O1", "-fPIC", "-shared", "-Wl,--build-id", "-o", str(lib), str(src)], check=True)
    return lib


def symbols(lib: Path) -> dict[str, int]:
    """Addresses of the toy functions, from ``nm``."""
    out = subprocess.run(["nm", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in FUNCTIONS:
            found[parts[2]] = int(parts[0], 16)
    return found
