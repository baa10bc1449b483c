"""The typed records that flow between stages. Each one round-trips through JSON unchanged."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

ConflictPolicy = Literal["last", "strict"]
# What kind of failure a Sample's error is (see Sample.error_kind): one closed set, for the client that
# decides it and every consumer that reads it.
ErrorKind = Literal[
    "http_status", "connection", "timeout", "malformed", "stream_cut", "server_error_event", "aborted", "refused",
    "misconfigured",
]  # fmt: skip


class Task(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="type"):
    """One benchmark item: what every task type has. A type's own fields (an MCQ task's options, a math task's
    tolerance, ...) are on its room's subclass (`scoring/<type>/fields.py`), whose tag is the suite line's `type`:
    a suite line decodes straight into its room's struct, and encodes back to the same flat line.
    `answer` is the gold as the suite gives it (an MCQ task's letter, a math task's answer, plain or LaTeX)."""

    id: str
    question: str = ""
    answer: str | None = None
    category: str = "uncategorized"
    subset: str | None = None
    # The prompt exactly as sent, when a saved run recorded it; the scorer reads its format
    # instruction to recognise placeholders the model echoes back.
    prompt: str | None = None

    @property
    def type(self) -> str:
        """The task's type: its room's tag (a registered task type, ocllm.scoring.task_types)."""
        return str(self.__struct_config__.tag)


class Sample(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the server returned for one task, kept verbatim, or why the request finally failed."""

    task_id: str
    # Which of the task's samples this is (0 to samples_per_task - 1): a lane that asks each task k times has k
    # samples of it, told apart by this index (and, when the lane sends a seed, sent with seed + sample).
    sample: int = 0
    content: str | None = None
    reasoning: str | None = None
    # The structured calls of the answer, as the server gave them: `message.tool_calls` verbatim, or, streamed,
    # the `delta.tool_calls` fragments assembled by their index ({"id", "type", "function": {"name",
    # "arguments"}}, the arguments text joined). None when the answer had none.
    tool_calls: list[dict[str, Any]] | None = None
    # Which response field held the reasoning ("reasoning_content" or "reasoning"): vLLM renamed it.
    reasoning_field: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None  # the server's usage object, verbatim
    model: str | None = None  # the model name the server answered with
    response_id: str | None = None
    latency_s: float | None = None  # request start to last byte, of the attempt that succeeded
    ttft_s: float | None = None  # time to the first content or reasoning token (streaming only)
    attempts: int = 1
    error: str | None = None  # why the request finally failed; None for a response
    # What kind of failure `error` reports, decided where it happened (the client), so that code reads this
    # rather than the wording of `error`. None for a response, and in runs saved before it was recorded.
    #   http_status         the server answered with a non-2xx status (in error_status); 429 = rate limited
    #   connection          no connection, or it failed or was reset while sending or reading the response
    #   timeout             no connection within connect_timeout_s, or no complete response within timeout_s
    #   malformed           a 200 body or stream event that is not the JSON of a chat completion
    #   stream_cut          an event stream ended before the generation did (no finish_reason: the stream
    #                       closed without [DONE], or [DONE] came early)
    #   server_error_event  a 200 answer whose body, or one of whose stream events, is an `error` object
    #   aborted             the server ended the generation itself (finish_reason "abort", SGLang)
    #   refused             the server said this request cannot succeed on it (the prompt and max_tokens do not fit
    #                       its context, ...): not retried; `error` holds its reason and what to change
    #   misconfigured       the server said no request of the lane can succeed on it as it runs (tools without
    #                       --jinja, a field it does not accept, a model it does not serve, ...): not retried, and two
    #                       alike stop the lane (the tasks left fail unsent, attempts 0); `error` holds its reason and
    #                       what to change. Which answers are which: run/refusals.py, docs/lanes.md.
    error_kind: ErrorKind | None = None
    # The HTTP status of the last failed attempt, for error_kind "http_status" (and "refused" or "misconfigured" when
    # a status said it).
    error_status: int | None = None
    request: dict[str, Any] | None = None  # the JSON body sent (never headers, so never the API key)
    # Why the attempts before the last one failed, counted by kind ("HTTP 503", "server disconnected", "timeout",
    # ...): one count per retry. Empty when the first attempt answered; a final failure is `error`, not a retry.
    retry_reasons: dict[str, int] = msgspec.field(default_factory=dict)
    # Times the request was sent again on a new connection without spending an attempt: a kept-alive connection
    # from the pool had been closed by the server before any byte of an answer (client.py says when that is safe).
    resends: int = 0
    # Which of the lane's endpoints answered (its index in the lane's base_url list), for a lane of several replicas;
    # None for a lane of one. What `ocllm watch` tells idle replicas by while the run goes.
    endpoint: int | None = None
    # A conversation (a task whose room continues it, `TaskType.next_turn`): every request of the episode and what
    # the server returned, in order. The fields above then hold the episode as a whole: `request` its first request,
    # the content, reasoning, calls and finish reason its last reply's, usage, latency, attempts, retries and
    # re-sends the sum of its requests', the error that ended it, if one did. None for a one-request task.
    turns: list[Turn] | None = None
    # Why the room ended the episode (its own word: "answered", "turn_bound", ...; run/conversation.py adds
    # "refused": the server refused a request past the first). None for a one-request task, and for an episode a
    # failed request ended (`error` says why).
    episode_end: str | None = None
    # Times the episode was started again because an earlier invocation was stopped in its middle (--resume): the
    # requests those attempts made are kept in the run directory's turns.jsonl, as evidence, and never scored.
    restarted: int = 0

    def sent_prompt(self) -> str | None:
        """The last user message of the request, as sent: the scorer reads its format instruction."""
        messages = (self.request or {}).get("messages") or []
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else None
        return None


class Turn(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One request of a conversation and what the server returned. What the request sent is the conversation so far
    (the episode's first request, then each turn's messages and its reply's assistant message) with the messages
    and tools this turn added: a turn keeps only what it added, so an episode's record grows with its turns, not
    with their square."""

    sent: list[dict[str, Any]] = msgspec.field(default_factory=list)  # messages added before this request
    tools_added: list[dict[str, Any]] = msgspec.field(default_factory=list)  # tools this request offered anew
    reply: Sample  # the server's answer, or why the request failed (its `request` left off: see above)


class NextTurn(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a conversation's room says after each reply (`TaskType.next_turn`): the messages to send next (the calls'
    results, the next user message) and the tools the next request adds, or that the episode has ended and why."""

    messages: list[dict[str, Any]] = msgspec.field(default_factory=list)
    tools_added: list[dict[str, Any]] = msgspec.field(default_factory=list)
    end: str | None = None  # why the episode ended, in the room's word; None: send `messages`


def as_sent(task: Task, sample: Sample) -> Task:
    """The task with the prompt its sample's request carried: what the scorer reads a format instruction
    from. The live progress and the final metrics both score this, so they agree."""
    return msgspec.structs.replace(task, prompt=sample.sent_prompt())


class Policy(msgspec.Struct, frozen=True, kw_only=True):
    """The scoring switches a lane or a rescore may set."""

    conflict_policy: ConflictPolicy = "last"
    allow_reasoning_fallback: bool = False
    # The chat template opens <think> inside the prompt, so the output starts inside the thinking.
    think_prefilled: bool = False
    # The lane's values of the settings rooms declare of their own that bear on deciding (the code room's
    # `code_limits`), by key: what a room's `decide` reads of its lane. Empty: every room's defaults.
    room_settings: dict[str, Any] = msgspec.field(default_factory=dict)


class Decision(msgspec.Struct, kw_only=True):
    """The scorer's verdict on one sample, carrying its own evidence: what every decision has. A type's own
    evidence, and the closed sets its rule, method and ambiguity come from, are its room's subclass
    (`scoring/<type>/decision.py`); a failed request's decision is this struct as it stands (rule
    `request_error`)."""

    task_id: str
    task_type: str
    category: str
    expected_answer: str | None
    extracted_final_answer: str | None
    extraction_source: Literal["content", "reasoning", "none"]
    extraction_method: str  # how the answer was taken: a value of its type's closed set (docs/scoring/<type>.md)
    ambiguity: str  # what stood in the way of one reading: "none", or a value of its type's closed set
    correct: bool | None
    rule: str  # the rule that decided: a value of its type's closed set, or "request_error"
    reason: str
    # The statements the type's reading found (each room's own struct; empty for a type that reads none), and the
    # index of the one that decided, if any: every record keeps `candidates`, as the output contract says.
    candidates: list[Any] = msgspec.field(default_factory=list)
    decided_by: int | None = None
    reasoning_statements: int = 0  # statements found in the reasoning (counted, never deciding by themselves)
    truncated: bool = False
    error: str | None = None
    # Statements found but not kept in `candidates` (the first and last of each region, and the deciding
    # one, are): counted, so the evidence says it is a selection.
    candidates_left_out: int = 0


# The keys every output record carried before each room owned its decision struct, in their order, with the value a
# type without the field writes: the per-task record's layout is a contract (DESIGN.md, "Contracts worth keeping
# stable"), so `hedged` (MCQ's) and `missing_substrings` (required substrings') stay on every record, false and null
# where the type has no such evidence. A type's own evidence follows them, in its struct's order.
_RECORD_LAYOUT: tuple[tuple[str, Any], ...] = (
    ("task_id", None), ("task_type", None), ("category", None), ("expected_answer", None),
    ("extracted_final_answer", None), ("extraction_source", None), ("extraction_method", None), ("ambiguity", None),
    ("correct", None), ("rule", None), ("reason", None), ("candidates", None), ("decided_by", None),
    ("reasoning_statements", None), ("truncated", None), ("hedged", False), ("missing_substrings", None),
    ("error", None), ("candidates_left_out", None),
)  # fmt: skip


def decision_record(decision: Decision) -> dict[str, Any]:
    """A decision as the output record writes it: the keys of the record's layout first, in its order, then the
    type's own evidence."""
    fields = msgspec.to_builtins(decision)
    record = {key: fields.pop(key, default) for key, default in _RECORD_LAYOUT}
    record.update(fields)
    return record


# The record <-> Sample mapping, declared once: how a task's record (analysis/rescore.task_record writes it, and
# formats/metrics_file reads it back into a Sample) carries what the server returned. The flat layout on disk is a
# contract (DESIGN.md): each Sample field below is written under its record key, in this order, after the task's
# fields, `None` included; `sample` (the index) stands before the task's fields, and `task_id` and `error` are the
# decision's own keys (a failed request's decision carries its sample's error).
SAMPLE_KEYS: tuple[tuple[str, str], ...] = (
    ("raw_content", "content"), ("raw_reasoning", "reasoning"), ("tool_calls", "tool_calls"),
    ("finish_reason", "finish_reason"), ("usage", "usage"), ("latency_s", "latency_s"), ("ttft_s", "ttft_s"),
    ("attempts", "attempts"),
)  # fmt: skip
# Left out of a run directory's metrics.json: samples.jsonl has them (a conversation's turns hold its raw outputs).
_RAW_OUTPUTS = ("raw_content", "raw_reasoning", "turns")
_OMITTED_WHEN_NONE = ("tool_calls",)  # a tool call answer's structured calls, kept off every other record
_WITH_THE_DECISION = ("task_id", "error")
# The Sample fields a record does not carry, and why: what the request sent and what the server said of itself, which
# a run directory's samples.jsonl keeps whole (a record that carried the request would repeat the prompt and the
# task). Any field not named here nor above (a field added to Sample later) is carried under its own name, after
# the ones above, whenever it is not at its default: it round-trips with no edit here (tests/test_typed_records.py).
SAMPLE_LEFT_OFF_RECORD = (
    "reasoning_field", "model", "response_id", "error_kind", "error_status", "request", "retry_reasons", "resends",
)  # fmt: skip


def sample_record(sample: Sample, *, raw_outputs: bool = True) -> dict[str, Any]:
    """A sample's fields as a task's record carries them, by their record keys in the record's order: `sample` (the
    index) first, which the writer places before the task's fields, then the rest (SAMPLE_KEYS). Without
    `raw_outputs`, the raw content and reasoning are left out, and a conversation's turns."""
    record: dict[str, Any] = {"sample": sample.sample}
    for key, name in SAMPLE_KEYS:
        value = getattr(sample, name)
        if (raw_outputs or key not in _RAW_OUTPUTS) and (value is not None or key not in _OMITTED_WHEN_NONE):
            record[key] = value
    for field in _later_fields(type(sample)):
        value = getattr(sample, field.name)
        if not raw_outputs and field.name in _RAW_OUTPUTS:
            continue
        if not _at_default(field, value):  # at its default it is left out, as samples.jsonl leaves it
            record[field.name] = msgspec.to_builtins(value)
    return record


def sample_from_record(record: Mapping[str, Any], struct: type[Sample] = Sample) -> Sample:
    """The Sample a task's record carries (the record's keys named in SAMPLE_KEYS, its index, task id and error, and
    any later field under its own name), as `struct` (Sample; a test's longer one): a key the record lacks is the
    field's default. Raises msgspec.ValidationError for a value of the wrong kind (the reader says which record)."""
    fields = {name: record[key] for key, name in SAMPLE_KEYS if key in record}
    fields.update((key, record[key]) for key in ("sample", *_WITH_THE_DECISION) if key in record)
    later = [f.name for f in _later_fields(struct) if f.name in record]
    fields.update((name, record[name]) for name in later)
    converted = msgspec.convert(fields, struct)  # checked; then built from the values as given, as every reader
    # built it: an integer latency stays one (convert makes it a float), and is written back as read. A later field
    # is taken as converted: its value may be a struct (a conversation's turns).
    fields.update((name, getattr(converted, name)) for name in later)
    return struct(**fields)


@functools.cache
def _later_fields(struct: type[Sample]) -> tuple[msgspec.structs.FieldInfo, ...]:
    """The struct's fields that SAMPLE_KEYS does not map, nor leaves off the record: carried under their own names."""
    named = {"sample", *_WITH_THE_DECISION, *SAMPLE_LEFT_OFF_RECORD, *(name for _, name in SAMPLE_KEYS)}
    return tuple(f for f in msgspec.structs.fields(struct) if f.name not in named)


def _at_default(field: msgspec.structs.FieldInfo, value: object) -> bool:
    if field.default is not msgspec.NODEFAULT:
        return bool(value == field.default)
    return field.default_factory is not msgspec.NODEFAULT and bool(value == field.default_factory())


class Finding(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What one probe of the preflight found (run/preflight.py): ok, a problem (with what to change, and whether it
    will distort this lane's run), or inconclusive (nothing claimed)."""

    probe: str  # "channel", "thinking", "context", "tools", "budget"
    outcome: Literal["ok", "problem", "inconclusive"]
    said: str
    distorts: bool = False
    change: str | None = None
    measured: dict[str, Any] = msgspec.field(default_factory=dict)


class Preflight(msgspec.Struct, kw_only=True):
    """The preflight of a lane: its findings, and the requests and seconds it took (never the run's)."""

    findings: list[Finding]
    requests: int = 0
    seconds: float = 0.0


RunStatus = Literal["running", "interrupted", "finished", "finished_with_errors"]


class SuiteRecord(msgspec.Struct, kw_only=True):
    """The suite a run directory ran: its name, the hash of its canonical form, its size."""

    name: str
    sha256: str
    tasks: int


class ShardRecord(msgspec.Struct, kw_only=True):
    """The part of a suite a sharded run ran (`--shard K/N`): the whole suite's hash and size, and where each
    of its tasks stands in the whole suite (so that `merge` checks shards belong together and restores the
    order)."""

    index: int
    count: int
    suite_sha256: str
    suite_tasks: int
    positions: list[int]


class RunManifest(msgspec.Struct, kw_only=True):
    """manifest.json: what ran, against what, and how it ended. Never holds a secret."""

    format: str
    harness_version: str
    scorer_version: str
    lane: dict[str, Any]  # every lane setting (the API key's variable name, never the key)
    suite: SuiteRecord
    server_models: Any = None  # the server's /models answer, verbatim
    served_model: str | None = None  # the model name the server answered as
    # Which server software answered ("llama.cpp", "vllm", "sglang", "ollama", "unknown"; the replicas' kinds joined
    # when they differ), and per endpoint its base_url, kind, version and the mark that told (server_kind.py).
    server_kind: str | None = None
    server_identity: list[dict[str, Any]] | None = None
    # The ocllm simulator answered (at any of the endpoints): the figures are simulated, and every page says so.
    # False in a manifest written before it was recorded, which reads as it did then.
    simulated: bool = False
    # What ocllm added to every request so that identical runs repeat, for this kind of server (llama.cpp:
    # {"cache_prompt": false}); a field the lane's extra_body sets itself is the lane's and not listed here.
    request_settings: dict[str, Any] = msgspec.field(default_factory=dict)
    started_at: str
    finished_at: str | None = None
    status: RunStatus = "running"
    notices: list[str] = msgspec.field(default_factory=list)
    # HTTP requests the run has cost so far, retries included, across every invocation (--resume,
    # --retry-errors): a retried task's earlier attempts stay counted although its failed line is dropped.
    requests: int = 0
    # The retries among them, by why the attempt before failed ({"HTTP 503": 2, "server disconnected": 1}), and
    # the free re-sends apart from them (a kept-alive connection the server had closed: not an attempt), counted
    # across every invocation as `requests` is.
    retries: dict[str, int] = msgspec.field(default_factory=dict)
    resends: int = 0
    # The server ocllm started for the lane (servers.py): its command, env names, pid, start and ready times,
    # and the models it served. None when the lane used whatever was running.
    server: dict[str, Any] | None = None
    # Seconds the run's requests were in flight (from the first sent to the last finished), summed over every
    # invocation: the wall time its serving figures are over.
    wall_s: float = 0.0
    # Seconds the live decisions went on after the last response, summed over every invocation: the scorer's time,
    # never in the wall time above (requests never wait for decisions).
    scoring_tail_s: float = 0.0
    endpoints: list[dict[str, Any]] | None = None  # per replica: requests, errors, latency (several base_urls)
    shard: ShardRecord | None = None  # the shard this run is (`--shard K/N`); None: the whole suite
    merged_from: list[str] | None = None  # the shard run directories `ocllm merge` joined into this one
    # The ocllm command that ran it ("run", "matrix"): what --resume goes with to finish it (None: written before
    # this was recorded).
    command: str | None = None
    # What the preflight found of the server path before the first task (run/preflight.py); None: none ran.
    preflight: Preflight | None = None


def prompt_tokens(usage: dict[str, Any] | None) -> int | None:
    """The prompt tokens a server's usage object counts, None where it did not say."""
    count = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def token_counts(usage: dict[str, Any] | None) -> tuple[int | None, int | None]:
    """(completion tokens, reasoning tokens) of a server's usage object, None where it did not say.
    vLLM puts reasoning tokens under completion_tokens_details; SGLang at the top level of usage."""
    usage = usage if isinstance(usage, dict) else {}
    completion = usage.get("completion_tokens")
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if reasoning is None:
        reasoning = usage.get("reasoning_tokens")
    return (
        completion if isinstance(completion, int) and not isinstance(completion, bool) else None,
        reasoning if isinstance(reasoning, int) and not isinstance(reasoning, bool) else None,
    )
