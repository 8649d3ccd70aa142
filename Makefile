# Seedzer's two set-up commands: `make run` (a short real campaign) and `make test` (the test suite).
# Both create .venv and install everything on first use; nothing is downloaded at run time.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
MINUTES ?= 3

.PHONY: install run test test-all lint clean

$(BIN)/.seedzer-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first and exactly pinned: only 2.13.0 resolves to the local CPU wheel (others pull CUDA).
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $@

install: $(BIN)/.seedzer-installed ## create .venv and install seedzer with its dev tools and the Ray extra

run: install ## generate a small pool and fuzz TVM for $(MINUTES) minutes
	$(BIN)/seedzer run --minutes $(MINUTES)

test: install ## the default test suite (unit + integration, slow tests excluded)
	$(BIN)/python -m pytest -m "not slow" -q

test-all: install ## every test, including slow campaigns
	$(BIN)/python -m pytest -q

lint: install ## ruff, mypy and the import layers (import-linter)
	$(BIN)/ruff check seedzer tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache

# Docker (docs/docker.md): the same commands on an online machine and on one that reaches no
# image registry (an offline base image is built from Debian's packages). Root or sudo for apt-get.
.PHONY: docker-image docker-up docker-down docker-e2e

docker-image: ## build the runtime image seedzer:0.1.0 (starts the engine, installing it when missing)
	docker/build.sh

docker-up: ## from a fresh clone to a running compose campaign: generate, 2 fuzz replicas, report
	docker/up.sh

docker-down: ## stop the compose services; the volumes (pools, results) stay
	docker/compose.sh down

docker-e2e: ## build the image and run a 2-minute compose campaign with its checks (as CI does)
	bash scripts/docker_e2e.sh
