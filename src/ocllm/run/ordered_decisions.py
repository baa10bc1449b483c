"""Decisions of saved answers (a rescore's) taken in the run's decision pool (decision_pool.py), in worker processes,
as a run's are (issue 45): one decision path for both, and as many decisions at once as the pool has workers, which
matters where a decision is costly (a program run in the sandbox, the math scorer's symbolic step).

The items (records of any reader: `job` gives each one's task and sample) stay in their order: they are read in a
thread of their own, whose event loop hands each to the pool and keeps at most `WINDOW` of them waiting; the caller
takes them back in order with their decisions. The items are decided in the caller's process until that has
taken `IN_PROCESS_CPU_S` of CPU on decisions costly enough (`POOL_FROM_S` each) to be worth handing over, so that a
small rescore (a test's) or one of cheap decisions starts no worker: starting them costs a second or more of CPU, and
handing a cheap decision over costs more than taking it. The decisions are the same either way (`scoring.decide`),
and so is their order: where a decision is taken depends on time, what it decides never does. A decision the
workers lost (they died on it twice) is taken in process by the caller (`write_rescored` does so for None)."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ocllm.models import Decision, Policy, Sample, Task
from ocllm.run.decision_pool import DecisionPool
from ocllm.run.decision_spool import decode
from ocllm.scoring import decide

# The workers start once the decisions here have taken a second of CPU and cost, lately, 5 ms each or more (programs
# in the sandbox, the symbolic step): a small rescore never pays for starting them, nor one of cheap decisions for
# handing each over (measured on 100,000 lines of GSM8K, decisions of 0.3 ms: 30% more CPU in the pool, for no
# time saved). Where a decision is taken decides nothing of it (the same `decide`).
IN_PROCESS_CPU_S = 1.0
POOL_FROM_S = 0.005
_RECENT_WEIGHT = 0.1
WINDOW = 256  # records waiting for their decision in the pool at most (memory bounded, whatever the input's size)
_END = object()
_LOOK_S = 0.1  # how often a wait for a decision looks whether the caller has stopped


class _Stopped(Exception):
    """The caller stopped reading (an error, Ctrl-C): the thread ends, its workers killed."""

Item = TypeVar("Item")


class OrderedDecisions(Generic[Item]):
    """`records()`: the items in order; `decided(item)`: the decision of the item `records()` last gave (None: take
    it in process). For analysis/rescore.write_rescored(records, decided=...)."""

    def __init__(
        self,
        items: Iterable[Item],
        job: Callable[[Item], tuple[Task, Sample]],
        policy: Policy,
        workers: int | None = None,
    ) -> None:
        self._source = iter(items)
        self._job = job
        self._policy = policy
        self._workers = workers
        self._current: tuple[Item, Decision | None] | None = None
        self._out: queue.Queue[Any] = queue.Queue(maxsize=WINDOW)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.worker_pids: list[int] = []  # the pool's workers, once started (what a test checks is left running)

    def records(self) -> Iterator[Item]:
        try:
            spent, recent = 0.0, 0.0  # CPU of the decisions here, in all and per decision lately (a moving mean)
            for record in self._source:
                before = time.process_time()
                self._current = (record, decide(*self._job(record), self._policy))
                took = time.process_time() - before
                spent, recent = spent + took, recent + (took - recent) * _RECENT_WEIGHT
                yield record
                if spent >= IN_PROCESS_CPU_S and recent >= POOL_FROM_S:
                    break
            else:
                return  # every item decided here
            self._thread = threading.Thread(target=self._produce, name="rescore-decisions", daemon=True)
            self._thread.start()
            while (item := self._out.get()) is not _END:
                if isinstance(item, BaseException):
                    raise item
                self._current = item
                yield item[0]
        finally:
            self.close()

    def decided(self, record: Item) -> Decision | None:
        if self._current is None or self._current[0] is not record:
            return None
        return self._current[1]

    def close(self) -> None:
        """Stop the reading thread and its workers (the caller stopped early: an error, Ctrl-C)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            while thread.is_alive():  # room for the thread's last put, so that it sees the stop
                try:
                    self._out.get_nowait()
                except queue.Empty:
                    thread.join(0.05)

    def _produce(self) -> None:
        try:
            asyncio.run(self._in_pool())
        except _Stopped:
            return
        except BaseException as exc:  # the reader's InputError, the scorer's exception: raised in the caller
            self._put(exc)
        else:
            self._put(_END)

    def _put(self, item: object) -> None:
        while not self._stop.is_set():
            try:
                self._out.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    async def _in_pool(self) -> None:
        waiting: deque[tuple[Item, asyncio.Future[Any]]] = deque()
        with DecisionPool(self._workers) as pool:
            pool.start()
            self.worker_pids = pool.pids()
            for record in self._source:
                if self._stop.is_set():
                    raise _Stopped  # the workers killed on the way out, not waited for
                waiting.append((record, pool.submit(*self._job(record), self._policy)))
                if len(waiting) >= WINDOW:
                    await self._hand_over(waiting.popleft())
            while waiting:
                await self._hand_over(waiting.popleft())

    async def _hand_over(self, pair: tuple[Item, asyncio.Future[Any]]) -> None:
        record, future = pair
        while not future.done():  # a decision may take seconds (a program in the sandbox): the caller may stop first
            await asyncio.wait([future], timeout=_LOOK_S)
            if self._stop.is_set():
                raise _Stopped
        encoded = future.result()
        # Handed over from a thread of the loop's own, so that the pool goes on reading its workers meanwhile.
        await asyncio.to_thread(self._put, (record, None if encoded is None else decode(encoded)))


def in_order(
    items: Iterable[Item], job: Callable[[Item], tuple[Task, Sample]], policy: Policy
) -> tuple[Iterator[Item], Callable[[Item], Decision | None]]:
    """The items in order and their decisions' lookup."""
    decisions = OrderedDecisions(items, job, policy)
    return decisions.records(), decisions.decided
