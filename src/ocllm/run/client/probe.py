"""The cheap GETs asked before a run: `/models` (is the server there, what does it serve) and any JSON route a
server kind is told apart by (server_kind.py). They never raise for what the network or the server does."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, NamedTuple

import aiohttp
import msgspec

from ocllm.run.client.failures import body_excerpt, describe
from ocllm.run.client.settings import ClientSettings
from ocllm.run.client.transport import request_headers, request_timeout
from ocllm.run.scrub import scrub as _scrub

# A child of the package's logger, so that whoever listens to `ocllm.run.client` hears the whole client.
log = logging.getLogger(__name__)


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
                headers=request_headers(settings, accept="application/json"),
                timeout=request_timeout(settings),
                allow_redirects=False,
            ) as resp,
        ):
            raw = await resp.read()
            status = resp.status
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        reason = _scrub(describe(exc), settings.api_key)
        log.info("listing models at %s failed: %s", url, reason)
        return ServerProbe(None, reason)
    if not 200 <= status < 300:
        log.info("listing models at %s failed: HTTP %d", url, status)
        return ServerProbe(None, None, status, body_excerpt(raw, settings.api_key))
    try:
        doc = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        log.info("listing models at %s failed: the body is not JSON", url)
        return ServerProbe(None, None, status, "the body is not JSON")
    if isinstance(doc, dict) and doc.get("error") and "data" not in doc:
        # LM Studio answers unknown paths with 200 and {"error": "Unexpected endpoint ..."}.
        return ServerProbe(None, None, status, body_excerpt(msgspec.json.encode(doc["error"]), settings.api_key))
    return ServerProbe(doc if isinstance(doc, dict) else None, None, status)


async def get_json(session: aiohttp.ClientSession, settings: ClientSettings, url: str, timeout_s: float) -> Any:
    """GET `url` once (with the lane's key): its JSON on a 2xx answer, else None, within `timeout_s`. For the
    cheap questions asked before a run (which server is this?): never raises for what the network does."""
    return await _json_answer(session, settings, "GET", url, timeout_s, None)


async def post_json(
    session: aiohttp.ClientSession, settings: ClientSettings, url: str, body: dict[str, Any], timeout_s: float
) -> Any:
    """POST `body` to `url` once, as `get_json` GETs: for a question a server answers only by POST (Ollama's
    /api/show of a model)."""
    return await _json_answer(session, settings, "POST", url, timeout_s, body)


async def _json_answer(
    session: aiohttp.ClientSession,
    settings: ClientSettings,
    method: str,
    url: str,
    timeout_s: float,
    body: dict[str, Any] | None,
) -> Any:
    try:
        async with (
            asyncio.timeout(timeout_s),
            session.request(
                method, url, headers=request_headers(settings, accept="application/json"), allow_redirects=False,
                json=body,
            ) as resp,
        ):  # fmt: skip
            if not 200 <= resp.status < 300:
                return None
            return msgspec.json.decode(await resp.read())
    except (TimeoutError, aiohttp.ClientError, OSError, msgspec.DecodeError):
        return None


async def list_models(session: aiohttp.ClientSession, settings: ClientSettings) -> dict[str, Any] | None:
    """GET {base_url}/models, once. The parsed JSON object, or None for any failure (it is only a probe)."""
    return (await probe_server(session, settings)).models
