"""Run one lane of a suite against a server: schedule, record, resume, score.

Every finished task is one line appended to samples.jsonl the moment it finishes, so a crash or
Ctrl-C loses nothing that finished; `--resume` runs only what is missing. Decisions and metrics are
derived from the samples at the end (and by `ocllm rescore DIR` at any later time).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import msgspec

from ocllm.documents import Summary
from ocllm.errors import Interrupted
from ocllm.model_names import is_model_mismatch
from ocllm.models import Decision, Policy, Preflight, Sample, ShardRecord, Task, as_sent
from ocllm.run.client import AttemptWatch, FailedAttempt
from ocllm.run.conversation import TurnLog, converse
from ocllm.run.decision_pool import DecisionPool, LiveDecisions
from ocllm.run.decision_spool import DecisionSpool, EncodedDecision
from ocllm.run.directory import RunDirectory
from ocllm.run.engine import Engine, Send
from ocllm.run.engines import engine_for
from ocllm.run.execute import Dispatch, Job, execute
from ocllm.run.http_engine import client_settings
from ocllm.run.lanes import Lane
from ocllm.run.preflight import PreflightMode, PreflightStopped, preflight_lines, probe_lane
from ocllm.run.progress import RunProgress
from ocllm.run.prompting import refuse_tool_clash, request_body
from ocllm.run.server_kind import ServerIdentity
from ocllm.run.servers import ManagedServer, ServerPool
from ocllm.run.shards import Shard, shard_line, take_shard
from ocllm.run.turn_log import TURNS, TurnLogFile, started_before
from ocllm.scoring import is_conversation
from ocllm.server_facts import server_facts
from ocllm.suites import Suite, first_tasks, load_suite


class FinalScore(Protocol):
    """What the final scoring tells the run: the summary, the notices said after it, the model most answers were
    given as (None when the answers did not say)."""

    @property
    def summary(self) -> Summary: ...
    @property
    def notices(self) -> list[str]: ...
    @property
    def served_model(self) -> str | None: ...


# The final scoring, handed in by whoever runs a lane (the CLI, demo.py: they sit above both sides), rather than
# imported: what metrics.json holds (the summary, the notices, the figures) is analysis of the run directory, the
# same pass `ocllm rescore DIR` and `ocllm merge` make, and the run side never imports analysis. Not a function of
# the scoring side either: `scoring/` decides one answer and does no I/O, while this pass reads the run directory
# and writes a file. Given the run directory, the lane's name, the policy the run decides under and, by
# (task id, sample), the decisions the run already took (its spool), and the suite's tasks the run holds (not parsed
# again); it writes metrics.json.
ScoreRun = Callable[
    [Path, str, Policy, Callable[[tuple[str, int]], Decision | None] | None, Sequence[Task] | None], FinalScore
]


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
    # Why the lane stopped before sending every task: the server refused requests alike (refusals.py); the one line
    # the run ends with. None: every task was sent.
    stopped: str | None = None
    preflight: Preflight | None = None  # what the preflight found before the first task; None: it was off


def run_lane(
    lane: Lane,
    out_dir: Path,
    *,
    score: ScoreRun,
    resume: bool = False,
    retry_errors: bool = False,
    progress: Callable[[str, int, int], RunProgress] | None = None,
    announce: Callable[[str], None] | None = None,
    servers: ServerPool | None = None,
    shard: Shard | None = None,
    limit: int | None = None,
    decisions: DecisionPool | None = None,
    command: str = "run",
    engine: Engine | None = None,
    preflight: PreflightMode = "off",
) -> RunResult:
    """Run `lane` into `out_dir` and score it with `score` (writing metrics.json). Raises OcllmError for what the
    user can fix.

    `announce` is told, before the first task is sent, what the user must know before waiting for the
    run (the server serves the model under another name, a first request failed). With `servers`, a lane
    with a server table runs against the server the pool starts (or keeps) for it; without, against
    whatever answers at its base_url. With `limit`, only the suite's first `limit` tasks are the run's suite (its
    suite.jsonl and hash are theirs); with `shard`, only that shard's tasks run (the manifest says which).
    Answers are decided in the worker processes of `decisions` (one pool for a whole command); without it the
    lane starts a pool of its own and stops it when it ends. `command` is the ocllm command running it ("run",
    "matrix"), recorded so that an interrupted run's notices name the command --resume goes with. The lane's requests go
    through `engine` (engine.py), by default the one `engine_for` chooses for the lane."""
    suite = load_suite(lane.suite)
    refuse_tool_clash(lane, suite.tasks)  # an agent's tool named as a task's: refused before anything is asked
    if limit is not None:
        suite = first_tasks(suite, limit)
    shard_record = None
    if shard is not None:
        suite, shard_record = take_shard(suite, shard)
    settings = client_settings(lane)
    engine = engine if engine is not None else engine_for(lane)
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
            invocation = LaneRun(
                lane=lane, suite=suite, engine=engine, run_dir=run_dir, resume=resume, retry_errors=retry_errors,
                make_progress=make_progress, announce=announce or (lambda _: None), spool=spool, pool=pool,
                server=server, shard=shard_record, command=command, preflight=preflight,
            )  # fmt: skip
            sent = asyncio.run(invocation.run())
            rescored = score(out_dir, lane.name, lane.policy(), spool.get, suite.tasks)
    except KeyboardInterrupt:
        run_dir.interrupted()
        if run_dir.manifest is None:
            raise Interrupted("nothing was written (the run had not started)") from None
        raise Interrupted("finished tasks are saved (run the same command again with --resume)") from None
    summary = rescored.summary
    after = list(rescored.notices)
    if any(is_model_mismatch(n) for n in sent.before):
        # Said before the run, in its own words: not again after the table.
        after = [n for n in after if not is_model_mismatch(n)]
    served = rescored.served_model or sent.served
    notices = sent.before + ([sent.stopped] if sent.stopped else []) + after
    run_dir.finish(notices=notices, served_model=served, errors=summary.errors)
    if (resume or retry_errors) and not sent.ran:
        # Said to this invocation only; the manifest keeps what holds for the run.
        k, n = lane.samples_per_task, len(suite.tasks)
        every = f"{n} tasks" if k == 1 else f"{n * k} samples ({k} of each of {n} tasks)"
        after.insert(0, f"nothing left to run: every one of the {every} has already run")
    model = served or lane.model
    counts = sent.counts
    return RunResult(
        out_dir, lane, summary, sent.ran, counts.requests, after, model, counts.retries, counts.resends,
        sent.identities, sent.added, shard=shard_record, stopped=sent.stopped, preflight=sent.preflight,
    )


def _pool(given: DecisionPool | None) -> contextlib.AbstractContextManager[DecisionPool]:
    """The command's pool, left open for its next lane; or one for this lane alone."""
    return contextlib.nullcontext(given) if given is not None else DecisionPool()


class _Counts:
    """What this invocation's requests cost: attempts, the reasons of the retries among them, free re-sends. Counted
    as each attempt is made (`watch`), not when its task finishes: an interrupted run counts the attempts it made."""

    def __init__(self) -> None:
        self.requests = 0
        self.retries: dict[str, int] = {}
        self.resends = 0

    def watch(self, progress: RunProgress) -> Callable[[], AttemptWatch]:
        """A new watch for each request: its attempts counted here and shown by `progress`."""
        return lambda: _Watch(self, progress)


class _Watch(AttemptWatch):
    """One request's attempts, counted into the run's as they are made, and shown by the progress as they fail."""

    def __init__(self, counts: _Counts, progress: RunProgress) -> None:
        self._counts, self._progress = counts, progress
        self._retrying: int | None = None  # the attempt this request is being retried with, as the progress shows it

    def sent(self, attempt: int) -> None:
        self._counts.requests += 1

    def failed(self, failure: FailedAttempt) -> None:
        if failure.retrying:
            self._counts.retries[failure.reason] = self._counts.retries.get(failure.reason, 0) + 1
        self._retry(failure.attempt + 1 if failure.retrying else None)
        self._progress.attempt_failed(failure)

    def resent(self) -> None:
        self._counts.resends += 1

    def ended(self) -> None:
        self._retry(None)

    def _retry(self, attempt: int | None) -> None:
        if attempt != self._retrying:
            self._progress.retry_moved(self._retrying, attempt)
            self._retrying = attempt


# Answers alike that say no request of the lane can succeed on this server (kind "misconfigured") before the lane
# stops: one could be a server's passing state; two alike say what every request will meet.
STOP_AFTER = 2


class _Refusals:
    """The lane's requests until the server has refused STOP_AFTER of them alike (kind "misconfigured"); then every
    task left fails at once with the same error, unsent (attempts 0), and `stopped` says why in one line."""

    def __init__(self, lane: str) -> None:
        self._lane = lane
        self._seen: dict[str, int] = {}
        self._refused: Sample | None = None
        self.unsent = 0

    def dispatcher(self, dispatch: Dispatch) -> Dispatch:
        async def guarded(job: Job) -> Sample:
            refused = self._refused
            if refused is not None:
                self.unsent += 1
                return Sample(
                    task_id=job.task.id, sample=job.sample, attempts=0, error=refused.error,
                    error_kind=refused.error_kind, error_status=refused.error_status,
                )  # fmt: skip
            sample = await dispatch(job)
            if sample.error_kind == "misconfigured" and sample.error is not None and self._refused is None:
                self._seen[sample.error] = self._seen.get(sample.error, 0) + 1
                if self._seen[sample.error] >= STOP_AFTER:
                    self._refused = sample
            return sample

        return guarded

    def stopped(self) -> str | None:
        """The line the run ends with when the lane stopped, with the server's reason and what to change."""
        if self._refused is None:
            return None
        assert self._refused.error is not None
        unsent = f"the other {self.unsent} request(s) were not sent" if self.unsent else "no request was left to send"
        return (
            f"lane {self._lane!r} stopped: the server refused {STOP_AFTER} requests alike, and {unsent}: "
            f"{self._refused.error}"
        )


class _Sent(NamedTuple):
    """What one invocation's event loop did: how many samples it sent and what their requests cost, the notices said
    before the run, the model the trial was answered as, what answered at each endpoint with the request settings
    added for it, and why the lane stopped, if it did."""

    ran: int
    counts: _Counts
    before: list[str]
    served: str | None
    identities: list[ServerIdentity]
    added: dict[str, Any]
    stopped: str | None
    preflight: Preflight | None


@dataclass(kw_only=True)
class LaneRun:
    """One invocation of a lane in its event loop: what it runs (the lane, its suite or shard, through `engine`),
    where its answers go (the run directory, the decision pool and its spool), and what it tells (the progress line,
    `announce`), held together so that its steps read them rather than pass a dozen of them along. `command` is the
    ocllm command running it ("run", "matrix"), recorded for the notices --resume goes with."""

    lane: Lane
    suite: Suite
    engine: Engine
    run_dir: RunDirectory
    resume: bool
    retry_errors: bool
    make_progress: Callable[[str, int, int], RunProgress]
    announce: Callable[[str], None]
    spool: DecisionSpool
    pool: DecisionPool
    server: ManagedServer | None = None
    shard: ShardRecord | None = None
    command: str = "run"
    # The preflight before the first task (preflight.py): "on" says what it finds, "strict" stops the lane on a
    # problem that will distort its run, "off" sends none.
    preflight: PreflightMode = "off"
    # How often each conversation's episode was started before (turns.jsonl, read on --resume): a restarted one says
    # so in its sample.
    restarts: dict[tuple[str, int], int] = field(default_factory=dict)
    # Seconds the decisions went on after the last response (this invocation's): the scorer's time, reported apart
    # from the serving figures, which end with the last response.
    scoring_tail_s: float = 0.0

    async def run(self) -> _Sent:
        """The server check, then the pending tasks. Each answer is decided in the pool (off the event loop) and its
        decision goes to the spool, for the final scoring."""
        # Asked before anything is written: an unreachable server or an unknown model is refused at once,
        # instead of every task being retried and recorded as an error.
        checked = await self.engine.check()
        served, identities, added = checked.served_model, checked.servers, checked.request_settings
        before = checked.notices + sampling_notices(self.lane)
        for notice in before:
            self.announce(notice)
        found = await self._preflight(identities, added) if self.preflight != "off" else None
        sent_lane = self.lane
        if added:
            # The lane's own extra_body wins (repeat_settings leaves out what it sets); the manifest keeps the lane as
            # written, and what was added beside it.
            sent_lane = msgspec.structs.replace(self.lane, extra_body={**added, **self.lane.extra_body})
        existing = self.run_dir.open(self.lane, self.suite, resume=self.resume, retry_errors=self.retry_errors)
        if self.resume or self.retry_errors:
            self.restarts = started_before(self.run_dir.path / TURNS, repair=True)
        done = {(s.task_id, s.sample) for s in existing}
        pending = _pending(self.lane, self.suite, done)
        self.run_dir.start(
            self.lane,
            self.suite,
            resumed=self.resume or self.retry_errors,
            server_models=checked.models,
            served_model=served,
            server=self.server.record() if self.server is not None else None,
            shard=self.shard,
            server_identity=[msgspec.to_builtins(identity) for identity in identities],
            request_settings=added,
            command=self.command,
            preflight=found,
        )
        if pending:
            # Before the first request, not during the first answers' reading (no request is in flight yet).
            self.pool.start()
        counts = _Counts()
        refusals = _Refusals(self.lane.name)
        began = time.monotonic()
        answered: float | None = None
        try:
            # The samples of earlier invocations, decided again beside this one's, so that the progress line's
            # accuracy is the lane's, not this invocation's alone (their decisions go to the spool: the final scoring
            # takes them). None when nothing is left to run: the pool is not started then, and no progress line drawn.
            by_id = {task.id: task for task in self.suite.tasks}
            earlier = [(by_id[s.task_id], s) for s in existing if s.task_id in by_id] if pending else []
            total = len(self.suite.tasks) * self.lane.samples_per_task
            live_to = _Live(total, len(done), earlier)
            answered = await self._answer(pending, sent_lane, live_to, counts, refusals)
        finally:
            self.run_dir.count_requests(counts.requests, counts.retries, counts.resends)
            if pending:
                # The replicas' figures are this invocation's (a resumed run counts its own requests anew). The
                # serving figures' wall time ends with the last response, not with the last decision: the decisions
                # still waiting then (LiveDecisions.drain) are the scorer's time, not the server's.
                wall = (answered or time.monotonic()) - began
                self.run_dir.add_wall_time(wall, self.engine.figures(), scoring_tail_s=self.scoring_tail_s)
        return _Sent(len(pending), counts, before, served, identities, added, refusals.stopped(), found)

    async def _preflight(self, identities: list[ServerIdentity], added: dict[str, Any]) -> Preflight:
        """The preflight's probes (preflight.py) against the lane's server, before anything is written: each problem
        said, and with `strict` a problem that will distort the run stops the lane here."""
        found = await probed(self.lane, self.suite, self.engine, self.server, identities, added)
        for line in preflight_lines(self.lane.name, found):
            self.announce(line)
        distorting = [f for f in found.findings if f.outcome == "problem" and f.distorts]
        if self.preflight == "strict" and distorting:
            raise PreflightStopped(
                f"lane {self.lane.name!r} stopped by the preflight (--preflight strict): "
                + "; ".join(f"{f.probe}: {f.said}" for f in distorting)
            )
        return found

    async def _answer(
        self, pending: list[Job], sent_lane: Lane, live_to: _Live, counts: _Counts, refusals: _Refusals
    ) -> float:
        """Send every pending request through the engine, append each sample as it finishes and decide it in the pool
        (off the event loop; the decision goes to the spool, for the final scoring). Returns when the last response
        came, before the decisions still waiting were drained."""
        lane = self.lane
        writer = self.run_dir.writer()
        turn_log = TurnLogFile(self.run_dir.path / TURNS)
        try:
            async with self.engine.open() as send:
                with self.make_progress(lane.name, live_to.total, live_to.done) as bar:

                    def decided(task: Task, sample: Sample, decision: EncodedDecision | None) -> None:
                        # None: the workers died on it twice; the final scoring decides it from samples.jsonl.
                        if decision is not None:
                            self.spool.add_encoded((task.id, sample.sample), decision)
                        correct = None if sample.error or decision is None else decision.correct
                        bar.judged(correct, sample.error is not None)

                    # A scorer slower than the server never holds a request back: answers past the bound wait for
                    # their decision on disk (their line in samples.jsonl), not in memory.
                    live = LiveDecisions(
                        self.pool, lane.policy(), decided, limit=max(DECISIONS_IN_MEMORY, 2 * lane.concurrency),
                        read_back=writer.read, prepare=as_sent,
                    )  # fmt: skip
                    earlier = _Earlier(self, live_to, bar)

                    async def finished(job: Job, sample: Sample) -> None:
                        bar.answered()
                        # Decided as the final scoring would decide it (with the prompt as sent), once, in a worker
                        # process: the live accuracy shows it, and the final scoring reads it back from the spool.
                        live.add(job.task, sample, writer.append(sample))

                    talks = Conversations(self.pool, lane.policy(), turn_log, self.restarts)
                    # `concurrency` counts requests in flight. A conversation's episode is one job that sends no request
                    # while its next turn is worked out, so episodes run two for each slot, each request taking one.
                    episodes = any(is_conversation(job.task) for job in pending)
                    slots = asyncio.Semaphore(lane.concurrency) if episodes else None
                    jobs_at_once = lane.concurrency * EPISODES_A_SLOT if episodes else lane.concurrency
                    dispatch = engine_dispatcher(send, sent_lane, counts.watch(bar), talks, slots)
                    if self.server is not None:
                        dispatch = until_server_dies(dispatch, self.server)
                    dispatch = refusals.dispatcher(dispatch)
                    try:
                        await execute(pending, dispatch, concurrency=jobs_at_once, done=finished, progress=bar)
                        answered = time.monotonic()
                        await live.drain()
                        await earlier.drain()
                        self.scoring_tail_s = time.monotonic() - answered
                    finally:
                        await earlier.cancel()
                        await live.cancel()  # nothing left on a normal end; on an error or Ctrl-C, given up
        finally:
            writer.close()
            turn_log.close()
        return answered


async def probed(
    lane: Lane,
    suite: Suite,
    engine: Engine,
    server: ManagedServer | None,
    identities: list[ServerIdentity],
    added: dict[str, Any],
) -> Preflight:
    """The preflight of `lane` through its checked `engine`, its requests carrying what the run adds to every one."""
    if added:
        lane = msgspec.structs.replace(lane, extra_body={**added, **lane.extra_body})
    facts = server_facts({
        "server_kind": ",".join(sorted({i.kind for i in identities})) or None,
        "server_identity": [msgspec.to_builtins(i) for i in identities],
        "server": server.record() if server is not None else None,
        "simulated": any(i.simulated for i in identities),
    })  # fmt: skip
    async with engine.open() as send:
        return await probe_lane(lane, list(suite.tasks), send, facts)


def probe(
    lane: Lane, *, servers: ServerPool | None = None, announce: Callable[[str], None] = lambda _: None
) -> Preflight:
    """`ocllm probe`: the lane's server checked (started first, for a lane with a server table and a pool) and
    probed, nothing written. Raises OcllmError for what the user can fix, as a run does."""
    suite = load_suite(lane.suite)
    engine = engine_for(lane)
    settings = client_settings(lane)
    server = None
    if servers is not None and lane.server is not None:
        # Its log goes to a folder of its own, kept: the one place to read why a server did not come up.
        logs = Path(tempfile.mkdtemp(prefix=f"ocllm-probe-{lane.name}-"))
        announce(f"the lane's server is started for the probe; its log: {logs / 'server.log'}")
        server = servers.server_for(lane.name, lane.server, settings.base_url, logs, settings.api_key)

    async def checked_and_probed() -> Preflight:
        checked = await engine.check()
        for notice in checked.notices:
            announce(notice)
        return await probed(lane, suite, engine, server, checked.servers, checked.request_settings)

    return asyncio.run(checked_and_probed())


def _pending(lane: Lane, suite: Suite, done: set[tuple[str, int]]) -> list[Job]:
    """The samples still to ask for, round by round (every task's sample 0, then every task's sample 1, ...): a run
    stopped early holds whole rounds, each task asked about as often as the next, rather than all of some tasks'
    samples and none of others'."""
    return [
        Job(task, index)
        for index in range(lane.samples_per_task)
        for task in suite.tasks
        if (task.id, index) not in done
    ]


class _Live(NamedTuple):
    """What the progress line starts from: `total` samples, `done` of them already on disk, and those of earlier
    invocations (--resume) with their tasks, to be decided again beside this invocation's answers."""

    total: int
    done: int
    earlier: list[tuple[Task, Sample]]


class _Earlier:
    """The decisions of earlier invocations' samples, taken in the pool beside this invocation's answers (a task of
    its own, with its own limit, so that they never hold a request back): each is counted in the progress line's
    accuracy and kept in the spool."""

    def __init__(self, run: LaneRun, live_to: _Live, bar: RunProgress) -> None:
        def decided(task: Task, sample: Sample, decision: EncodedDecision | None) -> None:
            if decision is not None:
                run.spool.add_encoded((task.id, sample.sample), decision)
            bar.earlier(None if decision is None else decision.correct, error=False)

        self._live = LiveDecisions(run.pool, run.lane.policy(), decided, limit=run.lane.concurrency, prepare=as_sent)
        for _, sample in live_to.earlier:
            if sample.error is not None:
                bar.earlier(None, error=True)
        answered = [(task, sample) for task, sample in live_to.earlier if sample.error is None]
        self._feeding = asyncio.ensure_future(self._feed(answered)) if answered else None

    async def _feed(self, answered: list[tuple[Task, Sample]]) -> None:
        for task, sample in answered:  # in memory already (read on --resume): each waits for room, not on disk
            await self._live.add_in_turn(task, sample)

    async def drain(self) -> None:
        if self._feeding is not None:
            await self._feeding
        await self._live.drain()

    async def cancel(self) -> None:
        if self._feeding is not None and not self._feeding.done():
            self._feeding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._feeding
        await self._live.cancel()


def sampling_notices(lane: Lane) -> list[str]:
    """What a lane that asks each task several times must know before it waits for them."""
    k = lane.samples_per_task
    if k == 1:
        return []
    if lane.sampling.get("temperature") == 0:
        return [
            f"samples_per_task = {k} at temperature 0: greedy decoding gives the same answer to every sample (up to "
            "the server's batching), so avg@k, pass@k and maj@k measure what one sample does; sample at the "
            "temperature the model is meant to run at (Qwen3 and Nemotron recommend 0.6): the lane's temperature, "
            "or `ocllm run --temperature 0.6`"
        ]
    if lane.sampling.get("seed") is None:
        return [
            f"samples_per_task = {k} without a seed: the samples differ, but a second run will not repeat them; set "
            "the lane's seed (or `ocllm run --seed N`)"
        ]
    return []


class Conversations(NamedTuple):
    """What a conversation's episode needs besides the engine (conversation.py): the pool its next turns are worked
    out in, the policy they are worked out under, where each turn goes as it finishes, and how often each episode
    was started before (--resume)."""

    pool: DecisionPool
    policy: Policy
    log: TurnLog
    started: dict[tuple[str, int], int]


# Episodes run at once for each request slot: while one works out its next turn, another's request takes the slot.
EPISODES_A_SLOT = 2
# Answers that wait for their decision in memory (at least twice the concurrency); the rest wait on disk.
DECISIONS_IN_MEMORY = 256


def engine_dispatcher(
    send: Send,
    lane: Lane,
    watch: Callable[[], AttemptWatch] = AttemptWatch,
    talks: Conversations | None = None,
    slots: asyncio.Semaphore | None = None,
) -> Dispatch:
    """Jobs through an engine (engine.py): the lane's prompt and request body for each, sent by `send` (each request
    it makes with a new `watch()` told of its attempts). A task whose room continues a conversation is one episode
    (conversation.py), whose next turns are worked out in `talks.pool`. With `slots`, each request holds one while it
    is in flight."""
    if slots is not None:
        send = _holding(slots, send)

    async def dispatch(job: Job) -> Sample:
        body = request_body(job.task, lane, job.sample)
        if talks is None or not is_conversation(job.task):
            return await send(job.task.id, body, watch)
        return await converse(
            job.task, job.sample, body, send=send, watch=watch, next_turn=talks.pool.next_turn, policy=talks.policy,
            log=talks.log, restarted=talks.started.get((job.task.id, job.sample), 0),
        )  # fmt: skip

    return dispatch


def _holding(slots: asyncio.Semaphore, send: Send) -> Send:
    """`send`, each request holding one of `slots` while it is in flight."""

    async def held(task_id: str, body: dict[str, Any], watch: Callable[[], AttemptWatch]) -> Sample:
        async with slots:
            return await send(task_id, body, watch)

    return held


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
