"""Where the runs under DIR are: DIR itself, its lanes (a matrix: DIR/<lane>/), or its shards' lanes (a sharded or
submitted matrix: DIR/shard-K/<lane>/). A run folder is one that holds manifest.json or samples.jsonl; folders are
looked for a few levels down, again at every refresh (a shard's array element starts later than the others)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from ocllm.errors import InputError
from ocllm.files.atomic import MANIFEST, SAMPLES

# How far below DIR a run folder is looked for: DIR/shard-K/<lane>/ is two levels, one more for a folder of those.
DEPTH = 3
# A shard's folder, as docs/scaling.md and the Slurm submission lay them out.
SHARD_FOLDER = re.compile(r"shard-(\d+)")
# Where `ocllm merge` writes a sharded matrix's lanes: the same runs as the shards, joined; left out beside them.
MERGED_FOLDER = "merged"


class Spot(NamedTuple):
    """One run folder: its lane, its shard (the K of a shard-K folder; None: not sharded by folder) and its path."""

    lane: str
    shard: int | None
    path: Path


def check_folder(root: Path) -> None:
    """A DIR that exists must be a folder this process can list (one line, exit 2, if not)."""
    if not root.is_dir():
        raise InputError(f"{root}: not a folder")
    if not os.access(root, os.R_OK | os.X_OK):
        raise InputError(f"{root}: cannot read this folder (permission denied)")


def is_run_folder(path: Path) -> bool:
    return (path / MANIFEST).is_file() or (path / SAMPLES).is_file()


def find_runs(root: Path) -> list[Spot]:
    """The run folders under `root`, by lane and then shard; `root` itself when it is one (its lane: its folder's
    name, which is what `ocllm matrix` calls a lane's folder)."""
    if is_run_folder(root):
        return [Spot(root.resolve().name, None, root)]
    found: list[Spot] = []
    _walk(root, root, 1, found)
    if any(spot.shard is not None for spot in found):
        found = [spot for spot in found if spot.path.relative_to(root).parts[0] != MERGED_FOLDER]
    return sorted(found, key=lambda s: (s.lane, -1 if s.shard is None else s.shard, str(s.path)))


def _walk(root: Path, folder: Path, depth: int, found: list[Spot]) -> None:
    try:
        children = sorted(entry for entry in folder.iterdir() if entry.is_dir() and not entry.name.startswith("."))
    except OSError:
        return  # a folder that vanished or cannot be listed mid-walk: looked at again next time
    for child in children:
        if is_run_folder(child):
            found.append(Spot(child.name, _shard_of(child.relative_to(root)), child))
        elif depth < DEPTH:
            _walk(root, child, depth + 1, found)


def _shard_of(relative: Path) -> int | None:
    for part in relative.parts[:-1]:
        match = SHARD_FOLDER.fullmatch(part)
        if match:
            return int(match.group(1))
    return None
