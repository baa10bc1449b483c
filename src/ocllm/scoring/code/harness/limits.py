"""The rlimits a box sets on itself, from its job file, before anything else of it runs (inherited by whatever it
starts)."""

from __future__ import annotations

import json
import os
import resource

# Names for annotations only: a box imports as little as it can before the program runs (typing costs a start ~3 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def set_limits(limits: dict[str, Any]) -> None:
    cpu = int(limits["cpu_s"]) + 1  # RLIMIT_CPU is whole seconds: the supervisor's finer count decides first
    wanted = [
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_CPU, cpu, cpu + 1),  # SIGXCPU at the soft limit, SIGKILL at the hard one if it is caught
        (resource.RLIMIT_AS, limits["memory_bytes"], limits["memory_bytes"]),
        (resource.RLIMIT_NPROC, limits["processes"], limits["processes"]),
        (resource.RLIMIT_FSIZE, limits["file_bytes"], limits["file_bytes"]),
        (resource.RLIMIT_NOFILE, limits["open_files"], limits["open_files"]),
    ]
    for which, soft, hard in wanted:
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))


def start_box(script: str) -> tuple[str, dict[str, Any]]:
    """The first thing every box's script does: read its job file (beside the script) and set its limits. Returns
    the box's folder and its job."""
    here = os.path.dirname(os.path.abspath(script))
    with open(os.path.join(here, "job.json"), encoding="utf-8") as f:
        job = json.load(f)
    set_limits(job["limits"])
    return here, job
