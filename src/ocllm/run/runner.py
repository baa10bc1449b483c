"""Run one lane of a suite against a server: schedule, record, resume, score.

Every finished task is one line appended to samples.jsonl the moment it finishes, so a crash or
Ctrl-C loses nothing that finished; `--resume` runs only what is missing. Decisions and metrics are
derived from the samples at the end (and by `ocllm rescore DIR` at any later time).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import msgspec

from ocllm.analysis.notices import is_model_mismatch, same_model, unlisted_model_notice
from ocllm.analysis.rescore import RescoredFile, write_rescored
from ocllm.documents import Summary
from ocllm.errors import InputError, Interrupted, OcllmError
from ocllm.files.atomic import METRICS, SAMPLES
from ocllm.formats.run_directory import stream_run_dir
from ocllm.models import Sample, ShardRecord, Task, as_sent
from ocllm.run.client import ClientSettings, ServerProbe, chat_completion, make_session, probe_server
from ocllm.run.decision_pool import DecisionPool, LiveDecisions
from ocllm.run.decision_spool import DecisionSpool, EncodedDecision
from ocllm.run.directory import RunDirectory
from ocllm.run.endpoints import Endpoints
from ocllm.run.execute import Dispatch, Job, execute
from ocllm.run.lanes import Lane
from ocllm.run.progress import RunProgress
from ocllm.run.prompting import request_body
from ocllm.run.server_kind import ServerIdentity, closes_streamed_connections, identify, repeatability
from ocllm.run.servers import ManagedServer, ServerPool
from ocllm.run.shards import Shard, shard_line, take_shard
from ocllm.suites import Suite, load_suite


class RunResult(NamedTuple):
    out_dir: Path
    lane: Lane
    summary: Summary
    ran: int  # tasks sent in this invocation
    requests: int  # HTTP requests they took, retries included
    notices: list[str]  # what the user should know after the run: why requests failed, truncation, ...
    model: str  # the model the server answered as (the lane's name for it when no answer said)
    retries: dict[str, int]  # this invocation's retries by the reason the attempt before failed
    resends: int  # requests sent again on a new connection, without spending an attempt (client.py)
    servers: list[ServerIdentity]  # what answered at each endpoint
    request_settings: dict[str, Any]  # what was added to every request for identical runs to repeat
    shard: ShardRecord | None = None  # the shard this run is (--shard K/N); None: the whole suite


def run_lane(
    lane: Lane,
    out_dir: Path,
    *,
    resume: bool = False,
    retry_errors: bool = False,
    progress: Callable[[str, int, int], RunProgress] | None = None,
    announce: Callable[[str], None] | None = None,
    servers: ServerPool | None = None,
    shard: Shard | None = None,
    decisions: DecisionPool | None = None,
) -> RunResult:
    """Run `lane` into `out_dir` and score it. Raises OcllmError for what the user can fix.

    `announce` is told, before the first task is sent, what the user must know before waiting for the
    run (the server serves the model under another name, a first request failed). With `servers`, a lane
    with a server table runs against the server the pool starts (or keeps) for it; without, against
    whatever answers at its base_url. With `shard`, only that shard's tasks run (the manifest says which).
    Answers are decided in the worker processes of `decisions` (one pool for a whole command); without it the
    lane starts a pool of its own and stops it when it ends."""
    suite = load_suite(lane.suite)
    shard_record = None
    if shard is not None:
        suite, shard_record = take_shard(suite, shard)
    settings = client_settings(lane)
    run_dir = RunDirectory(out_dir)
    # Refused before the server is asked: mistakes about --out need no server to find.
    run_dir.check(resume=resume or retry_errors, lane=lane, suite=suite)
    if shard_record is not None and announce is not None:
        announce(shard_line(shard_record))  # said again under the figures: they are of this part only
    make_progress = progress or (lambda label, total, already: RunProgress(label, total, already))
    server = None
    try:
        if servers is not None:
            server = servers.server_for(lane.name, lane.server, settings.base_url, out_dir, settings.api_key)
        with DecisionSpool(out_dir) as spool, _pool(decisions) as pool:
            ran, counts, before, served, started = asyncio.run(
                _run(
                    lane,
                    suite,
                    settings,
                    run_dir,
                    resume,
                    retry_errors,
                    make_progress,
                    announce or (lambda _: None),
                    spool,
                    pool,
                    server,
                    shard_record,
                )
            )
            rescored = score_run_dir(out_dir, lane, spool)
    except KeyboardInterrupt:
        run_dir.interrupted()
        if run_dir.manifest is None:
            raise Interrupted("nothing was written (the run had not started)") from None
        raise Interrupted("finished tasks are saved (run the same command again with --resume)") from None
    summary = rescored.summary
    after = list(rescored.notices)
    if any(is_model_mismatch(n) for n in before):
        # Said before the run, in its own words: not again after the table.
        after = [n for n in after if not is_model_mismatch(n)]
    served = rescored.served_model or served
    run_dir.finish(notices=before + after, served_model=served, errors=summary.errors)
    if (resume or retry_errors) and not ran:
        # Said to this invocation only; the manifest keeps what holds for the run.
        k, n = lane.samples_per_task, len(suite.tasks)
        every = f"{n} tasks" if k == 1 else f"{n * k} samples ({k} of each of {n} tasks)"
        after.insert(0, f"nothing left to run: every one of the {every} has already run")
    identities, added = started
    model = served or lane.model
    return RunResult(
        out_dir, lane, summary, ran, counts.requests, after, model, counts.retries, counts.resends, identities, added,
        shard=shard_record,
    )


def _pool(given: DecisionPool | None) -> contextlib.AbstractContextManager[DecisionPool]:
    """The command's pool, left open for its next lane; or one for this lane alone."""
    return contextlib.nullcontext(given) if given is not None else DecisionPool()


class _Counts:
    """What this invocation's requests cost: attempts, the reasons of the retries among them, free re-sends."""

    def __init__(self) -> None:
        self.requests = 0
        self.retries: dict[str, int] = {}
        self.resends = 0

    def add(self, sample: Sample) -> None:
        self.requests += sample.attempts
        self.resends += sample.resends
        for reason, count in sample.retry_reasons.items():
            self.retries[reason] = self.retries.get(reason, 0) + count


async def _run(
    lane: Lane,
    suite: Suite,
    settings: ClientSettings,
    run_dir: RunDirectory,
    resume: bool,
    retry_errors: bool,
    make_progress: Callable[[str, int, int], RunProgress],
    announce: Callable[[str], None],
    spool: DecisionSpool,
    pool: DecisionPool,
    server: ManagedServer | None = None,
    shard: ShardRecord | None = None,
) -> tuple[int, _Counts, list[str], str | None, tuple[list[ServerIdentity], dict[str, Any]]]:
    """The server check, then the pending tasks, in one event loop. Returns how many tasks were sent and
    what their requests cost, the notices said before the run, the model the trial was answered as, and what
    answered at each endpoint with the request settings added for it.
    Each answer is decided in `pool` (off the event loop) and its decision goes to `spool`, for the final scoring."""
    # Asked before anything is written: an unreachable server or an unknown model is refused at once,
    # instead of every task being retried and recorded as an error.
    replicas = endpoint_settings(lane)
    probe, served, before = await _check_server(lane, replicas[0])
    listed = [probe.models]
    for other in replicas[1:]:  # every replica must serve the model
        other_probe, _, more = await _check_server(lane, other)
        listed.append(other_probe.models)
        before += [notice for notice in more if notice not in before]
    identities = await _identify_servers(replicas, listed)
    added, said = repeat_settings(lane, identities)
    before += said + sampling_notices(lane)
    for notice in before:
        announce(notice)
    sent_lane = lane
    if added:
        # The lane's own extra_body wins (repeat_settings leaves out what it sets); the manifest keeps the lane as
        # written, and what was added beside it.
        sent_lane = msgspec.structs.replace(lane, extra_body={**added, **lane.extra_body})
    existing = run_dir.open(lane, suite, resume=resume, retry_errors=retry_errors)
    done = {(s.task_id, s.sample) for s in existing}
    # Round by round (every task's sample 0, then every task's sample 1, ...): a run stopped early holds whole
    # rounds, each task asked about as often as the next, rather than all of some tasks' samples and none of others'.
    pending = [
        Job(task, index)
        for index in range(lane.samples_per_task)
        for task in suite.tasks
        if (task.id, index) not in done
    ]
    run_dir.start(
        lane,
        suite,
        resumed=resume or retry_errors,
        server_models=probe.models,
        served_model=served,
        server=server.record() if server is not None else None,
        shard=shard,
        server_identity=[msgspec.to_builtins(identity) for identity in identities],
        request_settings=added,
    )
    policy = lane.policy()
    if pending:
        # Before the first request, not during the first answers' reading (no request is in flight yet).
        pool.start()
    writer = run_dir.writer()
    counts = _Counts()
    endpoints = Endpoints(replicas) if len(replicas) > 1 else None
    began = time.monotonic()
    # The serving figures' wall time ends with the last response, not with the last decision: the decisions still
    # waiting then (LiveDecisions.drain) are the scorer's time, not the server's.
    answered: float | None = None
    try:
        # Streamed requests to llama-server get a connection each: it closes the connection after every streamed
        # response (measured, docs/lanes.md), so a pooled one would be dead when the next request takes it. Other
        # servers keep theirs: a new connection per request cost 20-25 ms of time to first token at p95 under load.
        one_each = lane.stream and any(closes_streamed_connections(identity.kind) for identity in identities)
        async with make_session(lane.concurrency, reuse_connections=not one_each) as session:
            with make_progress(lane.name, len(suite.tasks) * lane.samples_per_task, len(done)) as bar:

                def decided(task: Task, sample: Sample, decision: EncodedDecision | None) -> None:
                    # None: the workers died on it twice; the final scoring decides it from samples.jsonl.
                    if decision is not None:
                        spool.add_encoded((task.id, sample.sample), decision)
                    correct = None if sample.error or decision is None else decision.correct
                    bar.advance(correct, sample.error is not None)

                # At most `concurrency` answers wait for their decision: a slower scorer holds the requests back.
                live = LiveDecisions(pool, policy, decided, limit=lane.concurrency)

                async def finished(job: Job, sample: Sample) -> None:
                    writer.append(sample)
                    counts.add(sample)
                    # Decided as the final scoring would decide it (with the prompt as sent), once, in a worker
                    # process: the live accuracy shows it, and the final scoring reads it back from the spool.
                    await live.add(as_sent(job.task, sample), sample)

                if endpoints is not None:
                    dispatch = endpoints.dispatcher(session, lambda job: request_body(job.task, sent_lane, job.sample))
                else:
                    dispatch = http_dispatcher(session, settings, sent_lane)
                if server is not None:
                    dispatch = until_server_dies(dispatch, server)
                try:
                    await execute(pending, dispatch, concurrency=lane.concurrency, done=finished, progress=bar)
                    answered = time.monotonic()
                    await live.drain()
                finally:
                    await live.cancel()  # nothing left on a normal end; on an error or Ctrl-C, given up
    finally:
        writer.close()
        run_dir.count_requests(counts.requests, counts.retries, counts.resends)
        if pending:
            # The replicas' figures are this invocation's (a resumed run counts its own requests anew).
            wall = (answered or time.monotonic()) - began
            run_dir.add_wall_time(wall, endpoints.figures() if endpoints is not None else None)
    return len(pending), counts, before, served, (identities, added)


async def _identify_servers(
    replicas: list[ClientSettings], listed: list[dict[str, Any] | None]
) -> list[ServerIdentity]:
    """What answers at each endpoint (server_kind.py), with the /models answer each gave."""
    async with make_session(1) as session:
        return [await identify(session, settings, models) for settings, models in zip(replicas, listed, strict=True)]


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


def sampling_notices(lane: Lane) -> list[str]:
    """What a lane that asks each task several times must know before it waits for them."""
    k = lane.samples_per_task
    if k == 1:
        return []
    if lane.temperature == 0:
        return [
            f"samples_per_task = {k} at temperature 0: greedy decoding gives the same answer to every sample (up to "
            "the server's batching), so avg@k, pass@k and maj@k measure what one sample does; sample at the "
            "temperature the model is meant to run at (Qwen3 and Nemotron recommend 0.6)"
        ]
    if lane.seed is None:
        return [f"samples_per_task = {k} without a seed: the samples differ, but a second run will not repeat them"]
    return []


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


def http_dispatcher(session: aiohttp.ClientSession, settings: ClientSettings, lane: Lane) -> Dispatch:
    """Tasks to one OpenAI-compatible endpoint: the lane's prompt and request body, one chat request each."""

    async def dispatch(job: Job) -> Sample:
        return await chat_completion(session, settings, job.task.id, request_body(job.task, lane, job.sample))

    return dispatch


def until_server_dies(dispatch: Dispatch, server: ManagedServer) -> Dispatch:
    """Requests to a managed server, each one given up as soon as the server has exited: the task becomes an
    error saying so (not a wrong answer, and not minutes of retries against a closed port)."""

    def died(job: Job, attempts: int) -> Sample:
        return Sample(
            task_id=job.task.id, sample=job.sample, error=server.death_reason(), error_kind="connection",
            attempts=attempts,
        )  # fmt: skip

    async def guarded(job: Job) -> Sample:
        if server.exit_code() is not None:
            return died(job, attempts=0)  # never sent: no request is counted for it
        request = asyncio.ensure_future(dispatch(job))
        while not request.done():
            await asyncio.wait({request}, timeout=_SERVER_CHECK_S)
            if not request.done() and server.exit_code() is not None:
                request.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await request
                return died(job, attempts=1)
        sample = request.result()
        if sample.error is not None and server.exit_code() is not None:
            return msgspec.structs.replace(sample, error=server.death_reason())
        return sample

    return guarded


_SERVER_CHECK_S = 0.2  # how often a request in flight looks whether the managed server is still there


def score_run_dir(out_dir: Path, lane: Lane, spool: DecisionSpool | None = None) -> RescoredFile:
    """Decide every task from the samples on disk and write metrics.json, one task at a time (a run's
    memory does not grow with its outputs). Tasks this invocation already decided are read from `spool`."""
    meta, records = stream_run_dir(out_dir)
    # The raw outputs stay in samples.jsonl alone: metrics.json names the file instead of copying them.
    source = {"path": str(out_dir), "lane": lane.name, "raw_outputs": SAMPLES}
    decided = None if spool is None else (lambda record: spool.get((record.task.id, record.sample.sample)))
    return write_rescored(
        out_dir, meta, records, lane.policy(), out_dir / METRICS, source=source, decided=decided, raw_outputs=False
    )


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
    # Only the request refused (another 4xx) or no connection at all means every request would fail.
    refused = trial.error_kind == "connection" or (
        trial.error_kind == "http_status" and 400 <= (trial.error_status or 0) < 500
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
