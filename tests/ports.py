"""Ports for tests that run in parallel (`pytest -n auto`), on a machine other suites may share.

A server a test starts itself binds port 0 and reports the port it got (FaultServer, SimServer, the scripted
servers with `--port 0`): nothing here is needed for those. Two cases remain:

- a URL where nothing listens ("connection refused"): `refused_port()` binds a socket and keeps it bound, never
  listening, for the life of the worker. The kernel refuses connections to it, and no one else can bind it
  meanwhile (a port bound, released and handed out again is how "nobody listens here" turned into a test's
  server answering there);
- a managed server, whose command line must name its port before it starts: `reserved_port()` takes a port
  below the kernel's ephemeral range (where bind(0) and outgoing connections never land), locks it for the
  test's duration with a lock file every user of this module on the machine respects (other workers, other
  checkouts' suites), and checks that nothing else holds it; a port that is taken is skipped for the next.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

_HELD: list[socket.socket] = []  # refused ports stay bound until the worker exits
_LOCKS = Path(tempfile.gettempdir()) / "ocllm-test-ports"
_SPAN = 8000  # how many ports below the ephemeral range reserved ports come from


def refused_port() -> int:
    """A port on 127.0.0.1 bound by this process and never listened on: connecting to it is refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return int(sock.getsockname()[1])


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def reserved_ports(count: int) -> Iterator[list[int]]:
    """`count` ports for managed servers' command lines, each locked machine-wide until the block ends."""
    _LOCKS.mkdir(exist_ok=True)
    with contextlib.suppress(OSError):  # shared by every user of the machine, as /tmp is (its owner sets it)
        os.chmod(_LOCKS, 0o1777)
    high = _ephemeral_low()
    low = max(1024, high - _SPAN)
    candidates = list(range(low, high))
    random.SystemRandom().shuffle(candidates)  # workers and checkouts start at different places
    with contextlib.ExitStack() as held:
        ports: list[int] = []
        for port in candidates:
            if len(ports) == count:
                break
            try:
                fd = os.open(_LOCKS / f"{port}.lock", os.O_CREAT | os.O_RDWR, 0o666)
            except PermissionError:  # another user's lock file: theirs
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another test holds it
                os.close(fd)
                continue
            if not _bindable(port):  # something outside this scheme holds it: the next one
                os.close(fd)
                continue
            held.callback(os.close, fd)  # closing the descriptor releases the lock
            ports.append(port)
        if len(ports) < count:
            raise RuntimeError(f"no {count} free ports in {low}-{high - 1}")
        yield ports
