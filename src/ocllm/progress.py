"""Progress of a run: a live bar on a terminal, plain periodic lines elsewhere (CI logs, pipes)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


class RunProgress:
    """done/total, rate, ETA, running accuracy and error count."""

    def __init__(
        self, label: str, total: int, done: int = 0, *, stream: TextIO | None = None, interval_s: float = 5.0
    ) -> None:
        self.label = label
        self.total = total
        self.done = done
        self.correct = 0
        self.scored = 0
        self.errors = 0
        self._stream = stream or sys.stderr
        self._interval = interval_s
        self._started = time.monotonic()
        self._new = 0  # finished in this session: what the rate is measured on
        self._last_line = 0.0
        self._last_done = -1  # what the last plain line reported
        self._bar: Progress | None = None
        self._task_id = None
        if self._stream.isatty():
            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[stats]}"),
                console=Console(file=self._stream),
                transient=False,
            )

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._bar.start()
            self._task_id = self._bar.add_task(
                self.label, total=self.total, completed=self.done, rate="", stats=self._stats()
            )
        else:
            self._line(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self._last_done != self.done:
            self._line(force=True)

    def advance(self, correct: bool | None, error: bool) -> None:
        self.done += 1
        self._new += 1
        if error:
            self.errors += 1
        elif correct is not None:
            self.scored += 1
            self.correct += bool(correct)
        if self._bar is not None and self._task_id is not None:
            self._bar.update(self._task_id, completed=self.done, rate=f"{self._rate():.1f}/s", stats=self._stats())
        else:
            self._line()

    def _rate(self) -> float:
        elapsed = time.monotonic() - self._started
        return self._new / elapsed if elapsed > 0 else 0.0

    def _stats(self) -> str:
        acc = f"{100 * self.correct / self.scored:.1f}%" if self.scored else "-"
        return f"acc {acc}  errors {self.errors}"

    def _line(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_line < self._interval and self.done != self.total:
            return
        self._last_line = now
        self._last_done = self.done
        rate = self._rate()
        left = self.total - self.done
        eta = f"{left / rate:.0f}s" if rate > 0 and left else "-"
        print(
            f"[{self.label}] {self.done}/{self.total} done, {rate:.1f}/s, eta {eta}, {self._stats()}",
            file=self._stream,
            flush=True,
        )
