"""Retries and back-off: one request's attempts (transport.py) until one answers, one fails in a way that waiting
cannot mend, `max_attempts` are spent, or the next could only start past `retry_budget_s`; the Sample that
ends it, with the reasons of its retries and its free re-sends counted, and the watch told of each attempt.

A failed attempt is waited on with full jitter, or as long as the server asked in Retry-After (at most
backoff_max_s). A kept-alive connection that the server had already closed is sent again at once on a new
connection, counted apart (`resends`) and not as a retry.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any

import aiohttp
import msgspec

from ocllm.models import Sample
from ocllm.run.client.assembly import Response
from ocllm.run.client.failures import Failure, one_line
from ocllm.run.client.settings import ClientSettings
from ocllm.run.client.transport import fresh_session, send_once
from ocllm.run.engine import AttemptWatch, FailedAttempt
from ocllm.run.scrub import scrub as _scrub

# A child of the package's logger, so that whoever listens to `ocllm.run.client` hears the whole client.
log = logging.getLogger(__name__)

# Exponents beyond this would overflow a float; the cap (backoff_max_s) has long been reached by then.
_MAX_BACKOFF_EXPONENT = 60


async def send_with_retries(
    session: aiohttp.ClientSession,
    settings: ClientSettings,
    task_id: str,
    target: tuple[str, dict[str, str], bytes],
    sent: dict[str, Any],
    rng: random.Random | None,
    watch: AttemptWatch,
) -> Sample:
    url, headers, data = target
    first_start = time.monotonic()
    attempt = 0
    tally = _Tally()
    while True:
        attempt += 1
        watch.sent(attempt)
        outcome = await send_once(session, settings, url, headers, data)
        if isinstance(outcome, Failure) and outcome.stale:
            # At most once per attempt, and on a connection that cannot be a pooled one: should the new
            # connection fail too, that failure is the attempt's, retried or recorded as any other.
            tally.resends += 1
            watch.resent()
            log.info("task %s: the server had closed the kept-alive connection; sending again on a new one", task_id)
            async with fresh_session() as fresh:
                outcome = await send_once(fresh, settings, url, headers, data)
        if isinstance(outcome, Response) and outcome.finish_reason == "abort":
            # SGLang ends a generation it aborted with finish_reason "abort" and partial text: not an answer.
            outcome = Failure(
                "aborted", "aborted", "the server aborted the generation (finish_reason abort)", retryable=True
            )
        if isinstance(outcome, Response):
            return tally.counted(outcome.to_sample(task_id, attempts=attempt, request=sent))

        if not outcome.retryable:
            watch.failed(_failed_attempt(outcome, attempt, settings, retrying=False))
            reason = f"{outcome.label}: {outcome.detail}"
            return tally.counted(_failed(task_id, attempt, sent, outcome, reason, settings))
        tried = _n_attempts(attempt)
        if attempt >= settings.max_attempts:
            watch.failed(_failed_attempt(outcome, attempt, settings, retrying=False))
            reason = f"{outcome.label} after {tried}: {outcome.detail}"
            return tally.counted(_failed(task_id, attempt, sent, outcome, reason, settings))
        delay = _retry_delay(outcome, settings, attempt, rng)
        # A retry that could only start past the budget is not made: sleeping first would just waste the time.
        if time.monotonic() - first_start + delay >= settings.retry_budget_s:
            watch.failed(_failed_attempt(outcome, attempt, settings, retrying=False))
            spent = f"retry budget of {settings.retry_budget_s:g} s spent"
            reason = f"{outcome.label} after {tried} ({spent}): {outcome.detail}"
            return tally.counted(_failed(task_id, attempt, sent, outcome, reason, settings))
        tally.retried(outcome)
        watch.failed(_failed_attempt(outcome, attempt, settings, retrying=True))
        # INFO, not WARNING: with no logging configured, Python prints warnings over the progress display.
        log.info(
            "task %s: attempt %d of %d failed (%s); retrying in %.2f s",
            task_id,
            attempt,
            settings.max_attempts,
            _scrub(f"{outcome.label}: {outcome.detail}", settings.api_key),
            delay,
        )
        await asyncio.sleep(delay)


def _failed_attempt(failure: Failure, attempt: int, settings: ClientSettings, *, retrying: bool) -> FailedAttempt:
    # Only a timeout of the whole attempt passed timeout_s; a connect timeout passed connect_timeout_s.
    timeout_s = settings.timeout_s if failure.kind == "timeout" and failure.cause is None else None
    return FailedAttempt(failure.reason, failure.kind, attempt, settings.max_attempts, retrying, timeout_s)


class _Tally:
    """What one request's retries and free re-sends were, for its Sample."""

    def __init__(self) -> None:
        self.reasons: dict[str, int] = {}
        self.resends = 0

    def retried(self, failure: Failure) -> None:
        self.reasons[failure.reason] = self.reasons.get(failure.reason, 0) + 1

    def counted(self, sample: Sample) -> Sample:
        if not self.reasons and not self.resends:
            return sample
        return msgspec.structs.replace(sample, retry_reasons=dict(self.reasons), resends=self.resends)


def _retry_delay(failure: Failure, settings: ClientSettings, attempt: int, rng: random.Random | None) -> float:
    """Seconds to wait before attempt `attempt + 1`."""
    if failure.retry_after_s is not None:
        # The server said when; waiting longer than backoff_max_s is never worth it.
        return min(failure.retry_after_s, settings.backoff_max_s)
    return backoff_delay(settings, attempt, rng)


def backoff_delay(settings: ClientSettings, attempt: int, rng: random.Random | None) -> float:
    # Full jitter spreads the retries of many concurrent requests that failed together.
    exponent = min(attempt - 1, _MAX_BACKOFF_EXPONENT)
    cap = min(settings.backoff_max_s, settings.backoff_base_s * 2.0**exponent)
    return (rng or random).uniform(0.0, cap)


def _failed(
    task_id: str, attempts: int, request: dict[str, Any], last: Failure, reason: str, settings: ClientSettings
) -> Sample:
    """The Sample of a request that finally failed: the reason for people, the kind and status for code."""
    return Sample(
        task_id=task_id,
        attempts=attempts,
        error=_scrub(one_line(reason), settings.api_key),
        error_kind=last.kind,
        error_status=last.status,
        request=request,
    )


def _n_attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"
