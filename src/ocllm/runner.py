"""Run one lane of a suite against a server: schedule, record, resume, score.

Every finished task is one line appended to samples.jsonl the moment it finishes, so a crash or
Ctrl-C loses nothing that finished; `--resume` runs only what is missing. Decisions and metrics are
derived from the samples at the end (and by `ocllm rescore DIR` at any later time).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import msgspec

from ocllm import __version__
from ocllm.client import ClientSettings, ServerProbe, chat_completion, make_session, probe_server
from ocllm.errors import InputError, OcllmError
from ocllm.formats.run_dir import load_run_dir
from ocllm.lanes import Lane, public_settings
from ocllm.models import Sample, Task
from ocllm.notices import same_model, served_models
from ocllm.progress import RunProgress
from ocllm.prompting import request_body
from ocllm.rescore import Rescored, rescore_run
from ocllm.rundir import (
    MANIFEST,
    METRICS,
    SAMPLES,
    SUITE_COPY,
    SampleWriter,
    atomic_write_bytes,
    read_samples,
    write_json,
    write_samples,
)
from ocllm.scoring import SCORER_VERSION, decide
from ocllm.suites import Suite, load_suite

RUN_FORMAT = "ocllm-run/1"
# Lane settings that change what the model is asked; a resumed run must not mix two of them.
_OUTPUT_SETTINGS = (
    "model", "prompt_template", "substring_template", "system_prompt", "temperature", "top_p",
    "max_tokens", "seed", "reasoning", "reasoning_switch", "extra_body", "omit_fields",
)  # fmt: skip


class RunResult(NamedTuple):
    out_dir: Path
    lane: Lane
    summary: dict[str, Any]
    ran: int  # requests made in this invocation
    notices: list[str]  # what the user should know after the run: why requests failed, truncation, ...
    model: str  # the model the server answered as (the lane's name for it when no answer said)


def run_lane(
    lane: Lane,
    out_dir: Path,
    *,
    resume: bool = False,
    retry_errors: bool = False,
    progress: Callable[[str, int, int], RunProgress] | None = None,
    announce: Callable[[str], None] | None = None,
) -> RunResult:
    """Run `lane` into `out_dir` and score it. Raises OcllmError for what the user can fix.

    `announce` is told, before the first task is sent, what the user must know before waiting for the
    run (the server serves the model under another name, a first request failed)."""
    suite = load_suite(lane.suite)
    api_key = _api_key(lane)
    try:
        settings = ClientSettings(
            base_url=lane.base_url.rstrip("/"),
            api_key=api_key,
            stream=lane.stream,
            timeout_s=lane.timeout_s,
            max_attempts=lane.max_attempts,
            retry_budget_s=lane.retry_budget_s,
            omit_fields=tuple(lane.omit_fields),
        )
    except ValueError as exc:
        raise InputError(f"lane {lane.name!r}: {exc}") from None
    # Asked before anything is written: an unreachable server or an unknown model is refused at once,
    # instead of every task being retried and recorded as an error.
    _refuse_unusable_directory(out_dir, resume=resume or retry_errors)
    probe, served, before = asyncio.run(_check_server(lane, settings))
    for notice in before:
        (announce or (lambda _: None))(notice)
    samples_path = out_dir / SAMPLES
    existing = _prepare_directory(lane, suite, out_dir, resume=resume or retry_errors)
    if retry_errors:
        kept = [s for s in existing if s.error is None]
        write_samples(samples_path, kept)  # atomically: the failed lines go, the rest stay
        existing = kept
    done = {s.task_id for s in existing}
    pending = [t for t in suite.tasks if t.id not in done]

    manifest = _manifest(lane, suite, existing_manifest=out_dir / MANIFEST if done else None)
    manifest["server_models"] = probe.models
    manifest["served_model"] = served
    write_json(out_dir / MANIFEST, manifest)
    atomic_write_bytes(out_dir / SUITE_COPY, suite.path.read_bytes())
    make_progress = progress or (lambda label, total, already: RunProgress(label, total, already))
    try:
        asyncio.run(_run_pending(lane, settings, pending, samples_path, make_progress, len(suite.tasks), len(done)))
    except KeyboardInterrupt:
        manifest["status"] = "interrupted"
        write_json(out_dir / MANIFEST, manifest)
        raise
    rescored = score_run_dir(out_dir, lane)
    summary = rescored.document["summary"]
    after = list(rescored.document["notices"])
    if (resume or retry_errors) and not pending:
        after.insert(0, f"nothing left to run: every one of the {len(suite.tasks)} tasks has already run")
    manifest["notices"] = before + after
    manifest["served_model"] = next(iter(served_models(r.sample for r in rescored.source.records)), served)
    model = manifest["served_model"] or lane.model
    manifest["finished_at"] = _now()
    manifest["status"] = "finished" if not summary["errors"] else "finished_with_errors"
    write_json(out_dir / MANIFEST, manifest)
    return RunResult(out_dir, lane, summary, len(pending), after, model)


def score_run_dir(out_dir: Path, lane: Lane) -> Rescored:
    """Decide every task from the samples on disk and write metrics.json."""
    saved = load_run_dir(out_dir)
    result = rescore_run(saved, lane.policy())
    result.document["source"] = {**result.document["source"], "path": str(out_dir), "lane": lane.name}
    write_json(out_dir / METRICS, result.document)
    return result


# How often the progress is refreshed while no task finishes.
_TICK_S = 1.0
# A server still loading answers 503 for a while: the probe waits a little before refusing.
_NOT_READY_RETRIES = 3
_NOT_READY_WAIT_S = 2.0


async def _check_server(lane: Lane, settings: ClientSettings) -> tuple[ServerProbe, str | None, list[str]]:
    """Refuse at once what would make every request fail. Returns the /models answer, the model name
    the server answered a trial request with (None when none was needed), and notices for what only might.

    /models is asked first. When it cannot settle the question (the model is not listed, the server
    lists one model under another name, or /models itself fails), one tiny chat request decides: what
    the server accepts is accepted, whatever it lists (llama-swap aliases, routers, single-model servers)."""
    where = f"lane {lane.name!r}: {lane.base_url}"
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
                [f"{lane.base_url}/models answered with an error ({probe.problem}); requests work"],
            )
        if trial.model and not same_model(lane.model, trial.model):
            answered = f"it answers, as {trial.model!r}: results and reports name the model the server answered as"
        else:
            answered = "but it answers to that name"
        return (
            probe,
            trial.model,
            [f"model {lane.model!r} is not among those the server lists ({', '.join(served)}); {answered}"],
        )
    if probe.problem is not None and not lane.base_url.rstrip("/").endswith("/v1"):
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


async def _run_pending(
    lane: Lane,
    settings: ClientSettings,
    pending: list[Task],
    samples_path: Path,
    make_progress: Callable[[str, int, int], RunProgress],
    total: int,
    already: int,
) -> None:
    policy = lane.policy()
    writer = SampleWriter(samples_path)
    queue: asyncio.Queue[Task] = asyncio.Queue()
    for task in pending:
        queue.put_nowait(task)
    try:
        async with make_session(lane.concurrency) as session:
            with make_progress(lane.name, total, already) as bar:

                async def worker() -> None:
                    # A fixed pool of workers rather than one coroutine per task: memory stays flat
                    # on suites of any size, and the connection pool is never oversubscribed.
                    while not queue.empty():
                        task = queue.get_nowait()
                        body = request_body(task, lane)
                        bar.start()
                        sample = await chat_completion(session, settings, task.id, body)
                        writer.append(sample)
                        # Scored as the final metrics will score it (with the prompt), for the live accuracy.
                        prompted = msgspec.structs.replace(task, prompt=sample.sent_prompt())
                        correct = None if sample.error else decide(prompted, sample, policy).correct
                        bar.advance(correct, sample.error is not None)

                async def ticker() -> None:
                    # Refreshes the progress while nothing finishes: a stalled server shows as time
                    # since the last finish and requests in flight, not as silence.
                    while True:
                        await asyncio.sleep(_TICK_S)
                        bar.tick()

                ticking = asyncio.create_task(ticker())
                try:
                    await asyncio.gather(*(worker() for _ in range(min(lane.concurrency, len(pending)) or 1)))
                finally:
                    ticking.cancel()
    finally:
        writer.close()


def _refuse_unusable_directory(out_dir: Path, *, resume: bool) -> None:
    """The mistakes about --out that need no server to find: checked before the server is asked."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: exists and is not a directory")
    samples_path = out_dir / SAMPLES
    if not resume and samples_path.exists() and samples_path.stat().st_size:
        raise InputError(f"{out_dir}: already holds a run; pass --resume to finish it, or choose another --out")


def _prepare_directory(lane: Lane, suite: Suite, out_dir: Path, *, resume: bool) -> list[Sample]:
    samples_path = out_dir / SAMPLES
    _refuse_unusable_directory(out_dir, resume=resume)
    if not resume:
        out_dir.mkdir(parents=True, exist_ok=True)
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / MANIFEST
    if manifest_path.exists():
        try:
            manifest = msgspec.json.decode(manifest_path.read_bytes())
        except msgspec.DecodeError:
            raise InputError(f"{manifest_path}: not valid JSON; cannot resume this run") from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("suite"), dict):
            raise InputError(f"{manifest_path}: not a run manifest; cannot resume this run")
        if manifest["suite"].get("sha256") != suite.sha256:
            raise InputError(f"{out_dir}: was run on a different suite (content hash differs); cannot resume")
        before = manifest.get("lane") if isinstance(manifest.get("lane"), dict) else {}
        now = public_settings(lane)
        changed = [k for k in _OUTPUT_SETTINGS if before.get(k) != now.get(k)]
        if changed:
            raise InputError(f"{out_dir}: lane settings differ from the interrupted run ({', '.join(changed)})")
    samples = read_samples(samples_path, repair=True)
    known = {t.id for t in suite.tasks}
    strangers = [s.task_id for s in samples if s.task_id not in known]
    if strangers:
        raise InputError(f"{samples_path}: holds task {strangers[0]!r}, which is not in the suite")
    return samples


def _manifest(lane: Lane, suite: Suite, existing_manifest: Path | None) -> dict[str, Any]:
    started = _now()
    if existing_manifest is not None and existing_manifest.exists():
        previous = msgspec.json.decode(existing_manifest.read_bytes())
        started = previous.get("started_at", started)
    return {
        "format": RUN_FORMAT,
        "harness_version": __version__,
        "scorer_version": SCORER_VERSION,
        "lane": public_settings(lane),
        "suite": {"name": suite.name, "sha256": suite.sha256, "tasks": len(suite.tasks)},
        "server_models": None,
        "started_at": started,
        "finished_at": None,
        "status": "running",
    }


def _api_key(lane: Lane) -> str | None:
    if lane.api_key_env is None:
        return None
    key = os.environ.get(lane.api_key_env)
    if not key:
        raise OcllmError(f"lane {lane.name!r}: environment variable {lane.api_key_env} (api_key_env) is not set")
    return key


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
