"""One run folder followed as it grows: its manifest and suite copy read once they are there, the samples appended
since the last look decided and counted, and what a reader needs of it now (`RunState`).

Live decisions are in the run's anonymous spool, which no other process can read: the samples are decided here
again, with the scorer and the lane's policy from the manifest, each once (a (task, sample) written again, by a
resume, replaces its earlier outcome). Deciding is cheap for most types; a type whose decisions turn out costly here
(a code task's programs run in the sandbox: on average 50 ms or more over its first three) is left to the run's
own scoring from then on, and its samples are counted "scored at the end"."""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ocllm.errors import OcllmError
from ocllm.files.atomic import MANIFEST, METRICS, SAMPLES, SUITE_COPY
from ocllm.models import Policy, RunManifest, Sample, Task, as_sent
from ocllm.watch.tail import SamplesTail

Outcome = Literal["right", "wrong", "error", "unscored", "deferred"]
Key = tuple[str, int]

# Rate: the samples that finished over the last minute of looks.
RATE_WINDOW_S = 60.0
# A type is left to the run's own scoring once its decisions here cost this much each, on average over at least
# COSTLY_AFTER of them.
COSTLY_S = 0.05
COSTLY_AFTER = 3
_ENDED = ("finished", "finished_with_errors")


@dataclass
class RunState:
    """What one run folder holds now."""

    path: Path
    status: str  # waiting (nothing to read yet), running, stalled, interrupted, finished
    done: int  # (task, sample) pairs with a sample
    total: int | None  # the suite copy's tasks times samples per task; None until the suite copy is there
    outcomes: Mapping[Key, Outcome]  # each finished (task, sample), as decided here
    counts: Counter[Outcome]
    errors: Counter[str]  # failed requests by error_kind
    rate: float | None  # samples per second, recently
    eta_s: float | None
    idle_s: float | None  # since the last sample was written
    shard: tuple[int, int] | None  # (K, N) from the manifest
    replicas: int  # endpoints of the lane
    idle_replicas: list[str] | None  # None: the run folder cannot tell (yet)
    deferred_types: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unreadable: int = 0  # complete lines of samples.jsonl that are no sample

    @property
    def finished(self) -> bool:
        return self.status == "finished"


class RunWatch:
    """One run folder, read a little more at each `refresh`."""

    def __init__(self, path: Path, *, stall_after: float) -> None:
        self.path = path
        self.stall_after = stall_after
        self._tail = SamplesTail(path / SAMPLES)
        self._manifest: RunManifest | None = None
        self._manifest_stamp: tuple[int, int] | None = None
        self._tasks: dict[str, Task] | None = None
        self._policy: Policy | None = None
        self._waiting: list[Sample] = []  # read before the suite copy or the manifest was there
        self._outcomes: dict[Key, Outcome] = {}
        self._kinds: dict[Key, str] = {}  # the error kind of each failed (task, sample)
        self._counts: Counter[Outcome] = Counter()
        self._errors: Counter[str] = Counter()
        self._cost: dict[str, tuple[int, float]] = {}  # by type: decisions taken here, seconds they took
        self._deferred: set[str] = set()
        self._seen: deque[tuple[float, int]] = deque()  # (monotonic time of a look, samples done then)
        self._unreadable = 0
        self._notes: list[str] = []
        # (monotonic time of the look that read it, the endpoint that answered) of the samples read lately.
        self._answered_by: deque[tuple[float, int]] = deque()

    def refresh(self, *, now: float, clock: float) -> RunState:
        """Read what was added; `now` is the wall clock (for the files' times), `clock` a monotonic one (rates)."""
        self._read_manifest()
        self._read_suite()
        appended = self._tail.read()
        if appended.restarted:  # the file was rewritten (--retry-errors): what it holds now is all there is
            self._forget()
        self._unreadable += appended.unreadable
        self._waiting += appended.samples
        self._answered_by.extend((clock, s.endpoint) for s in appended.samples if s.endpoint is not None)
        while self._answered_by and clock - self._answered_by[0][0] > RATE_WINDOW_S:
            self._answered_by.popleft()
        if self._tasks is not None and self._policy is not None:
            waiting, self._waiting = self._waiting, []
            for sample in waiting:
                self._add(sample)
        return self._state(now, clock)

    # --- reading -----------------------------------------------------------------------------------------------

    def _read_manifest(self) -> None:
        from ocllm.run.directory_reader import read_manifest

        path = self.path / MANIFEST
        try:
            stat = path.stat()
        except OSError:
            return
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._manifest_stamp:
            return
        try:
            self._manifest = read_manifest(path)  # written whole (renamed into place): never half of one
        except (OcllmError, OSError):
            return  # another format, or a folder being replaced: looked at again next time
        self._manifest_stamp = stamp
        if self._policy is None:
            self._policy = _policy(self._manifest)

    def _read_suite(self) -> None:
        if self._tasks is not None or not (self.path / SUITE_COPY).is_file():
            return
        from ocllm.suites import load_suite

        try:
            suite = load_suite(str(self.path / SUITE_COPY))
        except OcllmError as exc:
            self._note(f"{SUITE_COPY}: {exc}")
            return
        self._tasks = {task.id: task for task in suite.tasks}

    def _forget(self) -> None:
        self._outcomes.clear()
        self._kinds.clear()
        self._counts.clear()
        self._errors.clear()
        self._seen.clear()
        self._waiting.clear()

    def _note(self, note: str) -> None:
        if note not in self._notes:
            self._notes.append(note)

    # --- deciding ----------------------------------------------------------------------------------------------

    def _add(self, sample: Sample) -> None:
        key = (sample.task_id, sample.sample)
        before = self._outcomes.get(key)
        if before is not None:  # written again (a resumed or retried run): the new line is the one that counts
            self._counts[before] -= 1
            kind = self._kinds.pop(key, None)
            if kind is not None:
                self._errors[kind] -= 1
                if not self._errors[kind]:
                    del self._errors[kind]
        outcome = self._decide(sample)
        self._outcomes[key] = outcome
        self._counts[outcome] += 1
        if outcome == "error":
            kind = sample.error_kind or "other"
            self._kinds[key] = kind
            self._errors[kind] += 1

    def _decide(self, sample: Sample) -> Outcome:
        if sample.error is not None:
            return "error"
        assert self._tasks is not None and self._policy is not None
        task = self._tasks.get(sample.task_id)
        if task is None:
            self._note(f"{SAMPLES}: a sample of a task the suite copy does not hold ({sample.task_id!r})")
            return "unscored"
        if task.type in self._deferred:
            return "deferred"
        from ocllm.scoring import decide

        started = time.perf_counter()
        try:
            decision = decide(as_sent(task, sample), sample, self._policy)
        except Exception as exc:  # a scorer's failure on one sample must not end the view of every run
            self._note(f"could not decide {sample.task_id!r} here ({type(exc).__name__}); the run's scoring will")
            return "unscored"
        finally:
            taken, spent = self._cost.get(task.type, (0, 0.0))
            taken, spent = taken + 1, spent + time.perf_counter() - started
            self._cost[task.type] = (taken, spent)
            if taken >= COSTLY_AFTER and spent / taken >= COSTLY_S:
                self._deferred.add(task.type)
        if decision.correct is None:
            return "unscored"
        return "right" if decision.correct else "wrong"

    # --- the state ---------------------------------------------------------------------------------------------

    def _state(self, now: float, clock: float) -> RunState:
        manifest = self._manifest
        done = len(self._outcomes) + len({(s.task_id, s.sample) for s in self._waiting} - self._outcomes.keys())
        per_task = _samples_per_task(manifest)
        total = None if self._tasks is None else len(self._tasks) * per_task
        rate = self._rate(clock, done, manifest)
        idle = self._idle(now)
        status = self._status(manifest, idle)
        remaining = None if total is None else max(total - done, 0)
        eta = None
        if remaining is not None and rate and status != "finished":
            eta = remaining / rate
        shard = (manifest.shard.index, manifest.shard.count) if manifest and manifest.shard else None
        replicas, idle_replicas = _replicas(manifest, status == "finished")
        if idle_replicas is None and status == "running":
            idle_replicas = _idle_lately(manifest, [endpoint for _, endpoint in self._answered_by])
        notes = list(self._notes)
        if self._waiting and self._tasks is None:
            notes.append(f"{len(self._waiting)} sample(s) wait for {SUITE_COPY}")
        return RunState(
            path=self.path,
            status=status,
            done=done,
            total=total,
            outcomes=self._outcomes,
            counts=+self._counts,
            errors=Counter(self._errors),
            rate=rate,
            eta_s=eta,
            idle_s=idle,
            shard=shard,
            replicas=replicas,
            idle_replicas=idle_replicas,
            deferred_types=sorted(self._deferred),
            notes=notes,
            unreadable=self._unreadable,
        )

    def _rate(self, clock: float, done: int, manifest: RunManifest | None) -> float | None:
        """Samples a second over the looks of the last minute; before two looks, the run's average since it started
        (up to its last sample)."""
        self._seen.append((clock, done))
        while len(self._seen) > 2 and clock - self._seen[1][0] >= RATE_WINDOW_S:
            self._seen.popleft()
        first_clock, first_done = self._seen[0]
        if clock - first_clock > 0 and len(self._seen) > 1:
            return max(done - first_done, 0) / (clock - first_clock)
        return _average_rate(self.path, manifest, done)

    def _idle(self, now: float) -> float | None:
        for name in (SAMPLES, MANIFEST):
            try:
                return max(now - (self.path / name).stat().st_mtime, 0.0)
            except OSError:
                continue
        return None

    def _status(self, manifest: RunManifest | None, idle: float | None) -> str:
        if manifest is None and not self._outcomes:
            return "waiting"
        if manifest is not None and manifest.status in _ENDED and (self.path / METRICS).is_file():
            return "finished"
        if manifest is not None and manifest.status == "interrupted":
            return "interrupted"
        if idle is not None and idle >= self.stall_after:
            return "stalled"
        return "running"


def _policy(manifest: RunManifest) -> Policy:
    from ocllm.analysis.rescore import policy_of_meta
    from ocllm.formats.records import RunMeta

    return policy_of_meta(RunMeta.from_fields({"lane_settings": manifest.lane}))


def _samples_per_task(manifest: RunManifest | None) -> int:
    value: Any = manifest.lane.get("samples_per_task", 1) if manifest is not None else 1
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _average_rate(path: Path, manifest: RunManifest | None, done: int) -> float | None:
    """The run's samples over the time from its start to its last sample (a first look has no other)."""
    from datetime import datetime

    if manifest is None or not done:
        return None
    try:
        started = datetime.fromisoformat(manifest.started_at).timestamp()
        last = (path / SAMPLES).stat().st_mtime
    except (ValueError, OSError):
        return None
    return done / (last - started) if last > started else None


# A replica is told idle while the run goes once the others have answered this many samples each, lately: fewer say
# nothing (a lane of two replicas at concurrency 1 answers from one, then the other).
IDLE_AFTER = 3


def _idle_lately(manifest: RunManifest | None, answered_by: list[int]) -> list[str] | None:
    """The replicas that answered none of the samples written in the last RATE_WINDOW_S while the others answered at
    least IDLE_AFTER each (each sample records its endpoint); None when too few samples were written to tell."""
    urls = manifest.lane.get("base_url") if manifest is not None else None
    if not isinstance(urls, list) or len(urls) < 2:
        return None
    counts = Counter(answered_by)
    busy = [i for i in range(len(urls)) if counts[i]]
    if not busy or min(counts[i] for i in busy) < IDLE_AFTER:
        return None
    return [str(urls[i]) for i in range(len(urls)) if not counts[i]]


def _replicas(manifest: RunManifest | None, finished: bool) -> tuple[int, list[str] | None]:
    """The lane's endpoints, and, once it has ended, those that answered nothing while others did (the manifest's
    per-endpoint figures, written when the run ends). While it goes, `_idle_lately` tells them from the samples'
    `endpoint`."""
    if manifest is None:
        return 1, None
    urls = manifest.lane.get("base_url")
    count = len(urls) if isinstance(urls, list) else 1
    if count < 2 or not finished or not manifest.endpoints:
        return count, None
    answered = {
        str(e.get("base_url")): int(e.get("requests") or 0) - int(e.get("errors") or 0) for e in manifest.endpoints
    }
    if not any(answered.values()):
        return count, []
    return count, [url for url, n in answered.items() if n <= 0]
