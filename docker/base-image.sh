#!/usr/bin/env bash
# The base image of the Seedzer images (the Dockerfile's build argument PYTHON_IMAGE): prints its
# name on the last line of stdout, everything else goes to stderr.
#
#   online   the official Python image the Dockerfile names by default (ARG PYTHON_IMAGE), pulled
#            when the engine does not have it yet.
#   offline  when no registry answers (the pull fails), or with --offline: Debian bookworm (whose
#            python3 is 3.11) built with `debootstrap --variant=minbase` from the Debian mirror apt
#            already uses (read from apt's sources at run time, or $DEBIAN_MIRROR), imported with
#            `docker import` as seedzer-base:bookworm. A few minutes; skipped when that image
#            exists (--rebuild makes it again). Needs root (debootstrap) and installs debootstrap
#            with apt-get when it is missing.
#
# Usage: docker/base-image.sh [--offline] [--rebuild]
# Environment: DOCKER (the client, default docker), DEBIAN_MIRROR (overrides apt's mirror),
#              SEEDZER_OFFLINE_BASE (the offline image's name, default seedzer-base:bookworm).
set -euo pipefail

cd "$(dirname -- "${BASH_SOURCE[0]}")/.."
# shellcheck source=docker/engine.sh
source docker/engine.sh
DOCKER="${DOCKER:-docker}"
SUITE=bookworm
OFFLINE_BASE="${SEEDZER_OFFLINE_BASE:-seedzer-base:${SUITE}}"
# What the offline base holds: the interpreter, venv + ensurepip (the Dockerfile makes a venv), and
# the CA certificates pip and apt use.
PACKAGES=python3,python3-venv,ca-certificates

offline=0
rebuild=0
for arg in "$@"; do
    case "$arg" in
        --offline) offline=1 ;;
        --rebuild) rebuild=1 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "base-image: unknown argument $arg" >&2; exit 2 ;;
    esac
done

log() { printf 'base-image: %s\n' "$*" >&2; }

official="$(sed -n 's/^ARG PYTHON_IMAGE=//p' Dockerfile | head -n 1)"
if [[ -z "$official" ]]; then
    log "Dockerfile has no 'ARG PYTHON_IMAGE=<default>' line"
    exit 1
fi

if [[ $offline -eq 0 ]]; then
    if "$DOCKER" image inspect "$official" >/dev/null 2>&1; then
        log "using $official (already in the engine)"
        echo "$official"
        exit 0
    fi
    log "pulling $official"
    if timeout 600 "$DOCKER" pull -q "$official" >&2; then
        echo "$official"
        exit 0
    fi
    log "cannot pull $official: no registry answers; building the offline base $OFFLINE_BASE"
fi

if [[ $rebuild -eq 0 ]] && "$DOCKER" image inspect "$OFFLINE_BASE" >/dev/null 2>&1; then
    log "using $OFFLINE_BASE (already built; --rebuild makes it again)"
    echo "$OFFLINE_BASE"
    exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
    log "debootstrap needs root: run this script as root (or with sudo)"
    exit 1
fi
if ! command -v debootstrap >/dev/null; then
    _engine_apt_install debootstrap || exit 1
fi

# The repository URI apt uses for a suite ("" when apt knows none): apt-get indextargets lists the
# package indexes of every configured source, deb822 or one-line.
apt_uri() {
    # shellcheck disable=SC2016  # $(...) are apt's format fields, not shell
    apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null \
        | awk -v suite="$1" '$1 == suite { print $2; exit }'
}
mirror="${DEBIAN_MIRROR:-$(apt_uri "$SUITE")}"
if [[ -z "$mirror" ]]; then
    log "apt has no source for Debian $SUITE: set DEBIAN_MIRROR to a Debian mirror (e.g. the one your machine's apt uses)"
    exit 1
fi
security="$(apt_uri "$SUITE-security")"
updates="$(apt_uri "$SUITE-updates")"
mirror="${mirror%/}"

arch="$(dpkg --print-architecture)"
work="$(mktemp -d "${TMPDIR:-/var/tmp}/seedzer-base.XXXXXX")"
trap 'rm -rf -- "$work"' EXIT
root="$work/rootfs"
log "debootstrap --variant=minbase $SUITE from $mirror ($arch) into $root"
start=$SECONDS
if ! debootstrap --variant=minbase --arch="$arch" --include="$PACKAGES" "$SUITE" "$root" "$mirror" \
        >"$work/debootstrap.log" 2>&1; then
    tail -n 20 "$work/debootstrap.log" >&2
    log "debootstrap failed (log above)"
    exit 1
fi

# apt inside the image: the same mirror, with bookworm's updates and security suites when apt has them.
{
    echo "deb $mirror $SUITE main"
    [[ -n "$updates" ]] && echo "deb ${updates%/} $SUITE-updates main"
    [[ -n "$security" ]] && echo "deb ${security%/} $SUITE-security main"
} >"$root/etc/apt/sources.list"
# As in Debian's own container images: apt keeps no package caches (a layer that runs apt-get
# would otherwise keep ~80 MB of them), downloads no translations, and dpkg installs no manuals.
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
EOF
cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
# Nothing of this machine in the image: docker provides resolv.conf, hostname and hosts at run time.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/log/* "$root"/tmp/* "$root"/root/.cache
: >"$root/etc/resolv.conf"
: >"$root/etc/hostname"
python_version="$(chroot "$root" python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"

log "importing the root file system as $OFFLINE_BASE (python $python_version)"
tar --numeric-owner --xattrs -C "$root" -c . | "$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3"]' \
    --change "LABEL org.opencontainers.image.description=\"Debian $SUITE minbase + python3 $python_version (docker/base-image.sh)\"" \
    - "$OFFLINE_BASE" >&2
log "built $OFFLINE_BASE in $((SECONDS - start)) s"
echo "$OFFLINE_BASE"
