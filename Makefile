# tcplens: `make run` installs everything and serves the app; `make test` installs everything and runs
# every check. Both are idempotent: each install step is skipped when its inputs have not changed.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed

# Each check is a `check-<name>` target; `make test` runs them all and prints one summary table.
CHECKS := ruff format mypy imports pytest

.PHONY: help venv system-deps run test bench $(addprefix check-,$(CHECKS))

help:
	@echo "make run    install everything, start tcplens serve and print its URL"
	@echo "make test   install everything and run every check and test (summary at the end)"
	@echo "make venv   only install (Debian packages, Python virtualenv)"
	@echo "make bench  run every bench/*.py"

system-deps:
	@scripts/install-system-deps

# The virtualenv is rebuilt only when pyproject.toml changed since the last install.
$(PY_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

venv: system-deps $(PY_STAMP)

run: venv
	$(BIN)/tcplens serve

test: venv
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

bench: venv
	$(BIN)/python bench/run.py $(BENCH)
