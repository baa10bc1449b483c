"""Hostile programs never reach the host (docs/scoring/code.md, "The sandbox"): each runs through the code room's
whole decision path (extraction, the guarded supervisor, bubblewrap) with canaries around it: a file in $HOME and one
in the checkout, a listener on 127.0.0.1, and the process table afterwards. Each ends in its outcome, and nothing of
it is alive a second after its decision came back."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import CPU_HEAVY, wait_until

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeDecision, CodeLimits
from ocllm.scoring.code.fields import CodeTask

pytestmark = [
    pytest.mark.slow,
    CPU_HEAVY,  # programs run to their limits: CPU, memory, output, processes
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)"),
]

CHECKOUT = Path(__file__).resolve().parent.parent
# Small limits, so that the programs that run until a limit end within seconds.
LIMITS = CodeLimits(cpu_s=2.0, wall_s=6.0, memory_bytes=512 * 1024**2, output_bytes=1024**2, file_bytes=1024**2)
TESTS = "def check(candidate):\n    assert candidate(1) == 2\n"


class Canaries:
    """What a program that escaped would touch: two files, a listener, and processes it left behind, named by a mark
    the program gives every process it starts (its `comm`, read from /proc)."""

    def __init__(self, home: Path) -> None:
        self.mark = "ocx" + secrets.token_hex(5)  # at most 15 characters: a process's comm
        self.home_file = home / f".{self.mark}-canary"
        self.checkout_file = CHECKOUT / f".{self.mark}-canary"
        for path in (self.home_file, self.checkout_file):
            path.write_text("canary\n")
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]

    def intact(self) -> None:
        for path in (self.home_file, self.checkout_file):
            assert path.read_text() == "canary\n", f"{path} was changed"
        with pytest.raises(BlockingIOError):
            self.listener.accept()  # no connection ever reached it
        assert not (Path.home() / "pwned").exists() and not (CHECKOUT / "pwned").exists()

    def survivors(self) -> list[int]:
        alive = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if (entry / "comm").read_text().strip() == self.mark:
                        alive.append(int(entry.name))
                except OSError:
                    continue
        return alive

    def close(self) -> None:
        self.listener.close()
        for path in (self.home_file, self.checkout_file):
            path.unlink(missing_ok=True)


@pytest.fixture
def canaries() -> Iterator[Canaries]:
    found = Canaries(Path.home())
    try:
        yield found
    finally:
        found.close()


def _named(mark: str) -> str:
    """The program's first lines: every process it is or starts carries `mark` as its name."""
    return (
        "import ctypes, os, socket, sys, time, signal\n"
        f"ctypes.CDLL(None).prctl(15, ctypes.c_char_p({mark!r}.encode()), 0, 0, 0)\n"  # PR_SET_NAME
    )


def _decide(body: str, canaries: Canaries, limits: CodeLimits = LIMITS) -> CodeDecision:
    program = _named(canaries.mark) + body
    task = CodeTask(id="hostile", question="q", entry_point="f", test=TESTS)
    content = f"Here it is:\n```python\n{program}```\n"
    decision = decide_code(task, Sample(task_id="hostile", content=content, finish_reason="stop"), Policy(), limits)
    assert decision.program is not None and decision.sandbox is not None and decision.sandbox.kind == "bubblewrap"
    # Nothing of it may outlive its decision: what the sandbox ended goes (reaped, its name gone from /proc) as soon
    # as the kernel gets to it, which a loaded machine delays; a program's own leftovers would sleep or spin far past
    # the wait (the longest sleeps 1000 s).
    wait_until(lambda: not canaries.survivors())
    assert canaries.survivors() == [], f"processes left behind: {canaries.survivors()}"
    canaries.intact()
    return decision


def test_a_fork_bomb_ends_in_its_outcome_and_leaves_no_process(canaries: Canaries) -> None:
    decision = _decide("def f(x):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n"
                       "            pass\n", canaries)  # fmt: skip
    assert decision.outcome == "timeout" and decision.runs[0].timeout == "cpu"


def test_an_orphaned_sleeper_does_not_outlive_the_program(canaries: Canaries) -> None:
    decision = _decide("def f(x):\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(1000)\n"
                       "    return x + 1\n", canaries)  # fmt: skip
    assert decision.outcome == "passed" and decision.correct is True


def test_writes_and_deletes_in_home_and_the_checkout_reach_nothing_of_the_host(canaries: Canaries) -> None:
    body = (
        "def f(x):\n"
        "    home = os.path.expanduser('~')\n"
        "    open(os.path.join(home, 'pwned'), 'w').write('x')\n"  # the sandbox's own home: allowed, and thrown away
        f"    for path in ({str(canaries.home_file)!r}, {str(canaries.checkout_file)!r}):\n"
        "        try:\n"
        "            os.remove(path)\n"
        "        except OSError:\n"
        "            pass\n"
        f"    open({str(CHECKOUT / 'pwned')!r}, 'w').write('x')\n"
        "    return x + 1\n"
    )
    decision = _decide(body, canaries)
    assert decision.outcome == "exception" and "FileNotFoundError" in decision.reason  # the checkout is not there


def test_a_connect_to_the_loopback_reaches_no_listener(canaries: Canaries) -> None:
    body = f"def f(x):\n    socket.create_connection(('127.0.0.1', {canaries.port}), timeout=2)\n    return x + 1\n"
    decision = _decide(body, canaries)
    assert decision.outcome == "exception" and ("Connection" in decision.reason or "Network" in decision.reason)


def test_reading_the_hosts_files_finds_nothing(canaries: Canaries) -> None:
    body = (
        "def f(x):\n"
        "    seen = [p for p in ('/etc/passwd', '/root', '/home', "
        f"{str(CHECKOUT)!r}, '/var/run/docker.sock') if os.path.exists(p)]\n"
        "    assert not seen, seen\n"
        "    assert 'OCLLM' not in ''.join(os.environ) and 'API_KEY' not in ''.join(os.environ)\n"
        "    return x + 1\n"
    )
    decision = _decide(body, canaries)
    assert decision.outcome == "passed", decision.reason


def test_ten_gib_of_memory_is_the_memory_limit(canaries: Canaries) -> None:
    decision = _decide("def f(x):\n    block = bytearray(10 * 1024**3)\n    return x + 1\n", canaries)
    assert decision.outcome == "memory_limit" and decision.correct is False


def test_a_gib_of_output_is_the_output_limit(canaries: Canaries) -> None:
    decision = _decide("def f(x):\n    line = 'y' * 65535\n    for _ in range(16384):\n        print(line)\n", canaries)
    assert decision.outcome == "output_limit"
    assert decision.runs[0].stdout_bytes < 64 * LIMITS.output_bytes  # it was stopped, not read to the end


def test_an_infinite_loop_that_ignores_sigalrm_is_a_cpu_timeout(canaries: Canaries) -> None:
    body = "def f(x):\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    signal.alarm(1)\n"
    body += "    while True:\n        pass\n"
    decision = _decide(body, canaries)
    assert decision.outcome == "timeout" and decision.runs[0].timeout == "cpu"
    assert decision.runs[0].cpu_s >= LIMITS.cpu_s


def test_a_program_that_only_sleeps_is_a_wall_timeout(canaries: Canaries) -> None:
    decision = _decide("def f(x):\n    time.sleep(1000)\n", canaries)
    assert decision.outcome == "timeout" and decision.runs[0].timeout == "wall"


def test_an_early_exit_is_never_a_pass(canaries: Canaries) -> None:
    early = ("def f(x):\n    sys.exit(0)\n", "def f(x):\n    os._exit(0)\n")
    early += ("sys.exit(0)\ndef f(x):\n    return x + 1\n",)
    for body in early:
        decision = _decide(body, canaries)
        assert decision.outcome == "exception" and decision.correct is False, body
        assert "before the tests completed" in decision.reason


def test_the_sandbox_runs_as_an_unprivileged_user_without_network(canaries: Canaries) -> None:
    body = (
        "def f(x):\n"
        "    assert os.getuid() != 0 and os.geteuid() != 0\n"
        "    names = [name for _, name in socket.if_nameindex()]\n"
        "    assert names in ([], ['lo']), names\n"
        "    return x + 1\n"
    )
    assert _decide(body, canaries).outcome == "passed"


@pytest.mark.skipif(os.geteuid() != 0, reason="the process limit's drop to an unprivileged user is for root")
def test_as_root_the_process_limit_binds(canaries: Canaries) -> None:
    body = (
        "def f(x):\n"
        "    children = 0\n"
        "    try:\n"
        "        while children < 200:\n"
        "            if os.fork() == 0:\n"
        "                time.sleep(1000)\n"  # a leftover would outlive the wait for survivors
        "                os._exit(0)\n"
        "            children += 1\n"
        "    except OSError:\n"
        "        return children\n"
    )
    decision = _decide(body, canaries, CodeLimits(cpu_s=2.0, wall_s=4.0, processes=16))
    # check's assert sees the number of children it could start: fewer than 16, not 200
    assert decision.outcome == "failed_assertion"
