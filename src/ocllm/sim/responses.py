"""What the ocllm SIMULATOR answers. It runs no model: it writes plausible text from templates.

Everything here is pure and deterministic. Each random choice comes from a `random.Random` seeded by
a SHA-256 of (config seed, model, the messages as canonical JSON, reasoning on/off), so the same
request always gets the same answer: the runner's resume test compares a resumed run with an
uninterrupted one, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ocllm.models import Task
from ocllm.sim.config import MAX_MODEL_LEN, SIM_LABEL, SimConfig
from ocllm.suites import load_suite

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Questions are found by their first characters: a dict lookup at every position of the prompt costs
# O(prompt length) whatever the suite size, where testing every question would cost O(suite size).
_KEY_LEN = 32
_CACHE_SIZE = 4096
# An option line in a prompt: "A. text" (also "A) text" and "(A) text", which prompt builders use too).
_OPTION_LINE = re.compile(r"^[ \t]*\(?([A-Z])[.)][ \t]+(\S.*?)[ \t]*$", re.MULTILINE)
# Rough tokens for streaming: a word with its leading space, a punctuation mark, or trailing space.
_TOKEN = re.compile(r"\s*\w+|\s*\S|\s+")
_MAX_PIECES = 24  # deltas per field: enough to exercise reassembly, few enough for hundreds of streams


class RequestError(Exception):
    """A request the simulator refuses, with the HTTP status and OpenAI error type to answer with."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message


def error_body(status: int, error_type: str, message: str) -> dict[str, Any]:
    """The OpenAI-style error object vLLM returns."""
    return {"error": {"message": message, "type": error_type, "code": status}}


# --------------------------------------------------------------------------------------------- suites


class SuiteIndex:
    """Finds the task whose question text occurs in a prompt; the longest one wins when several do."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._by_question: dict[str, Task] = {}
        for task in tasks:
            # The first task with a given question wins, so a later duplicate cannot change answers.
            if task.question and task.question not in self._by_question:
                self._by_question[task.question] = task
        # Key -> the distinct lengths of the questions starting with it, longest first. Many questions share
        # an opening ("Which of the following ..."), and a length plus a dict lookup tests all of them at once.
        lengths: dict[str, set[int]] = {}
        self._short: list[str] = []  # questions shorter than the key: few, so tested one by one
        for question in self._by_question:
            if len(question) >= _KEY_LEN:
                lengths.setdefault(question[:_KEY_LEN], set()).add(len(question))
            else:
                self._short.append(question)
        self._by_key = {key: sorted(found, reverse=True) for key, found in lengths.items()}
        # A run sends the same prompt once per lane and repeat; remembering answers spares the scan.
        self._cache: OrderedDict[str, Task | None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_question)

    def find(self, text: str) -> Task | None:
        if not self._by_question:
            return None
        if text in self._cache:
            self._cache.move_to_end(text)
            return self._cache[text]
        found = self._scan(text)
        self._cache[text] = found
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return found

    def _scan(self, text: str) -> Task | None:
        best = ""
        for question in self._short:
            if len(question) > len(best) and question in text:
                best = question
        if self._by_key:
            for start in range(len(text) - _KEY_LEN + 1):
                for length in self._by_key.get(text[start : start + _KEY_LEN], ()):
                    if length <= len(best):
                        break
                    candidate = text[start : start + length]
                    if candidate in self._by_question:
                        best = candidate
                        break
        return self._by_question[best] if best else None


def parse_options(text: str) -> list[str]:
    """The option texts of the last run of lines `A. …`, `B. …`, … in a prompt (at least two)."""
    runs: list[list[str]] = []
    current: list[str] = []
    for match in _OPTION_LINE.finditer(text):
        letter, option = match.group(1), match.group(2)
        if letter == "A":
            current = [option]
            runs.append(current)
        elif current and letter == LETTERS[len(current)]:
            current.append(option)
    # The last run is the question being asked; earlier ones belong to few-shot examples.
    for run in reversed(runs):
        if len(run) >= 2:
            return run
    return []


# ------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class ChatRequest:
    """The parts of a chat-completions body the simulator reads, checked."""

    model: str
    messages: list[dict[str, Any]]
    reasoning: bool
    max_tokens: int | None
    stream: bool
    include_usage: bool


def parse_request(body: Any, models: dict[str, float]) -> ChatRequest:
    """Check a decoded JSON body; raise RequestError with the status vLLM would answer with."""
    if not isinstance(body, dict):
        raise RequestError(400, "BadRequestError", "the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError(400, "BadRequestError", "'messages' is required and must be a non-empty list")
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RequestError(400, "BadRequestError", f"messages[{number}] must be an object with a 'role'")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(400, "BadRequestError", "'model' is required and must be a string")
    if model not in models:
        raise RequestError(404, "NotFoundError", f"The model `{model}` does not exist.")
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        max_tokens = body.get("max_completion_tokens")  # the newer OpenAI name for the same limit
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise RequestError(400, "BadRequestError", "'max_tokens' must be a positive integer")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError(400, "BadRequestError", "'stream' must be a boolean")
    stream_options = body.get("stream_options") or {}
    kwargs = body.get("chat_template_kwargs") or {}
    if not isinstance(stream_options, dict) or not isinstance(kwargs, dict):
        raise RequestError(400, "BadRequestError", "'stream_options' and 'chat_template_kwargs' must be objects")
    if "enable_thinking" in kwargs or "thinking" in kwargs:
        # Qwen-style templates read enable_thinking, others read thinking; either switches it on.
        reasoning = bool(kwargs.get("enable_thinking")) or bool(kwargs.get("thinking"))
    else:
        reasoning = "reasoning" in model
    return ChatRequest(
        model=model,
        messages=messages,
        reasoning=reasoning,
        max_tokens=max_tokens,
        stream=stream,
        include_usage=bool(stream_options.get("include_usage")),
    )


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


# ---------------------------------------------------------------------------------------- completions


@dataclass(frozen=True)
class Completion:
    """One simulated answer, before it is shaped into a response body or stream."""

    response_id: str
    model: str
    content: str
    reasoning: str | None  # None in non-reasoning mode
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int | None  # None in non-reasoning mode


@dataclass(frozen=True)
class _Draft:
    content: str
    reasoning: str | None


class Simulator:
    """Answers chat requests for the configured models, from the suites it was given."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        tasks: list[Task] = []
        for path in config.suites:
            tasks.extend(load_suite(str(path)).tasks)  # validated as `ocllm run` validates it
        self.index = SuiteIndex(tasks)

    def complete(self, request: ChatRequest) -> Completion:
        canonical = json.dumps(
            [self.config.seed, request.model, request.messages, request.reasoning],
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        rng = random.Random(int(digest[:32], 16))
        accuracy = self.config.models[request.model]
        # Both draws are always taken, in this order, so that changing the truncation rate or the
        # reasoning text does not change which answers are correct.
        truncated = rng.random() < self.config.truncation_rate and request.reasoning
        correct = rng.random() < accuracy

        prompt = _last_user_text(request.messages)
        task = self.index.find(prompt)
        if task is not None and task.type == "required_substrings":
            draft = _substrings_answer(rng, task, correct=correct, reasoning=request.reasoning)
        else:
            draft = _mcq_or_plain_answer(rng, task, prompt, request.model, correct=correct, reasoning=request.reasoning)

        content, reasoning, finish_reason = draft.content, draft.reasoning, "stop"
        if truncated and reasoning is not None:
            content, reasoning, finish_reason = "", _cut_mid_sentence(rng, reasoning), "length"

        prompt_tokens = _prompt_tokens(request.messages)
        content_tokens = _approx_tokens(content)
        reasoning_tokens: int | None = None
        if finish_reason == "length":
            # The model spent its whole budget thinking: vLLM's default budget is what the context leaves.
            completion_tokens = request.max_tokens or max(1, MAX_MODEL_LEN - prompt_tokens)
            reasoning_tokens = completion_tokens
        elif reasoning is not None:
            # Real reasoning traces are far longer than the few sentences written here; report that.
            thinking = max(_approx_tokens(reasoning), rng.randint(300, 2500))
            completion_tokens = _cap(thinking + content_tokens, request.max_tokens)
            reasoning_tokens = max(0, completion_tokens - content_tokens)
        else:
            completion_tokens = _cap(content_tokens + rng.randint(5, 120), request.max_tokens)
        return Completion(
            response_id=f"chatcmpl-sim-{digest[:24]}",
            model=request.model,
            content=content,
            reasoning=reasoning,
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reasoning_tokens=reasoning_tokens,
        )


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message.get("content"))
    return ""


def _approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    # About four characters a token, plus the few tokens a chat template adds around each message.
    chars = sum(len(message_text(m.get("content"))) for m in messages)
    return max(1, math.ceil(chars / 4) + 4 * len(messages))


def _cap(tokens: int, max_tokens: int | None) -> int:
    return min(tokens, max_tokens) if max_tokens is not None else tokens


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
) -> _Draft:
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
        return _Draft(f"FINAL: {chosen}", _mcq_reasoning(rng, question, options, letters, chosen))
    return _Draft(_mcq_working(rng, count, chosen) + f"\n\nFINAL: {chosen}", None)


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


def _plain_answer(rng: random.Random, prompt: str, model: str, *, reasoning: bool) -> _Draft:
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
    return _Draft(content, thinking)


def _substrings_answer(rng: random.Random, task: Task, *, correct: bool, reasoning: bool) -> _Draft:
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
    return _Draft(content, thinking)


def _cut_mid_sentence(rng: random.Random, text: str) -> str:
    """Stop a trace inside a sentence, as a model does when it runs out of tokens."""
    words = text.split(" ")
    if len(words) < 2:
        return text[: max(1, len(text) // 2)]
    cut = rng.randint(max(1, len(words) // 2), len(words) - 1)
    return " ".join(words[:cut]).rstrip(".!?,;:") or words[0]


# --------------------------------------------------------------------------------------- response shapes


def _usage(completion: Completion) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "total_tokens": completion.prompt_tokens + completion.completion_tokens,
    }
    if completion.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": completion.reasoning_tokens}
    return usage


def completion_body(completion: Completion, *, created: int, reasoning_field: str) -> dict[str, Any]:
    """A non-streaming `chat.completion` body, shaped like vLLM's."""
    # vLLM with a reasoning parser always sends the field, null when the model did not think.
    message = {"role": "assistant", "content": completion.content, reasoning_field: completion.reasoning}
    return {
        "id": completion.response_id,
        "object": "chat.completion",
        "created": created,
        "model": completion.model,
        "system_fingerprint": SIM_LABEL,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": completion.finish_reason}],
        "usage": _usage(completion),
    }


def split_pieces(text: str) -> list[str]:
    """Split text into streaming deltas at rough token boundaries; joining them gives the text back."""
    tokens = _TOKEN.findall(text)
    size = max(1, math.ceil(len(tokens) / _MAX_PIECES))
    return ["".join(tokens[i : i + size]) for i in range(0, len(tokens), size)]


def stream_chunks(
    completion: Completion, *, created: int, reasoning_field: str, include_usage: bool
) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a streamed answer, in order (without the [DONE] line)."""

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": completion.response_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": completion.model,
            "system_fingerprint": SIM_LABEL,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({reasoning_field: piece}) for piece in split_pieces(completion.reasoning or "")]
    chunks += [chunk({"content": piece}) for piece in split_pieces(completion.content)]
    chunks.append(chunk({}, completion.finish_reason))
    if include_usage:
        chunks.append(
            {
                "id": completion.response_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": completion.model,
                "system_fingerprint": SIM_LABEL,
                "choices": [],
                "usage": _usage(completion),
            }
        )
    return chunks
