"""One chat request to an OpenAI-compatible endpoint in, one Sample out: the body as it is sent (stream options,
omitted fields), then its attempts (retries.py)."""

from __future__ import annotations

import random
from typing import Any

import aiohttp
import msgspec

from ocllm.models import Sample
from ocllm.run.client.retries import send_with_retries
from ocllm.run.client.settings import ClientSettings
from ocllm.run.client.transport import request_headers
from ocllm.run.engine import AttemptWatch


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
    headers = request_headers(settings, accept="text/event-stream" if settings.stream else "application/json")
    headers["Content-Type"] = "application/json"

    watch = watch or AttemptWatch()
    try:
        return await send_with_retries(session, settings, task_id, (url, headers, data), sent, rng, watch)
    finally:
        watch.ended()
