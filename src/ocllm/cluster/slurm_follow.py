"""`--wait`: a submitted matrix followed to its end, read from `scontrol show job` (the cluster may keep no
accounting: `sacct` then knows nothing): a line each time the elements' states change, then the merge's outcome.
Ctrl-C cancels every job submitted, and what the elements finished stays on disk (`--resume` semantics: submitting
again takes up where they stopped)."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

from ocllm.cluster.slurm_submit import SBATCH_TIMEOUT_S, Submitted, cancel

POLL_S = 3.0
# The states after which a job never runs again (Slurm's own words).
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
         "PREEMPTED"}  # fmt: skip


class JobState(NamedTuple):
    job: str  # "1234", "1234_0" for an array's element, "1234_[2-5]" for its elements not started yet
    state: str  # PENDING, RUNNING, COMPLETED, ...
    reason: str
    restarts: int
    exit_code: str
    elements: int = 1  # how many elements the line stands for (pending ones are shown as one range)


def _elements(tasks: str) -> int:
    """How many elements an ArrayTaskId names: "3", or the pending ones' "0-7", "2,4-5", "0-9%2" (a throttle)."""
    count = 0
    for part in tasks.split("%", 1)[0].split(","):
        low, _, high = part.partition("-")
        if low.isdigit():
            count += int(high) - int(low) + 1 if high.isdigit() else 1
    return max(count, 1)


def job_states(job_id: str) -> list[JobState]:
    """Every element of the job (an array's each), as scontrol shows them now; [] once Slurm has forgotten it."""
    try:
        done = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True,
                              timeout=SBATCH_TIMEOUT_S)  # fmt: skip
    except subprocess.TimeoutExpired:
        return []
    states = []
    for line in done.stdout.splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "JobState" not in fields:
            continue
        task = fields.get("ArrayTaskId")
        name = f"{fields.get('ArrayJobId', job_id)}_{task}" if task else fields.get("JobId", job_id)
        restarts = int(fields.get("Restarts", "0") or 0)
        elements = _elements(task) if task else 1
        states.append(JobState(name, fields["JobState"], fields.get("Reason", "None"), restarts,
                               fields.get("ExitCode", ""), elements))  # fmt: skip
    return states


def follow(submitted: Submitted, say: Callable[[str], None], poll_s: float = POLL_S) -> int:
    """Follow the jobs until the merge has ended: 0 when it completed, 1 otherwise (with the elements that did not
    complete named). Ctrl-C cancels every job submitted, then is raised again."""
    last = ""
    try:
        while True:
            by_lane = {lane: job_states(job) for lane, job in submitted.arrays.items()}
            merge = job_states(submitted.merge)
            line = "; ".join([*(f"{lane}: {_counted(states)}" for lane, states in by_lane.items()),
                              f"merge: {_counted(merge)}"])  # fmt: skip
            if line != last:
                say(line)
                last = line
            merge_state = merge[0] if merge else None
            if merge_state is None or merge_state.state in FINAL:
                return _outcome(merge_state, by_lane, submitted, say)
            time.sleep(poll_s)
    except KeyboardInterrupt:
        cancel(submitted.job_ids())
        say(f"cancelled jobs {', '.join(submitted.job_ids())}; what they finished stays in {submitted.folder.parent}"
            " (submit again to resume it)")  # fmt: skip
        raise


def _counted(states: list[JobState]) -> str:
    if not states:
        return "gone from the queue"
    counts: Counter[str] = Counter()
    for s in states:
        counts[s.state.lower()] += s.elements
    said = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    restarts = sum(s.restarts for s in states)
    return said + (f" ({restarts} requeued)" if restarts else "")


def _outcome(merge: JobState | None, by_lane: dict[str, list[JobState]], submitted: Submitted,
             say: Callable[[str], None]) -> int:  # fmt: skip
    logs = submitted.folder / "logs"
    if merge is not None and merge.state == "COMPLETED" and merge.exit_code.startswith("0:"):
        say(f"merged: {submitted.folder.parent / 'merged'} (the matrix report in its report/ folder)")
        return 0
    failed = [s.job for states in by_lane.values() for s in states if s.state != "COMPLETED"]
    why = f"the merge ended {merge.state.lower()} (exit {merge.exit_code})" if merge else "the merge is gone"
    said = f"; elements that did not complete: {', '.join(failed)}" if failed else ""
    say(f"{why}{said}; logs in {logs}")
    return 1
