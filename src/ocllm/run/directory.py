"""The run directory's one owner: what may be written there, resuming, the manifest, the samples.

manifest.json  what ran: versions, lane settings (no secrets), suite name and hash, server models, times
suite.jsonl    the suite's tasks exactly as run, so the directory can be re-scored on its own
samples.jsonl  one line per finished sample of a task (one per task unless samples_per_task > 1), appended and
               flushed as each finishes; never rewritten
               except by --retry-errors, which drops failed lines (atomically) before re-running them
metrics.json   derived: the decisions and summary, recomputed whenever the run finishes
turns.jsonl    a conversation's requests as each finishes (turn_log.py); only in a run with conversations
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from ocllm import __version__
from ocllm.documents import MetricsDocument
from ocllm.errors import InputError
from ocllm.files.atomic import (
    MANIFEST,
    METRICS,
    RUN_FILES,
    SAMPLES,
    SUITE_COPY,
    SampleWriter,
    atomic_write_bytes,
    read_samples,
    write_json,
    write_samples,
)
from ocllm.files.temporaries import remove_stale_temporaries
from ocllm.models import Preflight, RunManifest, Sample, ShardRecord, SuiteRecord
from ocllm.run.lanes import ROOM_SETTINGS, Lane, public_settings
from ocllm.run.sampling import SAMPLING
from ocllm.run.servers import SERVER_LOG
from ocllm.scoring import SCORER_VERSION
from ocllm.scoring.task_types import recorded_templates
from ocllm.suites import Suite

RUN_FORMAT = "ocllm-run/1"
# Lane settings that change what the model is asked; a resumed run must not mix two of them.
# The templates are compared type by type (`changed_templates`): a record may keep them under the keys of before.
# An agent's files by their record: the path and the sha256 of what was read (agent_context.py), so that a file
# edited between two invocations is refused as a changed setting.
OUTPUT_SETTINGS = (
    "model", "system_prompt", "system_prompt_file", "extra_tools_file", *SAMPLING, "reasoning", "reasoning_switch",
    "extra_body", "omit_fields", *ROOM_SETTINGS,
)  # fmt: skip


def changed_templates(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The types whose template in force differs between two lane records (`templates.math`), whichever keys each
    record kept them under (a manifest written before issue 41 has `math_template`)."""
    a, b = recorded_templates(before), recorded_templates(now)
    return [f"templates.{name}" for name in a if a[name] != b.get(name)]

# What a lane that sets nothing records: a setting a manifest predates was its default then.
_DEFAULTS = public_settings(Lane(name="defaults", base_url="", model=""))


def _changed_file(key: str, before: Any, now: Any) -> str:
    """A changed setting as the refusal names it; an agent's file that is the same path with other bytes, so."""
    if isinstance(before, dict) and isinstance(now, dict) and before.get("path") == now.get("path"):
        return f"{key}: {now.get('path')} changed since (its sha256 differs)"
    return key


class RunDirectory:
    """One run directory, from the first check of --out to the finished manifest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.samples_path = path / SAMPLES
        self.manifest: RunManifest | None = None  # once the run has started
        self._dropped_attempts = 0  # attempts of the failed lines --retry-errors removed

    def check(self, *, resume: bool, lane: Lane | None = None, suite: Suite | None = None) -> None:
        """Every mistake about --out that needs no server to find, checked before the server is asked: not
        a folder, a run there already (without --resume), and, resuming, another suite, other lane settings,
        a damaged manifest, samples of tasks not in the suite."""
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"{self.path}: exists and is not a directory")
        _check_creatable(self.path)
        if self.samples_path.exists() and not self.samples_path.is_file():
            raise InputError(f"{self.samples_path}: is not a file; this is not a run directory ocllm can use")
        if self.path.is_dir() and not self._is_run_directory() and any(self.path.iterdir()):
            # Someone's files (an old harness's results folder, say) are never written over or mixed in.
            raise InputError(
                f"{self.path}: holds files and is not an ocllm run directory; choose a new or empty folder for --out"
            )
        if not resume and self.samples_path.exists() and self.samples_path.stat().st_size:
            raise InputError(f"{self.path}: already holds a run; pass --resume to finish it, or choose another --out")
        if resume and lane is not None and suite is not None and self.path.is_dir():
            self._check_resumable(lane, suite)
            self._check_samples(suite, read_samples(self.samples_path), lane)

    def _is_run_directory(self) -> bool:
        """Samples, or a manifest of this project's: written by `ocllm run` (perhaps stopped early)."""
        if self.samples_path.is_file():
            return True
        if {p.name for p in self.path.iterdir()} == {SERVER_LOG}:
            return True  # a managed server's log, left by a run that stopped before its first task
        manifest = self.path / MANIFEST
        try:
            return bool(msgspec.json.decode(manifest.read_bytes()).get("format") == RUN_FORMAT)
        except (OSError, AttributeError, RecursionError, msgspec.DecodeError):
            return False

    def open(self, lane: Lane, suite: Suite, *, resume: bool, retry_errors: bool) -> list[Sample]:
        """Make the directory ready and return the samples already there that count (none for a new run;
        with --retry-errors, the failed ones are dropped from the file first)."""
        self.check(resume=resume or retry_errors, lane=lane, suite=suite)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot create the run directory ({exc.strerror or exc})") from None
        for name in RUN_FILES:
            remove_stale_temporaries(self.path / name)  # an earlier ocllm killed while writing one of them
        if not (resume or retry_errors):
            return []
        samples = read_samples(self.samples_path, repair=True)  # a torn last line is cut, appends go on cleanly
        self._check_samples(suite, samples, lane)
        if retry_errors:
            kept = [s for s in samples if s.error is None]
            self._dropped_attempts = sum(s.attempts for s in samples if s.error is not None)
            write_samples(self.samples_path, kept)  # atomically: the failed lines go, the rest stay
            return kept
        return samples

    def _check_samples(self, suite: Suite, samples: list[Sample], lane: Lane) -> None:
        known = {t.id for t in suite.tasks}
        strangers = [s.task_id for s in samples if s.task_id not in known]
        if strangers:
            raise InputError(f"{self.samples_path}: holds task {strangers[0]!r}, which is not in the suite")
        beyond = next((s for s in samples if s.sample >= lane.samples_per_task), None)
        if beyond is not None:
            # More samples per task may be asked on resume (the new ones run); fewer would leave some unread.
            raise InputError(
                f"{self.samples_path}: holds sample {beyond.sample} of task {beyond.task_id!r}, but the lane asks "
                f"{lane.samples_per_task} sample(s) per task (samples_per_task may be raised to resume, not lowered)"
            )

    def _check_resumable(self, lane: Lane, suite: Suite) -> None:
        manifest_path = self.path / MANIFEST
        if not manifest_path.exists():
            return
        manifest = read_manifest(manifest_path)
        # Runs recorded before suites had one canonical form hashed the file's bytes: either identifies it.
        if manifest.suite.sha256 not in (suite.sha256, suite.file_sha256):
            raise InputError(f"{self.path}: was run on a different suite (content hash differs); cannot resume")
        now = public_settings(lane)
        # A setting a manifest predates (math_template before math tasks) was its default then.
        changed = [
            _changed_file(k, manifest.lane.get(k), now.get(k))
            for k in OUTPUT_SETTINGS if manifest.lane.get(k, _DEFAULTS.get(k)) != now.get(k)
        ]  # fmt: skip
        changed += changed_templates(manifest.lane, now)
        if changed:
            raise InputError(f"{self.path}: lane settings differ from the interrupted run ({', '.join(changed)})")

    def start(
        self,
        lane: Lane,
        suite: Suite,
        *,
        resumed: bool,
        server_models: Any,
        served_model: str | None,
        server: dict[str, Any] | None = None,
        shard: ShardRecord | None = None,
        server_identity: list[dict[str, Any]] | None = None,
        request_settings: dict[str, Any] | None = None,
        command: str | None = None,
        preflight: Preflight | None = None,
    ) -> None:
        """Write the manifest (keeping a resumed run's start time) and the suite as run. `server_identity`: what
        answered at each endpoint; `request_settings`: what was added to every request for it; `command` the ocllm
        command running it ("run", "matrix")."""
        previous = self.path / MANIFEST
        before = read_manifest(previous) if resumed and previous.exists() else None
        started = before.started_at if before is not None else _now()
        self.manifest = RunManifest(
            format=RUN_FORMAT,
            harness_version=__version__,
            scorer_version=SCORER_VERSION,
            lane=public_settings(lane),
            suite=SuiteRecord(name=suite.name, sha256=suite.sha256, tasks=len(suite.tasks)),
            server_models=server_models,
            served_model=served_model,
            server_kind=_kinds(server_identity),
            server_identity=server_identity,
            simulated=any(i.get("simulated") is True for i in server_identity or ()),
            request_settings=request_settings or {},
            started_at=started,
            requests=self._requests_before(before),
            retries=dict(before.retries) if before is not None else {},
            resends=before.resends if before is not None else 0,
            server=server,
            shard=shard,
            wall_s=before.wall_s if before is not None else 0.0,
            endpoints=before.endpoints if before is not None else None,
            command=command,
            # A resumed run without a preflight of its own keeps the one it started with.
            preflight=preflight if preflight is not None or before is None else before.preflight,
        )
        write_json(self.path / MANIFEST, self.manifest)
        atomic_write_bytes(self.path / SUITE_COPY, suite.canonical())

    def _requests_before(self, before: RunManifest | None) -> int:
        """What the earlier invocations cost. A manifest of an earlier version did not count: then the
        samples on disk say at least what their attempts were."""
        if before is None:
            return self._dropped_attempts
        if before.requests:
            return before.requests
        return sum(s.attempts for s in read_samples(self.samples_path)) + self._dropped_attempts

    def count_requests(self, n: int, retries: dict[str, int] | None = None, resends: int = 0) -> None:
        """This invocation's requests, the reasons of its retries, and its free re-sends, added to the run's."""
        assert self.manifest is not None, "start() comes first"
        self.manifest.requests += n
        for reason, count in (retries or {}).items():
            self.manifest.retries[reason] = self.manifest.retries.get(reason, 0) + count
        self.manifest.resends += resends

    def add_wall_time(
        self, seconds: float, endpoints: list[dict[str, Any]] | None = None, *, scoring_tail_s: float = 0.0
    ) -> None:
        """This invocation's time with requests in flight, added to the run's (and the replicas' figures), and the
        time its decisions went on after its last response."""
        assert self.manifest is not None, "start() comes first"
        self.manifest.wall_s = round(self.manifest.wall_s + seconds, 3)
        self.manifest.scoring_tail_s = round(self.manifest.scoring_tail_s + scoring_tail_s, 3)
        if endpoints is not None:
            self.manifest.endpoints = endpoints
        write_json(self.path / MANIFEST, self.manifest)  # the final scoring reads it for the serving figures

    def writer(self) -> SampleWriter:
        return SampleWriter(self.samples_path)

    def interrupted(self) -> None:
        """Ctrl-C: the samples written so far stay; the manifest says the run did not finish."""
        if self.manifest is not None:
            self.manifest.status = "interrupted"
            write_json(self.path / MANIFEST, self.manifest)

    def write_metrics(self, document: MetricsDocument) -> None:
        write_json(self.path / METRICS, document)

    def finish(self, *, notices: list[str], served_model: str | None, errors: int) -> None:
        assert self.manifest is not None, "start() comes first"
        self.manifest.notices = notices
        self.manifest.served_model = served_model
        self.manifest.finished_at = _now()
        self.manifest.status = "finished" if not errors else "finished_with_errors"
        write_json(self.path / MANIFEST, self.manifest)


def read_manifest(path: Path) -> RunManifest:
    """A run's manifest, as a resume needs it whole: a damaged one is refused in one line."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=RunManifest)
    except msgspec.DecodeError:
        raise InputError(f"{path}: not valid JSON; cannot resume this run") from None
    except msgspec.ValidationError as exc:
        raise InputError(f"{path}: not a run manifest ({exc}); cannot resume this run") from None


def _check_creatable(path: Path) -> None:
    """A folder that does not exist yet must be one we can make: its nearest existing parent is a folder we
    may write in. Found before the server is asked, and without creating anything."""
    parent = path
    while not parent.exists():
        if parent.parent == parent:
            return
        parent = parent.parent
    if parent == path:
        return
    if not parent.is_dir():
        raise InputError(f"{path}: cannot be created: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot be created: {parent} is not writable")
    # Permission bits do not tell everything (root may write anywhere by them, yet not in /proc, a read-only
    # mount or a full disk): a folder made and removed at once says it for sure.
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".ocllm-probe-", dir=parent))
    except OSError as exc:
        raise InputError(f"{path}: cannot be created in {parent}: {exc.strerror or exc}") from None


def _kinds(identities: list[dict[str, Any]] | None) -> str | None:
    """The one kind of server the endpoints are, or their kinds joined in order when they differ."""
    if not identities:
        return None
    kinds = list(dict.fromkeys(str(i.get("kind")) for i in identities))
    return ", ".join(kinds)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
