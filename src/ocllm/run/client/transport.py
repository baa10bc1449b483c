"""HTTP transport: the session and its connections, and one attempt: one POST, its body read within the
attempt's bounds (timeout_s for all of it, connect_timeout_s for the connection), whatever happens ending in a
`Response` or a classified `Failure` (failures.py). Retrying is not done here (retries.py).

One failure is marked apart: a kept-alive connection taken from the pool that the server had already closed
(`_stale`), which the retry loop sends again on a new connection without spending an attempt.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from ocllm.run.client.assembly import Response, parse_completion
from ocllm.run.client.failures import Failure, connection_cause, describe, http_failure
from ocllm.run.client.settings import ClientSettings
from ocllm.run.client.stream import read_stream


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


def fresh_session() -> aiohttp.ClientSession:
    """A session of one new connection, closed after its response: a free re-send must not take another pooled
    connection, which the server may have closed as well."""
    connector = aiohttp.TCPConnector(limit=1, force_close=True)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None))


@dataclass
class _Sending:
    """One attempt's connection, as aiohttp's tracing reports it, and whether any of the answer arrived."""

    reused: bool = False  # taken from the pool (set by _mark_reused), rather than opened for this request
    answered: bool = False  # the status line and headers arrived


async def send_once(
    session: aiohttp.ClientSession, settings: ClientSettings, url: str, headers: dict[str, str], data: bytes
) -> Response | Failure:
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
                timeout=request_timeout(settings),
                allow_redirects=False,
                trace_request_ctx=sending,
            ) as resp,
        ):
            sending.answered = True
            if not 200 <= resp.status < 300:
                return http_failure(resp, await resp.read(), settings.api_key)
            if resp.content_type == "text/event-stream":
                return await read_stream(resp, started, settings.api_key)
            # Dispatch on what came back, not on what was asked: a server may ignore "stream": true.
            raw = await resp.read()
            return parse_completion(raw, started, settings.api_key)
    except TimeoutError as exc:
        # Checked first: aiohttp's connect timeout is both a TimeoutError and a ClientError.
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return Failure(
                "timeout",
                "timeout",
                f"could not connect within {settings.connect_timeout_s:g} s",
                retryable=True,
                cause="connect timeout",
            )
        return Failure("timeout", "timeout", f"no complete response within {settings.timeout_s:g} s", retryable=True)
    except (aiohttp.ClientError, OSError) as exc:
        refused = isinstance(exc, aiohttp.ClientConnectorError)
        return Failure(
            "connection",
            "connection failed",
            describe(exc),
            retryable=not (refused and settings.fail_over),
            cause=connection_cause(exc),
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


def request_timeout(settings: ClientSettings) -> aiohttp.ClientTimeout:
    # sock_connect, not connect: `connect` would also count the wait for a free connection in the pool.
    return aiohttp.ClientTimeout(total=None, sock_connect=settings.connect_timeout_s)


def request_headers(settings: ClientSettings, *, accept: str) -> dict[str, str]:
    headers = {"Accept": accept}
    if settings.api_key is not None:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    return headers
