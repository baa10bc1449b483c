# Everything starts from nothing: `make test` and `make demo` create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

test: $(STAMP) lint
	$(BIN)/python -m pytest

demo: $(STAMP)
	$(BIN)/python -m ocllm.demo out/demo

bench: $(STAMP)
	$(BIN)/python bench/bench_scoring.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
