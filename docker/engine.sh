# shellcheck shell=bash
# Sourced by docker/build.sh, docker/up.sh and scripts/docker_e2e.sh: finds (or installs and starts)
# a Docker engine, a client that builds with BuildKit, and a compose.
#
#   engine_pick_docker    sets DOCKER to a client whose `docker build` has BuildKit: one with the buildx
#                         plugin, or an engine's own client older than 23 (BuildKit built in). A newer
#                         client without buildx only has the legacy builder, which cannot build the
#                         Dockerfile (RUN --mount). $DOCKER, when set, is tried first.
#   engine_pick_compose   sets the array COMPOSE: `docker compose` (v2 plugin) or `docker-compose` (v1).
#   engine_ensure [DIR]   makes sure an engine answers: installs Debian's docker.io (and docker-compose
#                         when no compose is found) with apt-get if dockerd is missing, and starts dockerd
#                         when none runs (systemd's docker service when systemd runs, else dockerd in the
#                         background, its log and pid file in DIR). Sets ENGINE_STARTED_PID to the pid of a
#                         dockerd it started itself (empty otherwise), for engine_stop.
#   engine_stop           stops the dockerd that engine_ensure started (by its pid), if any.
# Functions return non-zero with one line on stderr when they cannot do their job.

ENGINE_STARTED_PID="${ENGINE_STARTED_PID:-}"

_engine_log() { printf 'engine: %s\n' "$*" >&2; }

_engine_sudo() {
    if [[ "$(id -u)" -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        _engine_log "need root or sudo for: $*"
        return 1
    fi
}

_engine_apt_install() {
    local log
    log="$(mktemp "${TMPDIR:-/tmp}/seedzer-apt.XXXXXX")"
    _engine_log "installing $* with apt-get"
    # No recommends: docker-compose would otherwise pull in another engine's worth of packages.
    if _engine_sudo apt-get update -qq >"$log" 2>&1 \
            && _engine_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
                >>"$log" 2>&1; then
        rm -f -- "$log"
        return 0
    fi
    tail -n 15 "$log" >&2
    rm -f -- "$log"
    _engine_log "apt-get install $* failed (above)"
    return 1
}

_engine_client_major() {
    local version
    version="$("$1" version --format '{{.Client.Version}}' 2>/dev/null || true)"
    version="${version%%.*}"
    [[ "$version" =~ ^[0-9]+$ ]] && echo "$version"
}

engine_pick_docker() {
    local candidate major
    local -a candidates=()
    [[ -n "${DOCKER:-}" ]] && candidates+=("$DOCKER")
    mapfile -t -O "${#candidates[@]}" candidates < <(type -ap docker)
    for candidate in "${candidates[@]}"; do
        if "$candidate" buildx version >/dev/null 2>&1; then
            DOCKER="$candidate"
            return 0
        fi
        major="$(_engine_client_major "$candidate")"
        if [[ -n "$major" && "$major" -lt 23 ]]; then
            DOCKER="$candidate"
            return 0
        fi
    done
    _engine_log "no docker client that builds with BuildKit (tried: ${candidates[*]:-none}); install the buildx plugin, or Debian's docker.io"
    return 1
}

# shellcheck disable=SC2034  # COMPOSE is for the scripts that source this file
engine_pick_compose() {
    if [[ -n "${DOCKER:-}" ]] && "$DOCKER" compose version >/dev/null 2>&1; then
        COMPOSE=("$DOCKER" compose)
    elif command -v docker-compose >/dev/null; then
        COMPOSE=(docker-compose)
    else
        _engine_log "no compose: neither '${DOCKER:-docker} compose' nor docker-compose"
        return 1
    fi
}

engine_ensure() {
    local dir="${1:-${TMPDIR:-/tmp}}" client="${DOCKER:-docker}" waited
    if command -v "$client" >/dev/null && "$client" info >/dev/null 2>&1; then
        return 0
    fi
    local -a missing=()
    command -v dockerd >/dev/null || missing+=(docker.io)
    if ! command -v docker-compose >/dev/null && ! { command -v docker >/dev/null && docker compose version >/dev/null 2>&1; }; then
        missing+=(docker-compose)
    fi
    if [[ ${#missing[@]} -gt 0 ]]; then
        _engine_apt_install "${missing[@]}" || { _engine_log "apt-get install ${missing[*]} failed"; return 1; }
    fi
    # Which client: the new packages may have brought one that builds with BuildKit.
    engine_pick_docker || return 1
    if "$DOCKER" info >/dev/null 2>&1; then
        return 0
    fi
    if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then
        _engine_log "starting the docker service (systemctl)"
        _engine_sudo systemctl start docker || { _engine_log "systemctl start docker failed"; return 1; }
    else
        [[ "$(id -u)" -eq 0 ]] || { _engine_log "dockerd must be started as root"; return 1; }
        mkdir -p -- "$dir"
        _engine_log "starting dockerd (log: $dir/dockerd.log)"
        # setsid: the daemon is not in this script's process group, so a Ctrl-C here leaves it to
        # engine_stop; its own containerd is its child and stops with it.
        setsid dockerd --pidfile "$dir/dockerd.pid" >"$dir/dockerd.log" 2>&1 </dev/null &
        ENGINE_STARTED_PID=$!
    fi
    for ((waited = 0; waited < 60; waited++)); do
        if "$DOCKER" info >/dev/null 2>&1; then
            # The daemon's own pid (in case setsid had to fork).
            if [[ -n "$ENGINE_STARTED_PID" && -s "$dir/dockerd.pid" ]]; then
                ENGINE_STARTED_PID="$(<"$dir/dockerd.pid")"
            fi
            return 0
        fi
        sleep 1
    done
    _engine_log "the engine did not answer within 60 s; last line of its log: $(tail -n 1 "$dir/dockerd.log" 2>/dev/null)"
    if [[ -s "$dir/dockerd.pid" ]]; then
        ENGINE_STARTED_PID="$(<"$dir/dockerd.pid")"
        engine_stop
    fi
    return 1
}

engine_stop() {
    local pid="$ENGINE_STARTED_PID" waited
    [[ -n "$pid" ]] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((waited = 0; waited < 60; waited++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 1
        done
        if kill -0 "$pid" 2>/dev/null; then
            _engine_log "dockerd ($pid) did not stop within 60 s: killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    ENGINE_STARTED_PID=""
}
