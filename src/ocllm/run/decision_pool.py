"""Decisions taken off the event loop: a pool of worker processes running `scoring.decide`.

A run decides each answer as it arrives. Deciding in the event loop would hold up the reading of every other
response for as long as the decision takes (a math answer's symbolic check can take 100 ms and more), so the
client's figures (time to first token, latency) would measure the scorer. The runner awaits
`pool.decide(task, sample, policy)` instead; the loop only sends the records to a worker and takes the
Decision back (msgspec Structs pickle).

- Workers: `DEFAULT_WORKERS`, min(4, the CPUs this process may use); started by the "forkserver" context
  (never by forking a process that runs an event loop and threads), by `start` (the runner calls it once the
  server has answered, before the first request) or else on the first decision.
- One pool per `ocllm run` or `ocllm matrix`, shared by its lanes (`run_lane(decisions=...)`); a `run_lane`
  given none makes its own.
- A worker that dies (killed, a crash) breaks the pool: the decisions it held are taken again in a fresh pool,
  once; one that fails again comes back as None, and the run's final scoring decides that task from
  samples.jsonl as it decides every task missing from the spool. An exception raised by the scorer itself is
  not a crash: it is raised to the caller, as it would be in-process.
- Closing: at the end of a run the idle workers are joined; on an error or Ctrl-C they are terminated (and
  killed if they linger). Workers ignore SIGINT (Ctrl-C reaches the whole process group; the run, not each
  worker, handles it), and each one exits by itself once its parent has gone (checked every
  `_PARENT_CHECK_S`), so that not even a SIGKILLed ocllm leaves one behind.
- Nothing outlives ocllm (docs/architecture.md, "What dies with what"). The forkserver exits the moment ocllm
  does (multiprocessing gives it the read end of a pipe only ocllm holds). Each worker arms PR_SET_PDEATHSIG
  (`guarded.die_with_parent_thread`) against the forkserver, whose one thread forked it: the kernel kills it
  then, even inside a long C call that holds its interpreter, where a thread watching ocllm could not run. The
  pidfd thread stays for systems without prctl. multiprocessing's resource tracker exits once the last of them
  has closed its pipe; it is started by the pool with its "leaked semaphore" warning silenced, since the
  queues' semaphores are what a SIGKILL leaves and the tracker removes them then (nothing for a user to do).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver, resource_tracker
from types import TracebackType

from ocllm.models import Decision, Policy, Sample, Task
from ocllm.scoring import decide
from ocllm.scoring.guarded import die_with_parent_thread

__all__ = ["DEFAULT_WORKERS", "Decider", "DecisionPool", "LiveDecisions"]

log = logging.getLogger(__name__)

Decider = Callable[[Task, Sample, Policy], Decision]


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# Small: a decision takes milliseconds, and the workers share the CPUs with the event loop (and often the server).
DEFAULT_WORKERS = max(1, min(4, _usable_cpus()))
# Tries per decision: the first, and one in a fresh pool after a worker died.
_ATTEMPTS = 2
# How often a worker looks whether ocllm is still there, where it cannot wait for its end (no pidfd).
_PARENT_CHECK_S = 1.0
# How long closing waits for a terminated worker before killing it.
_TERMINATE_GRACE_S = 5.0


class DecisionPool:
    """`await decide(task, sample, policy)`: the Decision, taken in a worker process (None when workers died
    on it twice). `decider` is what the workers call, `scoring.decide` unless a test or benchmark gives another
    (a module-level function, so that it pickles)."""

    def __init__(self, workers: int | None = None, *, decider: Decider = decide) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers or DEFAULT_WORKERS
        self._decider = decider
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False
        self.restarts = 0  # pools replaced after a worker died
        self.lost = 0  # decisions given up after dying twice: decided again by the final scoring

    async def decide(self, task: Task, sample: Sample, policy: Policy) -> Decision | None:
        loop = asyncio.get_running_loop()
        for _ in range(_ATTEMPTS):
            executor = self._current()
            try:
                return await loop.run_in_executor(executor, self._decider, task, sample, policy)
            except BrokenProcessPool:
                log.info("a decision worker died while deciding task %s; starting new workers", task.id)
                self._replace(executor)
        self.lost += 1
        return None

    def start(self) -> None:
        """Start the workers now, and wait until each has started: the runner calls it before its first request,
        so that starting them (a forkserver, the scorer's imports: a second of CPU) does not compete with the
        reading of the first answers. A pool already started is left as it is."""
        if self._executor is not None:
            return
        executor = self._current()
        for ready in [executor.submit(_ready) for _ in range(self.workers)]:
            ready.result()

    def pids(self) -> list[int]:
        """The workers' process ids (started lazily: none before the first decision)."""
        if self._executor is None:
            return []
        # ProcessPoolExecutor keeps its processes in `_processes` (3.8-3.14); read only, for diagnostics and tests.
        return list(getattr(self._executor, "_processes", None) or {})

    def close(self, *, kill: bool = False) -> None:
        """Stop the workers: joined when idle (the end of a run), terminated with `kill` (an error, Ctrl-C)."""
        self._closed = True
        executor, self._executor = self._executor, None
        if executor is not None:
            _stop(executor, kill=kill)

    def _current(self) -> ProcessPoolExecutor:
        if self._closed:
            raise RuntimeError("the decision pool is closed")
        if self._executor is None:
            _start_resource_tracker()
            context = multiprocessing.get_context("forkserver")
            # The forkserver imports the scorer once; every worker forked from it starts with it loaded.
            context.set_forkserver_preload(["ocllm.scoring"])
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_worker_started, initargs=(os.getpid(),)
            )
        return self._executor

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        # Several decisions fail together when a worker dies: the first one to get here replaces the pool.
        if self._executor is broken:
            self._executor = None
            self.restarts += 1
            _stop(broken, kill=True)

    def __enter__(self) -> DecisionPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close(kill=kind is not None)


def _stop(executor: ProcessPoolExecutor, *, kill: bool) -> None:
    if not kill:
        executor.shutdown(wait=True, cancel_futures=True)
        return
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    deadline = time.monotonic() + _TERMINATE_GRACE_S
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (once per process; the forkserver would start it otherwise) with
    its warning about leaked semaphores silenced: after a SIGKILL of ocllm it removes the pool's queue semaphores
    and says so on the console, which tells a user nothing to do. The filter is the tracker's alone (its
    environment at start); a warning of ocllm's own is untouched."""
    with _tracker_lock:
        before = os.environ.get("PYTHONWARNINGS")
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [before, _TRACKER_QUIET]))
        try:
            resource_tracker.ensure_running()
        finally:
            if before is None:
                del os.environ["PYTHONWARNINGS"]
            else:
                os.environ["PYTHONWARNINGS"] = before


_TRACKER_QUIET = "ignore::UserWarning:multiprocessing.resource_tracker"
_tracker_lock = threading.Lock()


def _ready() -> None:
    """What `start` asks of each worker: nothing, once it is there."""


def _worker_started(parent: int) -> None:
    """In each worker, first: Ctrl-C is the run's to handle, and the worker goes when `parent` (ocllm) goes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The forkserver forked this worker from its one thread and exits when ocllm does: dying with it is dying with
    # ocllm, at once and whatever this worker is doing. (If it has gone already, the thread below sees ocllm gone.)
    _let_the_forkserver_see_ocllm_go()
    die_with_parent_thread()
    # Neither the worker's parent (the forkserver) nor its queue tells it that ocllm has gone: the forkserver
    # stays as long as any worker does (each holds its "alive" pipe), and the queue's pipe too. So a thread
    # waits for ocllm's end itself: on a pidfd where there is one (Linux), else by looking every few seconds.
    threading.Thread(target=_exit_with, args=(parent,), name="exit-with-ocllm", daemon=True).start()


def _let_the_forkserver_see_ocllm_go() -> None:
    """Close this worker's copy of the forkserver's "alive" pipe. The forkserver exits when that pipe's write end
    is closed everywhere, and multiprocessing hands every worker a copy (for processes a worker would start through
    the same forkserver, which ours never do): held here, a SIGKILLed ocllm leaves the forkserver waiting on its
    workers, and its workers (dying with it) on it. The attribute is multiprocessing's (3.4-3.14); where it is not
    there, nothing is closed and the watch thread remains."""
    server = getattr(forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(alive, int):
        with contextlib.suppress(OSError):
            os.close(alive)
        server._forkserver_alive_fd = None  # type: ignore[union-attr]


def _exit_with(parent: int) -> None:
    try:
        handle = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(0)  # gone already
    except (AttributeError, OSError):
        handle = None
    if handle is not None:
        select.select([handle], [], [])  # readable once the process has ended, however it ended
        os._exit(0)
    while True:
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        time.sleep(_PARENT_CHECK_S)


class LiveDecisions:
    """A run's decisions while it streams: `add` hands an answer to the pool and returns at once (unless
    `limit` decisions are already waiting: then the caller waits, so a scorer slower than the server holds the
    requests back instead of piling up answers in memory); `on_decided(task, sample, decision)` is called in
    the event loop as each decision comes back (None: lost, see DecisionPool); `drain` waits for the rest."""

    def __init__(
        self,
        pool: DecisionPool,
        policy: Policy,
        on_decided: Callable[[Task, Sample, Decision | None], None],
        *,
        limit: int,
    ) -> None:
        self._pool = pool
        self._policy = policy
        self._on_decided = on_decided
        self._room = asyncio.Semaphore(max(1, limit))
        self._waiting: set[asyncio.Task[None]] = set()
        self._failure: BaseException | None = None

    async def add(self, task: Task, sample: Sample) -> None:
        if self._failure is not None:
            raise self._failure
        await self._room.acquire()
        job = asyncio.create_task(self._decide(task, sample))
        self._waiting.add(job)
        job.add_done_callback(self._done)

    async def _decide(self, task: Task, sample: Sample) -> None:
        try:
            decision = await self._pool.decide(task, sample, self._policy)
        finally:
            self._room.release()
        self._on_decided(task, sample, decision)

    def _done(self, job: asyncio.Task[None]) -> None:
        self._waiting.discard(job)
        if not job.cancelled() and job.exception() is not None and self._failure is None:
            self._failure = job.exception()  # the scorer raised: the next add, or drain, raises it

    async def drain(self) -> None:
        while self._waiting:
            await asyncio.gather(*self._waiting, return_exceptions=True)
        if self._failure is not None:
            raise self._failure

    async def cancel(self) -> None:
        """Give up the decisions still waiting (the run is ending on an error or Ctrl-C)."""
        for job in self._waiting:
            job.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*self._waiting, return_exceptions=True)
