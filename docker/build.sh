#!/usr/bin/env bash
# Builds a Seedzer image with BuildKit, on an online machine or on one that reaches no image
# registry, with the build arguments and secret that machine needs (Dockerfile, top comment):
#
#   base image   $PYTHON_IMAGE, else docker/base-image.sh: the official Python image when a registry
#                answers, else a Debian bookworm image built from Debian's packages
#   pip          pip's own settings on this machine (its PIP_* environment, then `pip config list`):
#                `cert` becomes the BuildKit secret pip_cert, an http(s) `index-url` PIP_INDEX_URL
#   torch        $TORCH_INDEX_URL when set (empty: docker/wheels/ only); else the PyTorch CPU index
#                when it answers, else the torch wheel found in pip's `find-links` directories,
#                hard-linked (or copied) into docker/wheels/ for the build to mount
#
# Starts the engine first when none answers (docker/engine.sh: installs Debian's docker.io if
# needed). Layers the engine already has are reused. Prints the image's name on the last line.
#
# Usage: docker/build.sh [--target runtime|tvm-cov] [--tag NAME] [docker build options...]
# Environment: PYTHON_IMAGE, TORCH_INDEX_URL, DOCKER (the client), BUILD_PROGRESS (auto|plain).
set -euo pipefail

cd "$(dirname -- "${BASH_SOURCE[0]}")/.."
# shellcheck source=docker/engine.sh
source docker/engine.sh

target=runtime
tag=""
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --target) target="$2"; shift 2 ;;
        --target=*) target="${1#*=}"; shift ;;
        --tag) tag="$2"; shift 2 ;;
        --tag=*) tag="${1#*=}"; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) extra+=("$1"); shift ;;
    esac
done

log() { printf 'build: %s\n' "$*" >&2; }

# The image names the compose files use.
case "$target" in
    runtime) compose_file=docker-compose.yml ;;
    tvm-cov) compose_file=docker-compose.sancov.yml ;;
    *) log "--target must be runtime or tvm-cov, not $target"; exit 2 ;;
esac
if [[ -z "$tag" ]]; then
    tag="$(sed -n 's/^  image: *//p' "$compose_file" | head -n 1)"
fi

# A default of the Dockerfile (ARG NAME=value), so that it is written in one place.
dockerfile_default() { sed -n "s/^ARG $1=//p" Dockerfile | head -n 1; }

# One of pip's settings as pip itself sees it: PIP_<NAME> first, then its configuration files.
pip_setting() {
    local name="$1" var
    var="PIP_${name^^}"
    var="${var//-/_}"
    if [[ -n "${!var:-}" ]]; then
        printf '%s\n' "${!var}"
        return
    fi
    python3 -m pip config list 2>/dev/null \
        | sed -n "s/^\(global\|install\)\.$name='\(.*\)'\$/\2/p" | tail -n 1 || true
}

# An index the build's containers can use: http(s) and not this machine's loopback.
usable_url() {
    [[ "$1" =~ ^https?:// ]] && ! [[ "$1" =~ ^https?://(localhost|127\.|\[::1\]) ]]
}

engine_pick_docker 2>/dev/null || true
engine_ensure "${TMPDIR:-/tmp}/seedzer-dockerd" || exit 1
engine_pick_docker || exit 1
export DOCKER

args=(--target "$target" -t "$tag")

python_image="${PYTHON_IMAGE:-}"
if [[ -z "$python_image" ]]; then
    python_image="$(docker/base-image.sh | tail -n 1)"
fi
args+=(--build-arg "PYTHON_IMAGE=$python_image")

cert="$(pip_setting cert)"
if [[ -n "$cert" && -f "$cert" ]]; then
    log "pip's CA bundle: $cert (BuildKit secret pip_cert)"
    args+=(--secret "id=pip_cert,src=$cert")
fi

index_url="$(pip_setting index-url)"
if [[ -n "$index_url" ]]; then
    if usable_url "$index_url"; then
        log "pip's index: $index_url"
        args+=(--build-arg "PIP_INDEX_URL=$index_url")
    else
        log "pip's index $index_url cannot serve a container: the Dockerfile's default is used"
    fi
fi

# torch: its index, or a wheel of pip's find-links directories in docker/wheels/.
torch_version="${TORCH_VERSION:-$(dockerfile_default TORCH_VERSION)}"
args+=(--build-arg "TORCH_VERSION=$torch_version")
clean_wheels() { find -L docker/wheels -maxdepth 1 -name '*.whl' -delete; }
clean_wheels
trap clean_wheels EXIT
stage_torch_wheel() {
    local links entry dir wheel arch
    arch="$(uname -m)"
    links="$(pip_setting find-links)"
    for entry in $links; do
        dir="${entry#file://}"
        [[ -d "$dir" ]] || continue
        for wheel in "$dir"/torch-"$torch_version"[+-]*-cp311-cp311-*linux*_"$arch".whl; do
            [[ -f "$wheel" ]] || continue
            ln -f -- "$wheel" docker/wheels/ 2>/dev/null || cp -f -- "$wheel" docker/wheels/
            log "torch: $(basename -- "$wheel") from pip's find-links directory $dir (in docker/wheels/)"
            return 0
        done
    done
    return 1
}
if [[ -n "${TORCH_INDEX_URL+set}" ]]; then
    args+=(--build-arg "TORCH_INDEX_URL=$TORCH_INDEX_URL")
    [[ -n "$TORCH_INDEX_URL" ]] || stage_torch_wheel || log "torch: docker/wheels/ holds no torch-$torch_version wheel; pip's index must provide a CPU build"
else
    torch_index="$(dockerfile_default TORCH_INDEX_URL)"
    if curl -fsS --max-time 20 ${cert:+--cacert "$cert"} -o /dev/null "${torch_index%/}/torch/" 2>/dev/null; then
        log "torch: $torch_index"
    elif stage_torch_wheel; then
        args+=(--build-arg "TORCH_INDEX_URL=")
    else
        log "torch: $torch_index does not answer and pip's find-links holds no torch-$torch_version wheel for cp311 $(uname -m)"
        exit 1
    fi
fi

log "DOCKER_BUILDKIT=1 $DOCKER build ${args[*]} ${extra[*]} ."
start=$SECONDS
DOCKER_BUILDKIT=1 "$DOCKER" build --progress="${BUILD_PROGRESS:-auto}" "${args[@]}" "${extra[@]}" .
size="$("$DOCKER" image inspect -f '{{.Size}}' "$tag")"
log "built $tag in $((SECONDS - start)) s ($((size / 1000000)) MB)"
echo "$tag"
