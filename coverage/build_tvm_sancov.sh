#!/usr/bin/env bash
# Build an apache-tvm wheel from TVM's release source with clang and SanitizerCoverage
# (-fsanitize-coverage=inline-8bit-counters,pc-table on TVM's own objects; cmake_flags.cmake).
# About 50 minutes on 2 cores. Used by the Dockerfile's tvm-build stage; runs as well without Docker
# on Debian bookworm with: clang-16 llvm-16-dev cmake ninja-build make zlib1g-dev libzstd-dev
# libtinfo-dev libxml2-dev, python3 with pip, and PyPI reachable (pip fetches scikit-build-core).
#
# Usage: coverage/build_tvm_sancov.sh TVM_SOURCE_DIR WHEEL_DIR
# Environment (defaults in brackets):
#   CC, CXX                [clang-16, clang++-16]
#   LLVM_CONFIG            [llvm-config-16]
#   SEEDZER_SANCOV_LIBDIR  [/opt/seedzer-sancov/lib]  where libseedzer_sancov.so is installed;
#                          TVM's libraries carry an rpath to it, so it must stay there at run time
#   TVM_WHEEL_VERSION      [0.27.0.post1+sancov]  satisfies seedzer's apache-tvm==0.27.0.post1 pin
set -euo pipefail

src="${1:?usage: build_tvm_sancov.sh TVM_SOURCE_DIR WHEEL_DIR}"
wheels="${2:?usage: build_tvm_sancov.sh TVM_SOURCE_DIR WHEEL_DIR}"
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
export CC="${CC:-clang-16}" CXX="${CXX:-clang++-16}" LLVM_CONFIG="${LLVM_CONFIG:-llvm-config-16}"
export SEEDZER_SANCOV_LIBDIR="${SEEDZER_SANCOV_LIBDIR:-/opt/seedzer-sancov/lib}"
version="${TVM_WHEEL_VERSION:-0.27.0.post1+sancov}"

for tool in "$CC" "$CXX" "$LLVM_CONFIG" cmake ninja python3 readelf; do
    command -v "$tool" >/dev/null || { echo "build_tvm_sancov: $tool not found" >&2; exit 1; }
done
[[ -f "$src/pyproject.toml" && -f "$src/CMakeLists.txt" ]] || {
    echo "build_tvm_sancov: $src is not a TVM source tree" >&2
    exit 1
}

echo "== sancov callbacks -> $SEEDZER_SANCOV_LIBDIR"
mkdir -p -- "$SEEDZER_SANCOV_LIBDIR" "$wheels"
"$CC" -O2 -fPIC -shared -o "$SEEDZER_SANCOV_LIBDIR/libseedzer_sancov.so" "$here/sancov_callbacks.c"
"$here/selftest_sancov.sh" "$CC"

echo "== TVM wheel $version (scikit-build-core; LLVM: $("$LLVM_CONFIG" --version))"
# The source release has no .git: setuptools_scm takes the version from here.
export SETUPTOOLS_SCM_PRETEND_VERSION="$version"
export SKBUILD_CMAKE_ARGS="-C;$here/cmake_flags.cmake"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
# The CPU-only choices are also given as config settings: they override any cmake.define of TVM's
# own pyproject.toml (the PyPI wheel is built with CUDA), where the -C cache entries would not.
defines=()
for define in "USE_LLVM=$LLVM_CONFIG" USE_CUDA=OFF USE_NCCL=OFF USE_NVTX=OFF USE_CUTLASS=OFF; do
    defines+=("--config-settings=cmake.define.$define")
done
python3 -m pip wheel --no-cache-dir --no-deps --verbose "${defines[@]}" --wheel-dir "$wheels" "$src"

echo "== checking the wheel"
wheel="$(find "$wheels" -maxdepth 1 -name "apache_tvm-${version//+/?}-*.whl" -print -quit)"
[[ -n "$wheel" ]] || { echo "build_tvm_sancov: no apache_tvm-$version wheel in $wheels" >&2; exit 1; }
unpacked="$(mktemp -d)"
trap 'rm -rf -- "$unpacked"' EXIT
python3 -m zipfile -e "$wheel" "$unpacked"
for lib in libtvm_compiler.so libtvm_runtime.so; do
    path="$(find "$unpacked" -name "$lib" -print -quit)"
    [[ -n "$path" ]] || { echo "build_tvm_sancov: $lib missing from $wheel" >&2; exit 1; }
    readelf -SW "$path" | grep -q __sancov_cntrs || {
        echo "build_tvm_sancov: $lib has no __sancov_cntrs section: not instrumented" >&2
        exit 1
    }
    readelf -dW "$path" | grep -q 'libseedzer_sancov.so' || {
        echo "build_tvm_sancov: $lib is not linked against libseedzer_sancov.so" >&2
        exit 1
    }
done
echo "build_tvm_sancov: $wheel is instrumented"
