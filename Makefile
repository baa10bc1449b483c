# Everything starts from nothing: `make test` and `make demo` create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test test-real-server demo lint bench clean browser lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The exact versions of requirements.lock, then the project itself without resolving anything again.
$(STAMP): $(BIN)/python pyproject.toml requirements.lock
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Re-pin requirements.lock to the newest versions pyproject.toml's ranges allow (then run make test).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet '.[dev]'
	{ echo "# The exact versions tests, CI and benchmarks use (Python 3.11, Linux). pyproject.toml declares the"; \
	  echo "# compatible ranges a user's environment (next to vLLM) may satisfy. Regenerate: make lock"; \
	  .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^ocllm=='; } > requirements.lock
	rm -rf .lock-venv

# ruff, then the import contract of pyproject.toml ([tool.importlinter]: dependencies point down), about a second.
lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/lint-imports

# The HTML reports are tested in a real headless browser: Debian's chromium, installed when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get install -y -q chromium >/dev/null 2>&1 || \
		{ $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q chromium >/dev/null; }; }

# Every core (pytest-xdist): most tests wait on servers, subprocesses and a browser rather than compute, so even
# 2 cores gain. Slow tests (marked `slow`) run too; `pytest -m "not slow"` is the quick loop while working.
test: $(STAMP) lint browser
	$(BIN)/python -m pytest -n auto

# Against a real llama.cpp llama-server and a small real model on the CPU. The first run builds the server
# (about 15 minutes on 2 cores) and caches it with the model outside the checkout (~/.cache/ocllm);
# later runs take a few minutes. See README.md, "Real-server tests".
REAL_SERVER_ENV := $(VENV)/real-server.env

test-real-server: $(STAMP)
	$(BIN)/python scripts/real_server.py --env-file $(REAL_SERVER_ENV)
	. ./$(REAL_SERVER_ENV) && $(BIN)/python -m pytest tests/real_server

demo: $(STAMP)
	$(BIN)/python -m ocllm.demo out/demo

bench: $(STAMP)
	$(BIN)/python bench/bench_scoring.py
	$(BIN)/python bench/bench_runner.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
