# Every target bootstraps .venv from nothing: a fresh machine needs only python3.
# Installs are pinned by constraints.txt (the versions the tests passed with).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIN := -c constraints.txt

.PHONY: run test bench lint chat check wheel docs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# the extras too, so that any settings work here: BOT_DB_URL needs [postgres], tracing [otel]
$(VENV)/.runtime: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q $(PIN) -e '.[postgres,otel]'
	touch $@

# the docs extra too: tests/test_docs.py builds the docs site with `mkdocs build --strict`
$(VENV)/.test: pyproject.toml constraints.txt $(VENV)/.runtime
	$(BIN)/pip install -q $(PIN) -e '.[postgres,otel,test,docs]'
	touch $@

$(VENV)/.bench: pyproject.toml constraints.txt $(VENV)/.test
	$(BIN)/pip install -q $(PIN) -e '.[postgres,otel,bench]'
	touch $@

run: $(VENV)/.runtime
	$(BIN)/python bot.py

chat: $(VENV)/.runtime
	$(BIN)/python bot.py chat

check: $(VENV)/.runtime
	$(BIN)/python bot.py check

# the wheel a deployment installs (tests/test_wheel_install.py installs it into a fresh venv)
wheel: $(BIN)/python
	$(BIN)/pip wheel -q --no-deps -w dist .

# Every test, one worker more than the cores (at most four: each test may start bots, fakes and a
# database, and many wait on them with the CPU idle); the thirty slowest are listed at the end.
# docs/testing.md says how the suite runs.
TEST_WORKERS ?= $(shell $(PY) -c 'import os; print(min(4, (os.cpu_count() or 1) + 1))')
test: $(VENV)/.test
	$(BIN)/python scripts/ensure_chromium.py
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses=4 --dist load --maxschedchunk 2 --durations=30

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/mypy .
	$(BIN)/mypy bot.py

# the docs site into site/ (mkdocs.yml); `$(BIN)/mkdocs serve` to read it while writing
docs: $(VENV)/.test
	$(BIN)/mkdocs build --strict

bench: $(VENV)/.bench
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache dist build site
