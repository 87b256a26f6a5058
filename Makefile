# tcplens: `make run` installs everything and serves the app; `make test` installs everything and runs
# every check. Both are idempotent: each install step is skipped when its inputs have not changed.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
SPA_INDEX := frontend/dist/index.html
SPA_SOURCES := $(shell find frontend/src frontend/public -type f 2>/dev/null) \
	frontend/index.html frontend/vite.config.ts frontend/tsconfig.json frontend/package.json
NPM := npm --no-audit --no-fund --loglevel=error

# Each check is a `check-<name>` target; `make test` runs them all and prints one summary table.
CHECKS := ruff format mypy imports pytest api-client tsc biome vitest e2e

.PHONY: help venv system-deps node-deps spa kernels api-client run dev test bench lab eval $(addprefix check-,$(CHECKS))

help:
	@echo "make run    install everything, start tcplens serve and print its URL"
	@echo "make test   install everything and run every check and test (summary at the end)"
	@echo "make dev    API with auto-reload on :8000 behind the Vite dev server on :5173"
	@echo "make venv   only install (Debian packages, Python virtualenv, node modules)"
	@echo "make kernels  compile the analysis kernels into their cache (skipped when up to date)"
	@echo "make bench  run every bench/*.py"
	@echo "make lab    regenerate the scenario lab's captures into e2e/lab/out/ (root; LAB='--only NAME')"
	@echo "make eval   how right the diagnosis is on the lab's captures and ../shared/captures (EVAL='--json F')"

system-deps:
	@scripts/install-system-deps

# The virtualenv is rebuilt only when pyproject.toml changed since the last install.
$(PY_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

# node_modules is reinstalled (npm ci, from the committed lock file) only when a package file changed.
$(NODE_STAMP): package.json package-lock.json frontend/package.json e2e/package.json
	$(NPM) ci
	@touch $@

node-deps: $(NODE_STAMP)

venv: system-deps $(PY_STAMP) $(NODE_STAMP)

# The SPA is rebuilt only when one of its sources is newer than the last build.
$(SPA_INDEX): $(SPA_SOURCES) $(NODE_STAMP)
	$(NPM) run build -w frontend

spa: $(SPA_INDEX)

# The analysis kernels compiled once per source change (~2 min of one core), with progress, so that
# no analysis compiles; the command itself knows whether its cache is up to date (tcplens.kernel_cache).
kernels: $(PY_STAMP)
	@$(BIN)/tcplens kernels

run: venv spa kernels
	$(BIN)/tcplens serve

dev: venv kernels
	@echo "tcplens dev: open http://127.0.0.1:5173/ (API on http://127.0.0.1:8000/, /api proxied)"
	@trap 'kill $$api 2>/dev/null' EXIT; \
	TCPLENS_SPA_DIR=frontend/dist $(BIN)/uvicorn --factory tcplens.main:create_app --reload --no-proxy-headers \
		--reload-dir backend --reload-dir migrations --host 127.0.0.1 --port 8000 & api=$$!; \
	$(NPM) run dev -w frontend

test: venv spa kernels
	@MAKE="$(MAKE)" scripts/run-checks $(CHECKS)

check-ruff:
	$(BIN)/ruff check .

check-format:
	$(BIN)/ruff format --check .

check-mypy:
	$(BIN)/mypy

check-imports:
	$(BIN)/lint-imports --no-cache

check-pytest:
	$(BIN)/pytest -q

# The SPA's typed API client is generated from the app's OpenAPI schema; the check regenerates it and
# fails when the committed one had drifted from the server.
api-client: $(PY_STAMP) $(NODE_STAMP)
	scripts/generate-api-client

check-api-client:
	scripts/generate-api-client --check

check-tsc:
	$(NPM) run typecheck --workspaces

check-biome:
	npx --no-install biome check .

check-vitest:
	$(NPM) run test -w frontend

check-e2e: $(SPA_INDEX)
	$(NPM) run test -w e2e

# Byte-compiled first: an installed tcplens has its .pyc (pip writes them), but this editable checkout
# gets none where PYTHONDONTWRITEBYTECODE is set, and each `tcplens analyze` would compile ~60 modules.
bench: venv kernels
	$(BIN)/python -m compileall -q backend/tcplens
	$(BIN)/python bench/run.py $(BENCH)

# Real Linux TCP captures of every situation, with the kernel's TCP_INFO as ground truth (needs root).
lab: venv
	cd e2e && ../$(BIN)/python -m lab $(LAB)

# The diagnosis's accuracy (tuning and held-out parts), capture-point invariance and the statements
# no capture supports, over e2e/lab/out (made once by `make lab`) and ../shared/captures. A command.
eval: venv kernels
	cd e2e && ../$(BIN)/python -m lab.evaluate $(EVAL)
