"""The HTTP client: one chat request to an OpenAI-compatible endpoint in, one Sample out.

Whatever the network or the server does ends in a Sample: the response, kept verbatim, or, once retrying stops,
`error` set to a one-line reason for people, with `error_kind` (and `error_status`) saying what failed for code
to decide on: callers never parse the wording. Only programming errors (a body that is not JSON-serialisable, invalid
settings) raise. Retries are bounded twice, by `max_attempts` and by `retry_budget_s`, so that a dead server
costs a run a known, small amount of time per task. Each retry's reason is counted in the Sample
(`retry_reasons`), so that a run can say why its requests were retried without anyone reading a log.

One failure is not a retry: a kept-alive connection taken from the pool that the server had already closed
(see `transport._stale`). The request is sent once more on a new connection, without spending an attempt, and
counted apart (`resends`).

The API key goes into the Authorization header and nowhere else: every error text and log line passes
through `scrub` (scrub.py) first, because servers do echo keys back in their 401 bodies.

One module a job, each named for it:

| module | one job |
|---|---|
| `settings.py` | `ClientSettings`: the endpoint, the key, the bounds of an attempt and of its retries |
| `chat.py` | `chat_completion`: the body as sent, then its attempts |
| `retries.py` | the attempts of one request, back-off and budget; the Sample that ends it, the watch told of each |
| `transport.py` | the session and one attempt: one POST, its body read within its bounds |
| `stream.py` | a streamed body read as SSE events (sse.py) until [DONE], and whether it was cut |
| `assembly.py` | a JSON body, or the stream's events, into one `Response` |
| `tool_calls.py` | streamed tool-call fragments joined into calls (`ToolCallFragments`) |
| `failures.py` | a failed attempt classified (`Failure`): HTTP status, error object, connection; Retry-After |
| `probe.py` | the GETs asked before a run: `/models`, a server kind's own routes |

This package's public names are re-exported here, so that callers import `ocllm.run.client` alone.
"""

from __future__ import annotations

from ocllm.run.client.assembly import StreamAccumulator
from ocllm.run.client.chat import chat_completion
from ocllm.run.client.failures import BODY_EXCERPT_CHARS, parse_retry_after
from ocllm.run.client.probe import ServerProbe, get_json, list_models, probe_server
from ocllm.run.client.retries import backoff_delay
from ocllm.run.client.settings import ClientSettings
from ocllm.run.client.tool_calls import ToolCallFragments
from ocllm.run.client.transport import make_session

# The watch of a request's attempts is the engine seam's (engine.py); the client tells it as any engine does.
from ocllm.run.engine import AttemptWatch, FailedAttempt

# The name the stream-reading tests knew it by, when it was private to one module.
_StreamAccumulator = StreamAccumulator

__all__ = [
    "BODY_EXCERPT_CHARS", "AttemptWatch", "ClientSettings", "FailedAttempt", "ServerProbe", "ToolCallFragments",
    "backoff_delay", "chat_completion", "get_json", "list_models", "make_session", "parse_retry_after",
    "probe_server",
]  # fmt: skip
