"""What each lane asks of a Slurm cluster: the `[defaults.slurm]` and `[lanes.NAME.slurm]` tables of a lanes file,
merged key by key (a lane's partition over the defaults', the defaults' account kept), checked before anything is
submitted, and turned into sbatch options.

    [defaults.slurm]
    partition = "gpu"
    account = "llm-eval"
    time = "04:00:00"
    [lanes.C_fp8.slurm]
    gres = "gpu:1"
    cpus = 8
    mem = "64G"
    extra = ["--constraint=a100"]

An element of a lane whose server ocllm starts runs alone on its node unless `exclusive = false`: two managed
servers of one lanes file listen on the port its commands name, and a second on one node would find the first there
(the lane is then refused: a managed lane never benchmarks a server it did not start).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from ocllm.errors import InputError
from ocllm.files.reading import read_text


class SlurmResources(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    partition: str | None = None
    account: str | None = None
    time: str | None = None  # Slurm's forms: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS
    gres: str | None = None  # "gpu:1", "gpu:a100:2"
    gpus: int | None = None  # --gpus, where a cluster counts GPUs that way rather than by gres
    cpus: int | None = None  # --cpus-per-task
    mem: str | None = None  # "64G", "512M", "1T" (no unit: megabytes)
    exclusive: bool | None = None  # None: exclusive when the lane starts its own server
    extra: tuple[str, ...] = ()  # any other sbatch option, written whole: "--constraint=a100"


_TIME = re.compile(r"\d+|\d+:\d{2}|\d+:\d{2}:\d{2}|\d+-\d+|\d+-\d+:\d{2}|\d+-\d+:\d{2}:\d{2}")
_MEM = re.compile(r"\d+[KMGT]?")
_GRES = re.compile(r"[A-Za-z_][\w.-]*(:[\w.-]+)*(:\d+)?(,[A-Za-z_][\w.-]*(:[\w.-]+)*(:\d+)?)*")
_NAME = re.compile(r"[\w.@+-]+")
_OPTION = re.compile(r"--[a-z][a-z-]*(=.+)?")
# Options ocllm sets itself on every element: a lanes file cannot change where the output goes or what it runs.
_OWN = ("--array", "--output", "--error", "--open-mode", "--requeue", "--no-requeue", "--export", "--job-name",
        "--dependency", "--wrap", "--parsable")  # fmt: skip


def slurm_tables(path: Path, lane_names: list[str]) -> dict[str, SlurmResources]:
    """Each lane's resources, from the lanes file at `path` (already read as lanes: its lanes are `lane_names`); a
    mistake in one is one line naming the lane and the key."""
    data = tomllib.loads(read_text(path))
    defaults = _table(data.get("defaults", {}).get("slurm", {}), path, "[defaults.slurm]")
    found = {}
    for name in lane_names:
        own = _table(data["lanes"][name].get("slurm", {}), path, f"[lanes.{name}.slurm]")
        found[name] = _checked({**defaults, **own}, path, name)
    return found


def _table(value: Any, path: Path, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{path}: {where} must be a table (partition, account, time, gres, gpus, cpus, mem, ...)")
    return value


def _checked(settings: dict[str, Any], path: Path, lane: str) -> SlurmResources:
    where = f"{path}: lane {lane!r}: slurm"
    try:
        resources = msgspec.convert(settings, SlurmResources)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: {exc}") from None
    for key, pattern, example in (("partition", _NAME, "gpu"), ("account", _NAME, "my-project"),
                                  ("time", _TIME, "04:00:00 or 1-12:00:00"), ("mem", _MEM, "64G"),
                                  ("gres", _GRES, "gpu:1")):  # fmt: skip
        value = getattr(resources, key)
        if value is not None and not pattern.fullmatch(value):
            raise InputError(f"{where}: {key} {value!r} is not of Slurm's form (e.g. {example})")
    for key in ("gpus", "cpus"):
        value = getattr(resources, key)
        if value is not None and value < 1:
            raise InputError(f"{where}: {key} must be at least 1, not {value}")
    for option in resources.extra:
        if not _OPTION.fullmatch(option):
            raise InputError(f"{where}: extra option {option!r} is not of the form --name or --name=value")
        if option.split("=", 1)[0] in _OWN:
            raise InputError(f"{where}: extra option {option!r}: ocllm sets {option.split('=', 1)[0]} itself")
    return resources


def sbatch_options(resources: SlurmResources, starts_server: bool) -> list[str]:
    """The lane's resources as sbatch options, in a fixed order."""
    options = []
    flags = (("partition", "--partition"), ("account", "--account"), ("time", "--time"), ("gres", "--gres"),
             ("gpus", "--gpus"), ("cpus", "--cpus-per-task"), ("mem", "--mem"))  # fmt: skip
    for key, flag in flags:
        value = getattr(resources, key)
        if value is not None:
            options.append(f"{flag}={value}")
    exclusive = resources.exclusive if resources.exclusive is not None else starts_server
    if exclusive:
        options.append("--exclusive")
    options.extend(resources.extra)
    return options
