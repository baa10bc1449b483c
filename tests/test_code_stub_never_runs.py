"""A prompt stub never runs in place of the model's code (docs/scoring/code.md, C3, C5 and C7): the program is the
code prefix (HumanEval's prompt: a signature and a docstring) and the code taken from the answer, and whatever the
answer holds, the entry point the tests call is never the prompt's stub. Extraction only: nothing is run here (the
sandboxed outcomes of the same shapes are in tests/test_code_real_outputs.py)."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring.code import extract as extract_module
from ocllm.scoring.code.extract import Extraction, extract_code
from ocllm.scoring.code.fields import CodeTask

REAL = Path(__file__).parent / "data" / "code" / "real"
ROWS = {
    row["task_id"]: row
    for row in map(json.loads, gzip.decompress((REAL / "HumanEval-real.jsonl.gz").read_bytes()).decode().splitlines())
}
MISTRAL = [json.loads(line) for line in (REAL / "mistral-7b-instruct_humaneval_results.jsonl").read_text().splitlines()]
LLAMA = [json.loads(line) for line in (REAL / "llama-7b_humaneval_samples.jsonl").read_text().splitlines()]
TRUNCATE = ROWS["HumanEval/2"]  # def truncate_number(number: float) -> float: """...""" (its prompt)


def humaneval(task_id: str = "HumanEval/2") -> CodeTask:
    row = ROWS[task_id]
    return CodeTask(id=task_id, question="q", entry_point=row["entry_point"], test=row["test"],
                    code_prefix=row["prompt"])  # fmt: skip


def read(content: str, task: CodeTask | None = None, **sample: object) -> Extraction:
    return extract_code(task or humaneval(), Sample(task_id="t", content=content, **sample), Policy())  # type: ignore[arg-type]


def program(found: Extraction) -> str:
    assert found.code is not None and found.program is not None, found.why
    return found.program


def entry_of(source: str, entry: str = "truncate_number") -> ast.FunctionDef | None:
    """The def a program ends up calling `entry` (its last top-level def of it), or None."""
    found = None
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            found = node
    return found


def is_docstring_only(node: ast.FunctionDef) -> bool:
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in node.body)


def syntax_error_line(source: str) -> int:
    with pytest.raises(SyntaxError) as raised:
        compile(source, "solution.py", "exec", dont_inherit=True)
    assert raised.value.lineno is not None
    return raised.value.lineno


PROMPT = TRUNCATE["prompt"]
PROMPT_LINES = PROMPT.count("\n")


# --- item: answers whose code does not compile ------------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(MISTRAL)), ids=[f"{r['task_id']}#{i}" for i, r in enumerate(MISTRAL)])
def test_published_evalplus_joins_never_run_the_prompt_stub(index: int) -> None:
    """Mistral-7B-Instruct's published HumanEval samples, joined to the prompt as evalplus joins a completion: the
    prompt's stub used to be the longest parsing span (its docstring, cut at the blank line before the model's
    broken code). Now the program is the model's code: its own syntax error, its own def, or no code at all."""
    line = MISTRAL[index]
    task = humaneval(line["task_id"])
    found = read(task.code_prefix + line["completion"], task)  # type: ignore[operator]
    if found.code is None:
        assert (found.no_code_reason, line["completion"]) == ("stub_only", ""), found.why
        return
    source = program(found)
    entry = task.entry_point or ""
    if found.entry_point_from == "unparsed":
        # The error the program reports is in the model's completion, past the prefix and past the restated prompt.
        assert syntax_error_line(source) > 2 * task.code_prefix.count("\n"), found.why  # type: ignore[union-attr]
        assert found.method == "whole_answer"
    else:
        assert found.entry_point_from == "answer", found.why
        chosen = entry_of(source, entry)
        assert chosen is not None and not is_docstring_only(chosen)
        assert chosen.lineno > task.code_prefix.count("\n")  # type: ignore[union-attr]


def test_a_restated_prompt_then_a_broken_body_reports_its_own_syntax_error() -> None:
    """A chat answer restating the prompt, a blank line, then a body that does not compile: the longest span that
    parses used to be the signature and docstring alone (the stub), which ran and failed every assertion."""
    content = ("Here is the solution:\n\n" + PROMPT.strip("\n") + "\n\n    return number - int(number\n\n"
               "This subtracts the integer part.")  # fmt: skip
    found = read(content)
    assert (found.method, found.entry_point_from) == ("longest_span", "unparsed"), found.why
    assert found.code is not None and found.code.rstrip().endswith("return number - int(number")
    assert syntax_error_line(program(found)) > PROMPT_LINES
    assert "does not parse" in found.why


def test_a_whole_answer_that_starts_with_an_assignment_runs_as_written() -> None:
    """HumanEval/64's prompt starts `FIX = \"\"\"`: an evalplus join of it with a body at the wrong indentation is
    code that does not parse, and runs so that it reports its error (it used to be the stub's span)."""
    line = next(r for r in MISTRAL if r["task_id"] == "HumanEval/64" and r["completion"].startswith("vowels"))
    task = humaneval("HumanEval/64")
    found = read(task.code_prefix + line["completion"], task)  # type: ignore[operator]
    assert (found.method, found.entry_point_from) == ("whole_answer", "unparsed"), found.why
    assert 'vowels = "aeiouAEIOU"' in (found.code or "")


def test_an_indented_body_that_does_not_parse_runs_after_the_prompt() -> None:
    found = read("    if number > 0:\n        return number - int(number\n")
    assert (found.method, found.entry_point_from) == ("prefix_body", "unparsed"), found.why
    assert syntax_error_line(program(found)) > PROMPT_LINES
    assert read("    Here is the code you asked for\n").no_code_reason == "prose_only"


# --- item: the prompt's stub in place of the model's def --------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "```python\nclass Solution:\n    def truncate_number(self, number):\n        return number % 1\n```",
        "```python\ndef fractional_part(number):\n    return number % 1\n```",
        "```python\nif __name__ == '__main__':\n    def truncate_number(number):\n        return number % 1\n```",
    ],
    ids=["method-of-a-class", "differently-named", "under-main-guard"],
)  # fmt: skip
def test_code_that_defines_no_entry_point_runs_without_the_prompts_stub(content: str) -> None:
    """The chosen code defines no truncate_number at its top level. The prompt's stub used to be the entry point
    (returning None, failed_assertion); now it is left out and the run reports the entry point missing."""
    found = read(content)
    assert (found.method, found.entry_point_from, found.prefix_stub_left_out) == ("fenced_last", "none", True)
    source = program(found)
    assert entry_of(source) is None
    assert "Given a positive floating point number" not in source  # the stub's docstring is gone with it
    assert "stub of truncate_number() is left out" in found.why


def test_the_prefix_keeps_everything_but_the_stub() -> None:
    """HumanEval/32's prompt defines poly (whole) and find_zero (the stub): only find_zero is left out."""
    task = humaneval("HumanEval/32")
    found = read("```python\ndef solve(xs):\n    return 0.0\n```", task)
    assert found.prefix_stub_left_out and found.program is not None
    assert "def poly(" in found.program and "import math" in found.program and "def find_zero" not in found.program
    assert entry_of(program(found), "find_zero") is None and entry_of(program(found), "poly") is not None


def test_a_stub_block_after_the_implementation_never_wins() -> None:
    """Models restate the signature after their code ("the signature is:"): the last defining block used to be
    that stub."""
    content = (
        "```python\ndef truncate_number(number: float) -> float:\n    return number % 1\n```\n\nThe signature is:\n\n"
        '```python\ndef truncate_number(number: float) -> float:\n    """Return the decimal part."""\n```'
    )
    found = read(content)
    assert (found.method, found.chosen, found.entry_point_from) == ("fenced_defining", 0, "answer")
    assert [(b.defines_entry_point, b.stub, b.role) for b in found.blocks] == [
        (True, False, "ran"), (False, True, "not_run"),
    ]  # fmt: skip
    assert "only restate its stub" in found.why


@pytest.mark.parametrize(
    "content",
    [
        '```python\ndef truncate_number(number: float) -> float:\n    """Return the decimal part."""\n```\n\n'
        "I cannot complete this function.",
        '```python\n    """ Given a positive floating point number, return its decimal part. """\n```',
        "    # TODO: write the code here\n    # You may assume the number is positive.\n",
        PROMPT + "\n\n",  # a base model echoing the prompt (bdytx5's samples of HumanEval/67 and others)
        "\n".join("    " + line if line else "" for line in PROMPT.strip("\n").split("\n")),  # the echo, indented
        "",  # Mistral's empty completion of HumanEval/39, after the prompt (below)
    ],
    ids=["fenced-stub", "fenced-docstring-body", "comment-body", "echo", "echo-indented", "empty-completion"],
)  # fmt: skip
def test_an_answer_whose_only_code_is_the_stub_is_no_code(content: str) -> None:
    if content == "":
        content = PROMPT  # what evalplus's join makes of an empty completion
    found = read(content)
    assert (found.method, found.no_code_reason, found.code) == ("none", "stub_only", None), found.why
    assert "stub" in found.why and all(block.role == "not_run" for block in found.blocks)


def test_a_real_comment_only_completion_is_stub_only() -> None:
    """LLaMA-7B's published HumanEval/1 completion: comments only ("# TODO: Write code here."), after the prompt."""
    line = LLAMA[0]
    task = humaneval(line["task_id"])
    assert read(task.code_prefix + line["completion"], task).no_code_reason == "stub_only"  # type: ignore[operator]
    assert read(line["completion"], task).no_code_reason == "stub_only"  # the completion alone: a body of comments


def test_a_body_of_pass_is_the_models_own_code() -> None:
    """`pass` is a statement the model wrote, not a stub: it runs (and fails the tests as the model's code)."""
    found = read("    pass\n")
    assert (found.method, found.entry_point_from) == ("prefix_body", "answer_body")


def test_a_whole_function_indented_is_not_nested_in_the_stub() -> None:
    """Indented as a whole (copied out of a class or list item), the def used to read as a body of the prompt's
    def: a nested function, never called, and the stub the entry point."""
    indented = "    def truncate_number(number: float) -> float:\n        return number % 1\n"
    for content in (indented, f"```python\n{indented}```"):
        found = read(content)
        assert found.entry_point_from == "answer", found.why
        assert found.code is not None and found.code.startswith("def truncate_number")
        chosen = entry_of(program(found))
        assert chosen is not None and chosen.lineno > PROMPT_LINES


def test_the_program_check_catches_a_stub_whatever_the_parse_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no parse left for the rules, a stub-only answer "begins as code" and is taken whole; the program's own
    parse (kept apart from the budget) still sees that its entry point would be the stub, and nothing runs."""
    monkeypatch.setattr(extract_module, "MAX_PARSES", 1)  # the budget of the rules: 0 parses
    found = read(PROMPT.lstrip("\n"))
    assert (found.no_code_reason, found.code) == ("stub_only", None), found.why
    monkeypatch.undo()
    assert read(PROMPT.lstrip("\n") + "    return number % 1\n").entry_point_from == "answer"


def test_the_decision_says_where_the_entry_point_comes_from() -> None:
    fenced = read("```python\ndef truncate_number(number):\n    return number % 1\n```")
    body = read("```python\n    return number % 1\n```")
    mbpp = read("```python\ndef g(x):\n    return x\n```", CodeTask(id="t", question="q", entry_point="f",
                                                                      test="def check(candidate):\n    pass\n"))
    stdin = read("```python\nprint(input())\n```", CodeTask(id="t", question="q", io_tests=[]))
    assert [r.entry_point_from for r in (fenced, body, mbpp)] == ["answer", "answer_body", "none"]
    assert not any(r.prefix_stub_left_out for r in (fenced, body, mbpp))
    assert stdin.entry_point_from is None


# --- item: a function wrapped in quotes -------------------------------------------------------------------------

QUOTED = "def truncate_number(number: float) -> float:\n    return number - int(number)"


def test_the_prompt_restated_then_the_function_in_quotes_runs_the_function() -> None:
    """The whole answer parses (an import, the stub, a string) and its longest parsing span was the restated stub;
    the function the model wrote is the string's text, and that runs."""
    content = PROMPT.lstrip("\n") + f'\n"""\n{QUOTED}\n"""\n'
    found = read(content)
    assert (found.method, found.quoted, found.entry_point_from) == ("whole_answer", True, "answer"), found.why
    assert found.code == QUOTED
    start, end = found.span or (0, 0)
    assert content[start:end] == QUOTED
    chosen = entry_of(program(found))
    assert chosen is not None and not is_docstring_only(chosen)


@pytest.mark.parametrize(
    "content",
    [f"'''\n{QUOTED}\n'''", f"'''{QUOTED}'''", f'```python\n"""\n{QUOTED}\n"""\n```', f'```\nr"""\n{QUOTED}\n"""\n```'],
    ids=["triple-quoted", "quote-on-the-def-line", "quoted-in-a-fence", "raw-string-untagged-fence"],
)  # fmt: skip
def test_a_function_wrapped_in_quotes_is_the_models_code(content: str) -> None:
    found = read(content)
    assert found.code == QUOTED and found.entry_point_from == "answer", found.why
    if "```" in content:
        assert found.method == "fenced_defining" and found.blocks[0].quoted and found.quoted


def test_a_def_in_a_string_is_not_code_when_the_model_defines_the_function() -> None:
    """A usage note in a string next to the model's own def: the def runs, the string never does."""
    content = (f"```python\n{QUOTED}\n\nNOTE = '''\ndef truncate_number(number):\n    return 0\n'''\n```")
    found = read(content)
    assert (found.method, found.quoted) == ("fenced_defining", False) and "return 0" in (found.code or "")
    assert entry_of(program(found)) is not None
    assert "number - int(number)" in ast.unparse(entry_of(program(found)))  # type: ignore[arg-type]


def test_a_quoted_function_that_does_not_parse_reports_its_own_error() -> None:
    found = read('"""\ndef truncate_number(number):\n    return (number\n"""')
    assert (found.method, found.entry_point_from) == ("longest_span", "unparsed"), found.why
    assert syntax_error_line(program(found)) > PROMPT_LINES
