"""Which code tasks' tests could not run through a channel that carries only plain data.

    python3 bench/crossing_census.py [--data DIR] [--real DIR] [--jobs N] [--cpu-seconds S] [--timeout S]
                                     [--only DATASET ...] [--limit N] [--out FILE]

The code room is to run a task's tests in a trusted process that calls the model's function through a narrow channel
carrying only plain data (None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, nested), by
exact type. This script measures, on the published datasets of tests/data/code/datasets/full/, what such a channel
would have to carry: it runs each task's reference solution against the task's own tests, one plain subprocess per
task (trusted dataset code: no sandbox here; a CPU rlimit, an address-space rlimit and a wall-clock timeout), with the
function the tests call wrapped in a recording proxy. On every call through the proxy:

1. the arguments and the result are walked (recursively, exact types: `type(x) is int`, ...); the first value whose
   type is not plain is recorded by its type name ('generator', 'Pair', 'defaultdict', ...);
2. the arguments are deep-copied before the call and compared (structurally, NaN equal to NaN) after it: an argument
   changed by the call is recorded, with a static guess at whether the test reads that variable afterwards (a name
   passed to the function and loaded again later in the same scope of the test);
3. a result that is one of the argument objects, and an exception the function raises into the test, are recorded.

The test text is also read statically: identity comparisons (`is`, `is not`) against an object (not None, True,
False), and names the test reads that it does not define but the program does (a helper of the prompt, a class of
the reference solution).

Each task is run twice. "joint": as the original harnesses run it, the test in the program's namespace (a copy of it)
with the entry point's name bound to the proxy; the reference solution must pass here, a failure is a dataset defect.
"split": the test in a namespace of its own that holds only what the test defines and the proxy, as a trusted test
process would; a failure here that the joint run does not have means the test needs something from the program.

Datasets (file names in --data):
- HumanEval (HumanEval.jsonl.gz): prompt + canonical_solution; `check(candidate)`.
- HumanEval+ (HumanEvalPlus-OriginFmt.jsonl.gz): prompt + canonical_solution; its `test` is evalplus's own
  `check(candidate)` over the base and plus inputs (as Python literals, so tuples and sets keep their types) against
  expected results, compared as evalplus compares (exact, else numpy.allclose with atol): it imports numpy, so run
  this with an interpreter that has numpy. HumanEvalPlus.jsonl.gz (base_input/plus_input as JSON) is counted for the
  number of inputs only.
- MBPP full (mbpp.jsonl.gz) and MBPP sanitized (sanitized-mbpp.json.gz): `code`; `test_setup_code` (full) or
  `test_imports` (sanitized), then each assert of `test_list`, which call the function by name. The entry point is the
  first function `code` defines that the asserts call, else the first non-builtin name they call (as ocllm's importer).
- MBPP+ (MbppPlus-OriginFmt.jsonl.gz, entry points from MbppPlus.jsonl.gz): `code`; `test` is module code that calls
  the function by name over the base and plus inputs (numpy again).
- LiveCodeBench functional (livecodebench-functional-gold-*.jsonl.gz): public tests, one JSON value per input line,
  `Solution().<func_name>(*args)` compared with the JSON output (a tuple counts as a list); the class entry point is
  counted apart. LiveCodeBench ships no reference solution: a task is run only when --real holds a published model
  solution for it (lcb_result.samples-*.jsonl: `task_id` "lcb/leetcode/<id>", `passed`, `cleaned`).

Writes a Markdown report (the command at the top, the table, the task ids per category) to --out and the per-task
records beside it (.jsonl.gz, one JSON object per task). Standard library only; the child is this file run with --child.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import copy
import gzip
import json
import math
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PLAIN_TYPES: tuple[type, ...] = (
    type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset,
)  # fmt: skip
SCALARS: tuple[type, ...] = (type(None), bool, int, float, complex, str, bytes)
# What LiveCodeBench puts before every program it runs (its prompt lets a solution use these unimported); builtins
# last, as LiveCodeBench's own list has them, so that `pow` and `sum` are not math's.
LCB_PREFIX = (
    "from typing import *\nfrom collections import *\nfrom heapq import *\nfrom bisect import *\n"
    "from itertools import *\nfrom functools import *\nfrom math import *\nimport math, heapq, bisect, collections\n"
    "import itertools, functools, string, re, sys\nfrom builtins import *\n"
)
DATASETS = ("HumanEval", "HumanEval+", "MBPP full", "MBPP sanitized", "MBPP+", "LCB functional")


# --- the child: one task ---------------------------------------------------------------------------------------------


def first_non_plain(value: Any) -> str | None:
    """The type name of the first value, walking `value` depth-first, whose exact type is not plain."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind not in PLAIN_TYPES:
            return kind.__name__
        if kind in SCALARS or id(item) in seen:
            continue
        seen.add(id(item))
        if kind is dict:
            for key, val in item.items():
                stack.append(val)
                stack.append(key)
        else:
            stack.extend(reversed(list(item)))
    return None


def same(a: Any, b: Any, depth: int = 0) -> bool:
    """Structural equality of a value and its deep copy: exact types, NaN equal to NaN, objects by their attributes."""
    if depth > 200:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if type(a) in SCALARS:
        return bool(a == b)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k], depth + 1) for k in a)
    if type(a) in (set, frozenset):
        return a == b
    if hasattr(a, "__dict__") and hasattr(b, "__dict__"):
        return same(vars(a), vars(b), depth + 1)
    try:
        return bool(a == b)
    except Exception:
        return True


class Log:
    def __init__(self) -> None:
        self.calls = 0
        self.bad_arg: str | None = None
        self.bad_result: str | None = None
        self.mutated: set[int | str] = set()
        self.uncopyable = 0
        self.returns_arg = False
        self.raised: list[str] = []

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "bad_arg": self.bad_arg, "bad_result": self.bad_result,
                "mutated": sorted(map(str, self.mutated)), "uncopyable": self.uncopyable,
                "returns_arg": self.returns_arg, "raised": self.raised[:5]}  # fmt: skip


class Proxy:
    """Stands for the model's function on the test's side: records what a call would carry across the channel."""

    def __init__(self, function: Callable[..., Any], log: Log) -> None:
        self.function = function
        self.log = log

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        log = self.log
        log.calls += 1
        if log.bad_arg is None:
            log.bad_arg = first_non_plain([list(args), list(kwargs.values())])
        try:
            before: tuple[tuple[Any, ...], dict[str, Any]] | None = copy.deepcopy((args, kwargs))
        except Exception:
            before = None
            log.uncopyable += 1
        try:
            result = self.function(*args, **kwargs)
        except Exception as exc:
            log.raised.append(type(exc).__name__)
            raise
        finally:
            if before is not None:
                for position, (old, new) in enumerate(zip(before[0], args, strict=True)):
                    if not same(old, new):
                        log.mutated.add(position)
                for name, new in kwargs.items():
                    if not same(before[1][name], new):
                        log.mutated.add(name)
        if log.bad_result is None:
            log.bad_result = first_non_plain(result)
        # A mutable (or non-plain) object handed back: aliasing that a channel, which copies, would break.
        if not isinstance(result, (*SCALARS, tuple, frozenset)) and any(
            result is arg for arg in (*args, *kwargs.values())
        ):
            log.returns_arg = True
        return result


class OutOfCpu(Exception):
    pass


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def free_names(source: str) -> set[str]:
    """Names the test reads and does not define itself (nor are they builtins)."""
    tree = ast.parse(source)
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - _bound_names(tree) - set(dir(builtins))


def identity_checks(source: str) -> tuple[list[str], list[str]]:
    """The test's `is` / `is not` comparisons: against an object, and against None/True/False/Ellipsis."""
    objects, singletons = [], []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
            sides = [node.left, *node.comparators]
            text = ast.unparse(node)[:120]
            if any(isinstance(s, ast.Constant) and s.value in (None, True, False, ...) for s in sides):
                singletons.append(text)
            else:
                objects.append(text)
    return objects, singletons


def reads_after_call(source: str, callees: set[str]) -> bool:
    """A name passed to the function is loaded again, later in the same scope of the test (a static guess)."""
    tree = ast.parse(source)
    scopes: list[ast.AST] = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.Lambda))]
    for scope in scopes:
        nodes = list(ast.walk(scope))
        for call in nodes:
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name not in callees:
                continue
            passed = {a.id for a in call.args if isinstance(a, ast.Name)}
            line = getattr(call, "end_lineno", call.lineno)
            for node in nodes:
                if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in passed
                        and node.lineno > line):  # fmt: skip
                    return True
    return False


def _on_xcpu(signum: int, frame: Any) -> None:
    raise OutOfCpu("CPU time limit")


def _run_test(job: dict[str, Any], split: bool) -> tuple[str, str, Log]:
    """Run the job's test once: ('pass' | 'fail', the first error, the proxy's log)."""
    log = Log()
    program: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(job["solution"], "<solution>", "exec"), program)
    if job["kind"] == "lcb":
        cls = program["Solution"]
        for number, (given, wanted) in enumerate(job["cases"], start=1):
            args = [json.loads(line) for line in given.split("\n")]
            try:
                got = Proxy(getattr(cls(), job["func_name"]), log)(*args)
            except OutOfCpu:
                raise
            except Exception as exc:
                return "fail", f"case {number}: {type(exc).__name__}: {str(exc)[:200]}", log
            if isinstance(got, tuple):
                got = list(got)
            if got != json.loads(wanted):
                return "fail", f"case {number}: wrong answer", log
        return "pass", "", log
    proxy = Proxy(program[job["entry"]], log)
    space: dict[str, Any] = {"__name__": "__test__"} if split else dict(program)
    try:
        if job["kind"] == "check":
            exec(compile(job["test"], "<test>", "exec"), space)
            space["check"](proxy)
        elif job["kind"] == "module":
            space[job["entry"]] = proxy
            exec(compile(job["test"], "<test>", "exec"), space)
        else:  # asserts
            if job["setup"]:
                exec(compile(job["setup"], "<setup>", "exec"), space)
            space[job["entry"]] = proxy
            for line in job["asserts"]:
                exec(compile(line, "<assert>", "exec"), space)
    except OutOfCpu:
        raise
    except BaseException as exc:
        return "fail", f"{type(exc).__name__}: {str(exc)[:200]}", log
    return "pass", "", log


def child(job_path: str, result_path: str) -> None:
    sys.set_int_max_str_digits(0)
    sys.setrecursionlimit(20000)
    signal.signal(signal.SIGXCPU, _on_xcpu)
    job = json.loads(Path(job_path).read_text())
    out: dict[str, Any] = {}
    try:
        status, error, log = _run_test(job, split=False)
        out.update(joint=status, joint_error=error, **log.as_dict())
        if job["kind"] != "lcb":
            status, error, _ = _run_test(job, split=True)
            out.update(split=status, split_error=error)
            program: dict[str, Any] = {"__name__": "__main__"}
            exec(compile(job["solution"], "<solution>", "exec"), program)
            prompt: dict[str, Any] = {"__name__": "__main__"}
            if job.get("prompt"):
                with contextlib.suppress(Exception):
                    exec(compile(job["prompt"], "<prompt>", "exec"), prompt)
            # A `check(candidate)` test that names the entry point itself (HumanEval/33) needs it from the program too.
            bound = {"candidate"} if job["kind"] == "check" else {job["entry"], "candidate"}
            needs = sorted((free_names(job["test_text"]) & set(program)) - bound)
            out["needs"] = needs
            out["needs_from_prompt"] = [n for n in needs if n in prompt and n != job["entry"]]
    except OutOfCpu:
        out.setdefault("joint", "timeout")
        out.setdefault("joint_error", "CPU time limit")
        out.setdefault("split", "timeout")
    except BaseException as exc:
        out["joint"] = out.get("joint", "error")
        out["joint_error"] = out.get("joint_error") or f"{type(exc).__name__}: {exc}"[:300]
        out["trace"] = traceback.format_exc()[-600:]
    Path(result_path).write_text(json.dumps(out))


# --- the parent: the datasets as jobs, the runs, the report -----------------------------------------------------------


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        if path.name.endswith(".json.gz") or path.suffix == ".json":
            yield from json.load(handle)
            return
        for line in handle:
            if line.strip():
                yield json.loads(line)


_DEF = re.compile(r"^def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def mbpp_entry(code: str, asserts: list[str]) -> str:
    called = [n.func.id for line in asserts for n in ast.walk(ast.parse(line))
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]  # fmt: skip
    for name in _DEF.findall(code):
        if name in called:
            return name
    return next(name for name in called if not hasattr(builtins, name))


def _mbpp_jobs(dataset: str, rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        code = row["code"].replace("\r\n", "\n")
        asserts = [line.strip() for line in row["test_list"]]
        setup = (row.get("test_setup_code") or "").replace("\r\n", "\n")
        if row.get("test_imports"):
            setup = "\n".join(row["test_imports"]) + "\n" + setup
        yield {"dataset": dataset, "id": f"mbpp/{row['task_id']}", "kind": "asserts", "solution": code,
               "entry": mbpp_entry(code, asserts), "setup": setup, "asserts": asserts,
               "test_text": setup + "\n" + "\n".join(asserts)}  # fmt: skip


def build_jobs(data: Path, real: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    jobs: list[dict[str, Any]] = []
    notes: dict[str, Any] = {}
    for row in _jsonl(data / "HumanEval.jsonl.gz"):
        jobs.append({"dataset": "HumanEval", "id": row["task_id"], "kind": "check", "entry": row["entry_point"],
                     "solution": row["prompt"] + row["canonical_solution"], "prompt": row["prompt"],
                     "test": row["test"], "test_text": row["test"]})  # fmt: skip
    plus_inputs = {r["task_id"]: len(r["base_input"]) + len(r["plus_input"])
                   for r in _jsonl(data / "HumanEvalPlus.jsonl.gz")}  # fmt: skip
    notes["HumanEval+ inputs (base_input + plus_input)"] = sum(plus_inputs.values())
    for row in _jsonl(data / "HumanEvalPlus-OriginFmt.jsonl.gz"):
        jobs.append({"dataset": "HumanEval+", "id": row["task_id"], "kind": "check", "entry": row["entry_point"],
                     "solution": row["prompt"] + row["canonical_solution"], "prompt": row["prompt"],
                     "test": row["test"], "test_text": row["test"]})  # fmt: skip
    jobs.extend(_mbpp_jobs("MBPP full", _jsonl(data / "mbpp.jsonl.gz")))
    jobs.extend(_mbpp_jobs("MBPP sanitized", _jsonl(data / "sanitized-mbpp.json.gz")))
    mbpp_plus = {r["task_id"]: r for r in _jsonl(data / "MbppPlus.jsonl.gz")}
    notes["MBPP+ inputs (base_input + plus_input)"] = sum(
        len(r["base_input"]) + len(r["plus_input"]) for r in mbpp_plus.values()
    )
    for row in _jsonl(data / "MbppPlus-OriginFmt.jsonl.gz"):
        entry = mbpp_plus[f"Mbpp/{row['task_id']}"]["entry_point"]
        setup = "\n".join(row.get("test_imports") or [])
        jobs.append({"dataset": "MBPP+", "id": f"Mbpp/{row['task_id']}", "kind": "module", "entry": entry,
                     "solution": row["code"], "test": setup + "\n" + row["test"],
                     "test_text": setup + "\n" + row["test"]})  # fmt: skip
    solutions: dict[str, str] = {}
    for path in sorted(real.glob("lcb_result.samples-*.jsonl")):
        for row in _jsonl(path):
            if row.get("passed"):
                solutions[row["task_id"].rsplit("/", 1)[-1]] = row["cleaned"]
    for path in sorted(data.glob("livecodebench-functional-gold-*.jsonl*")):
        for row in _jsonl(path):
            func_name = json.loads(row["metadata"])["func_name"]
            job = {"dataset": "LCB functional", "id": f"livecodebench/{row['question_id']}", "kind": "lcb",
                   "func_name": func_name, "entry": "Solution", "class_entry": True,
                   "cases": [(t["input"], t["output"]) for t in row["public_test_cases"]]}  # fmt: skip
            if row["question_id"] in solutions:
                job["solution"] = LCB_PREFIX + solutions[row["question_id"]]
            else:
                job["no_reference"] = True
            jobs.append(job)
    return jobs, notes


def _limits(cpu_seconds: int, memory_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 2))
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        os.setsid()

    return apply


def run_job(job: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    record: dict[str, Any] = {"dataset": job["dataset"], "id": job["id"], "kind": job["kind"], "entry": job["entry"]}
    if job.get("class_entry"):
        record["class_entry"] = True
    if job.get("no_reference"):
        record["joint"] = "no reference"
        return record
    objects, singletons = identity_checks(job.get("test_text", "x = 0"))
    record.update(identity_objects=objects, identity_singletons=singletons)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="census-") as folder:
        job_path, result_path = Path(folder, "job.json"), Path(folder, "result.json")
        job_path.write_text(json.dumps(job))
        # -s -P, not -I: -I would ignore PYTHONHASHSEED, and a fixed seed fixes the order of sets of strings.
        command = [args.python, "-s", "-P", str(Path(__file__).resolve()), "--child", str(job_path), str(result_path)]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONHASHSEED": "0",
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        try:
            subprocess.run(command, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=args.timeout,
                           preexec_fn=_limits(args.cpu_seconds, args.memory_mb * 1024 * 1024), check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            record.update(joint="timeout", joint_error=f"wall clock {args.timeout} s")
        if result_path.exists():
            record.update(json.loads(result_path.read_text()))
        elif "joint" not in record:
            record.update(joint="error", joint_error="the child wrote no result (killed?)")
    record["seconds"] = round(time.monotonic() - started, 2)
    if record.get("mutated") and job.get("test_text"):
        record["reads_mutated"] = reads_after_call(job["test_text"], {job["entry"], "candidate"})
    return record


# --- the report ------------------------------------------------------------------------------------------------------

COLUMNS: list[tuple[str, Callable[[dict[str, Any]], str | None]]] = [
    ("reference fails its tests (joint run)", lambda r: r.get("joint_error") or r["joint"]
     if r.get("joint") not in ("pass", "no reference") else None),
    ("test needs other program names (split run fails)", lambda r: ", ".join(r.get("needs") or [])
     or (r.get("split_error") or "")[:80] if r.get("split") not in (None, "pass") and r.get("joint") == "pass"
     else None),
    ("non-plain argument", lambda r: r.get("bad_arg")),
    ("non-plain result", lambda r: r.get("bad_result")),
    ("mutates an argument", lambda r: "args " + ",".join(r["mutated"]) + (
        " (test reads it after)" if r.get("reads_mutated") else "") if r.get("mutated") else None),
    ("the test reads a mutated argument afterwards (static)", lambda r: "yes" if r.get("reads_mutated") else None),
    ("returns an argument object", lambda r: "yes" if r.get("returns_arg") else None),
    ("function raises into the test (test passes)", lambda r: ",".join(sorted(set(r["raised"])))
     if r.get("raised") and r.get("joint") == "pass" else None),
    ("identity check on an object", lambda r: "; ".join(r.get("identity_objects") or []) or None),
    ("identity check on None/True/False", lambda r: "; ".join(r.get("identity_singletons") or []) or None),
    ("class entry point", lambda r: "Solution" if r.get("class_entry") else None),
]  # fmt: skip


def report(records: list[dict[str, Any]], notes: dict[str, Any], command: str, elapsed: float) -> str:
    lines = [
        "# Crossing census: what the code datasets' tests would send through a plain-data channel",
        "",
        "Command (from the repository root; the datasets' own tests of HumanEval+ and MBPP+ import numpy):",
        "",
        f"    {command}",
        "",
        f"Written by bench/crossing_census.py in {elapsed:.0f} s; see its docstring for what each column means.",
        "Plain = None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset by exact type.",
        "",
    ]
    header = ["dataset", "tasks", "run"] + [name for name, _ in COLUMNS]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    by_dataset = {name: [r for r in records if r["dataset"] == name] for name in DATASETS}
    for name, rows in by_dataset.items():
        if not rows:
            continue
        run = sum(1 for r in rows if r.get("joint") != "no reference")
        counts = [str(sum(1 for r in rows if pick(r))) for _, pick in COLUMNS]
        lines.append("| " + " | ".join([name, str(len(rows)), str(run), *counts]) + " |")
    lines += ["", "## Task ids per category", ""]
    for name, rows in by_dataset.items():
        if not rows:
            continue
        lines += [f"### {name}", ""]
        for column, pick in COLUMNS:
            hits = [(r["id"], pick(r)) for r in rows if pick(r)]
            if hits:
                detail = "; ".join(f"{tid} ({str(why).replace('|', '/')})" for tid, why in hits)
                lines += [f"- {column} ({len(hits)}): {detail}", ""]
        calls = sum(r.get("calls", 0) for r in rows)
        slow = sorted(rows, key=lambda r: -r.get("seconds", 0))[:3]
        lines += [f"- calls through the proxy: {calls:,}; slowest tasks: "
                  + ", ".join(f"{r['id']} {r.get('seconds', 0)} s" for r in slow), ""]  # fmt: skip
        missing = [r["id"] for r in rows if r.get("joint") == "no reference"]
        if missing:
            lines += [f"- not run, no reference solution: {', '.join(missing)}", ""]
        own_name = [r["id"] for r in rows if r.get("kind") == "check" and r.get("entry") in (r.get("needs") or [])]
        if own_name:
            lines += [
                "- the test calls the entry point by its own name, not only as `candidate`: " + ", ".join(own_name),
                "",
            ]
        from_prompt = sorted({(r["id"], n) for r in rows for n in r.get("needs_from_prompt") or []})
        if from_prompt:
            lines += ["- needed names that the prompt itself defines (dataset text, not the model's): "
                      + ", ".join(f"{tid}: {n}" for tid, n in from_prompt), ""]  # fmt: skip
    if notes:
        lines += ["## Notes", ""] + [f"- {key}: {value:,}" for key, value in notes.items()] + [""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, default=ROOT / "tests/data/code/datasets/full")
    parser.add_argument("--real", type=Path, default=ROOT / "tests/data/code/real/gpt-oss-20b")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the children (needs numpy)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cpu-seconds", type=int, default=60)
    parser.add_argument("--memory-mb", type=int, default=4096)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", nargs="*", choices=DATASETS)
    parser.add_argument("--limit", type=int, help="at most N tasks per dataset")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/crossing_census.md")
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    jobs, notes = build_jobs(args.data, args.real)
    if args.only:
        jobs = [j for j in jobs if j["dataset"] in args.only]
    if args.limit:
        jobs = [j for name in DATASETS for j in [j for j in jobs if j["dataset"] == name][: args.limit]]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        records = list(pool.map(lambda job: run_job(job, args), jobs))
    elapsed = time.monotonic() - started
    command = " ".join(shlex.quote(a) for a in [sys.executable, os.path.relpath(__file__, ROOT), *sys.argv[1:]])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(records, notes, command, elapsed))
    with gzip.open(args.out.with_suffix(".jsonl.gz"), "wt", encoding="utf-8", compresslevel=9) as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)
    failed = [r["id"] for r in records if r.get("joint") not in ("pass", "no reference")]
    print(f"{len(records)} tasks in {elapsed:.0f} s; reference fails its tests: {len(failed)}; report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
