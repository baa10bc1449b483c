"""The code room's datasets for `ocllm import` (docs/importing.md, "Code"): a row as HumanEval, MBPP, evalplus's
HumanEvalPlus/MbppPlus or LiveCodeBench distributes it -> a code task. Nothing here runs code: a test is kept as the
Python the dataset gives (run later, in the sandbox, by `decide`), and a test whose expected outputs only running the
canonical solution would give (evalplus's plus inputs) is not imported, said so.

- humaneval: `task_id`, `prompt`, `canonical_solution`, `test` (defines `check(candidate)`), `entry_point`. The prompt
  is the code prefix; the question is one instruction naming the function. evalplus's HumanEvalPlus rows read the same
  where they hold a `test` (Hugging Face's evalplus/humanevalplus); a row without one is refused (its tests are
  inputs whose outputs come from running `canonical_solution`).
- mbpp: the full set (`text`, `code`, `task_id`, `test_setup_code`, `test_list`, `challenge_test_list`), the sanitized
  one (`prompt`, `code`, `task_id`, `test_imports`, `test_list`), evalplus's MbppPlus (`task_id` "Mbpp/2", `prompt`,
  `entry_point`, `assertion` or `test`) and MbppPlus in the sanitized layout with a `test` of the plus inputs
  (`MbppPlus-OriginFmt`, Hugging Face's evalplus/mbppplus): its `test` is the test, category mbpp+. MBPP's asserts
  call the function by name: they become `def check(candidate):` that binds that name to the candidate first.
- livecodebench: `question_id`, `question_content`, `platform`, `difficulty`, `starter_code`, `public_test_cases`
  (JSON), `private_test_cases` (JSON, or base64 of zlib of a pickle of that JSON: read opcode by opcode, never run),
  `metadata` (JSON, `func_name` for a functional problem). A standard-input problem's tests become `io_tests`; a
  functional (LeetCode) problem's a `check(candidate)` that calls `candidate().<func_name>(*args)` on each test.
"""

from __future__ import annotations

import ast
import base64
import binascii
import builtins
import json
import pickletools
import re
import zlib
from collections import Counter
from typing import Any

from ocllm.models import Task
from ocllm.scoring.code.fields import MAX_IO_CHARS, MAX_IO_TESTS, CodeTask, IoTest, task_fields_problem
from ocllm.scoring.dataset_rows import BadRow, Dataset, Row, text

# --- HumanEval -------------------------------------------------------------------------------------------------------

# Asked of every function task that gives its code as a prefix: the prefix itself (signature and docstring) says
# what to do, as HumanEval's own prompt does; the prompt template shows the prefix after this.
PREFIX_QUESTION = "Complete the Python function `{entry_point}` below so that it does what its docstring says."
PLUS_REFUSED = (
    "an evalplus row without 'test': its tests are inputs (base_input, plus_input) whose expected outputs evalplus "
    "computes by running canonical_solution, and an import runs no code; import a copy with a 'test' field "
    "(Hugging Face's evalplus/humanevalplus), or HumanEval.jsonl for the base tests"
)


def humaneval_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    task_id = text(row, "task_id")
    entry = _identifier(row, "entry_point")
    prompt = _code(row, "prompt")
    plus = "plus_input" in row.fields or "base_input" in row.fields
    test = row.fields.get("test")
    if not isinstance(test, str) or not test.strip():
        raise BadRow(PLUS_REFUSED if plus else "no 'test'")
    if "def check" not in test:  # evalplus's module-level test (asserts by name): wrapped as MBPP's are
        test = _wrapped_module_test(test, entry)
    return _checked(
        row,
        CodeTask(id=task_id, question=PREFIX_QUESTION.format(entry_point=entry), code_prefix=prompt,
                 entry_point=entry, test=test, category="humaneval+" if plus else "humaneval"),
    )  # fmt: skip


# --- MBPP ------------------------------------------------------------------------------------------------------------

# MBPP's splits by task_id (the paper, section 2.1): 1-10 the few-shot prompts, 11-510 test, 511-600 validation,
# 601-974 train.
_MBPP_SPLITS = ((1, 10, "prompt"), (11, 510, "test"), (511, 600, "validation"), (601, 974, "train"))
MBPP_QUESTION = "{text}\n\nYour code should pass these tests:\n\n{tests}"
MBPP_PLUS_REFUSED = (
    "an MbppPlus row with neither 'assertion' nor 'test': its plus tests are inputs whose expected outputs evalplus "
    "computes by running canonical_solution, and an import runs no code"
)


def mbpp_split(task: Task) -> str | None:
    """The MBPP split a task's number falls in (`mbpp/N`, and evalplus's `Mbpp/N`, which keep MBPP's numbers)."""
    number = task.id.partition("/")[2]
    if not number.isdigit():
        return None
    return next((name for low, high, name in _MBPP_SPLITS if low <= int(number) <= high), None)


def mbpp_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    fields = row.fields
    evalplus = isinstance(fields.get("task_id"), str) and str(fields["task_id"]).startswith("Mbpp/")
    if evalplus:
        return _mbpp_plus_task(row)
    number = fields.get("task_id")
    if isinstance(number, bool) or not isinstance(number, int):
        raise BadRow("'task_id' is not a number (MBPP numbers its problems)")
    description = text(row, "text") if "text" in fields else text(row, "prompt")
    asserts = _asserts(row, "test_list")
    code = fields.get("code")
    entry = mbpp_entry_point(code if isinstance(code, str) else "", asserts)
    setup = [s for s in (_setup(row, "test_setup_code"), _imports(row)) if s]
    split = next((name for low, high, name in _MBPP_SPLITS if low <= number <= high), None)
    plus = fields.get("test")
    if isinstance(plus, str) and plus.strip():
        # evalplus's MbppPlus in MBPP's layout (what Hugging Face's evalplus/mbppplus holds): `test` is module code
        # that calls the function by name over the base and plus inputs; `test_list` the base asserts, shown.
        question = MBPP_QUESTION.format(text=description, tests="\n".join(asserts))
        check = _wrapped_module_test(plus, entry)
        return _checked(
            row, CodeTask(id=f"Mbpp/{number}", question=question, entry_point=entry, test=check, category="mbpp+")
        )
    return _checked(
        row,
        CodeTask(id=f"mbpp/{number}", question=MBPP_QUESTION.format(text=description, tests="\n".join(asserts)),
                 entry_point=entry, test=asserts_check(asserts, entry, "\n".join(setup)), category="mbpp",
                 subset=split),
    )  # fmt: skip


def _mbpp_plus_task(row: Row) -> Task:
    task_id = text(row, "task_id")
    entry = _identifier(row, "entry_point")
    prompt = text(row, "prompt")
    description = _docstring_text(prompt)
    test = row.fields.get("test")
    assertion = row.fields.get("assertion")
    if isinstance(test, str) and test.strip():
        check = test if "def check" in test else _wrapped_module_test(test, entry)
        shown = _assert_lines(assertion)[:1] if isinstance(assertion, str) else []
    elif isinstance(assertion, str) and assertion.strip():
        shown = _assert_lines(assertion)
        if not shown:
            raise BadRow("'assertion' holds no assert statement")
        check = asserts_check(shown, entry, _imports(row))
    else:
        raise BadRow(MBPP_PLUS_REFUSED)
    question = MBPP_QUESTION.format(text=description, tests="\n".join(shown)) if shown else description
    return _checked(row, CodeTask(id=task_id, question=question, entry_point=entry, test=check, category="mbpp+"))


def asserts_check(asserts: list[str], entry_point: str, setup: str = "") -> str:
    """MBPP's asserts (which call the function by its name) as a test: the setup code at the top, then
    `check(candidate)`, which binds the entry point's name to the candidate and runs each assert in order."""
    lines = [setup.rstrip(), ""] if setup.strip() else []
    lines.append("def check(candidate):")
    lines.append(f"    globals()[{entry_point!r}] = candidate")
    lines.extend(f"    {line}" for line in asserts)
    return "\n".join(lines) + "\n"


def _wrapped_module_test(test: str, entry_point: str) -> str:
    """evalplus's test as module code that calls the function by name (inputs, expected results, a loop of
    assertions): run by `check(candidate)` with the entry point's name bound to the candidate."""
    return (
        f"_MODULE_TEST = {test!r}\n\n"
        "def check(candidate):\n"
        f"    globals()[{entry_point!r}] = candidate\n"
        "    exec(compile(_MODULE_TEST, '<test>', 'exec'), globals())\n"
    )


def _asserts(row: Row, name: str) -> list[str]:
    value = row.fields.get(name)
    if not isinstance(value, list) or not value:
        raise BadRow(f"no {name!r} (a list of assert statements)")
    asserts = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, str) or not item.strip():
            raise BadRow(f"{name!r}: item {number} is not text")
        line = item.strip()
        if "\n" in line or "\r" in line or not _parses(line):
            raise BadRow(f"{name!r}: item {number} is not one line of Python")
        asserts.append(line)
    return asserts


def _assert_lines(value: Any) -> list[str]:
    if not isinstance(value, str):
        return []
    return [line.strip() for line in value.splitlines() if line.strip().startswith("assert") and _parses(line.strip())]


def _setup(row: Row, name: str) -> str:
    value = row.fields.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    if not isinstance(value, str) or not _parses(value.replace("\r\n", "\n")):
        raise BadRow(f"{name!r} is not Python")
    return value.replace("\r\n", "\n")


def _imports(row: Row) -> str:
    """The sanitized split's `test_imports` (a list of import lines) as code."""
    value = row.fields.get("test_imports")
    if not value:
        return ""
    if not isinstance(value, list) or not all(isinstance(v, str) and _parses(v) for v in value):
        raise BadRow("'test_imports' is not a list of import lines")
    return "\n".join(v.strip() for v in value)


_DEF = re.compile(r"^def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def mbpp_entry_point(code: str, asserts: list[str]) -> str:
    """The function the asserts test: the first function `code` defines at its top level that the asserts call,
    else the first name they call that is not a builtin."""
    called = [name for line in asserts for name in _called_names(line)]
    defined: list[str] = _DEF.findall(code.replace("\r\n", "\n"))  # one group: the names, as strings
    for name in defined:
        if name in called:
            return name
    for name in called:
        if not hasattr(builtins, name):
            return name
    raise BadRow("no function is called by the asserts of 'test_list'")


def _called_names(line: str) -> list[str]:
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return []
    return [node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]


def _docstring_text(prompt: str) -> str:
    """MbppPlus's prompt is a docstring (`'''\\nWrite a function ...\\n'''` or with double quotes): its text."""
    stripped = prompt.strip()
    for quote in ('"""', "'''"):
        if stripped.startswith(quote) and stripped.endswith(quote) and len(stripped) >= 6:
            return stripped[3:-3].strip()
    return stripped


# --- LiveCodeBench ---------------------------------------------------------------------------------------------------

# LiveCodeBench prepends this to every program it runs (lcb_runner/evaluation/testing_util.py, `import_string`), so a
# solution may use `List`, `defaultdict`, `heapq`... without importing them: it is these tasks' code prefix.
LCB_IMPORTS = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)
# LiveCodeBench's own prompt words (lcb_runner/prompts/code_generation.py).
LCB_WITH_STARTER = (
    "### Format: You will use the following starter code to write the solution to the problem and enclose your code "
    "within delimiters.\n```python\n{starter}\n```"
)
LCB_STDIN = (
    "### Format: Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test on "
    "the sample inputs). Enclose your code within delimiters as follows. Ensure that when the python program runs, it "
    "reads the inputs, runs the algorithm and writes output to STDOUT."
)
# The private tests inflated: LiveCodeBench's largest are tens of MB; past this the row is refused unread.
MAX_INFLATED_BYTES = 256 * 1024 * 1024
# The opcodes of a pickle that holds one string and nothing else (protocols 0-5): what pickle.dumps(a str) writes.
_STRING_OPS = frozenset(("UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"))
_HARMLESS_OPS = frozenset(("PROTO", "FRAME", "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "STOP"))


class NotOneString(Exception):
    """A pickle that is not one string: never loaded."""


def pickled_string(data: bytes) -> str:
    """The string a pickle holds, read opcode by opcode (pickletools, which parses and never runs), accepted only
    when the pickle is one string and nothing else: any other opcode (a global, a call, a reduce, a list) refuses
    it, so no object is ever built and no code is ever run."""
    found: str | None = None
    last = None
    try:
        for opcode, arg, _position in pickletools.genops(data):
            last = opcode.name
            if opcode.name in _STRING_OPS:
                if found is not None:
                    raise NotOneString("it holds more than one string")
                found = arg
            elif opcode.name not in _HARMLESS_OPS:
                raise NotOneString(f"it holds a {opcode.name} opcode, not only a string")
    except NotOneString:
        raise
    except Exception as exc:  # pickletools' own errors on a damaged pickle: ValueError and others
        raise NotOneString(f"it is not a whole pickle ({exc})") from None
    if found is None or last != "STOP":
        raise NotOneString("it holds no string")
    return found


def _private_tests(value: str) -> list[Any]:
    """LiveCodeBench's private tests: JSON, or base64(zlib(pickle(JSON text))) as code_generation_lite ships them."""
    try:
        return _json_list(value)
    except ValueError:
        pass
    try:
        packed = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise BadRow("'private_test_cases' is neither JSON nor base64") from None
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(packed, MAX_INFLATED_BYTES)
    except zlib.error as exc:
        raise BadRow(f"'private_test_cases' is base64 but not zlib-compressed ({exc})") from None
    if inflate.unconsumed_tail:
        raise BadRow(f"'private_test_cases' inflates past {MAX_INFLATED_BYTES // (1024 * 1024)} MB")
    try:
        inner = pickled_string(data)
    except NotOneString as exc:
        raise BadRow(f"'private_test_cases' is a pickle that is not one string ({exc}): refused unloaded") from None
    try:
        return _json_list(inner)
    except ValueError:
        raise BadRow("'private_test_cases': the pickled string is not a JSON list of tests") from None


def _json_list(value: str) -> list[Any]:
    loaded = json.loads(value)
    if not isinstance(loaded, list):
        raise ValueError("not a list")
    return loaded


def _lcb_tests(row: Row) -> list[dict[str, str]]:
    tests: list[dict[str, str]] = []
    for name in ("public_test_cases", "private_test_cases"):
        value = row.fields.get(name)
        if value is None or value == "":
            continue
        if isinstance(value, list):
            listed = value
        elif not isinstance(value, str):
            raise BadRow(f"{name!r} is neither text nor a list")
        elif name == "public_test_cases":
            try:
                listed = _json_list(value)
            except ValueError:
                raise BadRow("'public_test_cases' is not a JSON list of tests") from None
        else:
            listed = _private_tests(value)
        for number, test in enumerate(listed, start=1):
            if (
                not isinstance(test, dict)
                or not isinstance(test.get("input"), str)
                or not isinstance(test.get("output"), str)
            ):
                raise BadRow(f"{name!r}: test {number} has no text 'input' and 'output'")
            tests.append({"input": test["input"], "output": test["output"], "testtype": str(test.get("testtype"))})
    if not tests:
        raise BadRow("no tests in 'public_test_cases' or 'private_test_cases'")
    if len(tests) > MAX_IO_TESTS:
        raise BadRow(f"{len(tests):,} tests, more than the {MAX_IO_TESTS:,} a code task may hold")
    for number, test in enumerate(tests, start=1):
        if max(len(test["input"]), len(test["output"])) > MAX_IO_CHARS:
            raise BadRow(f"test {number} is longer than the {MAX_IO_CHARS:,} characters a test may hold")
    return tests


def _lcb_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    question_id = text(row, "question_id")
    content = text(row, "question_content")
    starter = row.fields.get("starter_code")
    if not isinstance(starter, str):
        starter = ""
    metadata = row.fields.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata) if metadata.strip() else {}
        except ValueError:
            raise BadRow("'metadata' is not JSON") from None
    func_name = None
    if isinstance(metadata, dict):
        func_name = metadata.get("func_name") or metadata.get("fn_name")
    tests = _lcb_tests(row)
    platform = row.fields.get("platform") if isinstance(row.fields.get("platform"), str) else "livecodebench"
    difficulty = row.fields.get("difficulty") if isinstance(row.fields.get("difficulty"), str) else None
    functional = func_name is not None or any(t["testtype"] == "functional" for t in tests)
    common: dict[str, Any] = {"id": f"livecodebench/{question_id}", "category": platform, "subset": difficulty}
    if not functional:
        question = f"{content}\n\n{LCB_STDIN}"
        io_tests = [IoTest(input=t["input"], output=t["output"]) for t in tests]
        return _checked(row, CodeTask(question=question, code_prefix=LCB_IMPORTS, io_tests=io_tests, **common))
    if not isinstance(func_name, str) or not func_name.isidentifier():
        raise BadRow("a functional problem whose 'metadata' names no func_name")
    question = f"{content}\n\n{LCB_WITH_STARTER.format(starter=starter.rstrip())}" if starter.strip() else content
    entry = "Solution" if "class Solution" in starter else func_name
    test = _functional_check(tests, func_name, method=entry == "Solution")
    return _checked(row, CodeTask(question=question, code_prefix=LCB_IMPORTS, entry_point=entry, test=test, **common))


def _functional_check(tests: list[dict[str, str]], func_name: str, *, method: bool) -> str:
    """LiveCodeBench's call-based grading (testing_util.grade_call_based) as `check(candidate)`: each input line is
    one JSON argument, the output one JSON value; a tuple returned counts as a list; the first mismatch fails."""
    cases = [(t["input"], t["output"]) for t in tests]
    call = f"candidate().{func_name}" if method else "candidate"
    return (
        "import json\n\n"
        f"_CASES = {cases!r}\n\n"
        "def check(candidate):\n"
        "    for _number, (_input, _output) in enumerate(_CASES, start=1):\n"
        "        _args = [json.loads(_line) for _line in _input.split('\\n')]\n"
        f"        _got = {call}(*_args)\n"
        "        if isinstance(_got, tuple):\n"
        "            _got = list(_got)\n"
        "        _expected = json.loads(_output)\n"
        "        assert _got == _expected, f'test {_number}: expected {_expected!r}, got {_got!r}'\n"
    )


# --- shared ----------------------------------------------------------------------------------------------------------


def _identifier(row: Row, name: str) -> str:
    value = text(row, name)
    if not value.isidentifier():
        raise BadRow(f"{name!r} {value!r} is not a Python identifier")
    return value


def _code(row: Row, name: str) -> str:
    value = row.fields.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BadRow(f"no {name!r}")
    return value


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _checked(row: Row, task: CodeTask) -> CodeTask:
    """The task's fields checked as a suite line's are, so that an import never writes a line the suite refuses."""
    fields = {"entry_point": task.entry_point, "test": task.test, "code_prefix": task.code_prefix,
              "io_tests": None if task.io_tests is None else [{"input": t.input, "output": t.output}
                                                              for t in task.io_tests]}  # fmt: skip
    if (problem := task_fields_problem(fields)) is not None:
        raise BadRow(problem)
    return task


DATASETS = (
    Dataset(name="humaneval", label="HumanEval", files=("jsonl", "parquet"), task=humaneval_task),
    Dataset(
        name="mbpp",
        label="MBPP",
        files=("jsonl", "parquet"),
        task=mbpp_task,
        splits=("test", "train", "validation", "prompt"),  # _MBPP_SPLITS's, the one papers report first
        split_of=mbpp_split,
    ),
    Dataset(name="livecodebench", label="LiveCodeBench", files=("jsonl", "parquet"), task=_lcb_task),
)
