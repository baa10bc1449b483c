# Everything starts from nothing: `make test` and `make demo` create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BFCL_STAMP := $(VENV)/.installed-bfcl

.PHONY: test test-real-server demo lint bench clean browser sandbox slurm lock lock-upgrade check-lean check-lean-locked \
	scorer-diff scorer-pin

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The locks: exact versions with every file's hash. dev.lock is what tests, CI, benchmarks and the demo use (the
# runtime, both extras and the dev tools); runtime.lock is the runtime alone at the same versions (docs/install.md).
DEV_LOCK := requirements/dev.lock
RUNTIME_LOCK := requirements/runtime.lock
# The tool that writes the locks, in a throw-away venv: never a dependency of ocllm.
UV_VERSION := 0.13.9

# The exact versions of the dev lock, every file checked against its hash, then the project itself without
# resolving anything again.
$(STAMP): $(BIN)/python pyproject.toml $(DEV_LOCK)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r $(DEV_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# BFCL's package (code and data) without its dependencies, for the test that checks the tool_use room's verdicts
# against BFCL's own multi-turn checker (requirements/bfcl.lock says why no dependencies).
BFCL_LOCK := requirements/bfcl.lock
$(BFCL_STAMP): $(STAMP) $(BFCL_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r $(BFCL_LOCK)
	touch $(BFCL_STAMP)

# Regenerate both locks from pyproject.toml's ranges (after a change there), keeping every pin the ranges still
# allow; `make lock-upgrade` moves every pin to the newest version the ranges allow. Then run make test. The
# runtime lock is resolved within the dev lock, so a package has one version in both.
lock lock-upgrade:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet uv==$(UV_VERSION)
	.lock-venv/bin/uv pip compile --quiet pyproject.toml --extra dev --python-version 3.11 --generate-hashes \
		--custom-compile-command "make lock" $(if $(filter lock-upgrade,$@),--upgrade) -o $(DEV_LOCK)
	.lock-venv/bin/uv pip compile --quiet pyproject.toml --python-version 3.11 --generate-hashes \
		--custom-compile-command "make lock" -c $(DEV_LOCK) $(if $(filter lock-upgrade,$@),--upgrade) -o $(RUNTIME_LOCK)
	rm -rf .lock-venv

# A fresh venv with `pip install .` and no extra, as a user installs it: ocllm run against serve-sim, and rescore
# (scripts/check_lean_install.sh; a few minutes, most of it the install). check-lean-locked: the same from the
# runtime lock (--require-hashes, then --no-deps .), and pip check that the lock misses nothing.
check-lean:
	scripts/check_lean_install.sh

check-lean-locked:
	scripts/check_lean_install.sh --locked

# ruff, the import contract of pyproject.toml ([tool.importlinter]: dependencies point down), then the type checker
# (mypy, strict on src/: [tool.mypy]); half a minute from a cold cache.
lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/lint-imports
	$(BIN)/mypy

# The HTML reports are tested in a real headless browser: Debian's chromium, installed when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get install -y -q chromium >/dev/null 2>&1 || \
		{ $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q chromium >/dev/null; }; }

# Code tasks run the model's programs in bubblewrap (docs/scoring/code.md, "The sandbox"): Debian's package,
# installed when missing. Without it (and without podman or docker) every code task is sandbox_refused. The tests of
# HumanEval+ and MBPP+ import numpy in the sandbox's Python: Debian's python3-numpy, installed when missing.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
		echo "installing Debian's bubblewrap for the code tasks' sandbox"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
		{ $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q bubblewrap >/dev/null; }; }
	@/usr/bin/python3 -c "import numpy" >/dev/null 2>&1 || { \
		echo "installing Debian's python3-numpy for the sandbox's Python (HumanEval+ and MBPP+ tests)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get install -y -q python3-numpy >/dev/null 2>&1 || \
		{ $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q python3-numpy >/dev/null; }; }

# `matrix --slurm` is tested against a one-machine Slurm cluster the tests start (tests/slurm_cluster.py): Debian's
# slurmctld, slurmd, slurm-client and munge, installed when missing (their services are not started: the tests start
# their own daemons, on free ports, in a folder of their own).
slurm:
	@command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v sbatch >/dev/null 2>&1 \
		&& command -v munged >/dev/null 2>&1 || { \
		echo "installing Debian's Slurm (slurmctld, slurmd, slurm-client, munge) for the --slurm tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			slurmctld slurmd slurm-client munge >/dev/null 2>&1 || \
		{ $$SUDO apt-get update -q >/dev/null && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends slurmctld slurmd slurm-client munge >/dev/null; }; }

# Every core (pytest-xdist): most tests wait on servers, subprocesses and a browser rather than compute, so even
# 2 cores gain. Slow tests (marked `slow`) run too; `pytest -m "not slow"` is the quick loop while working.
test: $(STAMP) $(BFCL_STAMP) lint browser sandbox slurm
	$(BIN)/python -m pytest -n auto

# Against a real llama.cpp llama-server and a small real model on the CPU. The first run builds the server
# (about 15 minutes on 2 cores) and caches it with the model outside the checkout (~/.cache/ocllm);
# later runs take a few minutes. See docs/development.md, "Real-server tests".
REAL_SERVER_ENV := $(VENV)/real-server.env

test-real-server: $(STAMP) sandbox
	$(BIN)/python scripts/real_server.py --env-file $(REAL_SERVER_ENV)
	. ./$(REAL_SERVER_ENV) && $(BIN)/python -m pytest tests/real_server

demo: $(STAMP) sandbox
	$(BIN)/python -m ocllm.demo out/demo

# The pinned answer corpus (tests/data/answers, docs/scoring.md "The pinned answer corpus"): per source, what this
# scorer fixes and breaks against the person's verdicts, and how math-verify and lm-eval's filters read the same
# records; then, once every change is listed in intended_changes.jsonl, the current verdicts pinned.
scorer-diff: $(STAMP)
	$(BIN)/python tests/answer_corpus.py diff

scorer-pin: $(STAMP)
	$(BIN)/python tests/answer_corpus.py pin

bench: $(STAMP)
	$(BIN)/python bench/bench_scoring.py
	$(BIN)/python bench/bench_runner.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
