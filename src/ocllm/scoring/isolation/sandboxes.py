"""Which sandbox runs untrusted code here, and the command that starts one (docs/scoring/code.md, C10 and "Trust").

`find_sandbox` (once per process): bubblewrap, else a container engine (podman, then docker), else none, and then
nothing runs: every box is refused with one sentence saying why and how to fix it. There is no mode that runs code
outside a sandbox.

Under bubblewrap every namespace is unshared (no network, its own process table), no capability is kept, no user
namespace can be made inside, and a seccomp filter (`seccomp.py`) refuses the kernel calls a program has no business
making. The host's /usr (and the interpreter's prefix, if elsewhere) is mounted read-only and nothing else of the
host is (no home, no checkout, no sockets; of /etc only /etc/alternatives, Debian's symbolic links to the libraries
a library such as numpy loads). Every mount is read-only but two small tmpfs: /tmp (home and
working folder) and /dev/shm (for POSIX semaphores), which together hold at most the box's `file_bytes`. The box's
files are a read-only folder, /job. bubblewrap itself is started with an environment of three fixed variables, never
ocllm's: its first process inside the sandbox (pid 1, whose /proc/1/environ the program can read) holds nothing of
the host's, and the program's own environment is cleared and set anew. When ocllm runs as root, bubblewrap is started
as an unprivileged user (`SANDBOX_UID`), since the process limit does not bind root.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "JOB", "SANDBOX_UID", "Found", "Refused", "bwrap_argv", "container_argv", "drop_privileges", "find_sandbox",
    "host_environment",
]  # fmt: skip

SANDBOX_UID = 65534  # nobody: the user a root ocllm starts the sandbox as
JOB = "/job"  # where a box's files are, read-only
_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
_VERSION_PROGRAM = "import sys; print(sys.version.split()[0])"
# What bubblewrap (and a container engine's client) is started with: nothing of ocllm's environment, whose API keys
# a program could otherwise read in /proc/1/environ (bubblewrap's own process is pid 1 in the sandbox).
_HOST_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
# The program's environment inside, set anew after --clearenv.
_INSIDE_ENV = {
    "HOME": "/tmp", "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
}  # fmt: skip
# /dev/shm's share of a box's file bytes: enough for semaphores and a small shared array, the rest is /tmp's.
_SHM_SHARE = 16
_MIN_TMPFS_BYTES = 64 * 1024


@dataclass(frozen=True)
class Found:
    kind: Literal["bubblewrap", "podman", "docker"]
    command: str  # the executable
    version: str
    interpreter: str  # the interpreter's path in the sandbox
    python_version: str
    prefix: str  # the interpreter's prefix, mounted read-only (bubblewrap)
    image: str | None = None  # a container engine's image
    seccomp: str = ""  # the kernel-call filter in force, in words ("" for none)


@dataclass(frozen=True)
class Refused:
    reason: str  # why no sandbox can run a program, and how to fix it: one sentence


def host_environment(*, container: bool = False) -> dict[str, str]:
    """The environment bubblewrap or a container engine's client is started with: fixed, nothing of ocllm's. A
    container client also needs to find its daemon or its user's storage: those variables alone are passed on to it
    (the container's own environment is set by the command, never inherited)."""
    env = dict(_HOST_ENV)
    if container:
        for name in ("DOCKER_HOST", "DOCKER_CONFIG", "CONTAINER_HOST", "XDG_RUNTIME_DIR", "HOME"):
            if name in os.environ:
                env[name] = os.environ[name]
    return env


@functools.cache
def find_sandbox() -> Found | Refused:
    """The sandbox this process runs boxes in (OCLLM_SANDBOX: "auto", the default, or one of "bubblewrap",
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
    from ocllm.scoring.isolation import seccomp

    command = shutil.which("bwrap")
    if command is None:
        return Refused("bubblewrap (bwrap) is not installed")
    python = _interpreter()
    if python is None:
        return Refused(f"no Python for the sandbox at {' or '.join(_PYTHONS)} (OCLLM_CODE_PYTHON names another)")
    version = _output([command, "--version"]).removeprefix("bubblewrap").strip() or "unknown"
    prefix = str(Path(os.path.realpath(python)).parent.parent)
    found = Found("bubblewrap", command, version, python, "", prefix, seccomp=seccomp.describe())
    with seccomp.descriptor() as filter_fd:
        argv = bwrap_argv(found, None, 16 * 1024**2, seccomp_fd=filter_fd)
        fds = () if filter_fd is None else (filter_fd,)
        probe = subprocess.run(
            [*argv, "-I", "-c", _VERSION_PROGRAM], capture_output=True, text=True, timeout=60, pass_fds=fds,
            env=host_environment(), **drop_privileges(),
        )  # fmt: skip
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or [f"exit code {probe.returncode}"])[-1]
        return Refused(f"bubblewrap cannot start a sandbox here ({said}); user namespaces may be disabled")
    return Found("bubblewrap", command, version, python, probe.stdout.strip(), prefix, seccomp=found.seccomp)


def _container_engine(kind: str) -> Found | Refused:
    from ocllm.scoring.isolation import seccomp

    command = shutil.which(kind)
    if command is None:
        return Refused(f"{kind} is not installed")
    image = os.environ.get("OCLLM_CODE_IMAGE", "python:3.11-slim")
    env = host_environment(container=True)
    info = subprocess.run([command, "image", "inspect", image], capture_output=True, text=True, timeout=60, env=env)
    if info.returncode != 0:
        said = (info.stderr.strip().splitlines() or [""])[-1]
        return Refused(f"{kind} has no image {image} ({said}; `{kind} pull {image}` fetches it)")
    probe = subprocess.run(
        [command, "run", "--rm", "--network", "none", image, "python3", "-c", _VERSION_PROGRAM],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    if probe.returncode != 0:
        return Refused(f"{kind} cannot run {image} ({(probe.stderr.strip().splitlines() or [''])[-1]})")
    version = _output([command, "--version"]).strip()
    found = Found(kind, command, version, "python3", probe.stdout.strip(), "", image, seccomp.describe())  # type: ignore[arg-type]
    return found


def _output(argv: list[str]) -> str:
    try:
        env = host_environment(container=True)
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def drop_privileges() -> dict[str, Any]:
    """Popen's arguments that start bubblewrap as an unprivileged user when ocllm runs as root."""
    return {"user": SANDBOX_UID, "group": SANDBOX_UID, "extra_groups": []} if os.geteuid() == 0 else {}


def tmpfs_sizes(file_bytes: int) -> tuple[int, int]:
    """(/tmp, /dev/shm) sizes whose sum is `file_bytes`: what a box can write in all its mounts together."""
    shm = max(_MIN_TMPFS_BYTES, file_bytes // _SHM_SHARE)
    return max(_MIN_TMPFS_BYTES, file_bytes - shm), shm


def bwrap_argv(found: Found, job_dir: str | None, file_bytes: int, *, seccomp_fd: int | None) -> list[str]:
    """bubblewrap's command, up to and including the interpreter (its arguments follow)."""
    tmp_bytes, shm_bytes = tmpfs_sizes(file_bytes)
    argv = [
        found.command, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--clearenv",
    ]  # fmt: skip
    for name, value in _INSIDE_ENV.items():
        argv += ["--setenv", name, value]
    argv += ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "lib", "lib32", "lib64", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    if not found.prefix.startswith("/usr/") and found.prefix != "/usr":
        argv += ["--ro-bind", found.prefix, found.prefix]
    # Debian's alternatives: symbolic links only (libblas.so.3, which numpy loads, is one); nothing else of /etc.
    argv += ["--ro-bind-try", "/etc/alternatives", "/etc/alternatives"]
    argv += [
        "--proc", "/proc", "--dev", "/dev", "--size", str(tmp_bytes), "--tmpfs", "/tmp", "--remount-ro", "/dev",
        "--size", str(shm_bytes), "--tmpfs", "/dev/shm",
    ]  # fmt: skip
    if job_dir is not None:
        argv += ["--ro-bind", job_dir, JOB]
    argv += ["--remount-ro", "/", "--chdir", "/tmp"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--", found.interpreter]


def container_argv(found: Found, name: str, job_dir: str, limits: dict[str, int], profile: str | None) -> list[str]:
    """A container engine's command, up to and including the interpreter: no network, a read-only root, /tmp and
    /dev/shm as small tmpfs, pids and memory limits (tmpfs pages count against a container's memory), an unprivileged
    user, no capability, no new privileges, the same kernel calls refused (`profile`, a seccomp profile file)."""
    tmp_bytes, shm_bytes = tmpfs_sizes(int(limits["file_bytes"]))
    memory = int(limits["memory_bytes"]) + int(limits["file_bytes"])
    argv = [
        found.command, "run", "--rm", "-i", "--name", name, "--network", "none", "--read-only",
        "--tmpfs", f"/tmp:rw,size={tmp_bytes},mode=1777", "--shm-size", str(shm_bytes),
        "--pids-limit", str(limits["processes"]), "--memory", str(memory), "--memory-swap", str(memory),
        "--user", f"{SANDBOX_UID}:{SANDBOX_UID}", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
    ]  # fmt: skip
    if profile is not None:
        argv += ["--security-opt", f"seccomp={profile}"]
    for key, value in _INSIDE_ENV.items():
        argv += ["-e", f"{key}={value}"]
    return [*argv, "-w", "/tmp", "-v", f"{job_dir}:{JOB}:ro", str(found.image), found.interpreter]


_prctl = ctypes.CDLL(None, use_errno=True).prctl if hasattr(ctypes, "CDLL") else None
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def adopt_orphans() -> None:
    """Make this process the one a sandbox's orphaned first process is given to, so that it reaps it."""
    if _prctl is not None:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def die_with_us() -> None:
    """In a sandbox's first process before it runs: SIGKILL it when the process that started it ends (a guarded
    child killed outright included), so that no sandbox outlives its supervisor."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def info_pid(info: bytes) -> int | None:
    """The sandbox's first process, from what bubblewrap wrote on its --info-fd."""
    try:
        return int(json.loads(info.decode())["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None
