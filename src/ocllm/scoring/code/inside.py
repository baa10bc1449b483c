"""The harness that runs inside the sandbox, around the model's program (docs/scoring/code.md, C7 and C8).

This file is copied into each sandbox and run by the sandbox's own interpreter, alone: it imports the standard
library only and nothing of ocllm. It lowers the process's limits before any of the program runs, compiles the
program and the tests apart, runs them, and writes one report of what happened (JSON) to the report channel the
job names: a file descriptor (bubblewrap passes one through), else a last line on stderr after a marker (a
container engine passes no descriptor).

A function task's report says "passed" only after `check(candidate)` has returned, and carries a nonce the harness
read from its standard input before any of the program ran: a program that exits early (exit(0), os._exit) leaves
no report, which the scorer reads as an exception, never a pass. The nonce guards against an early exit, not
against a program written to forge a pass (it could find the nonce in the harness's memory); the report says what
the program did, and the sandbox is what keeps the host safe.

How an exception is told apart (C8): one whose traceback passes through the program's file (`solution.py`) was
raised by the program (its own assert included): "exception"; one raised in the tests' frames alone is the tests
failing: "failed_assertion" (an AssertionError or another exception, whose kind is kept).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import traceback
from types import CodeType
from typing import Any, NoReturn

PROGRAM_FILE = "solution.py"
TESTS_FILE = "tests.py"
REPORT_MARK = "\x00ocllm-report "
_TAIL_LINES = 12


def _set_limits(limits: dict[str, Any]) -> None:
    """Lower this process's limits (inherited by whatever it starts) before any of the program runs."""
    cpu = int(limits["cpu_s"]) + 1  # RLIMIT_CPU is whole seconds: the supervisor's finer count decides first
    wanted = [
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_CPU, cpu, cpu + 1),  # SIGXCPU at the soft limit, SIGKILL at the hard one if it is caught
        (resource.RLIMIT_AS, limits["memory_bytes"], limits["memory_bytes"]),
        (resource.RLIMIT_NPROC, limits["processes"], limits["processes"]),
        (resource.RLIMIT_FSIZE, limits["file_bytes"], limits["file_bytes"]),
        (resource.RLIMIT_NOFILE, limits["open_files"], limits["open_files"]),
    ]
    for which, soft, hard in wanted:
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))


class _Reporter:
    def __init__(self, job: dict[str, Any]) -> None:
        self.fd = job.get("report_fd")
        self.pid = os.getpid()

    def send(self, report: dict[str, Any]) -> NoReturn:
        if os.getpid() != self.pid:
            os._exit(1)  # a process the program forked reached the harness's code: only the harness's own reports
        text = json.dumps(report)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if self.fd is not None:
            data = text.encode()
            while data:
                data = data[os.write(self.fd, data) :]
        else:
            os.write(2, (REPORT_MARK + text + "\n").encode())
        os._exit(0)  # no atexit handler or thread of the program's runs after the report


def _tail(exc: BaseException) -> list[str]:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(lines).splitlines()[-_TAIL_LINES:]


def _raised_by_program(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == PROGRAM_FILE:
            return True
        tb = tb.tb_next
    return False


def _exception(phase: str, exc: BaseException) -> dict[str, Any]:
    kind = "memory" if isinstance(exc, MemoryError) else "exception"
    if isinstance(exc, SystemExit):
        kind = "exit"
    return {
        "status": kind,
        "phase": phase,
        "type": type(exc).__name__,
        "message": str(exc)[:2000],
        "by_program": _raised_by_program(exc),
        "traceback": _tail(exc),
    }


def _compile(source: str, filename: str) -> tuple[CodeType | None, dict[str, Any] | None]:
    try:
        return compile(source, filename, "exec", dont_inherit=True), None
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        return None, {
            "status": "syntax_error",
            "type": type(exc).__name__,
            "message": str(getattr(exc, "msg", exc))[:2000],
            "line": getattr(exc, "lineno", None),
            "offset": getattr(exc, "offset", None),
            "text": (getattr(exc, "text", None) or "")[:500],
        }


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _function_task(job: dict[str, Any], reporter: _Reporter) -> NoReturn:
    nonce = sys.stdin.readline().strip()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the program reads nothing: input() ends at once
    program, problem = _compile(_read(job["program"]), PROGRAM_FILE)
    if problem is not None:
        reporter.send(problem)
    tests, problem = _compile(_read(job["tests"]), TESTS_FILE)
    if problem is not None:
        reporter.send({**problem, "status": "tests_do_not_compile"})
    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        exec(program, namespace)
    except BaseException as exc:
        reporter.send(_exception("program", exc))
    candidate = namespace.get(job["entry_point"])
    if not callable(candidate):
        found = "not defined" if candidate is None else f"a {type(candidate).__name__}, not a function"
        reporter.send({"status": "entry_point_missing", "message": f"{job['entry_point']} is {found}"})
    test_namespace = {"__name__": "tests", "__builtins__": __builtins__}
    try:
        exec(tests, test_namespace)
        test_namespace["check"](candidate)
    except BaseException as exc:
        reporter.send(_exception("tests", exc))
    reporter.send({"status": "passed", "nonce": nonce})


def _stdin_task(job: dict[str, Any], reporter: _Reporter) -> NoReturn:
    program, problem = _compile(_read(job["program"]), PROGRAM_FILE)
    if problem is not None:
        reporter.send(problem)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(program, namespace)
    except SystemExit as exc:
        if exc.code in (None, 0):
            reporter.send({"status": "finished"})  # sys.exit() is how many a contest program ends
        reporter.send(_exception("program", exc))
    except BaseException as exc:
        reporter.send(_exception("program", exc))
    reporter.send({"status": "finished"})


def main() -> None:
    job = json.loads(_read(sys.argv[1]))
    _set_limits(job["limits"])
    reporter = _Reporter(job)
    if job["kind"] == "function":
        _function_task(job, reporter)
    else:
        _stdin_task(job, reporter)


if __name__ == "__main__":
    main()
