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
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/.seedzer-installed ## create .venv and install seedzer with its dev tools

run: install ## generate a small pool and fuzz TVM for $(MINUTES) minutes
	$(BIN)/seedzer run --minutes $(MINUTES)

test: install ## the default test suite (unit + integration, slow tests excluded)
	$(BIN)/python -m pytest -m "not slow" -q

test-all: install ## every test, including slow campaigns
	$(BIN)/python -m pytest -q

lint: install ## ruff and mypy
	$(BIN)/ruff check seedzer tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
