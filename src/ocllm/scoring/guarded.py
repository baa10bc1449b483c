"""Costly checks in a child process, with limits that count the CPU time a check used, never the wall clock
(docs/scoring/math.md, M6 "the guarded child"; DESIGN.md, "Costly checks").

A check is a named function (`"package.module:function"`) run on picklable arguments in a child process: a
`Service` keeps one long-lived child per process and name (a math check costs milliseconds, starting a child and
importing sympy a second), and `run_once` starts a child for one call. `warm(names)` starts named services' children
in the background, ahead of their first call. Whatever the machine's load, the same call
comes back the same way, because every limit is one the call itself reaches:

- CPU time. The parent reads the child's CPU seconds (user + system, and those of its waited-for children) from
  /proc/<pid>/stat every `_POLL_S` and kills it once the call has used its limit; the child measures its own CPU
  time for the call (`time.process_time`) and a reply that used the limit or more counts as reaching it too, so
  that whether the parent looked in time never decides. Behind both, RLIMIT_CPU is set in the child before each
  call, `_RLIMIT_MARGIN_S` past the limit (whole seconds, counted from the child's CPU so far): it ends the child
  (SIGXCPU) where /proc cannot be read or the parent is not looking.
- Memory: RLIMIT_AS of the child (`DEFAULT_MEMORY_BYTES`, 4 GiB: generous, as sympy's working set is tens of MB).
  An allocation past it raises MemoryError in the call, which comes back as the memory limit reached; the child
  then exits, since its heap can no longer be trusted.
- A reply larger than `Limits.reply_bytes` is not sent back (an output limit).
- A wall backstop only for a call that makes no progress: when the child's CPU time has not moved for
  `Limits.stall_s` (60 s), it is killed. A running call under any load is given some CPU every scheduling period,
  far within that; only a call blocked on something (a pipe, a lock, a sleep) stops using CPU.

No child outlives what started it. It is started in a process group of its own (killed as a group when the
parent is done with it, and at exit), and sets PR_SET_PDEATHSIG (SIGKILL) first thing (Linux, through ctypes'
prctl), so that a parent killed outright (SIGKILL) takes the child with it at once, even when the child is inside
one long C call that holds its interpreter (a big-integer power). The kernel sends that signal when the *thread*
that started the child ends, not the process; so children are started by one launcher thread per process that
lives as long as the process, whichever thread asks. Where prctl is not there, a watch thread in the child ends
it when its parent has gone (best effort: it needs the child's interpreter).

Results carry one deterministic sentence: the limit reached ("reached its CPU-time limit of 5 s"), never a
measured figure, so two runs write the same bytes. This module imports the standard library only; what a child
runs is imported in the child; the /proc readers are the isolation module's (`isolation/procfs.py`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib
import json
import math
import os
import pickle
import queue
import resource
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Collection
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from typing import Any, Literal, NamedTuple, TypeVar

from ocllm.scoring.isolation.procfs import cpu_seconds

__all__ = [
    "DEFAULT_MEMORY_BYTES", "STALL_S", "Limits", "Result", "Service", "die_with_parent_thread", "run_once", "warm",
]  # fmt: skip

DEFAULT_MEMORY_BYTES = 4 * 1024**3
STALL_S = 60.0
DEFAULT_REPLY_BYTES = 16 * 1024**2
# How often the parent reads the child's CPU time while a call runs: a kill comes at most this late in wall time
# (the CPU used is what decides, and the child's own count settles any call that answered meanwhile).
_POLL_S = 0.05
# RLIMIT_CPU, the child's own backstop, sits this far past a call's limit: the parent's finer count decides first.
_RLIMIT_MARGIN_S = 1.0
_CHILD_MARK = "ocllm-guarded"  # in every child's command line, so that a person (or a test) can find it

Status = Literal["done", "raised", "limit", "lost"]
LimitKind = Literal["cpu", "memory", "stall", "reply"]


@dataclass(frozen=True)
class Limits:
    """The limits of one call. `cpu_s` counts the CPU time the call used; `stall_s` is the wall time without any
    CPU used after which it is killed; `reply_bytes` bounds its pickled result."""

    cpu_s: float
    stall_s: float = STALL_S
    reply_bytes: int = DEFAULT_REPLY_BYTES


class Result(NamedTuple):
    """What came back from a call. `done`: `value` is the function's return value. `raised`: the function
    raised; `detail` names the exception. `limit`: the call reached `limit` and was stopped. `lost`: the child
    could not start or died of something else; such a result may depend on the machine, so callers keep it out
    of any cache."""

    status: Status
    value: Any = None
    detail: str = ""
    limit: LimitKind | None = None


def run_once(function: str, args: tuple[Any, ...], limits: Limits, *, memory_bytes: int = DEFAULT_MEMORY_BYTES,
             name: str = "once") -> Result:  # fmt: skip
    """Run `function(*args)` in a child started for this call alone, then stop the child and its group."""
    try:
        child = _Child(name, memory_bytes)
    except OSError as exc:
        return Result("lost", detail=f"its process could not start: {exc}")
    try:
        return child.call(function, args, limits)
    finally:
        child.kill()


class Service:
    """One long-lived child per process, started on the first call, running one call at a time (callers from
    several threads wait their turn). `startup`, a function of no arguments run once in each new child under
    `startup_limits` and never under a call's, does the slow preparation (imports); its return value is
    `startup_value`. A child that reached a limit or died is replaced on the next call."""

    def __init__(self, name: str, *, startup: str | None = None, startup_limits: Limits | None = None,
                 memory_bytes: int = DEFAULT_MEMORY_BYTES) -> None:  # fmt: skip
        self.name = name
        self.startup = startup
        self.startup_limits = startup_limits or Limits(cpu_s=60.0)
        self.memory_bytes = memory_bytes
        self.startup_value: Any = None
        self._child: _Child | None = None
        self._lock = threading.Lock()
        _services.add(self)

    def call(self, function: str, args: tuple[Any, ...], limits: Limits) -> Result:
        with self._lock:
            child = self._ready_child()
            if isinstance(child, Result):
                return child
            result = child.call(function, args, limits)
            if result.status in ("limit", "lost"):
                child.kill()
                self._child = None
            return result

    def pid(self) -> int | None:
        """The current child's process id, if one is running (for diagnostics and tests)."""
        child = self._child
        return child.process.pid if child is not None and child.process.poll() is None else None

    def start(self) -> None:
        """Start the child now (its startup included) unless one is running: what a first call would do, without a
        call. A child that could not start is tried again by the next call."""
        with self._lock:
            self._ready_child()

    def close(self) -> None:
        """Stop the child and its process group (the next call starts a new one)."""
        with self._lock:
            if self._child is not None:
                self._child.kill()
                self._child = None

    def _ready_child(self) -> _Child | Result:
        child = self._child
        if child is not None and (child.owner != os.getpid() or child.process.poll() is not None):
            child = self._child = None  # exited (or was inherited through a fork): not ours to use
        if child is not None:
            return child
        try:
            child = _Child(self.name, self.memory_bytes)
        except OSError as exc:
            return Result("lost", detail=f"its process could not start: {exc}")
        if self.startup is not None:
            started = child.call(self.startup, (), self.startup_limits)
            if started.status != "done":
                child.kill()
                return Result("lost", detail=f"its process could not start ({started.detail})")
            self.startup_value = started.value
        self._child = child
        return child

    def _forget(self) -> None:
        # In a forked child: the parent's child process and lock are not this process's (its copy of the
        # connection is closed; the parent's stays open).
        if self._child is not None:
            with contextlib.suppress(OSError):
                self._child.conn.close()
        self._child = None
        self._lock = threading.Lock()


def warm(names: Collection[str]) -> None:
    """Start the children of this process's services named `names` in the background (one thread; the call returns
    at once), so that their start (importing sympy or jsonschema: a second or more of CPU) overlaps with other work
    instead of holding up the first call, which waits for it if it comes first. A name no service of this process has
    is passed over: warming changes no result, it only moves a child's start earlier."""
    chosen = [service for service in list(_services) if service.name in names]
    if chosen:
        threading.Thread(target=_start_each, args=(chosen,), name="ocllm-guarded-warm", daemon=True).start()


def _start_each(services: list[Service]) -> None:
    for service in services:
        service.start()


# ---- the parent's side ---------------------------------------------------------------------------------------

_services: weakref.WeakSet[Service] = weakref.WeakSet()


class _Child:
    """A child process and the connection to it, as the parent sees them."""

    def __init__(self, name: str, memory_bytes: int) -> None:
        self.conn, child_end = Pipe(duplex=True)
        config = {"path": sys.path, "fd": child_end.fileno(), "parent": os.getpid(), "memory": memory_bytes}
        argv = [sys.executable, "-c", _BOOT, f"{_CHILD_MARK}:{name}", json.dumps(config)]
        # The child's hashes are seeded, so that whatever it does with sets of strings it does the same way.
        env = {**os.environ, "PYTHONHASHSEED": "0"}

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                close_fds=True,
                pass_fds=(child_end.fileno(),),
                process_group=0,  # a group of its own, made before the command runs: killed as one
            )

        try:
            self.process = _launch(start)
        finally:
            child_end.close()
        self.owner = os.getpid()
        self.memory_bytes = memory_bytes

    def call(self, function: str, args: tuple[Any, ...], limits: Limits) -> Result:
        start = cpu_seconds(self.process.pid)
        try:
            self.conn.send((function, args, limits.cpu_s, limits.reply_bytes))
        except OSError:
            return self._died(limits)
        seen, progressed = start, time.monotonic()
        while True:
            try:
                if self.conn.poll(_POLL_S):
                    break
            except OSError:
                return self._died(limits)
            now = cpu_seconds(self.process.pid)
            if now is None:
                if self.process.poll() is not None:
                    return self._died(limits)
                continue  # no /proc here: the child's RLIMIT_CPU is the limit
            if start is not None and now - start >= limits.cpu_s:
                self.kill()
                return _cpu_limit(limits)
            if seen is None or now > seen:
                seen, progressed = now, time.monotonic()
            elif time.monotonic() - progressed >= limits.stall_s:
                self.kill()
                return Result("limit", detail=f"used no CPU time for {limits.stall_s:g} s (stalled)", limit="stall")
        try:
            status, value, used = pickle.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            return self._died(limits)
        if used >= limits.cpu_s:
            return _cpu_limit(limits)  # it answered, but only after using its limit: the same verdict as killed
        if status == "done":
            return Result("done", value)
        if status == "raised":
            return Result("raised", detail=value)
        if status == "memory":
            return Result("limit", detail=f"reached its memory limit of {_size(self.memory_bytes)}", limit="memory")
        return Result("limit", detail=f"gave a result larger than {_size(limits.reply_bytes)}", limit="reply")

    def kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)  # its group: whatever it started goes with it
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self.conn.close()

    def _died(self, limits: Limits) -> Result:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        code = self.process.returncode
        if code == -signal.SIGXCPU:
            # RLIMIT_CPU ended it: no /proc here, or the parent was not given the CPU to look in time (a loaded
            # machine). The same limit reached, in the same words.
            return _cpu_limit(limits)
        how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
        return Result("lost", detail=f"its process died ({how})")


def _cpu_limit(limits: Limits) -> Result:
    return Result("limit", detail=f"reached its CPU-time limit of {limits.cpu_s:g} s", limit="cpu")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


# The kernel's PR_SET_PDEATHSIG fires when the thread that started the child ends: children are started by a
# thread that never ends (a thread that checks a few answers and goes would otherwise take the child with it).
_T = TypeVar("_T")
_jobs: queue.Queue[tuple[Callable[[], Any], list[Any], threading.Event]] | None = None
_jobs_lock = threading.Lock()


def _launch(start: Callable[[], _T]) -> _T:
    global _jobs
    with _jobs_lock:
        if _jobs is None:
            _jobs = queue.Queue()
            threading.Thread(target=_launcher, args=(_jobs,), name="ocllm-guarded-launcher", daemon=True).start()
        jobs = _jobs
    box: list[Any] = []
    done = threading.Event()
    jobs.put((start, box, done))
    done.wait()
    ok, value = box[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def _launcher(jobs: queue.Queue[tuple[Callable[[], Any], list[Any], threading.Event]]) -> None:
    while True:
        start, box, done = jobs.get()
        try:
            box.append((True, start()))
        except BaseException as exc:  # handed to the caller, whose exception it is
            box.append((False, exc))
        done.set()


def _after_fork_in_child() -> None:
    global _jobs, _jobs_lock
    _jobs, _jobs_lock = None, threading.Lock()  # the launcher thread did not come through the fork
    for service in list(_services):
        service._forget()


def _close_all() -> None:
    for service in list(_services):
        with contextlib.suppress(Exception):
            service.close()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all)


# ---- the child's side ----------------------------------------------------------------------------------------

# The child's first lines: the parent's import path, then this module's loop. Standard library only until then.
_BOOT = (
    "import json, sys; config = json.loads(sys.argv[2]); sys.path[:] = config['path']; "
    "from ocllm.scoring.guarded import _child_main; _child_main(config)"
)


def _child_main(config: dict[str, Any]) -> None:
    _die_with_parent(int(config["parent"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU's default action would write a core file
    _set_soft(resource.RLIMIT_AS, int(config["memory"]))
    conn = Connection(int(config["fd"]))
    while True:
        try:
            function, args, cpu_s, reply_bytes = conn.recv()
        except (EOFError, OSError):
            return  # the parent is done with this child
        # RLIMIT_CPU counts this process's CPU time from its start: the call's limit is set past what it used so far.
        _set_soft(resource.RLIMIT_CPU, math.ceil(time.process_time() + cpu_s + _RLIMIT_MARGIN_S))
        start = time.process_time()
        status: str
        try:
            status, value = "done", _resolve(function)(*args)
        except MemoryError:
            status, value = "memory", None
        except Exception as exc:
            status, value = "raised", f"{type(exc).__name__}: {exc}"
        used = time.process_time() - start
        try:
            payload = pickle.dumps((status, value, used))
        except Exception as exc:
            payload = pickle.dumps(("raised", f"its result cannot be sent back: {type(exc).__name__}", used))
        if len(payload) > reply_bytes:
            payload = pickle.dumps(("reply", None, used))
        conn.send_bytes(payload)
        if status == "memory":
            return  # a MemoryError may have left any structure half-built: a fresh child serves the next call


def _resolve(function: str) -> Callable[..., Any]:
    module, _, name = function.partition(":")
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target  # type: ignore[no-any-return]


def _set_soft(which: int, value: int) -> None:
    """Set a soft limit, at most the hard one. The hard limit is left as it is: lowered, it could never be raised
    again, and each call raises RLIMIT_CPU's soft limit past the last."""
    _, hard = resource.getrlimit(which)
    resource.setrlimit(which, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))


_PR_SET_PDEATHSIG = 1


def die_with_parent_thread() -> bool:
    """Ask the kernel to SIGKILL this process when the thread that started it ends (PR_SET_PDEATHSIG): its
    parent killed outright included, and whatever this process is doing (a long C call holding its interpreter).
    False where prctl is not there (not Linux). Shared by every child ocllm starts (the decision pool's workers
    too); the caller checks afterwards that its parent is still the one it expects, since it may have gone first."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        return bool(prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when the thread that started it ends (its process killed outright included); a
    watch thread where prctl is not available."""
    armed = die_with_parent_thread()
    if os.getppid() != parent:
        os._exit(1)  # the parent went before the signal was armed
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), name="ocllm-guarded-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)
