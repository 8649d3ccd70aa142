#!/usr/bin/env bash
# From a fresh clone to a running compose campaign, on an online machine or on one that reaches no
# image registry (docs/docker.md):
#   1. starts the engine, installing Debian's docker.io and docker-compose when they are missing
#   2. builds the runtime image (docker/build.sh: the base image, offline when no registry answers;
#      pip's CA bundle and index; torch from its index or pip's find-links directory)
#   3. `compose up -d --no-build`: generate fills the pool, two fuzz replicas run their campaigns,
#      report keeps the HTML current, all in the background; results stay on the volumes.
# Arguments go to `compose up`, e.g. `docker/up.sh --scale fuzz=4`. Running it again resumes the
# campaigns (layers and volumes are reused). Then: docker/compose.sh ps | logs -f fuzz | down.
set -euo pipefail

cd "$(dirname -- "${BASH_SOURCE[0]}")/.."
docker/build.sh >/dev/null
exec docker/compose.sh up -d --no-build "$@"
