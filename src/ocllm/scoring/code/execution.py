"""Running a task's program and reading what happened into outcomes (docs/scoring/code.md, C7-C9).

Each program run is one costly check of the guarded place (`scoring/guarded.py`): a `Service` child per process
(the decision workers' each) supervises one sandbox at a time (`sandbox.run_program`). The guarded call's own
limits only bound the supervisor; the program's limits are the sandbox's, enforced by the supervisor. What a run
did becomes a `ProgramRun` and a `TestResult`, and the task's outcome is the first test's that did not pass.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

import msgspec

from ocllm.scoring.code.decision import CodeLimits, Outcome, ProgramRun, Sandbox, TestResult, TimeoutKind
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.code.sandbox import HEAD_BYTES, Found, Job, Ran, Refused
from ocllm.scoring.guarded import Limits, Service

_service = Service("code-sandbox")
# The supervisor's own bounds, far past any program's: it uses little CPU itself, but a program's CPU time reaches
# it once bubblewrap is waited for (a fork bomb's processes each run until the supervisor's next look).
_SUPERVISOR_CPU_MARGIN_S = 30.0
_SUPERVISOR_STALL_FACTOR = 12
_REPLY_MARGIN_BYTES = 4 * 1024**2  # the report (at most 1 MiB kept) and the rest of the supervisor's reply


class Verdict(NamedTuple):
    outcome: Outcome
    reason: str
    sandbox: Sandbox
    runs: list[ProgramRun]
    tests: list[TestResult]


def refusal(limits: CodeLimits) -> Verdict | None:
    """The refusal every code task gets when no sandbox can run a program (its answer's code or none), else None:
    asked of the guarded child, which probes the sandbox once."""
    result = _service.call("ocllm.scoring.code.sandbox:find_sandbox", (), Limits(cpu_s=60.0, stall_s=300.0))
    if result.status == "done" and isinstance(result.value, Found):
        return None
    reason = result.value.reason if result.status == "done" else f"the sandbox could not be probed ({result.detail})"
    return _refused(limits, reason, 0)


def run_task(task: CodeTask, program: str, limits: CodeLimits, *, cut: bool) -> Verdict:
    """Run `program` against the task's tests, each run in a sandbox of its own; stop at the first test that does
    not pass (the rest are `not_run`)."""
    if task.io_tests:
        return _stdin_task(task, program, limits, cut=cut)
    job_limits = _job_limits(limits, limits.cpu_s)
    job = Job("function", program, job_limits, tests=task.test or "", entry_point=task.entry_point or "")
    ran = _run(job)
    if isinstance(ran, Refused):
        return _refused(limits, ran.reason, 1)
    run, result, outcome, reason = _function_result(ran, limits, cut=cut)
    return Verdict(outcome, reason, _sandbox(limits, ran), [run], [result])


def _stdin_task(task: CodeTask, program: str, limits: CodeLimits, *, cut: bool) -> Verdict:
    tests = task.io_tests or []
    runs: list[ProgramRun] = []
    results: list[TestResult] = []
    sandbox: Sandbox | None = None
    verdict: tuple[Outcome, str] = ("passed", f"the program passed all {len(tests)} tests")
    for index, test in enumerate(tests):
        ran = _run(Job("stdin", program, _job_limits(limits, limits.stdin_cpu_s), stdin=test.input))
        if isinstance(ran, Refused):
            return _refused(limits, ran.reason, len(tests))
        sandbox = _sandbox(limits, ran)
        run, result, outcome, reason = _stdin_result(index, ran, test.output, limits, cut=cut)
        runs.append(run)
        results.append(result)
        if outcome != "passed":
            verdict = (outcome, f"test {index + 1} of {len(tests)}: {reason}")
            results += [TestResult(index=i, result="not_run") for i in range(index + 1, len(tests))]
            break
    assert sandbox is not None
    return Verdict(verdict[0], verdict[1], sandbox, runs, results)


def _job_limits(limits: CodeLimits, cpu_s: float) -> dict[str, Any]:
    fields = msgspec.structs.asdict(limits)
    fields["cpu_s"] = cpu_s
    fields["wall_s"] = limits.wall_for(cpu_s)
    return fields


def _run(job: Job) -> Ran | Refused:
    cpu = float(job.limits["cpu_s"])
    # Its reply holds what the program wrote of each stream (a standard-input task's whole output, up to the output
    # limit) and the report: sized from the job's limits, so that a program that reaches its output limit is
    # output_limit, not a reply too large to send back.
    reply = 2 * int(job.limits["output_bytes"]) + _REPLY_MARGIN_BYTES
    guard = Limits(
        cpu_s=2 * cpu + _SUPERVISOR_CPU_MARGIN_S, stall_s=_SUPERVISOR_STALL_FACTOR * job.limits["wall_s"],
        reply_bytes=reply,
    )  # fmt: skip
    result = _service.call("ocllm.scoring.code.sandbox:run_program", (job,), guard)
    if result.status == "done":
        return result.value  # type: ignore[no-any-return]
    if result.status == "limit" and result.limit == "cpu":
        # The supervisor is charged with the program's CPU time once it is waited for: a program past its limit.
        return Ran(None, None, "SIGKILL", cpu, 0.0, 0.0, b"", b"", 0, 0, timeout="cpu")
    return Refused(f"the sandbox's supervisor could not run the program ({result.detail})")


def _refused(limits: CodeLimits, reason: str, tests: int) -> Verdict:
    sandbox = Sandbox(kind=None, version=None, interpreter=None, python_version=None, limits=limits, refused=reason)
    not_run = [TestResult(index=i, result="not_run") for i in range(tests)]
    return Verdict("sandbox_refused", reason, sandbox, [], not_run)


def _sandbox(limits: CodeLimits, ran: Ran) -> Sandbox:
    found = ran.found
    if found is None:  # the supervisor was stopped before it said where the program ran
        return Sandbox(kind=None, version=None, interpreter=None, python_version=None, limits=limits)
    return Sandbox(
        kind=found.kind, version=found.version, interpreter=found.image or found.interpreter,
        python_version=found.python_version, limits=limits,
    )  # fmt: skip


def _program_run(ran: Ran) -> ProgramRun:
    return ProgramRun(
        exit_status=ran.exit_status, signal=ran.signal, cpu_s=ran.cpu_s, wall_s=ran.wall_s,
        stdout_head=_head(ran.stdout), stderr_head=_head(ran.stderr), stdout_bytes=ran.stdout_bytes,
        stderr_bytes=ran.stderr_bytes, timeout=_timeout_kind(ran),
        memory_limit=bool(ran.report and ran.report.get("status") == "memory"), output_limit=ran.output_limit,
    )  # fmt: skip


def _timeout_kind(ran: Ran) -> TimeoutKind | None:
    if ran.timeout is None:
        return "cpu" if ran.signal == "SIGXCPU" else None
    return "cpu" if ran.timeout == "cpu" else "wall"


def _head(data: bytes) -> str:
    return data[:HEAD_BYTES].decode("utf-8", errors="replace")


def _limit_outcome(ran: Ran, cpu_s: float) -> tuple[Outcome, str] | None:
    """The limits reached, which decide before anything the program wrote (C9)."""
    if ran.timeout == "cpu" or ran.signal == "SIGXCPU":
        return "timeout", f"the program reached its CPU-time limit of {cpu_s:g} s"
    if ran.timeout == "wall":
        return "timeout", "the program reached its wall-time limit (time not spent waiting for a CPU), mostly blocked"
    if ran.timeout == "backstop":
        return "timeout", "the program ran past the elapsed-time backstop (the machine was too loaded to tell)"
    if ran.output_limit:
        return "output_limit", "the program wrote more than its output limit to one stream"
    if ran.report is not None and ran.report.get("status") == "memory":
        return "memory_limit", "the program reached its memory limit (MemoryError)"
    return None


def _raised(report: dict[str, Any]) -> str:
    message = str(report.get("message") or "")
    return f"{report.get('type')}: {message}" if message else str(report.get("type"))


def _function_result(ran: Ran, limits: CodeLimits, *, cut: bool) -> tuple[ProgramRun, TestResult, Outcome, str]:
    run = _program_run(ran)
    outcome, reason = _function_outcome(ran, limits, cut=cut)
    result = {
        "passed": "passed", "failed_assertion": "failed", "timeout": "timeout", "memory_limit": "memory_limit",
        "output_limit": "output_limit",
    }.get(outcome, "error")  # fmt: skip
    return run, TestResult(index=0, result=result, detail=reason), outcome, reason  # type: ignore[arg-type]


def _function_outcome(ran: Ran, limits: CodeLimits, *, cut: bool) -> tuple[Outcome, str]:
    limited = _limit_outcome(ran, limits.cpu_s)
    if limited is not None:
        return limited
    report = ran.report
    if report is None:
        return "exception", _ended_without_report(ran)
    status = report.get("status")
    if status == "passed":
        return "passed", "check(candidate) returned: the program passed its tests"
    if status == "syntax_error":
        return "syntax_error", _syntax_error(report, cut)
    if status == "entry_point_missing":
        return "exception", f"the entry point is missing: {report.get('message')}"
    if status == "exit":
        return "exception", f"the program exited ({_raised(report)}) before the tests completed"
    if status == "exception" and report.get("phase") == "tests" and not report.get("by_program"):
        return "failed_assertion", f"the tests failed: {_raised(report)}"
    if status == "exception":
        where = "while its definitions ran" if report.get("phase") == "program" else "under the tests"
        return "exception", f"the program raised {_raised(report)} {where}"
    if status == "tests_do_not_compile":
        return "exception", f"the task's tests do not compile in the sandbox's Python: {report.get('message')}"
    return "exception", f"the harness reported {status!r}: {report.get('message')}"


def _syntax_error(report: dict[str, Any], cut: bool) -> str:
    where = f" (line {report.get('line')})" if report.get("line") else ""
    flagged = "; the answer was cut at max_tokens (finish_reason: length)" if cut else ""
    return f"the program does not compile: {report.get('message')}{where}{flagged}"


def _ended_without_report(ran: Ran) -> str:
    if ran.signal is not None:
        return f"the program was ended by {ran.signal} before the tests completed"
    if ran.exit_status not in (None, 0):
        return f"the program exited with code {ran.exit_status} before the tests completed"
    return "the program exited (exit code 0) before the tests completed: no pass is counted without the tests' end"


def _stdin_result(
    index: int, ran: Ran, expected: str, limits: CodeLimits, *, cut: bool
) -> tuple[ProgramRun, TestResult, Outcome, str]:
    run = _program_run(ran)
    limited = _limit_outcome(ran, limits.stdin_cpu_s)
    if limited is not None:
        kind = {"timeout": "timeout", "output_limit": "output_limit", "memory_limit": "memory_limit"}[limited[0]]
        return run, TestResult(index=index, result=kind, detail=limited[1]), limited[0], limited[1]  # type: ignore[arg-type]
    report = ran.report or {}
    status = report.get("status")
    if status == "syntax_error":
        reason = _syntax_error(report, cut)
        return run, TestResult(index=index, result="error", detail=reason), "syntax_error", reason
    if status != "finished":
        reason = _ended_without_report(ran) if not report else f"the program raised {_raised(report)}"
        return run, TestResult(index=index, result="error", detail=reason), "exception", reason
    printed = ran.stdout.decode("utf-8", errors="replace")
    differs = first_difference(expected, printed)
    if differs is None:
        return run, TestResult(index=index, result="passed"), "passed", "the output matched"
    line, want, got = differs
    reason = f"line {line} differs: expected {_shown(want)}, printed {_shown(got)}"
    result = TestResult(index=index, result="failed", detail=reason, line=line, expected=want, got=got)
    return run, result, "wrong_output", reason


def _shown(line: str | None) -> str:
    if line is None:
        return "nothing"
    return repr(line if len(line) <= 80 else line[:77] + "...")


def first_difference(expected: str, printed: str) -> tuple[int, str | None, str | None] | None:
    """Where the printed output first differs from the expected one (C6), or None when it matches: line by line,
    each line's trailing whitespace and the trailing empty lines set aside; two lines that differ as text still match
    when they hold the same tokens, numbers compared by value (`1.50` and `1.5`, `-0` and `0`)."""
    want, got = _lines(expected), _lines(printed)
    for number in range(max(len(want), len(got))):
        a = want[number] if number < len(want) else None
        b = got[number] if number < len(got) else None
        if a is None or b is None or not _same_line(a, b):
            return number + 1, a, b
    return None


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _same_line(a: str, b: str) -> bool:
    if a == b:
        return True
    left, right = a.split(), b.split()
    return len(left) == len(right) and all(x == y or _same_number(x, y) for x, y in zip(left, right, strict=True))


def _same_number(a: str, b: str) -> bool:
    try:
        x, y = Decimal(a), Decimal(b)
    except InvalidOperation:
        return False
    return x.is_finite() and y.is_finite() and x == y
