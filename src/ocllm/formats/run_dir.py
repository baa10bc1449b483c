"""A run directory of this project (manifest, suite copy, samples) as input to rescoring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ocllm.errors import InputError
from ocllm.formats.saved_run import DECISION_FIELDS, SavedRecord, SavedRun
from ocllm.rundir import MANIFEST, METRICS, SAMPLES, SUITE_COPY, read_samples
from ocllm.suites import load_suite


def load_run_dir(path: Path) -> SavedRun:
    if not (path / SUITE_COPY).exists() or not (path / SAMPLES).exists():
        raise InputError(f"{path}: not a run directory (needs {SUITE_COPY} and {SAMPLES})")
    tasks = load_suite(str(path / SUITE_COPY)).tasks
    samples = {s.task_id: s for s in read_samples(path / SAMPLES)}
    previous = _previous_decisions(path / METRICS)
    meta = _manifest(path / MANIFEST)
    records = []
    for task in tasks:
        sample = samples.get(task.id)
        if sample is None:
            continue  # not run yet: an unfinished run is re-scored on what it holds
        task = msgspec.structs.replace(task, prompt=sample.sent_prompt())
        records.append(SavedRecord(task, sample, previous.get(task.id, {}), {}))
    return SavedRun(path, meta, records)


def _previous_decisions(metrics: Path) -> dict[str, dict[str, Any]]:
    if not metrics.exists():
        return {}
    try:
        doc = msgspec.json.decode(metrics.read_bytes())
    except msgspec.DecodeError:
        return {}  # metrics are derived; a damaged file only means nothing to compare against
    return {
        t["task_id"]: {k: t[k] for k in DECISION_FIELDS if k in t}
        for t in doc.get("tasks", [])
        if isinstance(t, dict) and "task_id" in t
    }


def _manifest(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        manifest = msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError:
        return {}
    lane = manifest.get("lane", {})
    return {
        "run_format": manifest.get("format"),
        "lane": lane.get("name"),
        "model": lane.get("model"),
        "lane_settings": lane,
    }
