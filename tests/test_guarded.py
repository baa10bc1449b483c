"""The guarded child (scoring/guarded.py): real child processes, real limits. No test asserts how long anything
took: a limit is on the CPU time a call used, and a test waits only for what it can see (a process gone)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import CPU_HEAVY, wait_until
from processes import cpu_seconds, gone

from ocllm.scoring import guarded
from ocllm.scoring.guarded import Limits, Result, Service, run_once

pytestmark = [pytest.mark.slow, CPU_HEAVY]  # guarded children: CPU limits reached, process groups killed

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"


def test_a_call_runs_a_named_function_on_its_arguments() -> None:
    assert run_once("guarded_helpers:add", (2, 3), Limits(cpu_s=5)) == Result("done", 5)


def test_a_call_that_burns_cpu_is_stopped_at_its_cpu_time_limit_with_a_fixed_sentence() -> None:
    service = Service("test-spin")
    try:
        result = service.call("guarded_helpers:spin", (), Limits(cpu_s=1))
        assert result == Result("limit", None, "reached its CPU-time limit of 1 s", "cpu")
        # The child that reached its limit was replaced: the next call is served.
        assert service.call("guarded_helpers:add", (1, 1), Limits(cpu_s=5)).value == 2
    finally:
        service.close()


def test_one_long_c_call_is_stopped_at_its_cpu_time_limit_too() -> None:
    # pow(9, 9**9) holds the child's interpreter for minutes: nothing in the child could stop it, the parent does.
    result = run_once("guarded_helpers:big_power", (), Limits(cpu_s=1))
    assert (result.status, result.limit, result.detail) == ("limit", "cpu", "reached its CPU-time limit of 1 s")


def test_without_proc_rlimit_cpu_stops_the_child_in_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    # The parent reads no CPU time (as on a system without /proc): the child's own RLIMIT_CPU, a second past the
    # limit, ends it with SIGXCPU, and the result is the one the parent's count gives.
    monkeypatch.setattr(guarded, "cpu_seconds", lambda pid: None)
    result = run_once("guarded_helpers:spin", (), Limits(cpu_s=1))
    assert result == Result("limit", None, "reached its CPU-time limit of 1 s", "cpu")


def test_memory_past_the_limit_is_the_memory_limit_reached() -> None:
    result = run_once("guarded_helpers:allocate", (2,), Limits(cpu_s=5), memory_bytes=1024**3)
    assert result == Result("limit", None, "reached its memory limit of 1 GiB", "memory")


def test_a_reply_past_its_size_limit_is_not_sent_back() -> None:
    result = run_once("guarded_helpers:large_reply", (2,), Limits(cpu_s=5, reply_bytes=1024**2))
    assert result == Result("limit", None, "gave a result larger than 1 MiB", "reply")


def test_a_call_that_uses_no_cpu_is_stopped_by_the_stall_backstop() -> None:
    result = run_once("guarded_helpers:sleep_forever", (), Limits(cpu_s=5, stall_s=1))
    assert result == Result("limit", None, "used no CPU time for 1 s (stalled)", "stall")


def test_an_exception_comes_back_named() -> None:
    assert run_once("guarded_helpers:fail", (), Limits(cpu_s=5)) == Result("raised", None, "ValueError: no such thing")
    missing = run_once("no_such_module:f", (), Limits(cpu_s=5))
    assert missing.detail == "ModuleNotFoundError: No module named 'no_such_module'"


def test_a_startup_that_fails_is_a_lost_result_naming_it() -> None:
    service = Service("test-startup", startup="guarded_helpers:fail")
    result = service.call("guarded_helpers:add", (1, 1), Limits(cpu_s=5))
    assert result == Result("lost", None, "its process could not start (ValueError: no such thing)")
    assert service.pid() is None


def test_the_child_is_long_lived_in_its_own_process_group_and_outlives_the_thread_that_asked_first() -> None:
    # PR_SET_PDEATHSIG fires when the thread that started a child ends: children are started by a launcher thread
    # that lives as long as the process, so a thread that asks once and ends does not take the child with it.
    service = Service("test-threads")
    try:
        first: list[int] = []
        thread = threading.Thread(target=lambda: first.append(service.call("guarded_helpers:pid", (), Limits(5)).value))
        thread.start()
        thread.join()
        (pid,) = first
        assert os.getpgid(pid) == pid  # the leader of a group of its own
        for _ in range(3):
            assert service.call("guarded_helpers:pid", (), Limits(cpu_s=5)).value == pid
        assert service.pid() == pid and not gone(pid)
    finally:
        service.close()
    assert gone(pid)


def test_warm_starts_a_named_services_child_before_any_call_and_passes_over_other_names() -> None:
    named, other = Service("test-warm"), Service("test-cold")
    try:
        guarded.warm(["test-warm", "no-such-service"])  # returns at once; the child starts in the background
        assert wait_until(lambda: named.pid() is not None)
        pid = named.pid()
        assert named.call("guarded_helpers:pid", (), Limits(cpu_s=5)).value == pid  # the first call takes that child
        assert other.pid() is None
    finally:
        named.close()
        other.close()
    assert pid is not None and gone(pid)


def test_run_once_leaves_no_process() -> None:
    pid = run_once("guarded_helpers:pid", (), Limits(cpu_s=5)).value
    assert isinstance(pid, int) and gone(pid)


_PARENT = """
import sys
from ocllm.scoring.guarded import Limits, Service
service = Service("test-orphan")
print(service.call("guarded_helpers:pid", (), Limits(cpu_s=5)).value, flush=True)
service.call("guarded_helpers:big_power", (), Limits(cpu_s=600))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_parent_killed_outright_takes_its_child_with_it_even_inside_one_long_c_call() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)])}
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, env=env, start_new_session=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        # The child is inside pow(): its CPU time moves on (so its interpreter is held, no thread of its own runs).
        start = cpu_seconds(child)
        assert wait_until(lambda: cpu_seconds(child) > start + 0.5)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert wait_until(lambda: gone(child)), "the child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
