"""The batch scripts of a matrix on Slurm: one job array per lane (element K runs shard K of the lane, with its
managed server, into OUT/shard-K/LANE), and one merge job after every array (each lane's shards into OUT/merged/LANE,
then the matrix report). Every element runs with `--resume`: one that was preempted, requeued, killed (it requeues
itself), or failed and was submitted again takes up where it stopped, nothing lost and nothing asked twice. Its log
is appended to (`--open-mode=append`), so a requeued element's earlier attempts stay readable. The scripts name the
lanes' API key variables nowhere: sbatch's `--export=ALL` hands the submitting shell's environment to the jobs."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import NamedTuple

# How many times an element whose ocllm was killed by a signal (not Slurm's: the OOM killer, a crash) requeues itself
# before it is left failed: a kill that comes back every time is the lane's to mend, not the cluster's to retry.
REQUEUES_AFTER_A_KILL = 3


class ArraySpec(NamedTuple):
    lane: str
    shards: int
    options: list[str]  # the lane's resources (resources.sbatch_options)


class MatrixPaths(NamedTuple):
    lanes_file: Path  # absolute: the jobs run wherever Slurm starts them
    out: Path  # absolute, on storage every node sees
    logs: Path

    def shard(self, index: int | str) -> Path:
        return self.out / f"shard-{index}"

    def merged(self, lane: str) -> Path:
        return self.out / "merged" / lane


def _ocllm() -> list[str]:
    """The ocllm of this submission, as the jobs start it: this interpreter (on a shared file system, as the outputs
    are)."""
    return [sys.executable, "-m", "ocllm"]


def _header(name: str, log: Path, options: list[str]) -> list[str]:
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --output={log}", "#SBATCH --open-mode=append",
             "#SBATCH --export=ALL"]  # fmt: skip
    lines += [f"#SBATCH {option}" for option in options]
    return lines


def element_script(spec: ArraySpec, paths: MatrixPaths, run_flags: list[str]) -> str:
    """Lane `spec.lane`'s array: element K runs shard K of N (`run_flags`: the matrix's own flags, passed on)."""
    header = _header(f"ocllm-{spec.lane}", paths.logs / f"{spec.lane}-%a.log", [
        f"--array=0-{spec.shards - 1}", "--requeue", *spec.options])  # fmt: skip
    command = [*_ocllm(), "matrix", str(paths.lanes_file), "--lane", spec.lane, "--resume", *run_flags]
    element = '"$SLURM_ARRAY_TASK_ID"'
    shard = f"--shard {element}/{spec.shards} --out {shlex.quote(str(paths.out))}/shard-{element}"
    return "\n".join([
        *header,
        "set -u",
        'echo "ocllm element ${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID on $(hostname), '
        'restart ${SLURM_RESTART_COUNT:-0}"',
        # Slurm's own signals (SIGTERM on preemption or requeue) reach ocllm as every process of the job, and it stops
        # its server. Killed otherwise (the kernel's OOM killer, a crash): the element requeues itself, a few times.
        f"{shlex.join(command)} {shard}",
        "status=$?",
        f'if [ "$status" -gt 128 ] && [ "$status" -ne 130 ] && [ "$status" -ne 143 ] && '
        f'[ "${{SLURM_RESTART_COUNT:-0}}" -lt {REQUEUES_AFTER_A_KILL} ]; then',
        '  echo "ocllm was killed (signal $((status - 128))): the element is requeued, and resumes where it stopped"',
        '  scontrol requeue "$SLURM_JOB_ID" && exit 0',
        "fi",
        'exit "$status"',
        "",
    ])  # fmt: skip


def merge_script(lanes: list[ArraySpec], paths: MatrixPaths, array_ids: list[str], options: list[str]) -> str:
    """After every array has ended, whatever its outcome (afterany: an `afterok` behind a cancelled element would
    never run), each lane's shards merged and the matrix report written; a shard that did not finish is refused by
    the merge, which names it, and the job fails."""
    after = [f"--dependency=afterany:{':'.join(array_ids)}", "--kill-on-invalid-dep=no", *options]
    header = _header("ocllm-merge", paths.logs / "merge.log", after)
    lines = [*header, "set -u", "status=0"]
    for spec in lanes:
        shards = [str(paths.shard(k) / spec.lane) for k in range(spec.shards)]
        merge = [*_ocllm(), "merge", *shards, "-o", str(paths.merged(spec.lane))]
        lines.append(f"{shlex.join(merge)} || status=1")
    report = [*_ocllm(), "matrix-report", str(paths.out / "merged")]
    lines += ['if [ "$status" = 0 ]; then', f"  {shlex.join(report)} || status=1", "fi", 'exit "$status"', ""]
    return "\n".join(lines)
