"""The OpenAI-compatible HTTP client as an engine (engine.py): a lane's endpoints (one, or replicas that share its
requests: endpoints.py), checked and identified before the run, then one aiohttp session for all its requests.

Before anything is written, each endpoint is asked what it serves (`_check_server`: /models, and when that cannot
settle it one tiny chat request) and what software it is (server_kind.py), which decides the request fields added
so that identical runs repeat (`repeat_settings`) and whether streamed requests may reuse a connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import msgspec

from ocllm.errors import InputError, OcllmError
from ocllm.model_names import same_model, unlisted_model_notice
from ocllm.models import Sample
from ocllm.retry_rule import transient_status
from ocllm.run.client import AttemptWatch, ClientSettings, ServerProbe, chat_completion, make_session, probe_server
from ocllm.run.endpoints import Endpoints
from ocllm.run.engine import EngineStart, Send
from ocllm.run.lanes import Lane
from ocllm.run.server_kind import ServerIdentity, closes_streamed_connections, identify, repeatability


class HttpEngine:
    """One lane's requests to its OpenAI-compatible endpoints. Raises InputError for a base URL it cannot use and
    OcllmError for an API key the lane names but the environment lacks, when it is made."""

    def __init__(self, lane: Lane) -> None:
        self._lane = lane
        self._replicas = endpoint_settings(lane)
        # Several base URLs share the requests; one is asked directly.
        self._endpoints = Endpoints(self._replicas) if len(self._replicas) > 1 else None
        self._identities: list[ServerIdentity] = []

    async def check(self) -> EngineStart:
        """Every endpoint asked whether the lane's requests can pass, then what answers there."""
        lane, replicas = self._lane, self._replicas
        probe, served, before = await _check_server(lane, replicas[0])
        listed = [probe.models]
        for other in replicas[1:]:  # every replica must serve the model
            other_probe, _, more = await _check_server(lane, other)
            listed.append(other_probe.models)
            before += [notice for notice in more if notice not in before]
        self._identities = await _identify_servers(replicas, listed, lane.model)
        added, said = repeat_settings(lane, self._identities)
        return EngineStart(probe.models, served, self._identities, added, before + said)

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Send]:
        lane, endpoints = self._lane, self._endpoints
        # Streamed requests to llama-server get a connection each: it closes the connection after every streamed
        # response (measured, docs/lanes.md), so a pooled one would be dead when the next request takes it. Other
        # servers keep theirs: a new connection per request cost 20-25 ms of time to first token at p95 under load.
        one_each = lane.stream and any(closes_streamed_connections(identity.kind) for identity in self._identities)
        async with make_session(lane.concurrency, reuse_connections=not one_each) as session:
            settings = self._replicas[0]

            async def send(task_id: str, body: dict[str, Any], watch: Callable[[], AttemptWatch]) -> Sample:
                if endpoints is not None:
                    return await endpoints.send(session, task_id, body, watch)
                return await chat_completion(session, settings, task_id, body, watch=watch())

            yield send

    def figures(self) -> list[dict[str, Any]] | None:
        """Each replica's requests, errors and latency (this invocation's); None for a lane of one endpoint."""
        return self._endpoints.figures() if self._endpoints is not None else None


async def _identify_servers(
    replicas: list[ClientSettings], listed: list[dict[str, Any] | None], model: str
) -> list[ServerIdentity]:
    """What answers at each endpoint (server_kind.py), with the /models answer each gave."""
    async with make_session(1) as session:
        return [
            await identify(session, settings, models, model)
            for settings, models in zip(replicas, listed, strict=True)
        ]


def repeat_settings(lane: Lane, identities: list[ServerIdentity]) -> tuple[dict[str, Any], list[str]]:
    """The request fields to add so that identical runs of `lane` repeat on these servers, and what the user must
    be told: why a run may not repeat even so, or that the lane turned a setting off and what that costs."""
    kinds = list(dict.fromkeys(identity.kind for identity in identities))
    if len(kinds) > 1:
        return {}, [
            f"the lane's endpoints are servers of different kinds ({', '.join(kinds)}): no request settings for "
            "repeatable runs are added, and identical runs may differ"
        ]
    kind = kinds[0]
    needed, caveat = repeatability(kind, lane.concurrency)
    said = [f"{kind} server: {caveat}"] if caveat else []
    added: dict[str, Any] = {}
    for key, value in needed.items():
        if lane.repeatable and key not in lane.extra_body and key not in lane.omit_fields:
            added[key] = value
            continue
        if lane.extra_body.get(key) == value:
            continue  # the lane asks for it itself
        why = (
            "repeatable = false" if not lane.repeatable
            else "omit_fields" if key in lane.omit_fields
            else f"extra_body sets {key} = {json_value(lane.extra_body[key])}"
        )  # fmt: skip
        said.append(
            f"{key} is not sent as {json_value(value)} ({why}): {kind} reuses its prompt cache, which is faster on "
            "shared prefixes, but an answer then depends on the requests before it, so identical runs may differ"
        )
    return added, said



def json_value(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def client_settings(lane: Lane) -> ClientSettings:
    """How the lane's requests are sent (the API key read from the variable the lane names), to its first
    endpoint."""
    return endpoint_settings(lane)[0]


def endpoint_settings(lane: Lane) -> list[ClientSettings]:
    """The same, for each of the lane's endpoints."""
    key = _api_key(lane)
    try:
        return [
            ClientSettings(
                base_url=url,
                api_key=key,
                stream=lane.stream,
                timeout_s=lane.timeout_s,
                max_attempts=lane.max_attempts,
                retry_budget_s=lane.retry_budget_s,
                omit_fields=tuple(lane.omit_fields),
            )
            for url in lane.base_urls()
        ]
    except ValueError as exc:
        raise InputError(f"lane {lane.name!r}: {exc}") from None



# A server still loading answers 503 for a while: the probe waits a little before refusing.
_NOT_READY_RETRIES = 3
_NOT_READY_WAIT_S = 2.0


async def _check_server(lane: Lane, settings: ClientSettings) -> tuple[ServerProbe, str | None, list[str]]:
    """Refuse at once what would make every request fail. Returns the /models answer, the model name
    the server answered a trial request with (None when none was needed), and notices for what only might.

    /models is asked first. When it cannot settle the question (the model is not listed, the server
    lists one model under another name, or /models itself fails), one tiny chat request decides: what
    the server accepts is accepted, whatever it lists (llama-swap aliases, routers, single-model servers)."""
    where = f"lane {lane.name!r}: {settings.base_url}"
    async with make_session(1) as session:
        probe = await probe_server(session, settings)
        for _ in range(_NOT_READY_RETRIES):
            if probe.status != 503:
                break
            await asyncio.sleep(_NOT_READY_WAIT_S)
            probe = await probe_server(session, settings)
        if probe.unreachable is not None:
            raise OcllmError(f"{where}: cannot reach the server: {probe.unreachable}")
        if probe.status == 503:
            raise OcllmError(
                f"{where}: the server is not ready (HTTP 503: {probe.problem}); try again once it has loaded"
            )
        if probe.status in (401, 403):
            raise OcllmError(f"{where}: the server refused the credentials (HTTP {probe.status}); check api_key_env")
        served = [str(m.get("id")) for m in (probe.models or {}).get("data") or [] if isinstance(m, dict)]
        if probe.problem is None and (not served or any(same_model(lane.model, name) for name in served)):
            return probe, None, []
        trial = await _try_one_request(session, settings, lane)
    failure = trial.error
    if trial.error_kind == "http_status" and trial.error_status == 429:
        # Still rate-limited after waiting as asked: says nothing against the model name or the request.
        raise OcllmError(
            f"{where}: the server is rate-limiting requests ({failure}); try again later or lower concurrency"
        )
    # Only the request refused (a refusal, or another 4xx) or no connection at all means every request would fail.
    status = trial.error_status or 0
    refused = trial.error_kind in ("connection", "refused", "misconfigured") or (
        trial.error_kind == "http_status" and 400 <= status < 500 and not transient_status(status)
    )
    if not refused:
        if failure is not None:  # a server error on one request proves nothing about the model name
            return probe, None, [f"a first request failed ({failure}); the run goes on and records what fails"]
        if probe.problem is not None:
            return (
                probe,
                trial.model,
                [f"{settings.base_url}/models answered with an error ({probe.problem}); requests work"],
            )
        return probe, trial.model, [unlisted_model_notice(lane.model, served, trial.model)]
    if probe.problem is not None and not settings.base_url.endswith("/v1"):
        raise OcllmError(f"{where}: requests fail ({failure}); is '/v1' missing from the base URL?")
    listed = f" (served: {', '.join(served)})" if served else ""
    raise OcllmError(f"{where}: a request for model {lane.model!r} fails{listed}: {failure}")


async def _try_one_request(session: aiohttp.ClientSession, settings: ClientSettings, lane: Lane) -> Sample:
    """One chat request of one token: its sample says whether the server answered, and as which model."""
    # Retried as any request is (a 429 waits as Retry-After asks), but within a few attempts and seconds:
    # it only decides whether the run may start.
    trial = msgspec.structs.replace(
        settings,
        max_attempts=min(settings.max_attempts, 3),
        retry_budget_s=min(settings.retry_budget_s, 30.0),
        stream=False,
    )
    body = {"model": lane.model, "messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 1}
    return await chat_completion(session, trial, "probe", body)


def _api_key(lane: Lane) -> str | None:
    if lane.api_key_env is None:
        return None
    key = os.environ.get(lane.api_key_env)
    if not key:
        raise OcllmError(f"lane {lane.name!r}: environment variable {lane.api_key_env} (api_key_env) is not set")
    if any(ch in key for ch in "\r\n\0"):
        # Refused before any request: a header cannot hold it, and the key itself is never printed.
        raise OcllmError(f"lane {lane.name!r}: environment variable {lane.api_key_env} holds a line break")
    return key
