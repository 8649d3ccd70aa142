#!/usr/bin/env bash
# Entrypoint of the Seedzer images. Runs the command it is given (normally `seedzer ...`) after two
# expansions that docker compose replicas need, since every replica of a service shares one command:
#
#   {replica}   in any argument becomes this container's replica number N (1, 2, ...): the lowest N
#               whose lock file no running container holds. The lock file belongs to the first
#               argument containing {replica}: for `--out /data/x/trial-{replica}` it is
#               /data/x/.replicas/trial-N.lock. The lock is held (flock on fd 9, inherited by the
#               command) for as long as the command runs, so `docker compose up --scale fuzz=4` gives
#               four distinct campaign directories, and after a restart or a `down` then `up` each
#               replica takes a free number again and finds that campaign where it was left.
#   --resume    is added to `seedzer fuzz ... --out DIR` when DIR/campaign.db already exists, so a
#               restarted replica continues its campaign (`--minutes` is the total budget).
#
# `seedzer ... --ray HOST:PORT` (compose's `ray` profile) first joins this container to that Ray
# cluster as a node without CPUs (`ray start --address HOST:PORT --num-cpus=0`): a Ray driver must
# run on a node of its cluster, and the trials go to the nodes with CPUs.
#
# `entrypoint.sh --dry-run CMD...` prints the expanded command (arguments separated by NUL bytes)
# instead of running it; it takes no lock and uses replica number 1. The tests use it.
set -euo pipefail

MAX_REPLICAS=256
dry_run=0
if [[ "${1:-}" == "--dry-run" ]]; then
    dry_run=1
    shift
fi
if [[ $# -eq 0 ]]; then
    set -- seedzer --help
fi

# The first argument naming {replica} decides where the replica locks live.
template=""
for arg in "$@"; do
    if [[ "$arg" == *"{replica}"* ]]; then
        template="$arg"
        break
    fi
done

if [[ -n "$template" ]]; then
    replica=1
    if [[ $dry_run -eq 0 ]]; then
        # The lock name is the template's last path component; "--out=/x/y-{replica}" also works.
        path="${template#*=}"
        name="$(basename -- "$path")"
        if [[ "$name" != *"{replica}"* ]]; then
            echo "entrypoint: {replica} must be in the last path component: $template" >&2
            exit 2
        fi
        lock_dir="$(dirname -- "$path")/.replicas"
        mkdir -p -- "$lock_dir"
        replica=""
        for ((n = 1; n <= MAX_REPLICAS; n++)); do
            exec 9>"$lock_dir/${name//\{replica\}/$n}.lock"
            if flock --nonblock 9; then
                replica=$n
                break
            fi
            exec 9>&-
        done
        if [[ -z "$replica" ]]; then
            echo "entrypoint: no free replica number up to $MAX_REPLICAS for $template" >&2
            exit 2
        fi
        echo "entrypoint: replica $replica" >&2
    fi
    expanded=()
    for arg in "$@"; do
        expanded+=("${arg//\{replica\}/$replica}")
    done
    set -- "${expanded[@]}"
fi

# seedzer fuzz: continue an existing campaign instead of refusing to overwrite it.
if [[ "$(basename -- "$1")" == "seedzer" && "${2:-}" == "fuzz" ]]; then
    out=""
    resume=0
    prev=""
    for arg in "${@:3}"; do
        case "$arg" in
            --resume) resume=1 ;;
            --out=*) out="${arg#--out=}" ;;
            *) if [[ "$prev" == "--out" ]]; then out="$arg"; fi ;;
        esac
        prev="$arg"
    done
    if [[ $resume -eq 0 && -n "$out" && -f "$out/campaign.db" ]]; then
        echo "entrypoint: $out/campaign.db exists: resuming it" >&2
        set -- "$@" --resume
    fi
fi

if [[ $dry_run -eq 1 ]]; then
    printf '%s\0' "$@"
    exit 0
fi

# seedzer ... --ray HOST:PORT: join the cluster as a node without CPUs, unless this container is one.
if [[ "$(basename -- "$1")" == "seedzer" ]]; then
    ray_address=""
    prev=""
    for arg in "${@:2}"; do
        case "$arg" in
            --ray=*) ray_address="${arg#--ray=}" ;;
            *) if [[ "$prev" == "--ray" ]]; then ray_address="$arg"; fi ;;
        esac
        prev="$arg"
    done
    if [[ "$ray_address" == *:* ]] && command -v ray >/dev/null && ! ray status >/dev/null 2>&1; then
        echo "entrypoint: joining the Ray cluster at $ray_address as a node without CPUs" >&2
        ray start --address="$ray_address" --num-cpus=0 --disable-usage-stats >&2 \
            || echo "entrypoint: could not join the Ray cluster at $ray_address" >&2
    fi
fi
exec "$@"
