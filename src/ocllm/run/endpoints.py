"""Several base URLs behind one lane (vLLM replicas): each request goes to the endpoint with the fewest
requests in flight; an endpoint that refuses connections is rested for a while and its work goes to the
others. Each endpoint's requests, errors and latency are counted for the run's serving figures."""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from typing import Any

import aiohttp
import msgspec

from ocllm.models import Sample
from ocllm.run.client import AttemptWatch, ClientSettings, chat_completion

REST_S = 10.0  # how long an endpoint that refused a connection gets no new requests


class Endpoint:
    def __init__(self, settings: ClientSettings) -> None:
        self.settings = settings
        self.in_flight = 0
        self.requests = 0  # HTTP requests, retries included
        self.errors = 0  # requests that finally failed here
        self.refusals = 0  # times it could not be reached and was rested
        self.rested_until = 0.0
        self.latencies = array("d")

    @property
    def base_url(self) -> str:
        return self.settings.base_url

    def figures(self) -> dict[str, Any]:
        import numpy as np

        latency = np.frombuffer(self.latencies, dtype=float)
        p50, p95 = (float(v) for v in np.percentile(latency, [50, 95])) if len(latency) else (None, None)
        return {
            "base_url": self.base_url,
            "requests": self.requests,
            "errors": self.errors,
            "refusals": self.refusals,
            "latency_p50_s": p50,
            "latency_p95_s": p95,
        }


class Endpoints:
    """The lane's replicas and the choice between them."""

    def __init__(self, settings: list[ClientSettings], clock: Callable[[], float] = time.monotonic) -> None:
        several = len(settings) > 1
        # With one endpoint there is nowhere to fail over to: its own retries are the only ones.
        self.endpoints = [Endpoint(msgspec.structs.replace(s, fail_over=several)) for s in settings]
        self._clock = clock

    def pick(self, exclude: set[int]) -> int:
        """The index of the endpoint to send to: the least busy of those not resting (nor tried already for
        this task); when all are resting, the one whose rest ends first."""
        now = self._clock()
        candidates = [i for i in range(len(self.endpoints)) if i not in exclude] or list(range(len(self.endpoints)))
        awake = [i for i in candidates if self.endpoints[i].rested_until <= now]
        if not awake:
            return min(candidates, key=lambda i: self.endpoints[i].rested_until)
        return min(awake, key=lambda i: (self.endpoints[i].in_flight, self.endpoints[i].requests))

    async def send(
        self,
        session: aiohttp.ClientSession,
        task_id: str,
        body: dict[str, Any],
        watch: Callable[[], AttemptWatch] = AttemptWatch,
    ) -> Sample:
        """One task's request to the least busy endpoint, and to the next when that one cannot be reached;
        `watch()` is told of each request's attempts (client/retries.py)."""
        tried: set[int] = set()
        while True:
            index = self.pick(tried)
            endpoint = self.endpoints[index]
            endpoint.in_flight += 1
            try:
                sample = await chat_completion(session, endpoint.settings, task_id, body, watch=watch())
            finally:
                endpoint.in_flight -= 1
            endpoint.requests += sample.attempts
            # No connection (refused at once, or lost on every attempt): this replica cannot serve it now.
            if sample.error_kind == "connection" and len(self.endpoints) > 1:
                endpoint.refusals += 1
                endpoint.rested_until = self._clock() + REST_S
                tried.add(index)
                if len(tried) < len(self.endpoints):
                    continue  # another replica takes it
            if sample.error is not None:
                endpoint.errors += 1
            elif sample.latency_s is not None:
                endpoint.latencies.append(sample.latency_s)
            sample.endpoint = index
            return sample

    def figures(self) -> list[dict[str, Any]]:
        return [endpoint.figures() for endpoint in self.endpoints]
