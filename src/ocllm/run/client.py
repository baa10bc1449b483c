"""The HTTP client: one chat request to an OpenAI-compatible endpoint in, one Sample out.

Whatever the network or the server does ends in a Sample: the response, kept verbatim, or, once retrying stops,
`error` set to a one-line reason for people, with `error_kind` (and `error_status`) saying what failed for code
to decide on: callers never parse the wording. Only programming errors (a body that is not JSON-serialisable, invalid
settings) raise. Retries are bounded twice, by `max_attempts` and by `retry_budget_s`, so that a dead server
costs a run a known, small amount of time per task. Each retry's reason is counted in the Sample
(`retry_reasons`), so that a run can say why its requests were retried without anyone reading a log.

One failure is not a retry: a kept-alive connection taken from the pool that the server had already closed
(see `_attempt`). The request is sent once more on a new connection, without spending an attempt, and counted
apart (`resends`).

The API key goes into the Authorization header and nowhere else: every error text and log line passes
through `_scrub` (scrub.py) first, because servers do echo keys back in their 401 bodies.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import math
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import aiohttp
import msgspec

from ocllm.models import ErrorKind, Sample
from ocllm.run.refusals import Refusal, refusal, server_message, transient_status
from ocllm.run.scrub import REDACTED as _REDACTED
from ocllm.run.scrub import scrub as _scrub
from ocllm.run.sse import SSEParser

__all__ = [
    "AttemptWatch", "ClientSettings", "FailedAttempt", "ServerProbe", "chat_completion", "get_json", "list_models",
    "make_session", "probe_server",
]  # fmt: skip

log = logging.getLogger(__name__)

# How much of a response body an error message quotes: enough to read a server's reason, short enough for one line.
BODY_EXCERPT_CHARS = 200
# Exponents beyond this would overflow a float; the cap (backoff_max_s) has long been reached by then.
_MAX_BACKOFF_EXPONENT = 60
# How long to wait for the end of a streamed body after [DONE] before giving up on reusing the connection.
_DRAIN_AFTER_DONE_S = 1.0


class ClientSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How to reach one endpoint, and how hard to try."""

    base_url: str  # e.g. "http://127.0.0.1:8000/v1"; requests go to f"{base_url}/chat/completions"
    api_key: str | None = None  # sent as "Authorization: Bearer ..."; never stored in a Sample, an error or a log
    stream: bool = False
    timeout_s: float = 600.0  # total per attempt: connecting, sending, and reading the last byte
    connect_timeout_s: float = 10.0
    max_attempts: int = 4  # first try included
    backoff_base_s: float = 0.5  # full jitter: sleep uniform(0, min(backoff_max_s, base * 2**n)) before retry n+1
    backoff_max_s: float = 30.0
    retry_budget_s: float = 300.0  # no retry starts later than this after the first attempt started
    omit_fields: tuple[str, ...] = ()  # request fields never sent, even those the client adds (stream_options)
    # One of several replicas: a connection that cannot even be made is given back at once (not retried here),
    # so that the caller sends the request to another replica (endpoints.py).
    fail_over: bool = False

    def __post_init__(self) -> None:
        # Caught here, a bad setting is one clear error at start-up rather than N error Samples.
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("timeout_s", "connect_timeout_s"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name} must be positive, got {value}")
        for name in ("backoff_base_s", "backoff_max_s", "retry_budget_s"):
            value = getattr(self, name)
            if not value >= 0:
                raise ValueError(f"{name} must not be negative, got {value}")

    # msgspec's generated repr (and rich's pretty-printer) would show the key to anyone who logs the settings.
    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self.__rich_repr__())
        return f"ClientSettings({fields})"

    def __rich_repr__(self) -> Any:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if name == "api_key" and value is not None:
                value = _REDACTED
            yield name, value


def make_session(concurrency: int, *, reuse_connections: bool = True) -> aiohttp.ClientSession:
    """A session allowing `concurrency` simultaneous connections, without a session-wide timeout.

    Call it from inside a running event loop (aiohttp requires one). Timeouts are set per attempt by
    `chat_completion`. Keep the number of requests in flight at most `concurrency` (a semaphore in the
    runner): a request waiting for a free connection is already inside its attempt's timeout and latency.

    Without `reuse_connections` every request gets a new connection, closed after its response: what streamed
    lanes use, because llama-server closes the connection after every streamed response (its headers announce
    keep-alive all the same), so a pooled one would be dead whenever it is taken. A new TCP connection costs well
    under a millisecond on a local network, against seconds of generation.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    connector = aiohttp.TCPConnector(
        limit=concurrency, limit_per_host=concurrency, force_close=not reuse_connections
    )
    # Tells each attempt whether its connection came from the pool: only such a connection may be stale.
    tracing = aiohttp.TraceConfig()
    tracing.on_connection_reuseconn.append(_mark_reused)
    return aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=None), trace_configs=[tracing]
    )


async def _mark_reused(
    session: aiohttp.ClientSession, context: Any, params: aiohttp.TraceConnectionReuseconnParams
) -> None:
    sending = getattr(context, "trace_request_ctx", None)
    if isinstance(sending, _Sending):
        sending.reused = True


class ServerProbe(NamedTuple):
    models: dict[str, Any] | None  # the /models answer, when the server gave one
    unreachable: str | None  # why no connection could be made at all; None when the server answered
    status: int | None = None  # the HTTP status of /models, when the server answered
    problem: str | None = None  # a one-line excerpt of an error answer (HTTP error, or an "error" object)


# A probe answers quickly or not at all; it must not wait out a long generation timeout.
_PROBE_TIMEOUT_S = 30.0


async def probe_server(session: aiohttp.ClientSession, settings: ClientSettings) -> ServerProbe:
    """GET {base_url}/models once: the models, or why the server could not be reached, or what it said
    instead. Never raises for what the network or the server does."""
    url = f"{settings.base_url.rstrip('/')}/models"
    try:
        async with (
            asyncio.timeout(min(settings.timeout_s, _PROBE_TIMEOUT_S)),
            session.get(
                url,
                headers=_headers(settings, accept="application/json"),
                timeout=_request_timeout(settings),
                allow_redirects=False,
            ) as resp,
        ):
            raw = await resp.read()
            status = resp.status
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        reason = _scrub(_describe(exc), settings.api_key)
        log.info("listing models at %s failed: %s", url, reason)
        return ServerProbe(None, reason)
    if not 200 <= status < 300:
        log.info("listing models at %s failed: HTTP %d", url, status)
        return ServerProbe(None, None, status, _excerpt(raw, settings.api_key))
    try:
        doc = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        log.info("listing models at %s failed: the body is not JSON", url)
        return ServerProbe(None, None, status, "the body is not JSON")
    if isinstance(doc, dict) and doc.get("error") and "data" not in doc:
        # LM Studio answers unknown paths with 200 and {"error": "Unexpected endpoint ..."}.
        return ServerProbe(None, None, status, _excerpt(msgspec.json.encode(doc["error"]), settings.api_key))
    return ServerProbe(doc if isinstance(doc, dict) else None, None, status)


async def get_json(session: aiohttp.ClientSession, settings: ClientSettings, url: str, timeout_s: float) -> Any:
    """GET `url` once (with the lane's key): its JSON on a 2xx answer, else None, within `timeout_s`. For the
    cheap questions asked before a run (which server is this?): never raises for what the network does."""
    try:
        async with (
            asyncio.timeout(timeout_s),
            session.get(
                url, headers=_headers(settings, accept="application/json"), allow_redirects=False
            ) as resp,
        ):
            if not 200 <= resp.status < 300:
                return None
            return msgspec.json.decode(await resp.read())
    except (TimeoutError, aiohttp.ClientError, OSError, msgspec.DecodeError):
        return None


async def list_models(session: aiohttp.ClientSession, settings: ClientSettings) -> dict[str, Any] | None:
    """GET {base_url}/models, once. The parsed JSON object, or None for any failure (it is only a probe)."""
    return (await probe_server(session, settings)).models


async def chat_completion(
    session: aiohttp.ClientSession,
    settings: ClientSettings,
    task_id: str,
    body: dict[str, Any],
    *,
    rng: random.Random | None = None,
    watch: AttemptWatch | None = None,
) -> Sample:
    """POST one chat request, retrying what is worth retrying, and return what came back as a Sample. `watch` is
    told of every attempt as it is sent and as it fails, and of the request's end (a cancelled one included)."""
    request = dict(body)
    if settings.stream:
        request["stream"] = True
        # Without include_usage a stream carries no token counts; a caller's own choice is left alone.
        request.setdefault("stream_options", {"include_usage": True})
    for name in settings.omit_fields:
        # For servers that reject fields they do not know (older vLLM: "Extra inputs are not permitted").
        request.pop(name, None)
    data = msgspec.json.encode(request)
    # The Sample records exactly the bytes sent, decoded afresh: later changes to the caller's dict cannot leak in.
    sent: dict[str, Any] = msgspec.json.decode(data)
    url = f"{settings.base_url.rstrip('/')}/chat/completions"
    headers = _headers(settings, accept="text/event-stream" if settings.stream else "application/json")
    headers["Content-Type"] = "application/json"

    watch = watch or AttemptWatch()
    try:
        return await _send(session, settings, task_id, (url, headers, data), sent, rng, watch)
    finally:
        watch.ended()


class FailedAttempt(NamedTuple):
    """One attempt that failed, as a watch is told of it."""

    reason: str  # what failed, as retries are counted: "HTTP 503", "server disconnected", "timeout", ...
    kind: ErrorKind
    attempt: int  # 1 for the first
    max_attempts: int
    retrying: bool  # another attempt follows (after the back-off); False: the request failed with this one
    timeout_s: float | None = None  # for a timeout: the timeout_s the attempt passed


class AttemptWatch:
    """Told of one request's attempts as they happen, so that a run counts every attempt made (an interrupted
    one too) and its progress shows timeouts and retries while they happen. This one hears nothing: the runner's
    counts and progress subclass it."""

    def sent(self, attempt: int) -> None:
        """Attempt `attempt` (1 for the first) is being sent."""

    def failed(self, failure: FailedAttempt) -> None:
        """An attempt failed."""

    def resent(self) -> None:
        """The attempt was sent again on a new connection, without spending an attempt."""

    def ended(self) -> None:
        """The request is over: answered, failed for good, or cancelled."""


async def _send(
    session: aiohttp.ClientSession,
    settings: ClientSettings,
    task_id: str,
    target: tuple[str, dict[str, str], bytes],
    sent: dict[str, Any],
    rng: random.Random | None,
    watch: AttemptWatch,
) -> Sample:
    url, headers, data = target
    first_start = time.monotonic()
    attempt = 0
    tally = _Tally()
    while True:
        attempt += 1
        watch.sent(attempt)
        outcome = await _attempt(session, settings, url, headers, data)
        if isinstance(outcome, _Failure) and outcome.stale:
            # At most once per attempt, and on a connection that cannot be a pooled one: should the new
            # connection fail too, that failure is the attempt's, retried or recorded as any other.
            tally.resends += 1
            watch.resent()
            log.info("task %s: the server had closed the kept-alive connection; sending again on a new one", task_id)
            async with _fresh_session() as fresh:
                outcome = await _attempt(fresh, settings, url, headers, data)
        if isinstance(outcome, _Response) and outcome.finish_reason == "abort":
            # SGLang ends a generation it aborted with finish_reason "abort" and partial text: not an answer.
            outcome = _Failure(
                "aborted", "aborted", "the server aborted the generation (finish_reason abort)", retryable=True
            )
        if isinstance(outcome, _Response):
            return tally.counted(outcome.to_sample(task_id, attempts=attempt, request=sent))

        if not outcome.retryable:
            watch.failed(_failed_attempt(outcome, attempt, settings, retrying=False))
            reason = f"{outcome.label}: {outcome.detail}"
            return tally.counted(_failed(task_id, attempt, sent, outcome, reason, settings))
        tried = _n_attempts(attempt)
        if attempt >= settings.max_attempts:
            watch.failed(_failed_attempt(outcome, attempt, settings, retrying=False))
            reason = f"{outcome.label} after {tried}: {outcome.detail}"
            return tally.counted(_failed(task_id, attempt, sent, outcome, reason, settings))
        delay = _retry_delay(outcome, settings, attempt, rng)
        # A retry that could only start past the budget is not made: sleeping first would just waste the time.
        if time.monotonic() - first_start + delay >= settings.retry_budget_s:
            watch.failed(_failed_attempt(outcome, attempt, settings, retrying=False))
            spent = f"retry budget of {settings.retry_budget_s:g} s spent"
            reason = f"{outcome.label} after {tried} ({spent}): {outcome.detail}"
            return tally.counted(_failed(task_id, attempt, sent, outcome, reason, settings))
        tally.retried(outcome)
        watch.failed(_failed_attempt(outcome, attempt, settings, retrying=True))
        # INFO, not WARNING: with no logging configured, Python prints warnings over the progress display.
        log.info(
            "task %s: attempt %d of %d failed (%s); retrying in %.2f s",
            task_id,
            attempt,
            settings.max_attempts,
            _scrub(f"{outcome.label}: {outcome.detail}", settings.api_key),
            delay,
        )
        await asyncio.sleep(delay)


def _failed_attempt(failure: _Failure, attempt: int, settings: ClientSettings, *, retrying: bool) -> FailedAttempt:
    # Only a timeout of the whole attempt passed timeout_s; a connect timeout passed connect_timeout_s.
    timeout_s = settings.timeout_s if failure.kind == "timeout" and failure.cause is None else None
    return FailedAttempt(failure.reason, failure.kind, attempt, settings.max_attempts, retrying, timeout_s)


class _Tally:
    """What one request's retries and free re-sends were, for its Sample."""

    def __init__(self) -> None:
        self.reasons: dict[str, int] = {}
        self.resends = 0

    def retried(self, failure: _Failure) -> None:
        self.reasons[failure.reason] = self.reasons.get(failure.reason, 0) + 1

    def counted(self, sample: Sample) -> Sample:
        if not self.reasons and not self.resends:
            return sample
        return msgspec.structs.replace(sample, retry_reasons=dict(self.reasons), resends=self.resends)


def _fresh_session() -> aiohttp.ClientSession:
    """A session of one new connection, closed after its response: a free re-send must not take another pooled
    connection, which the server may have closed as well."""
    connector = aiohttp.TCPConnector(limit=1, force_close=True)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None))


# --- one attempt -----------------------------------------------------------------------------------------------


@dataclass
class _Response:
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


# The values of Sample.error_kind (documented there, one by one); tests/test_error_kinds.py checks they agree.


@dataclass(frozen=True)
class _Failure:
    """Why one attempt produced no response, and whether another attempt could help."""

    kind: ErrorKind  # what failed, as a closed set: what callers decide on (the label is for people)
    label: str  # what failed, e.g. "HTTP 500", "timeout"; the error message starts with it
    detail: str
    retryable: bool
    retry_after_s: float | None = None  # what the server asked for in Retry-After, if anything
    status: int | None = None  # the HTTP status, for kind "http_status"
    cause: str | None = None  # what failed, more precisely than the label, for counting retries by kind
    # A pooled connection the server had closed before this request: sent again at once, not retried (_attempt).
    stale: bool = False

    @property
    def reason(self) -> str:
        """The kind of failure a retry is counted under: "HTTP 503", "server disconnected", "timeout", ..."""
        return self.cause or self.label


@dataclass
class _Sending:
    """One attempt's connection, as aiohttp's tracing reports it, and whether any of the answer arrived."""

    reused: bool = False  # taken from the pool (set by _mark_reused), rather than opened for this request
    answered: bool = False  # the status line and headers arrived


async def _attempt(
    session: aiohttp.ClientSession, settings: ClientSettings, url: str, headers: dict[str, str], data: bytes
) -> _Response | _Failure:
    started = time.perf_counter()
    sending = _Sending()
    try:
        # asyncio.timeout rather than aiohttp's `total`: it bounds the whole attempt, reading and parsing included.
        async with (
            asyncio.timeout(settings.timeout_s),
            session.post(
                url,
                data=data,
                headers=headers,
                timeout=_request_timeout(settings),
                allow_redirects=False,
                trace_request_ctx=sending,
            ) as resp,
        ):
            sending.answered = True
            if not 200 <= resp.status < 300:
                return _http_failure(resp, await resp.read(), settings.api_key)
            if resp.content_type == "text/event-stream":
                return await _read_stream(resp, started, settings.api_key)
            # Dispatch on what came back, not on what was asked: a server may ignore "stream": true.
            raw = await resp.read()
            return _parse_completion(raw, started, settings.api_key)
    except TimeoutError as exc:
        # Checked first: aiohttp's connect timeout is both a TimeoutError and a ClientError.
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return _Failure(
                "timeout",
                "timeout",
                f"could not connect within {settings.connect_timeout_s:g} s",
                retryable=True,
                cause="connect timeout",
            )
        return _Failure("timeout", "timeout", f"no complete response within {settings.timeout_s:g} s", retryable=True)
    except (aiohttp.ClientError, OSError) as exc:
        refused = isinstance(exc, aiohttp.ClientConnectorError)
        return _Failure(
            "connection",
            "connection failed",
            _describe(exc),
            retryable=not (refused and settings.fail_over),
            cause=_connection_cause(exc),
            stale=_stale(exc, sending, time.perf_counter() - started, settings),
        )


def _stale(exc: BaseException, sending: _Sending, elapsed_s: float, settings: ClientSettings) -> bool:
    """Whether a failed attempt met a kept-alive connection the server had already closed, so that sending the
    request again on a new connection is not a retry.

    That is safe only when all of these hold, and each is checked:
    - the connection came from the pool: a new connection that fails is the server failing, and is retried;
    - not one byte of an answer arrived (no status line): the server had not begun to answer, so at most it read
      the request and dropped it, and a chat request changes nothing on a server but its cache;
    - the connection broke (disconnected, reset, or the request could not be written), rather than timing out;
    - it broke within connect_timeout_s: a closed socket answers within a round trip, while a server that held
      the request longer may have been generating, and sending it again would cost a second generation.
    The caller re-sends at most once per attempt, on a connection that is certainly new.
    """
    if not sending.reused or sending.answered or elapsed_s >= settings.connect_timeout_s:
        return False
    if isinstance(exc, aiohttp.ClientConnectorError):  # connecting failed: nothing was pooled
        return False
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        # aiohttp puts the half-read status line in the message when part of an answer had arrived.
        return isinstance(exc.message, str)
    return isinstance(exc, aiohttp.ClientOSError | ConnectionResetError)


def _connection_cause(exc: BaseException) -> str:
    """A connection failure's kind, as retries are counted: what a user can tell apart and act on."""
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "server disconnected"
    if isinstance(exc, aiohttp.ClientConnectorError):
        refused = isinstance(exc.os_error, ConnectionRefusedError)
        return "connection refused" if refused else "could not connect"
    if isinstance(exc, ConnectionResetError):
        return "connection reset"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "response cut off"
    return "connection failed"


def _request_timeout(settings: ClientSettings) -> aiohttp.ClientTimeout:
    # sock_connect, not connect: `connect` would also count the wait for a free connection in the pool.
    return aiohttp.ClientTimeout(total=None, sock_connect=settings.connect_timeout_s)


def _headers(settings: ClientSettings, *, accept: str) -> dict[str, str]:
    headers = {"Accept": accept}
    if settings.api_key is not None:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    return headers


def _http_failure(resp: aiohttp.ClientResponse, raw: bytes, api_key: str | None) -> _Failure:
    status = resp.status
    detail = _excerpt(raw, api_key)
    if 300 <= status < 400 and "Location" in resp.headers:
        # Redirects are not followed (aiohttp would turn a POST into a GET); say where the server points.
        detail = f"redirected to {_scrub(resp.headers['Location'], api_key)}; {detail}"
    label = f"HTTP {status}"
    # What the status and the body say, by the one table of refusals.py: a refusal is not retried.
    refused = refusal(status, raw.decode("utf-8", errors="replace"))
    if refused is not None:
        return _refused(label, refused, server_message(raw), api_key, status)
    # 408, 429 and 5xx are the server being busy or broken for now; any other status will not change on retry.
    retryable = transient_status(status)
    retry_after = parse_retry_after(resp.headers.get("Retry-After")) if retryable else None
    return _Failure("http_status", label, detail, retryable=retryable, retry_after_s=retry_after, status=status)


def _refused(label: str, refused: Refusal, message: str, api_key: str | None, status: int | None) -> _Failure:
    """An answer that says the request cannot succeed on this server: the server's reason, then what to change."""
    reason = _scrub(_one_line(message), api_key)[:BODY_EXCERPT_CHARS] or "(empty body)"
    if refused.scope == "lane":
        which = "no request of this lane can pass on this server as it runs"
    else:
        which = "this request cannot pass on this server"
    detail = f"{reason}; not retried, {which}: {refused.change}"
    return _Failure(refused.kind, label, detail, retryable=False, status=status)


def _parse_completion(raw: bytes, started: float, api_key: str | None) -> _Response | _Failure:
    """A non-streamed chat completion. A body without choices is malformed: servers under load cut bodies."""
    latency = time.perf_counter() - started
    try:
        doc = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        return _malformed(f"invalid JSON ({exc}): {_excerpt(raw, api_key)}")
    if not isinstance(doc, dict):
        return _malformed(f"not a JSON object: {_excerpt(raw, api_key)}")
    choice = _first_choice(doc.get("choices"))
    if choice is None:
        if doc.get("error"):
            return _error_object_failure(doc["error"], "server error in response body", api_key)
        return _malformed(f"no choices: {_excerpt(raw, api_key)}")
    message = choice.get("message")
    if not isinstance(message, dict):
        return _malformed(f"choices[0] has no message: {_excerpt(raw, api_key)}")
    content = message.get("content")
    reasoning, reasoning_field = _pick_reasoning(message)
    calls = message.get("tool_calls")
    return _Response(
        content=content if isinstance(content, str) else None,
        reasoning=reasoning,
        # Verbatim: the structured calls are what an agent would execute, so they are kept as the server gave them.
        tool_calls=calls if isinstance(calls, list) and calls else None,
        reasoning_field=reasoning_field,
        finish_reason=_str_or_none(choice.get("finish_reason")),
        usage=doc["usage"] if isinstance(doc.get("usage"), dict) else None,
        model=_str_or_none(doc.get("model")),
        response_id=_str_or_none(doc.get("id")),
        latency_s=latency,
    )


async def _read_stream(resp: aiohttp.ClientResponse, started: float, api_key: str | None) -> _Response | _Failure:
    parser = SSEParser()
    acc = _StreamAccumulator(started, api_key)
    try:
        # iter_any rather than line iteration: aiohttp's readline refuses lines longer than its buffer limit,
        # and a server may send a whole long answer in one event.
        async for chunk in resp.content.iter_any():
            for data in parser.feed(chunk):
                failure = acc.handle(data)
                if failure is not None:
                    return failure
                if acc.done:
                    await _drain(resp)
                    return _finished(acc)
        for data in parser.close():
            failure = acc.handle(data)
            if failure is not None:
                return failure
            if acc.done:
                return _finished(acc)
    except (aiohttp.ClientError, OSError):
        # The answer is complete once a finish_reason arrived; losing only the trailing usage chunk and
        # [DONE] is not worth a second generation.
        if acc.finish_reason is not None:
            return acc.response()
        raise
    if acc.finish_reason is None:
        return _Failure(
            "stream_cut",
            "connection dropped",
            "the stream ended without [DONE] and without a finish_reason",
            retryable=True,
        )
    return acc.response()


def _finished(acc: _StreamAccumulator) -> _Response | _Failure:
    """[DONE] arrived. Without a finish_reason the generation did not end: vLLM sends a bare [DONE] when it
    fails before the first token, and older llama.cpp sends [DONE] after an error event. Retry, then error."""
    if acc.finish_reason is None:
        return _Failure(
            "stream_cut",
            "incomplete stream",
            "[DONE] arrived without a finish_reason: the generation did not end",
            retryable=True,
        )
    return acc.response()


async def _drain(resp: aiohttp.ClientResponse) -> None:
    """Read what follows [DONE] (normally just the end of the chunked body) so the connection can be reused.

    A server that keeps the stream open after [DONE] gets a short grace period, then the connection is dropped:
    the answer is complete either way.
    """
    with contextlib.suppress(TimeoutError, aiohttp.ClientError, OSError):
        async with asyncio.timeout(_DRAIN_AFTER_DONE_S):
            async for _ in resp.content.iter_any():
                pass


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
    """The usual shape of a chat completion chunk, for `_StreamAccumulator.handle`'s typed reading."""

    id: str | None = None
    model: str | None = None
    choices: list[_Choice] | None = None
    usage: dict[str, Any] | None = None
    error: Any = None


_CHUNK = msgspec.json.Decoder(_Chunk)


class _StreamAccumulator:
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

    def handle(self, data: str) -> _Failure | None:
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
            # As _pick_reasoning: the first non-empty of the two fields, else the first present.
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

    def _handle_any(self, data: str) -> _Failure | None:
        """An event of any shape, read as a JSON value and checked field by field."""
        try:
            event = msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            excerpt = _one_line(_scrub(data, self._api_key))[:BODY_EXCERPT_CHARS]
            return _malformed(f"invalid JSON in a stream event ({exc}): {excerpt}")
        if not isinstance(event, dict):
            excerpt = _one_line(_scrub(data, self._api_key))[:BODY_EXCERPT_CHARS]
            return _malformed(f"a stream event is not a JSON object: {excerpt}")
        if event.get("error"):
            return _error_object_failure(event["error"], "server error in stream", self._api_key)
        self._model = _str_or_none(event.get("model")) or self._model
        self._response_id = _str_or_none(event.get("id")) or self._response_id
        if isinstance(event.get("usage"), dict):
            # Some servers report running usage on every chunk; the last one is the total.
            self._usage = event["usage"]
        choice = _first_choice(event.get("choices"))
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
            reasoning, name = _pick_reasoning(delta)
            if reasoning is not None:
                if self._reasoning is None:
                    self._reasoning, self._reasoning_field = [], name
                self._reasoning.append(reasoning)
                self._mark_first_token(reasoning)
            if isinstance(delta.get("tool_calls"), list):
                self._mark_first_token(self._tool_calls.add(delta["tool_calls"]))
        finish_reason = _str_or_none(choice.get("finish_reason"))
        if finish_reason is not None:
            self.finish_reason = finish_reason
        return None

    def _mark_first_token(self, piece: str) -> None:
        if piece and self._ttft_s is None:
            self._ttft_s = time.perf_counter() - self._started

    def response(self) -> _Response:
        return _Response(
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


class ToolCallFragments:
    """A streamed answer's `delta.tool_calls`, joined into calls as OpenAI's clients join them: the fragments of
    one call share its `index`; the first carries its id, type and function name, the next ones pieces of
    `function.arguments`, which are concatenated in order. Servers that stray from this are read too:
    - a fragment without an index continues the call opened last, unless it brings a new id, or a new name once
      that call's arguments have begun: then it opens the next call (Gemini-compatible servers send no index);
    - a fragment whose id differs from the one its index holds opens a new call (some gateways send index 0 for
      every call);
    - a name sent whole on every fragment is kept once; a name sent in pieces is joined;
    - arguments sent as an object rather than a string are kept as its JSON text."""

    def __init__(self) -> None:
        self._calls: list[dict[str, Any]] = []
        self._by_index: dict[int, int] = {}  # the stream's index -> position in _calls

    def add(self, fragments: list[Any]) -> str:
        """Take one delta's fragments; return the text they added (for the time to the first token)."""
        added = []
        for fragment in fragments:
            if not isinstance(fragment, dict):
                continue
            call = self._call_for(fragment)
            if isinstance(fragment.get("id"), str) and fragment["id"]:
                call["id"] = fragment["id"]
            if isinstance(fragment.get("type"), str):
                call["type"] = fragment["type"]
            function = fragment.get("function")
            if not isinstance(function, dict):
                continue
            name = function.get("name")
            if isinstance(name, str) and name != call["function"].get("name"):
                call["function"]["name"] = call["function"].get("name", "") + name
                added.append(name)
            arguments = function.get("arguments")
            if isinstance(arguments, dict):
                arguments = json.dumps(arguments)
            if isinstance(arguments, str):
                call["function"]["arguments"] = call["function"].get("arguments", "") + arguments
                added.append(arguments)
        return "".join(added)

    def _call_for(self, fragment: dict[str, Any]) -> dict[str, Any]:
        index = fragment.get("index")
        fresh_id = fragment.get("id") if isinstance(fragment.get("id"), str) and fragment["id"] else None
        function = fragment.get("function") if isinstance(fragment.get("function"), dict) else {}
        if isinstance(index, int) and not isinstance(index, bool):
            held = self._by_index.get(index)
            if held is not None and not (fresh_id and self._calls[held]["id"] not in (None, fresh_id)):
                return self._calls[held]
            self._by_index[index] = len(self._calls)
            return self._open()
        # No index: the last call goes on, unless this fragment starts another one: it brings another id, or a name
        # once the last call's arguments have begun (a call's name comes before its arguments; a piece of a name
        # sent before them is joined to it).
        last = self._calls[-1] if self._calls else None
        if last is None or (fresh_id and last["id"] not in (None, fresh_id)):
            return self._open()
        name = function.get("name")
        current = last["function"]
        if isinstance(name, str) and name and name != current.get("name") and current.get("arguments"):
            return self._open()
        return last

    def _open(self) -> dict[str, Any]:
        call: dict[str, Any] = {"id": None, "type": "function", "function": {}}
        self._calls.append(call)
        return call

    def calls(self) -> list[dict[str, Any]] | None:
        return list(self._calls) or None


# --- small pieces ----------------------------------------------------------------------------------------------


def _first_choice(choices: Any) -> dict[str, Any] | None:
    """The choice with index 0 (a Sample holds one answer; with n > 1 the others are not kept)."""
    if not isinstance(choices, list):
        return None
    candidates = [c for c in choices if isinstance(c, dict)]
    for choice in candidates:
        if choice.get("index", 0) == 0:
            return choice
    return candidates[0] if candidates else None


def _pick_reasoning(obj: dict[str, Any]) -> tuple[str | None, str | None]:
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


def _error_object_failure(error: Any, label: str, api_key: str | None) -> _Failure:
    """An `error` object in a 200 body or mid-stream. Its code decides, as an HTTP status would."""
    if isinstance(error, dict):
        message = error.get("message")
        code = error.get("code")
        text = str(message) if message is not None else msgspec.json.encode(error).decode()
    else:
        code = None
        text = str(error)
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    # The whole object is read, its type too (llama.cpp's "exceed_context_size_error").
    refused = refusal(code if isinstance(code, int) else None, msgspec.json.encode(error).decode())
    if refused is not None:
        return _refused(label, refused, text if code is None else f"{text} (code {code})", api_key, None)
    # Without a usable code, nothing says waiting would help, so the error is recorded at once.
    retryable = isinstance(code, int) and transient_status(code)
    detail = _scrub(_one_line(text), api_key)[:BODY_EXCERPT_CHARS]
    if code is not None:
        detail = f"{detail} (code {code})"
    return _Failure("server_error_event", label, detail, retryable=retryable)


def _malformed(detail: str) -> _Failure:
    return _Failure("malformed", "malformed response body", detail, retryable=True)


def _retry_delay(failure: _Failure, settings: ClientSettings, attempt: int, rng: random.Random | None) -> float:
    """Seconds to wait before attempt `attempt + 1`."""
    if failure.retry_after_s is not None:
        # The server said when; waiting longer than backoff_max_s is never worth it.
        return min(failure.retry_after_s, settings.backoff_max_s)
    return backoff_delay(settings, attempt, rng)


def backoff_delay(settings: ClientSettings, attempt: int, rng: random.Random | None) -> float:
    # Full jitter spreads the retries of many concurrent requests that failed together.
    exponent = min(attempt - 1, _MAX_BACKOFF_EXPONENT)
    cap = min(settings.backoff_max_s, settings.backoff_base_s * 2.0**exponent)
    return (rng or random).uniform(0.0, cap)


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds (integer or, leniently, fractional) or as an HTTP date; None if unusable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _failed(
    task_id: str, attempts: int, request: dict[str, Any], last: _Failure, reason: str, settings: ClientSettings
) -> Sample:
    """The Sample of a request that finally failed: the reason for people, the kind and status for code."""
    return Sample(
        task_id=task_id,
        attempts=attempts,
        error=_scrub(_one_line(reason), settings.api_key),
        error_kind=last.kind,
        error_status=last.status,
        request=request,
    )


def _n_attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


def _describe(exc: BaseException) -> str:
    text = _one_line(str(exc))
    return text or type(exc).__name__


def _excerpt(raw: bytes, api_key: str | None) -> str:
    # Scrubbed before cutting, so that a cut cannot leave half a key behind.
    text = _one_line(_scrub(raw.decode("utf-8", errors="replace"), api_key))
    return text[:BODY_EXCERPT_CHARS] if text else "(empty body)"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
