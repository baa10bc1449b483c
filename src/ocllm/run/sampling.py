"""The lane's sampling settings, each declared once: what the request carries besides the messages (temperature,
top_p, max_tokens, seed). From this table come the lane's values (a lanes file writes them at the lane's top level,
or in a `sampling` table), their ranges, the request body, the manifest's record, the settings tables' rows and
the command line's flags; a new sampling parameter is one more entry (docs/lanes.md, "Settings")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ocllm.errors import InputError
from ocllm.run.bounds import SEED_MAX, Bound


@dataclass(frozen=True)
class SamplingSetting:
    """One request field a lane sets, by its key (the lanes file's, the request's and the manifest's): its type, its
    default (None: not sent, the server's own), its range, and the help of its flag (`--top-p` for `top_p`).
    `per_sample`: sample i of a task sends the value + i (the seed, so that k sampled answers differ and come again
    in a rerun)."""

    key: str
    kind: type[int] | type[float]
    default: int | float | None
    bound: Bound
    help: str
    per_sample: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")


# In the order the manifest records them and the settings tables show them.
SAMPLING: dict[str, SamplingSetting] = {setting.key: setting for setting in (
    SamplingSetting(
        "temperature", float, 0.0, Bound(0, 10),
        "temperature sent with each request (default 0: greedy; sampling with --samples wants the model's own, e.g. "
        "0.6).",
    ),
    SamplingSetting(
        "top_p", float, None, Bound(0, 1, above_low=True), "top_p sent with each request (default: not sent)."
    ),
    SamplingSetting("max_tokens", int, 4096, Bound(1, 10_000_000), "max_tokens sent with each request."),
    SamplingSetting(
        "seed", int, 0, Bound(0, SEED_MAX), "seed sent with each request (sample i sends seed + i); the lane's default "
        "is 0.", per_sample=True,
    ),
)}  # fmt: skip


def value_problem(key: str, value: object) -> str | None:
    """What is wrong with a lane's value of a sampling setting, in one line, or None. None itself is taken: the
    field is then not sent."""
    if value is None:
        return None
    setting = SAMPLING[key]
    wrong_kind = isinstance(value, bool) or not isinstance(value, int | float)
    if wrong_kind or (setting.kind is int and isinstance(value, float)):
        kind = "an integer" if setting.kind is int else "a number"
        return f"{key} must be {kind} (got {value!r})"
    assert isinstance(value, int | float)
    if not setting.bound.holds(value):
        return f"{key} must be {setting.bound.describe()} (got {value!r})"
    return None


def sampling_of(settings: dict[str, Any], where: str, who: str) -> dict[str, Any]:
    """Take a lane's sampling settings out of its settings (a lanes file's table or a manifest's record): each at the
    top level, or in a `sampling` table (the top level wins where both set one), defaults for the rest, in the
    table's order, each checked. `who`: "lane 'A'", for the one line that refuses a value."""
    table = settings.pop("sampling", {})
    if not isinstance(table, Mapping):
        raise InputError(f"{where}: {who}: sampling must be a table of {', '.join(SAMPLING)}")
    given = dict(table)
    for key in SAMPLING:
        if key in settings:
            given[key] = settings.pop(key)
    for key in given:
        if key not in SAMPLING:
            raise InputError(f"{where}: {who}: sampling.{key}: not a sampling setting ({', '.join(SAMPLING)})")
    chosen = {key: given.get(key, setting.default) for key, setting in SAMPLING.items()}
    for key, value in chosen.items():
        if (problem := value_problem(key, value)) is not None:
            raise InputError(f"{where}: {who}: {problem}")
        if value is not None and SAMPLING[key].kind is float:
            chosen[key] = float(value)  # a TOML `temperature = 1` is sent and recorded as 1.0, as it always was
    return chosen


def request_fields(values: Mapping[str, Any], sample: int) -> dict[str, Any]:
    """The request's sampling fields for sample `sample`: each set one, in the table's order."""
    body: dict[str, Any] = {}
    for key, setting in SAMPLING.items():
        value = values.get(key)
        if value is not None:
            body[key] = value + sample if setting.per_sample else value
    return body
