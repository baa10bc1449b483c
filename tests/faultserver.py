"""A scriptable HTTP server on 127.0.0.1 for testing the client against real sockets.

Each test scripts a queue of behaviours; every incoming request, whatever its path, takes the next one
(or the `then` behaviour once the queue is empty) and is recorded with its headers, body and arrival time.
Two exceptions keep the queue to the requests a test is about: the paths ocllm asks to tell which kind of
server it talks to (`IDENTITY_PATHS`) answer from `routes` (by default 404, a server of no known kind), and a
request on a connection a `close_after` behaviour left doomed is met by closing it (see `Reply.close_after`).
The server runs its own event loop in a daemon thread, so a test can drive the client with a plain
`asyncio.run` and the server never shares a loop with the code under test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web
from multidict import CIMultiDict


@dataclass(frozen=True)
class Reply:
    """A complete response: `json` encoded as JSON, or else `body` sent byte for byte."""

    status: int = 200
    json: Any = None
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    # The connection is kept alive after this reply, but the next request sent on it is met by closing it before
    # any byte of an answer: a server whose keep-alive ran out just as the client reused the connection.
    close_after: bool = False


@dataclass(frozen=True)
class Pause:
    """Inside a Stream: wait this long before writing the next part."""

    seconds: float


@dataclass(frozen=True)
class Stream:
    """A chunked text/event-stream response. Each part is written and flushed on its own, `gap` seconds
    apart, so that the client receives them as separate network reads. With `abort`, the connection is cut
    after the last part instead of the response being ended properly."""

    parts: Sequence[str | bytes | Pause]
    gap: float = 0.0
    abort: bool = False
    status: int = 200
    content_type: str = "text/event-stream"
    # As Reply.close_after: llama-server closes the connection after every streamed response although its headers
    # announce keep-alive, so a client that pools the connection sends its next request into a closed socket.
    close_after: bool = False


@dataclass(frozen=True)
class Hang:
    """Read the request, then send nothing for `seconds` (or until the server is closed)."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Together:
    """Hold the request until `count` requests have been in the server at once (now or before), then behave as
    `then`: overlap seen as it happens, never guessed from arrival times. After `backstop_s` it goes on anyway (and
    `max_in_flight` tells that the count was never reached)."""

    count: int
    then: Reply | Stream
    backstop_s: float = 120.0


@dataclass(frozen=True)
class Drop:
    """Send the status line and headers promising `content_length` bytes, then `partial`, then cut the connection."""

    partial: bytes = b""
    content_length: int = 10_000
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class Close:
    """Read the request, then close the connection without a byte of an answer."""


Behaviour = Reply | Stream | Hang | Drop | Close | Together
# What ocllm asks a server at the start of a run to tell its kind (server_kind.py): llama.cpp, SGLang, vLLM, Ollama
# (and Ollama's /api/show of the model, its template and num_ctx).
IDENTITY_PATHS = ("/props", "/get_server_info", "/version", "/api/version", "/api/show")
NO_SUCH_PATH = Reply(status=404, body="Not Found", content_type="text/plain")


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it. `at` is time.monotonic() on arrival (same clock in every thread)."""

    method: str
    path: str
    headers: CIMultiDict[str]
    body: bytes
    at: float
    # The connection was closed at once, as a close_after behaviour had doomed it: the request got no answer.
    closed: bool = False
    peer: int = 0  # the client's port: requests of one port came over one connection (at a time)

    def json(self) -> Any:
        return json.loads(self.body)


# How long starting and stopping may take at most: milliseconds on a quiet machine, a bound (never a measure) that
# a loaded one does not reach (tests/helpers.py's BACKSTOP_S; this module stands alone).
_BACKSTOP_S = 120.0

EXHAUSTED = Reply(status=418, body="fault server: no behaviour scripted for this request", content_type="text/plain")


class FaultServer:
    """Use as a context manager; `base_url` ends in /v1 like a real OpenAI-compatible server's."""

    def __init__(self, routes: dict[str, Behaviour] | None = None) -> None:
        """`routes`: fixed answers by path, taken from no queue; the identity paths answer 404 unless given."""
        self._routes: dict[str, Behaviour] = {**dict.fromkeys(IDENTITY_PATHS, NO_SUCH_PATH), **(routes or {})}
        # The connections whose next request is met by closing them (held, not their ids: an id can be reused).
        self._doomed: set[asyncio.BaseTransport] = set()
        self._lock = threading.Lock()
        self._queue: deque[Behaviour] = deque()
        self._then: Behaviour = EXHAUSTED
        self._requests: list[Recorded] = []
        self._routed: list[Recorded] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="faultserver", daemon=True)
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._in_flight = 0  # requests being handled now (only the server's loop touches it)
        self.max_in_flight = 0  # the most requests it was handling at once
        self.port = 0

    # --- lifecycle --------------------------------------------------------------------------------------------

    def start(self) -> FaultServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=_BACKSTOP_S)
        return self

    def close(self) -> None:
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=_BACKSTOP_S)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=_BACKSTOP_S)
        self._loop.close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def _start(self) -> None:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # Hanging handlers end as soon as _closing is set, so a short shutdown_timeout never cuts a real one.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def _stop(self) -> None:
        assert self._closing is not None and self._runner is not None
        self._closing.set()
        await self._runner.cleanup()

    # --- what tests use ---------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *behaviours: Behaviour, then: Behaviour | None = None) -> None:
        """Queue behaviours for the next requests; `then` answers every request after them (default: 418)."""
        with self._lock:
            self._queue.extend(behaviours)
            if then is not None:
                self._then = then

    @property
    def requests(self) -> list[Recorded]:
        """Every request that took a scripted behaviour (or met a doomed connection), in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[Recorded]:
        """The chat completion requests among `requests`, in arrival order."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def routed(self) -> list[Recorded]:
        """The requests answered from `routes` (the identity paths), in arrival order."""
        with self._lock:
            return list(self._routed)

    # --- the handler ------------------------------------------------------------------------------------------

    def _next(self) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else self._then

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            return await self._answer(request)
        finally:
            self._in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        connection = request.transport
        doomed = connection in self._doomed
        self._doomed.discard(connection)
        routed = self._routes.get(request.path) if not doomed else None
        peername = request.transport.get_extra_info("peername") if request.transport is not None else None
        peer = peername[1] if isinstance(peername, tuple) and len(peername) > 1 else 0
        recorded = Recorded(
            request.method, request.path, CIMultiDict(request.headers), body, time.monotonic(), doomed, peer
        )
        with self._lock:
            # Routed requests are kept apart: `requests` holds what the script is about.
            (self._routed if routed is not None else self._requests).append(recorded)
        if doomed:
            _abort(request)
            return web.Response(status=204)  # never sent: the connection is gone
        behaviour = routed or self._next()
        if isinstance(behaviour, Together):
            assert self._closing is not None
            deadline = time.monotonic() + behaviour.backstop_s
            while self.max_in_flight < behaviour.count and time.monotonic() < deadline and not self._closing.is_set():
                await asyncio.sleep(0.01)
            behaviour = behaviour.then
        if isinstance(behaviour, Close):
            _abort(request)
            return web.Response(status=204)
        if isinstance(behaviour, Reply | Stream) and behaviour.close_after and connection is not None:
            self._doomed.add(connection)
        if isinstance(behaviour, Reply):
            return self._reply(behaviour)
        if isinstance(behaviour, Stream):
            return await self._stream(request, behaviour)
        if isinstance(behaviour, Hang):
            await self._wait(behaviour.seconds)
            return web.Response(status=204)
        return await self._drop(request, behaviour)

    async def _wait(self, seconds: float) -> bool:
        """Sleep, but wake up when the server closes (so teardown never waits). True if it is closing."""
        assert self._closing is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)
        return self._closing.is_set()

    @staticmethod
    def _reply(behaviour: Reply) -> web.Response:
        if behaviour.json is not None:
            data = json.dumps(behaviour.json).encode()
        elif isinstance(behaviour.body, str):
            data = behaviour.body.encode()
        else:
            data = behaviour.body
        headers = {"Content-Type": behaviour.content_type, **behaviour.headers}
        return web.Response(status=behaviour.status, body=data, headers=headers)

    async def _stream(self, request: web.Request, behaviour: Stream) -> web.StreamResponse:
        resp = web.StreamResponse(status=behaviour.status, headers={"Content-Type": behaviour.content_type})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for part in behaviour.parts:
            if isinstance(part, Pause):
                if await self._wait(part.seconds):
                    _abort(request)
                    return resp
                continue
            await resp.write(part.encode() if isinstance(part, str) else part)
            if behaviour.gap:
                await asyncio.sleep(behaviour.gap)
        if behaviour.abort:
            _abort(request)
            return resp
        await resp.write_eof()
        return resp

    @staticmethod
    async def _drop(request: web.Request, behaviour: Drop) -> web.StreamResponse:
        resp = web.StreamResponse(status=behaviour.status, headers={"Content-Type": behaviour.content_type})
        resp.content_length = behaviour.content_length
        await resp.prepare(request)
        await resp.write(behaviour.partial)
        _abort(request)
        return resp


def _abort(request: web.Request) -> None:
    # abort() rather than close(): the client must see the connection die, not an orderly end of the body.
    transport = request.transport
    if transport is not None:
        transport.abort()


def models(*names: str) -> Reply:
    """The answer to /models listing these models."""
    return Reply(json={"object": "list", "data": [{"id": n, "object": "model"} for n in names]})


def answer(
    content: str = "FINAL: B", *, model: str = "m", finish_reason: str = "stop", usage: dict[str, int] | None = None,
    **message: Any,
) -> Reply:
    """A chat completion of one choice: `content`, and any other fields of the message; `usage` if given."""
    said = {"role": "assistant", "content": content, **message}
    choice = {"index": 0, "message": said, "finish_reason": finish_reason}
    body = {"id": "x", "object": "chat.completion", "model": model, "choices": [choice]}
    return Reply(json=body if usage is None else {**body, "usage": usage})


def sse(*events: Any, done: bool = True, line_end: str = "\n") -> str:
    """An event stream carrying each event as one `data:` line (dicts as JSON), then `data: [DONE]`."""
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}{line_end}{line_end}" for e in events]
    if done:
        lines.append(f"data: [DONE]{line_end}{line_end}")
    return "".join(lines)


def split_bytes(text: str | bytes, size: int) -> list[bytes]:
    """`text` as UTF-8 cut into pieces of `size` bytes, wherever that falls (mid-line, mid-character)."""
    data = text.encode() if isinstance(text, str) else text
    return [data[i : i + size] for i in range(0, len(data), size)]
