"""The sandbox's seccomp filter: a classic-BPF program bubblewrap loads (`--seccomp FD`) just before it starts the
program, refusing a short list of system calls with EPERM and allowing every other (an allow-list would break
arbitrary Python programs for no gain the namespaces, the dropped capabilities and the limits do not give already).

What is refused, and why (one line a group; `DENIED` lists the names in this order):
- Other processes: ptrace, process_vm_readv, process_vm_writev, process_madvise, kcmp, pidfd_getfd read, write or
  steer another process of the sandbox, the harness that writes the report among them.
- Kernel interfaces with a long record of exploitable bugs and no use in a scored program: io_uring_setup,
  io_uring_enter, io_uring_register, bpf, perf_event_open, userfaultfd, and the kernel keyrings (keyctl, add_key,
  request_key), which are not namespaced.
- Mounts and namespaces: mount, umount2, pivot_root, chroot, the new mount API (move_mount, open_tree,
  open_tree_attr, fsopen, fsconfig, fsmount, fspick, mount_setattr), unshare, setns: already refused for want of
  capabilities (--cap-drop ALL, --disable-userns); refused here as a second wall.
- Files by handle and filesystem-wide views: open_by_handle_at (reaches files outside the mounts given: the
  "shocker" escape), name_to_handle_at, fanotify_init, lookup_dcookie, quotactl, quotactl_fd.
- The whole machine: reboot, kexec_load, kexec_file_load, init_module, finit_module, delete_module, swapon,
  swapoff, acct, syslog, vhangup, settimeofday, clock_settime.
- Memory outside the box's limits: memfd_create and memfd_secret (files in no mount, whose pages no tmpfs size
  and no address-space limit bounds) and shmget (System V shared memory, held until the box's IPC namespace ends,
  detached or not).
- The execution domain: personality (turns off address-space randomisation for what it starts, or makes readable
  memory executable).
- x86_64 only: iopl, ioperm (I/O ports), modify_ldt (segment descriptors, a history of bugs), uselib (a.out).

Beyond the list: a call made through another architecture's entry (i386's `int 0x80` on x86_64, arm32's on aarch64)
is refused with EPERM, and on x86_64 so is every x32-ABI call (number with bit 0x40000000): the numbers above hold
only for the native table, and a filter that checks numbers without the architecture is bypassed through the other
table. EPERM rather than killing the process: every refusal then reads the same in the decision (the program sees an
error and its own code decides what follows), and a process that can make no foreign call succeed gains nothing by
being left alive. clone3 is allowed (glibc starts threads with it and falls back to clone only on ENOSYS), and clone's
namespace flags are not filtered: creating a namespace already fails for want of capabilities.

Syscall numbers: the kernel's tables, arch/x86/entry/syscalls/syscall_64.tbl for x86_64 and include/uapi/
asm-generic/unistd.h (from 6.11 scripts/syscall.tbl, the same numbers) for aarch64; since 424 (pidfd_send_signal)
every architecture shares one numbering. tests/test_isolation_seccomp.py compares them with the installed headers.

Standard library only: libseccomp's Python binding is not published on PyPI in a maintained form.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import platform
import struct
import tempfile
from collections.abc import Iterator

__all__ = ["DENIED", "container_profile", "describe", "descriptor", "filter_program"]

# Each refused call: (x86_64 number, aarch64 number), None where the architecture has no such call.
_NUMBERS: dict[str, tuple[int | None, int | None]] = {
    # Other processes
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "process_madvise": (440, 440),
    "kcmp": (312, 272),
    "pidfd_getfd": (438, 438),
    # Kernel interfaces with a record of exploitable bugs
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    # Mounts and namespaces
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "move_mount": (429, 429),
    "open_tree": (428, 428),
    "open_tree_attr": (467, 467),  # Linux 6.15
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "unshare": (272, 97),
    "setns": (308, 268),
    # Files by handle and filesystem-wide views
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "fanotify_init": (300, 262),
    "lookup_dcookie": (212, 18),
    "quotactl": (179, 60),
    "quotactl_fd": (443, 443),
    # The whole machine
    "reboot": (169, 142),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "acct": (163, 89),
    "syslog": (103, 116),
    "vhangup": (153, 58),
    "settimeofday": (164, 170),
    "clock_settime": (227, 112),
    # Memory outside the box's limits
    "memfd_create": (319, 279),
    "memfd_secret": (447, 447),
    "shmget": (29, 194),
    # The execution domain
    "personality": (135, 92),
    # x86_64 only
    "iopl": (172, None),
    "ioperm": (173, None),
    "modify_ldt": (154, None),
    "uselib": (134, None),
}

DENIED: tuple[str, ...] = tuple(_NUMBERS)

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR_OFFSET = 0
_ARCH_OFFSET = 4
# linux/audit.h: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_COLUMN = {"x86_64": 0, "aarch64": 1}
_MACHINE_NAMES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
_X32_SYSCALL_BIT = 0x40000000

# linux/filter.h, linux/bpf_common.h, linux/seccomp.h
_BPF_LD_W_ABS = 0x00 | 0x00 | 0x20
_BPF_JEQ_K = 0x05 | 0x10 | 0x00
_BPF_JGE_K = 0x05 | 0x30 | 0x00
_BPF_RET_K = 0x06 | 0x00
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | errno.EPERM
_BPF_MAXINSNS = 4096


def _arch(machine: str | None) -> str | None:
    """The filter's name for `machine` (default: this machine, when this Python is a 64-bit process), or None."""
    if machine is None:
        if struct.calcsize("P") != 8:  # a 32-bit or x32 userland on a 64-bit kernel: not the table we know
            return None
        machine = platform.machine()
    return _MACHINE_NAMES.get(machine.lower())


def denied_numbers(machine: str | None = None) -> dict[str, int]:
    """Each refused call that exists on `machine` (default: this one), with its number there; empty if unknown."""
    arch = _arch(machine)
    if arch is None:
        return {}
    column = _COLUMN[arch]
    found = {name: numbers[column] for name, numbers in _NUMBERS.items()}
    return {name: number for name, number in found.items() if number is not None}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)  # struct sock_filter, in this machine's byte order


def filter_program(machine: str | None = None) -> bytes | None:
    """The compiled filter for `machine` (default: this one), as bubblewrap's --seccomp reads it: an array of struct
    sock_filter. None on an architecture this module has no table for: the sandbox then runs without a filter."""
    arch = _arch(machine)
    if arch is None:
        return None
    numbers = sorted(set(denied_numbers(arch).values()))
    head = [
        _insn(_BPF_LD_W_ABS, _ARCH_OFFSET),
        _insn(_BPF_JEQ_K, _AUDIT_ARCH[arch], jt=1),
        _insn(_BPF_RET_K, _RET_EPERM),  # another architecture's entry
        _insn(_BPF_LD_W_ABS, _NR_OFFSET),
    ]
    checks = [(_BPF_JGE_K, _X32_SYSCALL_BIT)] if arch == "x86_64" else []
    checks += [(_BPF_JEQ_K, number) for number in numbers]
    # After the checks: RET ALLOW, then RET EPERM; check i jumps over the checks after it and the ALLOW.
    body = [_insn(code, k, jt=len(checks) - i) for i, (code, k) in enumerate(checks)]
    tail = [_insn(_BPF_RET_K, _RET_ALLOW), _insn(_BPF_RET_K, _RET_EPERM)]
    if len(checks) > 255 or len(head) + len(body) + len(tail) > _BPF_MAXINSNS:
        raise AssertionError("the filter's jumps do not fit a classic-BPF program")
    return b"".join(head + body + tail)


def describe(machine: str | None = None) -> str:
    """One line for the decision record: what the filter refuses, or that the sandbox has none."""
    arch = _arch(machine)
    if arch is None:
        shown = machine or platform.machine() or "unknown"
        return f"seccomp: none (no filter for the architecture {shown})"
    others = "other architectures' and x32 calls" if arch == "x86_64" else "other architectures' calls"
    return f"seccomp ({arch}): {len(denied_numbers(arch))} calls denied (EPERM), and {others}"


@functools.cache
def _this_machine() -> bytes | None:
    return filter_program()


@contextlib.contextmanager
def descriptor() -> Iterator[int | None]:
    """A descriptor bubblewrap's `--seccomp` reads this machine's filter from (a pipe, written and closed before
    bubblewrap starts: the filter is far smaller than a pipe's buffer), or None where there is no filter. Pass it
    with `pass_fds`; it is closed when the block ends."""
    program = _this_machine()
    if program is None:
        yield None
        return
    read, write = os.pipe()
    try:
        os.write(write, program)
        os.close(write)
        yield read
    finally:
        os.close(read)


@contextlib.contextmanager
def container_profile() -> Iterator[str | None]:
    """The same refusals as a container engine's seccomp profile (docker's and podman's JSON format: every call
    allowed but those listed, which fail with EPERM), in a file that lasts the block."""
    names = list(DENIED)
    profile = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [{"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM}],
    }
    fd, path = tempfile.mkstemp(prefix="ocllm-seccomp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(profile, f)
        os.chmod(path, 0o644)
        yield path
    finally:
        os.unlink(path)
