#!/usr/bin/env bash
# Runs this machine's compose on the repository's compose file: `docker compose` (the v2 plugin) when
# the client has it, else Debian's `docker-compose` (v1); starts the engine first when none answers
# (docker/engine.sh). Examples:
#   docker/compose.sh ps                  docker/compose.sh logs -f fuzz
#   docker/compose.sh down                (the volumes stay; `down -v` deletes pools and results)
# Environment: DOCKER (the client), the SEEDZER_* variables of the compose file.
set -euo pipefail

cd "$(dirname -- "${BASH_SOURCE[0]}")/.."
# shellcheck source=docker/engine.sh
source docker/engine.sh
engine_pick_docker 2>/dev/null || true
engine_ensure "${TMPDIR:-/tmp}/seedzer-dockerd"
engine_pick_docker 2>/dev/null || true
if ! engine_pick_compose 2>/dev/null; then
    _engine_apt_install docker-compose
    engine_pick_compose
fi
exec "${COMPOSE[@]}" "$@"
