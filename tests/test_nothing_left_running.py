"""No process ocllm started outlives it (issue 29, section 4): `ocllm run` (the forkserver, the decision workers,
multiprocessing's resource tracker, the workers' symbolic children) started in a session of its own, SIGKILLed,
and the whole session walked in /proc until nothing of it is left. Real processes; the simulator on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import BACKSTOP_S, CPU_HEAVY, wait_until
from processes import cpu_seconds, processes, watch_until_gone

from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

REPO = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG are Linux's"),
    pytest.mark.slow,  # ocllm and its children in processes, killed
    CPU_HEAVY,  # killed while its children compute: symbolic checks, a long C call
]


def session_members(sid: int) -> dict[int, str]:
    """Every living process whose session id is `sid`, with its command line (zombies, which hold nothing, left
    out: a container's init may be slow to reap the orphans)."""
    return {p.pid: p.command for p in processes() if p.state != "Z" and p.session == sid}


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])}


def kill_and_expect_an_empty_session(proc: subprocess.Popen[bytes]) -> None:
    sid = proc.pid  # start_new_session: the session (and process group) is named after it
    try:
        children = set(session_members(sid)) - {proc.pid}
        proc.send_signal(signal.SIGKILL)  # no cleanup at all: every child must go by itself
        proc.wait()
        watched = watch_until_gone(children, BACKSTOP_S)
        assert wait_until(lambda: not session_members(sid)), f"left running: {session_members(sid)}"
        # Gone the moment ocllm went, not once a decision, a C call or a check's CPU limit (seconds of CPU) was over:
        # CPU time says which, however loaded the machine.
        assert max(watched.cpu_s.values(), default=0.0) < 1.0, f"computed on after the kill: {watched.cpu_s}"
    finally:
        with_group_killed(sid)


def with_group_killed(pgid: int) -> None:
    # Whatever a failed test left behind (its group is the session's, started with start_new_session).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def killed_under_way(args: list[str], under_way: Callable[[int], bool]) -> str:
    """Start ocllm with `args` in a session of its own, wait until `under_way(its pid)`, SIGKILL it and expect its
    whole session gone; what it said on stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ocllm", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True, env=env(),
    )  # fmt: skip
    try:
        assert wait_until(lambda: under_way(proc.pid)), f"it should be under way: {session_members(proc.pid)}"
    except AssertionError:
        with_group_killed(proc.pid)
        raise
    kill_and_expect_an_empty_session(proc)
    return proc.stderr.read().decode() if proc.stderr else ""


def scoring_under_way(samples: Path) -> Callable[[int], bool]:
    # ocllm, the resource tracker, the forkserver and at least one worker; some answers in.
    return lambda pid: samples.exists() and samples.read_bytes().count(b"\n") >= 2 and len(session_members(pid)) >= 4


def test_a_killed_run_leaves_nothing_of_its_session_running(tmp_path: Path) -> None:
    # The math suite: its decisions reach the workers, and a worker may start its symbolic child.
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()), latency_s=0.05)) as server:
        out = tmp_path / "run"
        args = [
            "run", "--suite", "demo-math", "--base-url", server.base_url, "--model", "sim-reasoning",
            "--concurrency", "2", "--out", str(out),
        ]  # fmt: skip
        stderr = killed_under_way(args, scoring_under_way(out / "samples.jsonl"))
    assert "leaked semaphore" not in stderr  # the tracker's cleaning after the kill is not the user's business


def test_a_killed_matrix_leaves_nothing_of_its_session_running(tmp_path: Path) -> None:
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()), latency_s=0.05)) as server:
        lanes = tmp_path / "lanes.toml"
        lanes.write_text(
            f'[defaults]\nbase_url = "{server.base_url}"\nmodel = "sim-reasoning"\nconcurrency = 2\n'
            'suite = "demo-math"\n[lanes.first]\n[lanes.second]\ntemperature = 0.5\n'
        )
        out = tmp_path / "runs"
        stderr = killed_under_way(
            ["matrix", str(lanes), "--out", str(out)], scoring_under_way(out / "first" / "samples.jsonl")
        )
    assert "leaked semaphore" not in stderr


def test_a_killed_rescore_leaves_nothing_of_its_session_running(tmp_path: Path) -> None:
    # Math answers whose symbolic checks each run into their CPU-time limit: the guarded child is computing.
    tasks = [
        {"task_id": f"m{i}", "task_type": "math", "category": "algebra", "question": "q", "expected_answer": "2",
         "raw_content": f"So the answer is $\\boxed{{(x+1)^{{{3000 + i}}}}}$.", "finish_reason": "stop"}
        for i in range(6)
    ]  # fmt: skip
    source = tmp_path / "costly.json"
    source.write_text(json.dumps({"lane": "L", "tasks": tasks}))

    def computing(pid: int) -> bool:
        return any(cpu_seconds(c) >= 1.0 and "ocllm-guarded" in cmd for c, cmd in session_members(pid).items())

    killed_under_way(["rescore", str(source), "-o", str(tmp_path / "out.json")], computing)


# The stand-in for ocllm: a decision pool whose one worker decides with `hold_the_interpreter`.
_HOLDER = """
import asyncio, sys
from ocllm.models import Policy, Sample
from ocllm.scoring.mcq.fields import McqTask
from ocllm.run.decision_pool import DecisionPool
from pool_helpers import hold_the_interpreter
pool = DecisionPool(1, decider=hold_the_interpreter)
pool.start()
print("started", flush=True)
task = McqTask(id="t", question="q", options=["a", "b"], answer="A", category="c")
asyncio.run(pool.decide(task, Sample(task_id="t", content="A"), Policy()))
"""


def test_a_worker_inside_a_long_c_call_dies_with_ocllm() -> None:
    # A decision holding the interpreter (one big-integer power, seconds of C): no thread of the worker can run to
    # see that ocllm has gone; the kernel must end it (PR_SET_PDEATHSIG), the moment ocllm goes.
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
        env=env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"started\n"

        def deciding() -> bool:
            # The worker (not the stand-in, nor the forkserver, nor the tracker) well into its power.
            return any(
                cpu_seconds(pid) >= 0.5 and pid != proc.pid and "forkserver" in cmd
                for pid, cmd in session_members(proc.pid).items()
            )

        assert wait_until(deciding), f"no worker started deciding: {session_members(proc.pid)}"
    except AssertionError:
        with_group_killed(proc.pid)
        raise
    kill_and_expect_an_empty_session(proc)
