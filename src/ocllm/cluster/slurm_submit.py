"""`ocllm matrix LANES --slurm`: the matrix submitted with Slurm's own `sbatch`, one job array per lane and a merge
job after them (slurm_scripts.py), each checked by `sbatch --test-only` before the first is submitted, so that a
partition, account or resource the cluster refuses is said in one line and nothing runs. Where the scripts and the
job ids go: OUT/slurm/ (LANE.sbatch, merge.sbatch, jobs.json); the logs OUT/slurm/logs/.

Why sbatch and not submitit: the jobs run `ocllm matrix` itself (a command, not a pickled Python function), the
one thing Slurm needs is the script, and a user can read, keep and resubmit it by hand; sbatch's `--test-only`
checks it against the cluster's own rules. submitit's pickles would tie the nodes to this interpreter's objects and
add nothing the script does not say (docs/architecture.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ocllm.cluster.resources import SlurmResources, sbatch_options
from ocllm.cluster.slurm_scripts import ArraySpec, MatrixPaths, element_script, merge_script
from ocllm.errors import OcllmError
from ocllm.files.atomic import atomic_write_text
from ocllm.run.lanes import Lane

SBATCH_TIMEOUT_S = 60
_JOB_ID = re.compile(r"\d+")


class Submitted(NamedTuple):
    arrays: dict[str, str]  # lane: its array's job id
    merge: str  # the merge job's id
    folder: Path  # OUT/slurm

    def job_ids(self) -> list[str]:
        return [*self.arrays.values(), self.merge]


def submit_matrix(
    lanes: dict[str, Lane],
    resources: dict[str, SlurmResources],
    lanes_file: Path,
    out: Path,
    shards: int,
    run_flags: list[str],
    say: Callable[[str], None],
) -> Submitted:
    """Check, write and submit the matrix's scripts; the jobs' ids. Nothing is submitted unless every script passed
    `sbatch --test-only`; a submission that fails midway cancels what it had submitted."""
    _check_environment(lanes)
    paths = MatrixPaths(lanes_file.resolve(), out.resolve(), out.resolve() / "slurm" / "logs")
    paths.logs.mkdir(parents=True, exist_ok=True)
    folder = paths.out / "slurm"
    specs = [ArraySpec(name, shards, sbatch_options(resources[name], lane.server is not None))
             for name, lane in lanes.items()]  # fmt: skip
    scripts = {}
    for spec in specs:
        scripts[spec.lane] = folder / f"{spec.lane}.sbatch"
        atomic_write_text(scripts[spec.lane], element_script(spec, paths, run_flags))
        _sbatch("--test-only", str(scripts[spec.lane]), what=f"lane {spec.lane!r}'s job array")
    merge_options = _merge_options(resources)
    merge_path = folder / "merge.sbatch"
    atomic_write_text(merge_path, merge_script(specs, paths, ["1"], merge_options))  # checked with a stand-in id
    _sbatch("--test-only", "--dependency=", str(merge_path), what="the merge job")
    arrays: dict[str, str] = {}
    try:
        for spec in specs:
            arrays[spec.lane] = _job_id(_sbatch("--parsable", str(scripts[spec.lane]), what=f"lane {spec.lane!r}"))
            say(f"submitted lane {spec.lane}: job array {arrays[spec.lane]} ({shards} shard(s))")
        atomic_write_text(merge_path, merge_script(specs, paths, list(arrays.values()), merge_options))
        merge = _job_id(_sbatch("--parsable", str(merge_path), what="the merge job"))
    except BaseException:
        cancel(list(arrays.values()))
        raise
    say(f"submitted the merge: job {merge}, after every lane's array")
    submitted = Submitted(arrays, merge, folder)
    atomic_write_text(folder / "jobs.json", json.dumps({"arrays": arrays, "merge": merge, "shards": shards}, indent=2))
    return submitted


def _check_environment(lanes: dict[str, Lane]) -> None:
    if shutil.which("sbatch") is None:
        raise OcllmError("--slurm: sbatch not found: run on a machine with Slurm's client commands (a login node)")
    for name, lane in lanes.items():
        # Handed to the jobs by sbatch's --export=ALL: checked here, not found missing on a node hours later.
        if lane.api_key_env is not None and not os.environ.get(lane.api_key_env):
            raise OcllmError(f"lane {name!r}: environment variable {lane.api_key_env} (api_key_env) is not set; the "
                             "jobs take it from this shell's environment")  # fmt: skip


def _merge_options(resources: dict[str, SlurmResources]) -> list[str]:
    """The merge runs where the lanes' partition and account say (the first lane's), on one CPU, no GPU."""
    first = next(iter(resources.values()))
    options = [f"--partition={first.partition}"] if first.partition else []
    if first.account:
        options.append(f"--account={first.account}")
    return [*options, "--cpus-per-task=1"]


def _sbatch(*args: str, what: str) -> str:
    try:
        done = subprocess.run(["sbatch", *args], capture_output=True, text=True, timeout=SBATCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise OcllmError(f"--slurm: sbatch did not answer within {SBATCH_TIMEOUT_S} s for {what}") from None
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split()) or f"exit code {done.returncode}"
        raise OcllmError(f"--slurm: the cluster refused {what}: {said}")
    return done.stdout + done.stderr


def _job_id(said: str) -> str:
    first = said.strip().splitlines()[0].split(";")[0] if said.strip() else ""
    if not _JOB_ID.fullmatch(first):
        raise OcllmError(f"--slurm: sbatch answered {said.strip()!r}, not a job id")
    return first


def cancel(job_ids: list[str]) -> None:
    """Cancel the jobs (their pending and running elements); what they finished stays on disk."""
    if job_ids and shutil.which("scancel") is not None:
        subprocess.run(["scancel", *job_ids], capture_output=True, text=True, timeout=SBATCH_TIMEOUT_S)
