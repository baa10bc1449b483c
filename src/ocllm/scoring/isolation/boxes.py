"""A group of sandboxes ("boxes") started together, joined by pipes, watched under one budget and ended together
(docs/scoring/code.md, C9 and "Trust").

Each box runs one script of its own files under the sandbox's interpreter (`python3 -I /job/<script> <fds>`), in a
sandbox of its own (`sandboxes.py`): boxes share nothing but the pipes the group names (`Link`), so a box cannot read
another's files, memory or descriptors. The script is told its descriptors' numbers as its one argument, JSON:
`{"report": 5, "calls": 6, ...}`, or, in a container (which passes no descriptor), `"stdin"`/`"stdout"` for one
incoming and one outgoing link and `"stderr"` for the report (a last line after `REPORT_MARK`).

What decides is what the boxes themselves use, never how busy the machine is (rule C9), summed over the group:
- CPU time: the CPU seconds of every process of every box (from /proc, every `_POLL_S`); the group is ended once the
  sum reaches the limit. Each box's own RLIMIT_CPU (set by its script) is the backstop.
- Wall time, counted as the time the boxes were not waiting for a CPU: elapsed time less the time their processes
  spent runnable but not running (/proc/<pid>/schedstat). Behind it, `_BACKSTOP_FACTOR` times the limit of plain
  elapsed time, for a machine so loaded that even that count cannot be trusted (said as such).
- Output: each stream is read as it comes and the group is ended once one passes its limit.
The group ends when its primary box has ended and said all it had to say; the other boxes are then ended too. Ending a
box is killing bubblewrap: its child dies with it (--die-with-parent) and the kernel then ends every process of the
box's process table; the watch then checks that none is left. Before anything starts, the group takes its memory and
files from the machine's budget (`memory_budget.py`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ocllm.scoring.isolation import procfs, seccomp
from ocllm.scoring.isolation.memory_budget import budget
from ocllm.scoring.isolation.sandboxes import (
    JOB,
    Found,
    Refused,
    adopt_orphans,
    bwrap_argv,
    container_argv,
    die_with_us,
    drop_privileges,
    find_sandbox,
    host_environment,
    info_pid,
)

__all__ = ["REPORT_MARK", "Box", "BoxRan", "Group", "GroupRan", "Link", "run_group"]

REPORT_MARK = b"\x00ocllm-report "
REPORT_BYTES = 16 * 1024**2
TAIL_BYTES = 4096
_POLL_S = 0.05
_BACKSTOP_FACTOR = 10
_DRAIN_S = 1.0  # after the end: how long what the boxes wrote is still read
# Once the primary box has ended, the others are given this long to end by themselves (a program's box ends when the
# tests close the channel) before they are killed: the outcome is settled by then, so no limit is counted meanwhile,
# and this only spares killing a box that was ending anyway.
_GRACE_S = 0.25
_QUICK_POLL_S = 0.002  # while a box's streams are closed and its process not yet reaped


@dataclass(frozen=True)
class Box:
    """One sandbox of a group: its files (its /job folder, read-only), the script of them it runs, and its limits
    (`memory_bytes`, `file_bytes`, `processes` at least: its script sets its rlimits from its own files)."""

    name: str
    files: dict[str, str]
    script: str
    memory_bytes: int
    file_bytes: int
    processes: int
    stdin_file: str | None = None  # a file of `files` given as its standard input
    keep_stdout: int = 4096  # bytes of each stream kept (all of it is counted)
    keep_stderr: int = 4096
    report: bool = False  # it writes a report (a descriptor of its own; in a container, on stderr)


@dataclass(frozen=True)
class Link:
    """A pipe from one box to another, by name (the name is how each box's script finds its descriptor)."""

    name: str
    source: str
    target: str


@dataclass(frozen=True)
class Group:
    boxes: tuple[Box, ...]
    links: tuple[Link, ...]
    primary: str  # the box whose end ends the group
    cpu_s: float
    wall_s: float
    output_bytes: int  # per stream


@dataclass
class BoxRan:
    """What one box did."""

    name: str
    exit_status: int | None
    signal: str | None
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    stderr_bytes: int
    report: bytes | None  # what its script wrote on its report channel, None when nothing
    cpu_s: float = 0.0
    stderr_tail: bytes = b""  # the last `TAIL_BYTES` of stderr (where an uncaught exception's last line is)


@dataclass
class GroupRan:
    """What a group did: each box, and the limits the group reached."""

    boxes: dict[str, BoxRan]
    cpu_s: float
    wall_s: float  # elapsed, less the time the boxes waited for a CPU
    elapsed_s: float
    timeout: Literal["cpu", "wall", "backstop"] | None = None
    output_limit: str | None = None  # the box whose stream passed the output limit
    survivors: int = 0  # processes found alive after the group was ended (and then killed): should be 0
    found: Found | None = None
    waited_for_memory_s: float = 0.0  # time spent waiting for the machine's memory budget (never a limit)


def run_group(group: Group) -> GroupRan | Refused:
    """Run the group's boxes in sandboxes of their own and return what each did (Refused: nothing ran)."""
    found = find_sandbox()
    if isinstance(found, Refused):
        return found
    holds = sum(box.memory_bytes + box.file_bytes for box in group.boxes)
    problem = budget().problem(holds)
    if problem is not None:
        return Refused(problem)
    adopt_orphans()
    with budget().taken(holds) as waited, contextlib.ExitStack() as stack:
        folders = {box.name: stack.enter_context(_folder(box)) for box in group.boxes}
        # A container engine's client reads the profile when it starts the container, after it was started here:
        # the file lasts as long as the group.
        profile = stack.enter_context(seccomp.container_profile()) if found.kind != "bubblewrap" else None
        ran = _Started(group, found, folders, profile).watch()
    ran.found = found
    ran.waited_for_memory_s = round(waited, 3)
    return ran


@contextlib.contextmanager
def _folder(box: Box) -> Iterator[str]:
    """The box's files in a folder of their own, readable by the sandbox's user, removed afterwards."""
    folder = tempfile.mkdtemp(prefix=f"ocllm-box-{box.name}-")
    try:
        os.chmod(folder, 0o755)
        for name, text in box.files.items():
            path = Path(folder, name)
            path.write_text(text, encoding="utf-8")
            os.chmod(path, 0o644)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class _Process:
    box: Box
    process: subprocess.Popen[bytes]
    info_fd: int | None  # bubblewrap's --info-fd: the first process's pid, reaped afterwards
    report_fd: int | None
    container: str | None = None  # a container's name, to kill it by


class _Started:
    """The group's boxes, started, and the watch over them (module docstring)."""

    def __init__(self, group: Group, found: Found, folders: dict[str, str], profile: str | None) -> None:
        self.group = group
        self.profile = profile
        self.found = found
        self.processes: dict[str, _Process] = {}
        self.selector = selectors.DefaultSelector()
        self.heads: dict[tuple[str, str], bytearray] = {}
        self.sizes: dict[tuple[str, str], int] = {}
        self.keep: dict[tuple[str, str], int] = {}
        self.tails: dict[tuple[str, str], bytes] = {}
        self.started = time.monotonic()
        self.cpu_s = 0.0
        self.box_cpu: dict[str, float] = {}
        self.waits: dict[tuple[int, bytes], float] = {}
        self.waited_s = 0.0
        self.timeout: Literal["cpu", "wall", "backstop"] | None = None
        self.output_limit: str | None = None
        try:
            self._start_all(folders)
        except BaseException:
            self._kill_all()
            raise

    # ---- starting ----

    def _start_all(self, folders: dict[str, str]) -> None:
        container = self.found.kind != "bubblewrap"
        pipes = {link.name: os.pipe() for link in self.group.links}
        try:
            for box in self.group.boxes:
                ends = {}
                for link in self.group.links:
                    if link.target == box.name:
                        ends[link.name] = pipes[link.name][0]
                    if link.source == box.name:
                        ends[link.name] = pipes[link.name][1]
                start = self._start_container if container else self._start_bwrap
                start(box, folders[box.name], ends)
        finally:
            for read, write in pipes.values():
                for fd in (read, write):
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def _start_bwrap(self, box: Box, folder: str, ends: dict[str, int]) -> None:
        info_r, info_w = os.pipe()
        report_r, report_w = os.pipe() if box.report else (None, None)
        fds = dict(ends)
        if report_w is not None:
            fds["report"] = report_w
        with seccomp.descriptor() as filter_fd:
            argv = bwrap_argv(self.found, folder, box.file_bytes, seccomp_fd=filter_fd)
            argv[-2:-2] = ["--info-fd", str(info_w)]
            argv += ["-I", f"{JOB}/{box.script}", json.dumps(fds)]
            passed = [info_w, *fds.values(), *([filter_fd] if filter_fd is not None else [])]
            stdin = open(Path(folder, box.stdin_file), "rb") if box.stdin_file else subprocess.DEVNULL  # noqa: SIM115
            try:
                process = subprocess.Popen(
                    argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=passed,
                    close_fds=True, process_group=0, preexec_fn=die_with_us, env=host_environment(),
                    **drop_privileges(),
                )  # fmt: skip
            finally:
                os.close(info_w)
                if report_w is not None:
                    os.close(report_w)
                if box.stdin_file:
                    stdin.close()  # type: ignore[union-attr]
        self._register(box, process, info_r, report_r)

    def _start_container(self, box: Box, folder: str, ends: dict[str, int]) -> None:
        incoming = [name for name, link in self._links_of(box, "target")]
        outgoing = [name for name, link in self._links_of(box, "source")]
        if len(incoming) > 1 or len(outgoing) > 1 or (incoming and box.stdin_file):
            raise ValueError(f"box {box.name}: a container passes one pipe each way, on its stdin and stdout")
        fds: dict[str, str] = {name: "stdin" for name in incoming} | {name: "stdout" for name in outgoing}
        if box.report:
            fds["report"] = "stderr"
        name = f"ocllm-box-{secrets.token_hex(8)}"
        limits = {"file_bytes": box.file_bytes, "memory_bytes": box.memory_bytes, "processes": box.processes}
        argv = container_argv(self.found, name, folder, limits, self.profile)
        argv += ["-I", f"{JOB}/{box.script}", json.dumps(fds)]
        if incoming:
            stdin: Any = ends[incoming[0]]
        elif box.stdin_file:
            stdin = open(Path(folder, box.stdin_file), "rb")  # noqa: SIM115 - closed once the container started
        else:
            stdin = subprocess.DEVNULL
        stdout: Any = ends[outgoing[0]] if outgoing else subprocess.PIPE
        try:
            process = subprocess.Popen(
                argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, process_group=0, preexec_fn=die_with_us,
                env=host_environment(container=True),
            )  # fmt: skip
        finally:
            if box.stdin_file and not incoming:
                stdin.close()
        self._register(box, process, None, None, container=name)

    def _links_of(self, box: Box, end: str) -> list[tuple[str, Link]]:
        return [(link.name, link) for link in self.group.links if getattr(link, end) == box.name]

    def _register(self, box: Box, process: subprocess.Popen[bytes], info_fd: int | None, report_fd: int | None,
                  container: str | None = None) -> None:  # fmt: skip
        self.processes[box.name] = _Process(box, process, info_fd, report_fd, container)
        streams: list[tuple[str, Any, int]] = []
        if process.stdout is not None:
            streams.append(("stdout", process.stdout, box.keep_stdout))
        if process.stderr is not None:
            keep = REPORT_BYTES + box.keep_stderr if container and box.report else box.keep_stderr
            streams.append(("stderr", process.stderr, keep))
        if report_fd is not None:
            streams.append(("report", report_fd, REPORT_BYTES))
        if info_fd is not None:
            streams.append(("info", info_fd, 4096))
        for stream, fileobj, keep in streams:
            key = (box.name, stream)
            self.heads[key] = bytearray()
            self.sizes[key] = 0
            self.keep[key] = keep
            self.selector.register(fileobj, selectors.EVENT_READ, key)

    # ---- watching ----

    def watch(self) -> GroupRan:
        cpu_limit, wall_limit = self.group.cpu_s, self.group.wall_s
        try:
            while not self._primary_done():
                for key, _ in self.selector.select(self._poll_s()):
                    self._read(key)
                if self.output_limit:
                    break
                elapsed = time.monotonic() - self.started
                self._measure()
                if self.cpu_s >= cpu_limit:
                    self.timeout = "cpu"
                    break
                if elapsed - self.waited_s >= wall_limit:
                    self.timeout = "wall"
                    break
                if elapsed >= _BACKSTOP_FACTOR * wall_limit:
                    self.timeout = "backstop"
                    break
            if self.timeout is None and self.output_limit is None:
                self._let_the_others_end()
        finally:
            survivors = self._end()
        elapsed = time.monotonic() - self.started
        boxes = {name: self._box_ran(name, started) for name, started in self.processes.items()}
        return GroupRan(
            boxes=boxes, cpu_s=round(self.cpu_s, 3), wall_s=round(max(0.0, elapsed - self.waited_s), 3),
            elapsed_s=round(elapsed, 3), timeout=self.timeout, output_limit=self.output_limit, survivors=survivors,
        )  # fmt: skip

    def _poll_s(self) -> float:
        """How long to wait for the boxes' streams: shortly when a box has closed all of them (it is ending), so that
        its end is seen as soon as it is reaped."""
        open_boxes = {key[0] for key in self._open_keys()}
        running = [name for name, p in self.processes.items() if p.process.returncode is None]
        return _QUICK_POLL_S if any(name not in open_boxes for name in running) else _POLL_S

    def _let_the_others_end(self) -> None:
        deadline = time.monotonic() + _GRACE_S
        while time.monotonic() < deadline and not self._all_done():
            for key, _ in self.selector.select(self._poll_s()):
                self._read(key)

    def _all_done(self) -> bool:
        return not self._open_keys() and all(p.process.poll() is not None for p in self.processes.values())

    def _primary_done(self) -> bool:
        """The primary box has ended and every stream of it has closed."""
        primary = self.group.primary
        if self.processes[primary].process.poll() is None:
            return False
        return not any(key[0] == primary for key in self._open_keys())

    def _open_keys(self) -> list[tuple[str, str]]:
        return [key.data for key in self.selector.get_map().values()]

    def _read(self, key: selectors.SelectorKey) -> None:
        box, stream = key.data
        try:
            chunk = os.read(key.fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            self.selector.unregister(key.fileobj)
            return
        self.sizes[key.data] += len(chunk)
        head, cap = self.heads[key.data], self.keep[key.data]
        if len(head) < cap:
            head += chunk[: cap - len(head)]
        if stream == "stderr":
            self.tails[key.data] = (self.tails.get(key.data, b"") + chunk)[-TAIL_BYTES:]
        if stream in ("stdout", "stderr") and self.sizes[key.data] > self._stream_cap(box, stream):
            self.output_limit = box

    def _stream_cap(self, box: str, stream: str) -> int:
        started = self.processes[box]
        if stream == "stderr" and started.container and started.box.report:
            return self.group.output_bytes + REPORT_BYTES  # the report comes on stderr there
        return self.group.output_bytes

    def _measure(self) -> None:
        """The CPU seconds of every process of every box (bubblewrap and all it started, with those they waited
        for), and the time their processes spent waiting for a CPU, summed over every process seen: exact for one
        process; for several, more than the time none of them could run, which only delays the wall limit of a group
        that keeps wanting the CPU, and the CPU limit ends that one. A container's processes are the engine's, not
        ours: there, only RLIMIT_CPU in the box counts CPU."""
        total = 0.0
        for name, started in self.processes.items():
            if started.container is not None:
                continue
            pids = procfs.descendants(started.process.pid)
            used = sum(procfs.cpu_seconds(pid) or 0.0 for pid in pids)
            self.box_cpu[name] = max(self.box_cpu.get(name, 0.0), used)
            for pid, start_time in procfs.with_start_times(pids):
                key = (pid, start_time)
                self.waits[key] = max(self.waits.get(key, 0.0), procfs.run_delay(pid))
            total += self.box_cpu[name]
        self.cpu_s = max(self.cpu_s, total)
        self.waited_s = sum(self.waits.values())

    # ---- ending ----

    def _end(self) -> int:
        """Kill every box still running, drain what they wrote, and count (and kill) anything of them still alive."""
        alive = [p for p in self.processes.values() if p.process.poll() is None]
        before = [pair for p in alive for pair in procfs.with_start_times(procfs.descendants(p.process.pid))]
        if alive:
            self._measure()
        self._kill_all()
        for started in self.processes.values():
            try:
                started.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                started.process.kill()
                started.process.wait()
        deadline = time.monotonic() + _DRAIN_S
        while self.selector.get_map() and time.monotonic() < deadline:
            for key, _ in self.selector.select(0.05):
                self._read(key)
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fileobj)
        self.selector.close()
        for started in self.processes.values():
            for stream in (started.process.stdout, started.process.stderr):
                if stream is not None:
                    stream.close()
            for fd in (started.report_fd, started.info_fd):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            reaped = self._reap_first(started.box.name)
            self.box_cpu[started.box.name] = max(self.box_cpu.get(started.box.name, 0.0), reaped)
        self.cpu_s = max(self.cpu_s, sum(self.box_cpu.values()))
        left = procfs.kill_left(before)
        procfs.reap_zombie_children()
        return left

    def _kill_all(self) -> None:
        for started in self.processes.values():
            if started.process.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(started.process.pid, signal.SIGKILL)
                if started.container:
                    kill = [self.found.command, "kill", started.container]
                    env = host_environment(container=True)
                    subprocess.run(kill, capture_output=True, timeout=30, check=False, env=env)

    def _reap_first(self, box: str) -> float:
        """Reap the box's first process, which bubblewrap leaves when it exits and which dies with it: this process
        is the subreaper it comes to, so no zombie is left for the machine's init to collect. Its resource usage holds
        the CPU time of the program it waited for: the box's final count."""
        pid = info_pid(bytes(self.heads.get((box, "info"), b"")))
        if pid is None:
            return 0.0
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                reaped, _, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                return 0.0  # not ours: another process adopted it
            if reaped == pid:
                return usage.ru_utime + usage.ru_stime
            time.sleep(0.005)
        return 0.0

    def _box_ran(self, name: str, started: _Process) -> BoxRan:
        exit_status, sig = _status(started.process.returncode)
        stderr = bytes(self.heads[(name, "stderr")])
        report: bytes | None = None
        if started.report_fd is not None:
            report = bytes(self.heads[(name, "report")]) if self.sizes[(name, "report")] else None
        elif started.container and started.box.report:
            at = stderr.rfind(REPORT_MARK)
            if at != -1:
                report, stderr = stderr[at + len(REPORT_MARK) :].rstrip(b"\n"), stderr[:at]
            stderr = stderr[: started.box.keep_stderr]
        stdout_key = (name, "stdout")
        return BoxRan(
            name=name, exit_status=exit_status, signal=sig, stdout=bytes(self.heads.get(stdout_key, b"")),
            stderr=stderr, stdout_bytes=self.sizes.get(stdout_key, 0), stderr_bytes=self.sizes[(name, "stderr")],
            report=report, cpu_s=round(self.box_cpu.get(name, 0.0), 3),
            stderr_tail=self.tails.get((name, "stderr"), b""),
        )  # fmt: skip


def _status(code: int | None) -> tuple[int | None, str | None]:
    """bubblewrap's exit code as the program's: 128 + n is death by signal n (as bubblewrap reports a child's)."""
    if code is None:
        return None, None
    if code < 0:
        return None, _signal_name(-code)
    if code > 128 and code - 128 < 65:
        return None, _signal_name(code - 128)
    return code, None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
