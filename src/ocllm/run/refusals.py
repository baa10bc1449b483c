"""Which failed answers another attempt can change, and which say the request cannot succeed on this server.

One table, read by the client for every failed answer (an HTTP status with its body, or an `error` object in a
200 body or a stream): docs/lanes.md, "Errors that are not retried", shows it. The server's status decides first,
then what its body says, because servers report a configuration problem under any status: llama-server answers
"tools param requires --jinja flag" with HTTP 500 (a `std::runtime_error` its handler wraps as a server error),
vLLM its missing tool parser with 400, Ollama a model without tools with 400.

- Transient (retried): 408, 429, any other 5xx (`retry_rule.transient_status`, which the notices count by too), and a
  body that names nothing below.
- Refused, this request only (kind `refused`, not retried, the other tasks go on): the prompt and max_tokens do not
  fit the server's context, or one prompt is larger than its batch.
- Misconfigured, every request of the lane (kind `misconfigured`, not retried; two alike stop the lane, runner.py):
  a feature the server was started without (tools, auto tool choice), a field it does not accept, a model it does
  not serve, credentials it refuses, a path it does not have.
- Any other 4xx: not retried (kind `http_status`): the request as sent will not change, but nothing says that every
  request would fail alike.

The messages matched are the servers' own, read in their sources: llama.cpp (tools/server/server-common.cpp
`oaicompat_chat_params_parse`, server-context.cpp), vLLM (entrypoints/openai serving and protocol), SGLang, Ollama.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import msgspec

from ocllm import advice
from ocllm.models import ErrorKind

__all__ = ["Refusal", "refusal", "server_message"]

Scope = Literal["request", "lane"]


class Refusal(NamedTuple):
    """An answer that says the request cannot succeed on this server as it runs."""

    scope: Scope  # "request": this request only; "lane": every request of the lane alike
    change: str  # what to change, said after the server's reason
    # The prompt and max_tokens do not fit the server's context: a kind "refused" like the batch's, told apart on disk
    # by the words failures.py writes for it (retry_rule.CONTEXT_REFUSED), which the summary counts and advises on.
    context: bool = False

    @property
    def kind(self) -> ErrorKind:
        return "misconfigured" if self.scope == "lane" else "refused"


class _Rule(NamedTuple):
    marks: tuple[str, ...]  # any of these, in the body's lower-cased text
    refusal: Refusal


# In order: the first rule whose mark is in the body decides.
_RULES: tuple[_Rule, ...] = (
    # llama.cpp: "tools param requires --jinja flag", "tool_choice param requires --jinja flag" (HTTP 500).
    _Rule(("requires --jinja",), Refusal("lane", advice.JINJA_OFF)),
    # vLLM: "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set" (HTTP 400).
    _Rule(
        ("--enable-auto-tool-choice",),
        Refusal("lane", advice.AUTO_TOOL_CHOICE_OFF),
    ),
    # Ollama: "registry.ollama.ai/library/gemma3:4b does not support tools" (HTTP 400).
    _Rule(("does not support tools",), Refusal("lane", advice.NO_TOOLS_IN_TEMPLATE)),
    # vLLM (pydantic, extra fields forbidden): "Extra inputs are not permitted"; OpenAI: "Unrecognized request
    # argument supplied".
    _Rule(
        ("extra inputs are not permitted", "unrecognized request argument"), Refusal("lane", advice.FIELD_NOT_ACCEPTED)
    ),
    # vLLM: "The model `x` does not exist." (404); Ollama: "model \"x\" not found, try pulling it first" (404).
    _Rule(
        ("the model `", "try pulling it first", "model_not_found"),
        Refusal("lane", advice.MODEL_NOT_SERVED),
    ),
    # llama.cpp: "request (N tokens) exceeds the available context size (M tokens), try increasing it", "input (N
    # tokens) is larger than the max context size (M tokens)", both of type exceed_context_size_error (400), and
    # "context shift is disabled" (500: the answer filled the context); vLLM: "This model's maximum context length
    # is M tokens. However, you requested N tokens ..." (400); SGLang: "The input (N tokens) is longer than the
    # model's context length (M tokens)." (400).
    _Rule(
        (
            "exceed_context_size_error",
            "exceeds the available context size",
            "larger than the max context size",
            "context shift is disabled",
            "maximum context length",
            "longer than the model's context length",
        ),
        Refusal("request", advice.CONTEXT_TOO_SMALL, context=True),
    ),
    # llama.cpp: "input (N tokens) is too large to process. increase the physical batch size" (500).
    _Rule(("too large to process",), Refusal("request", advice.BATCH_TOO_SMALL)),
)

# Statuses that say every request of the lane would fail alike, whatever the body says.
_STATUSES: dict[int, Refusal] = {
    401: Refusal("lane", advice.KEY_REFUSED),
    403: Refusal("lane", advice.KEY_REFUSED),
    404: Refusal("lane", advice.PATH_NOT_FOUND),
    405: Refusal("lane", advice.METHOD_NOT_ALLOWED),
    501: Refusal("lane", advice.NOT_IMPLEMENTED),
}


def refusal(status: int | None, body: str) -> Refusal | None:
    """What a failed answer says, by the table above: None when another attempt may pass (transient) or when it
    is a 4xx that says nothing more (not retried, kind http_status). `status` None: an `error` object in a 200
    answer, whose code the caller passes as the status when it has one."""
    if status in (408, 429):
        return None  # waiting helps, whatever the body says
    text = body.lower()
    for rule in _RULES:
        if any(mark in text for mark in rule.marks):
            return rule.refusal
    return _STATUSES.get(status) if status is not None else None


def server_message(raw: bytes | str) -> str:
    """The server's own reason in an error body: `error.message` (llama.cpp, vLLM, SGLang, OpenAI), a string
    `error` (Ollama), `message` or `detail` (older vLLM, FastAPI); else the body as it is."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    try:
        doc = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text
    if isinstance(doc, dict):
        error = doc.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        for value in (error, doc.get("message"), doc.get("detail")):
            if isinstance(value, str) and value:
                return value
    return text
