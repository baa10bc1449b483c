"""The sandbox's seccomp filter (scoring/isolation/seccomp.py): its numbers against the kernel's headers, its logic
run through a small classic-BPF interpreter for each architecture, and, in real bubblewrap sandboxes started as the
code room starts them, each refused call refused with EPERM while ordinary Python (threads, subprocesses,
multiprocessing, fork, files, sockets) still works."""

from __future__ import annotations

import errno
import json
import os
import platform
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import BACKSTOP_S

from ocllm.scoring.isolation import seccomp
from ocllm.scoring.isolation.seccomp import DENIED, denied_numbers, describe, filter_program

BWRAP = shutil.which("bwrap")
PYTHON = "/usr/bin/python3"
SANDBOX_UID = 65534
NATIVE = {"x86_64": "x86_64", "aarch64": "aarch64"}.get(platform.machine())
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "i386": 0x40000003, "arm": 0x40000028}
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | errno.EPERM
# The calls the brief names: each must be refused on every architecture that has it.
REQUIRED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "mount", "umount2", "unshare",
    "setns", "personality", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
)  # fmt: skip


# ---- the numbers and the program, no process started ------------------------------------------------------------


def _header_numbers(path: Path) -> dict[str, int]:
    text = path.read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"^#define\s+__NR(?:3264)?_(\w+)\s+(\d+)\s*$", text, re.M)}


HEADERS = {
    "x86_64": [Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), Path("/usr/include/asm/unistd_64.h")],
    "aarch64": [Path("/usr/include/asm-generic/unistd.h")],  # arm64's unistd.h includes the generic table
}


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_numbers_match_the_kernel_headers(arch: str) -> None:
    header = next((path for path in HEADERS[arch] if path.is_file()), None)
    if header is None:
        pytest.skip(f"no kernel header for {arch} here ({', '.join(map(str, HEADERS[arch]))})")
    known = _header_numbers(header)
    ours = denied_numbers(arch)
    for name, number in ours.items():
        if name in known:
            assert number == known[name], f"{name} on {arch}: {number}, the header says {known[name]}"
        else:  # newer than the installed headers: only in the numbering every architecture shares (424 on)
            assert number >= 424 and denied_numbers("x86_64")[name] == denied_numbers("aarch64")[name], name
    absent = set(DENIED) - set(ours)
    assert not absent & set(known), f"{sorted(absent & set(known))} exist on {arch} but are not refused there"
    assert sum(name in known for name in ours) >= len(ours) - 3


def test_the_denied_list() -> None:
    assert set(REQUIRED) <= set(DENIED)
    assert "clone3" not in DENIED and "clone" not in DENIED  # glibc's threads
    assert len(set(DENIED)) == len(DENIED)
    assert set(denied_numbers("x86_64")) == set(DENIED)
    assert set(DENIED) - set(denied_numbers("aarch64")) == {"iopl", "ioperm", "modify_ldt", "uselib"}
    for arch in ("x86_64", "aarch64"):
        numbers = list(denied_numbers(arch).values())
        assert len(numbers) == len(set(numbers)), f"two names share a number on {arch}"


def _evaluate(program: bytes, nr: int, arch: int) -> int:
    """What the filter returns for one call: a classic-BPF interpreter for the instructions a seccomp filter of
    this shape uses (load a word of seccomp_data, jump if equal or greater or equal, return)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *([0] * 6))
    insns = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    pc = acc = 0
    for _ in range(len(insns)):  # only forward jumps: each instruction runs at most once
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35):  # BPF_JMP | BPF_JEQ / BPF_JGE | BPF_K
            taken = acc == k if code == 0x15 else acc >= k
            pc += 1 + (jt if taken else jf)
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x} at {pc}")
    raise AssertionError("the filter ran past its end")


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_filter_refuses_exactly_the_list(arch: str) -> None:
    program = filter_program(arch)
    assert program is not None and len(program) % 8 == 0 and len(program) // 8 <= 4096
    refused = set(denied_numbers(arch).values())
    for nr in range(0, 1024):
        expected = RET_EPERM if nr in refused else RET_ALLOW
        assert _evaluate(program, nr, AUDIT_ARCH[arch]) == expected, f"{arch} call {nr}"
    assert _evaluate(program, 435, AUDIT_ARCH[arch]) == RET_ALLOW  # clone3
    assert _evaluate(program, -1, AUDIT_ARCH[arch]) in (RET_ALLOW, RET_EPERM)
    foreign = "i386" if arch == "x86_64" else "arm"
    for nr in (0, 1, 20, 26, 120, 435):  # i386's getpid (20) and ptrace (26) among them
        assert _evaluate(program, nr, AUDIT_ARCH[foreign]) == RET_EPERM
        assert _evaluate(program, nr, AUDIT_ARCH["aarch64" if arch == "x86_64" else "x86_64"]) == RET_EPERM
    if arch == "x86_64":
        for nr in (0, 39, 101, 512, 547):  # x32: read, getpid, ptrace, its own rt_sigaction and pwritev2
            assert _evaluate(program, 0x40000000 | nr, AUDIT_ARCH[arch]) == RET_EPERM


def test_unknown_architecture_has_no_filter() -> None:
    assert filter_program("riscv64") is None and filter_program("mips") is None
    assert describe("riscv64") == "seccomp: none (no filter for the architecture riscv64)"
    assert describe("x86_64").startswith(f"seccomp (x86_64): {len(DENIED)} calls denied (EPERM)")
    assert describe("aarch64").startswith(f"seccomp (aarch64): {len(DENIED) - 4} calls denied (EPERM)")
    assert filter_program("arm64") == filter_program("aarch64") and filter_program("AMD64") == filter_program("x86_64")
    if NATIVE is not None:
        assert filter_program() == filter_program(NATIVE)
    assert seccomp.__doc__ is not None and all(name in seccomp.__doc__ for name in DENIED)


# ---- real sandboxes ---------------------------------------------------------------------------------------------


def _argv(seccomp_fd: int | None) -> list[str]:
    """A sandbox as scoring/isolation/sandboxes.py's `bwrap_argv` starts one, with the filter read from `seccomp_fd`."""
    assert BWRAP is not None
    argv = [
        BWRAP, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--clearenv", "--setenv", "HOME", "/tmp", "--setenv", "PATH", "/usr/bin:/bin",
        "--ro-bind", "/usr", "/usr",
    ]  # fmt: skip
    for top in ("bin", "lib", "lib32", "lib64", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--", PYTHON, "-I", "-c"]


def run_sandboxed(program: str, *args: str, filtered: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `program` with /usr/bin/python3 in a sandbox, with the filter or without, as `nobody` when root."""
    drop: dict[str, Any] = {"user": SANDBOX_UID, "group": SANDBOX_UID, "extra_groups": []} if os.geteuid() == 0 else {}
    fds: tuple[int, ...] = ()
    if filtered:
        compiled = filter_program()
        assert compiled is not None
        read, write = os.pipe()
        os.write(write, compiled)  # a few hundred bytes: far below a pipe's buffer
        os.close(write)
        fds = (read,)
    try:
        argv = [*_argv(fds[0] if fds else None), program, *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=BACKSTOP_S, pass_fds=fds, **drop)
    finally:
        for fd in fds:
            os.close(fd)


@pytest.fixture(scope="module")
def sandbox() -> None:
    if BWRAP is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    if not os.access(PYTHON, os.X_OK):
        pytest.skip(f"no {PYTHON} to run in the sandbox")
    if filter_program() is None:
        pytest.skip(f"no seccomp filter for this architecture ({platform.machine()})")
    try:
        probe = run_sandboxed("pass", filtered=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        pytest.skip(f"bubblewrap cannot start a sandbox here ({error})")
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot start a sandbox here ({probe.stderr.strip()[-300:]})")


SYSCALLS = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for name, (nr, args) in json.loads(sys.argv[1]).items():
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    out[name] = {"ret": ret, "errno": ctypes.get_errno() if ret == -1 else 0}
out["fds"] = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
print(json.dumps(out))
"""

PTRACE_ATTACH = 16
X32_GETPID = 0x40000000 | 39


def _calls(names: dict[str, int]) -> str:
    args = {"ptrace": [PTRACE_ATTACH, 1, 0, 0], "personality": [0xFFFFFFFF]}  # the rest: zeros
    return json.dumps({name: [nr, args.get(name, [0, 0, 0, 0, 0, 0])] for name, nr in names.items()})


@pytest.mark.slow
def test_each_denied_call_is_refused_with_eperm(sandbox: None) -> None:
    calls = dict(denied_numbers())
    if NATIVE == "x86_64":
        calls["x32 getpid"] = X32_GETPID
    ran = run_sandboxed(SYSCALLS, _calls(calls))
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    refused = {name: out[name] for name in calls}
    assert all(r == {"ret": -1, "errno": errno.EPERM} for r in refused.values()), refused
    assert set(REQUIRED) <= set(refused)
    assert out["fds"] == [0, 1, 2, 3]  # bubblewrap closed the filter's descriptor (3: listdir's own)


@pytest.mark.slow
def test_without_the_filter_the_same_calls_are_not_refused(sandbox: None) -> None:
    """The control: a no-op unshare and a query of personality succeed in the same sandbox without the filter, so
    the EPERM above is the filter's."""
    numbers = denied_numbers()
    ran = run_sandboxed(SYSCALLS, _calls({"unshare": numbers["unshare"], "personality": numbers["personality"]}),
                        filtered=False)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["unshare"] == {"ret": 0, "errno": 0}
    assert out["personality"]["ret"] >= 0


PYTHON_WORKS = r"""
import json, multiprocessing, os, socket, subprocess, sys, threading
results = {}
thread = threading.Thread(target=lambda: results.__setitem__("thread", threading.get_native_id()))
thread.start()
thread.join()
results["subprocess"] = subprocess.run([sys.executable, "-I", "-c", "print(6 * 7)"], capture_output=True,
                                       text=True, check=True).stdout.strip()
with multiprocessing.Pool(2) as pool:
    results["pool"] = pool.map(abs, [-1, -2, -3])
pid = os.fork()
if pid == 0:
    os._exit(7)
results["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
with open(sys.executable, "rb") as f:
    results["read"] = f.read(4).hex()
a, b = socket.socketpair()
a.sendall(b"ping")
results["socketpair"] = b.recv(4).decode()
print(json.dumps(results))
"""


@pytest.mark.slow
def test_ordinary_python_still_works(sandbox: None) -> None:
    ran = run_sandboxed(PYTHON_WORKS)
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["thread"] > 0
    assert out["subprocess"] == "42"
    assert out["pool"] == [1, 2, 3]
    assert out["fork"] == 7
    assert out["read"] == "7f454c46"  # ELF
    assert out["socketpair"] == "ping"


# mov eax, 20 (i386's getpid); int 0x80; ret: the i386 entry, from a 64-bit process
I386_GETPID = r"""
import ctypes, mmap
code = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
function = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print(function())
"""


@pytest.mark.slow
def test_an_i386_call_is_refused(sandbox: None) -> None:
    if NATIVE != "x86_64":
        pytest.skip("the i386 entry (int 0x80) is x86_64's")
    control = run_sandboxed(I386_GETPID, filtered=False)
    if control.returncode != 0 or int(control.stdout) <= 0:
        pytest.skip(f"this kernel runs no i386 call from a 64-bit process ({control.stderr.strip()[-200:]})")
    ran = run_sandboxed(I386_GETPID)
    assert ran.returncode == 0, ran.stderr
    assert int(ran.stdout) == -errno.EPERM
