"""Why an attempt gave no usable answer, classified: its kind (what callers decide on), a one-line reason for
people, and whether another attempt could help. What a refusal is comes from the one table of refusals.py; this
module applies it to an HTTP status, an `error` object in a body or a stream, and a broken connection.

Every text taken from the server is scrubbed of the API key (scrub.py) before it is cut to length, so that a cut
cannot leave half a key behind.
"""

from __future__ import annotations

import email.utils
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
import msgspec

from ocllm.models import ErrorKind
from ocllm.retry_rule import CONTEXT_REFUSED, transient_status
from ocllm.run.refusals import Refusal, refusal, server_message
from ocllm.run.scrub import scrub as _scrub

# How much of a response body an error message quotes: enough to read a server's reason, short enough for one line.
BODY_EXCERPT_CHARS = 200


# The values of Sample.error_kind (documented there, one by one); tests/test_error_kinds.py checks they agree.


@dataclass(frozen=True)
class Failure:
    """Why one attempt produced no response, and whether another attempt could help."""

    kind: ErrorKind  # what failed, as a closed set: what callers decide on (the label is for people)
    label: str  # what failed, e.g. "HTTP 500", "timeout"; the error message starts with it
    detail: str
    retryable: bool
    retry_after_s: float | None = None  # what the server asked for in Retry-After, if anything
    status: int | None = None  # the HTTP status, for kind "http_status"
    cause: str | None = None  # what failed, more precisely than the label, for counting retries by kind
    # A pooled connection the server had closed before this request: sent again at once, not retried (send_once).
    stale: bool = False

    @property
    def reason(self) -> str:
        """The kind of failure a retry is counted under: "HTTP 503", "server disconnected", "timeout", ..."""
        return self.cause or self.label


def http_failure(resp: aiohttp.ClientResponse, raw: bytes, api_key: str | None) -> Failure:
    status = resp.status
    detail = body_excerpt(raw, api_key)
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
    return Failure("http_status", label, detail, retryable=retryable, retry_after_s=retry_after, status=status)


def _refused(label: str, refused: Refusal, message: str, api_key: str | None, status: int | None) -> Failure:
    """An answer that says the request cannot succeed on this server: the server's reason, then what to change."""
    reason = _scrub(one_line(message), api_key)[:BODY_EXCERPT_CHARS] or "(empty body)"
    if refused.scope == "lane":
        which = "no request of this lane can pass on this server as it runs"
    elif refused.context:
        which = CONTEXT_REFUSED  # the words the summary counts this refusal by (retry_rule.refused_for_context)
    else:
        which = "this request cannot pass on this server"
    detail = f"{reason}; not retried, {which}: {refused.change}"
    return Failure(refused.kind, label, detail, retryable=False, status=status)


def error_object_failure(error: Any, label: str, api_key: str | None) -> Failure:
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
    detail = _scrub(one_line(text), api_key)[:BODY_EXCERPT_CHARS]
    if code is not None:
        detail = f"{detail} (code {code})"
    return Failure("server_error_event", label, detail, retryable=retryable)


def malformed(detail: str) -> Failure:
    return Failure("malformed", "malformed response body", detail, retryable=True)


def connection_cause(exc: BaseException) -> str:
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


def describe(exc: BaseException) -> str:
    text = one_line(str(exc))
    return text or type(exc).__name__


def body_excerpt(raw: bytes, api_key: str | None) -> str:
    # Scrubbed before cutting, so that a cut cannot leave half a key behind.
    text = one_line(_scrub(raw.decode("utf-8", errors="replace"), api_key))
    return text[:BODY_EXCERPT_CHARS] if text else "(empty body)"


def one_line(text: str) -> str:
    return " ".join(text.split())
