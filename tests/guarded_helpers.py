"""Functions the guarded child runs in tests (a child imports them by name, from the tests' import path)."""

from __future__ import annotations

import os
import time


def add(a: int, b: int) -> int:
    return a + b


def pid() -> int:
    return os.getpid()


def spin() -> None:
    """Burn CPU in Python bytecode, forever."""
    while True:
        pass


def big_power() -> int:
    """Burn CPU in one C call that holds the interpreter for minutes: a big-integer power."""
    return pow(9, 9**9)


def allocate(gib: int) -> int:
    return len(bytearray(gib * 1024**3))


def sleep_forever() -> None:
    """Use no CPU at all: only the stall backstop ends it."""
    while True:
        time.sleep(60)


def fail() -> None:
    raise ValueError("no such thing")


def large_reply(mib: int) -> bytes:
    return b"x" * (mib * 1024**2)
