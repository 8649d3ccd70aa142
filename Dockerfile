# syntax=docker/dockerfile:1.7
# Seedzer images (docs/docker.md). Two final targets:
#   runtime  (default, the last stage)  the apache-tvm wheel from PyPI + Seedzer
#     docker build -t seedzer:0.1.0 .
#   tvm-cov             TVM 0.27 built from its release source with clang and SanitizerCoverage
#                       (coverage/build_tvm_sancov.sh, ~50 min on 2 cores) + Seedzer
#     docker build --target tvm-cov -t seedzer:0.1.0-tvm-cov .
# Both run as the user `seedzer` in /data, laid out like the repository: seedpools/ and
# experiments/ (the compose volumes), docker/seedzer.yaml. Nothing is downloaded at run time.

ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

# ---- base: Python, tini, the non-root user, torch (CPU) and Seedzer's other dependencies ----------
FROM ${PYTHON_IMAGE} AS deps
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
# tini reaps the forked workers and forwards SIGTERM; Debian's stable version (security updates).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --shell /bin/bash seedzer
# torch first and from the CPU index: from PyPI it pulls the CUDA build (gigabytes).
ARG TORCH_VERSION=2.13.0
RUN pip install --no-cache-dir "torch==${TORCH_VERSION}" --index-url https://download.pytorch.org/whl/cpu
# Seedzer's pinned dependencies, read from pyproject.toml (a cached layer while it is unchanged),
# all but apache-tvm: each final stage brings its own TVM.
COPY pyproject.toml /tmp/seedzer/pyproject.toml
RUN python -c "import tomllib; deps = tomllib.load(open('/tmp/seedzer/pyproject.toml', 'rb'))['project']['dependencies']; print('\n'.join(d for d in deps if not d.startswith('apache-tvm')))" \
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
HEALTHCHECK --interval=5m --timeout=60s --start-period=60s --retries=3 CMD ["seedzer", "--version"]

# ---- seedzer-wheel: Seedzer's wheel with the breakpoints C extension (build stage only) -------------
FROM deps AS seedzer-wheel
# A C compiler for seedzer/coverage/_bpcov.c (Debian's bookworm versions).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/seedzer
COPY pyproject.toml setup.py README.md ./
COPY seedzer/ seedzer/
COPY heuristics/ heuristics/
# The extension is optional for pip; here its absence is an error.
RUN pip wheel --no-cache-dir --no-deps -w /wheels . \
    && python -c "import glob, sys, zipfile; names = zipfile.ZipFile(glob.glob('/wheels/seedzer-*.whl')[0]).namelist(); sys.exit(0 if any('_bpcov' in n for n in names) else 'seedzer wheel lacks the _bpcov extension')"

# ---- tvm-build: TVM from its release source, clang + SanitizerCoverage (build stage only) ----------
FROM ${PYTHON_IMAGE} AS tvm-build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# LLVM 16 is the newest in bookworm; versions are Debian's (security updates within bookworm).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl clang-16 llvm-16-dev cmake \
        ninja-build make binutils zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev \
    && rm -rf /var/lib/apt/lists/*
ARG TVM_VERSION=0.27.0
# Pin the release's SHA-512 here once known; empty means "check the published .sha512 file".
ARG TVM_SRC_SHA512=""
COPY coverage/ /opt/coverage/
RUN TVM_SRC_SHA512="${TVM_SRC_SHA512}" /opt/coverage/fetch_tvm_source.sh "${TVM_VERSION}" /tmp/tvm-src \
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
RUN --mount=type=bind,from=tvm-build,source=/wheels,target=/tmp/wheels \
    pip install --no-cache-dir /tmp/wheels/apache_tvm-*.whl
COPY coverage/check_tvm_sancov.py /opt/seedzer-sancov/check_tvm_sancov.py
# apache-tvm 0.27.0.post1+sancov already satisfies seedzer's pin: nothing replaces it.
RUN --mount=type=bind,from=seedzer-wheel,source=/wheels,target=/tmp/seedzer-wheels \
    pip install --no-cache-dir /tmp/seedzer-wheels/seedzer-*.whl \
    && python /opt/seedzer-sancov/check_tvm_sancov.py
WORKDIR /data
USER 1000:1000

# ---- runtime: the stock TVM wheel (pulled by `pip install .`) + Seedzer ----------------------------
FROM deps AS runtime
RUN --mount=type=bind,from=seedzer-wheel,source=/wheels,target=/tmp/seedzer-wheels \
    pip install --no-cache-dir /tmp/seedzer-wheels/seedzer-*.whl
WORKDIR /data
USER 1000:1000
# The breakpoints backend's block table of the installed TVM, built once into the image (~2-3 min,
# ~56 MB in ~/.cache/seedzer/blocks) so that no container spends that time at its first campaign.
RUN python -c "from seedzer.coverage.blocktable import load_or_build, tvm_compiler_library as lib; load_or_build(lib())"
