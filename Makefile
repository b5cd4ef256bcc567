# trainwatch — every target works on a fresh machine with only Python 3.10+.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-fast test-deps lint fmt bench clean corpus

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The record-file writers the tests use (extra `writers`: torch CPU, lightning, transformers); only `make test`.
WRITERS := $(VENV)/.writers
$(WRITERS): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,writers]'
	touch $(WRITERS)

demo: $(STAMP)
	$(BIN)/trainwatch demo

# tests/web drives a headless Chromium; on a fresh Debian machine (as root) install it.
BROWSERS := chromium chromium-browser google-chrome google-chrome-stable
test-deps:
	@if [ -n "$$TRAINWATCH_CHROMIUM" ] || for b in $(BROWSERS); do command -v $$b && break; done >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else echo "make: no Chromium for tests/web: apt-get install chromium, or set TRAINWATCH_CHROMIUM" >&2; fi

# The lint runs first: a layer crossed, a type error or an unformatted file fails CI (.ci/run runs `make test`).
# The whole suite in two runs: the quick tests on two workers, then the slow ones (pty, browser, real processes,
# timing, bench-sized inputs) one at a time, so that no timing test shares the two cores with another test.
test: $(STAMP) $(WRITERS) test-deps lint
	TRAINWATCH_NEED_WRITERS=1 $(BIN)/python -m pytest -q -m "not slow" -n 2
	TRAINWATCH_NEED_WRITERS=1 $(BIN)/python -m pytest -q -m slow

# The loop while working: no slow test (pty, browser, real processes, bench-sized inputs), on two workers.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" -n 2

lint: $(STAMP)
	$(BIN)/ruff check trainwatch tests
	$(BIN)/ruff format --check trainwatch tests
	$(BIN)/mypy trainwatch
	$(BIN)/lint-imports

fmt: $(STAMP)
	$(BIN)/ruff format trainwatch tests
	$(BIN)/ruff check --fix trainwatch tests

bench: $(STAMP)
	$(BIN)/python tests/bench/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache

# The understanding corpus: facts read off real logs of many frameworks (tests/corpus/FORMAT.md).
corpus: $(STAMP)
	$(BIN)/python tests/corpus/score.py
