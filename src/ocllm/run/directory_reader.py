"""The run side's public reader of a run directory: what another side (analysis: `ocllm merge`) may use of the
folders `ocllm run` writes. The one door, so that a reader of shards never reaches into the run side's internals
(directory.py, lanes.py, servers.py, shards.py), which change with the run; the import contract in pyproject.toml
holds analysis to it. It reads, but for `check_output_folder`: whether a folder may become a run directory,
asked before one is written there, with the run's own rules."""

from __future__ import annotations

from pathlib import Path

from ocllm.models import RunManifest
from ocllm.run.agent_context import recorded_system_prompt, recorded_tools
from ocllm.run.directory import OUTPUT_SETTINGS, RunDirectory, changed_templates, read_manifest
from ocllm.run.lanes import Lane, lane_from_mapping
from ocllm.run.sampling import SAMPLING
from ocllm.run.servers import SERVER_LOG
from ocllm.run.shards import shard_of

__all__ = [
    "OUTPUT_SETTINGS",
    "SAMPLING",
    "SERVER_LOG",
    "Lane",
    "changed_templates",
    "check_output_folder",
    "read_manifest",
    "recorded_lane",
    "shard_of",
]


def check_output_folder(path: Path) -> None:
    """Refuse, in one line, a folder that cannot become a run directory: a file, an uncreatable path, someone
    else's folder. A run directory already there is no mistake (it is replaced)."""
    RunDirectory(path).check(resume=True)


def recorded_lane(manifest: RunManifest, path: Path) -> Lane:
    """The lane a run ran, from the settings its manifest records (its managed server aside: a reader starts
    none, and the manifest keeps only the names of the server's env). Checked as any lane is; `path` is the
    manifest, named in what is refused. An agent's files are held as their record (path, hash): a reader reads no
    file and sends no request."""
    settings = {k: v for k, v in manifest.lane.items() if k not in ("name", "server")}
    for key, recorded in (("system_prompt_file", recorded_system_prompt), ("extra_tools_file", recorded_tools)):
        if settings.get(key) is not None:
            settings[key] = recorded(settings[key], str(path))
    return lane_from_mapping(str(manifest.lane.get("name") or "merged"), settings, str(path))
