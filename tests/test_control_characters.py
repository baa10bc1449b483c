"""Control characters of text a model or a program produced are drawn escaped, as visible text (ocllm/visible_text.py;
docs/comparing.md, "Control characters"): in report.md, report.html (and in a real browser, the page's text), the
comparison's files, the rescore audit and the console, and in the one line of an error. A program prints ESC
sequences, a NUL and a right-to-left override; the answers, a task id, a category, a lane's name and an earlier
verdict's text hold them too. Real files in the old harness's format, the real `ocllm` commands; the program runs in
bubblewrap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, sync_playwright

from ocllm.cli import main
from ocllm.report.html_rendering import filter_script
from ocllm.visible_text import visible

SRC = Path(__file__).resolve().parents[1] / "src"
CHROMIUM = Path("/usr/bin/chromium")

HOSTILE = "\x1b[2J\x1b[31mRED\x00\u202eevil"  # clears the screen, turns red, a NUL, then reverses what follows
SHOWN = "\\x1b[2J\\x1b[31mRED\\x00U+202Eevil"  # the same, as every renderer writes it

# The bidirectional controls (Unicode's bidi classes LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, and the three
# marks LRM, RLM, ALM), written out here rather than taken from the module under test.
BIDI = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
        "\u200e", "\u200f", "\u061c"}  # fmt: skip


def hidden(text: str) -> list[str]:
    """The characters of `text` a terminal or a page would act on instead of showing: the controls (Unicode's
    category Cc) but a line feed and a tab, the line and paragraph separators (Zl, Zp), the bidirectional controls."""
    found = {
        f"U+{ord(c):04X}"
        for c in text
        if (unicodedata.category(c) == "Cc" and c not in "\n\t") or unicodedata.category(c) in ("Zl", "Zp") or c in BIDI
    }
    return sorted(found)


# --- the convention ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "block", "inline"),
    [
        (HOSTILE, SHOWN, SHOWN),
        ("\x7f\x85\x9f\x01", "\\x7f\\x85\\x9f\\x01", "\\x7f\\x85\\x9f\\x01"),
        ("a\u2028b\u2029c", "aU+2028bU+2029c", "aU+2028bU+2029c"),
        ("\u200e\u200f\u061c\u2066x\u2069\u202a", "U+200EU+200FU+061CU+2066xU+2069U+202A",
         "U+200EU+200FU+061CU+2066xU+2069U+202A"),
        # A block keeps its line feeds and tabs, and a carriage return before a line feed; inline, none stays.
        ("line 1\nline 2\tend", "line 1\nline 2\tend", "line 1\\nline 2\\tend"),
        ("dos\r\nline", "dos\r\nline", "dos\\r\\nline"),
        ("progress 10%\rprogress 50%", "progress 10%\\rprogress 50%", "progress 10%\\rprogress 50%"),
        # Printable text of any script stays as it is, joiners of emoji and scripts too; so does a backslash.
        ("café ∑ 漢字 عربي 👍🏽 👨\u200d👩 a\\x1b", "café ∑ 漢字 عربي 👍🏽 👨\u200d👩 a\\x1b",
         "café ∑ 漢字 عربي 👍🏽 👨\u200d👩 a\\x1b"),
    ],
)  # fmt: skip
def test_the_convention(text: str, block: str, inline: str) -> None:
    assert visible(text) == block
    assert visible(text, inline=True) == inline


def test_no_character_that_acts_or_hides_survives() -> None:
    every = "".join(chr(c) for c in range(0x30000) if not 0xD800 <= c <= 0xDFFF)
    assert hidden(every)  # the check sees them
    assert hidden(visible(every)) == []
    inline = visible(every, inline=True)
    assert hidden(inline) == [] and "\n" not in inline and "\t" not in inline


def test_the_pages_own_script_holds_nothing_the_page_escapes() -> None:
    """The page is escaped whole after rendering; its script's Content-Security-Policy hash is computed before, so
    the script must be left as it is (the browser test below runs it)."""
    assert visible(filter_script()) == filter_script()


# --- a run whose program printed them, through rescore, report and compare --------------------------------------


def program() -> str:
    """A standard-input program that prints HOSTILE to stdout and stderr (from escapes in its source), with the
    raw characters (but NUL, which no Python source may hold) in a comment."""
    return (
        "import sys\n"
        f"# {HOSTILE.replace(chr(0), '')} in a comment\n"
        f"sys.stdout.write({HOSTILE + chr(10)!r})\n"
        f"sys.stderr.write({HOSTILE + chr(10)!r})\n"
    )


def records(mcq_answer: str) -> list[dict[str, Any]]:
    """Three tasks, each the input marked correct: a code task whose program prints HOSTILE (wrong_output: 3 was
    expected), an MCQ task whose id, category, answer, reasoning and earlier extraction hold it, and a math task
    whose boxed answer holds it."""
    return [
        {"task_id": "s1", "task_type": "code", "category": "stdin", "question": "Print the sum.",
         "raw_content": f"Here {HOSTILE}:\n\n```python\n{program()}```\n", "raw_reasoning": None,
         "finish_reason": "stop", "correct": True, "io_tests": [{"input": "1 2\n", "output": "3\n"}]},
        {"task_id": "mcq\u202e1", "task_type": "mcq", "category": "cat\x1b[7mgory", "question": "Pick.",
         "options": ["w", "x", "y", "z"], "expected_answer": "A", "raw_content": f"Thinking {HOSTILE}\n{mcq_answer}",
         "raw_reasoning": f"maybe {HOSTILE}", "finish_reason": "stop", "extracted_final_answer": "B\x1b[31m",
         "extraction_method": "final\u202emarker", "correct": True},
        {"task_id": "math1", "task_type": "math", "category": "c", "question": "q", "expected_answer": "4",
         "raw_content": f"So {HOSTILE} the answer is \\boxed{{5\x1b[0m\u202e}}", "raw_reasoning": None,
         "finish_reason": "stop", "correct": True},
    ]  # fmt: skip


def ocllm(*args: str) -> str:
    """An `ocllm` command as a user runs it (its output piped): what it printed, stdout and stderr."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "ocllm", *args], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("controls")
    old = folder / "old.json"
    old.write_text(json.dumps({"run_id": "r", "lane": "L\x1b[5m", "tasks": records("FINAL: B")}), encoding="utf-8")
    other = folder / "other.json"
    other.write_text(json.dumps({"run_id": "o", "lane": "O", "tasks": records("FINAL: A")}), encoding="utf-8")
    rescored, audit = folder / "rescored.json", folder / "audit.md"
    console = ocllm("rescore", str(old), "-o", str(rescored), "--report", str(audit))
    console += ocllm("report", str(rescored), "-o", str(folder / "report"))
    console += ocllm("compare", str(old), str(other), "-o", str(folder / "comparison"))
    return {"folder": folder, "rescored": rescored, "audit": audit, "console": console}


@pytest.mark.slow  # the program runs in bubblewrap
def test_the_decisions_hold_the_text_exactly(made: dict[str, Any]) -> None:
    """Only what is drawn is escaped: the JSON document keeps what the program printed, byte for byte."""
    tasks = {t["task_id"]: t for t in json.loads(made["rescored"].read_text(encoding="utf-8"))["tasks"]}
    code = tasks["s1"]
    assert code["outcome"] == "wrong_output" and code["runs"][-1]["stdout_head"] == HOSTILE + "\n"
    assert code["runs"][-1]["stderr_head"] == HOSTILE + "\n" and code["tests"][0]["got"] == HOSTILE
    assert tasks["mcq\u202e1"]["raw_reasoning"] == f"maybe {HOSTILE}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["report/report.md", "report/report.html", "comparison/comparison.md", "comparison/comparison.html"]
)
def test_no_control_character_reaches_a_report_and_each_shows_escaped(made: dict[str, Any], name: str) -> None:
    text = (made["folder"] / name).read_text(encoding="utf-8")
    assert hidden(text) == []
    if name.startswith("report/"):
        # What the program printed, as a listing (a block: its line break stays) and in its tests' table.
        assert SHOWN in text
        assert "U+202E" in text and "\\x00" in text  # the task id, the answers
        assert "cat\\\\x1b" in text if name.endswith(".md") else "cat\\x1b[7mgory" in text  # a cell's \ is escaped
    else:
        assert "mcqU+202E1" in text  # the flipped task, by its id


@pytest.mark.slow
def test_the_markdown_report_draws_the_output_as_a_listing(made: dict[str, Any]) -> None:
    markdown = (made["folder"] / "report" / "report.md").read_text(encoding="utf-8")
    # The program and what it printed, in fenced blocks under the task's item, line by line as they were.
    assert "  ```python\n  import sys\n  # \\x1b[2J\\x1b[31mREDU+202Eevil in a comment\n" in markdown
    assert f"  ```\n  {SHOWN}\n  ```" in markdown
    # In the item's words the test's line, quoted: what was expected and what was printed.
    assert "expected '3', printed '\\\\x1b\\[2J" in markdown


@pytest.mark.slow
def test_the_audit_and_the_console_show_them_escaped(made: dict[str, Any]) -> None:
    audit = made["audit"].read_text(encoding="utf-8")
    assert hidden(audit) == []
    # The earlier extraction, as the input had it: its escape written out, then escaped as every report's cells are.
    assert "B\\\\x1b\\[31m via finalU+202Emarker → correct" in audit
    console = made["console"]
    assert hidden(console) == []
    # The changed decisions' table (task id, the input's answer and method, this scorer's answer), the categories'
    # rows, the lane's name as the report's title.
    for shown in ("mcqU+202E1", "B\\x1b[31m via finalU+202Emarker", "5\\x1b[0mU+202E via boxed", "cat\\x1b[7mgory",
                  "L\\x1b[5m"):  # fmt: skip
        assert shown in console, shown


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from test_report_browser import ARGS

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium`, or `make browser`")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.mark.slow  # a real headless browser
def test_the_page_shows_them_as_text_in_a_browser(made: dict[str, Any], browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    try:
        page.goto((made["folder"] / "report" / "report.html").as_uri(), wait_until="load")
        # What a reader sees, each task opened as a reader opens it.
        code = page.locator('details.task[data-task-id="s1"]')
        code.locator(":scope > summary").click()
        for listing in code.locator("pre.text.listing:not([data-language])").all():  # stdout, stderr
            listing.scroll_into_view_if_needed()
            assert listing.inner_text().rstrip("\n") == SHOWN  # as the program printed it, escaped
        assert f"'3'\t'{SHOWN}'" in code.inner_text()  # its test's row: expected, printed
        task = page.locator('details.task[data-task-id="mcqU+202E1"]')
        task.locator(":scope > summary").click()
        drawn = task.inner_text()
        assert f"Thinking {SHOWN}" in drawn and "cat\\x1b[7mgory" in drawn and hidden(drawn) == []
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert hidden(page.evaluate("document.body.textContent")) == []  # the whole page's text, drawn or not
        # The filter script runs (its hash held) and finds the task by its id as the page shows it.
        page.fill("#task-filter", "U+202E1")
        shown_tasks = "els => els.filter(e => !e.hidden).map(e => e.dataset.taskId)"
        assert page.eval_on_selector_all("details.task", shown_tasks) == ["mcqU+202E1"]
        assert problems == []
    finally:
        page.close()


def test_an_error_quoting_a_file_name_stays_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "run\x1b[2J\nsecond line\u202e.json"
    assert main(["rescore", str(missing), "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and hidden(err) == []
    assert err.startswith("ocllm: error: ") and "run\\x1b[2J\\nsecond lineU+202E.json" in err
