"""The ocllm SIMULATOR's HTTP side: an aiohttp server that answers like vLLM with a reasoning parser.

It runs no model. It exists so that the demo and the tests have a real OpenAI-compatible server to
talk to; every response says so (`system_fingerprint`, `owned_by`, the `x-ocllm-simulator` header).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from aiohttp import web

from ocllm.sim.config import MAX_MODEL_LEN, SIM_HEADER, SIM_LABEL, SimConfig
from ocllm.sim.requests import RequestError, error_body, parse_request
from ocllm.sim.responses import completion_body, stream_chunks
from ocllm.sim.simulator import Simulator

log = logging.getLogger("ocllm.sim")

_SIMULATOR = web.AppKey("ocllm_simulator", Simulator)
_ERROR_TYPES = {
    400: "BadRequestError",
    404: "NotFoundError",
    405: "MethodNotAllowedError",
    413: "RequestEntityTooLargeError",
    500: "InternalServerError",
}
# Long-context prompts exceed aiohttp's 1 MiB default body limit; a 32k-token prompt is far below this.
_MAX_BODY = 64 * 1024 * 1024
# Hundreds of clients connect at once when a run starts; the default listen backlog (128) would drop some.
_BACKLOG = 2048
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def create_app(config: SimConfig) -> web.Application:
    """The simulator as an aiohttp application. Reads the suites now, so a bad suite fails here."""
    app = web.Application(middlewares=[_openai_errors], client_max_size=_MAX_BODY)
    app[_SIMULATOR] = Simulator(config)
    app.router.add_get("/v1/models", _list_models)
    app.router.add_post("/v1/chat/completions", _chat_completions)
    app.router.add_get("/health", _health)  # vLLM's liveness probe; a runner may wait on it
    if config.mimic is not None:
        path, body = _IDENTITY_ROUTES[config.mimic]

        async def identity(request: web.Request) -> web.Response:
            return _json(body)

        app.router.add_get(path, identity)
    app.on_response_prepare.append(_label_response)
    return app


# What each kind answers at the route that marks it, cut to the fields that tell (ocllm/server_kind.py).
_IDENTITY_ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "llama.cpp": ("/props", {"default_generation_settings": {"n_ctx": MAX_MODEL_LEN}, "build_info": SIM_LABEL}),
    "sglang": ("/get_server_info", {"model_path": SIM_LABEL, "version": SIM_LABEL}),
    "vllm": ("/version", {"version": SIM_LABEL}),
    "ollama": ("/api/version", {"version": SIM_LABEL}),
}



def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(data, ensure_ascii=False).encode("utf-8"),
        status=status,
        content_type="application/json",
    )


@web.middleware
async def _openai_errors(request: web.Request, handler: _Handler) -> web.StreamResponse:
    """Every error, including aiohttp's own 404/405/413, as an OpenAI-style JSON body."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        kind = _ERROR_TYPES.get(exc.status, "BadRequestError" if exc.status < 500 else "InternalServerError")
        return _json(error_body(exc.status, kind, exc.reason), exc.status)
    except RequestError as exc:
        return _json(error_body(exc.status, exc.error_type, exc.message), exc.status)
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception:
        log.exception("simulator: unexpected error on %s %s", request.method, request.path)
        return _json(error_body(500, "InternalServerError", "internal error in the ocllm simulator"), 500)


async def _label_response(request: web.Request, response: web.StreamResponse) -> None:
    response.headers[SIM_HEADER] = "1"


async def _health(request: web.Request) -> web.Response:
    return web.Response(status=200)


async def _list_models(request: web.Request) -> web.Response:
    simulator = request.app[_SIMULATOR]
    data = [
        {"id": name, "object": "model", "owned_by": SIM_LABEL, "max_model_len": MAX_MODEL_LEN}
        for name in simulator.config.models
    ]
    return _json({"object": "list", "data": data})


async def _chat_completions(request: web.Request) -> web.StreamResponse:
    simulator = request.app[_SIMULATOR]
    raw = await request.read()
    try:
        body = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        raise RequestError(400, "BadRequestError", f"the request body is not valid JSON ({exc})") from None
    chat = parse_request(body, simulator.config.models)
    completion = simulator.complete(chat)
    created = int(time.time())
    field = simulator.config.reasoning_field
    latency = simulator.config.latency_s
    if not chat.stream:
        if latency > 0:
            await asyncio.sleep(latency)
        return _json(completion_body(completion, created=created, reasoning_field=field))

    chunks = stream_chunks(completion, created=created, reasoning_field=field, include_usage=chat.include_usage)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    # Time to first token is about a third of the latency; the rest is spread over the remaining chunks.
    first_delay = latency / 3
    step = (latency - first_delay) / max(1, len(chunks) - 1)
    try:
        await response.prepare(request)
        for number, chunk in enumerate(chunks):
            delay = first_delay if number == 0 else step
            if delay > 0:
                await asyncio.sleep(delay)
            await response.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
    except ConnectionResetError:
        # The client went away mid-stream (a cancelled run); nothing is left to send it.
        pass
    return response


def _base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


class SimServer:
    """Runs the simulator on a background thread with its own event loop, for tests and the demo.

    with SimServer(SimConfig()) as server:
        ...  # talk to server.base_url, e.g. "http://127.0.0.1:54321/v1"
    """

    def __init__(self, config: SimConfig, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config
        self.host = host
        self.port = port  # 0 asks the OS for a free port; the bound one is here after __enter__
        self.base_url = ""
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    def __enter__(self) -> SimServer:
        if self._thread is not None:
            raise RuntimeError("this SimServer is already running")
        # Built here, on the caller's thread, so that a bad suite raises in the caller.
        app = create_app(self.config)
        self._ready.clear()
        self._failure = None
        self._thread = threading.Thread(target=self._run, args=(app,), name="ocllm-simulator", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            self._thread.join()
            self._thread = None
            raise self._failure
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._thread is None:
            return
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()
        self._thread = None
        self._loop = None
        self._stop = None

    def _run(self, app: web.Application) -> None:
        try:
            asyncio.run(self._main(app))
        except BaseException as exc:  # reported to __enter__ if it happened before the server was up
            if self._ready.is_set():
                log.exception("simulator: the server thread failed")
            else:
                self._failure = exc
        finally:
            self._ready.set()

    async def _main(self, app: web.Application) -> None:
        # A short shutdown timeout: a test leaving a slow stream open must not hold __exit__ for a minute.
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port, backlog=_BACKLOG)
            await site.start()
            self.port = runner.addresses[0][1]
            self.base_url = _base_url(self.host, self.port)
            self._stop = asyncio.Event()
            self._loop = asyncio.get_running_loop()
            self._ready.set()
            await self._stop.wait()
        finally:
            await runner.cleanup()


def serve(
    config: SimConfig,
    host: str,
    port: int,
    *,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Run the simulator until Ctrl-C (or SIGTERM), for `ocllm serve-sim`.

    `on_ready` receives the base URL once the port is bound; by default one line is printed.
    """
    app = create_app(config)

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        try:
            site = web.TCPSite(runner, host, port, backlog=_BACKLOG)
            await site.start()
            stop = asyncio.Event()
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                # SIGTERM (from a supervisor, or `kill`) stops as cleanly as Ctrl-C does.
                asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            base_url = _base_url(host, runner.addresses[0][1])
            if on_ready is not None:
                on_ready(base_url)
            else:
                models = ", ".join(config.models)
                print(
                    f"ocllm simulator (simulated answers, no real model) at {base_url}; "
                    f"models: {models}. Ctrl-C stops it.",
                    flush=True,
                )
            await stop.wait()
        finally:
            await runner.cleanup()

    # asyncio.run cancels main() on Ctrl-C, so the finally above closes the port before we return.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
