"""Fixtures for the tests against a real llama.cpp `llama-server` running a real model on this machine's CPU.

`make test-real-server` provisions both (scripts/real_server.py) and passes their paths in OCLLM_LLAMA_SERVER
and OCLLM_LLAMA_MODEL. Without OCLLM_LLAMA_SERVER the tests are skipped (see test_llama_server.py); with it
set to a file that is not there they fail, so a broken provisioning step cannot pass as "skipped".

Every server is started in its own process group and killed with it when its fixture ends; the kernel also
kills it should pytest itself die (PR_SET_PDEATHSIG), so no server outlives the test session. The tests start
`ocllm` the same way.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ports import reserved_ports

SERVER_ENV = "OCLLM_LLAMA_SERVER"
MODEL_ENV = "OCLLM_LLAMA_MODEL"
# The name the server serves (--alias), so that tests know it without parsing a file name.
SERVED_NAME = "smollm2-135m-instruct"
CONTEXT = 4096
SLOTS = 4  # parallel slots, so that --concurrency 4 really runs four requests at once
STARTUP_TIMEOUT_S = 120.0

# How long an ocllm command here may take before it counts as hung: scaled from how fast this server answers on
# this machine now, never a fixed number. A fixed 300 s failed on a 2-core machine under other load, where the
# same command takes well under a minute idle. At session start one short completion (MAX_TOKENS tokens, the
# tests' own size) is timed; the slowest command here makes a few dozen such requests (a matrix of lanes, three
# samples of eight tasks) and waits on server starts, so BUDGET_COMPLETIONS of them is a wide margin, and the
# floor covers what does not scale with the model (Python start-ups, a server's own start). The budget is a
# backstop against a hang, never a measure of speed: no test asserts how long anything took.
MAX_TOKENS = "48"
BUDGET_FLOOR_S = 300.0
BUDGET_COMPLETIONS = 300
_budget_s: float | None = None


def ocllm_budget_s() -> float:
    """The seconds an ocllm command may take here (set by the session's first test; the floor before that)."""
    return _budget_s if _budget_s is not None else BUDGET_FLOOR_S


def time_one_completion(server: LlamaServer) -> float:
    """Seconds one short chat completion takes on `server` (a warm-up request first, so the load is not timed)."""
    body = {"model": SERVED_NAME, "messages": [{"role": "user", "content": "Name three colours."}],
            "max_tokens": int(MAX_TOKENS), "temperature": 0}  # fmt: skip
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=STARTUP_TIMEOUT_S) as resp:
        resp.read()
    began = time.monotonic()
    with urllib.request.urlopen(request, timeout=STARTUP_TIMEOUT_S) as resp:
        resp.read()
    return time.monotonic() - began


def configured_paths() -> tuple[Path, Path]:
    """The server binary and the model, or a test failure saying which one is missing."""
    given = {name: os.environ.get(name, "") for name in (SERVER_ENV, MODEL_ENV)}
    missing = [f"{name}={value!r}" for name, value in given.items() if not value or not Path(value).is_file()]
    if missing:
        pytest.fail(f"{', '.join(missing)}: no such file; `make test-real-server` provisions both", pytrace=False)
    return Path(given[SERVER_ENV]), Path(given[MODEL_ENV])


def die_with_parent() -> None:
    """Runs in the child before exec: SIGKILL it when the process that started it (pytest) dies."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


class LlamaServer:
    """One llama-server process on 127.0.0.1:`port`, its console output kept in `log_path`."""

    def __init__(self, binary: Path, model: Path, port: int, log_path: Path) -> None:
        self.binary, self.model, self.port, self.log_path = binary, model, port, log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            str(self.binary),
            *("-m", str(self.model), "--jinja", "--alias", SERVED_NAME),
            *("-c", str(CONTEXT), "-np", str(SLOTS), "-t", "2"),
            *("--host", "127.0.0.1", "--port", str(self.port)),
        ]

    def start(self) -> LlamaServer:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as one
                preexec_fn=die_with_parent,
            )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        """Until /v1/models answers 200: llama-server answers 503 while the model loads."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                pytest.fail(f"llama-server exited with {self.proc.returncode} while starting:\n{self.log_tail()}")
            with (
                contextlib.suppress(OSError, urllib.error.URLError),
                urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as resp,
            ):
                if resp.status == 200:
                    return
            time.sleep(0.2)
        self.kill()
        pytest.fail(f"llama-server did not answer /v1/models within {STARTUP_TIMEOUT_S:g} s:\n{self.log_tail()}")

    def served_models(self) -> list[str]:
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=10) as resp:
            return [str(m["id"]) for m in json.load(resp)["data"]]

    def kill(self) -> None:
        """SIGKILL the whole process group, as a crash or the OOM killer would."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


ServerFactory = Callable[[int], LlamaServer]


@pytest.fixture(scope="session")
def llama_paths() -> tuple[Path, Path]:
    return configured_paths()


@pytest.fixture(scope="session")
def llama_server(llama_paths: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One server shared by the tests that do not stop it."""
    binary, model = llama_paths
    with reserved_ports(1) as (port,):
        server = LlamaServer(binary, model, port, tmp_path_factory.mktemp("llama") / "llama-server.log")
        try:
            yield server.start()
        finally:
            server.kill()


@pytest.fixture(scope="session")
def ocllm_budget(llama_server: LlamaServer) -> float:
    """The scaled budget (see BUDGET_COMPLETIONS), measured once on the shared server."""
    global _budget_s
    one = time_one_completion(llama_server)
    _budget_s = max(BUDGET_FLOOR_S, BUDGET_COMPLETIONS * one)
    print(f"\none {MAX_TOKENS}-token completion took {one:.2f} s: each ocllm command may take {_budget_s:.0f} s")
    return _budget_s


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # pytest-timeout's default (pyproject.toml) would cut these tests at 300 s whatever the machine's speed: the
    # timer starts only once the fixtures have measured it (func_only), and `scaled_timeout` sets it.
    for item in items:
        if "real_server" in item.nodeid:
            item.add_marker(pytest.mark.timeout(func_only=True))
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def scaled_timeout(request: pytest.FixtureRequest, ocllm_budget: float) -> None:
    """Each test's own timeout: a few of its commands' budgets (a test runs at most a few ocllm commands, one
    after another), so a hang still fails the test rather than waiting for CI's limit."""
    request.node.add_marker(pytest.mark.timeout(4 * ocllm_budget, func_only=True), append=False)


@pytest.fixture
def start_llama_server(llama_paths: tuple[Path, Path], tmp_path: Path) -> Iterator[ServerFactory]:
    """Start a server of the test's own on a given port (a test that kills it restarts it on the same one)."""
    binary, model = llama_paths
    started: list[LlamaServer] = []

    def start(port: int) -> LlamaServer:
        server = LlamaServer(binary, model, port, tmp_path / f"llama-server-{len(started)}.log")
        started.append(server)
        return server.start()

    try:
        yield start
    finally:
        for server in started:
            server.kill()
