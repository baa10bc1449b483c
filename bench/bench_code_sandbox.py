"""What running a code task's program costs: the sandbox's start per program, and decisions per second.

    PYTHONPATH=src .venv/bin/python bench/bench_code_sandbox.py [--rounds R] [--workers 1,2,4] [--throughput-rounds T]

1. Start cost. The same small programs (30 HumanEval-shaped function programs: a correct function and a
   `check(candidate)` of a few asserts; 5 standard-input programs with 3 tests each, each test one program run), R
   rounds (default 2), each program run in turn
   (a) through `sandbox.run_program` (bubblewrap, called in this process),
   (b) through the guarded child as `decide_code` calls it (`execution._run`: a pickle to the "code-sandbox" service's
       child, which calls `run_program`),
   (c) bare: the interpreter the sandbox uses (`python3 -I`) running the same harness (`scoring/code/inside.py`) on
       the same job files, in a folder made and removed per program as the sandbox's is, with the same pipes and
       report descriptor, as the same user, without bubblewrap.
   Each run is checked (the harness's report says passed, or the printed output is the expected one). Printed: the
   median and 90th percentile of the wall time per program, and the CPU per program: the children's (this process's
   `getrusage(RUSAGE_CHILDREN)` deltas, and for (b) the guarded child's own from /proc, since it is not reaped
   between calls) and this process's own (for (a) the supervisor: the job folder, the watch loop). (a) less (c) is
   the sandbox's start cost. This process is made a child subreaper: bubblewrap exits without waiting for its
   sandbox's first process, which has reaped the program, so that process (and the program's CPU time) comes back
   here to be reaped and counted; without it, neither RUSAGE_CHILDREN nor the guarded child would see the program's
   CPU time. Then empty programs (`python3 -I -c pass`, the harness's imports alone, the same in bubblewrap, and
   bubblewrap running /bin/true), 10 x R runs each, to say where the start's time goes.
2. Throughput. `scoring.decide` on CodeTask + Sample pairs (each answer a fenced Python block: the function, or the
   standard-input program) through the project's decision pool (`run/decision_pool.py`, as `ocllm run` decides) with
   W workers (default 1, 2 and 4): the pool started and each worker's guarded child warmed first, then all
   T rounds (default 2) of the 35 tasks submitted at once. Printed: decisions and program runs per second, and the
   CPU time of the whole process tree per program (from /proc, before the pool is closed).

Prints the machine (`nproc`, the CPU model, Python, bubblewrap) and the load average before and after each part.
Exit status 1 if any program did not pass. docs/performance.md ("Code sandbox") records the result.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import os
import platform
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ocllm.models import Policy, Sample, Task
from ocllm.run.decision_pool import DecisionPool
from ocllm.scoring.code import execution, sandbox
from ocllm.scoring.code.decision import CodeLimits
from ocllm.scoring.code.fields import CodeTask, IoTest
from ocllm.scoring.code.sandbox import Job, Ran, Refused

# (entry point, signature and docstring as HumanEval's prompt, the function a model writes, the asserts of check)
FUNCTIONS: list[tuple[str, str, str, list[str]]] = [
    ("has_close_elements", "def has_close_elements(numbers: List[float], threshold: float) -> bool:",
     "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])",
     ["candidate([1.0, 2.0, 3.9, 4.0], 0.3) is True", "candidate([1.0, 2.0, 3.0], 0.5) is False"]),
    ("below_zero", "def below_zero(operations: List[int]) -> bool:",
     "    total = 0\n    for op in operations:\n        total += op\n        if total < 0:\n            return True\n"
     "    return False",
     ["candidate([]) is False", "candidate([1, 2, -4, 5]) is True", "candidate([1, -1, 2]) is False"]),
    ("truncate_number", "def truncate_number(number: float) -> float:",
     "    return number % 1.0",
     ["candidate(3.5) == 0.5", "abs(candidate(1.33) - 0.33) < 1e-6"]),
    ("mean_absolute_deviation", "def mean_absolute_deviation(numbers: List[float]) -> float:",
     "    mean = sum(numbers) / len(numbers)\n    return sum(abs(x - mean) for x in numbers) / len(numbers)",
     ["abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6", "abs(candidate([1.0, 2.0]) - 0.5) < 1e-6"]),
    ("intersperse", "def intersperse(numbers: List[int], delimeter: int) -> List[int]:",
     "    out = []\n    for i, n in enumerate(numbers):\n        if i:\n            out.append(delimeter)\n"
     "        out.append(n)\n    return out",
     ["candidate([], 7) == []", "candidate([5, 6, 3, 2], 8) == [5, 8, 6, 8, 3, 8, 2]"]),
    ("filter_by_substring", "def filter_by_substring(strings: List[str], substring: str) -> List[str]:",
     "    return [s for s in strings if substring in s]",
     ["candidate([], 'john') == []", "candidate(['xxx', 'asd', 'xxy', 'aaaxxy'], 'xx') == ['xxx', 'xxy', 'aaaxxy']"]),
    ("sum_product", "def sum_product(numbers: List[int]) -> Tuple[int, int]:",
     "    product = 1\n    for n in numbers:\n        product *= n\n    return sum(numbers), product",
     ["candidate([]) == (0, 1)", "candidate([3, 5, 7]) == (15, 105)"]),
    ("rolling_max", "def rolling_max(numbers: List[int]) -> List[int]:",
     "    out, best = [], None\n    for n in numbers:\n        best = n if best is None else max(best, n)\n"
     "        out.append(best)\n    return out",
     ["candidate([]) == []", "candidate([3, 2, 3, 100, 3]) == [3, 3, 3, 100, 100]"]),
    ("make_palindrome", "def make_palindrome(string: str) -> str:",
     "    for i in range(len(string) + 1):\n        if string[i:] == string[i:][::-1]:\n"
     "            return string + string[:i][::-1]\n    return string",
     ["candidate('') == ''", "candidate('cat') == 'catac'", "candidate('jerry') == 'jerryrrej'"]),
    ("string_xor", "def string_xor(a: str, b: str) -> str:",
     "    return ''.join('0' if x == y else '1' for x, y in zip(a, b))",
     ["candidate('111000', '101010') == '010010'", "candidate('1', '1') == '0'"]),
    ("longest", "def longest(strings: List[str]) -> Optional[str]:",
     "    if not strings:\n        return None\n    return max(strings, key=len)",
     ["candidate([]) is None", "candidate(['x', 'yyy', 'zzzz', 'www']) == 'zzzz'"]),
    ("greatest_common_divisor", "def greatest_common_divisor(a: int, b: int) -> int:",
     "    while b:\n        a, b = b, a % b\n    return a",
     ["candidate(3, 7) == 1", "candidate(10, 15) == 5", "candidate(144, 60) == 12"]),
    ("all_prefixes", "def all_prefixes(string: str) -> List[str]:",
     "    return [string[:i + 1] for i in range(len(string))]",
     ["candidate('') == []", "candidate('asdfgh') == ['a', 'as', 'asd', 'asdf', 'asdfg', 'asdfgh']"]),
    ("string_sequence", "def string_sequence(n: int) -> str:",
     "    return ' '.join(str(i) for i in range(n + 1))",
     ["candidate(0) == '0'", "candidate(3) == '0 1 2 3'"]),
    ("count_distinct_characters", "def count_distinct_characters(string: str) -> int:",
     "    return len(set(string.lower()))",
     ["candidate('') == 0", "candidate('abcdecadeCADE') == 5"]),
    ("how_many_times", "def how_many_times(string: str, substring: str) -> int:",
     "    return sum(1 for i in range(len(string) - len(substring) + 1) if string.startswith(substring, i))",
     ["candidate('', 'x') == 0", "candidate('xyxyxyx', 'x') == 4", "candidate('cacacacac', 'cac') == 4"]),
    ("sort_numbers", "def sort_numbers(numbers: str) -> str:",
     "    names = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine']\n"
     "    return ' '.join(sorted(numbers.split(), key=names.index))",
     ["candidate('') == ''", "candidate('five zero four seven nine eight') == 'zero four five seven eight nine'"]),
    ("find_closest_elements", "def find_closest_elements(numbers: List[float]) -> Tuple[float, float]:",
     "    s = sorted(numbers)\n    return min(zip(s, s[1:]), key=lambda p: p[1] - p[0])",
     ["candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2]) == (3.9, 4.0)", "candidate([1.0, 2.0, 5.9, 4.0, 5.0]) == (5.0, 5.9)"]),
    ("rescale_to_unit", "def rescale_to_unit(numbers: List[float]) -> List[float]:",
     "    lo, hi = min(numbers), max(numbers)\n    return [(x - lo) / (hi - lo) for x in numbers]",
     ["candidate([2.0, 49.9]) == [0.0, 1.0]", "candidate([1.0, 2.0, 3.0, 4.0, 5.0]) == [0.0, 0.25, 0.5, 0.75, 1.0]"]),
    ("largest_divisor", "def largest_divisor(n: int) -> int:",
     "    for d in range(n - 1, 0, -1):\n        if n % d == 0:\n            return d\n    return 1",
     ["candidate(3) == 1", "candidate(100) == 50", "candidate(49) == 7"]),
    ("factorize", "def factorize(n: int) -> List[int]:",
     "    out, d = [], 2\n    while d * d <= n:\n        while n % d == 0:\n            out.append(d)\n"
     "            n //= d\n        d += 1\n    if n > 1:\n        out.append(n)\n    return out",
     ["candidate(2) == [2]", "candidate(57) == [3, 19]", "candidate(3 * 19 * 19) == [3, 19, 19]"]),
    ("remove_duplicates", "def remove_duplicates(numbers: List[int]) -> List[int]:",
     "    counts = {}\n    for n in numbers:\n        counts[n] = counts.get(n, 0) + 1\n"
     "    return [n for n in numbers if counts[n] == 1]",
     ["candidate([]) == []", "candidate([1, 2, 3, 2, 4, 3, 5]) == [1, 4, 5]"]),
    ("flip_case", "def flip_case(string: str) -> str:",
     "    return string.swapcase()",
     ["candidate('') == ''", "candidate('Hello!') == 'hELLO!'"]),
    ("get_positive", "def get_positive(l: list):",
     "    return [x for x in l if x > 0]",
     ["candidate([-1, -2, 4, 5, 6]) == [4, 5, 6]", "candidate([-1, -2]) == []"]),
    ("is_prime", "def is_prime(n):",
     "    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n        if n % i == 0:\n"
     "            return False\n        i += 1\n    return True",
     ["candidate(6) is False", "candidate(101) is True", "candidate(13441) is True", "candidate(1) is False"]),
    ("sort_third", "def sort_third(l: list):",
     "    l = list(l)\n    l[::3] = sorted(l[::3])\n    return l",
     ["candidate([5, 6, 3, 4, 8, 9, 2]) == [2, 6, 3, 4, 8, 9, 5]", "candidate([1, 2, 3]) == [1, 2, 3]"]),
    ("unique", "def unique(l: list):",
     "    return sorted(set(l))",
     ["candidate([5, 3, 5, 2, 3, 3, 9, 0, 123]) == [0, 2, 3, 5, 9, 123]"]),
    ("fizz_buzz", "def fizz_buzz(n: int):",
     "    return sum(str(i).count('7') for i in range(n) if i % 11 == 0 or i % 13 == 0)",
     ["candidate(50) == 0", "candidate(78) == 2", "candidate(79) == 3", "candidate(10000) == 639"]),
    ("fib", "def fib(n: int):",
     "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",
     ["candidate(10) == 55", "candidate(1) == 1", "candidate(12) == 144"]),
    ("pairs_sum_to_zero", "def pairs_sum_to_zero(l):",
     "    seen = set()\n    for x in l:\n        if -x in seen:\n            return True\n        seen.add(x)\n"
     "    return False",
     ["candidate([1, 3, 5, 0]) is False", "candidate([2, 4, -5, 3, 5, 7]) is True"]),
]  # fmt: skip

# (program, [(input, expected output)]): contest-shaped standard-input programs
STDIN: list[tuple[str, list[tuple[str, str]]]] = [
    ("n = int(input())\nprint(sum(map(int, input().split())))",
     [("3\n1 2 3\n", "6\n"), ("1\n-5\n", "-5\n"), ("4\n10 20 30 40\n", "100\n")]),
    ("import sys\nfor line in sys.stdin.read().split('\\n')[1:]:\n    if line:\n        print(line[::-1])",
     [("2\nabc\nxy\n", "cba\nyx\n"), ("1\nracecar\n", "racecar\n"), ("3\na\nab\nabc\n", "a\nba\ncba\n")]),
    ("a, b = map(int, input().split())\nfrom math import gcd\nprint(gcd(a, b), a * b // gcd(a, b))",
     [("4 6\n", "2 12\n"), ("7 13\n", "1 91\n"), ("100 75\n", "25 300\n")]),
    ("import sys\ndata = sys.stdin.read().split()\nn = int(data[0])\nxs = sorted(map(int, data[1:1 + n]))\n"
     "print(*xs)",
     [("5\n3 1 4 1 5\n", "1 1 3 4 5\n"), ("1\n9\n", "9\n"), ("3\n-1 -3 2\n", "-3 -1 2\n")]),
    ("t = int(input())\nfor _ in range(t):\n    n = int(input())\n    print('YES' if n % 2 == 0 else 'NO')",
     [("3\n2\n3\n10\n", "YES\nNO\nYES\n"), ("1\n7\n", "NO\n"), ("2\n0\n100\n", "YES\nYES\n")]),
]  # fmt: skip

_PR_SET_CHILD_SUBREAPER = 36
# What scoring/code/inside.py imports before any of the program runs (the start of every program run).
HARNESS_IMPORTS = "import contextlib, json, os, resource, sys, traceback; from types import CodeType; import typing"
HEADER = "from typing import List, Optional, Tuple\n\n\n"
LIMITS = CodeLimits()


def _prefix(signature: str, entry: str) -> str:
    return f'{HEADER}{signature}\n    """Return what {entry} is asked to return."""\n'


def _tests(asserts: list[str]) -> str:
    lines = "\n".join(f"    assert {a}" for a in asserts)
    return f"METADATA = {{'author': 'bench', 'dataset': 'test'}}\n\n\ndef check(candidate):\n{lines}\n"


def programs() -> list[tuple[Job, str | None]]:
    """Every program run once: the job, and the expected output (None: a function task, its report decides)."""
    jobs: list[tuple[Job, str | None]] = []
    function_limits = execution._job_limits(LIMITS, LIMITS.cpu_s)
    for entry, signature, body, asserts in FUNCTIONS:
        program = HEADER + signature + "\n" + body + "\n"
        jobs.append((Job("function", program, function_limits, tests=_tests(asserts), entry_point=entry), None))
    stdin_limits = execution._job_limits(LIMITS, LIMITS.stdin_cpu_s)
    for program, tests in STDIN:
        jobs += [(Job("stdin", program + "\n", stdin_limits, stdin=given), want) for given, want in tests]
    return jobs


def tasks() -> list[tuple[Task, Sample]]:
    """The same programs as code tasks, each answered by a fenced block holding the program."""
    pairs: list[tuple[Task, Sample]] = []
    for entry, signature, body, asserts in FUNCTIONS:
        task = CodeTask(id=f"HumanEval/{entry}", question="Complete the function.", entry_point=entry,
                        test=_tests(asserts), code_prefix=_prefix(signature, entry))  # fmt: skip
        answer = f"Here is the function.\n\n```python\n{signature}\n{body}\n```\n"
        pairs.append((task, Sample(task_id=task.id, content=answer, finish_reason="stop")))
    for number, (program, tests) in enumerate(STDIN):
        io = [IoTest(input=given, output=want) for given, want in tests]
        task = CodeTask(id=f"stdin/{number}", question="Read the input and print the answer.", io_tests=io)
        answer = f"```python\n{program}\n```"
        pairs.append((task, Sample(task_id=task.id, content=answer, finish_reason="stop")))
    return pairs


# ---- 1. start cost ----------------------------------------------------------------------------------------------


def passed(job: Job, want: str | None, report: dict[str, Any] | None, stdout: bytes) -> bool:
    if report is None:
        return False
    if want is None:
        return report.get("status") == "passed"
    return report.get("status") == "finished" and execution.first_difference(want, stdout.decode()) is None


def run_sandboxed(job: Job, want: str | None) -> bool:
    ran = sandbox.run_program(job)
    if isinstance(ran, Refused):
        raise SystemExit(f"no sandbox: {ran.reason}")
    return passed(job, want, ran.report, ran.stdout)


def run_guarded(job: Job, want: str | None) -> bool:
    ran = execution._run(job)
    if isinstance(ran, Refused):
        raise SystemExit(f"no sandbox: {ran.reason}")
    assert isinstance(ran, Ran)
    return passed(job, want, ran.report, ran.stdout)


def run_bare(job: Job, want: str | None) -> bool:
    """The same harness on the same files, without bubblewrap: a folder of the job's files (made readable, removed
    afterwards, as `sandbox._job_folder` does), the report descriptor passed through, the nonce on stdin."""
    folder = tempfile.mkdtemp(prefix="bench-code-")
    try:
        os.chmod(folder, 0o755)
        files = {"solution.py": job.program, "tests.py": job.tests, "inside.py": sandbox._INSIDE.read_text(),
                 "stdin": job.stdin}  # fmt: skip
        for name, text in files.items():
            Path(folder, name).write_text(text, encoding="utf-8")
            os.chmod(Path(folder, name), 0o644)
        report_r, report_w = os.pipe()
        spec = {"kind": job.kind, "program": f"{folder}/solution.py", "tests": f"{folder}/tests.py",
                "entry_point": job.entry_point, "limits": job.limits, "report_fd": report_w}  # fmt: skip
        Path(folder, "job.json").write_text(json.dumps(spec))
        os.chmod(Path(folder, "job.json"), 0o644)
        nonce = secrets.token_hex(16)
        stdin: Any = subprocess.PIPE if job.kind == "function" else open(Path(folder, "stdin"), "rb")  # noqa: SIM115
        try:
            process = subprocess.Popen(
                [found().interpreter, "-I", f"{folder}/inside.py", f"{folder}/job.json"], stdin=stdin,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(report_w,), close_fds=True,
                process_group=0, **sandbox._drop_privileges(),
            )  # fmt: skip
        finally:
            os.close(report_w)
            if stdin is not subprocess.PIPE:
                stdin.close()
        stdout, _ = process.communicate(nonce.encode() + b"\n" if job.kind == "function" else None, timeout=60)
        with os.fdopen(report_r, "rb") as f:
            raw = f.read()
        report = json.loads(raw) if raw else None
        return passed(job, want, report, stdout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def found() -> sandbox.Found:
    chosen = sandbox.find_sandbox()
    if isinstance(chosen, Refused):
        raise SystemExit(f"no sandbox: {chosen.reason}")
    return chosen


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _reap_orphans() -> None:
    """Reap the sandboxes' first processes re-parented here (this process is a child subreaper): bubblewrap exits
    without waiting for its sandbox's first process (it reads the program's exit status from it through a pipe), so
    that process, whose CPU time holds the program's, is left to the nearest subreaper (else the host's init) to
    reap. Only those (named bwrap) are waited for: never the guarded child or the decision pool's processes."""
    deadline = time.monotonic() + 5.0
    while left := [pid for pid in _children() if _comm(pid) == "bwrap"]:
        for pid in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        if time.monotonic() > deadline:
            raise SystemExit(f"sandbox processes re-parented here and not ending: {left}")
        time.sleep(0.002)


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with contextlib.suppress(OSError), open(task / "children") as f:
            pids += [int(pid) for pid in f.read().split()]
    return pids


def _tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and every live process below it, each with the children it has reaped (/proc)."""
    return sum(sandbox._cpu_seconds(p) for p in sandbox._descendants(pid))


def start_cost(rounds: int) -> bool:
    jobs = programs()
    guarded_pid: Callable[[], int | None] = execution._service.pid
    modes: dict[str, Callable[[Job, str | None], bool]] = {
        "bubblewrap (run_program)": run_sandboxed,
        "bubblewrap via the guarded child": run_guarded,
        "bare python3 -I, no sandbox": run_bare,
    }
    walls: dict[str, list[float]] = {name: [] for name in modes}
    children: dict[str, float] = dict.fromkeys(modes, 0.0)
    own: dict[str, float] = dict.fromkeys(modes, 0.0)
    failures: Counter[str] = Counter()
    run_guarded(*jobs[0])  # the guarded child started (its start is not a program's)
    for run in modes.values():  # one untimed run each: bytecode and page cache warm
        run(*jobs[0])
    _reap_orphans()
    for _ in range(rounds):
        for job, want in jobs:
            for name, run in modes.items():  # each program in every mode in turn: the machine's load drifts
                pid = guarded_pid()
                tree_before = _tree_cpu(pid) if pid else 0.0
                c0, s0, t0 = _children_cpu(), _self_cpu(), time.perf_counter()
                ok = run(job, want)
                walls[name].append(time.perf_counter() - t0)
                own[name] += _self_cpu() - s0
                _reap_orphans()  # the sandbox's first process, which holds the program's CPU time
                if pid is not None and pid != guarded_pid():
                    raise SystemExit("the guarded child was replaced: a program reached a limit")
                children[name] += _children_cpu() - c0 + (_tree_cpu(pid) - tree_before if pid else 0.0)
                failures[name] += not ok
    n = len(jobs) * rounds
    print(f"start cost: {len(FUNCTIONS)} function programs and {sum(len(t) for _, t in STDIN)} standard-input "
          f"program runs, {rounds} rounds: {n} runs per mode")  # fmt: skip
    print(f"  {'mode':<34} {'median wall':>11} {'p90 wall':>9} {'CPU children':>13} {'CPU here':>9}  failed")
    for name in modes:
        print(f"  {name:<34} {_ms(statistics.median(walls[name])):>11} {_ms(_p90(walls[name])):>9} "
              f"{_ms(children[name] / n):>13} {_ms(own[name] / n):>9}  {failures[name]}")  # fmt: skip
    sand, bare = "bubblewrap (run_program)", "bare python3 -I, no sandbox"
    print(f"  the sandbox's start cost (bubblewrap less bare): median wall "
          f"{_ms(statistics.median(walls[sand]) - statistics.median(walls[bare]))}, CPU "
          f"{_ms((children[sand] + own[sand] - children[bare] - own[bare]) / n)} per program")  # fmt: skip
    guard = "bubblewrap via the guarded child"
    print(f"  the guarded child's hand-over: median wall "
          f"{_ms(statistics.median(walls[guard]) - statistics.median(walls[sand]))} per program")  # fmt: skip
    return not any(failures.values())


def empty_starts(runs: int) -> None:
    """What the start alone costs: no harness, no job folder, no supervisor; `subprocess.run` of an empty program."""
    chosen = found()
    bwrap = sandbox._bwrap_argv(chosen, None, int(LIMITS.file_bytes))
    commands = {
        "python3 -I -c pass": [chosen.interpreter, "-I", "-c", "pass"],
        "python3 -I -c <inside.py's imports>": [chosen.interpreter, "-I", "-c", HARNESS_IMPORTS],
        "bwrap ... python3 -I -c pass": [*bwrap, "-I", "-c", "pass"],
        "bwrap ... /bin/true": [*bwrap[:-1], "/bin/true"],
    }
    print(f"empty programs (subprocess.run as the sandbox's user, {runs} runs each, in turn):")
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, float] = dict.fromkeys(commands, 0.0)
    for _ in range(runs):
        for name, argv in commands.items():
            c0, t0 = _children_cpu(), time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True, **sandbox._drop_privileges())
            walls[name].append(time.perf_counter() - t0)
            _reap_orphans()
            cpu[name] += _children_cpu() - c0
    for name in commands:
        print(f"  {name:<36} median wall {_ms(statistics.median(walls[name]))}, p90 {_ms(_p90(walls[name]))}, "
              f"CPU {_ms(cpu[name] / runs)}")  # fmt: skip


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# ---- 2. throughput ----------------------------------------------------------------------------------------------


async def _decide_all(pool: DecisionPool, pairs: list[tuple[Task, Sample]]) -> list[Any]:
    policy = Policy()
    return await asyncio.gather(*(pool.decide(task, sample, policy) for task, sample in pairs))


def throughput(workers: int, rounds: int) -> bool:
    pairs = tasks() * rounds
    programs_run = rounds * (len(FUNCTIONS) + sum(len(t) for _, t in STDIN))
    start = time.perf_counter()
    with DecisionPool(workers=workers, warm=("code-sandbox",)) as pool:
        pool.start()
        # Each worker's guarded child started before the clock: a round of decisions, one worker each at least.
        warmup = asyncio.run(_decide_all(pool, tasks()[: 2 * workers]))
        started = time.perf_counter() - start
        _reap_orphans()
        cpu_before = _tree_cpu(os.getpid())  # this process, the pool's, and what each has reaped (the orphans too)
        clock = time.perf_counter()
        decisions = asyncio.run(_decide_all(pool, pairs))
        wall = time.perf_counter() - clock
        _reap_orphans()
        cpu = _tree_cpu(os.getpid()) - cpu_before
    outcomes = Counter(d.outcome if d is not None else "lost" for d in decisions)
    print(f"  W={workers}: {len(pairs)} decisions ({programs_run} program runs) in {wall:.2f} s: "
          f"{len(pairs) / wall:.1f} decisions/s, {programs_run / wall:.1f} programs/s; CPU of the process tree "
          f"{_ms(cpu / programs_run)} per program; pool start and warm-up {started:.2f} s; "
          f"{dict(outcomes)}")  # fmt: skip
    return set(outcomes) == {"passed"} and all(d is not None and d.outcome == "passed" for d in warmup)


# ---- the machine --------------------------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of every program per mode (default 2)")
    parser.add_argument("--workers", default="1,2,4", help="decision workers to measure (default 1,2,4)")
    parser.add_argument("--throughput-rounds", type=int, default=2, help="rounds of the 35 tasks per W (default 2)")
    args = parser.parse_args()
    if sys.platform == "linux":  # the sandboxes' first processes come back here, to be reaped and counted
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    chosen = found()
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"command: {sys.executable} bench/bench_code_sandbox.py --rounds {args.rounds} --workers {args.workers} "
          f"--throughput-rounds {args.throughput_rounds}")  # fmt: skip
    print(f"machine: nproc {nproc}, {cpu_model()}, {platform.platform()}; ocllm's Python "
          f"{platform.python_version()}; {chosen.kind} {chosen.version} running {chosen.interpreter} "
          f"{chosen.python_version}; uid {os.geteuid()}")  # fmt: skip
    print(f"load average before: {load()}")
    ok = start_cost(args.rounds)
    empty_starts(10 * args.rounds)
    print(f"load average after the start cost: {load()}")
    print(f"throughput through the decision pool ({len(tasks())} tasks x {args.throughput_rounds} rounds per W):")
    for workers in (int(w) for w in args.workers.split(",")):
        ok &= throughput(workers, args.throughput_rounds)
        print(f"  load average after W={workers}: {load()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
