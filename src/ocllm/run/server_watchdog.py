"""The watchdog between ocllm and a managed server's command: it holds the command's whole process tree, so
that no process of it outlives ocllm, whatever the command does (a `sh -c` wrapper that does not exec, a
server that ignores SIGTERM, a worker that starts a session of its own) and however ocllm ends (SIGKILL and
the OOM killer included).

ocllm runs it as `python -I server_watchdog.py STATUS_FD GRACE_S COMMAND...` in a session of its own, with a
pipe on its stdin that only ocllm holds. The watchdog

- becomes a child subreaper (Linux PR_SET_CHILD_SUBREAPER): a process of the tree whose parent exits is
  re-parented to the watchdog instead of to init, so its descendants in /proc are always the whole tree,
  whatever process group or session each of them is in;
- starts the command (stdin /dev/null, its output on the watchdog's own, which is ocllm's log pipe), the
  command's process asking the kernel for SIGKILL should the watchdog itself be killed (PR_SET_PDEATHSIG);
- writes `pid N` to STATUS_FD, and `exit CODE` (negative: killed by that signal) when the command's process
  exits, at once, so that ocllm knows before the rest of the tree is stopped;
- stops the tree when its stdin reaches end of file (ocllm closed it to stop the server, or ocllm died: the
  kernel closes the pipes of a process however it ends), on SIGTERM, SIGINT or SIGHUP, and when the
  command's process exits: SIGTERM to every descendant, up to GRACE_S seconds for them to go, then SIGKILL
  to each one left, until none is. Then it exits.

A pipe rather than PR_SET_PDEATHSIG for the watchdog itself: the kernel sends that signal when the *thread*
that started the child ends, not the process. Standard library only, and run isolated (`-I`), so that the
server's environment (a PYTHONPATH of its own) cannot change the watchdog."""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_POLL_S = 0.1  # how often the tree, the pipe and the command are looked at
_KILL_LIMIT_S = 60.0  # SIGKILLed processes still there after this (stuck in the kernel): given up on


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the process group is all there is
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _descendants() -> list[int]:
    """Every live (not zombie) process below this one, read off /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold ")"
        except (OSError, IndexError):
            continue  # gone meanwhile
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Watchdog:
    def __init__(self, status_fd: int, grace_s: float, command: list[str]) -> None:
        self.status_fd = status_fd
        self.grace_s = grace_s
        self.command = command
        self.child = 0
        self.child_code: int | None = None
        self.stop_asked = False

    def run(self) -> int:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._ask_stop)
        os.set_inheritable(self.status_fd, False)  # the command does not get it
        self.child = self._start()
        self._say(f"pid {self.child}")
        while not self.stop_asked and self.child_code is None:
            self._reap()
            if self.child_code is not None:
                break
            try:
                readable, _, _ = select.select([0], [], [], _POLL_S)
                if readable and not os.read(0, 4096):
                    break  # end of file: ocllm stops the server, or is gone
            except OSError:
                break
        self._stop_tree()
        self._reap()
        return 0

    def _ask_stop(self, signum: int, frame: object) -> None:
        self.stop_asked = True

    def _start(self) -> int:
        parent = os.getpid()
        pid = os.fork()  # this process runs no thread: fork is safe, and lets the child prepare itself
        if pid:
            return pid
        try:
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # as Python found them, not as it set them
                signal.signal(sig, signal.SIG_DFL)
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:
                os._exit(1)  # the watchdog died before the request took hold
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.close(devnull)
            os.execvp(self.command[0], self.command)
        except BaseException as exc:
            os.write(2, f"ocllm: cannot start {self.command[0]!r}: {exc}\n".encode(errors="replace"))
        os._exit(127)

    def _reap(self) -> None:
        """Collect every exited child (orphans re-parented here too); note the command's own exit."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child and self.child_code is None:
                self.child_code = os.waitstatus_to_exitcode(status)
                self._say(f"exit {self.child_code}")

    def _stop_tree(self) -> None:
        if not os.path.isdir("/proc"):  # not Linux: the process group (this one too) is what can be found
            _signal_group(signal.SIGTERM)
            deadline = time.monotonic() + self.grace_s
            while self.child_code is None and time.monotonic() < deadline:
                time.sleep(_POLL_S / 2)
                self._reap()
            _signal_group(signal.SIGKILL)
        termed: set[int] = set()
        deadline = time.monotonic() + self.grace_s
        while (left := _descendants()) and time.monotonic() < deadline:
            for pid in left:
                if pid not in termed:  # each once; a process started since gets its own SIGTERM
                    termed.add(pid)
                    _signal(pid, signal.SIGTERM)
            time.sleep(_POLL_S / 2)
            self._reap()
        give_up = time.monotonic() + _KILL_LIMIT_S
        while (left := _descendants()) and time.monotonic() < give_up:
            for pid in left:
                _signal(pid, signal.SIGKILL)
            time.sleep(0.01)
            self._reap()

    def _say(self, line: str) -> None:
        with contextlib.suppress(OSError):  # ocllm is gone; the tree is stopped all the same
            os.write(self.status_fd, f"{line}\n".encode())


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(OSError):  # gone meanwhile
        os.kill(pid, sig)


def _signal_group(sig: signal.Signals) -> None:
    with contextlib.suppress(OSError):
        os.killpg(0, sig)


def main(argv: list[str]) -> int:
    status_fd, grace_s, command = int(argv[1]), float(argv[2]), argv[3:]
    return Watchdog(status_fd, grace_s, command).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
