# trainwatch — every target works on a fresh machine with only Python 3.10+.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint fmt bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/trainwatch demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check trainwatch tests bench
	$(BIN)/ruff format --check trainwatch tests bench
	$(BIN)/mypy trainwatch

fmt: $(STAMP)
	$(BIN)/ruff format trainwatch tests bench
	$(BIN)/ruff check --fix trainwatch tests bench

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
