"""Response assembly: what the server answered, read into one `Response` (content, reasoning under either field
name, tool calls, finish_reason, usage, timings) from a non-streamed JSON body or from a stream's events, one event
at a time. Reading the bytes is not done here (transport.py, stream.py): only what they mean.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import msgspec

from ocllm.models import Sample
from ocllm.run.client.failures import (
    BODY_EXCERPT_CHARS,
    Failure,
    body_excerpt,
    error_object_failure,
    malformed,
    one_line,
)
from ocllm.run.client.tool_calls import ToolCallFragments
from ocllm.run.scrub import scrub as _scrub


@dataclass
class Response:
    """A usable response, as read from either a JSON body or an event stream."""

    content: str | None = None
    reasoning: str | None = None
    reasoning_field: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    response_id: str | None = None
    latency_s: float | None = None
    ttft_s: float | None = None
    tool_calls: list[dict[str, Any]] | None = None

    def to_sample(self, task_id: str, *, attempts: int, request: dict[str, Any]) -> Sample:
        return Sample(
            task_id=task_id,
            content=self.content,
            reasoning=self.reasoning,
            tool_calls=self.tool_calls,
            reasoning_field=self.reasoning_field,
            finish_reason=self.finish_reason,
            usage=self.usage,
            model=self.model,
            response_id=self.response_id,
            latency_s=self.latency_s,
            ttft_s=self.ttft_s,
            attempts=attempts,
            request=request,
        )


def parse_completion(raw: bytes, started: float, api_key: str | None) -> Response | Failure:
    """A non-streamed chat completion. A body without choices is malformed: servers under load cut bodies."""
    latency = time.perf_counter() - started
    try:
        doc = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        return malformed(f"invalid JSON ({exc}): {body_excerpt(raw, api_key)}")
    if not isinstance(doc, dict):
        return malformed(f"not a JSON object: {body_excerpt(raw, api_key)}")
    choice = first_choice(doc.get("choices"))
    if choice is None:
        if doc.get("error"):
            return error_object_failure(doc["error"], "server error in response body", api_key)
        return malformed(f"no choices: {body_excerpt(raw, api_key)}")
    message = choice.get("message")
    if not isinstance(message, dict):
        return malformed(f"choices[0] has no message: {body_excerpt(raw, api_key)}")
    content = message.get("content")
    reasoning, reasoning_field = pick_reasoning(message)
    calls = message.get("tool_calls")
    return Response(
        content=content if isinstance(content, str) else None,
        reasoning=reasoning,
        # Verbatim: the structured calls are what an agent would execute, so they are kept as the server gave them.
        tool_calls=calls if isinstance(calls, list) and calls else None,
        reasoning_field=reasoning_field,
        finish_reason=str_or_none(choice.get("finish_reason")),
        usage=doc["usage"] if isinstance(doc.get("usage"), dict) else None,
        model=str_or_none(doc.get("model")),
        response_id=str_or_none(doc.get("id")),
        latency_s=latency,
    )


class _Delta(msgspec.Struct):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[Any] | None = None


class _Choice(msgspec.Struct):
    index: int = 0
    delta: _Delta | None = None
    finish_reason: str | None = None


class _Chunk(msgspec.Struct):
    """The usual shape of a chat completion chunk, for `StreamAccumulator.handle`'s typed reading."""

    id: str | None = None
    model: str | None = None
    choices: list[_Choice] | None = None
    usage: dict[str, Any] | None = None
    error: Any = None


_CHUNK = msgspec.json.Decoder(_Chunk)


class StreamAccumulator:
    """Joins the chunks of a chat completion stream into one response."""

    def __init__(self, started: float, api_key: str | None) -> None:
        self._started = started
        self._api_key = api_key  # scrubbed from error excerpts before they are cut to length
        self._content: list[str] | None = None  # None until some delta carries a content string
        self._reasoning: list[str] | None = None
        self._reasoning_field: str | None = None
        self._ttft_s: float | None = None
        self.finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None
        self._response_id: str | None = None
        self._tool_calls = ToolCallFragments()
        self.done = False

    def handle(self, data: str) -> Failure | None:
        if data[:1] != "{" and data.strip() == "[DONE]":
            self.done = True
            return None
        # Typed first: a chunk of the usual shape is read by msgspec into _Chunk in one step, several times
        # faster than a dict read field by field. Anything else (an error, invalid JSON, a field of another
        # type, a choice that is no object) takes the general path below, which decides as it always did.
        try:
            chunk = _CHUNK.decode(data)
        except msgspec.DecodeError:  # ValidationError included
            return self._handle_any(data)
        if chunk.error:
            return self._handle_any(data)
        if chunk.model:
            self._model = chunk.model
        if chunk.id:
            self._response_id = chunk.id
        if chunk.usage is not None:
            self._usage = chunk.usage
        choices = chunk.choices
        if not choices:
            return None
        choice = choices[0] if choices[0].index == 0 else next((c for c in choices if c.index == 0), choices[0])
        delta = choice.delta
        if delta is not None:
            piece = delta.content
            if piece is not None:
                if self._content is None:
                    self._content = []
                self._content.append(piece)
                if piece and self._ttft_s is None:
                    self._mark_first_token(piece)
            # As pick_reasoning: the first non-empty of the two fields, else the first present.
            reasoning, name = delta.reasoning_content, "reasoning_content"
            if not reasoning and (delta.reasoning or reasoning is None):
                reasoning, name = delta.reasoning, "reasoning"
            if reasoning is not None:
                if self._reasoning is None:
                    self._reasoning, self._reasoning_field = [], name
                self._reasoning.append(reasoning)
                if reasoning and self._ttft_s is None:
                    self._mark_first_token(reasoning)
            if delta.tool_calls:
                self._mark_first_token(self._tool_calls.add(delta.tool_calls))
        if choice.finish_reason is not None:
            self.finish_reason = choice.finish_reason
        return None

    def _handle_any(self, data: str) -> Failure | None:
        """An event of any shape, read as a JSON value and checked field by field."""
        try:
            event = msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            excerpt = one_line(_scrub(data, self._api_key))[:BODY_EXCERPT_CHARS]
            return malformed(f"invalid JSON in a stream event ({exc}): {excerpt}")
        if not isinstance(event, dict):
            excerpt = one_line(_scrub(data, self._api_key))[:BODY_EXCERPT_CHARS]
            return malformed(f"a stream event is not a JSON object: {excerpt}")
        if event.get("error"):
            return error_object_failure(event["error"], "server error in stream", self._api_key)
        self._model = str_or_none(event.get("model")) or self._model
        self._response_id = str_or_none(event.get("id")) or self._response_id
        if isinstance(event.get("usage"), dict):
            # Some servers report running usage on every chunk; the last one is the total.
            self._usage = event["usage"]
        choice = first_choice(event.get("choices"))
        if choice is None:
            return None  # e.g. the usage-only final chunk, whose choices list is empty
        delta = choice.get("delta")
        if isinstance(delta, dict):
            piece = delta.get("content")
            if isinstance(piece, str):
                if self._content is None:
                    self._content = []
                self._content.append(piece)
                self._mark_first_token(piece)
            reasoning, name = pick_reasoning(delta)
            if reasoning is not None:
                if self._reasoning is None:
                    self._reasoning, self._reasoning_field = [], name
                self._reasoning.append(reasoning)
                self._mark_first_token(reasoning)
            if isinstance(delta.get("tool_calls"), list):
                self._mark_first_token(self._tool_calls.add(delta["tool_calls"]))
        finish_reason = str_or_none(choice.get("finish_reason"))
        if finish_reason is not None:
            self.finish_reason = finish_reason
        return None

    def _mark_first_token(self, piece: str) -> None:
        if piece and self._ttft_s is None:
            self._ttft_s = time.perf_counter() - self._started

    def response(self) -> Response:
        return Response(
            content=None if self._content is None else "".join(self._content),
            reasoning=None if self._reasoning is None else "".join(self._reasoning),
            reasoning_field=self._reasoning_field,
            finish_reason=self.finish_reason,
            usage=self._usage,
            model=self._model,
            response_id=self._response_id,
            latency_s=time.perf_counter() - self._started,
            ttft_s=self._ttft_s,
            tool_calls=self._tool_calls.calls(),
        )


def first_choice(choices: Any) -> dict[str, Any] | None:
    """The choice with index 0 (a Sample holds one answer; with n > 1 the others are not kept)."""
    if not isinstance(choices, list):
        return None
    candidates = [c for c in choices if isinstance(c, dict)]
    for choice in candidates:
        if choice.get("index", 0) == 0:
            return choice
    return candidates[0] if candidates else None


def pick_reasoning(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    """The reasoning text and the name of the field that held it.

    vLLM renamed `reasoning_content` to `reasoning`, and some versions send both with the same text. The
    first non-empty one wins, `reasoning_content` before `reasoning`, so identical copies are never doubled.
    """
    present = [(name, obj.get(name)) for name in ("reasoning_content", "reasoning")]
    strings = [(name, value) for name, value in present if isinstance(value, str)]
    for name, value in strings:
        if value:
            return value, name
    if strings:
        return strings[0][1], strings[0][0]
    return None, None


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
