"""Lanes: named configurations of one model behind one endpoint, from TOML or from flags.

A lanes file has an optional `[defaults]` table and one `[lanes.NAME]` table per lane; a lane's
settings override the defaults. The API key itself is never in a lane: only the name of the
environment variable that holds it.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from ocllm.errors import InputError
from ocllm.files.reading import read_text, too_deep
from ocllm.models import Policy
from ocllm.run.bounds import SEED_MAX, out_of_range
from ocllm.run.servers import ServerSettings, settings_problems
from ocllm.scoring import instructions, json_answer, mcq, substrings, task_types, tool_call
from ocllm.scoring import math as math_type

_LANE_NAME = re.compile(r"(?!\.+$)[A-Za-z0-9_.-]+")
# The lane's numeric settings; their ranges are in bounds.py.
_NUMERIC = (
    "temperature", "top_p", "max_tokens", "seed", "samples_per_task", "concurrency", "timeout_s", "max_attempts",
    "retry_budget_s",
)  # fmt: skip


class Lane(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    # The endpoint, with its /v1; or a list of replicas serving the same model, each request going to the least
    # busy (endpoints.py).
    base_url: str | list[str]
    model: str
    suite: str = "demo"
    api_key_env: str | None = None  # the NAME of the variable holding the key; the key is never stored
    # Each task type's prompt template (its room's default): `task_types.of(type).template_setting` names it.
    prompt_template: str = mcq.TASK_TYPE.default_template
    substring_template: str = substrings.TASK_TYPE.default_template
    math_template: str = math_type.TASK_TYPE.default_template
    instructions_template: str = instructions.TASK_TYPE.default_template
    json_template: str = json_answer.TASK_TYPE.default_template
    tool_template: str = tool_call.TASK_TYPE.default_template
    system_prompt: str | None = None
    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int | None = 4096
    seed: int | None = 0
    # How many times each task is asked (docs/statistics.md): sample i sends seed + i when the lane sends a seed,
    # so a sampled run repeats. avg@k, pass@k and maj@k are taken over the k samples.
    samples_per_task: int = 1
    reasoning: Literal["off", "native"] = "off"
    # Sent with a task that gives tools (tool_call tasks): "auto" lets the model choose, "required" makes it call
    # one, "none" forbids calls (OpenAI's values; vLLM needs --enable-auto-tool-choice for "auto").
    tool_choice: Literal["auto", "required", "none"] = "auto"
    # How `reasoning` reaches the server: as chat_template_kwargs.enable_thinking (vLLM, SGLang, llama.cpp
    # read it), or not at all, for servers that reject unknown fields (then use a system prompt or extra_body).
    reasoning_switch: Literal["chat_template_kwargs", "none"] = "chat_template_kwargs"
    # Merged into the request body; `chat_template_kwargs` here overrides what `reasoning` sends.
    extra_body: dict[str, Any] = msgspec.field(default_factory=dict)
    # Request fields never to send, for servers that reject fields they do not know: e.g. ["seed",
    # "stream_options", "chat_template_kwargs"].
    omit_fields: list[str] = msgspec.field(default_factory=list)
    # Send what this kind of server needs for identical runs to give identical answers (llama.cpp: cache_prompt
    # false; server_kind.py). False keeps the server's prompt cache: faster on shared prefixes, runs may differ.
    repeatable: bool = True
    allow_reasoning_fallback: bool = False
    conflict_policy: Literal["last", "strict"] = "last"
    think_prefilled: bool = False
    concurrency: int = 8
    stream: bool = False
    timeout_s: float = 600.0
    max_attempts: int = 4
    retry_budget_s: float = 1800.0  # longer than one timeout, so a timed-out request is retried
    # A server ocllm starts for the lane and stops after it (servers.py); None: use whatever is running.
    server: ServerSettings | None = None

    def base_urls(self) -> list[str]:
        """Every endpoint of the lane, without a trailing slash."""
        urls = [self.base_url] if isinstance(self.base_url, str) else self.base_url
        return [url.rstrip("/") for url in urls]

    def policy(self) -> Policy:
        return Policy(
            conflict_policy=self.conflict_policy,
            allow_reasoning_fallback=self.allow_reasoning_fallback,
            think_prefilled=self.think_prefilled,
        )


def lane_from_mapping(name: str, settings: dict[str, Any], where: str) -> Lane:
    try:
        lane = msgspec.convert({"name": name, **settings}, Lane)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: lane {name!r}: {exc}") from None
    # One validation for a lanes file and for flags alike: a value a server would take, or refuse, or
    # read as something else, is refused here first.
    for problem in _range_problems(lane):
        raise InputError(f"{where}: lane {name!r}: {problem}")
    if not _LANE_NAME.fullmatch(name):
        raise InputError(f"{where}: lane name {name!r}: use letters, digits, '_', '-' and '.' (it names a folder)")
    for task_type in task_types.TASK_TYPES.values():
        _check_template(where, name, task_type, getattr(lane, task_type.template_setting))
    return lane


def _range_problems(lane: Lane) -> list[str]:
    problems = []
    for name in _NUMERIC:  # each in its documented range (bounds.py), never NaN or infinite
        value = getattr(lane, name)
        if value is not None and (problem := out_of_range(name, value)) is not None:
            problems.append(problem)
    for where, value in _non_finite(lane.extra_body, "extra_body"):  # JSON has neither: a server would get null
        problems.append(f"{where} must be a finite number (got {value!r})")
    if lane.seed is not None and lane.seed + lane.samples_per_task - 1 > SEED_MAX:
        # Sample i sends seed + i: the last one must still be a seed every server takes.
        problems.append(f"seed + samples_per_task - 1 must be at most {SEED_MAX} (sample i sends seed + i)")
    if isinstance(lane.base_url, list):
        if not lane.base_url:
            problems.append("base_url is an empty list")
        elif len(set(lane.base_urls())) != len(lane.base_url):
            problems.append("base_url lists the same endpoint twice")
        elif lane.server is not None and len(lane.base_url) > 1:
            problems.append("a managed server serves one base_url, not a list of replicas")
    if lane.server is not None:
        problems += settings_problems(lane.server)
    return problems


def _non_finite(value: Any, where: str) -> list[tuple[str, float]]:
    """Every NaN or infinity inside a request field, with where it is."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [(where, value)]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _non_finite(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in _non_finite(item, f"{where}[{i}]")]
    return []


def _check_template(where: str, name: str, task_type: task_types.TaskType, template: str) -> None:
    """Fill the template once now, so that a bad one is refused before any request is sent."""
    field = task_type.template_setting
    for placeholder in task_type.required_placeholders:
        if "{" + placeholder + "}" not in template:
            raise InputError(f"{where}: lane {name!r}: {field} lacks {{{placeholder}}}")
    try:
        template.format(**{placeholder: "x" for placeholder in task_type.template_placeholders})
    except (KeyError, IndexError, ValueError) as exc:
        names = [f"{{{p}}}" for p in task_type.template_placeholders]
        may_use = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        raise InputError(
            f"{where}: lane {name!r}: {field} cannot be filled ({type(exc).__name__}: {exc}); it may use "
            f"{may_use}, and must write literal braces as {{{{ and }}}}"
        ) from None


def load_lanes(path: Path) -> dict[str, Lane]:
    """Every lane of a lanes file, in file order."""
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise InputError(too_deep(path)) from None
    defaults = data.get("defaults", {})
    lanes = data.get("lanes")
    if not isinstance(defaults, dict):
        raise InputError(f"{path}: [defaults] must be a table")
    if not isinstance(lanes, dict) or not lanes:
        raise InputError(f"{path}: no [lanes.NAME] tables")
    unknown = set(data) - {"defaults", "lanes"}
    if unknown:
        raise InputError(f"{path}: unknown top-level table(s): {', '.join(sorted(unknown))}")
    result = {}
    for name, settings in lanes.items():
        if not isinstance(settings, dict):
            raise InputError(f"{path}: lanes.{name} must be a table")
        merged = {**defaults, **settings}
        if merged.get("server") is False:
            del merged["server"]  # `server = false`: this lane uses whatever runs, whatever [defaults] starts
        for table in (defaults, settings):
            if not isinstance(table.get("extra_body", {}), dict):
                raise InputError(f"{path}: lane {name!r}: extra_body must be a table of request fields")
        extra = {**defaults.get("extra_body", {}), **settings.get("extra_body", {})}
        if extra:
            merged["extra_body"] = extra
        result[name] = lane_from_mapping(name, merged, str(path))
    return result


def pick_lane(path: Path, name: str) -> Lane:
    lanes = load_lanes(path)
    if name not in lanes:
        raise InputError(f"{path}: no lane named {name!r} (lanes: {', '.join(lanes)})")
    return lanes[name]


def public_settings(lane: Lane) -> dict[str, Any]:
    """The lane as recorded in a manifest: every setting, and never a secret (a managed server's env is
    recorded by its names only: its values may be tokens)."""
    settings = msgspec.to_builtins(lane)
    if settings.get("server") is not None:
        settings["server"]["env"] = sorted(settings["server"]["env"])
    return settings


def with_flags(lane: Lane, flags: dict[str, Any]) -> Lane:
    """The lane with the settings given on the command line replacing its own, checked as a lane is."""
    settings = msgspec.to_builtins(lane)
    settings.pop("name", None)
    return lane_from_mapping(lane.name, {**settings, **flags}, "command line")
