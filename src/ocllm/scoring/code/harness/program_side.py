"""A function task's program box (docs/scoring/code.md, C7 and "Trust"): the model's program runs here, alone, and
answers the tests' calls, which come on the channel from the tests' box.

It says first how the program loaded (`ready`, or why not: a syntax error, an exception while its definitions ran,
the entry point missing), then answers each call with what the entry point returned (and the arguments as they are
after the call, when the call changed them), or what it raised, or the type of a result that cannot cross. It holds
no report descriptor and nothing of the tests: all it can say is a value, and the tests' box decides what that value
is worth. When the tests' box closes the channel, it ends.

Arguments: the descriptors, JSON: {"calls": fd, "replies": fd}, either "stdin"/"stdout" in a container (the
program's own standard output then goes to standard error).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from typing import Any, NoReturn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import channel
from limits import set_limits

PROGRAM_FILE = "solution.py"
_TAIL_LINES = 12


def _descriptors(given: dict[str, Any]) -> tuple[int, int]:
    calls, replies = given["calls"], given["replies"]
    if calls == "stdin":
        calls = os.dup(0)
    if replies == "stdout":
        replies = os.dup(1)
        os.dup2(2, 1)  # a container: the channel is this box's stdout, so the program's prints go to stderr
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the program reads nothing: input() ends at once
    os.close(devnull)
    return int(calls), int(replies)


def _tail(exc: BaseException) -> list[str]:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(lines).splitlines()[-_TAIL_LINES:]


def _raised(exc: BaseException) -> list[Any]:
    return ["raised", type(exc).__name__, str(exc)[:2000], _tail(exc), isinstance(exc, MemoryError)]


def _end() -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a program may have closed or replaced them
            stream.flush()
    os._exit(0)  # no atexit handler or thread of the program's runs after the channel closed


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "job.json"), encoding="utf-8") as f:
        job = json.load(f)
    set_limits(job["limits"])
    calls, replies = _descriptors(json.loads(sys.argv[1]))
    with open(os.path.join(here, PROGRAM_FILE), encoding="utf-8") as f:
        source = f.read()
    try:
        code = compile(source, PROGRAM_FILE, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        detail = {
            "type": type(exc).__name__, "message": str(getattr(exc, "msg", exc))[:2000],
            "line": getattr(exc, "lineno", None), "text": (getattr(exc, "text", None) or "")[:500],
        }  # fmt: skip
        channel.send(replies, ["syntax_error", detail])
        _end()
    namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        exec(code, namespace)
    except BaseException as exc:
        channel.send(replies, ["load_raised", *_raised(exc)[1:]])
        _end()
    entry = namespace.get(job["entry_point"])
    if not callable(entry):
        found = "not defined" if entry is None else f"a {type(entry).__name__}, not a function"
        channel.send(replies, ["entry_point_missing", f"{job['entry_point']} is {found}"])
        _end()
    channel.send(replies, ["ready", "class" if isinstance(entry, type) else "function"])
    _serve(entry, calls, replies)


def _serve(entry: Any, calls: int, replies: int) -> NoReturn:
    """Answer calls until the tests' box closes the channel. A call names its target: None for the entry point, or
    the number of an object a call of a class entry point made (a LeetCode `Solution()`), which stays here."""
    objects: list[Any] = []
    while True:
        try:
            message = channel.receive(calls)
        except channel.Unreadable:
            _end()
        if message is None:
            _end()
        _, target, method, args, kwargs = message
        before = channel.encode([args, kwargs])
        try:
            function = entry if target is None else getattr(objects[target], method)
            result = function(*args, **kwargs)
        except BaseException as exc:
            channel.send(replies, _raised(exc))
            continue
        if target is None and isinstance(entry, type):
            objects.append(result)
            channel.send(replies, ["object", len(objects) - 1])
            continue
        try:
            after = channel.encode([args, kwargs])
            changed = None if after == before else [args, kwargs]
            channel.send(replies, ["returned", result, changed])
        except channel.CannotCross as exc:
            channel.send(replies, ["cannot_cross", exc.type_name, exc.why])
        except BaseException as exc:
            channel.send(replies, _raised(exc))


if __name__ == "__main__":
    main()
