"""What a run was run with, as the reports show it: the lane's settings from the run's manifest.json (the lane
settings without secrets, the managed server's command, the kind of server that answered), as text.

A run directory's manifest says it all; a metrics file of this project carries the lane settings in its
`source`; other inputs (the old harness's files, other tools' results) have no settings to show, and get none.
Nothing here is a secret to begin with (the manifest holds the API key's variable name, never the key, and a
server's env by its names); arguments of a server command that look like credentials are masked all the same,
since a user may have written a key into the command itself."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ocllm import simulated_words
from ocllm.run.directory_reader import SAMPLING
from ocllm.scoring.task_types import TASK_TYPES, recorded_templates

# A server command's flags whose value is a credential (--api-key KEY, --api-key=KEY, --hf-token ...).
_SECRET_FLAG = re.compile(r"^--?[\w-]*(key|token|secret|password|passwd)[\w-]*$", re.I)
MASK = "***"


def _text(value: object) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _urls(value: object) -> str:
    """The endpoints, any user:password in them left out."""
    urls = value if isinstance(value, list) else [value]
    out = []
    for url in urls:
        if not isinstance(url, str):
            continue
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        out.append(urlunsplit((parts.scheme, netloc, parts.path, "", "")))
    return ", ".join(out) or "not set"


def masked_command(argv: object) -> str:
    """A server command as one line, the value of any credential-like flag masked."""
    if isinstance(argv, str):
        argv = argv.split()
    if not isinstance(argv, list):
        return "not set"
    words = [str(word) for word in argv]
    out: list[str] = []
    hide_next = False
    for word in words:
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        flag, equals, _ = word.partition("=")
        if _SECRET_FLAG.match(flag):
            if equals:
                out.append(f"{flag}={MASK}")
            else:
                out.append(word)
                hide_next = True
            continue
        out.append(word)
    return " ".join(out)


def _agent_file(value: object) -> str:
    """An agent's file as the manifest records it (run/agent_context.py): its path, then its size or its tools, and
    the start of its sha256, which tells two versions of one file apart."""
    if not isinstance(value, Mapping):
        return _text(value)
    what = []
    if isinstance(value.get("bytes"), int):
        what.append(f"{value['bytes']:,} bytes")
    tools = value.get("tools")
    if isinstance(tools, list):
        what.append(f"{len(tools)} tools: {', '.join(str(name) for name in tools)}")
    if isinstance(value.get("sha256"), str):
        what.append(f"sha256 {value['sha256'][:12]}")
    return f"{value.get('path')} ({'; '.join(what)})" if what else str(value.get("path"))


def _server_kind(value: object) -> str | None:
    """The kind of server that answered (another part of the manifest's story: read as whatever it is)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        kind = value.get("kind") or value.get("name")
        return str(kind) if kind is not None else _text(dict(value))
    return str(value)


Row = tuple[str, str, Callable[[object], str]]
# (label, the lane's key, how its value reads): in the order a reader wants them; the sampling settings (each
# declared once, run/sampling.py) come after the suite, read when a table is drawn.
_FIRST: tuple[Row, ...] = (("model", "model", _text), ("suite", "suite", _text))
_LANE: tuple[Row, ...] = (
    ("reasoning", "reasoning", _text),
    ("reasoning switch", "reasoning_switch", _text),
    ("stream", "stream", _text),
    # Here the prompt templates, one row per type the run holds (`_templates`).
    ("system prompt", "system_prompt", _text),
    ("system prompt file", "system_prompt_file", _agent_file),
    ("extra tools file", "extra_tools_file", _agent_file),
    ("extra body", "extra_body", _text),
    ("fields never sent", "omit_fields", _text),
    ("conflict policy", "conflict_policy", _text),
    ("reasoning fallback", "allow_reasoning_fallback", _text),
    ("think prefilled", "think_prefilled", _text),
    ("concurrency", "concurrency", _text),
    ("timeout (s)", "timeout_s", _text),
    ("max attempts", "max_attempts", _text),
    ("base URL", "base_url", _urls),
    ("API key variable", "api_key_env", _text),
)


def as_sent(type_name: str, template: str) -> str:
    """A template as its prompts were sent: the braces it escapes (`\\boxed{{}}`) as one (`\\boxed{}`), its
    placeholders (`{question}`) left standing. A template that cannot be filled is shown as written."""
    placeholders = TASK_TYPES[type_name].template_placeholders
    try:
        return template.format(**{name: "{" + name + "}" for name in placeholders})
    except (KeyError, IndexError, ValueError):
        return template


def _templates(lane: Mapping[str, Any], types: Collection[str] | None) -> dict[str, str]:
    """The prompt template in force of each task type the run holds, as sent, one row a type (`templates.math`, the
    key a lanes file sets it by): a type it did not run shows nothing (issue 30, item 6; issue 41, item 4). None:
    the types are not known, and every type's is shown. Read from a record of any age (`recorded_templates`)."""
    templates = recorded_templates(lane)
    shown = [name for name in templates if types is None or name in types]
    return {f"templates.{name}": as_sent(name, templates[name]) for name in shown}


def _room_rows(lane: Mapping[str, Any], types: Collection[str] | None) -> dict[str, str]:
    """The settings the rooms of the types the run holds declare of their own (tool_call's `tool_choice`, code's
    `code_limits` and `code_runs`), one row each under its key, as the lane's record has them (a record of before
    that lacks one shows nothing for it). None: the types are not known, and every room's are shown."""
    rows: dict[str, str] = {}
    for name, room in TASK_TYPES.items():
        if types is not None and name not in types:
            continue
        for key in room.lane_settings:
            if key in lane:
                rows[key] = _text(lane[key])
    return rows


# The rows the templates come after: the request's own settings come first.
_TEMPLATES_AFTER = "stream"


def settings_of(
    lane: Mapping[str, Any], manifest: Mapping[str, Any] | None = None, types: Collection[str] | None = None
) -> dict[str, str]:
    """The settings table of one run: label -> value, as text; of the prompt templates, only those of the task
    `types` the run holds (all of them when None), each as its prompts were sent, and those rooms' own settings."""
    out: dict[str, str] = {}
    templates = {**_templates(lane, types), **_room_rows(lane, types)}
    sampling: tuple[Row, ...] = tuple((key, key, _text) for key in SAMPLING)
    for label, key, form in (*_FIRST, *sampling, *_LANE):
        if key in lane:
            out[label] = form(lane.get(key))
        if key == _TEMPLATES_AFTER:
            out.update(templates)
    out.update(templates)  # in its place above; last, for a record without the rows it comes after
    server = (manifest or {}).get("server")
    command = server.get("command") if isinstance(server, Mapping) else None
    if command is None and isinstance(lane.get("server"), Mapping):
        command = lane["server"].get("command")
    out["server command"] = masked_command(command) if command is not None else "none (a server already running)"
    kind = _server_kind((manifest or {}).get("server_kind"))
    if kind is not None:
        out["server kind"] = kind
    said = (manifest or {}).get("simulated")
    if isinstance(said, bool):  # a manifest written before it was recorded has no such row
        out[simulated_words.SETTING] = simulated_words.SIMULATED_VALUE if said else simulated_words.REAL_VALUE
    out.update(_fingerprint((manifest or {}).get("server_identity")))
    found = _preflight((manifest or {}).get("preflight"))
    if found is not None:
        out["preflight"] = found
    return out


def _fingerprint(identities: object) -> dict[str, str]:
    """What the servers said of the chat template (its sha256, cut to 12 hex digits) and the context they serve, where
    they said it: rows compared like any setting."""
    said = [i for i in identities if isinstance(i, Mapping)] if isinstance(identities, list) else []
    rows = {}
    templates = sorted({str(i["chat_template_sha256"])[:12] for i in said if i.get("chat_template_sha256")})
    contexts = sorted({f"{i['context']:,}" for i in said if isinstance(i.get("context"), int)})
    for label, values in (("chat template (sha256)", templates), ("server context (tokens)", contexts)):
        if values:
            rows[label] = " / ".join(values)  # replicas that differ show each value
    return rows


def _preflight(record: object) -> str | None:
    """What the run's preflight measured, a probe's outcome each (its problems named): compared like any setting, so
    two lanes whose server paths differ say so beside their scores."""
    findings = record.get("findings") if isinstance(record, Mapping) else None
    if not isinstance(findings, list) or not findings:
        return None
    parts = []
    for finding in findings:
        if isinstance(finding, Mapping):
            outcome = str(finding.get("outcome"))
            said = f": {finding.get('said')}" if outcome == "problem" else ""
            parts.append(f"{finding.get('probe')} {outcome}{said}")
    return "; ".join(parts)


def _manifest(path: Path) -> dict[str, Any] | None:
    """The manifest of a run directory, or of the run a RUN/metrics.json belongs to; None when there is none
    or it cannot be read (a report never fails for want of it)."""
    folder = path if path.is_dir() else path.parent if path.name == "metrics.json" else None
    if folder is None or not (folder / "manifest.json").is_file():
        return None
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def run_settings(
    path: Path, source: Mapping[str, Any] | None = None, types: Collection[str] | None = None
) -> dict[str, str]:
    """The settings of the run at `path`: from its manifest, else from the lane settings its document carries
    (`source.lane_settings`); empty when the input says nothing of them. `types`: the task types the run holds,
    whose prompt templates alone are shown."""
    manifest = _manifest(path)
    lane = manifest.get("lane") if manifest is not None else (source or {}).get("lane_settings")
    if not isinstance(lane, Mapping):
        return {}
    return settings_of(lane, manifest, types)
