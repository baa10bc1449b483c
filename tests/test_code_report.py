"""How a code run looks (the code room's render.py and tally.py): real decisions, whose programs bubblewrap runs,
through rescore, report and compare; the outcomes per kind, the tasks no sandbox ran kept out of the accuracy, each
task's program, block and tests drawn in both reports, two runs' outcomes paired, and pass@k from `run --samples`.
Every expected count is written here by hand from the answers below."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import write_json
from faultserver import FaultServer, models
from faultserver import answer as reply
from helpers import CPU_HEAVY, run_cli

from ocllm.cli import main
from ocllm.models import Policy, Sample, decision_record
from ocllm.report.markdown_escaping import fenced
from ocllm.scoring import task_types
from ocllm.scoring.code import render
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeDecision, CodeLimits
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.code.tally import CodeTally

pytestmark = pytest.mark.slow  # each decision runs a program in bubblewrap

SRC = Path(__file__).resolve().parents[1] / "src"

FUNCTIONS = {
    "f1": ("add", "def check(candidate):\n    assert candidate(1, 2) == 3\n"),
    "f2": ("mul", "def check(candidate):\n    assert candidate(2, 3) == 6\n"),
    "f3": ("half", "def check(candidate):\n    assert candidate(4) == 2\n"),
    "f4": ("sub", "def check(candidate):\n    assert candidate(3, 1) == 2\n"),
    "f5": ("neg", "def check(candidate):\n    assert candidate(3) == -3\n"),
}
IO_TESTS = {
    "s1": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}],
    "s2": [{"input": "3\n", "output": "9\n"}, {"input": "4\n", "output": "16\n"}],
}


def fence(code: str) -> str:
    return f"Here is the code:\n\n```python\n{code}```\n"


# Run A: f1 passes, f2 fails its assertion, f3 raises, f4 is cut mid-expression (a syntax error on a truncated
# answer), f5 is empty (no code); s1 passes both stdin tests, s2 prints 6 where 9 is expected (line 1).
ANSWERS_A: dict[str, str | tuple[str, str]] = {
    "f1": fence("def add(a, b):\n    return a + b\n"),
    "f2": fence("def mul(a, b):\n    return a + b\n"),
    "f3": fence("def half(x):\n    raise ValueError('no halves today')\n"),
    "f4": ("```python\ndef sub(a, b):\n    return (a -", "length"),
    "f5": "",
    "s1": fence("a, b = map(int, input().split())\nprint(a + b)\n"),
    "s2": fence("n = int(input())\nprint(n * 2)\n"),
}
OUTCOMES_A = {"f1": "passed", "f2": "failed_assertion", "f3": "exception", "f4": "syntax_error", "f5": "no_code",
              "s1": "passed", "s2": "wrong_output"}  # fmt: skip
# Run B: every function task passes but f5 (fails its assertion); s1 now multiplies (wrong), s2 squares (right).
ANSWERS_B: dict[str, str | tuple[str, str]] = {
    "f1": fence("def add(a, b):\n    return a + b\n"),
    "f2": fence("def mul(a, b):\n    return a * b\n"),
    "f3": fence("def half(x):\n    return x // 2\n"),
    "f4": fence("def sub(a, b):\n    return a - b\n"),
    "f5": fence("def neg(x):\n    return x\n"),
    "s1": fence("a, b = map(int, input().split())\nprint(a * b)\n"),
    "s2": fence("n = int(input())\nprint(n * n)\n"),
}
# The outcomes paired, A -> B, counted by hand from the two tables above.
TRANSITIONS = {
    ("passed", "passed"): 1,  # f1
    ("failed_assertion", "passed"): 1,  # f2
    ("exception", "passed"): 1,  # f3
    ("syntax_error", "passed"): 1,  # f4
    ("no_code", "failed_assertion"): 1,  # f5
    ("passed", "wrong_output"): 1,  # s1
    ("wrong_output", "passed"): 1,  # s2
}


def task_fields(task_id: str) -> dict[str, Any]:
    if task_id in FUNCTIONS:
        entry, test = FUNCTIONS[task_id]
        return {"entry_point": entry, "test": test}
    return {"io_tests": IO_TESTS[task_id]}


def code_run(path: Path, name: str, answers: dict[str, str | tuple[str, str]]) -> Path:
    """A saved run in the old harness's metrics format, its records code tasks with their raw answers."""
    tasks = []
    for task_id, answer in answers.items():
        content, finish = answer if isinstance(answer, tuple) else (answer, "stop")
        tasks.append({
            "task_id": task_id, "task_type": "code", "category": "function" if task_id in FUNCTIONS else "stdin",
            "question": f"Write {task_id}.", "raw_content": content, "raw_reasoning": None, "finish_reason": finish,
            "extracted_final_answer": None, "correct": None, **task_fields(task_id),
        })  # fmt: skip
    return write_json(path / f"{name}.json", {"run_id": name, "lane": name, "tasks": tasks})


def text_of(markup: str) -> str:
    """An HTML fragment's text, its tags as separators."""
    return html.unescape(re.sub(r"\s*(<[^>]+>\s*)+", " | ", markup))


def task_html(page: str, task_id: str) -> str:
    start = page.index(f'data-task-id="{task_id}"')
    return page[start : page.index("</details>\n", start)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("code")
    a, b = code_run(folder, "A", ANSWERS_A), code_run(folder, "B", ANSWERS_B)
    rescored = folder / "A.rescored.json"
    assert main(["rescore", str(a), "-o", str(rescored)]) == 0
    report = folder / "report"
    assert main(["report", str(rescored), "-o", str(report)]) == 0
    comparison = folder / "comparison"
    assert main(["compare", str(a), str(b), "-o", str(comparison)]) == 0
    return {"folder": folder, "a": a, "b": b, "rescored": rescored, "report": report, "comparison": comparison}


def test_the_summary_counts_each_outcome_per_kind_and_flags_the_cut_syntax_error(runs: dict[str, Path]) -> None:
    doc = json.loads(runs["rescored"].read_text(encoding="utf-8"))
    assert {t["task_id"]: t["outcome"] for t in doc["tasks"]} == OUTCOMES_A
    details = doc["summary"]["by_type"]["code"]["details"]
    assert details["outcomes_by_kind"] == {
        "function": {"passed": 1, "failed_assertion": 1, "exception": 1, "syntax_error": 1, "no_code": 1},
        "stdin": {"passed": 1, "wrong_output": 1},
    }
    assert details["syntax_errors_truncated"] == 1 and details["sandbox_refused"] == 0
    assert (doc["summary"]["correct"], doc["summary"]["scored"], doc["summary"]["unscored"]) == (2, 7, 0)
    assert any("ended in a syntax error" in notice for notice in doc["notices"])


def test_the_run_report_draws_the_program_the_block_the_tests_and_the_outcomes(runs: dict[str, Path]) -> None:
    markdown = (runs["report"] / "report.md").read_text(encoding="utf-8")
    # The outcome table, per kind.
    assert "### Code outcomes" in markdown
    assert "| outcome | function tasks | stdin tasks | tasks | share |" in markdown
    assert "| failed_assertion | 1 | 0 | 1 | 14.3% |" in markdown
    assert "| syntax_error (1 on answers cut at max_tokens) | 1 | 0 | 1 | 14.3% |" in markdown
    # Each task's evidence in words: the block chosen, the test that failed with the line expected and printed.
    s2 = next(line for line in markdown.splitlines() if line.startswith("- `s2`"))
    assert "outcome: wrong_output (stdin task)" in s2 and "code taken: block 1 of 1 (python" in s2
    assert "test 1 failed: line 1 differs: expected '9', printed '6'" in s2
    # A program that failed is drawn whole, in a fenced block under its item.
    assert "  ```python\n  def mul(a, b):\n      return a + b\n  ```" in markdown
    f4 = next(line for line in markdown.splitlines() if line.startswith("- `f4`"))
    assert "truncated: the answer was cut at max_tokens" in f4

    page = (runs["report"] / "report.html").read_text(encoding="utf-8")
    outcomes = page[page.index("<h3>Code outcomes</h3>") :]
    outcomes = text_of(outcomes[: outcomes.index("</table>")])
    assert "| exception | 1 | 0 | 1 | 14.3% |" in outcomes and "| wrong_output | 0 | 1 | 1 | 14.3% |" in outcomes
    s2_view = task_html(page, "s2")
    program = re.search(r'<pre class="text listing" data-language="python">(.*?)</pre>', s2_view, re.S)
    assert program is not None and html.unescape(program.group(1)) == "n = int(input())\nprint(n * 2)"
    tests = text_of(s2_view[s2_view.index("<h4>Tests</h4>") : s2_view.index("<h4>Runs</h4>")])
    assert "test | result | first differing line | expected | printed | detail" in tests
    assert "| 1 | failed | 1 | '9' | '6' |" in tests and "| 2 | not_run |" in tests
    facts = text_of(s2_view)
    assert "code taken | block 1 of 1 (python" in facts and "sandbox | bubblewrap" in facts
    assert "limits | CPU 6 s a test" in facts
    # The block that ran is the deciding statement, marked in the answer.
    assert 'class="candidate deciding"' in s2_view and "ran" in facts


def test_compare_pairs_the_outcomes_in_the_document_and_both_formats(runs: dict[str, Path]) -> None:
    doc = json.loads((runs["comparison"] / "comparison.json").read_text(encoding="utf-8"))
    (table,) = doc["pair_tables"]
    assert table["task_type"] == "code" and table["header"] == ["outcome on A", "outcome on B", "tasks"]
    assert {(a, b): int(n) for a, b, n in table["rows"]} == TRANSITIONS
    assert "6 of 7 changed" in table["title"]
    assert table["rows"][-1] == ["passed", "passed", "1"]  # the outcomes kept come after the changes
    markdown = (runs["comparison"] / "comparison.md").read_text(encoding="utf-8")
    assert "### Code outcomes paired, A → B: 6 of 7 changed" in markdown
    assert "| exception | passed | 1 |" in markdown and "| no_code | failed_assertion | 1 |" in markdown
    page = (runs["comparison"] / "comparison.html").read_text(encoding="utf-8")
    section = page[page.index('data-pair-table="code"') :]
    section = text_of(section[: section.index("</table>")])
    assert "| syntax_error | passed | 1 |" in section and "| passed | wrong_output | 1 |" in section


def test_tasks_no_sandbox_ran_are_neither_right_nor_wrong_and_a_notice_says_why(runs: dict[str, Path]) -> None:
    """OCLLM_SANDBOX names an engine that is not installed: nothing runs (in a process of its own: the sandbox is
    chosen once per process). Every code task is unscored, the empty answer's too: without a sandbox nothing is
    decided (docs/scoring/code.md, C10)."""
    out = runs["folder"] / "refused.json"
    env = {**os.environ, "OCLLM_SANDBOX": "podman", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "ocllm", "rescore", str(runs["a"]), "-o", str(out)], env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    summary = doc["summary"]
    assert (summary["total"], summary["errors"], summary["unscored"], summary["scored"]) == (7, 0, 7, 0)
    assert (summary["correct"], summary["no_answer"]) == (0, 0)  # not scored is not "no answer"
    assert summary["by_type"]["code"]["details"]["sandbox_refused"] == 7
    assert summary["by_category"]["stdin"]["scored"] == 0  # both stdin tasks unscored: no accuracy, not 0%
    notice = next(n for n in doc["notices"] if "not run" in n)
    assert notice.startswith("7 code task(s) were not run: no sandbox can run the programs")
    assert "podman is not installed" in notice and "left out of the accuracy" in notice
    report = runs["folder"] / "refused-report"
    done = subprocess.run(
        [sys.executable, "-m", "ocllm", "report", str(out), "-o", str(report)], env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "| sandbox_refused (not run: left out of the accuracy) | 5 | 2 | 7 | 100.0% |" in markdown
    assert "7 code task(s) were not run" in markdown
    # A comparison leaves them out of the pairs, saying they were not scored (not that a request failed): all
    # seven, since f5 has code on B.
    comparison = runs["folder"] / "refused-comparison"
    done = subprocess.run(
        [sys.executable, "-m", "ocllm", "compare", str(runs["a"]), str(runs["b"]), "-o", str(comparison)], env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    notices = json.loads((comparison / "comparison.json").read_text(encoding="utf-8"))["notices"]
    assert any(n.startswith("7 task(s) were answered but not scored on one side or both") for n in notices)
    assert not any("failed on one side" in n for n in notices)


def test_a_sampled_code_lane_gives_pass_at_k(tmp_path: Path) -> None:
    """`run --samples 4` on two function tasks: each answer defines both functions, right in the first answer the
    server gives and wrong in the seven others, so one task has 1 passing sample of 4 and the other none, in
    whichever order the requests come: pass@1 = (1/4 + 0)/2, pass@4 = (1 + 0)/2."""
    suite = tmp_path / "code.jsonl"
    lines = [{"id": tid, "type": "code", "category": "function", "question": f"Write {FUNCTIONS[tid][0]}.",
              "entry_point": FUNCTIONS[tid][0], "test": FUNCTIONS[tid][1]} for tid in ("f1", "f2")]  # fmt: skip
    suite.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    right = fence("def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n")
    wrong = fence("def add(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a - b\n")
    out = tmp_path / "run"
    with FaultServer() as server:
        server.script(models("m"), reply(right), *[reply(wrong) for _ in range(7)])
        assert run_cli(server.base_url, out, "--samples", "4", suite=suite, concurrency=1) == 0
    summary = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["summary"]
    assert summary["samples_per_task"] == 4 and summary["scored"] == 8 and summary["correct"] == 1
    assert summary["pass_at_k"]["1"] == pytest.approx(0.125) and summary["pass_at_k"]["4"] == pytest.approx(0.5)
    assert summary["pass_at_k"]["2"] == pytest.approx((1 - 3 / 6) / 2)  # 1 - C(3,2)/C(4,2) for the task with one
    assert summary["by_type"]["code"]["details"]["outcomes"] == {"passed": 1, "failed_assertion": 7}


@CPU_HEAVY  # a program run to its CPU limit
def test_timeouts_are_split_by_the_limit_reached() -> None:
    """Two programs under small limits, each far from the other limit (a loaded machine must not change which is
    reached): one spins (CPU), one sleeps (wall: time not waiting for a CPU)."""
    task = CodeTask(id="t", question="q", entry_point="f", test="def check(candidate):\n    candidate()\n")
    tally = CodeTally()
    records = []
    for body, limits in (
        ("    while True:\n        pass\n", CodeLimits(cpu_s=0.5, wall_s=60)),
        ("    import time\n    time.sleep(60)\n", CodeLimits(cpu_s=30, wall_s=1)),
    ):
        sample = Sample(task_id="t", content=fence("def f():\n" + body), finish_reason="stop")
        decision = decide_code(task, sample, Policy(), limits)
        assert decision.outcome == "timeout"
        tally.add(decision)
        records.append(decision_record(decision))
    assert tally.figures()["timeouts"] == {"cpu": 1, "wall": 1}
    (table,) = render.detail_tables(tally.figures())
    assert table.rows == [["timeout (CPU 1, wall 1)", "2", "2", "100.0%"]]
    spin, sleep = (task_types.scored(record) for record in records)
    assert dict(render.evidence_lines(spin))["run"].endswith("cpu time limit reached")
    assert "limits" in dict(render.evidence_lines(sleep))  # a limit decided: the Markdown names the limits


def test_pair_tables_count_transitions_and_list_changes_first() -> None:
    def side(rule: str, error: str | None = None) -> Any:  # what pair_tables reads of a side (task_type.Compared)
        return SimpleNamespace(rule=rule, error=error)

    pairs = [(side("timeout"), side("passed"))] * 5
    pairs += [(side("passed"), side("passed"))] * 2
    pairs += [(side("request_error", "HTTP 500"), side("sandbox_refused"))]
    (table,) = render.pair_tables(pairs, "A", "B")
    assert table.rows == [["timeout", "passed", "5"], ["request_error", "sandbox_refused", "1"],
                          ["passed", "passed", "2"]]  # fmt: skip
    assert table.title.endswith("6 of 8 changed")


def test_a_long_program_is_cut_saying_where_and_a_fence_inside_it_cannot_close_the_block() -> None:
    program = "".join(f"x{i} = {i}\n" for i in range(render.PROGRAM_LINES + 50))
    decision = CodeDecision(
        task_id="t", task_type="code", category="c", expected_answer=None, extracted_final_answer="ab" * 32,
        extraction_source="content", extraction_method="whole_answer", ambiguity="none", correct=False,
        rule="failed_assertion", reason="", outcome="failed_assertion", program=program, program_sha256="ab" * 32,
        code=program,
    )  # fmt: skip
    (listing,) = render.task_view(task_types.scored(decision_record(decision))).listings
    assert listing.text.count("\n") == render.PROGRAM_LINES and "50 more" in (listing.note or "")
    block = fenced("s = '```'\nprint(s)", "python", indent="  ")
    assert block[0] == "  ````python" and block[-1] == "  ````"


def test_an_old_harness_code_records_earlier_verdict_is_named_by_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old harness's record of a code task holds its verdict (`correct`) and no extraction: the changed decision
    says the earlier verdict is that field's and that no program was recorded (it said "no code (none found) via ?")."""
    tasks = []
    for task_id, body, correct in (("f1", "return a - b", True), ("f2", "return a + b", False)):
        tasks.append({
            "task_id": task_id, "task_type": "code", "category": "function", "question": "Write add.",
            "raw_content": fence(f"def add(a, b):\n    {body}\n"), "finish_reason": "stop",
            "extracted_final_answer": None, "correct": correct, **task_fields("f1"),
        })  # fmt: skip
    old = write_json(tmp_path / "old.json", {"run_id": "old", "lane": "old", "tasks": tasks})
    audit = tmp_path / "audit.md"
    assert main(["rescore", str(old), "-o", str(tmp_path / "out.json"), "--report", str(audit)]) == 0
    console = " ".join(capsys.readouterr().out.replace("│", " ").split())  # the table's cells wrap: words in order
    assert "Changed decisions (2)" in console and "via ?" not in console
    assert "f1 - no program recorded; verdict: the input's `correct` field → correct" in console
    assert "f2 - no program recorded; verdict: the input's `correct` field → incorrect" in console
    rows = [line for line in audit.read_text(encoding="utf-8").splitlines() if line.startswith("| `f")]
    # The audit's cells are escaped as every report's (issue 42): the words' backticks are shown as written.
    said = "no program recorded; verdict: the input's \\`correct\\` field"
    assert rows[0].startswith(f"| `f1` | - | {said} → correct | ")
    assert rows[1].startswith(f"| `f2` | - | {said} → incorrect | ")
