"""Running a task's program and reading what happened into outcomes (docs/scoring/code.md, C7-C9 and "Trust").

A function task runs as two boxes of the isolation module (`scoring/isolation/boxes.py`): the program's box, where
the model's program runs and answers calls (`harness/program_side.py`), and the tests' box, where the task's code
prefix and tests run and call it through a channel of plain data (`harness/tests_side.py`), which alone writes the
report. A standard-input task's program runs once per test, in one box (`harness/stdin_side.py`), and its output is
compared here. Each group of boxes is one costly check of the guarded place (`scoring/guarded.py`): a `Service` child
per process (the decision workers' each) supervises one group at a time. The guarded call's own limits only bound the
supervisor; the boxes' limits are the isolation module's, enforced by the supervisor.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

import msgspec

from ocllm.scoring.code.decision import CodeLimits, Outcome, ProgramRun, Sandbox, TestResult, TimeoutKind
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.code.harness import script
from ocllm.scoring.guarded import Limits, Service
from ocllm.scoring.isolation.boxes import Box, BoxRan, Group, GroupRan, Link
from ocllm.scoring.isolation.sandboxes import Found, Refused

HEAD_BYTES = 4096  # of each stream, kept in the decision
_service = Service("code-sandbox")
# The supervisor's own bounds, far past any program's: it uses little CPU itself, but a program's CPU time reaches
# it once bubblewrap is waited for (a fork bomb's processes each run until the supervisor's next look).
_SUPERVISOR_CPU_MARGIN_S = 30.0
_SUPERVISOR_STALL_FACTOR = 12
_REPLY_MARGIN_BYTES = 20 * 1024**2  # the report (at most 16 MiB kept) and the rest of the supervisor's reply
_SHARED = ("channel.py", "limits.py")
PROGRAM, TESTS = "program", "tests"


class Verdict(NamedTuple):
    outcome: Outcome
    reason: str
    sandbox: Sandbox
    runs: list[ProgramRun]
    tests: list[TestResult]
    report: dict[str, Any] | None = None  # a function task's report from the tests' box, as it came


def refusal(limits: CodeLimits) -> Verdict | None:
    """The refusal every code task gets when no sandbox can run a program (its answer's code or none), else None:
    asked of the guarded child, which probes the sandbox once."""
    result = _service.call("ocllm.scoring.isolation.sandboxes:find_sandbox", (), Limits(cpu_s=60.0, stall_s=300.0))
    if result.status == "done" and isinstance(result.value, Found):
        return None
    reason = result.value.reason if result.status == "done" else f"the sandbox could not be probed ({result.detail})"
    return _refused(limits, reason, 0)


def run_task(task: CodeTask, program: str, limits: CodeLimits, *, cut: bool) -> Verdict:
    """Run `program` against the task's tests; a standard-input task's tests each in a box of their own, stopping at
    the first test that does not pass (the rest are `not_run`)."""
    if task.io_tests:
        return _stdin_task(task, program, limits, cut=cut)
    ran = _run(function_group(task, program, limits))
    if isinstance(ran, Refused):
        return _refused(limits, ran.reason, 1)
    run, result, outcome, reason = _function_result(ran, limits, cut=cut)
    sandbox = _sandbox(limits, ran, tests_apart=True)
    return Verdict(outcome, reason, sandbox, [run], [result], _report(ran.boxes.get(TESTS)))


def _box_limits(limits: CodeLimits, cpu_s: float) -> dict[str, Any]:
    fields = msgspec.structs.asdict(limits)
    fields["cpu_s"] = cpu_s
    fields["wall_s"] = limits.wall_for(cpu_s)
    return fields


def _box(name: str, side: str, files: dict[str, str], limits: CodeLimits, cpu_s: float, **options: Any) -> Box:
    job = {"limits": _box_limits(limits, cpu_s), **options.pop("job", {})}
    every = {**files, side: script(side), "job.json": json.dumps(job), **{name: script(name) for name in _SHARED}}
    return Box(
        name=name, files=every, script=side, memory_bytes=limits.memory_bytes, file_bytes=limits.file_bytes,
        processes=limits.processes, **options,
    )  # fmt: skip


def function_group(task: CodeTask, program: str, limits: CodeLimits) -> Group:
    """A function task's two boxes: the program's, with the program alone, and the tests', with the code prefix and
    the tests; the calls go from the tests to the program, the replies back."""
    entry = {"entry_point": task.entry_point or ""}
    program_box = _box(PROGRAM, "program_side.py", {"solution.py": program}, limits, limits.cpu_s, job=entry)
    tests_files = {"tests.py": task.test or "", "prefix.py": task.code_prefix or ""}
    tests_box = _box(TESTS, "tests_side.py", tests_files, limits, limits.cpu_s, job=entry, report=True)
    links = (Link("calls", TESTS, PROGRAM), Link("replies", PROGRAM, TESTS))
    return Group(
        boxes=(program_box, tests_box), links=links, primary=TESTS, cpu_s=limits.cpu_s,
        wall_s=limits.wall_for(limits.cpu_s), output_bytes=limits.output_bytes,
    )  # fmt: skip


def stdin_group(program: str, stdin: str, limits: CodeLimits) -> Group:
    """A standard-input test's one box: the program, its input as its standard input, all its output kept."""
    files = {"solution.py": program, "stdin": stdin}
    box = _box(PROGRAM, "stdin_side.py", files, limits, limits.stdin_cpu_s, stdin_file="stdin",
               keep_stdout=limits.output_bytes, report=True)  # fmt: skip
    return Group(
        boxes=(box,), links=(), primary=PROGRAM, cpu_s=limits.stdin_cpu_s, wall_s=limits.wall_for(limits.stdin_cpu_s),
        output_bytes=limits.output_bytes,
    )  # fmt: skip


def _stdin_task(task: CodeTask, program: str, limits: CodeLimits, *, cut: bool) -> Verdict:
    tests = task.io_tests or []
    runs: list[ProgramRun] = []
    results: list[TestResult] = []
    sandbox: Sandbox | None = None
    verdict: tuple[Outcome, str] = ("passed", f"the program passed all {len(tests)} tests")
    for index, test in enumerate(tests):
        ran = _run(stdin_group(program, test.input, limits))
        if isinstance(ran, Refused):
            return _refused(limits, ran.reason, len(tests))
        sandbox = _sandbox(limits, ran, tests_apart=False)
        run, result, outcome, reason = _stdin_result(index, ran, test.output, limits, cut=cut)
        runs.append(run)
        results.append(result)
        if outcome != "passed":
            verdict = (outcome, f"test {index + 1} of {len(tests)}: {reason}")
            results += [TestResult(index=i, result="not_run") for i in range(index + 1, len(tests))]
            break
    assert sandbox is not None
    return Verdict(verdict[0], verdict[1], sandbox, runs, results)


def _run(group: Group) -> GroupRan | Refused:
    # Its reply holds what each box wrote of each stream (a standard-input task's whole output, up to the output
    # limit) and the report: sized from the limits, so that a program that reaches its output limit is output_limit,
    # not a reply too large to send back.
    reply = 2 * group.output_bytes + _REPLY_MARGIN_BYTES
    guard = Limits(
        cpu_s=2 * group.cpu_s + _SUPERVISOR_CPU_MARGIN_S, stall_s=_SUPERVISOR_STALL_FACTOR * group.wall_s,
        reply_bytes=reply,
    )  # fmt: skip
    result = _service.call("ocllm.scoring.isolation.boxes:run_group", (group,), guard)
    if result.status == "done":
        return result.value  # type: ignore[no-any-return]
    if result.status == "limit" and result.limit == "cpu":
        # The supervisor is charged with the boxes' CPU time once they are waited for: a program past its limit.
        none = BoxRan(PROGRAM, None, "SIGKILL", b"", b"", 0, 0, None)
        return GroupRan(boxes={PROGRAM: none}, cpu_s=group.cpu_s, wall_s=0.0, elapsed_s=0.0, timeout="cpu")
    return Refused(f"the sandbox's supervisor could not run the program ({result.detail})")


def _refused(limits: CodeLimits, reason: str, tests: int) -> Verdict:
    sandbox = Sandbox(kind=None, version=None, interpreter=None, python_version=None, limits=limits, refused=reason)
    not_run = [TestResult(index=i, result="not_run") for i in range(tests)]
    return Verdict("sandbox_refused", reason, sandbox, [], not_run)


def _sandbox(limits: CodeLimits, ran: GroupRan, *, tests_apart: bool) -> Sandbox:
    found = ran.found
    if found is None:  # the supervisor was stopped before it said where the program ran
        return Sandbox(kind=None, version=None, interpreter=None, python_version=None, limits=limits)
    return Sandbox(
        kind=found.kind, version=found.version, interpreter=found.image or found.interpreter,
        python_version=found.python_version, limits=limits, seccomp=found.seccomp or None, tests_apart=tests_apart,
    )  # fmt: skip


def _report(box: BoxRan | None) -> dict[str, Any] | None:
    if box is None or not box.report:
        return None
    try:
        report = json.loads(box.report.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


def _program_run(ran: GroupRan, report: dict[str, Any] | None, *, calls: int | None = None) -> ProgramRun:
    box = ran.boxes.get(PROGRAM) or BoxRan(PROGRAM, None, None, b"", b"", 0, 0, None)
    return ProgramRun(
        exit_status=box.exit_status, signal=box.signal, cpu_s=ran.cpu_s, wall_s=ran.wall_s,
        stdout_head=_head(box.stdout), stderr_head=_head(box.stderr), stdout_bytes=box.stdout_bytes,
        stderr_bytes=box.stderr_bytes, timeout=_timeout_kind(ran, box),
        memory_limit=bool(report and report.get("status") == "memory"), output_limit=ran.output_limit is not None,
        calls=calls,
    )  # fmt: skip


def _timeout_kind(ran: GroupRan, box: BoxRan) -> TimeoutKind | None:
    if ran.timeout is None:
        return "cpu" if box.signal == "SIGXCPU" else None
    return "cpu" if ran.timeout == "cpu" else "wall"


def _head(data: bytes) -> str:
    return data[:HEAD_BYTES].decode("utf-8", errors="replace")


def _limit_outcome(ran: GroupRan, report: dict[str, Any] | None, cpu_s: float) -> tuple[Outcome, str] | None:
    """The limits reached, which decide before anything the program wrote (C9)."""
    signals = {box.signal for box in ran.boxes.values()}
    if ran.timeout == "cpu" or "SIGXCPU" in signals:
        return "timeout", f"the program reached its CPU-time limit of {cpu_s:g} s"
    if ran.timeout == "wall":
        return "timeout", "the program reached its wall-time limit (time not spent waiting for a CPU), mostly blocked"
    if ran.timeout == "backstop":
        return "timeout", "the program ran past the elapsed-time backstop (the machine was too loaded to tell)"
    if ran.output_limit is not None:
        who = "the program" if ran.output_limit == PROGRAM else "the tests"
        return "output_limit", f"{who} wrote more than the output limit to one stream"
    if report is not None and report.get("status") == "memory":
        return "memory_limit", "the program reached its memory limit (MemoryError)"
    return None


def _raised(report: dict[str, Any]) -> str:
    message = str(report.get("message") or "")
    return f"{report.get('type')}: {message}" if message else str(report.get("type"))


def _function_result(ran: GroupRan, limits: CodeLimits, *, cut: bool) -> tuple[ProgramRun, TestResult, Outcome, str]:
    report = _report(ran.boxes.get(TESTS))
    calls = report.get("calls") if report is not None and isinstance(report.get("calls"), int) else None
    run = _program_run(ran, report, calls=calls)
    outcome, reason = _function_outcome(ran, report, limits, cut=cut)
    result = {
        "passed": "passed", "failed_assertion": "failed", "timeout": "timeout", "memory_limit": "memory_limit",
        "output_limit": "output_limit",
    }.get(outcome, "error")  # fmt: skip
    return run, TestResult(index=0, result=result, detail=reason), outcome, reason  # type: ignore[arg-type]


def _function_outcome(
    ran: GroupRan, report: dict[str, Any] | None, limits: CodeLimits, *, cut: bool
) -> tuple[Outcome, str]:
    limited = _limit_outcome(ran, report, limits.cpu_s)
    if limited is not None:
        return limited
    if report is None:
        return "tests_error", f"the tests' box {_ended(ran.boxes.get(TESTS))} without a report"
    status = report.get("status")
    calls = report.get("calls")
    if status == "passed":
        return "passed", f"check(candidate) returned after {calls} call(s) of the program: it passed its tests"
    if status == "failed_assertion":
        return "failed_assertion", f"the tests failed after {calls} call(s) of the program: {_raised(report)}"
    if status == "syntax_error":
        return "syntax_error", _syntax_error(report, cut)
    if status == "entry_point_missing":
        return "exception", f"the entry point is missing: {report.get('message')}"
    if status == "exit":
        when = "while its definitions ran" if report.get("phase") == "program" else "during a call of the tests"
        return "exception", f"the program exited ({_raised(report)}) {when}, before the tests completed"
    if status == "exception":
        where = "while its definitions ran" if report.get("phase") == "program" else "under the tests"
        return "exception", f"the program raised {_raised(report)} {where}"
    if status == "program_ended":
        when = "while its definitions ran" if report.get("phase") == "load" else "during a call of the tests"
        return "exception", f"the program {_ended(ran.boxes.get(PROGRAM))} {when}, before the tests completed"
    if status == "result_cannot_cross" and report.get("type") == "size":
        return "output_limit", f"the program returned a value larger than the output limit ({report.get('message')})"
    if status == "argument_cannot_cross" and report.get("type") == "size":
        said = report.get("message")
        return "tests_error", f"the tests pass the program arguments larger than the output limit ({said})"
    if status == "result_cannot_cross":
        return "exception", (
            f"the program returned {_article(report.get('type'))}, which cannot cross to the tests: only plain data "
            "does (None, bool, numbers, str, bytes, list, tuple, dict, set and a few library value types: "
            "docs/scoring/code.md, \"Trust\")"
        )
    if status == "unreadable":
        return "exception", f"the program's box sent what is not a message of plain data ({report.get('message')})"
    if status == "argument_cannot_cross":
        return "tests_error", (
            f"the tests pass the program {_article(report.get('type'))}, which cannot cross to it (only plain data "
            "does): this task cannot be run with its tests apart from the program"
        )
    if status == "tests_do_not_compile":
        return "tests_error", f"the task's tests do not compile in the sandbox's Python: {report.get('message')}"
    if status == "tests_error":
        where = "the task's code prefix" if report.get("phase") == "prefix" else "the tests"
        return "tests_error", f"{where} raised {_raised(report)} before any call reached the program"
    return "exception", f"the tests' box reported {status!r}: {report.get('message')}"


def _article(type_name: object) -> str:
    name = str(type_name or "value")
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _syntax_error(report: dict[str, Any], cut: bool) -> str:
    where = f" (line {report.get('line')})" if report.get("line") else ""
    flagged = "; the answer was cut at max_tokens (finish_reason: length)" if cut else ""
    return f"the program does not compile: {report.get('message')}{where}{flagged}"


def _ended(box: BoxRan | None) -> str:
    if box is None:
        return "did not start"
    if box.signal is not None:
        return f"was ended by {box.signal}"
    return f"exited with code {box.exit_status}"


def _last_line(data: bytes) -> str:
    lines = [line for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


def _stdin_result(
    index: int, ran: GroupRan, expected: str, limits: CodeLimits, *, cut: bool
) -> tuple[ProgramRun, TestResult, Outcome, str]:
    box = ran.boxes[PROGRAM]
    report = _report(box)
    said = _last_line(box.stderr_tail)
    if report is None and box.exit_status not in (None, 0) and said.startswith("MemoryError"):
        report = {"status": "memory"}
    run = _program_run(ran, report)
    limited = _limit_outcome(ran, report, limits.stdin_cpu_s)
    if limited is not None:
        kind = {"timeout": "timeout", "output_limit": "output_limit", "memory_limit": "memory_limit"}[limited[0]]
        return run, TestResult(index=index, result=kind, detail=limited[1]), limited[0], limited[1]  # type: ignore[arg-type]
    if report is not None and report.get("status") == "syntax_error":
        reason = _syntax_error(report, cut)
        return run, TestResult(index=index, result="error", detail=reason), "syntax_error", reason
    if box.exit_status != 0:
        raised = f": {said}" if said else ""
        reason = f"the program {_ended(box)}{raised}"
        return run, TestResult(index=index, result="error", detail=reason), "exception", reason
    printed = box.stdout.decode("utf-8", errors="replace")
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
