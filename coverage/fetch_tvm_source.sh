#!/usr/bin/env bash
# Download and unpack the Apache TVM source release, verifying its SHA-512.
# Usage: coverage/fetch_tvm_source.sh VERSION DEST_DIR
# The checksum is TVM_SRC_SHA512 when set (pin it), else the .sha512 file published next to the
# tarball. Runs at image build time only (the tvm-build stage of the Dockerfile), never at run time.
set -euo pipefail

version="${1:?usage: fetch_tvm_source.sh VERSION DEST_DIR}"
dest="${2:?usage: fetch_tvm_source.sh VERSION DEST_DIR}"
base="${TVM_SRC_BASE_URL:-https://archive.apache.org/dist/tvm}"
name="apache-tvm-src-v${version}.tar.gz"
url="${base}/tvm-v${version}/${name}"
work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT

curl -fsSL --retry 3 -o "$work/$name" "$url"
expected="${TVM_SRC_SHA512:-}"
if [[ -z "$expected" ]]; then
    curl -fsSL --retry 3 -o "$work/$name.sha512" "$url.sha512"
    # Either "HASH  FILE" (sha512sum) or "FILE: HASH IN GROUPS" over several lines (gpg --print-md).
    expected="$(sed -e "s/^.*${name}://" -e "s/${name}//" "$work/$name.sha512" | tr -d ' \n\r\t' | tr 'A-F' 'a-f')"
fi
actual="$(sha512sum "$work/$name" | cut -d' ' -f1)"
if [[ "$actual" != "$expected" ]]; then
    echo "fetch_tvm_source: SHA-512 mismatch for $url" >&2
    echo "  expected $expected" >&2
    echo "  actual   $actual" >&2
    exit 1
fi
echo "fetch_tvm_source: $name sha512 $actual"

mkdir -p -- "$dest"
tar -xzf "$work/$name" -C "$dest" --strip-components=1
for required in CMakeLists.txt pyproject.toml python/tvm/__init__.py; do
    if [[ ! -e "$dest/$required" ]]; then
        echo "fetch_tvm_source: $dest/$required missing: not a TVM source release?" >&2
        exit 1
    fi
done
