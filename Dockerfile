# Seedzer images (README.md, "Docker"). Two final targets:
#   runtime  (default, the last stage)  the apache-tvm wheel from PyPI + Seedzer
#     DOCKER_BUILDKIT=1 docker build -t seedzer:0.1.0 .        (or docker/build.sh, which also works offline)
#   tvm-cov             TVM 0.27 built from its release source with clang and SanitizerCoverage
#                       (coverage/build_tvm_sancov.sh, ~50 min on 2 cores) + Seedzer
#     DOCKER_BUILDKIT=1 docker build --target tvm-cov -t seedzer:0.1.0-tvm-cov .
# Both run as the user `seedzer` (uid 1000) in /data, laid out like the repository: seedpools/ and
# experiments/ (the compose volumes), docker/seedzer.yaml. Nothing is downloaded at run time.
#
# BuildKit builds it (RUN --mount) with the engine's own Dockerfile frontend: there is no `# syntax=`
# line, which would make BuildKit pull a frontend image (impossible without a registry).
# Build arguments; the defaults fit an online machine, docker/build.sh sets them for this one:
#   PYTHON_IMAGE     the base: the official Python image; docker/base-image.sh builds a Debian one
#                    from Debian's packages where no registry answers
#   PIP_INDEX_URL    pip's index (PyPI)
#   TORCH_INDEX_URL  where torch comes from: the PyTorch CPU index; empty: the wheels in docker/wheels/
#                    (docker/build.sh copies them there from pip's find-links directory), then PIP_INDEX_URL
#   TORCH_VERSION    the torch release, a CPU build (the CUDA one is gigabytes)
# BuildKit secret pip_cert: a CA bundle for pip and curl (`--secret id=pip_cert,src=<bundle>`), for a
# network whose TLS proxy has its own CA. Without it the base image's CA certificates are used.

ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
ARG PIP_INDEX_URL=https://pypi.org/simple

# ---- base: Python 3.11 in a virtual environment (/opt/venv), whichever base image ----------------
FROM ${PYTHON_IMAGE} AS base
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH
ARG PIP_INDEX_URL
# A venv: Debian's python3 refuses system-wide pip installs (PEP 668); the official image's is the same.
RUN --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && python3 -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
    && python3 -m venv /opt/venv \
    && pip install --no-cache-dir --upgrade "pip==25.2"

# ---- deps: tini, the non-root user, torch (CPU) and Seedzer's other dependencies -----------------
FROM base AS deps
# Marks Seedzer's images: scripts/docker_e2e.sh prunes the older, untagged ones by it.
LABEL org.opencontainers.image.title="seedzer"
# tini reaps the forked workers and forwards SIGTERM; Debian's stable version (security updates).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --shell /bin/bash seedzer
# torch first, a CPU build: from PyPI it would be the CUDA build (gigabytes).
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG PIP_INDEX_URL
RUN --mount=type=secret,id=pip_cert \
    --mount=type=bind,source=docker/wheels,target=/tmp/wheels \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && if [ -n "$TORCH_INDEX_URL" ]; then \
        pip install --no-cache-dir "torch==${TORCH_VERSION}" --index-url "$TORCH_INDEX_URL"; \
    else \
        pip install --no-cache-dir "torch==${TORCH_VERSION}" --find-links /tmp/wheels; \
    fi \
    && python -c "import torch, sys; sys.exit(f'torch {torch.__version__} is a CUDA build' if torch.version.cuda else 0)"
# Seedzer's pinned dependencies and its Ray extra (compose's `ray` profile), read from pyproject.toml
# (a cached layer while it is unchanged), all but apache-tvm: each final stage brings its own TVM.
COPY pyproject.toml /tmp/seedzer/pyproject.toml
RUN --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && python -c "import tomllib; project = tomllib.load(open('/tmp/seedzer/pyproject.toml', 'rb'))['project']; deps = project['dependencies'] + project['optional-dependencies']['ray']; print('\n'.join(d for d in deps if not d.startswith('apache-tvm')))" \
        > /tmp/seedzer/requirements.txt \
    && pip install --no-cache-dir -r /tmp/seedzer/requirements.txt \
    && rm -rf /tmp/seedzer
COPY docker/entrypoint.sh /usr/local/bin/seedzer-entrypoint
# /data mirrors the repository layout; the experiment definitions seed the experiments volume.
COPY --chown=seedzer:seedzer docker/seedzer.yaml /data/docker/seedzer.yaml
COPY --chown=seedzer:seedzer experiments/ /data/experiments/
RUN mkdir -p /data/seedpools /data/experiments/results /data/experiments/reports \
    && chown -R seedzer:seedzer /data
WORKDIR /data
ENTRYPOINT ["tini", "--", "/usr/local/bin/seedzer-entrypoint"]
CMD ["seedzer", "--help"]
# The first check runs one interval after the start: keep it short enough for `docker compose ps`.
HEALTHCHECK --interval=30s --timeout=30s --start-period=60s --retries=3 CMD ["seedzer", "--version"]

# ---- seedzer-wheel: Seedzer's wheel with the breakpoints C extension (build stage only) -------------
FROM base AS seedzer-wheel
# A C compiler for seedzer/coverage/_bpcov.c (Debian's bookworm versions), and Python's headers when
# the base lacks them (the official image has its own; Debian's python3 has them in python3-dev).
# hadolint ignore=DL3008,SC2086
RUN packages="gcc libc6-dev" \
    && if ! python3 -c "import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"; then \
        packages="$packages python3-dev"; \
    fi \
    && apt-get update \
    && apt-get install -y --no-install-recommends $packages \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/seedzer
ARG PIP_INDEX_URL
COPY pyproject.toml setup.py README.md ./
COPY seedzer/ seedzer/
COPY heuristics/ heuristics/
# The extension is optional for pip (it skips it silently without a compiler or Python's headers);
# here its absence is an error.
RUN --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && pip wheel --no-cache-dir --no-deps -w /wheels . \
    && python -c "import glob, sys, zipfile; names = zipfile.ZipFile(glob.glob('/wheels/seedzer-*.whl')[0]).namelist(); sys.exit(0 if any(n.startswith('seedzer/coverage/_bpcov') and n.endswith('.so') for n in names) else 'seedzer wheel lacks the compiled _bpcov extension')"

# ---- tvm-build: TVM from its release source, clang + SanitizerCoverage (build stage only) ----------
FROM base AS tvm-build
# LLVM 16 is the newest in bookworm; versions are Debian's (security updates within bookworm).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl clang-16 llvm-16-dev cmake \
        ninja-build make binutils zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev \
    && rm -rf /var/lib/apt/lists/*
ARG TVM_VERSION=0.27.0
# Pin the release's SHA-512 here once known; empty means "check the published .sha512 file".
ARG TVM_SRC_SHA512=""
# TVM's release source comes from the Apache archive (TVM_SRC_BASE_URL in fetch_tvm_source.sh).
ARG TVM_SRC_BASE_URL=https://archive.apache.org/dist/tvm
ARG PIP_INDEX_URL
COPY coverage/ /opt/coverage/
RUN --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert CURL_CA_BUNDLE=/run/secrets/pip_cert; fi \
    && TVM_SRC_SHA512="${TVM_SRC_SHA512}" TVM_SRC_BASE_URL="${TVM_SRC_BASE_URL}" \
        /opt/coverage/fetch_tvm_source.sh "${TVM_VERSION}" /tmp/tvm-src \
    && /opt/coverage/build_tvm_sancov.sh /tmp/tvm-src /wheels \
    && rm -rf /tmp/tvm-src

# ---- tvm-cov: the instrumented TVM + Seedzer ----------------------------------------------------
FROM deps AS tvm-cov
# libllvm16: the shared LLVM the instrumented TVM links (Debian's bookworm version).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libllvm16 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=tvm-build /opt/seedzer-sancov/ /opt/seedzer-sancov/
ARG PIP_INDEX_URL
RUN --mount=type=secret,id=pip_cert \
    --mount=type=bind,from=tvm-build,source=/wheels,target=/tmp/wheels \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && pip install --no-cache-dir /tmp/wheels/apache_tvm-*.whl
COPY coverage/check_tvm_sancov.py /opt/seedzer-sancov/check_tvm_sancov.py
# apache-tvm 0.27.0.post1+sancov already satisfies seedzer's pin: nothing replaces it.
RUN --mount=type=secret,id=pip_cert \
    --mount=type=bind,from=seedzer-wheel,source=/wheels,target=/tmp/seedzer-wheels \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && pip install --no-cache-dir /tmp/seedzer-wheels/seedzer-*.whl \
    && python /opt/seedzer-sancov/check_tvm_sancov.py
WORKDIR /data
USER 1000:1000

# ---- runtime: the stock TVM wheel (pulled by `pip install .`) + Seedzer ----------------------------
FROM deps AS runtime
ARG PIP_INDEX_URL
RUN --mount=type=secret,id=pip_cert \
    --mount=type=bind,from=seedzer-wheel,source=/wheels,target=/tmp/seedzer-wheels \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && pip install --no-cache-dir /tmp/seedzer-wheels/seedzer-*.whl
WORKDIR /data
USER 1000:1000
# The breakpoints backend's block table of the installed TVM, built once into the image (~2-3 min,
# ~56 MB in ~/.cache/seedzer/blocks) so that no container spends that time at its first campaign.
RUN python -c "import seedzer.coverage._bpcov; from seedzer.coverage.blocktable import load_or_build, tvm_compiler_library as lib; load_or_build(lib())"
