"""The typed evidence of a code decision: which block ran and why, the exact program, the sandbox and its limits,
what the program did, and each test's result. docs/scoring/code.md names every value of the closed sets."""

from __future__ import annotations

from typing import Literal

import msgspec

from ocllm.models import Decision

# The outcome of a code task (rule C8): `correct` is true for "passed" alone. "sandbox_refused" means nothing ran,
# "tests_error" that the task's tests could not be run against the program (they fail before any call reaches it, or
# pass what cannot cross to it, or read a name nothing defines: `dataset_defect`): the harness's or the dataset's
# side, kept out of accuracy (`correct` None) and shown apart.
Outcome = Literal[
    "passed", "failed_assertion", "wrong_output", "exception", "timeout", "memory_limit", "output_limit",
    "syntax_error", "no_code", "tests_error", "sandbox_refused",
]  # fmt: skip
# The rule that decided is the outcome, or request_error for a failed request.
CodeRule = Literal[
    "passed", "failed_assertion", "wrong_output", "exception", "timeout", "memory_limit", "output_limit",
    "syntax_error", "no_code", "tests_error", "sandbox_refused", "request_error",
]  # fmt: skip
# How the code that ran was taken from the visible answer (rules C2-C4).
CodeMethod = Literal[
    "fenced_defining",  # the last fenced block that defines the entry point (function tasks)
    "fenced_last",  # the last fenced block (standard-input tasks; a function task whose blocks define nothing)
    "whole_answer",  # no fences: the whole visible answer parses as Python
    "prefix_body",  # no fences: an indented body that continues the code prefix
    "longest_span",  # no fences: the longest parseable span holding `def <entry_point>`
    "none",
]  # fmt: skip
CodeAmbiguity = Literal["none", "unclosed_fence", "several_defining_blocks"]
# Why no code was run (outcome no_code).
NoCodeReason = Literal[
    "empty", "reasoning_only", "unclosed_think", "prose_only", "cut_off", "other_language", "stub_only",
]  # fmt: skip
# Where a function program's entry point comes from (rule C7), never the code prefix's stub: a def (or other binding)
# of the model's code ("answer"), the prefix's signature completed by the model's indented body ("answer_body"),
# nowhere ("none": the code defines none, the prefix's stub is left out, and the run reports it missing), or not
# known because the program does not parse ("unparsed": the model's code reports its own syntax error).
EntryPointFrom = Literal["answer", "answer_body", "none", "unparsed"]
TimeoutKind = Literal["cpu", "wall"]
SandboxKind = Literal["bubblewrap", "podman", "docker"]


class CodeBlock(msgspec.Struct, kw_only=True):
    """One fenced block of the visible answer, a candidate (rule C2). `start`/`end` index into the raw content
    field; `first_line`/`last_line` (from 1) into it too. `role`: what became of it."""

    index: int
    start: int
    end: int
    first_line: int
    last_line: int
    label: str  # the fence's info string as written ("python", "py", "" when none)
    closed: bool = True  # False: the last fence opened and never closed (the block runs to the end of the answer)
    python: bool = True  # tagged python/py/python3 or untagged; another language's block is never run
    parses: bool = False
    defines_entry_point: bool = False  # a def of the entry point with a body, at its top level (C3)
    stub: bool = False  # its entry point is a stub (a def with only its docstring), or it is a body adding only that
    quoted: bool = False  # its code was taken out of a string the model wrapped it in (C3)
    role: Literal["ran", "prepended", "not_run"] = "not_run"


class Prepended(msgspec.Struct, kw_only=True):
    """What the chosen block uses from an earlier block, put before it (rule C3): the block, and the imports and
    definitions taken, by name (`import re`, `def helper`, `class Node`)."""

    block: int
    names: list[str]


class LeftOut(msgspec.Struct, kw_only=True):
    """A definition the chosen block uses that an earlier block gives but that was not taken, because taking it
    would run code (rule C3): a class body, a default value, a decorator or a constant that calls something."""

    block: int
    name: str  # as `prepended` lists names: "class Helper", "def g", "SEEN ="
    why: str


OutsideError = Literal["syntax_error", "exception"]  # what failed outside the entry point: an OutsideFailure's error


class OutsideFailure(msgspec.Struct, kw_only=True):
    """The program defined the entry point, intact, and code outside its def failed (C8): a usage line that does not
    parse (outcome syntax_error), or a top-level statement that raised while the program's definitions ran (outcome
    exception). Lines are the program's, from 1: the failing one and its text, and the entry point's def."""

    error: OutsideError
    line: int
    text: str
    entry_point_first_line: int
    entry_point_last_line: int


class EntryPointOnly(msgspec.Struct, kw_only=True):
    """The lane runs function programs as their entry point and what it uses (`code_runs = "entry_point_only"`,
    C7a): the top-level statements kept, as `def f`, `class Node`, `import re`, `MOD =`, and how many non-blank lines
    of the program as written were left out. `found` false: no span that parses defines the entry point, and the
    program ran as written."""

    found: bool
    kept: list[str] = msgspec.field(default_factory=list)
    left_out_lines: int = 0


class DatasetDefect(msgspec.Struct, kw_only=True):
    """The task's tests read a name that neither the task (its question, its code prefix) nor the program defines
    (C8): a defect of the dataset's tests, such as MBPP 367's setup code using the class `Node` that only MBPP's
    reference solution defines. `where`: the line of the tests that raised NameError, when known."""

    name: str
    where: str | None = None


class CodeLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The limits every program ran under (docs/lanes.md, "Code sandbox"), recorded in each decision. `cpu_s` is
    per program (per test for a standard-input task); `wall_s` counts the time the program was not waiting for a
    CPU, so a loaded machine never makes it run out (rule C9)."""

    cpu_s: float = 10.0
    stdin_cpu_s: float = 6.0
    wall_s: float | None = None  # None: 3 x the CPU limit + 5 s
    memory_bytes: int = 2 * 1024**3
    processes: int = 64
    output_bytes: int = 16 * 1024**2  # per stream (stdout, stderr)
    file_bytes: int = 16 * 1024**2  # the largest file it may write (and its tmpfs's size)
    open_files: int = 256

    def wall_for(self, cpu_s: float) -> float:
        return self.wall_s if self.wall_s is not None else 3 * cpu_s + 5


class Sandbox(msgspec.Struct, kw_only=True):
    """Where the program ran: the sandbox's kind and version, the interpreter inside it, the limits."""

    kind: SandboxKind | None  # None: no sandbox could run it (outcome sandbox_refused)
    version: str | None
    interpreter: str | None
    python_version: str | None
    limits: CodeLimits
    refused: str | None = None  # why no sandbox ran it, and how to fix that
    seccomp: str | None = None  # the kernel-call filter in force, in words
    tests_apart: bool = False  # a function task's tests ran in a box of their own, the program answering calls


class ProgramRun(msgspec.Struct, kw_only=True):
    """One run of the program in its own sandbox (a function task's one, a standard-input task's one per test)."""

    exit_status: int | None  # the program's exit code; None when a signal ended it
    signal: str | None = None  # "SIGKILL", "SIGXCPU", ...
    cpu_s: float = 0.0
    wall_s: float = 0.0
    stdout_head: str = ""
    stderr_head: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    timeout: TimeoutKind | None = None
    memory_limit: bool = False
    output_limit: bool = False
    calls: int | None = None  # a function task's: the calls of the tests that reached the program


class TestResult(msgspec.Struct, kw_only=True):
    """One test's result. A function task's `check` is one test. A standard-input test that printed something else
    names the first line that differs (from 1) with the line expected and the line printed."""

    index: int
    result: Literal["passed", "failed", "error", "timeout", "memory_limit", "output_limit", "not_run"]
    detail: str = ""
    line: int | None = None
    expected: str | None = None
    got: str | None = None


class CodeDecision(Decision, kw_only=True):
    """A code task's verdict. `correct` is true when the outcome is "passed", None when the sandbox refused (nothing
    ran), else false. `candidates` are the visible answer's fenced blocks (CodeBlock) and `decided_by` the one that
    ran. `extracted_final_answer` is the program's sha256 (the program itself is `program`)."""

    extraction_method: CodeMethod
    ambiguity: CodeAmbiguity
    rule: CodeRule
    candidates: list[CodeBlock] = msgspec.field(default_factory=list)  # the visible answer's fenced blocks
    outcome: Outcome | None = None  # None for a failed request
    task_kind: Literal["function", "stdin"] = "function"
    chosen_why: str = ""  # why this block (or span) was the code that ran
    no_code_reason: NoCodeReason | None = None
    prepended: list[Prepended] = msgspec.field(default_factory=list)
    left_out: list[LeftOut] = msgspec.field(default_factory=list)  # used, given earlier, not taken: it would run code
    quoted: bool = False  # the code was taken out of a string the model wrapped it in (C3, C5)
    entry_point_from: EntryPointFrom | None = None  # None: a standard-input task, or no code
    prefix_stub_left_out: bool = False  # the code prefix's def of the entry point was left out of the program (C7)
    code: str | None = None  # the code taken from the answer
    # The code taken holds the code prefix's docstring again (tokens the prompt made the model spend); None: the task
    # has no docstring to repeat, or no code was taken.
    repeated_docstring: bool | None = None
    program: str | None = None  # the exact program run (C7): the code prefix (less a stub left out), then the code
    # The lane asked for the entry point alone (C7a): what was kept of the program as written. None: it ran as written.
    entry_point_only: EntryPointOnly | None = None
    program_sha256: str | None = None
    syntax_error: str | None = None  # the compiler's message and line, for outcome syntax_error
    # The entry point was defined, and code outside it failed (a syntax error or exception at a line outside its def).
    failed_outside_entry_point: OutsideFailure | None = None
    dataset_defect: DatasetDefect | None = None  # outcome tests_error: the tests read a name nothing defines (C8)
    sandbox: Sandbox | None = None
    runs: list[ProgramRun] = msgspec.field(default_factory=list)
    tests: list[TestResult] = msgspec.field(default_factory=list)
