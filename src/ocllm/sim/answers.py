"""The text of a simulated answer: a multiple-choice pick with its working or reasoning, a list of required
items, a math answer (`math_answers`), the calls of a tool answer (`tool_answers`), or a plain sentence for a
prompt the simulator does not know; and a trace cut off mid-sentence.

Every random choice comes from the `random.Random` handed in, so the same draws give the same text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ocllm.models import Task
from ocllm.sim.config import SIM_LABEL
from ocllm.sim.instruction_answers import instructions_answer
from ocllm.sim.json_answers import json_answer
from ocllm.sim.math_answers import math_answer
from ocllm.sim.suite_index import LETTERS, parse_options
from ocllm.sim.tool_answers import ToolSetting, tool_answer


@dataclass(frozen=True)
class Draft:
    """The text of an answer: what the model says (None when it only called tools), what it thought (None in
    non-reasoning mode), and the calls the server returns structured (name and arguments; None when none)."""

    content: str | None
    reasoning: str | None
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None


def draft_answer(
    rng: random.Random,
    task: Task | None,
    prompt: str,
    model: str,
    *,
    correct: bool,
    reasoning: bool,
    tools: ToolSetting | None = None,
) -> Draft:
    """The answer to `prompt` (asking `task`, if the suite has it): right when `correct`, where right is known.
    A tool_call task, or a request offering tools for a prompt the simulator does not know, gets a tool answer."""
    if tools is not None and ((task is not None and task.type == "tool_call") or (task is None and tools.offered)):
        answer = tool_answer(rng, task, tools, correct=correct, reasoning=reasoning)
        return Draft(answer.content, answer.reasoning, answer.calls)
    if task is not None and task.type == "required_substrings":
        return _substrings_answer(rng, task, correct=correct, reasoning=reasoning)
    if task is not None and task.type == "json":
        return Draft(*json_answer(rng, task, correct=correct, reasoning=reasoning))
    if task is not None and task.type == "instructions":
        return Draft(*instructions_answer(rng, task, correct=correct, reasoning=reasoning))
    if task is not None and task.type == "math":
        if not (task.answer or "").strip():  # no gold: neither right nor wrong is known
            return _plain_answer(rng, prompt, model, reasoning=reasoning)
        return Draft(*math_answer(rng, task, correct=correct, reasoning=reasoning))
    return _mcq_or_plain_answer(rng, task, prompt, model, correct=correct, reasoning=reasoning)


def _snippet(text: str, words: int = 12) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


def _described(letter: str, options: list[str]) -> str:
    index = LETTERS.index(letter)
    if index < len(options) and options[index].strip():
        return f"{letter} ({_snippet(options[index], 6)})"
    return letter


def _mcq_or_plain_answer(
    rng: random.Random, task: Task | None, prompt: str, model: str, *, correct: bool, reasoning: bool
) -> Draft:
    options = (task.options if task is not None and task.options else None) or parse_options(prompt)
    gold: str | None = None
    if task is not None and task.type == "mcq" and task.answer:
        answer = task.answer.strip().upper()
        gold = answer if len(answer) == 1 and answer in LETTERS else None  # a malformed gold is unknown
    count = len(options)
    if count == 0 and gold is not None:
        count = max(4, LETTERS.index(gold) + 1)  # a known task without options: assume the usual four
    count = min(count, len(LETTERS))
    if count == 0:
        return _plain_answer(rng, prompt, model, reasoning=reasoning)
    letters = LETTERS[:count]
    if gold is None or gold not in letters:
        chosen = rng.choice(letters)  # gold unknown: any letter, but always the same for this request
    elif correct or count == 1:
        chosen = gold
    else:
        chosen = rng.choice([letter for letter in letters if letter != gold])
    question = task.question if task is not None else prompt.strip().split("\n", 1)[0]
    if reasoning:
        return Draft(f"FINAL: {chosen}", _mcq_reasoning(rng, question, options, letters, chosen))
    return Draft(_mcq_working(rng, count, chosen) + f"\n\nFINAL: {chosen}", None)


_RULE_OUT = [
    "Option {x} does not survive a closer look.",
    "At first {x} seems plausible, but it misses a condition in the question.",
    "I can rule out {x} because it contradicts the setup.",
]


def _mcq_reasoning(rng: random.Random, question: str, options: list[str], letters: str, chosen: str) -> str:
    others = [letter for letter in letters if letter != chosen]
    sentences = [
        rng.choice(
            [
                "Let me work through this carefully.",
                "Okay, I need to figure out which option is right.",
                "First, let me restate what is being asked.",
                "Alright, let me reason about this step by step.",
            ]
        ),
        f'The question is: "{_snippet(question)}"',
    ]
    ruled_out = rng.sample(others, min(2, len(others)))
    templates = rng.sample(_RULE_OUT, len(ruled_out))  # distinct wordings, so no sentence repeats
    sentences += [t.format(x=_described(letter, options)) for t, letter in zip(templates, ruled_out, strict=True)]
    # About a third of traces quote the answer format with other letters: the very text that made the
    # old harness flag correct answers as ambiguous, so the scorer must meet it.
    if others and rng.random() < 1 / 3:
        pair = rng.sample(others, min(2, len(others)))
        if len(pair) == 2 and rng.random() < 0.5:
            example = f"The answer must be like FINAL: {pair[0]} or FINAL: {pair[1]}."
        else:
            example = f"If it were {pair[0]} I would write FINAL: {pair[0]}, but the evidence points elsewhere."
        sentences.insert(rng.randint(2, len(sentences)), example)
    sentences.append(
        rng.choice(
            [
                "Checking {x} against every condition, it holds.",
                "{x} is consistent with everything I worked out.",
                "Everything lines up with {x}.",
            ]
        ).format(x=_described(chosen, options))
    )
    sentences.append(
        rng.choice([f"So I will go with {chosen}.", f"That settles it: {chosen}.", f"I am fairly sure of {chosen}."])
    )
    return " ".join(sentences)


def _mcq_working(rng: random.Random, count: int, chosen: str) -> str:
    # Only the chosen letter is named, so the visible text holds no statement but the final line.
    first = rng.choice(
        [
            f"Going through the {count} options one by one, most fail on at least one condition.",
            "The key constraint in the question rules out most of the options quickly.",
            "Working it through briefly: I checked each option against what the question asks.",
        ]
    )
    second = rng.choice(
        [
            f"Option {chosen} is the only one consistent with every condition.",
            f"That leaves {chosen}, which satisfies all of them.",
            f"{chosen} fits best once the details are taken into account.",
        ]
    )
    return f"{first} {second}"


def _plain_answer(rng: random.Random, prompt: str, model: str, *, reasoning: bool) -> Draft:
    content = rng.choice(
        [
            f"This is a simulated reply from {SIM_LABEL} (model {model}); it does not know this question.",
            f"{SIM_LABEL} (model {model}) has no answer on file for this prompt, so it replies with this sentence.",
        ]
    )
    thinking = None
    if reasoning:
        thinking = (
            f'The prompt starts with "{_snippet(prompt)}". '
            "It is not one of the questions I know, so I will answer with a plain sentence."
        )
    return Draft(content, thinking)


def _substrings_answer(rng: random.Random, task: Task, *, correct: bool, reasoning: bool) -> Draft:
    required = list(task.required_substrings or [])
    missing: int | None = None
    if not correct:
        # Omit one that no other required item contains, otherwise writing the others would include it.
        omittable = [
            i
            for i, item in enumerate(required)
            if item and not any(item.casefold() in other.casefold() for j, other in enumerate(required) if j != i)
        ]
        if omittable:
            missing = rng.choice(omittable)
    lines = []
    for i, item in enumerate(required):
        if i != missing:
            lines.append(f"- {item}")
        elif len(item) > 1:
            lines.append(f"- {item[:-1]}")  # a near miss: the item without its last character
    intro = rng.choice(["Here is my answer, point by point:", "Sure. The response covers these points:"])
    content = "\n".join([intro, *lines])
    if missing is not None and required[missing].casefold() in content.casefold():
        # The near miss or the wording still spelled it out; fall back to the bare list of the others.
        content = "\n".join(item for i, item in enumerate(required) if i != missing)
    thinking = None
    if reasoning:
        thinking = (
            f'The task: "{_snippet(task.question)}". The answer has to mention {len(required)} specific '
            "things. I will list each one explicitly so that none is left out."
        )
    return Draft(content, thinking)


def cut_mid_sentence(rng: random.Random, text: str) -> str:
    """Stop a trace inside a sentence, as a model does when it runs out of tokens."""
    words = text.split(" ")
    if len(words) < 2:
        return text[: max(1, len(text) // 2)]
    cut = rng.randint(max(1, len(words) // 2), len(words) - 1)
    return " ".join(words[:cut]).rstrip(".!?,;:") or words[0]
