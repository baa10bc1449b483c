"""Run one program in a sandbox of its own, and watch it: the part of the code room that must never fail
(docs/scoring/code.md, "The sandbox").

Which sandbox (`find_sandbox`, once per process): bubblewrap, else a container engine (podman, then docker), else
none, and then nothing runs: every program is refused with one sentence saying why and how to fix it. There is no
mode that runs a program outside a sandbox.

Under bubblewrap every namespace is unshared (no network, its own process table), the environment is cleared, the
host's /usr (and the interpreter's prefix, if elsewhere) is mounted read-only and nothing else of the host is (no
home, no checkout, no /etc, no sockets); a small tmpfs is home and working folder; the job's files are a read-only
folder. When ocllm runs as root, bubblewrap is started as an unprivileged user (`SANDBOX_UID`), since the process
limit does not bind root. The harness inside (`inside.py`) lowers the limits before any of the program runs.

What decides is what the program itself reaches, never how busy the machine is (rule C9):
- CPU time: the supervisor sums the CPU seconds of every process of the sandbox (from /proc, every `_POLL_S`) and
  kills the sandbox once the sum reaches the limit; RLIMIT_CPU in the sandbox is the backstop.
- Wall time, counted as the time the program was not waiting for a CPU: elapsed time less the time its
  processes spent runnable but not running (/proc/<pid>/schedstat). A program that sleeps or blocks reaches it; a
  program slowed by other work on the machine does not. Behind it, `_BACKSTOP_FACTOR` times the limit of plain
  elapsed time, for a machine so loaded that even that count cannot be trusted (said as such).
- Output: each stream is read as it comes and the sandbox is killed once one passes its limit.
Killing the sandbox is killing bubblewrap: its child dies with it (--die-with-parent) and the kernel then ends every
process of the sandbox's process table. The supervisor then checks that none is left.

This module runs in the guarded child (`runner.py` hands it over through `scoring/guarded.py`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["Found", "Ran", "Refused", "find_sandbox", "run_program"]

SANDBOX_UID = 65534  # nobody: the user a root ocllm starts the sandbox as
HEAD_BYTES = 4096  # of each stream, kept in the decision
_POLL_S = 0.05
_BACKSTOP_FACTOR = 10
_INSIDE = Path(__file__).with_name("inside.py")
_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
_JOB = "/job"
_VERSION_PROGRAM = "import sys; print(sys.version.split()[0])"


@dataclass(frozen=True)
class Found:
    kind: Literal["bubblewrap", "podman", "docker"]
    command: str  # the executable
    version: str
    interpreter: str  # the interpreter's path in the sandbox
    python_version: str
    prefix: str  # the interpreter's prefix, mounted read-only (bubblewrap)
    image: str | None = None  # a container engine's image


@dataclass(frozen=True)
class Refused:
    reason: str  # why no sandbox can run a program, and how to fix it: one sentence


@dataclass
class Ran:
    """What one program did in its sandbox."""

    report: dict[str, Any] | None  # the harness's report, None when it wrote none (the program ended it first)
    exit_status: int | None
    signal: str | None
    cpu_s: float
    wall_s: float  # elapsed, less the time the program waited for a CPU
    elapsed_s: float
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    stderr_bytes: int
    timeout: Literal["cpu", "wall", "backstop"] | None = None
    output_limit: bool = False
    survivors: int = 0  # processes of the sandbox found alive after it was ended (and then killed): should be 0
    found: Found | None = None  # the sandbox it ran in


@dataclass(frozen=True)
class Job:
    """One program to run: its kind, the program and tests as text, what it reads on stdin, its limits."""

    kind: Literal["function", "stdin"]
    program: str
    limits: dict[str, Any]  # CodeLimits' fields, with this run's `cpu_s` and `wall_s`
    tests: str = ""
    entry_point: str = ""
    stdin: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# ---- which sandbox ----------------------------------------------------------------------------------------------


@functools.cache
def find_sandbox() -> Found | Refused:
    """The sandbox this process runs programs in (OCLLM_SANDBOX: "auto", the default, or one of "bubblewrap",
    "podman", "docker" to insist on it). Probed once by running a trivial program in it."""
    wanted = os.environ.get("OCLLM_SANDBOX", "auto").strip().lower() or "auto"
    kinds = ("bubblewrap", "podman", "docker") if wanted == "auto" else (wanted,)
    if wanted not in ("auto", "bubblewrap", "podman", "docker"):
        return Refused(f"OCLLM_SANDBOX is {wanted!r}; it may be auto, bubblewrap, podman or docker")
    reasons = []
    for kind in kinds:
        found = _bubblewrap() if kind == "bubblewrap" else _container_engine(kind)
        if isinstance(found, Found):
            return found
        reasons.append(found.reason)
    how = (
        "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) on a host that "
        "allows user namespaces, or podman or docker with the image OCLLM_CODE_IMAGE names"
    )
    return Refused("no sandbox can run the programs, so none was run: " + "; ".join(reasons) + f". To fix it, {how}")


def _interpreter() -> str | None:
    chosen = os.environ.get("OCLLM_CODE_PYTHON")
    for path in (chosen,) if chosen else _PYTHONS:
        if path and os.access(path, os.X_OK):
            return path
    return None


def _bubblewrap() -> Found | Refused:
    command = shutil.which("bwrap")
    if command is None:
        return Refused("bubblewrap (bwrap) is not installed")
    python = _interpreter()
    if python is None:
        return Refused(f"no Python for the sandbox at {' or '.join(_PYTHONS)} (OCLLM_CODE_PYTHON names another)")
    version = _output([command, "--version"]).removeprefix("bubblewrap").strip() or "unknown"
    prefix = str(Path(os.path.realpath(python)).parent.parent)
    found = Found("bubblewrap", command, version, python, "", prefix)
    probe = subprocess.run(
        [*_bwrap_argv(found, None, 16 * 1024**2), "-I", "-c", _VERSION_PROGRAM],
        capture_output=True, text=True, timeout=60, **_drop_privileges(),
    )  # fmt: skip
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or [f"exit code {probe.returncode}"])[-1]
        return Refused(f"bubblewrap cannot start a sandbox here ({said}); user namespaces may be disabled")
    return Found("bubblewrap", command, version, python, probe.stdout.strip(), prefix)


def _container_engine(kind: str) -> Found | Refused:
    command = shutil.which(kind)
    if command is None:
        return Refused(f"{kind} is not installed")
    image = os.environ.get("OCLLM_CODE_IMAGE", "python:3.11-slim")
    info = subprocess.run([command, "image", "inspect", image], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        said = (info.stderr.strip().splitlines() or [""])[-1]
        return Refused(f"{kind} has no image {image} ({said}; `{kind} pull {image}` fetches it)")
    probe = subprocess.run(
        [command, "run", "--rm", "--network", "none", image, "python3", "-c", _VERSION_PROGRAM],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if probe.returncode != 0:
        return Refused(f"{kind} cannot run {image} ({(probe.stderr.strip().splitlines() or [''])[-1]})")
    version = _output([command, "--version"]).strip()
    return Found(kind, command, version, "python3", probe.stdout.strip(), "", image)  # type: ignore[arg-type]


def _output(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _drop_privileges() -> dict[str, Any]:
    """Popen's arguments that start bubblewrap as an unprivileged user when ocllm runs as root."""
    return {"user": SANDBOX_UID, "group": SANDBOX_UID, "extra_groups": []} if os.geteuid() == 0 else {}


def _bwrap_argv(found: Found, job_dir: str | None, tmpfs_bytes: int) -> list[str]:
    argv = [
        found.command, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--clearenv",
        "--setenv", "HOME", "/tmp", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "PYTHONHASHSEED", "0",
        "--ro-bind", "/usr", "/usr",
    ]  # fmt: skip
    for top in ("bin", "lib", "lib32", "lib64", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    if not found.prefix.startswith("/usr/") and found.prefix != "/usr":
        argv += ["--ro-bind", found.prefix, found.prefix]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(tmpfs_bytes), "--tmpfs", "/tmp", "--chdir", "/tmp"]
    if job_dir is not None:
        argv += ["--ro-bind", job_dir, _JOB]
    return [*argv, "--", found.interpreter]


# ---- one program ------------------------------------------------------------------------------------------------


def run_program(job: Job) -> Ran | Refused:
    """Run `job` in a sandbox of its own and return what it did (Refused: no sandbox, nothing ran)."""
    found = find_sandbox()
    if isinstance(found, Refused):
        return found
    _adopt_orphans()
    with _job_folder(job) as (folder, nonce):
        run = _run_bwrap if found.kind == "bubblewrap" else _run_container
        ran = run(found, job, folder, nonce)
    ran.found = found
    return ran


@contextlib.contextmanager
def _job_folder(job: Job) -> Iterator[tuple[str, str]]:
    """The job's files in a folder of their own, readable by the sandbox's user, removed afterwards."""
    folder = tempfile.mkdtemp(prefix="ocllm-code-")
    nonce = secrets.token_hex(16)
    try:
        os.chmod(folder, 0o755)
        spec = {"kind": job.kind, "program": f"{_JOB}/solution.py", "tests": f"{_JOB}/tests.py",
                "entry_point": job.entry_point, "limits": job.limits}  # fmt: skip
        files = {"solution.py": job.program, "tests.py": job.tests, "inside.py": _INSIDE.read_text()}
        for name, text in files.items():
            Path(folder, name).write_text(text, encoding="utf-8")
        Path(folder, "job.json").write_text(json.dumps(spec))
        Path(folder, "stdin").write_text(job.stdin, encoding="utf-8")
        for name in (*files, "job.json", "stdin"):
            os.chmod(Path(folder, name), 0o644)
        yield folder, nonce
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_prctl = ctypes.CDLL(None, use_errno=True).prctl if hasattr(ctypes, "CDLL") else None
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _adopt_orphans() -> None:
    """Make this process the one a sandbox's orphaned first process is given to, so that it reaps it."""
    if _prctl is not None:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _die_with_us() -> None:
    """In bubblewrap's process before it runs: SIGKILL it when the process that started it ends (this guarded child
    killed outright included), so that no sandbox outlives its supervisor."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def _stdin_of(job: Job, folder: str) -> Any:
    """A function task's stdin is a pipe the nonce is written to; a standard-input task's is its input's file, never
    written through a pipe while the program's output waits to be read."""
    return subprocess.PIPE if job.kind == "function" else open(Path(folder, "stdin"), "rb")


def _give_nonce(process: subprocess.Popen[bytes], job: Job, nonce: str) -> None:
    """The nonce the harness reads before any of a function task's program runs (inside.py), then end of input."""
    if job.kind == "function":
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.write(nonce.encode() + b"\n")
            process.stdin.close()


def _run_bwrap(found: Found, job: Job, folder: str, nonce: str) -> Ran:
    limits = job.limits
    report_r, report_w = os.pipe()
    info_r, info_w = os.pipe()  # bubblewrap writes the sandbox's first process's pid there, reaped afterwards
    argv = _bwrap_argv(found, folder, int(limits["file_bytes"]))
    argv[-2:-2] = ["--info-fd", str(info_w)]
    # The harness reads the job with the report descriptor's number written in (bubblewrap keeps the number).
    spec_path = Path(folder, "job.json")
    spec = json.loads(spec_path.read_text())
    spec["report_fd"] = report_w
    spec_path.write_text(json.dumps(spec))
    argv += ["-I", f"{_JOB}/inside.py", f"{_JOB}/job.json"]
    stdin = _stdin_of(job, folder)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(report_w, info_w),
            close_fds=True, process_group=0, preexec_fn=_die_with_us, **_drop_privileges(),
        )  # fmt: skip
    finally:
        os.close(report_w)
        os.close(info_w)
        if stdin is not subprocess.PIPE:
            stdin.close()
    _give_nonce(process, job, nonce)
    ran = _Watch(process, report_r, limits, started, keep=_kept(job, container=False), info_fd=info_r).run()
    if ran.report is not None and ran.report.get("status") == "passed" and ran.report.get("nonce") != nonce:
        ran.report = {"status": "forged", "message": "a report of a pass without the harness's nonce"}
    return ran


def _run_container(found: Found, job: Job, folder: str, nonce: str) -> Ran:
    """A container engine: no network, a read-only root, a small tmpfs, pids and memory limits, an unprivileged user.
    Its processes are the engine's, not this process's children, so CPU time is bounded by RLIMIT_CPU in each
    process (the harness's) and the wall limit counts elapsed time: weaker than bubblewrap under load (said in
    docs/scoring/code.md)."""
    limits = job.limits
    name = f"ocllm-code-{secrets.token_hex(8)}"
    argv = [
        found.command, "run", "--rm", "-i", "--name", name, "--network", "none", "--read-only",
        "--tmpfs", f"/tmp:rw,size={int(limits['file_bytes'])},mode=1777", "--pids-limit", str(limits["processes"]),
        "--memory", str(limits["memory_bytes"]), "--memory-swap", str(limits["memory_bytes"]),
        "--user", f"{SANDBOX_UID}:{SANDBOX_UID}", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "-e", "HOME=/tmp", "-w", "/tmp", "-v", f"{folder}:{_JOB}:ro", str(found.image),
        found.interpreter, "-I", f"{_JOB}/inside.py", f"{_JOB}/job.json",
    ]  # fmt: skip
    stdin = _stdin_of(job, folder)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0,
            preexec_fn=_die_with_us,
        )  # fmt: skip
    finally:
        if stdin is not subprocess.PIPE:
            stdin.close()
    _give_nonce(process, job, nonce)
    kill = [found.command, "kill", name]
    ran = _Watch(process, None, limits, started, keep=_kept(job, container=True), count_cpu=False, on_kill=kill).run()
    ran.report, ran.stderr = _report_in_stderr(ran.stderr)
    if ran.report is not None and ran.report.get("status") == "passed" and ran.report.get("nonce") != nonce:
        ran.report = {"status": "forged", "message": "a report of a pass without the harness's nonce"}
    return ran


def _kept(job: Job, *, container: bool) -> dict[str, int]:
    """How much of each stream is kept: a standard-input task's whole output (it is compared), the head of the rest;
    a container's whole stderr, where its report is the last line."""
    output = int(job.limits["output_bytes"])
    return {
        "stdout": output if job.kind == "stdin" else HEAD_BYTES,
        "stderr": output if container else HEAD_BYTES,
        "report": 1024**2,
    }


def _report_in_stderr(stderr: bytes) -> tuple[dict[str, Any] | None, bytes]:
    mark = b"\x00ocllm-report "
    at = stderr.rfind(mark)
    if at == -1:
        return None, stderr
    try:
        return json.loads(stderr[at + len(mark) :].decode()), stderr[:at]
    except ValueError:
        return None, stderr


class _Watch:
    """Reads a sandbox's streams and its report, and ends it at a limit (module docstring)."""

    def __init__(self, process: subprocess.Popen[bytes], report_fd: int | None, limits: dict[str, Any],
                 started: float, *, keep: dict[str, int], count_cpu: bool = True,
                 on_kill: list[str] | None = None, info_fd: int | None = None) -> None:  # fmt: skip
        self.process = process
        self.limits = limits
        self.started = started
        self.count_cpu = count_cpu
        self.on_kill = on_kill
        self.output_cap = int(limits["output_bytes"])
        self.keep = keep
        self.heads = {"stdout": bytearray(), "stderr": bytearray(), "report": bytearray(), "info": bytearray()}
        self.sizes = {"stdout": 0, "stderr": 0, "report": 0, "info": 0}
        self.keep["info"] = 4096
        self.selector = selectors.DefaultSelector()
        assert process.stdout is not None and process.stderr is not None
        self.selector.register(process.stdout, selectors.EVENT_READ, "stdout")
        self.selector.register(process.stderr, selectors.EVENT_READ, "stderr")
        if report_fd is not None:
            self.selector.register(report_fd, selectors.EVENT_READ, "report")
        self.report_fd = report_fd
        self.info_fd = info_fd
        if info_fd is not None:
            self.selector.register(info_fd, selectors.EVENT_READ, "info")
        self.cpu_s = 0.0
        self.waits: dict[tuple[int, bytes], float] = {}  # each process seen (by pid and start time): its CPU wait
        self.waited_s = 0.0
        self.timeout: Literal["cpu", "wall", "backstop"] | None = None
        self.output_limit = False

    def run(self) -> Ran:
        cpu_limit, wall_limit = float(self.limits["cpu_s"]), float(self.limits["wall_s"])
        try:
            while self.selector.get_map():
                for key, _ in self.selector.select(_POLL_S):
                    self._read(key)
                if self.output_limit:
                    break
                elapsed = time.monotonic() - self.started
                if self.count_cpu:
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
        finally:
            survivors = self._end()
        elapsed = time.monotonic() - self.started
        code = self.process.returncode
        report = None
        if self.sizes["report"]:
            with contextlib.suppress(ValueError):
                report = json.loads(bytes(self.heads["report"]).decode())
        exit_status, sig = _status(code)
        return Ran(
            report=report, exit_status=exit_status, signal=sig, cpu_s=round(self.cpu_s, 3),
            wall_s=round(max(0.0, elapsed - self.waited_s), 3), elapsed_s=round(elapsed, 3),
            stdout=bytes(self.heads["stdout"]), stderr=bytes(self.heads["stderr"]), stdout_bytes=self.sizes["stdout"],
            stderr_bytes=self.sizes["stderr"], timeout=self.timeout, output_limit=self.output_limit,
            survivors=survivors,
        )  # fmt: skip

    def _read(self, key: selectors.SelectorKey) -> None:
        name = key.data
        fd = key.fd
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            self.selector.unregister(key.fileobj)
            return
        self.sizes[name] += len(chunk)
        cap = self.keep[name]
        head = self.heads[name]
        if len(head) < cap:
            head += chunk[: cap - len(head)]
        if name in ("stdout", "stderr") and self.sizes[name] > self.output_cap:
            self.output_limit = True

    def _measure(self) -> None:
        """The CPU seconds of every process of the sandbox (bubblewrap and all it started, with those they waited
        for), and the time its processes spent waiting for a CPU, summed over every process seen: exact for one
        process; for several, more than the time none of them could run, which only delays the wall limit of a
        program that keeps wanting the CPU, and the CPU limit ends that one."""
        pids = _descendants(self.process.pid)
        total = 0.0
        for pid in pids:
            total += _cpu_seconds(pid)
        self.cpu_s = max(self.cpu_s, total)
        for pid, started in _with_start_times(pids):
            self.waits[pid, started] = max(self.waits.get((pid, started), 0.0), _run_delay(pid))
        self.waited_s = sum(self.waits.values())

    def _end(self) -> int:
        """Kill the sandbox unless it ended, drain what it wrote, and count (and kill) anything of it still alive."""
        before = _with_start_times(_descendants(self.process.pid)) if self.process.poll() is None else []
        if self.process.poll() is None:
            if self.count_cpu:
                self._measure()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.process.pid, signal.SIGKILL)
            if self.on_kill:
                subprocess.run(self.on_kill, capture_output=True, timeout=30, check=False)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        deadline = time.monotonic() + 1.0
        while self.selector.get_map() and time.monotonic() < deadline:
            for key, _ in self.selector.select(0.05):
                self._read(key)
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fileobj)
        self.selector.close()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        for fd in (self.report_fd, self.info_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.cpu_s = max(self.cpu_s, self._reap_first())
        return _kill_left(before)

    def _reap_first(self) -> float:
        """Reap the sandbox's first process, which bubblewrap leaves when it exits and which dies with it: this
        process is the subreaper it comes to (`_adopt_orphans`), so no zombie is left for the machine's init to
        collect. Its resource usage holds the CPU time of the program it waited for: the run's final count."""
        try:
            pid = int(json.loads(bytes(self.heads["info"]).decode())["child-pid"])
        except (ValueError, KeyError, TypeError):
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


def _descendants(pid: int) -> list[int]:
    """`pid` and every process below it, through /proc/<pid>/task/<tid>/children."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{current}/task/{tid}/children") as f:
                    queue.extend(int(child) for child in f.read().split())
            except OSError:
                continue
    return found


_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """CPU seconds of process `pid`: user and system, with those of the children it waited for."""
    fields = _stat_fields(pid)
    return 0.0 if fields is None else sum(int(x) for x in fields[11:15]) * _TICK_S


def _run_delay(pid: int) -> float:
    """Seconds process `pid` has spent runnable, waiting for a CPU (/proc/<pid>/schedstat's second field)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def _stat_fields(pid: int) -> list[bytes] | None:
    """/proc/<pid>/stat's fields after the command name (field 3, the state, first), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()


def _with_start_times(pids: list[int]) -> list[tuple[int, bytes]]:
    """Each process with its start time (stat's field 22), which tells it from a later process given its number."""
    return [(pid, fields[19]) for pid in pids if (fields := _stat_fields(pid)) is not None]


def _kill_left(processes: list[tuple[int, bytes]]) -> int:
    """Processes of a sandbox still alive a moment after it was ended (there should be none: the kernel ends a
    process table with its first process); each is killed and counted."""
    if not processes:
        return 0
    time.sleep(0.02)
    left = 0
    for pid, started in processes:
        fields = _stat_fields(pid)
        if fields is None or fields[19] != started or fields[0] in (b"Z", b"X"):
            continue
        left += 1
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return left
