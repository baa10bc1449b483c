"""Progress of a run: a live bar on a terminal, plain periodic lines elsewhere (CI logs, pipes).

Besides done/total it shows what tells a slow server from a stalled one: requests in flight and the time
since the last task finished. The rate and ETA come from the recent finishes only (a moving window), so
a run that slowed down, or one slow task among fast ones, shows the speed it has now, not its average.
Trouble shows as it happens, not when a task finally fails: attempts that timed out or failed, and the attempt
being retried ("2 timed out after 300 s, retrying: attempt 2 of 4"), with a hint when the first timeout happens."""

from __future__ import annotations

import sys
import time
from collections import Counter, deque
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from ocllm.advice import timeout_hint
from ocllm.run.client import FailedAttempt
from ocllm.summary_words import short_duration as duration

# Finishes the rate is measured on: enough to smooth out one odd task, few enough to follow a change.
RATE_WINDOW = 20
# Plain lines: one per `interval_s` while tasks finish; while nothing finishes, one per `_STALLED_EVERY`
# intervals, so a stalled server shows in a log without filling it.
_STALLED_EVERY = 6


class RunProgress:
    """done/total, in flight, recent rate, ETA, time since the last finish, running accuracy, errors."""

    def __init__(
        self, label: str, total: int, done: int = 0, *, stream: TextIO | None = None, interval_s: float = 5.0
    ) -> None:
        self.label = label
        self.total = total
        self.done = done
        self.decided = done  # of `done`, those whose decision came back (the rest wait for the scorer)
        self.correct = 0
        self.scored = 0
        self.errors = 0
        self.in_flight = 0
        self.timeouts = 0  # attempts that passed timeout_s
        self.timeout_s: float | None = None
        self.failures: Counter[str] = Counter()  # other failed attempts, by reason ("HTTP 503", ...)
        self.max_attempts: int | None = None
        self._retrying: Counter[int] = Counter()  # requests being retried, by the attempt they are on (2 and up)
        self._stream = stream or sys.stderr
        self._interval = interval_s
        self._started = time.monotonic()
        self._finishes: deque[float] = deque(maxlen=RATE_WINDOW)  # when the recent tasks finished
        self._last_line = 0.0
        self._last_done = -1  # what the last plain line reported
        self._last_scored = (0, 0, 0)  # and the scored, correct and failed it counted
        self._last_trouble = ""
        self._bar: Progress | None = None
        self._task_id: TaskID | None = None
        if self._stream.isatty():
            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                console=Console(file=self._stream),
                transient=False,
            )

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._bar.start()
            self._task_id = self._bar.add_task(self.label, total=self.total, completed=self.done, status=self.status())
        else:
            self._line(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._refresh()
            self._bar.stop()
        elif self._last_done != self.done or self._last_scored != (self.scored, self.correct, self.errors):
            # A line the figures moved past since (an earlier invocation's decisions, counted after --resume's last
            # request): the log ends on the lane's accuracy.
            self._line(force=True)

    def start(self) -> None:
        """A request was sent."""
        self.in_flight += 1

    def answered(self) -> None:
        """A task's request finished: answered or failed (its decision comes later: `scored`)."""
        self.in_flight = max(0, self.in_flight - 1)
        self.done += 1
        self._finishes.append(time.monotonic())
        self._refresh()

    def judged(self, correct: bool | None, error: bool) -> None:
        """A finished task's decision came back: correct or not, or unscorable, or its request failed."""
        self.decided += 1
        self._count(correct, error)

    def earlier(self, correct: bool | None, error: bool) -> None:
        """A task an earlier invocation finished (--resume): counted in the accuracy and the errors, which are the
        lane's, but not in the rate (it is already in `done`)."""
        self._count(correct, error)

    def _count(self, correct: bool | None, error: bool) -> None:
        if error:
            self.errors += 1
        elif correct is not None:
            self.scored += 1
            self.correct += bool(correct)
        self._refresh()

    def retry_moved(self, before: int | None, after: int | None) -> None:
        """A request being retried moved from attempt `before` to attempt `after` (None: not being retried, before
        its first retry or once it is over), whether that attempt waits for its back-off or is in flight."""
        if before is not None and self._retrying[before] > 0:
            self._retrying[before] -= 1
            if not self._retrying[before]:
                del self._retrying[before]
        if after is not None:
            self._retrying[after] += 1

    def attempt_failed(self, failure: FailedAttempt) -> None:
        """An attempt failed: counted at once, whether another attempt follows or the task fails with it."""
        self.max_attempts = failure.max_attempts
        if failure.timeout_s is not None:
            if not self.timeouts:
                self._say(timeout_hint(failure.timeout_s))
            self.timeouts += 1
            self.timeout_s = failure.timeout_s
        else:
            self.failures[failure.reason] += 1
        self._refresh()

    def trouble(self) -> str:
        """Failed attempts so far and the retry in flight: "2 timed out after 300 s, retrying: attempt 2 of 4"."""
        parts = []
        if self.timeouts:
            parts.append(f"{self.timeouts} timed out after {self.timeout_s:g} s")
        parts += [f"{count} failed ({reason})" for reason, count in self.failures.most_common()]
        if self._retrying and self.max_attempts is not None:
            parts.append(f"retrying: attempt {max(self._retrying)} of {self.max_attempts}")
        return ", ".join(parts)

    def tick(self) -> None:
        """Called every second or so by the runner, so that a stall shows although nothing finishes."""
        self._refresh()

    def rate(self, now: float | None = None) -> float:
        """Tasks per second over the recent finishes, measured up to now: it falls while nothing finishes."""
        now = time.monotonic() if now is None else now
        if not self._finishes:
            return 0.0
        since = self._finishes[0] if len(self._finishes) == RATE_WINDOW else self._started
        elapsed = now - since
        return len(self._finishes) / elapsed if elapsed > 0 else 0.0

    def status(self) -> str:
        now = time.monotonic()
        rate = self.rate(now)
        left = self.total - self.done
        parts = [f"{self.in_flight} in flight"]
        if rate > 0:
            parts.append(f"{rate:.1f}/s" if rate >= 1 else f"{1 / rate:.1f}s/task")
            if left:
                parts.append(f"eta {duration(left / rate)}")
        if self._finishes:
            parts.append(f"last finished {duration(now - self._finishes[-1])} ago")
        elif self.in_flight:
            parts.append(f"waiting {duration(now - self._started)} for the first answer")
        trouble = self.trouble()
        if trouble:
            parts.append(trouble)
        if self.done > self.decided:
            parts.append(f"{self.done - self.decided} to score")
        acc = f"{100 * self.correct / self.scored:.1f}%" if self.scored else "-"
        parts.append(f"acc {acc}  errors {self.errors}")
        return ", ".join(parts)

    def _say(self, line: str) -> None:
        """A line of its own, above the live bar or among the plain lines."""
        if self._bar is not None:
            self._bar.console.print(f"[{self.label}] note: {line}", highlight=False, markup=False, soft_wrap=True)
        else:
            print(f"[{self.label}] note: {line}", file=self._stream, flush=True)

    def _refresh(self) -> None:
        if self._bar is not None and self._task_id is not None:
            self._bar.update(self._task_id, completed=self.done, status=self.status())
        else:
            self._line()

    def _line(self, force: bool = False) -> None:
        now = time.monotonic()
        trouble = self.trouble()
        # New trouble is news as much as a finished task is.
        moved = self.done != self._last_done or trouble != self._last_trouble
        wait = self._interval if moved else self._interval * _STALLED_EVERY
        if not force and now - self._last_line < wait and not (moved and self.done == self.total):
            return
        self._last_line = now
        self._last_done = self.done
        self._last_scored = (self.scored, self.correct, self.errors)
        self._last_trouble = trouble
        print(f"[{self.label}] {self.done}/{self.total} done, {self.status()}", file=self._stream, flush=True)
