"""The simulator's answer to a multiple-choice task: a letter, with a line of working or a reasoning trace that
names (and rules out) other options, and sometimes quotes the answer format with other letters, as traces do; and a
pick for a prompt the simulator does not know that lists lettered options. Every random choice comes from the
`random.Random` handed in, so the same draws give the same text.
"""

from __future__ import annotations

import random
import re

from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.option_letters import MAX_OPTIONS, option_letters
from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest, snippet

_LETTERS = "".join(option_letters(MAX_OPTIONS))
# An option line in a prompt: "A. text" (also "A) text" and "(A) text", which prompt builders use too).
_OPTION_LINE = re.compile(r"^[ \t]*\(?([A-Z])[.)][ \t]+(\S.*?)[ \t]*$", re.MULTILINE)


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    """The room's hook (`TaskType.simulated_answer`): a letter for a task of this room (right when `correct` and the
    gold is a letter), and any letter for a prompt the simulator does not know that lists options. No answer (None,
    before any draw) when there are no options to pick from, or for an unknown prompt whose request offers tools:
    that request asks for calls, not a letter."""
    task, rng = request.task, request.rng
    if task is not None and not isinstance(task, McqTask):
        return None  # another room's task: its own room answers it (a room of McqTask's subclass is answered here)
    if task is None and request.tools.offered:
        return None
    options = (task.options if task is not None and task.options else None) or parse_options(request.prompt)
    gold: str | None = None
    if task is not None and task.answer:
        answer = task.answer.strip().upper()
        gold = answer if len(answer) == 1 and answer in _LETTERS else None  # a malformed gold is unknown
    count = len(options)
    if count == 0 and gold is not None:
        count = max(4, _LETTERS.index(gold) + 1)  # a known task without options: assume the usual four
    count = min(count, len(_LETTERS))
    if count == 0:
        return None
    letters = _LETTERS[:count]
    if gold is None or gold not in letters:
        chosen = rng.choice(letters)  # gold unknown: any letter, but always the same for this request
    elif request.correct or count == 1:
        chosen = gold
    else:
        chosen = rng.choice([letter for letter in letters if letter != gold])
    question = task.question if task is not None else request.prompt.strip().split("\n", 1)[0]
    if request.reasoning:
        return SimulatedAnswer(f"FINAL: {chosen}", _mcq_reasoning(rng, question, options, letters, chosen))
    return SimulatedAnswer(_mcq_working(rng, count, chosen) + f"\n\nFINAL: {chosen}", None)


def parse_options(text: str) -> list[str]:
    """The option texts of the last run of lines `A. …`, `B. …`, … in a prompt (at least two)."""
    runs: list[list[str]] = []
    current: list[str] = []
    for match in _OPTION_LINE.finditer(text):
        letter, option = match.group(1), match.group(2)
        if letter == "A":
            current = [option]
            runs.append(current)
        elif current and letter == _LETTERS[len(current)]:
            current.append(option)
    # The last run is the question being asked; earlier ones belong to few-shot examples.
    for run in reversed(runs):
        if len(run) >= 2:
            return run
    return []


def _described(letter: str, options: list[str]) -> str:
    index = _LETTERS.index(letter)
    if index < len(options) and options[index].strip():
        return f"{letter} ({snippet(options[index], 6)})"
    return letter


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
        f'The question is: "{snippet(question)}"',
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
