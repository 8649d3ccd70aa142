#!/usr/bin/env bash
# Self-test of the SanitizerCoverage set-up, in seconds instead of the ~50 minutes of a TVM build:
# builds libseedzer_sancov.so, a toy shared library instrumented with the same flags as TVM
# (cmake_flags.cmake) and linked the same way, loads both with ctypes and checks that calling into
# the toy library raises counters, that the pc table matches them, and that reset works.
# Usage: coverage/selftest_sancov.sh [CC]   (default: clang; any clang >= 6)
set -euo pipefail

cc="${1:-${CC:-clang}}"
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT

"$cc" -O2 -fPIC -shared -o "$work/libseedzer_sancov.so" "$here/sancov_callbacks.c"
cat >"$work/toy.c" <<'EOF'
int toy(int x) {
    if (x > 10) return x * 2;
    if (x < 0) return -x;
    return x + 1;
}
EOF
"$cc" -O1 -fPIC -shared -fsanitize-coverage=inline-8bit-counters,pc-table \
    -o "$work/libtoy.so" "$work/toy.c" \
    -L"$work" -Wl,--no-as-needed -lseedzer_sancov -Wl,--as-needed -Wl,-rpath,"$work"

python3 - "$work" <<'EOF'
import ctypes
import sys

work = sys.argv[1]
toy = ctypes.CDLL(f"{work}/libtoy.so")
cov = ctypes.CDLL(f"{work}/libseedzer_sancov.so")  # the same copy libtoy.so loaded
cov.seedzer_sancov_total.restype = ctypes.c_size_t
cov.seedzer_sancov_covered.restype = ctypes.c_size_t
cov.seedzer_sancov_pcs.restype = ctypes.c_size_t
assert cov.seedzer_sancov_modules() == 1, "the instrumented library did not register its counters"
total = cov.seedzer_sancov_total()
pcs = ctypes.POINTER(ctypes.c_size_t)()
assert cov.seedzer_sancov_pcs(0, ctypes.byref(pcs)) == total, "pc table and counters differ"
cov.seedzer_sancov_reset()
assert cov.seedzer_sancov_covered() == 0
toy.toy(1)
one = cov.seedzer_sancov_covered()
toy.toy(20)
toy.toy(-5)
three = cov.seedzer_sancov_covered()
assert 0 < one < three <= total, (one, three, total)
print(f"sancov self-test: ok ({total} counters, {one} after one path, {three} after three)")
EOF
