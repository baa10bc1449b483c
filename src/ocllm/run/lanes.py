"""Lanes: named configurations of one model behind one endpoint, from TOML or from flags.

A lanes file has an optional `[defaults]` table and one `[lanes.NAME]` table per lane; a lane's
settings override the defaults. The API key itself is never in a lane: only the name of the
environment variable that holds it. A lane's per-type settings are its rooms': a prompt template per task type
in one `templates` table keyed by the type's name, and any setting a room declares of its own (tool_call's
`tool_choice`), checked by that room. An agent's context (`system_prompt_file`, `extra_tools_file`) is read from its
files when the lane is read (agent_context.py).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import msgspec

from ocllm.errors import InputError
from ocllm.files.reading import read_text, too_deep
from ocllm.models import Policy
from ocllm.run.agent_context import SystemPromptFile, ToolsFile, read_system_prompt, read_tools
from ocllm.run.bounds import SEED_MAX, out_of_range
from ocllm.run.sampling import SAMPLING, sampling_of
from ocllm.run.servers import ServerSettings, settings_problems
from ocllm.scoring import task_types
from ocllm.scoring.task_type import PromptSettings

_LANE_NAME = re.compile(r"(?!\.+$)[A-Za-z0-9_.-]+")
# The lane's numeric settings besides its sampling ones (sampling.py declares theirs): their ranges are in bounds.py.
_NUMERIC = ("samples_per_task", "concurrency", "timeout_s", "max_attempts", "retry_budget_s")


class Lane(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    # The endpoint, with its /v1; or a list of replicas serving the same model, each request going to the least
    # busy (endpoints.py).
    base_url: str | list[str]
    model: str
    suite: str = "demo"
    api_key_env: str | None = None  # the NAME of the variable holding the key; the key is never stored
    # A prompt template per task type, by the type's name (`[lanes.X.templates] math = "..."`); a type the lane
    # does not name is asked with its room's default (`template_for`).
    templates: dict[str, str] = msgspec.field(default_factory=dict)
    system_prompt: str | None = None
    # An agent's context (agent_context.py): a system prompt read from a file, sent in place of `system_prompt` (a lane
    # sets one or the other), and tools added to every request's `tools`. A lanes file writes each as a path; the lane
    # holds what was read, and its record (the manifest) the path, the sha256, and the size or the tools' names.
    system_prompt_file: SystemPromptFile | None = None
    extra_tools_file: ToolsFile | None = None
    # The request's sampling fields (temperature, top_p, max_tokens, seed), each declared once in sampling.py, by
    # key; a lanes file writes them at the lane's top level (or in a `sampling` table), and so does the manifest.
    sampling: dict[str, Any] = msgspec.field(default_factory=lambda: {k: s.default for k, s in SAMPLING.items()})
    # How many times each task is asked (docs/statistics.md): sample i sends seed + i when the lane sends a seed,
    # so a sampled run repeats. avg@k, pass@k and maj@k are taken over the k samples.
    samples_per_task: int = 1
    reasoning: Literal["off", "native"] = "off"
    # The settings rooms declare of their own (tool_call's `tool_choice`), by key, as the lane sets them; written at
    # the lane's top level, never as this table (lane_from_mapping). A key not here is its room's default.
    room_settings: dict[str, Any] = msgspec.field(default_factory=dict)
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

    def template_for(self, task_type: task_types.TaskType) -> str:
        """The lane's template for a type: its own, else the room's default."""
        return self.templates.get(task_type.name, task_type.default_template)

    def prompt_settings(self, task_type: task_types.TaskType) -> PromptSettings:
        return PromptSettings(template=self.template_for(task_type), system_prompt=self.system_text())

    def system_text(self) -> str | None:
        """The system prompt the lane sends: its file's text, else its own `system_prompt`."""
        if self.system_prompt_file is None:
            return self.system_prompt
        # A lane read back from its manifest keeps no text: it scores and merges, and never builds a request.
        assert self.system_prompt_file.text is not None, "a lane read back from its record sends no request"
        return self.system_prompt_file.text

    def extra_tools(self) -> list[dict[str, Any]]:
        """The tools the lane adds to every request (its `extra_tools_file`'s), none when it sets none."""
        if self.extra_tools_file is None:
            return []
        assert self.extra_tools_file.definitions is not None, "a lane read back from its record sends no request"
        return self.extra_tools_file.definitions

    def settings_for(self, task_type: task_types.TaskType) -> dict[str, Any]:
        """The values of the settings a room declares of its own, the room's defaults for those the lane leaves."""
        return {key: self.room_settings.get(key, setting.default) for key, setting in task_type.lane_settings.items()}

    def policy(self) -> Policy:
        return Policy(
            conflict_policy=self.conflict_policy,
            allow_reasoning_fallback=self.allow_reasoning_fallback,
            think_prefilled=self.think_prefilled,
            room_settings=self.room_settings_set(),
        )

    def room_settings_set(self) -> dict[str, Any]:
        """The rooms' own settings the lane gives a value other than the room's default (what a policy carries, so
        that a lane read back from its record, which writes every default, scores as the lane it was)."""
        return {
            key: value for key, value in self.room_settings.items()
            if key not in ROOM_SETTINGS or value != ROOM_SETTINGS[key].lane_settings[key].default
        }  # fmt: skip


def room_settings(types: Iterable[task_types.TaskType]) -> dict[str, task_types.TaskType]:
    """The keys rooms declare as lane settings of their own, each with its room. No two rooms may declare one key,
    and no room a key the lane has already (its own settings, its sampling settings, a template's key of before): a
    clash is a mistake in the code, raised when this module is imported, so that a room registered with one fails
    every test."""
    before = {t.template_key_before for t in task_types.TASK_TYPES.values()}
    taken = set(Lane.__struct_fields__) | set(SAMPLING) | before
    found: dict[str, task_types.TaskType] = {}
    for task_type in types:
        for key in task_type.lane_settings:
            if key in found or key in taken:
                raise AssertionError(f"task type {task_type.name!r} declares lane setting {key!r}, which is taken")
            found[key] = task_type
    return found


ROOM_SETTINGS = room_settings(task_types.TASK_TYPES.values())
# The keys each type's template had before the `templates` table ("math_template" -> math): still read.
KEYS_BEFORE = {t.template_key_before: t for t in task_types.TASK_TYPES.values() if t.template_key_before}


def templates_of(settings: dict[str, Any], where: str, who: str) -> tuple[dict[str, str], list[str]]:
    """Take a lane's templates out of its settings (a lanes file's table, or a manifest's record): the `templates`
    table and the keys written before it, by type name, each checked to name a registered type. Also returns the
    keys of before that were used, for the note that asks to move them. `who`: "lane 'A'", or "[defaults]"."""
    table = settings.pop("templates", {})
    if not isinstance(table, dict):
        raise InputError(f"{where}: {who}: templates must be a table of task type = template")
    templates: dict[str, str] = {}
    for type_name, template in table.items():
        if type_name not in task_types.TASK_TYPES:
            raise InputError(
                f"{where}: {who}: templates.{type_name}: no task type {type_name!r} (the types: "
                f"{', '.join(task_types.TASK_TYPES)})"
            )
        templates[type_name] = template
    used = []
    for key, task_type in KEYS_BEFORE.items():
        if key not in settings:
            continue
        used.append(key)
        template = settings.pop(key)
        if task_type.name in table:
            raise InputError(
                f"{where}: {who}: sets both {key} and templates.{task_type.name}; keep templates.{task_type.name}"
            )
        templates[task_type.name] = template
    for type_name, template in templates.items():
        if not isinstance(template, str):
            raise InputError(f"{where}: {who}: {_spelled(type_name, used)} must be a string")
    return templates, used


def _spelled(type_name: str, used: list[str]) -> str:
    """How the lane wrote a type's template: the key of before if it used one, else `templates.<type>`."""
    before = task_types.of(type_name).template_key_before
    return before if before in used else f"templates.{type_name}"


def lane_from_mapping(name: str, settings: dict[str, Any], where: str) -> Lane:
    settings = dict(settings)
    if "room_settings" in settings:  # the lane's holder of its rooms' settings, never written as such
        raise InputError(f"{where}: lane {name!r}: unknown setting room_settings")
    templates, used = templates_of(settings, where, f"lane {name!r}")
    sampling = sampling_of(settings, where, f"lane {name!r}")
    _read_agent_files(settings, f"{where}: lane {name!r}")
    own: dict[str, Any] = {}  # the rooms' own settings the lane sets, each checked by its room
    for key, task_type in ROOM_SETTINGS.items():
        if key in settings:
            value = settings.pop(key)
            if (problem := task_type.lane_settings[key].problem(value)) is not None:
                raise InputError(f"{where}: lane {name!r}: {key} {problem}")
            own[key] = value
    try:
        lane = msgspec.convert(
            {"name": name, **settings, "templates": templates, "sampling": sampling, "room_settings": own}, Lane
        )
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: lane {name!r}: {exc}") from None
    # One validation for a lanes file and for flags alike: a value a server would take, or refuse, or
    # read as something else, is refused here first.
    for problem in _range_problems(lane):
        raise InputError(f"{where}: lane {name!r}: {problem}")
    if not _LANE_NAME.fullmatch(name):
        raise InputError(f"{where}: lane name {name!r}: use letters, digits, '_', '-' and '.' (it names a folder)")
    for type_name in templates:
        _check_template(where, name, task_types.of(type_name), templates[type_name], _spelled(type_name, used))
    return lane


def _read_agent_files(settings: dict[str, Any], who: str) -> None:
    """Replace the paths a lane gives its agent's context with what the files hold (agent_context.py), checked: a
    lanes file or a flag gives a path; `with_flags` and a lane read back from its record give what was read already,
    which a TOML file cannot spell."""
    if settings.get("system_prompt_file") is not None and settings.get("system_prompt") is not None:
        # One system message a request: the lane's own text or the agent's, not both mixed by a rule of ocllm's.
        raise InputError(
            f"{who}: sets both system_prompt and system_prompt_file; keep system_prompt_file to send the agent's "
            "prompt from its file, or system_prompt to send the lane's own text"
        )
    for key, kind, read in (
        ("system_prompt_file", SystemPromptFile, read_system_prompt),
        ("extra_tools_file", ToolsFile, read_tools),
    ):
        given = settings.get(key)
        if isinstance(given, str):
            settings[key] = read(given, who)
        elif given is not None and not isinstance(given, kind):
            raise InputError(f"{who}: {key} must be the path of a file (a string)")


def _range_problems(lane: Lane) -> list[str]:
    problems = []
    for name in _NUMERIC:  # each in its documented range (bounds.py), never NaN or infinite
        value = getattr(lane, name)
        if value is not None and (problem := out_of_range(name, value)) is not None:
            problems.append(problem)
    for where, value in _non_finite(lane.extra_body, "extra_body"):  # JSON has neither: a server would get null
        problems.append(f"{where} must be a finite number (got {value!r})")
    seed = lane.sampling.get("seed")
    if seed is not None and seed + lane.samples_per_task - 1 > SEED_MAX:
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


def _check_template(where: str, name: str, task_type: task_types.TaskType, template: str, field: str) -> None:
    """Fill the template once now, so that a bad one is refused before any request is sent. `field`: how the lane
    wrote it (`templates.math`, or `math_template`), for the one line that refuses it."""
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


def load_lanes(path: Path, announce: Callable[[str], None] | None = None) -> dict[str, Lane]:
    """Every lane of a lanes file, in file order. `announce` is told, in one line, of templates written under the
    keys of before (`math_template`), which are read as they were."""
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
    _, moved = templates_of(dict(defaults), str(path), "[defaults]")  # checked alone, so a mistake names [defaults]
    for name, settings in lanes.items():
        if not isinstance(settings, dict):
            raise InputError(f"{path}: lanes.{name} must be a table")
        _, used = templates_of(dict(settings), str(path), f"lane {name!r}")
        moved += [key for key in used if key not in moved]
        merged = _merged_templates(defaults, settings)
        for own, other in (("system_prompt", "system_prompt_file"), ("system_prompt_file", "system_prompt")):
            if own in settings and other not in settings:
                merged.pop(other, None)  # the lane's own system prompt replaces [defaults]' other spelling of one
        merged.pop("slurm", None)  # what the lane asks of a Slurm cluster: cluster/resources.py reads it
        if merged.get("server") is False:
            del merged["server"]  # `server = false`: this lane uses whatever runs, whatever [defaults] starts
        for table in (defaults, settings):
            if not isinstance(table.get("extra_body", {}), dict):
                raise InputError(f"{path}: lane {name!r}: extra_body must be a table of request fields")
        extra = {**defaults.get("extra_body", {}), **settings.get("extra_body", {})}
        if extra:
            merged["extra_body"] = extra
        # Key by key, the lane's over [defaults], however each wrote them.
        sampling = {**_sampling_given(defaults, f"{path}: [defaults]"), **_sampling_given(settings, f"{path}: {name}")}
        for key in (*SAMPLING, "sampling"):
            merged.pop(key, None)
        if sampling:
            merged["sampling"] = sampling
        result[name] = lane_from_mapping(name, merged, str(path))
    if moved and announce is not None:
        announce(_move_note(path, moved))
    return result


def _merged_templates(defaults: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """A lane's settings over [defaults], with the templates merged type by type: a lane's template of a type (in
    its `templates` table, or under the type's key of before) replaces the defaults' one of that type, however that
    was written, and leaves the defaults' others. Each stays written as it was, so that a refusal names it so."""
    merged = {**defaults, **settings}
    table = {**_table(defaults), **_table(settings)}
    for key, task_type in KEYS_BEFORE.items():
        if key in settings:
            table.pop(task_type.name, None)
        elif task_type.name in _table(settings):
            merged.pop(key, None)
    if "templates" in merged:
        merged["templates"] = table
    return merged


def _sampling_given(settings: dict[str, Any], where: str) -> dict[str, Any]:
    """The sampling settings one table of a lanes file gives, from its `sampling` table and its top level (which wins
    within the table)."""
    table = settings.get("sampling", {})
    if not isinstance(table, dict):
        raise InputError(f"{where}: sampling must be a table of {', '.join(SAMPLING)}")
    return {**table, **{key: settings[key] for key in SAMPLING if key in settings}}


def _table(settings: dict[str, Any]) -> dict[str, Any]:
    table = settings.get("templates", {})
    return table if isinstance(table, dict) else {}


def _move_note(path: Path, keys: list[str]) -> str:
    """One line: the keys of before are still read, and how templates are written now."""
    now = " and ".join(f'{KEYS_BEFORE[key].name} = "..."' for key in keys)
    verb = "is" if len(keys) == 1 else "are"
    return (
        f"{path}: {' and '.join(keys)} {verb} read as before, but templates are one table now: write "
        f"[lanes.NAME.templates] (or [defaults.templates]) with {now}"
    )


def one_off_lane_name(out: Path | None) -> str:
    """The name of a lane given by flags alone (`ocllm run` without --lane): the run directory's own name, which
    the user chose to tell this run from others, when it is a usable lane name; else `adhoc`."""
    if out is None:
        return "adhoc"
    name = out.resolve().name
    return name if _LANE_NAME.fullmatch(name) else "adhoc"


def pick_lane(path: Path, name: str, announce: Callable[[str], None] | None = None) -> Lane:
    lanes = load_lanes(path, announce)
    if name not in lanes:
        raise InputError(f"{path}: no lane named {name!r} (lanes: {', '.join(lanes)})")
    return lanes[name]


def public_settings(lane: Lane) -> dict[str, Any]:
    """The lane as recorded in a manifest: every setting, and never a secret (a managed server's env is
    recorded by its names only: its values may be tokens).

    Written in the keys a lanes file uses now (issue 41): every type's template in force (the room's default
    included) under `templates.<type>`, never under the keys of before (`prompt_template`, ...), which the docs ask
    users to move away from; and each room's own setting at the top level where the lane writes it (`tool_choice`,
    after `reasoning`). `lane_from_mapping` reads it back, and a record of before too; its readers take the
    templates through `task_types.recorded_templates`, which reads both."""
    settings: dict[str, Any] = {}
    for key, value in msgspec.to_builtins(lane).items():
        if key == "templates":
            settings["templates"] = {t.name: lane.template_for(t) for t in task_types.TASK_TYPES.values()}
        elif key == "room_settings":
            for task_type in task_types.TASK_TYPES.values():
                settings.update(lane.settings_for(task_type))
        elif key == "sampling":
            settings.update(value)  # at the top level, where the lanes file writes them
        elif key in ("system_prompt_file", "extra_tools_file"):
            # What was read, never the text: every request in samples.jsonl carries it.
            file = getattr(lane, key)
            settings[key] = file.record() if file is not None else None
        else:
            settings[key] = value
    if settings.get("server") is not None:
        settings["server"]["env"] = sorted(settings["server"]["env"])
    return settings


def with_flags(lane: Lane, flags: dict[str, Any]) -> Lane:
    """The lane with the settings given on the command line replacing its own, checked as a lane is."""
    settings = msgspec.to_builtins(lane)
    settings.pop("name", None)
    settings.update(settings.pop("room_settings"))  # written at the top level, as a lanes file writes them
    settings.update(settings.pop("sampling"))
    # The agent's files as they were read when the lane was (not read again); a --system-prompt replaces the file's.
    settings["system_prompt_file"] = None if "system_prompt" in flags else lane.system_prompt_file
    settings["extra_tools_file"] = lane.extra_tools_file
    return lane_from_mapping(lane.name, {**settings, **flags}, "command line")
