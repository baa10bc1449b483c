"""A function task's tests box (docs/scoring/code.md, C7 and "Trust"): the task's code prefix and tests run here, and
none of the model's code ever does. The entry point they call is a stand-in that sends each call's arguments to the
program's box and gives back what came back: plain data (`channel.py`), compared here by Python's own types. This box
alone writes the report of the outcome, on a descriptor the program's box does not have.

The program's box first says how the program loaded; then the code prefix runs (HumanEval's prompt: helpers such as
`poly` or `encode_cyclic` that the tests call), the entry point's name is bound to the stand-in (tests that call the
function by its name reach the program too), and so is every other name the tests use that neither they nor the
prefix nor Python define but the program does: its other functions (called in its box), its classes (an object made
by one stays in the program's box, and the tests hold a handle whose attributes and methods are read and called
there: MBPP's `Node` trees, a LeetCode `Solution`), and the modules it imported (imported here, by name: `sys`; a
standard module the tests name, such as `math`, is imported here whether the program did or not). Then the tests'
definitions run and `check(candidate)` is called. What the report says:
- `passed`: check returned.
- `failed_assertion`: the tests raised in their own code after at least one call reached the program.
- `exception` (by the program): the program raised under a call (re-raised here as the same built-in exception, so
  that tests that expect one still catch it), returned what cannot cross, or sent what is not plain data.
- `program_ended`: the program's box closed the channel (an exit, a signal) during a call or while loading.
- `tests_error`: the tests could not be run against the program: they, or the code prefix, do not compile or raise
  before any call reached it, or they pass an argument that cannot cross.
  A NameError of the tests' own code (either status) names the name (`undefined_name`) and where: the host tells a
  dataset's defect from the model's failure by what the task and the program define.
- the program's load failures as it said them: `syntax_error`, `exception` in its definitions, `entry_point_missing`.

Arguments: the descriptors, JSON: {"calls": fd, "replies": fd, "report": fd}; "stdout", "stdin" and "stderr" in a
container (the report is then the last line of stderr, after a marker).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import channel
from limits import start_box

# Names for annotations only: a box imports as little as it can before the program runs (typing costs a start ~3 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

REPORT_MARK = b"\x00ocllm-report "
TESTS_FILE = "tests.py"
PREFIX_FILE = "prefix.py"
_TAIL_LINES = 12


class _Stop(BaseException):
    """Ends the tests whatever they catch: the channel, not the tests, decided."""

    def __init__(self, report: dict[str, Any]) -> None:
        super().__init__(report.get("status"))
        self.report = report


class ProgramError(Exception):
    """The program raised an exception that is not one of Python's own: its name and message, here."""


class _Report:
    def __init__(self, where: Any) -> None:
        self.where = where

    def send(self, report: dict[str, Any]) -> NoReturn:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # the tests may have replaced them
                stream.flush()
        data = json.dumps(report).encode()
        if self.where == "stderr":
            data = REPORT_MARK + data + b"\n"
            fd = 2
        else:
            fd = int(self.where)
        while data:
            data = data[os.write(fd, data) :]
        os._exit(0)


class _Channel:
    def __init__(self, calls: int, replies: int) -> None:
        self.calls_fd = calls
        self.replies_fd = replies
        self.calls = 0
        self.raised: list[BaseException] = []  # exceptions re-raised for the program (kept alive: compared by id)
        self.objects: dict[int, _Object] = {}  # the program's objects, one stand-in each

    def object(self, number: int) -> _Object:
        if number not in self.objects:
            self.objects[number] = _Object(self, number)
        return self.objects[number]

    def receive(self, during: str) -> list[Any]:
        try:
            message = channel.receive(self.replies_fd, self.object)
        except channel.Unreadable as exc:
            raise _Stop({"status": "unreadable", "phase": during, "message": str(exc)}) from None
        if message is None:
            raise _Stop({"status": "program_ended", "phase": during, "calls": self.calls})
        if type(message) is not list or not message or type(message[0]) is not str:
            raise _Stop({"status": "unreadable", "phase": during, "message": "a reply that is not a message"})
        return message

    def ask(self, message: list[Any]) -> list[Any]:
        try:
            channel.send(self.calls_fd, message, _handle_of)
        except channel.CannotCross as exc:
            raise _Stop({"status": "argument_cannot_cross", "type": exc.type_name, "message": exc.why}) from None
        except OSError:
            raise _Stop({"status": "program_ended", "phase": "call", "calls": self.calls}) from None
        self.calls += 1
        return self.receive("call")

    def call(self, target: int | str | None, method: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        args_list = list(args)
        reply = self.ask(["call", target, method, args_list, kwargs])
        kind = reply[0]
        if kind == "returned" and len(reply) == 3:
            _write_back(args_list, kwargs, reply[2])
            return reply[1]
        if kind == "object" and len(reply) == 2 and type(reply[1]) is int:
            return self.object(reply[1])
        return self._failed_reply(reply)

    def get(self, number: int, name: str) -> Any:
        reply = self.ask(["get", number, name])
        if reply[0] == "method" and len(reply) == 1:

            def method(*args: Any, **kwargs: Any) -> Any:
                return self.call(number, name, args, kwargs)

            return method
        if reply[0] == "returned" and len(reply) == 3:
            return reply[1]
        return self._failed_reply(reply)

    def truth(self, number: int) -> bool:
        reply = self.ask(["bool", number])
        if reply[0] == "returned" and len(reply) == 3 and type(reply[1]) is bool:
            return reply[1]
        return self._failed_reply(reply)

    def set(self, number: int, name: str, value: Any) -> None:
        reply = self.ask(["set", number, name, value])
        if reply[0] != "returned":
            self._failed_reply(reply)

    def _failed_reply(self, reply: list[Any]) -> NoReturn:
        kind = reply[0]
        if kind == "raised" and len(reply) == 5:
            raise self._raised(reply)
        if kind == "cannot_cross" and len(reply) == 3:
            raise _Stop({"status": "result_cannot_cross", "type": str(reply[1]), "message": str(reply[2])})
        raise _Stop({"status": "unreadable", "phase": "call", "message": f"a reply {str(kind)[:40]!r}"})

    def _raised(self, reply: list[Any]) -> BaseException:
        _, name, message, tail, memory = reply
        if memory is True:
            raise _Stop({"status": "memory", "phase": "call", "by_program": True, "type": "MemoryError"})
        name, message = str(name), str(message)
        if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):  # in one process, these would end the tests
            raise _Stop({"status": "exit", "phase": "call", "by_program": True, "type": name, "message": message})
        known = getattr(builtins, name, None)
        exc: BaseException
        try:
            exc = known(message) if isinstance(known, type) and issubclass(known, Exception) else ProgramError()
        except Exception:
            exc = ProgramError()
        if isinstance(exc, ProgramError):
            exc.args = (f"{name}: {message}",)
        exc.__dict__["program_raised"] = {"type": name, "message": message[:2000], "traceback": tail}
        self.raised.append(exc)
        return exc


def _handle_of(value: Any) -> Any:
    """A stand-in of the program's objects crosses back as its handle; nothing else of the tests' own does."""
    if type(value) is _Object:
        return {"h": object.__getattribute__(value, "_number")}
    raise channel.CannotCross(type(value).__name__)


def _write_back(args: list[Any], kwargs: dict[str, Any], changed: Any) -> None:
    """The arguments as the program left them, written into the tests' own objects (a list, a dict, a set: the
    tests may look at what the function did to them, as they would in one process)."""
    if changed is None:
        return
    if type(changed) is not list or len(changed) != 2:
        raise _Stop({"status": "unreadable", "phase": "call", "message": "arguments sent back that are not a pair"})
    new_args, new_kwargs = changed
    pairs = list(zip(args, new_args if type(new_args) is list else [], strict=False))
    if type(new_kwargs) is dict:
        pairs += [(kwargs[key], value) for key, value in new_kwargs.items() if key in kwargs]
    for old, new in pairs:
        if type(old) is list and type(new) is list:
            old[:] = new
        elif (type(old) is dict and type(new) is dict) or (type(old) is set and type(new) is set):
            old.clear()
            old.update(new)


class _Candidate:
    """The entry point (target None), or another of the program's top-level functions or classes by name, as the
    tests see it."""

    def __init__(self, link: _Channel, name: str, target: str | None = None) -> None:
        self._link = link
        self._target = target
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._link.call(self._target, None, args, kwargs)

    def __repr__(self) -> str:
        return f"<the program's {self.__name__}>"


class _Object:
    """An object the program made (a LeetCode `Solution()`, an MBPP `Node`): it stays in the program's box; its
    attributes are read and set there, its methods called there, its truth asked there. Equal only to itself: its
    own `__eq__` never decides a comparison of the tests."""

    def __init__(self, link: _Channel, number: int) -> None:
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_number", number)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return object.__getattribute__(self, "_link").get(object.__getattribute__(self, "_number"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__getattribute__(self, "_link").set(object.__getattribute__(self, "_number"), name, value)

    def __bool__(self) -> bool:
        return bool(object.__getattribute__(self, "_link").truth(object.__getattribute__(self, "_number")))

    def __repr__(self) -> str:
        return f"<the program's object {object.__getattribute__(self, '_number')}>"


def _tail(exc: BaseException) -> list[str]:
    import traceback  # only when something was raised: its imports cost every box's start

    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(lines).splitlines()[-_TAIL_LINES:]


def _compile(path: str, filename: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return compile(f.read(), filename, "exec", dont_inherit=True)


def _descriptors(given: dict[str, Any]) -> tuple[int, int, Any]:
    calls, replies, report = given["calls"], given["replies"], given["report"]
    if calls == "stdout":
        calls = os.dup(1)
        os.dup2(2, 1)
    if replies == "stdin":
        replies = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return int(calls), int(replies), report


def _loaded(message: list[Any]) -> dict[str, Any] | None:
    """The report for a program that did not load (as its box said), or None when it is ready."""
    kind = message[0]
    if kind == "ready" and len(message) == 3 and type(message[2]) is dict:
        return None
    if kind == "syntax_error" and len(message) == 2 and type(message[1]) is dict:
        detail = {k: message[1].get(k) for k in ("type", "message", "line", "text")}
        return {"status": "syntax_error", **detail}
    if kind == "load_raised" and len(message) == 6:
        _, name, text, tail, memory, line = message
        status = "memory" if memory is True else ("exit" if name == "SystemExit" else "exception")
        return {"status": status, "phase": "program", "type": str(name), "message": str(text)[:2000],
                "by_program": True, "traceback": tail if type(tail) is list else [],
                "line": line if type(line) is int else None}  # fmt: skip
    if kind == "entry_point_missing" and len(message) == 2:
        return {"status": "entry_point_missing", "message": str(message[1])[:2000]}
    return {"status": "unreadable", "phase": "load", "message": f"a first message {str(kind)[:40]!r}"}


def _used_names(*sources: str) -> set[str]:
    """The names the tests' and the prefix's code read."""
    names: set[str] = set()
    for source in sources:
        with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
            names |= {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}
    return names


def _bind_program_names(namespace: dict[str, Any], link: _Channel, offered: dict[str, Any], used: set[str]) -> None:
    """Bind the names the tests use and nothing here defines to what the program defines under them (module
    docstring). A module is imported here, by its name: the library's code, never the program's."""
    ours = {"channel", "limits", "tests", "prefix", "tests_side"}
    wanted = {name for name in used if name not in namespace and not hasattr(builtins, name)}
    for name in _names(offered.get("functions")) + _names(offered.get("classes")):
        if name in wanted:
            namespace[name] = _Candidate(link, name, target=name)
    modules = offered.get("modules")
    imported = dict(modules) if type(modules) is dict else {}
    # A standard module the tests use by its own name (MBPP+'s `math.isclose`), imported or not by the program.
    imported.update({name: name for name in wanted if name in sys.stdlib_module_names and name not in imported})
    for name, module in imported.items():
        if name in wanted and type(module) is str and module.split(".")[0] not in ours:
            with contextlib.suppress(Exception):
                namespace[name] = importlib.import_module(module)


def _names(value: Any) -> list[str]:
    return [name for name in value if type(name) is str and name.isidentifier()] if type(value) is list else []


def main() -> None:
    here, job = start_box(__file__)
    channel.limit_frames(job["limits"]["output_bytes"])
    calls, replies, where = _descriptors(json.loads(sys.argv[1]))
    report = _Report(where)
    link = _Channel(calls, replies)
    try:
        tests = _compile(os.path.join(here, TESTS_FILE), TESTS_FILE)
        prefix = _compile(os.path.join(here, PREFIX_FILE), PREFIX_FILE)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        report.send({"status": "tests_do_not_compile", "type": type(exc).__name__,
                     "message": str(getattr(exc, "msg", exc))[:2000]})  # fmt: skip
    try:
        ready = link.receive("load")
    except _Stop as stop:
        report.send(stop.report)
    problem = _loaded(ready)
    if problem is not None:
        report.send(problem)
    with open(os.path.join(here, TESTS_FILE), encoding="utf-8") as f, open(os.path.join(here, PREFIX_FILE)) as g:
        used = _used_names(f.read(), g.read())
    entry = job["entry_point"]
    namespace: dict[str, Any] = {"__name__": "tests", "__builtins__": __builtins__}
    candidate = _Candidate(link, entry)
    phase = "prefix"
    try:
        exec(prefix, namespace)
        namespace[entry] = candidate
        _bind_program_names(namespace, link, ready[2], used)
        phase = "tests"
        exec(tests, namespace)
        check = namespace.get("check")
        if not callable(check):
            report.send({"status": "tests_error", "phase": phase, "calls": 0, "type": "NameError",
                         "message": "the tests define no check(candidate)", "traceback": []})  # fmt: skip
        check(candidate)
    except _Stop as stop:
        report.send({**stop.report, "calls": link.calls})
    except BaseException as exc:
        report.send(_failed(exc, link, phase))
    report.send({"status": "passed", "calls": link.calls})


def _failed(exc: BaseException, link: _Channel, phase: str) -> dict[str, Any]:
    raised = exc.__dict__.get("program_raised") if any(exc is r for r in link.raised) else None
    if raised is not None:
        return {"status": "exception", "phase": "call", "by_program": True, "calls": link.calls, **raised}
    status = "failed_assertion" if link.calls else "tests_error"
    failed = {"status": status, "phase": phase, "calls": link.calls, "type": type(exc).__name__,
              "message": str(exc)[:2000], "traceback": _tail(exc)}  # fmt: skip
    if type(exc) is NameError and isinstance(exc.name, str):
        # A name the tests' own code reads and nothing here defines: the host tells a dataset's defect (a name
        # neither the task nor the program defines) from the model's failure (docs/scoring/code.md, C8).
        failed.update(undefined_name=exc.name, where=_tests_line(exc))
    return failed


def _tests_line(exc: BaseException) -> str | None:
    """Where in the task's own files the exception was raised: "tests.py line 3", or None."""
    where = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in (TESTS_FILE, PREFIX_FILE, "<test>"):  # <test>: evalplus's module test, run by check
            where = f"{filename} line {tb.tb_lineno}"
        tb = tb.tb_next
    return where


if __name__ == "__main__":
    main()
