"""The `ocllm` command line: parse arguments, call one library function, print. No logic here.

Each command imports what it needs when it runs, the console included, so that `ocllm --help`, every command's
`--help` and a mistyped flag answer at once instead of first loading every task type's room (jsonschema, sympy
through math-verify, langdetect), SciPy, matplotlib, rich and aiohttp: `bench/bench_cli_help.py` measures it, and
tests/test_cli_help.py checks which modules each `--help` leaves unloaded.

One grammar for every command: the output is `-o/--out` (the spellings of before still read, not shown), `--from`
names another tool's format (runs are arguments), and `--help` names what the registries hold (the shipped suites,
the datasets `import` reads, the tools `--from` reads) when it is shown: the suites from the data folder, the
datasets and tools from the registries when they are loaded, else from the lists of what ships in options.py, which
tests/test_cli_help.py holds equal to the registries."""

from __future__ import annotations

import os
import signal
import sys
import threading

import click

# The commands join the group when their modules are imported (each imports only click and the grammar at its top).
from ocllm.cli import datasets, running, saved_runs, simulator, watching  # noqa: F401
from ocllm.cli.app import app
from ocllm.errors import Interrupted, OcllmError
from ocllm.visible_text import visible

__all__ = ["app", "entry", "main"]


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    # A scheduler, `timeout` or a container stop sends SIGTERM: it ends the command as Ctrl-C does, so a run
    # marks its manifest interrupted and says how to resume, instead of vanishing with a `running` manifest.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Entry point. Every error a user can cause ends in one line on stderr and exit code 2."""
    if threading.current_thread() is not threading.main_thread():
        return _main(argv)
    previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    # A process started in the background by a shell script inherits SIGINT ignored (POSIX shells do that without
    # job control), and Python then installs no handler of its own: a wrapper's Ctrl-C, forwarded to ocllm, did
    # nothing. Ctrl-C always ends a command the way it does at a terminal (the decision workers and the server's
    # watchdog, started after this, inherit it too).
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_int == signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous_int)


def _main(argv: list[str] | None) -> int:
    try:
        if os.environ.get("OCLLM_TASK_TYPES"):  # rooms defined outside ocllm (loaded only when named)
            from ocllm.scoring import task_types

            task_types.import_rooms(os.environ["OCLLM_TASK_TYPES"])
        result = app.main(args=argv, prog_name="ocllm", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        print(exc.format_message())
        return 0
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        _error(f"{exc.format_message()}{hint}")
        return 2
    except click.ClickException as exc:
        _error(exc.format_message())
        return 2
    except OcllmError as exc:
        _error(str(exc))
        return 2
    except (click.Abort, KeyboardInterrupt) as exc:
        # click turns Ctrl-C into Abort; the command's own word on what it left behind is its cause.
        cause = exc if isinstance(exc, Interrupted) else exc.__cause__
        advice = cause.advice if isinstance(cause, Interrupted) else _after_interrupt(argv)
        print(f"ocllm: interrupted; {advice}", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0


def _error(message: str) -> None:
    """A user's error in one line on stderr: what it quotes of a file (a task id, a field's value) may hold a line
    break or a terminal's escape sequence, written as visible text (`visible_text`, inline)."""
    print(f"ocllm: error: {visible(message, inline=True)}", file=sys.stderr)


def _after_interrupt(argv: list[str] | None) -> str:
    """What an interrupted command left behind: a run keeps every finished task; the others write their
    outputs whole or not at all."""
    words = sys.argv[1:] if argv is None else argv
    if any(word in ("run", "matrix") for word in words[:1]):
        return "finished tasks are saved (run the same command again with --resume)"
    return "nothing was written (outputs are written whole or not at all)"


def entry() -> None:
    """Console-script wrapper: the exit code of `main`."""
    sys.exit(main())

