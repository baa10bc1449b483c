"""The engine seam: what sends a lane's requests to a model and gives each one back as a Sample.

The runner knows an engine only through `Engine` below; the OpenAI-compatible HTTP client (`http_engine.py`) is
its one implementation so far. Another engine (an in-process vLLM `LLM`, a batch API, a cluster's queue) is one
class with these three methods and one branch in `engines.engine_for`; the runner, the run directory, the decisions
and the reports do not change (tests/test_engine.py runs a lane end to end through an engine defined there).

An engine's life in one run (`runner._run`):
1. `check()`, once, before anything is written: raise `OcllmError` for what would make every request fail (no
   server, a model it does not serve, credentials refused); else say what answered, what the manifest records,
   the request fields every request gets so that identical runs repeat, and what the user must know first.
2. `open()`, once, around all the requests: an async context manager whose value is the `Send` function. What an
   engine holds while it runs (connections, a loaded model, a batch) is made on entry and given back on exit,
   an error or Ctrl-C included.
3. `send(task_id, body, watch)`, once per job, up to the lane's `concurrency` at a time on one event loop.
   `body` is the request the lane builds for the task (prompting.py): the OpenAI chat-completions body, with
   `model`, `messages`, the sampling settings, `tools` and the lane's `extra_body` fields; an engine reads what
   it can use from it and keeps the body it actually sent in `Sample.request`. It returns a Sample and never
   raises for what the model or its server does: a request that finally failed is a Sample with `error`,
   `error_kind` (and `error_status`) set, as models.Sample documents them (errors are data: DESIGN.md). The
   engine's own retries are counted in the Sample (`attempts`, `retry_reasons`, `resends`).
   `watch()` gives a new `AttemptWatch` for each request the engine makes (an engine that makes one request per
   job calls it once): the run counts its requests and shows timeouts and retries as they happen through it, so
   an engine tells it of each attempt sent (`sent`), failed (`failed`) and of the request's end (`ended`).
4. `figures()`, after the requests: per-endpoint serving figures for the manifest, or None.

A lane chooses its engine in one place, `engines.engine_for`; `runner.run_lane` takes any other `Engine` as well.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from ocllm.models import ErrorKind, Sample

if TYPE_CHECKING:  # only named in annotations: server_kind imports the client, which imports this module
    from ocllm.run.server_kind import ServerIdentity


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


class EngineStart(NamedTuple):
    """What an engine found before the run: the manifest records it, the user is told `notices` first."""

    models: dict[str, Any] | None  # what the engine says it serves (an HTTP server's /models answer), for the manifest
    served_model: str | None  # the name the model answered as, when a trial request was needed to know; else None
    servers: list[ServerIdentity]  # what answers at each endpoint (empty: no server, e.g. an in-process engine)
    request_settings: dict[str, Any]  # fields added to every request's body so that identical runs repeat
    notices: list[str]  # what the user must know before waiting for the run


# One request: (task_id, body, watch) -> its Sample.
Send = Callable[[str, dict[str, Any], Callable[[], AttemptWatch]], Awaitable[Sample]]


@runtime_checkable  # so that a test, or a factory, can check that a class is one
class Engine(Protocol):
    """What sends one request and returns a Sample, for one lane (see the module's docstring for its life)."""

    async def check(self) -> EngineStart:
        """Before anything is written: raise OcllmError when no request could succeed, else what answered."""
        ...

    def open(self) -> AbstractAsyncContextManager[Send]:
        """Around all the requests of the run: what sends them, valid until the context ends."""
        ...

    def figures(self) -> list[dict[str, Any]] | None:
        """After the requests: each endpoint's serving figures (requests, errors, latency), or None."""
        ...
