"""A lane's managed server: started before the lane, ready once `GET <base_url>/models` answers 200, shared by
consecutive lanes with the same server table, and stopped (every process of its tree: SIGTERM, then SIGKILL
after `stop_timeout_s`) after the last of them, on Ctrl-C and on any error. No process of it outlives `ocllm`,
however ocllm ends: the command runs under a watchdog that holds its whole tree (server_watchdog.py).

A managed lane must never benchmark a server it did not start: if anything already answers on the lane's
host and port, it is refused, and that process is left alone.

Linux only: holding the whole tree takes the kernel's PR_SET_CHILD_SUBREAPER and PR_SET_PDEATHSIG (prctl) and
/proc, which macOS does not have; elsewhere a managed lane is refused in one line before anything starts
(docs/install.md), and a server started by hand is benchmarked with --no-server."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import urlsplit

import msgspec

from ocllm.errors import OcllmError
from ocllm.run.bounds import out_of_range
from ocllm.run.scrub import scrub

SERVER_LOG = "server.log"
_POLL_S = 0.25  # how often readiness and the process are checked while waiting
_LOG_LINES_KEPT = 20  # the last lines of the log, for the progress line and for errors
_LOG_LINES_SHOWN = 5  # of them, what an error quotes


# The process between ocllm and the server's command that holds the command's whole tree (server_watchdog.py).
_WATCHDOG = Path(__file__).with_name("server_watchdog.py")
_WATCHDOG_SAID_S = 30.0  # how long the watchdog may take to say the command's pid (a Python start, a busy box)
_WATCHDOG_SLACK_S = 10.0  # beyond stop_timeout_s, for the watchdog to finish its SIGKILLs and exit


class Waiting(Protocol):
    """Told how the start goes: now and then while the server loads, and once (`final`) when it is ready."""

    def __call__(self, text: str, *, final: bool = False) -> None: ...


def _quiet(text: str, *, final: bool = False) -> None:
    pass


def env_path(env: dict[str, str]) -> str | None:
    """The PATH the command will be looked up on: the table's own, else ocllm's."""
    return env.get("PATH", os.environ.get("PATH"))


class ServerSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A lane's `[lanes.NAME.server]` table (or `[defaults.server]`, which a lane's table replaces whole)."""

    command: list[str] | str  # a list, or a string split as a POSIX shell would split it (no shell runs it)
    env: dict[str, str] = msgspec.field(default_factory=dict)  # added to ocllm's environment
    cwd: str | None = None
    ready_timeout_s: float = 1800.0  # big models load slowly
    stop_timeout_s: float = 30.0

    def argv(self) -> list[str]:
        return shlex.split(self.command) if isinstance(self.command, str) else list(self.command)


def settings_problems(settings: ServerSettings) -> list[str]:
    """What is wrong with a server table, found when the lanes file is read."""
    problems = []
    try:
        argv = settings.argv()
    except ValueError as exc:  # shlex: an unclosed quote
        return [f"server.command cannot be split: {exc}"]
    if not argv or not argv[0]:
        problems.append("server.command is empty")
    # What the kernel cannot take (execve refuses a NUL byte, and an environment name holding "="), refused
    # in one line here rather than as a traceback when the server is started.
    if any("\0" in arg for arg in argv):
        problems.append("server.command holds a NUL byte")
    for name, value in settings.env.items():
        if not name or "=" in name or "\0" in name:
            problems.append(f"server.env name {name!r}: a name must be non-empty, without '=' or a NUL byte")
        elif "\0" in value:
            problems.append(f"server.env {name}: the value holds a NUL byte")
    if settings.cwd is not None and "\0" in settings.cwd:
        problems.append("server.cwd holds a NUL byte")
    for name in ("ready_timeout_s", "stop_timeout_s"):
        problem = out_of_range(f"server.{name}", getattr(settings, name))
        if problem is not None:
            problems.append(problem)
    return problems


class ServerFailed(OcllmError):
    """The managed server exited, or never became ready: the lane fails, a matrix goes on with the next."""


def host_and_port(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "127.0.0.1", port


def something_answers(host: str, port: int) -> bool:
    """Whether anything accepts a connection on host:port now."""
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def unsupported_here(lane: str) -> str | None:
    """Why a managed server cannot be started on this system (not Linux), in one line; None on Linux."""
    if sys.platform.startswith("linux"):
        return None
    return (
        f"lane {lane!r}: managed servers ([server] tables) run on Linux only (they hold the server's process tree "
        f"with prctl and /proc), not on {sys.platform}: start the server yourself and pass --no-server"
    )


class ManagedServer:
    """One started server process (in its own process group), its log, and what it served."""

    def __init__(self, settings: ServerSettings, base_url: str, api_key: str | None = None) -> None:
        self.settings = settings
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._log_lock = threading.Lock()
        self._pump: threading.Thread | None = None
        self.last_lines: collections.deque[str] = collections.deque(maxlen=_LOG_LINES_KEPT)
        self.started_at: str | None = None
        self.ready_at: str | None = None
        self.models: list[str] = []
        self._death: str | None = None
        # What the watchdog says of the command's own process: its pid, and its exit code once it exits.
        self._status: threading.Thread | None = None
        self._pid_said = threading.Event()
        self._server_pid: int | None = None
        self._server_exit: int | None = None
        self._began = 0.0
        self.ready_after_s: float | None = None

    # --- starting ---------------------------------------------------------------------------------------

    def start(self, log_path: Path, lane: str, waiting: Waiting) -> None:
        """Start the command, its output going to `log_path`, and wait until it serves; or stop it and raise
        ServerFailed with the last lines of its log."""
        if (problem := unsupported_here(lane)) is not None:
            raise OcllmError(problem)  # not ServerFailed: no lane of this system can start one, so a matrix stops
        host, port = host_and_port(self.base_url)
        if something_answers(host, port):
            raise OcllmError(
                f"lane {lane!r}: something already answers on {host}:{port}; a managed lane only benchmarks a "
                "server it started itself (stop that process, or pass --no-server to use it)"
            )
        argv = self.settings.argv()
        program = argv[0]
        where = Path(self.settings.cwd or ".") / program
        if shutil.which(program, path=env_path(self.settings.env)) is None and not where.is_file():
            raise ServerFailed(f"lane {lane!r}: cannot start the server: {program!r} is not a program on PATH")
        self.attach_log(log_path)
        env = {**os.environ, **self.settings.env}
        status_read, status_write = os.pipe()
        grace = repr(self.settings.stop_timeout_s)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", str(_WATCHDOG), str(status_write), grace, *argv],
                # Only ocllm holds this pipe: its end of file, however ocllm ends, makes the watchdog stop the tree.
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=self.settings.cwd,
                env=env,
                pass_fds=(status_write,),
                start_new_session=True,  # its own session and group, out of reach of the terminal's Ctrl-C
            )
        except OSError as exc:
            os.close(status_read)
            raise ServerFailed(f"lane {lane!r}: cannot start the server {program!r}: {exc}") from None
        finally:
            os.close(status_write)
        self.started_at = _now()
        self._began = time.monotonic()
        self._status = threading.Thread(target=self._read_status, args=(status_read,), name="server-status")
        self._status.daemon = True
        self._status.start()
        self._pump = threading.Thread(target=self._copy_output, name="server-log", daemon=True)
        self._pump.start()
        self._pid_said.wait(timeout=_WATCHDOG_SAID_S)
        try:
            self._wait_ready(lane, waiting)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, lane: str, waiting: Waiting) -> None:
        limit = self.settings.ready_timeout_s
        while True:
            # From the start, the watchdog's own start included: the limit and "ready after N s" on one clock.
            elapsed = time.monotonic() - self._began
            code = self.exit_code()
            if code is not None:
                raise ServerFailed(
                    f"lane {lane!r}: the server exited with code {code} before it was ready{self._tail()}"
                )
            models = self._models()
            if models is not None:
                self.models = models
                self.ready_at = _now()
                self.ready_after_s = round(time.monotonic() - self._began, 1)
                waiting(f"the server of lane {lane} is ready after {self.ready_after_s:.0f} s", final=True)
                return
            if elapsed > limit:
                raise ServerFailed(
                    f"lane {lane!r}: the server was not ready after {limit:g} s (ready_timeout_s){self._tail()}"
                )
            last = self.last_lines[-1] if self.last_lines else "(no output yet)"
            waiting(f"starting the server of lane {lane}: {elapsed:.0f}s; {last}")
            time.sleep(_POLL_S)

    def _models(self) -> list[str] | None:
        """The model ids when GET /models answers 200; None while it does not."""
        request = urllib.request.Request(f"{self.base_url}/models")
        if self._api_key:
            request.add_header("Authorization", f"Bearer {self._api_key}")
        try:
            with urllib.request.urlopen(request, timeout=2.0) as response:
                if response.status != 200:
                    return None
                body = response.read()
        except (urllib.error.URLError, OSError, ValueError):
            return None
        try:
            data = json.loads(body).get("data") or []
        except (ValueError, AttributeError):
            return []
        return [str(m.get("id")) for m in data if isinstance(m, dict)]

    # --- the log ----------------------------------------------------------------------------------------

    def attach_log(self, log_path: Path) -> None:
        """Send the server's output from now on to `log_path` (each lane's run directory has its own)."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        new = open(log_path, "ab")  # noqa: SIM115 (kept open while the server runs; closed on switch and stop)
        with self._log_lock:
            old, self._log = self._log, new
        if old is not None:
            old.close()

    def _copy_output(self) -> None:
        """Each line of the server's output to the log, the API key taken out first (a server may print it:
        vLLM's --api-key): what is quoted from the log (errors, the wait) is then clean as well."""
        assert self._process is not None and self._process.stdout is not None
        for raw in self._process.stdout:
            # surrogateescape: bytes that are not UTF-8 reach the log as they came.
            line = scrub(raw.decode("utf-8", "surrogateescape"), self._api_key)
            with self._log_lock:
                if self._log is not None:
                    self._log.write(line.encode("utf-8", "surrogateescape"))
                    self._log.flush()
            text = line.encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()
            if text:
                self.last_lines.append(text)

    def _tail(self) -> str:
        if self._pump is not None:
            self._pump.join(timeout=1.0)  # the last words of a process that exited
        lines = list(self.last_lines)[-_LOG_LINES_SHOWN:]
        return "; last lines of server.log: " + " | ".join(lines) if lines else "; server.log is empty"

    # --- running and stopping ---------------------------------------------------------------------------

    def _read_status(self, fd: int) -> None:
        with open(fd, "rb") as status:
            for line in status:
                word, _, value = line.decode("ascii", "replace").strip().partition(" ")
                with contextlib.suppress(ValueError):
                    if word == "pid":
                        self._server_pid = int(value)
                        self._pid_said.set()
                    elif word == "exit":
                        self._server_exit = int(value)
        self._pid_said.set()  # the watchdog is gone: nothing more will be said

    def exit_code(self) -> int | None:
        """The command's exit code (negative: the signal that killed it) once its process has exited, said by
        the watchdog at once; the watchdog's own, should it have died without saying."""
        if self._process is None:
            return None
        if self._server_exit is not None:
            return self._server_exit
        code = self._process.poll()
        if code is None:
            return None
        if self._status is not None:
            self._status.join(timeout=1.0)  # its last word, still in the pipe
        return self._server_exit if self._server_exit is not None else code

    @property
    def pid(self) -> int | None:
        """The command's own process (the watchdog's child)."""
        return self._server_pid

    def death_reason(self) -> str:
        """Why requests to it can no longer succeed: said on every task left when it dies mid-lane (worded
        once: reading the log's last lines may wait a moment for the output still in the pipe)."""
        if self._death is None:
            self._death = f"the managed server exited (code {self.exit_code()}) during the lane{self._tail()}"
        return self._death

    def stop(self) -> None:
        """The watchdog told to stop the tree (SIGTERM to every process of it, SIGKILL after stop_timeout_s)
        and waited for; then the log is closed."""
        process = self._process
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()  # end of file: the watchdog stops the tree, then exits
        if process is not None and process.poll() is None:
            try:
                process.wait(timeout=self.settings.stop_timeout_s + _WATCHDOG_SLACK_S)
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.kill()
                process.wait()
        if process is not None:
            _signal_group(process.pid, signal.SIGKILL)  # whatever is left in its group, should the watchdog be gone
        if self._pump is not None:
            self._pump.join(timeout=2.0)
        with self._log_lock:
            if self._log is not None:
                self._log.close()
                self._log = None

    def record(self) -> dict[str, Any]:
        """What the manifest says of it: the command, the names (never the values) of its env, the times,
        and the models it served."""
        return {
            "command": self.settings.argv(),
            "env": sorted(self.settings.env),
            "cwd": self.settings.cwd,
            "pid": self.pid,
            "watchdog_pid": None if self._process is None else self._process.pid,
            "started_at": self.started_at,
            "ready_at": self.ready_at,
            "ready_after_s": self.ready_after_s,
            "models": self.models,
        }


class ServerPool:
    """The one managed server running at a time: started for a lane with a server table, kept for the next
    lane when its table (and base_url) is the same, stopped otherwise, and always at the end."""

    def __init__(self, waiting: Waiting | None = None) -> None:
        self._waiting: Waiting = waiting or _quiet
        self.current: ManagedServer | None = None
        self.starts = 0

    def __enter__(self) -> ServerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def server_for(
        self, lane: str, settings: ServerSettings | None, base_url: str, run_dir: Path, api_key: str | None
    ) -> ManagedServer | None:
        """The running server for this lane, its log now in `run_dir`; None for a lane without a table."""
        current = self.current
        same = current is not None and settings == current.settings and base_url.rstrip("/") == current.base_url
        if current is not None and same and current.exit_code() is None:
            current.attach_log(run_dir / SERVER_LOG)
            return current
        self.stop()
        if settings is None:
            return None
        server = ManagedServer(settings, base_url, api_key)
        server.start(run_dir / SERVER_LOG, lane, self._waiting)
        self.current = server
        self.starts += 1
        return server

    def stop(self) -> None:
        if self.current is not None:
            server, self.current = self.current, None
            server.stop()


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pid, sig)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
