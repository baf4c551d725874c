# Every target bootstraps .venv from nothing: a fresh machine needs only python3.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench lint chat clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.test: pyproject.toml $(VENV)/.runtime
	$(BIN)/pip install -q -e '.[test]'
	touch $@

$(VENV)/.bench: pyproject.toml $(VENV)/.test
	$(BIN)/pip install -q -e '.[bench]'
	touch $@

run: $(VENV)/.runtime
	$(BIN)/python bot.py

chat: $(VENV)/.runtime
	$(BIN)/python bot.py chat

test: $(VENV)/.test
	$(BIN)/python scripts/ensure_chromium.py
	$(BIN)/python -m pytest

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/mypy .
	$(BIN)/mypy bot.py

bench: $(VENV)/.bench
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
