"""A standard-input task's program box (docs/scoring/code.md, C6 and C7): the program runs here as `__main__`, its
standard input the test's input, its standard output compared outside the box.

The script compiles the program first, and reports a syntax error on its report descriptor; it then closes that
descriptor, so nothing the program does can write a report, and runs the program. What ends the run is the program's
own: a normal end, `sys.exit()` or `os._exit(0)` all end with status 0 and the output is compared; an uncaught
exception ends with status 1, its last line on standard error (`MemoryError` for the memory limit).

Arguments: the descriptors, JSON: {"report": fd}, or "stderr" in a container.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from limits import start_box

# Names for annotations only: a box imports as little as it can before the program runs (typing costs a start ~3 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REPORT_MARK = b"\x00ocllm-report "
PROGRAM_FILE = "solution.py"


def _report(where: Any, report: dict[str, Any]) -> None:
    data = json.dumps(report).encode()
    fd = 2 if where == "stderr" else int(where)
    if where == "stderr":
        data = REPORT_MARK + data + b"\n"
    while data:
        data = data[os.write(fd, data) :]


def main() -> None:
    here, _ = start_box(__file__)
    where = json.loads(sys.argv[1])["report"]
    with open(os.path.join(here, PROGRAM_FILE), encoding="utf-8") as f:
        source = f.read()
    try:
        code = compile(source, PROGRAM_FILE, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        _report(where, {
            "status": "syntax_error", "type": type(exc).__name__, "message": str(getattr(exc, "msg", exc))[:2000],
            "line": getattr(exc, "lineno", None), "text": (getattr(exc, "text", None) or "")[:500],
        })  # fmt: skip
        os._exit(0)
    if where != "stderr":
        os.close(int(where))
    del sys.path[0]
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    exec(code, namespace)


if __name__ == "__main__":
    main()
