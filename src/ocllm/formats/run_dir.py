"""A run directory of this project (manifest, suite copy, samples) as input to rescoring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ocllm.errors import InputError
from ocllm.formats.records import RunMeta, SavedRecord, SavedRun
from ocllm.formats.saved_run import DECISION_FIELDS
from ocllm.models import as_sent
from ocllm.notices import served_models
from ocllm.rundir import MANIFEST, METRICS, SAMPLES, SUITE_COPY, read_samples
from ocllm.suites import load_suite


def recognise(path: Path) -> bool:
    """A folder: this project's run directory (refused with a clear line when its files are missing)."""
    return path.is_dir()


def load_run_dir(path: Path) -> SavedRun:
    if not (path / SUITE_COPY).exists() or not (path / SAMPLES).exists():
        raise InputError(f"{path}: not a run directory (needs {SUITE_COPY} and {SAMPLES})")
    tasks = load_suite(str(path / SUITE_COPY)).tasks
    samples = {s.task_id: s for s in read_samples(path / SAMPLES)}
    previous = _previous_decisions(path / METRICS)
    meta = _manifest(path / MANIFEST)
    records: list[SavedRecord] = []
    for task in tasks:
        sample = samples.get(task.id)
        if sample is None:
            continue  # not run yet: an unfinished run is re-scored on what it holds
        records.append(SavedRecord(as_sent(task, sample), sample, previous.get(task.id, {}), {}))
    meta["tasks_in_suite"] = len(tasks)  # an interrupted run holds fewer: it is then not complete
    # Reports name the model the server answered as: the name the lane asked for may be an alias, or
    # another model altogether (a single-model server answers to any name).
    served = served_models(r.sample for r in records)
    if served:
        meta["model"] = served[0]
    return SavedRun(path, RunMeta.from_fields(meta), records)


def _previous_decisions(metrics: Path) -> dict[str, dict[str, Any]]:
    """The decisions metrics.json holds, by task id. Metrics are derived: a damaged or foreign file only
    means there is nothing to compare against, never an error."""
    doc = _json_object(metrics)
    tasks = doc.get("tasks")
    if not isinstance(tasks, list):
        return {}
    return {
        t["task_id"]: {k: t[k] for k in DECISION_FIELDS if k in t}
        for t in tasks
        if isinstance(t, dict) and isinstance(t.get("task_id"), str)
    }


def _manifest(path: Path) -> dict[str, Any]:
    manifest = _json_object(path)
    lane = manifest.get("lane")
    lane = lane if isinstance(lane, dict) else {}
    suite = manifest.get("suite")
    return {
        "run_format": manifest.get("format"),
        "lane": lane.get("name"),
        "model": lane.get("model"),
        "requested_model": lane.get("model"),
        "lane_settings": lane,
        "suite": suite.get("name") if isinstance(suite, dict) else None,
    }


def _json_object(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        doc = msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}
