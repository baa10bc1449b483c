"""An agent's context as lane settings (docs/lanes.md, "An agent's context"): the system prompt a real agent sends
(`system_prompt_file`, a UTF-8 text file) and the tools it offers (`extra_tools_file`, a JSON list of OpenAI function
tools), read when the lane is read, so that the same tasks run bare and inside that context can be compared.

A path is read as a lane's `suite` path is: as given, so relative to the folder ocllm runs in. What the manifest
records of each file is its path, sha256 and size (the prompt) or tool names (the tools), never the text: every
request in samples.jsonl carries that already. A lane read back from its record holds the record alone (`text`,
`definitions` None): it scores and merges, and sends nothing.
"""

from __future__ import annotations

import codecs
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from ocllm.errors import InputError
from ocllm.files.file_kind import not_regular, refuse_lfs_pointer
from ocllm.files.reading import not_utf8, too_deep, unreadable
from ocllm.scoring.tool_schemas import tool_names, tools_problem

# The most bytes either file may hold, read no further: a million-token context is about 4 MB of English, and the
# tools are bounded again, far tighter, by the bound on suites' schemas (tool_schemas.py) once parsed.
MAX_FILE_BYTES = 4 * 1024 * 1024
_T = TypeVar("_T")


class SystemPromptFile(msgspec.Struct, frozen=True, kw_only=True):
    """The system prompt a lane read from `system_prompt_file`, sent as the system message of every request."""

    path: str  # as the lane wrote it
    sha256: str  # of the file's bytes (a byte-order mark included)
    bytes: int
    text: str | None = None  # None in a lane read back from its manifest, which keeps no text

    def record(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "bytes": self.bytes}


class ToolsFile(msgspec.Struct, frozen=True, kw_only=True):
    """The tools a lane read from `extra_tools_file`, added to the `tools` of every request."""

    path: str
    sha256: str
    tools: list[str]  # their names, in the file's order
    definitions: list[dict[str, Any]] | None = None  # None in a lane read back from its manifest

    def record(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "tools": list(self.tools)}


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, refused in one line when it is no regular file (a FIFO would wait, a device never end), a
    Git LFS pointer, unreadable, or past MAX_FILE_BYTES (read no further than that)."""
    if (problem := not_regular(path)) is not None:
        raise problem
    if path.is_dir():
        raise InputError(f"{path}: is a directory, expected a file")
    refuse_lfs_pointer(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise unreadable(path, exc) from None
    if len(raw) > MAX_FILE_BYTES:
        raise InputError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes (the bound on an agent's context file)")
    return raw


def _text(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is no part of the text
    except UnicodeDecodeError as exc:
        at = exc.start + (len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0)
        raise not_utf8(path, raw[at], at) from None


def read_system_prompt(given: str, who: str) -> SystemPromptFile:
    """The system prompt at `given`; `who` names the lane in what is refused ("lanes.toml: lane 'agent'")."""
    where = f"{who}: system_prompt_file"
    path = Path(given)
    raw = _said_by(where, _read_bytes, path)
    text = _said_by(where, _text, path, raw)
    if not text.strip():
        raise InputError(f"{where}: {given}: the file is empty (no system prompt to send)")
    return SystemPromptFile(path=given, sha256=hashlib.sha256(raw).hexdigest(), bytes=len(raw), text=text)


def read_tools(given: str, who: str) -> ToolsFile:
    """The tools at `given`: a JSON list of OpenAI function tools, or an object whose `tools` is one (as agents
    export them), each checked as a task's tools are (tool_schemas.py)."""
    where = f"{who}: extra_tools_file"
    path = Path(given)
    raw = _said_by(where, _read_bytes, path)
    text = _said_by(where, _text, path, raw)
    try:
        value = msgspec.json.decode(text)  # stricter than json: no NaN, no lone surrogate no request could carry
    except msgspec.DecodeError as exc:
        raise InputError(f"{where}: {given}: invalid JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"{where}: {too_deep(given)}") from None
    tools = value.get("tools") if isinstance(value, dict) else value
    if not isinstance(tools, list) or not tools:
        raise InputError(
            f'{where}: {given}: must hold a non-empty list of {{"type": "function", "function": {{...}}}} tools, or '
            'an object whose "tools" is one'
        )
    if (problem := tools_problem(tools, "the file's tools hold")) is not None:
        raise InputError(f"{where}: {given}: {problem}")
    return ToolsFile(path=given, sha256=hashlib.sha256(raw).hexdigest(), tools=tool_names(tools), definitions=tools)


def _said_by(where: str, read: Callable[..., _T], *args: Any) -> _T:
    """`read(*args)`, its one-line refusal led by the lane and the setting that named the file."""
    try:
        return read(*args)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def recorded_system_prompt(record: object, who: str) -> SystemPromptFile:
    """The record a manifest keeps of a system prompt file, as a lane read back holds it (no text)."""
    try:
        return msgspec.convert(record, SystemPromptFile)
    except msgspec.ValidationError as exc:
        raise InputError(f"{who}: system_prompt_file: {exc}") from None


def recorded_tools(record: object, who: str) -> ToolsFile:
    """The record a manifest keeps of an extra tools file, as a lane read back holds it (no definitions)."""
    try:
        return msgspec.convert(record, ToolsFile)
    except msgspec.ValidationError as exc:
        raise InputError(f"{who}: extra_tools_file: {exc}") from None
