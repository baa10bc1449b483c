"""Decisions taken off the event loop: a pool of worker processes running `scoring.decide`.

A run decides each answer as it arrives. Deciding in the event loop would hold up the reading of every other
response for as long as the decision takes (a math answer's symbolic check can take 100 ms and more), so the
client's figures (time to first token, latency) would measure the scorer. The runner hands each answer to
`pool.submit(task, sample, policy)` instead; the loop only sends the records to a worker and takes the decision
back, JSON-encoded as the spool keeps it (`decision_spool.EncodedDecision`: encoding costs microseconds where
pickling a Decision and its evidence cost ten times that, and the loop never decodes it).

- Hand-overs in batches: a decision is queued in the event loop, and the queue goes to the workers in batches,
  at most `AHEAD` batches a worker (`BATCH_MAX` decisions at most, the queue shared out between the workers that
  may take one). While the workers are idle a decision goes at once, alone; while they are busy the decisions that
  arrive meanwhile wait and go together when a batch is done (as a database groups its commits). The second batch
  waits in the worker's pipe while it decides the first: it never waits, idle, for the event loop to send more
  (on a loaded machine that is a turn of the scheduler for ocllm and another for the worker). A hand-over per decision
  cost the run more than an MCQ decision itself (issue 29: 0.17 of a bare client's tasks/s, against 0.28 deciding
  in the event loop); a batch pays it once. The outcomes come back one by one, each as it is decided, so a slow
  decision keeps waiting only those after it in its batch. No thread of ocllm takes part: the loop writes and
  reads the workers' pipes itself (`decision_workers.py`).
- Workers: `DEFAULT_WORKERS`, min(4, the CPUs this process may use), started by `start` (the runner calls it once
  the server has answered, before the first request, and it waits until each has started) or else on the first
  decision; a worker that died is replaced at the next hand-over.
- One pool per `ocllm run` or `ocllm matrix`, shared by its lanes (`run_lane(decisions=...)`), each lane in an
  event loop of its own; a `run_lane` given none makes its own.
- A worker that dies (killed, a crash) costs only the batch it held: those decisions are taken again in fresh
  workers, once, each alone (so that one decision that kills its worker takes no other with it); one that dies
  again comes back as None, and the run's final scoring decides that task from samples.jsonl as it decides every
  task missing from the spool. An exception raised by the scorer itself is not a crash: it is raised to that
  decision's caller, as it would be in-process.
- Closing: at the end of a run the idle workers exit as their pipes close and are joined; on an error or Ctrl-C
  they are terminated (and killed if they linger). Nothing outlives ocllm (docs/processes.md, "What dies with
  what"; decision_workers.py).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import weakref
from collections import deque
from collections.abc import Callable, Collection
from typing import Any, NamedTuple

import msgspec

from ocllm.files.atomic import Span
from ocllm.models import Decision, NextTurn, Policy, Sample, Task
from ocllm.run.decision_spool import EncodedDecision, decode
from ocllm.run.decision_workers import DECIDE, NEXT_TURN, Worker, context
from ocllm.scoring import decide

__all__ = ["AHEAD", "BATCH_MAX", "DEFAULT_WORKERS", "Decider", "DecisionPool", "LiveDecisions"]

log = logging.getLogger(__name__)

Decider = Callable[[Task, Sample, Policy], Decision]


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# Small: a decision takes milliseconds, and the workers share the CPUs with the event loop (and often the server).
DEFAULT_WORKERS = max(1, min(4, _usable_cpus()))
# The most decisions in one hand-over: enough that a hand-over's cost is shared out, few enough that the decisions
# behind a slow one (a symbolic check, up to its CPU-time limit) are few.
BATCH_MAX = 32
# Batches a worker holds at once: the one it decides and the next.
AHEAD = 2


class _Item(NamedTuple):
    task: Task
    sample: Sample
    policy: Policy
    # A decision's outcome is EncodedDecision, a conversation's next turn its NextTurn JSON (bytes); None: lost.
    future: asyncio.Future[Any]
    retry: bool  # its worker died on its batch: taken again, alone, and given up if its worker dies again
    kind: str = DECIDE  # what is asked (decision_workers.DECIDE or NEXT_TURN)


class DecisionPool:
    """`submit(task, sample, policy)`: a future of the decision, taken in a worker process and encoded (None when
    workers died on it twice); `await decide(...)`: the Decision itself. `decider` is what the workers call,
    `scoring.decide` unless a test or benchmark gives another (a module-level function, so that it pickles). `warm`:
    the guarded services (`scoring.guarded`, by name) each worker starts in the background once it has started, for a
    command that knows its decisions will need them (their start is a second or more of CPU, otherwise paid by the
    first decision that needs one, while the run waits for it)."""

    def __init__(self, workers: int | None = None, *, decider: Decider = decide, warm: Collection[str] = ()) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers or DEFAULT_WORKERS
        self._decider = decider
        self._warm = tuple(warm)
        self._running: list[Worker] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: deque[_Item] = deque()
        self._flush_due = False
        self._closed = False
        self.restarts = 0  # workers replaced after one died
        self.lost = 0  # decisions given up after dying twice: decided again by the final scoring
        # At exit, whatever happened: the workers stopped before multiprocessing joins its children.
        self._finalizer = weakref.finalize(self, _stop_all, self._running, True)

    async def decide(self, task: Task, sample: Sample, policy: Policy) -> Decision | None:
        encoded = await self.submit(task, sample, policy)
        return None if encoded is None else decode(encoded)

    def submit(self, task: Task, sample: Sample, policy: Policy) -> asyncio.Future[EncodedDecision | None]:
        """Queue one decision (in the running event loop) and return at once: the future is the decision encoded,
        None when workers died on it twice, or the exception the scorer raised."""
        return self._queued(task, sample, policy, DECIDE)

    def _queued(self, task: Task, sample: Sample, policy: Policy, kind: str) -> asyncio.Future[Any]:
        if self._closed:
            raise RuntimeError("the decision pool is closed")
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._adopt(loop)
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.append(_Item(task, sample, policy, future, retry=False, kind=kind))
        self._flush_soon()
        return future

    async def next_turn(self, task: Task, episode: Sample, policy: Policy) -> NextTurn | None:
        """What a conversation sends after its last reply (`scoring.next_turn`), asked of a worker as a decision is
        (its tool calls run there, never in the event loop), in the same queue, so that the workers' time is shared
        fairly between the run's decisions and its conversations; None when workers died on it twice."""
        encoded: bytes | None = await self._queued(task, episode, policy, NEXT_TURN)
        return None if encoded is None else msgspec.json.decode(encoded, type=NextTurn)

    def start(self) -> None:
        """Start the workers now, and wait until each has started: the runner calls it before its first request,
        so that starting them (a forkserver, the scorer's imports: a second of CPU) does not compete with the
        reading of the first answers. Workers already started are left as they are."""
        if self._closed:
            raise RuntimeError("the decision pool is closed")
        self._fill()
        for worker in self._running:
            if not worker.batch:  # one deciding already has started (its loop reads its readiness)
                worker.wait_ready()

    def pids(self) -> list[int]:
        """The workers' process ids (started lazily: none before the first decision)."""
        return [worker.pid for worker in self._running if worker.pid is not None]

    def close(self, *, kill: bool = False) -> None:
        """Stop the workers: joined when idle (the end of a run), terminated with `kill` (an error, Ctrl-C)."""
        self._closed = True
        for worker in self._running:
            self._forget(worker)
        _stop_all(self._running, kill)
        self._finalizer.detach()

    def __enter__(self) -> DecisionPool:
        return self

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.close(kill=kind is not None)

    # --- the queue and the hand-overs, in the event loop ------------------------------------------------------------

    def _adopt(self, loop: asyncio.AbstractEventLoop) -> None:
        """A new event loop (the next lane of a matrix). A worker still busy with a batch of the loop before (that
        lane ended on an error) is replaced: its reply would answer futures of a closed loop."""
        for worker in list(self._running):
            self._forget(worker)
            if worker.batch:
                self._running.remove(worker)
                worker.stop(kill=True)
        self._queue.clear()
        self._loop = loop

    def _fill(self) -> None:
        while len(self._running) < self.workers:
            self._running.append(Worker(context(), self._decider, self._warm))

    def _flush_soon(self) -> None:
        # After the callbacks of this turn of the loop: the answers read in the same turn go in one batch.
        if not self._flush_due and self._loop is not None:
            self._flush_due = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        if self._closed or not self._queue:
            return
        self._fill()
        # The least busy first, one batch each per turn. A decision taken again goes alone, to a worker that holds
        # nothing else, and that worker takes nothing more until it is back: were it to kill its worker again, it
        # takes no other decision with it.
        idle = sorted(
            (
                worker
                for worker in self._running
                if len(worker.sizes) < AHEAD and worker.flush_done and not (worker.batch and worker.batch[0].retry)
            ),
            key=lambda worker: len(worker.batch),
            reverse=True,
        )
        while self._queue and idle:
            if self._queue[0].retry:
                if idle[-1].batch:
                    break  # no worker is empty: it waits for one
                batch = [self._queue.popleft()]
            else:
                size = min(BATCH_MAX, -(-len(self._queue) // len(idle)))
                batch = []
                while self._queue and len(batch) < size and not self._queue[0].retry:
                    batch.append(self._queue.popleft())
            batch = [item for item in batch if not item.future.done()]  # given up by the caller meanwhile
            if batch:
                self._send(idle.pop(), batch)

    def _send(self, worker: Worker, batch: list[_Item]) -> None:
        assert self._loop is not None
        if worker.loop is not self._loop:
            self._loop.add_reader(worker.outcomes_fd, self._readable, worker)
            worker.loop = self._loop
        worker.batch.extend(batch)  # the items not yet decided, in the order it decides them
        worker.sizes.append(len(batch))
        try:
            if not worker.send([(item.kind, item.task, item.sample, item.policy) for item in batch]):
                self._loop.add_writer(worker.jobs_fd, self._writable, worker)
        except BrokenPipeError:
            self._died(worker)

    def _writable(self, worker: Worker) -> None:
        try:
            done = worker.flush()
        except BrokenPipeError:
            self._died(worker)
            return
        if done:
            self._loop.remove_writer(worker.jobs_fd)  # type: ignore[union-attr]

    def _readable(self, worker: Worker) -> None:
        messages, ended = worker.receive()
        for message in messages:
            if not worker.ready:
                worker.ready = True  # its first message
                continue
            item = worker.batch.popleft()  # one outcome a message, in the order sent
            worker.sizes[0] -= 1
            if not worker.sizes[0]:
                worker.sizes.popleft()  # a batch done: room for the next
            if isinstance(message, BaseException):
                _settle(item.future, exception=message)
            else:
                _settle(item.future, result=message)
        if ended:
            self._died(worker)
        elif messages:
            self._flush_soon()

    def _died(self, worker: Worker) -> None:
        if worker not in self._running:
            return  # seen already (its two pipes both told)
        self._forget(worker)
        self._running.remove(worker)
        worker.stop(kill=True)
        batch: list[_Item] = list(worker.batch)  # those it had not decided yet
        log.info(
            "a decision worker died (exit code %s) deciding tasks %s; starting a new one",
            worker.process.exitcode, ", ".join(item.task.id for item in batch),
        )  # fmt: skip
        self.restarts += 1
        for item in reversed(batch):
            if item.retry:
                self.lost += 1
                _settle(item.future, result=None)
            elif not item.future.done():
                self._queue.appendleft(item._replace(retry=True))
        self._flush_soon()

    def _forget(self, worker: Worker) -> None:
        """Its pipes no longer watched by the loop that read them (unless that loop has ended already)."""
        if worker.loop is not None and not worker.loop.is_closed():
            worker.loop.remove_reader(worker.outcomes_fd)
            worker.loop.remove_writer(worker.jobs_fd)
        worker.loop = None


def _stop_all(workers: list[Worker], kill: bool) -> None:
    while workers:
        workers.pop().stop(kill=kill)


def _settle(
    future: asyncio.Future[Any],
    *,
    result: EncodedDecision | bytes | None = None,
    exception: BaseException | None = None,
) -> None:
    if future.done():  # given up by its caller (the run is ending on an error or Ctrl-C)
        return
    if exception is not None:
        future.set_exception(exception)
    else:
        future.set_result(result)


class LiveDecisions:
    """A run's decisions while it streams: `add` hands an answer to the pool and returns at once, always: a scorer
    slower than the server never holds a request back (issue 45). At most `limit` answers wait for their decision in
    memory; the rest wait on disk, as the place (`Span`) of their line in samples.jsonl, read back (`read_back`) as
    decisions come back. `prepare(task, sample)` is the task as the scorer takes it (its prompt as sent);
    `on_decided(task, sample, decision)` is called in the event loop as each decision comes back, encoded (None:
    lost, see DecisionPool); `drain` waits for the rest."""

    def __init__(
        self,
        pool: DecisionPool,
        policy: Policy,
        on_decided: Callable[[Task, Sample, EncodedDecision | None], None],
        *,
        limit: int,
        read_back: Callable[[Span], Sample] | None = None,
        prepare: Callable[[Task, Sample], Task] = lambda task, _: task,
    ) -> None:
        self._pool = pool
        self._policy = policy
        self._on_decided = on_decided
        self._limit = max(1, limit)
        self._read_back = read_back
        self._prepare = prepare
        # The pool's futures themselves, with a callback each: no task per decision.
        self._waiting: set[asyncio.Future[EncodedDecision | None]] = set()
        self._on_disk: deque[tuple[Task, Span]] = deque()
        self._failure: BaseException | None = None

    def add(self, task: Task, sample: Sample, span: Span) -> None:
        """Hand an answer to the pool at once, or, past the bound, leave it on disk at `span` until there is room."""
        if self._failure is not None:
            raise self._failure
        if len(self._waiting) >= self._limit or self._on_disk:
            assert self._read_back is not None, "answers wait on disk only where they can be read back"
            self._on_disk.append((task, span))  # in order: those on disk before it go first
            return
        self._submit(task, sample)

    async def add_in_turn(self, task: Task, sample: Sample) -> None:
        """Hand an answer already in memory to the pool once there is room (an earlier invocation's, on --resume)."""
        while len(self._waiting) >= self._limit:
            await asyncio.wait(set(self._waiting), return_when=asyncio.FIRST_COMPLETED)
        if self._failure is not None:
            raise self._failure
        self._submit(task, sample)

    def _submit(self, task: Task, sample: Sample) -> None:
        future = self._pool.submit(self._prepare(task, sample), sample, self._policy)
        self._waiting.add(future)
        future.add_done_callback(functools.partial(self._returned, task, sample))

    def _returned(self, task: Task, sample: Sample, future: asyncio.Future[EncodedDecision | None]) -> None:
        self._waiting.discard(future)
        if future.cancelled():
            return
        try:
            self._on_decided(task, sample, future.result())
            while self._on_disk and len(self._waiting) < self._limit and self._read_back is not None:
                waiting, span = self._on_disk.popleft()
                self._submit(waiting, self._read_back(span))
        except Exception as exc:  # the scorer raised, or taking the decision did: the next add, or drain, raises it
            if self._failure is None:
                self._failure = exc

    async def drain(self) -> None:
        while self._waiting:
            await asyncio.wait(set(self._waiting))
        if self._failure is not None:
            raise self._failure

    async def cancel(self) -> None:
        """Give up the decisions still waiting (the run is ending on an error or Ctrl-C)."""
        for future in self._waiting:
            future.cancel()
        self._waiting.clear()
        self._on_disk.clear()
