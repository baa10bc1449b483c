"""The simulator's answers to math tasks, over real HTTP on 127.0.0.1: the forms real reasoning models write,
right or wrong as the draw says, the gold written other ways, near misses, working, truncation, repeats.

The expected writings below are written by hand for each gold, not computed by the simulator's code; the
final statement is read by the small reader in this file, not by ocllm's math scorer.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import BACKSTOP_S

from ocllm.errors import OcllmError
from ocllm.models import Task
from ocllm.scoring.math.fields import MathTask
from ocllm.sim import SimConfig, SimServer

DEFAULT_PROMPT = "{question}\n\nPut your final answer within \\boxed{{}}."


def math_task(task_id: str, question: str, answer: str) -> Task:
    return MathTask(id=task_id, question=question, answer=answer, category="math")


# Each task with the writings of its gold a right answer may use, and the near misses a wrong one may state.
CASES: list[tuple[Task, set[str], set[str]]] = [
    (
        math_task("cookies", "A baker sells 12 boxes of 6 cookies each. How many cookies does she sell?", "72"),
        {"72", "72.00", "72\\text{ cookies}"},
        {"71", "73", "-72"},
    ),
    (
        math_task(
            "change",
            "Tom buys 3 books at $14 each and pays with a $50 bill. How much change does he get, in dollars?",
            "8",
        ),
        {"8", "8.00", "\\$8"},
        {"7", "9", "-8"},
    ),
    (
        math_task("library", "A library had 1000 books and bought 234 more. How many books does it have now?", "1234"),
        {"1234", "1234.00", "1{,}234", "1,234", "1\\,234", "1234\\text{ books}"},
        {"1233", "1235", "-1234"},
    ),
    (
        # A percent in the question, a count asked: 420\% is no writing of the gold.
        math_task("bus", "A school has 1200 students and 35% of them take the bus. How many students take it?", "420"),
        {"420", "420.00", "420\\text{ students}"},
        {"419", "421", "-420"},
    ),
    (
        math_task("absent", "A class of 40 has 10 students absent. What percent of the class is absent?", "25"),
        {"25", "25.00", "25\\%"},
        {"24", "26", "-25"},
    ),
    (
        math_task("halves", "What is $\\frac{1}{2} + \\frac{1}{4}$?", "\\frac{3}{4}"),
        {"\\frac{3}{4}", "\\dfrac{3}{4}", "\\tfrac{3}{4}", "3/4", "\\frac{6}{8}", "0.75"},
        {"-\\frac{3}{4}", "\\frac{3}{5}", "\\frac{4}{3}"},
    ),
    (
        math_task("root", "Simplify $\\sqrt{8} / 2$.", "\\sqrt{2}"),
        {"\\sqrt{2}", "\\displaystyle \\sqrt{2}", "2^{1/2}"},
        {"-\\sqrt{2}", "2\\sqrt{2}", "\\sqrt{3}"},
    ),
    (
        math_task("system", "Solve $x + y = 3$ and $2x - y = 0$. Give the ordered pair $(x, y)$.", "(1,2)"),
        {"(1,2)", "\\left( 1, 2 \\right)", "(1,\\ 2)"},
        {"(2, 1)", "(2, 2)", "(1, 3)"},
    ),
    (
        math_task("interval", "Write the set of all $x$ with $-2 \\le x < 3$ in interval notation.", "[-2,3)"),
        {"[-2,3)", "\\left[ -2, 3 \\right)", "[-2,\\ 3)"},
        {"(-2, 3)", "[-2, 3]", "[-1, 4)"},
    ),
]
TASKS = tuple(task for task, _, _ in CASES)
RIGHT = {task.id: right for task, right, _ in CASES}
WRONG = {task.id: wrong for task, _, wrong in CASES}


# ------------------------------------------------------------------------------------------- helpers


def boxed_values(text: str) -> list[str]:
    """The contents of every \\boxed{...}, braces matched."""
    values = []
    for match in re.finditer(r"\\boxed\{", text):
        depth, start = 1, match.end()
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                values.append(text[start:end])
                break
    return values


def final_statement(content: str) -> tuple[str, str]:
    """(form, value) of the last line of an answer: which of the five forms, and the answer it states."""
    last = content.rstrip().rsplit("\n", 1)[-1]
    if last.startswith("**Answer:** "):
        return "bold_boxed", boxed_values(last)[-1]
    if boxed_values(last):
        return "boxed", boxed_values(last)[-1]
    for form, pattern in (
        ("gsm8k", r"#### (.+)"),
        ("the_answer_is", r"The answer is (.+)\."),
        ("final_answer", r"Final answer: (.+)"),
    ):
        if match := re.fullmatch(pattern, last):
            value = match.group(1)
            return form, value[1:-1] if value.startswith("$") and value.endswith("$") else value
    raise AssertionError(f"no final statement in {content!r}")


def chat(server: SimServer, model: str, prompt: str, system: str | None = None) -> dict[str, Any]:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    body = json.dumps({"model": model, "messages": messages}).encode()
    request = urllib.request.Request(
        server.base_url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=BACKSTOP_S) as response:
        assert response.status == 200
        return json.loads(response.read())


def answers(server: SimServer, model: str, attempts: int) -> list[tuple[Task, dict[str, Any]]]:
    """Every task asked `attempts` times; a system line that names the attempt makes each a fresh draw."""
    return [
        (task, chat(server, model, DEFAULT_PROMPT.format(question=task.question), f"Attempt {n}."))
        for n in range(attempts)
        for task in TASKS
    ]


def message(response: dict[str, Any]) -> tuple[str, str | None, str]:
    choice = response["choices"][0]
    return choice["message"]["content"], choice["message"]["reasoning_content"], choice["finish_reason"]


# --------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("model", ["sim-baseline", "sim-reasoning"])
def test_right_answers_state_the_gold_or_a_writing_of_it(model: str) -> None:
    config = SimConfig(models={model: 1.0}, tasks=TASKS, truncation_rate=0.0)
    forms: Counter[str] = Counter()
    plain = rewritten = 0
    with SimServer(config) as server:
        for task, response in answers(server, model, attempts=12):
            content, _, finish = message(response)
            assert finish == "stop"
            form, value = final_statement(content)
            forms[form] += 1
            assert value in RIGHT[task.id], (task.id, content)
            if value == task.answer:
                plain += 1
            else:
                rewritten += 1
    assert set(forms) == {"boxed", "bold_boxed", "gsm8k", "the_answer_is", "final_answer"}, forms
    assert forms["boxed"] > forms["final_answer"]  # the prompt asks for a box; most answers give one
    assert plain > 0 and rewritten > 0


def test_every_gold_is_boxed_as_written_and_also_written_another_way() -> None:
    config = SimConfig(models={"m": 1.0}, tasks=TASKS, truncation_rate=0.0)
    as_written: set[str] = set()
    other_ways: dict[str, set[str]] = {task.id: set() for task in TASKS}
    with SimServer(config) as server:
        for task, response in answers(server, "m", attempts=30):
            form, value = final_statement(message(response)[0])
            if value == task.answer and form in ("boxed", "bold_boxed"):
                as_written.add(task.id)
            elif value != task.answer:
                other_ways[task.id].add(value)
    assert as_written == {task.id for task in TASKS}
    for task in TASKS:
        assert other_ways[task.id] and other_ways[task.id] <= RIGHT[task.id] - {task.answer}


@pytest.mark.parametrize("model", ["sim-baseline", "sim-reasoning"])
def test_wrong_answers_are_near_misses(model: str) -> None:
    config = SimConfig(models={model: 0.0}, tasks=TASKS, truncation_rate=0.0)
    stated: dict[str, set[str]] = {task.id: set() for task in TASKS}
    with SimServer(config) as server:
        for task, response in answers(server, model, attempts=20):
            _, value = final_statement(message(response)[0])
            assert value in WRONG[task.id], (task.id, value)
            stated[task.id].add(value)
    # Every kind of miss turns up: off by one either way and the sign; the fraction negated, changed, upside
    # down; the pair swapped; the interval's closed end opened and its open end closed.
    assert stated == WRONG


def test_accuracy_follows_the_configured_rate() -> None:
    config = SimConfig(models={"m": 0.7}, tasks=TASKS, truncation_rate=0.0)
    with SimServer(config) as server:
        results = [final_statement(message(r)[0])[1] in RIGHT[t.id] for t, r in answers(server, "m", attempts=40)]
    assert len(results) == 40 * len(TASKS)
    assert 0.6 <= sum(results) / len(results) <= 0.8


def test_working_is_in_content_without_reasoning_and_in_the_reasoning_field_with_it() -> None:
    config = SimConfig(models={"sim-baseline": 0.9, "sim-reasoning": 0.9}, tasks=TASKS, truncation_rate=0.0)
    arithmetic = re.compile(r"\$(\d+) (\+|\\times|-) (\d+) = (\d+)\$")
    sub_results = {"content": 0, "reasoning": 0}
    echoes = 0
    with SimServer(config) as server:
        for _, response in answers(server, "sim-baseline", attempts=8):
            content, reasoning, _ = message(response)
            assert reasoning is None
            working = content.rsplit("\n\n", 1)[0]
            assert working != content and len(working.split(". ")) >= 2
            sub_results["content"] += len(boxed_values(working))
            if boxed_values(working):
                # A boxed sub-result only precedes a boxed final answer: the last box is the answer.
                assert final_statement(content)[0] in ("boxed", "bold_boxed")
        for _, response in answers(server, "sim-reasoning", attempts=8):
            content, reasoning, _ = message(response)
            assert reasoning is not None and len(reasoning) > len(content.rsplit("\n\n", 1)[0])
            sub_results["reasoning"] += len(boxed_values(reasoning)) - reasoning.count("\\boxed{}")
            echoes += "\\boxed{}" in reasoning
            # The intermediate numbers are true arithmetic on the question's numbers.
            for first, operator, second, result in arithmetic.findall(reasoning):
                expected = {"+": int(first) + int(second), "\\times": int(first) * int(second)}.get(
                    operator, int(first) - int(second)
                )
                assert int(result) == expected
    assert sub_results["content"] > 0 and sub_results["reasoning"] > 0
    assert echoes > 0  # the instruction quoted back with an empty box


def test_truncated_math_answers_stop_mid_reasoning() -> None:
    full = SimConfig(models={"sim-reasoning": 0.9}, tasks=TASKS, truncation_rate=0.0)
    cut = SimConfig(models={"sim-reasoning": 0.9}, tasks=TASKS, truncation_rate=1.0)
    with SimServer(full) as whole_server, SimServer(cut) as cut_server:
        for task in TASKS:
            prompt = DEFAULT_PROMPT.format(question=task.question)
            _, whole_reasoning, _ = message(chat(whole_server, "sim-reasoning", prompt))
            response = chat(cut_server, "sim-reasoning", prompt)
            content, reasoning, finish = message(response)
            assert finish == "length" and content == ""
            assert whole_reasoning is not None and reasoning
            assert re.search(r"(So the answer should be|I get) .+\.$", whole_reasoning)  # a math trace
            # The same draws wrote the same trace; the cut one stops inside it, before its closing statement.
            assert whole_reasoning.startswith(reasoning) and len(reasoning) < len(whole_reasoning)
            usage = response["usage"]
            assert usage["completion_tokens_details"]["reasoning_tokens"] == usage["completion_tokens"]
    # Reasoning off is never cut, as for multiple choice.
    with SimServer(SimConfig(models={"m": 0.9}, tasks=TASKS, truncation_rate=1.0)) as server:
        assert all(message(r)[2] == "stop" for _, r in answers(server, "m", attempts=2))


def test_the_same_request_gets_the_same_answer_and_the_seed_changes_it() -> None:
    def texts(seed: int) -> list[tuple[str, str | None]]:
        config = SimConfig(models={"sim-reasoning": 0.8}, tasks=TASKS, truncation_rate=0.1, seed=seed)
        with SimServer(config) as server:
            return [message(r)[:2] for _, r in answers(server, "sim-reasoning", attempts=3)]

    first = texts(0)
    assert texts(0) == first
    assert texts(1) != first


@pytest.mark.parametrize(
    "template",
    [
        DEFAULT_PROMPT,
        "Problem:\n{question}\n\nSolution:",
        "Solve the following math problem. The last line of your response should be 'Answer: $ANSWER'.\n\n{question}",
        # A few-shot prompt: another known question quoted as an example before the one asked.
        "Problem: What is $\\frac{{1}}{{2}} + \\frac{{1}}{{4}}$?\nAnswer: \\frac{{3}}{{4}}\n\n"
        "Problem: {question}\nAnswer:",
    ],
)
def test_the_task_is_found_by_its_question_whatever_the_template(template: str) -> None:
    task = CASES[2][0]  # the library question, longer than the few-shot example's
    with SimServer(SimConfig(models={"m": 1.0}, tasks=TASKS, truncation_rate=0.0)) as server:
        content, _, _ = message(chat(server, "m", template.format(question=task.question)))
    assert final_statement(content)[1] in RIGHT[task.id]


def test_the_shipped_demo_math_suite_is_answered_right_and_wrong() -> None:
    path = Path(str(resources.files("ocllm") / "data" / "suites" / "demo-math.jsonl"))
    # Read as Task records directly, so that the test holds whatever the suite reader accepts at the time.
    tasks = tuple(msgspec.json.decode(line, type=MathTask) for line in path.read_text("utf-8").splitlines() if line)
    assert len(tasks) == 14 and all(task.type == "math" for task in tasks)
    golds = {task.answer for task in tasks}
    assert {"18", "4100", "\\frac{3}{4}", "\\sqrt{2}", "(1,2)", "[-2,3)", "(-\\infty,4]"} <= golds
    config = SimConfig(models={"right": 1.0, "wrong": 0.0}, tasks=tasks, truncation_rate=0.0)
    with SimServer(config) as server:
        for task in tasks:
            prompt = DEFAULT_PROMPT.format(question=task.question)
            right = {final_statement(message(chat(server, "right", prompt, f"Attempt {n}."))[0])[1] for n in range(12)}
            wrong = {final_statement(message(chat(server, "wrong", prompt, f"Attempt {n}."))[0])[1] for n in range(12)}
            assert task.answer in right and task.answer not in wrong and not right & wrong, task.id


def test_a_streamed_math_answer_reassembles_to_the_same_text() -> None:
    config = SimConfig(models={"sim-reasoning": 0.9}, tasks=TASKS, truncation_rate=0.0)
    with SimServer(config) as server:
        for task in TASKS:
            prompt = DEFAULT_PROMPT.format(question=task.question)
            whole = message(chat(server, "sim-reasoning", prompt))
            body = {"model": "sim-reasoning", "messages": [{"role": "user", "content": prompt}], "stream": True}
            request = urllib.request.Request(
                server.base_url + "/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=BACKSTOP_S) as response:
                events = response.read().decode().split("\n\n")
            content, reasoning, finish = "", "", None
            for event in events:
                if event.startswith("data: {"):
                    for choice in json.loads(event.removeprefix("data: "))["choices"]:
                        content += choice["delta"].get("content") or ""
                        reasoning += choice["delta"].get("reasoning_content") or ""
                        finish = choice["finish_reason"] or finish
            assert (content, reasoning, finish) == whole


def test_an_unknown_math_question_gets_the_plain_sentence() -> None:
    with SimServer(SimConfig(models={"m": 1.0}, tasks=TASKS)) as server:
        content, _, _ = message(chat(server, "m", DEFAULT_PROMPT.format(question="What is $17 \\times 23$?")))
    assert "ocllm-simulator" in content and "\\boxed" not in content


def test_a_math_task_without_a_gold_gets_the_plain_sentence() -> None:
    task = MathTask(id="nogold", question="What is the sum of the first 10 primes?", category="math")
    with SimServer(SimConfig(models={"m": 1.0}, tasks=(task,))) as server:
        content, _, _ = message(chat(server, "m", DEFAULT_PROMPT.format(question=task.question)))
    assert "ocllm-simulator" in content


def test_tasks_must_be_task_records() -> None:
    with pytest.raises(OcllmError, match="tasks must be Task records"):
        SimConfig(tasks=({"id": "x", "type": "math"},))  # type: ignore[arg-type]
