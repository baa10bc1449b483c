"""The decision pool's worker processes: one process each, with a pipe for batches of jobs in and one for their
outcomes back, whose ends in ocllm the event loop reads and writes itself (non-blocking, `add_reader`).

No thread of ocllm touches a worker. With concurrent.futures' process pool, two threads of ocllm (its manager
and its queue's feeder) took the interpreter's lock for every hand-over, and on a loaded machine the event loop
waited for them to be scheduled again (issue 29: a write of a few bytes cost milliseconds in the profile).

- Started by multiprocessing's "forkserver" context (never by forking a process that runs an event loop and
  threads), which imports the scorer once (`ocllm.scoring`, preloaded); the decider goes to the worker once, at
  its start. A worker says it is ready (one message, None) once it has started; then it starts the guarded
  services it was asked to warm (`DecisionPool(warm=...)`), in the background.
- Messages are multiprocessing's (`Connection.send`/`recv` in the worker: a 4-byte big-endian length, -1 and an
  8-byte one past 2 GiB, then a pickle); ocllm frames and reads them itself, so that a reply half-written never
  holds its event loop.
- In each worker, first: Ctrl-C is the run's to handle (SIGINT ignored), and the worker goes when ocllm goes
  (PR_SET_PDEATHSIG against the forkserver, which exits with ocllm; a pidfd thread where there is no prctl).
  A worker whose pipe of jobs is closed exits; one that dies is seen by the end of its pipe of outcomes.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import select
import signal
import struct
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from multiprocessing import forkserver, resource_tracker
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from typing import Any

import msgspec

from ocllm import scoring
from ocllm.models import Decision, Policy, Sample, Task
from ocllm.run.decision_spool import EncodedDecision, encode
from ocllm.scoring import guarded
from ocllm.scoring.guarded import die_with_parent_thread

__all__ = ["DECIDE", "NEXT_TURN", "Job", "Worker", "context"]

Decider = Callable[[Task, Sample, Policy], Decision]
# What a worker is asked: a decision (DECIDE), or what a conversation sends next (NEXT_TURN: `scoring.next_turn`,
# whose tool calls run against the task's environment here, off the event loop), of a task, a sample, a policy.
DECIDE, NEXT_TURN = "decide", "next_turn"
Job = tuple[str, Task, Sample, Policy]
# How often a worker looks whether ocllm is still there, where it cannot wait for its end (no pidfd).
_PARENT_CHECK_S = 1.0
# How long stopping waits for a worker before killing it.
_TERMINATE_GRACE_S = 5.0
_READ_BYTES = 1 << 20


def context() -> ForkServerContext:
    """multiprocessing's forkserver context, its resource tracker started quietly first, the scorer preloaded."""
    _start_resource_tracker()
    chosen: ForkServerContext = multiprocessing.get_context("forkserver")
    # The forkserver imports the scorer once; every worker forked from it starts with it loaded.
    chosen.set_forkserver_preload(["ocllm.scoring"])
    return chosen


class Worker:
    """One worker process. `send` a batch of jobs (only when it has none: one batch at a time), `receive` what it
    has sent back (its readiness, then the outcome of each job, in order, as each is decided), `stop` it. The two
    pipe ends kept here are non-blocking: `send` and `receive` never wait for the worker."""

    def __init__(self, chosen: ForkServerContext, decider: Decider, warm: tuple[str, ...] = ()) -> None:
        jobs_in, jobs_out = chosen.Pipe(duplex=False)
        outcomes_in, outcomes_out = chosen.Pipe(duplex=False)
        self.process = chosen.Process(
            target=_serve, args=(jobs_in, outcomes_out, decider, os.getpid(), warm), name="ocllm-decisions", daemon=True
        )
        self.process.start()
        # The worker holds its ends now: closed here, so that its death reads as the end of its pipe of outcomes.
        jobs_in.close()
        outcomes_out.close()
        self._jobs: Connection = jobs_out
        self._outcomes: Connection = outcomes_in
        os.set_blocking(self._jobs.fileno(), False)
        os.set_blocking(self._outcomes.fileno(), False)
        self._unread = bytearray()
        self._unsent = memoryview(b"")
        self.ready = False
        # What the pool keeps with it: the decisions sent and not yet back, the sizes of the batches they came in,
        # and the event loop that reads it.
        self.batch: deque[Any] = deque()
        self.sizes: deque[int] = deque()
        self.loop: Any = None

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def flush_done(self) -> bool:
        """Whether the last batch sent has all gone into the pipe (another may be sent)."""
        return not self._unsent

    @property
    def outcomes_fd(self) -> int:
        return self._outcomes.fileno()

    @property
    def jobs_fd(self) -> int:
        return self._jobs.fileno()

    def send(self, jobs: list[Job]) -> bool:
        """Start writing a batch; True when all of it went, else `flush` once the pipe takes more."""
        payload = pickle.dumps(jobs, protocol=pickle.HIGHEST_PROTOCOL)
        size = len(payload)
        header = struct.pack("!i", size) if size <= 0x7FFFFFFF else struct.pack("!iQ", -1, size)
        self._unsent = memoryview(header + payload)
        return self.flush()

    def flush(self) -> bool:
        """Write what the pipe takes now (BrokenPipeError: the worker has gone). True when nothing is left."""
        while self._unsent:
            try:
                written = os.write(self.jobs_fd, self._unsent)
            except BlockingIOError:
                return False
            self._unsent = self._unsent[written:]
        return True

    def receive(self) -> tuple[list[Any], bool]:
        """The whole messages the worker has sent so far, and whether its end is closed (it has gone)."""
        ended = False
        while True:
            try:
                chunk = os.read(self.outcomes_fd, _READ_BYTES)
            except BlockingIOError:
                break
            if not chunk:
                ended = True
                break
            self._unread += chunk
            if len(chunk) < _READ_BYTES:
                break
        messages = []
        buffer = self._unread
        while len(buffer) >= 4:
            (size,) = struct.unpack_from("!i", buffer)
            start = 4
            if size == -1:
                if len(buffer) < 12:
                    break
                (size,) = struct.unpack_from("!Q", buffer, 4)
                start = 12
            if len(buffer) < start + size:
                break
            messages.append(pickle.loads(buffer[start : start + size]))
            del buffer[: start + size]
        return messages, ended

    def wait_ready(self) -> None:
        """Wait (blocking) for the worker's first message. RuntimeError when it died instead."""
        while not self.ready:
            select.select([self.outcomes_fd], [], [])
            messages, ended = self.receive()
            if messages:
                self.ready = True  # the first message is the readiness; nothing else was asked yet
            elif ended:
                raise RuntimeError(f"a decision worker exited as it started (exit code {self.process.exitcode})")

    def stop(self, *, kill: bool) -> None:
        """Close its pipes (an idle worker exits at once) and join it; terminated at once with `kill` (an error,
        Ctrl-C, a worker found dead), and killed if it lingers either way."""
        for end in (self._jobs, self._outcomes):
            with contextlib.suppress(OSError):
                end.close()
        with contextlib.suppress(OSError, ValueError, AssertionError):
            if kill:
                self.process.terminate()
            self.process.join(_TERMINATE_GRACE_S)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()


# --- in the worker ------------------------------------------------------------------------------------------------


def _serve(jobs: Connection, outcomes: Connection, decider: Decider, parent: int, warm: tuple[str, ...]) -> None:
    _worker_started(parent)
    try:
        outcomes.send(None)  # ready
        guarded.warm(warm)  # in the background: the first decisions are not held up by it, unless they need its child
        while True:
            # Each outcome sent as soon as it is decided, not with the batch: a slow decision (a symbolic check)
            # keeps waiting only the decisions after it, and the run's room for waiting answers frees one by one.
            for kind, task, sample, policy in jobs.recv():
                if kind == NEXT_TURN:
                    outcomes.send(_continued(task, sample, policy))
                else:
                    outcomes.send(_decided(decider, task, sample, policy))
    except (EOFError, OSError):
        return  # ocllm closed its ends: the pool is stopping


def _decided(decider: Decider, task: Task, sample: Sample, policy: Policy) -> EncodedDecision | BaseException:
    """One decision, encoded; an exception the scorer raised is its outcome (raised to its caller, as it would be
    in-process), and the batch's other decisions are taken all the same."""
    try:
        return encode(decider(task, sample, policy))
    except Exception as exc:  # carried to the caller of this one decision
        return _carried(exc)


def _continued(task: Task, sample: Sample, policy: Policy) -> bytes | BaseException:
    """What the conversation sends next, JSON-encoded (the event loop decodes a few small messages, never a
    decision); an exception the room raised is the outcome, as a decision's is."""
    try:
        return msgspec.json.encode(scoring.next_turn(task, sample, policy))
    except Exception as exc:  # carried to the conversation that asked
        return _carried(exc)


def _carried(exc: Exception) -> Exception:
    """The scorer's exception as it can travel back: its traceback in the worker as a note (the caller's own ends
    at the hand-over), and a plain RuntimeError naming it when it does not pickle."""
    where = "raised in a decision worker:\n" + "".join(traceback.format_exception(exc)).rstrip()
    try:
        pickle.dumps(exc)
    except Exception:  # any failure to pickle
        exc = RuntimeError(f"the scorer raised {type(exc).__name__}: {exc}")
    exc.add_note(where)
    return exc


WORKER_NICENESS = 10


def _worker_started(parent: int) -> None:
    """In each worker, first: Ctrl-C is the run's to handle, and the worker goes when `parent` (ocllm) goes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Below the request loop in the scheduler's eyes: where the cores are few, the decisions take what the requests
    # leave, so that the serving figures are the server's, not the scorer's (issue 45). Their checks are limited in
    # CPU time, which niceness does not change: the same decisions on a busy machine as on an idle one.
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    # The forkserver forked this worker from its one thread and exits when ocllm does: dying with it is dying with
    # ocllm, at once and whatever this worker is doing. (If it has gone already, the thread below sees ocllm gone.)
    _let_the_forkserver_see_ocllm_go()
    die_with_parent_thread()
    # Neither the worker's parent (the forkserver) nor its pipes tell it at once that ocllm has gone while it
    # decides: a thread waits for ocllm's end itself, on a pidfd where there is one (Linux), else by looking.
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


# --- multiprocessing's resource tracker ---------------------------------------------------------------------------


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (once per process; the forkserver would start it otherwise) with
    its warning about leaked resources silenced: after a SIGKILL of ocllm it cleans up after the forkserver and
    says so on the console, which tells a user nothing to do. The filter is the tracker's alone (its environment
    at start); a warning of ocllm's own is untouched."""
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
