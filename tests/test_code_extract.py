"""Which code of an answer runs (docs/scoring/code.md, rules C1-C5): real model outputs
(tests/data/code/extraction/, each labelled by reading it) and hand-written cases for every rule and edge."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring.code import blocks as blocks_module
from ocllm.scoring.code.extract import extract_code
from ocllm.scoring.code.fields import CodeTask, IoTest

DATA = Path(__file__).parent / "data" / "code" / "extraction" / "real_responses.jsonl"
CASES = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
FENCED = ("fenced_defining", "fenced_last")


def function_task(entry: str = "f", prefix: str | None = None) -> CodeTask:
    return CodeTask(
        id="t", question="q", entry_point=entry, test="def check(candidate):\n    pass\n", code_prefix=prefix
    )


def stdin_task() -> CodeTask:
    return CodeTask(id="t", question="q", io_tests=[IoTest(input="1\n", output="2\n")])


def run(content: str | None, task: CodeTask | None = None, **sample: object):
    policy = sample.pop("policy", Policy())
    assert isinstance(policy, Policy)
    return extract_code(task or function_task(), Sample(task_id="t", content=content, **sample), policy)  # type: ignore[arg-type]


# --- the real responses ----------------------------------------------------------------------------------------


def test_the_real_cases_are_many_and_varied() -> None:
    assert len(CASES) >= 40
    assert len({case["case"] for case in CASES}) == len(CASES)
    methods = {case["expected"]["method"] for case in CASES}
    assert {"fenced_defining", "fenced_last", "whole_answer", "prefix_body", "longest_span", "none"} <= methods
    assert {case["expected"]["ambiguity"] for case in CASES} == {"none", "unclosed_fence", "several_defining_blocks"}


@pytest.mark.parametrize("case", CASES, ids=[case["case"] for case in CASES])
def test_real_response(case: dict) -> None:
    task = CodeTask(
        id=case["task_id"], question="q", entry_point=case["entry_point"], test="def check(candidate):\n    pass\n",
        code_prefix=case["code_prefix"],
    )  # fmt: skip
    content = case["response"]
    got = extract_code(task, Sample(task_id=task.id, content=content, finish_reason=case["finish_reason"]), Policy())
    expected = case["expected"]
    assert (got.method, got.chosen, got.ambiguity, got.no_code_reason) == (
        expected["method"], expected["chosen"], expected["ambiguity"], expected["no_code_reason"],
    ), got.why  # fmt: skip
    if "prepended" in expected:
        assert [{"block": p.block, "names": p.names} for p in got.prepended] == expected["prepended"]
    if got.method in FENCED:
        block = got.blocks[got.chosen]
        assert block.role == "ran" and block.python
        assert got.code is not None and got.code.endswith(content[block.start : block.end])
    elif got.method == "none":
        assert got.code is None and got.source == "none"
    else:
        assert got.span is not None and got.code is not None
        start, end = got.span
        # The span is whole lines of the raw content, and the code is that text (dedented for a nested def).
        assert content[start:end].strip().splitlines()[0].strip() == got.code.strip().splitlines()[0].strip()
    assert got.why.endswith(".") and got.why.count(". ") == 0


# --- rule C1: only the visible answer ---------------------------------------------------------------------------

THINKING = "<think>\nLet me draft:\n```python\ndef f(x):\n    return 0\n```\n</think>\n\n"
ANSWER = "Here it is:\n\n```python\ndef f(x):\n    return x + 1\n```\n"


def test_a_block_inside_think_is_never_a_candidate_and_offsets_point_into_the_raw_content() -> None:
    content = THINKING + ANSWER
    got = run(content)
    assert got.method == "fenced_defining" and len(got.blocks) == 1 and got.chosen == 0
    block = got.blocks[0]
    assert content[block.start : block.end] == "def f(x):\n    return x + 1"
    assert got.code == "def f(x):\n    return x + 1"
    assert block.first_line == content[: block.start].count("\n") + 1 == 12
    assert block.last_line == 13 and block.label == "python" and block.closed


def test_an_unclosed_think_is_no_answer_even_with_code_inside() -> None:
    got = run("<think>\n```python\ndef f(x):\n    return 1\n```\nand then I ran out of")
    assert (got.method, got.no_code_reason, got.code, got.blocks) == ("none", "unclosed_think", None, [])


def test_think_prefilled_reads_up_to_the_closer_and_no_closer_means_no_answer() -> None:
    prefilled = Policy(think_prefilled=True)
    got = run("draft:\n```python\ndef f(x):\n    return 0\n```\n</think>\n" + ANSWER, policy=prefilled)
    assert got.method == "fenced_defining" and len(got.blocks) == 1 and got.code == "def f(x):\n    return x + 1"
    assert run("```python\ndef f(x):\n    return 0\n```", policy=prefilled).no_code_reason == "unclosed_think"


def test_the_reasoning_field_is_never_a_fallback_whatever_the_policy() -> None:
    code_in_reasoning = "```python\ndef f(x):\n    return x\n```"
    for policy in (Policy(), Policy(allow_reasoning_fallback=True)):
        got = run("", reasoning=code_in_reasoning, policy=policy)
        assert (got.method, got.no_code_reason, got.source) == ("none", "reasoning_only", "none")


def test_harmony_final_channel_is_the_answer_with_offsets_into_the_raw_content() -> None:
    content = (
        "<|channel|>analysis<|message|>Plan: ```python\ndef f(x): return 0\n```<|end|>"
        "<|start|>assistant<|channel|>final<|message|>```python\ndef f(x):\n    return x * 2\n```<|return|>"
    )
    got = run(content)
    assert got.method == "fenced_defining" and len(got.blocks) == 1
    assert content[got.blocks[0].start : got.blocks[0].end] == "def f(x):\n    return x * 2"


def test_flattened_harmony_and_an_analysis_that_never_ends() -> None:
    got = run("analysisWe need f.assistantfinal```python\ndef f(x):\n    return 3\n```")
    assert got.method == "fenced_defining" and got.code == "def f(x):\n    return 3"
    assert run("<|channel|>analysis<|message|>def f(x): still thinking").no_code_reason == "unclosed_think"


def test_empty_and_whitespace_answers() -> None:
    assert run(None).no_code_reason == "empty"
    assert run("").no_code_reason == "empty"
    assert run("  \n\t\n").no_code_reason == "empty"
    assert run("<think>only this</think>").no_code_reason == "reasoning_only"


# --- rule C2: the candidates ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fence", "label"),
    [("```python", "python"), ("```py", "py"), ("```Python3", "Python3"), ("```", ""), ("~~~python", "python"),
     ("````python", "python"), ('```python title="solution.py"', "python"), ("   ```PY", "PY")],
)  # fmt: skip
def test_python_labels_and_fence_shapes(fence: str, label: str) -> None:
    closer = fence.strip().split("python")[0].split("py")[0].split("PY")[0].split("Python3")[0].split(" ")[0]
    got = run(f"{fence}\ndef f(x):\n    return x\n{closer}\n")
    assert got.method == "fenced_defining" and got.blocks[0].label == label and got.blocks[0].closed


def test_other_languages_are_candidates_never_run() -> None:
    got = run("```javascript\nfunction f(x) { return x }\n```\n\n```bash\necho hi\n```")
    assert (got.method, got.no_code_reason) == ("none", "other_language")
    assert [b.python for b in got.blocks] == [False, False] and all(b.role == "not_run" for b in got.blocks)
    mixed = run("```js\nconst f = x => x\n```\n```python\ndef f(x):\n    return x\n```")
    assert mixed.chosen == 1 and not mixed.blocks[0].python


def test_an_indented_fence_in_a_list_item_has_its_indentation_taken_off() -> None:
    content = "1. Solution:\n   ```python\n   def f(x):\n       return x\n   ```\n"
    got = run(content)
    assert got.method == "fenced_defining" and got.code == "def f(x):\n    return x"


def test_inline_triple_backticks_are_not_a_fence() -> None:
    got = run("Use ```python``` blocks.\n\ndef f(x):\n    return x\n")
    assert got.blocks == [] and got.method == "longest_span"


def test_an_unclosed_last_fence_counts() -> None:
    got = run("Sure:\n```python\ndef f(x):\n    return x")
    assert (got.method, got.ambiguity, got.blocks[0].closed) == ("fenced_defining", "unclosed_fence", False)
    assert got.code == "def f(x):\n    return x"


# --- rule C3: function tasks ------------------------------------------------------------------------------------


def test_the_last_defining_block_wins_and_the_usage_example_after_it_never_runs() -> None:
    content = (
        "```python\ndef f(x):\n    return 0\n```\nBetter:\n```python\ndef f(x):\n    return x\n```\n"
        "Usage:\n```python\nprint(f(3))\nassert f(1) == 1\n```\n"
    )
    got = run(content)
    assert (got.method, got.chosen, got.ambiguity) == ("fenced_defining", 1, "several_defining_blocks")
    assert [b.role for b in got.blocks] == ["not_run", "ran", "not_run"]
    assert [b.defines_entry_point for b in got.blocks] == [True, True, False]
    assert "print" not in (got.code or "")


def test_a_def_in_a_string_or_comment_or_nested_does_not_define() -> None:
    content = (
        "```python\ndef f(x):\n    return x\n```\n"
        '```python\nDOC = """\ndef f(x):\n    pass\n"""\n# def f(x): also not\n'
        "class C:\n    def f(self):\n        pass\n```"
    )
    got = run(content)
    assert got.chosen == 0 and got.ambiguity == "none"
    assert [b.defines_entry_point for b in got.blocks] == [True, False]


def test_a_block_that_does_not_parse_still_runs_when_no_block_defines() -> None:
    content = "```python\nhelper = 1\n```\n```python\ndef f(x):\n    return (x\n```"
    got = run(content)
    assert (got.method, got.chosen) == ("fenced_defining", 1) and not got.blocks[1].parses
    assert "does not parse" in got.why


def test_a_parseable_definition_beats_a_later_broken_one() -> None:
    got = run("```python\ndef f(x):\n    return x\n```\n```python\ndef f(x):\n    return (x\n```")
    assert got.chosen == 0 and got.ambiguity == "none"


def test_no_defining_block_runs_the_last_python_block() -> None:
    got = run("```python\ndef g(x):\n    return x\n```\n```python\nprint(g(2))\n```\n```text\nout\n```")
    assert (got.method, got.chosen) == ("fenced_last", 1)
    assert got.prepended[0].names == ["def g"] and got.code == "def g(x):\n    return x\n\nprint(g(2))"


def test_an_indented_body_block_runs_as_the_rest_of_the_prefix() -> None:
    got = run("```python\n    return x + 1\n```", function_task(prefix="def f(x):\n"))
    assert got.method == "fenced_last" and got.code == "    return x + 1" and "indented body" in got.why


def test_imports_and_helpers_used_are_prepended_transitively_and_nothing_else() -> None:
    content = (
        "```python\nimport re\nimport os\nMOD = 10**9 + 7\nSEEN = set()\n\n"
        "def clean(s):\n    return re.sub('a', '', s)\n"
        "\ndef helper(s):\n    return clean(s) * 2\n\nprint(helper('x'))\n```\n"
        "```python\nfrom math import gcd\n```\n"
        "```python\ndef f(s):\n    return helper(s) + str(MOD) + str(gcd(2, 4)) + str(SEEN)\n```"
    )
    got = run(content)
    assert (got.method, got.chosen) == ("fenced_defining", 2)
    assert [(p.block, p.names) for p in got.prepended] == [
        (0, ["import re", "MOD =", "def clean", "def helper"]), (1, ["from math import gcd"]),
    ]  # fmt: skip
    code = got.code or ""
    assert code.index("import re") < code.index("def clean") < code.index("def helper") < code.index("def f(s)")
    assert "import os" not in code and "print(" not in code and "SEEN = set()" not in code  # a call is never taken
    assert [b.role for b in got.blocks] == ["prepended", "prepended", "ran"]


def test_a_name_the_chosen_block_defines_itself_is_not_prepended() -> None:
    got = run("```python\nimport math\ndef g():\n    pass\n```\n```python\nimport math\ndef f(x):\n    return g()\n```")
    assert [p.names for p in got.prepended] == [["def g"]]


# --- rule C4: standard-input tasks ------------------------------------------------------------------------------


def test_stdin_runs_the_last_python_block_with_its_helpers() -> None:
    content = (
        "```python\ndef solve(n):\n    return n * 2\n```\nFull program:\n"
        "```python\nn = int(input())\nprint(solve(n))\n```\nExample:\n```\n$ echo 1 | python a.py\n```"
    )
    got = run(content, stdin_task())
    # The last block is untagged, so a Python candidate: it is the one that runs (it is not valid Python).
    assert (got.method, got.chosen) == ("fenced_last", 2)
    got = run(content.rsplit("Example:", 1)[0], stdin_task())
    assert got.chosen == 1 and got.prepended[0].names == ["def solve"]


def test_stdin_without_fences_runs_a_whole_program_and_refuses_prose() -> None:
    got = run("n = int(input())\nprint(n * 2)\n", stdin_task())
    assert got.method == "whole_answer" and got.span == (0, len("n = int(input())\nprint(n * 2)"))
    assert run("Read n and print twice n.", stdin_task()).no_code_reason == "prose_only"


# --- rule C5: no fences -----------------------------------------------------------------------------------------


def test_whole_answer_needs_code_structure_not_a_word_that_parses() -> None:
    for prose in ("Yes", "None", "answer", '"a string"', "42"):
        assert run(prose).no_code_reason == "prose_only", prose
    program = "import math\n\ndef f(x):\n    return math.sqrt(x)"
    got = run(f"\n\n{program}\n\n")
    assert got.method == "whole_answer" and got.span == (2, 2 + len(program)) and got.code == program


def test_prefix_body_is_a_humaneval_completion() -> None:
    prefix = 'def f(x):\n    """Add one."""\n'
    got = run("    return x + 1\n", function_task(prefix=prefix))
    assert got.method == "prefix_body" and got.code == "    return x + 1" and got.span == (0, 16)
    # Not indented: no body, and not code either.
    assert run("return x + 1", function_task(prefix=prefix)).method != "prefix_body"


def test_longest_span_takes_the_def_with_the_imports_around_it_and_stops_at_prose() -> None:
    content = "Here you go:\n\nimport re\n\ndef f(s):\n    return re.sub('a', '', s)\n\nThis removes every a.\n"
    got = run(content)
    assert got.method == "longest_span" and got.code == "import re\n\ndef f(s):\n    return re.sub('a', '', s)"
    start, end = got.span or (0, 0)
    assert content[start:end] == got.code


def test_a_def_outside_the_fences_runs_when_no_block_defines() -> None:
    content = "def f(x):\n    return x\n```\n\nThis function returns its argument.\n"
    got = run(content)
    assert got.method == "longest_span" and got.code == "def f(x):\n    return x" and len(got.blocks) == 1


def test_reasons_when_nothing_runs() -> None:
    assert run("I cannot help with that.").no_code_reason == "prose_only"
    assert run("Let me think about the approach", finish_reason="length").no_code_reason == "cut_off"
    assert run("```python\n\n```").no_code_reason == "prose_only"  # an empty block is nothing to run


# --- bounds -----------------------------------------------------------------------------------------------------


def test_a_huge_answer_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real_parse = blocks_module.ast.parse

    def counting(source: str, *args: object, **kwargs: object):
        nonlocal calls
        calls += 1
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(blocks_module.ast, "parse", counting)
    many_blocks = "".join(f"```python\ndef f(x):\n    return {i}\n```\n" for i in range(3000))
    many_defs = "Text.\n" + "".join("def f(x):\n    return (x,\n\n" for _ in range(5000))
    for content in (many_blocks, many_defs, "x" * 200_000, "(" * 100_000 + "\n", "def f(x):\n    return '\0'\n"):
        calls = 0
        started = time.perf_counter()
        run(content)
        assert calls <= blocks_module.MAX_PARSES
        assert time.perf_counter() - started < 10
    assert run(many_blocks).chosen == 2999


def test_null_bytes_and_deep_nesting_count_as_not_parsing() -> None:
    assert blocks_module.ParseBudget().parse("x = '\0'") is None
    assert blocks_module.ParseBudget().parse("(" * 10_000) is None


def test_an_answer_prefilled_inside_a_fence_starts_inside_it() -> None:
    """lm-eval's *_instruct tasks prefill the answer with an opened ```python fence (humaneval_instruct: with the
    prompt's code in it), so the response is the rest of that block, closed by its first fence."""
    prefix = 'def add(x, y):\n    """Add."""\n'
    check = "def check(candidate):\n    pass\n"
    task = CodeTask(id="t", question="q", entry_point="add", code_prefix=prefix, test=check,
                    prefill="Here is the completed function:\n```python\n" + prefix)  # fmt: skip
    found = extract_code(task, Sample(task_id="t", content="    return x + y\n```\n\nIt adds."), Policy())
    assert (found.method, found.code, found.chosen) == ("fenced_last", "    return x + y", 0)
    assert found.blocks[0].start == 0 and found.blocks[0].label == "python" and found.blocks[0].closed
    whole = CodeTask(id="t", question="q", entry_point="add", test=check, prefill="```python\n")
    found = extract_code(whole, Sample(task_id="t", content="def add(x, y):\n    return x + y\n```"), Policy())
    assert (found.method, found.code) == ("fenced_defining", "def add(x, y):\n    return x + y")
    # Without the prefill the same text is a closing fence with nothing after it: no block to run.
    plain = CodeTask(id="t", question="q", entry_point="add", code_prefix=prefix, test=check)
    unprefilled = extract_code(plain, Sample(task_id="t", content="    return x + y\n```"), Policy())
    assert unprefilled.code != "    return x + y"
