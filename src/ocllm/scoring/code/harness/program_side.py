"""A function task's program box (docs/scoring/code.md, C7 and "Trust"): the model's program runs here, alone, and
answers the tests' calls, which come on the channel from the tests' box.

It says first how the program loaded: `ready`, with the names the program defines at its top level that the tests
may use (its functions, its classes, the modules it imported), or why not (a syntax error, an exception while its
definitions ran, the entry point missing). It then answers each message of the tests' box:
- `call`: call the entry point, another of its top-level functions or classes by name, or a method of an object it
  made, with the arguments given (plain data; `{"h": n}` names an object of this box); reply with what it returned
  (and the arguments as they are after the call, when the call changed them), or what it raised. A function's
  result must be plain data, else its type is said (`cannot_cross`); a class's (a constructor's) stays here, and the
  reply is its handle (`object`), its number in this box's table (a regular expression's match, which a program
  cannot change, is also kept as a handle);
- `get` and `set`: an attribute of such an object (a value, a handle, or `method` for a method to call), and `bool`:
  its truth. A method's result must be plain data, as a function's (an object with its own `__bool__` or `__eq__`
  returned by a method could otherwise pass a test that only looks at its truth).
It holds no report descriptor and nothing of the tests: all it can say is a value, and the tests' box decides what
that value is worth. When the tests' box closes the channel, it ends.

Arguments: the descriptors, JSON: {"calls": fd, "replies": fd}, either "stdin"/"stdout" in a container (the
program's own standard output then goes to standard error).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import channel
from limits import start_box

# Names for annotations only: a box imports as little as it can before the program runs (typing costs a start ~3 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

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
    import traceback  # only when something was raised: its imports cost every box's start

    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(lines).splitlines()[-_TAIL_LINES:]


def _raised(exc: BaseException) -> list[Any]:
    return ["raised", type(exc).__name__, str(exc)[:2000], _tail(exc), isinstance(exc, MemoryError)]


def _top_level_line(exc: BaseException) -> int | None:
    """The line of the program's top-level statement that was running when its definitions raised (what a usage line
    after the function does: docs/scoring/code.md, C8, "outside the entry point"), or None."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == PROGRAM_FILE and code.co_name == "<module>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _end() -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a program may have closed or replaced them
            stream.flush()
    os._exit(0)  # no atexit handler or thread of the program's runs after the channel closed


def _names(namespace: dict[str, Any]) -> dict[str, Any]:
    """What the program defines at its top level that the tests may name: functions, classes, imported modules."""
    functions, classes, modules = [], [], {}
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
        elif isinstance(value, type) and getattr(value, "__module__", None) == "solution":
            classes.append(name)
        elif isinstance(value, types.FunctionType) and getattr(value, "__module__", None) == "solution":
            functions.append(name)
    return {"functions": functions, "classes": classes, "modules": modules}


def main() -> None:
    here, job = start_box(__file__)
    channel.limit_frames(job["limits"]["output_bytes"])
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
        channel.send(replies, ["load_raised", *_raised(exc)[1:], _top_level_line(exc)])
        _end()
    entry = namespace.get(job["entry_point"])
    if not callable(entry):
        found = "not defined" if entry is None else f"a {type(entry).__name__}, not a function"
        channel.send(replies, ["entry_point_missing", f"{job['entry_point']} is {found}"])
        _end()
    kind = "class" if isinstance(entry, type) else "function"
    channel.send(replies, ["ready", kind, _names(namespace)])
    _Server(entry, namespace, calls, replies).serve()


class _Server:
    """Answers the tests' box until it closes the channel (module docstring)."""

    def __init__(self, entry: Any, namespace: dict[str, Any], calls: int, replies: int) -> None:
        self.entry = entry
        self.namespace = namespace
        self.calls = calls
        self.replies = replies
        self.objects: list[Any] = []  # what the program's classes made, by handle

    def handle(self, number: int) -> Any:
        if not 0 <= number < len(self.objects):
            raise channel.Unreadable(f"no object {number}")
        return self.objects[number]

    def keep(self, value: Any) -> dict[str, int]:
        """An object of the program's own classes, kept here and named by its handle."""
        for number, kept in enumerate(self.objects):
            if kept is value:
                return {"h": number}
        if getattr(type(value), "__module__", None) == "solution" or type(value) is re.Match:
            self.objects.append(value)
            return {"h": len(self.objects) - 1}
        raise channel.CannotCross(type(value).__name__)

    def keep_library(self, value: Any) -> dict[str, int]:
        """What a function may return beyond plain data: a regular expression's match (MBPP's `check_str` returns
        `re.search(...)`), which no program can subclass or change: it stays here as a handle, truthy and equal only
        to itself on the tests' side, its methods (`group`, `span`) called here."""
        if type(value) is re.Match:
            return self.keep(value)
        raise channel.CannotCross(type(value).__name__)

    def send(self, message: list[Any], *, handles: bool = False) -> None:
        try:
            channel.send(self.replies, message, self.keep if handles else None)
        except channel.CannotCross as exc:
            channel.send(self.replies, ["cannot_cross", exc.type_name, exc.why])

    def serve(self) -> NoReturn:
        while True:
            try:
                message = channel.receive(self.calls, self.handle)
            except channel.Unreadable:
                _end()
            if message is None:
                _end()
            try:
                self.answer(message)
            except channel.CannotCross as exc:
                channel.send(self.replies, ["cannot_cross", exc.type_name, exc.why])
            except BaseException as exc:
                self.send(_raised(exc))

    def answer(self, message: list[Any]) -> None:
        op = message[0]
        if op == "get":
            _, number, name = message
            value = getattr(self.handle(number), name)
            if callable(value) and not isinstance(value, type):  # a method (a match's `group` too): called here
                self.send(["method"])
            else:
                self.send(["returned", value, None], handles=True)
            return
        if op == "bool":  # the truth of an object is its own: asked here, as one process would
            self.send(["returned", bool(self.handle(message[1])), None])
            return
        if op == "set":
            _, number, name, value = message
            setattr(self.handle(number), name, value)
            self.send(["returned", None, None])
            return
        _, target, method, args, kwargs = message
        made = False
        if target is None:
            function, made = self.entry, isinstance(self.entry, type)
        elif type(target) is int:
            function = getattr(self.handle(target), method)
        else:
            function = self.namespace[target]
            made = isinstance(function, type)
        before = channel.encode([args, kwargs], self.keep)
        result = function(*args, **kwargs)
        if made:
            self.send(["object", self.keep(result)["h"]])
            return
        channel.plain(result, 0, self.keep_library)  # a function's or a method's result is plain data, or CannotCross
        after = channel.encode([args, kwargs], self.keep)
        self.send(["returned", result, None if after == before else [args, kwargs]], handles=True)


if __name__ == "__main__":
    main()
