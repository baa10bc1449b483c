"""`workspace`: a folder of text files the model lists, reads, searches and edits. State: `{"files": {path: text}}`,
paths relative, "/"-separated. Every tool's effect is a pure function of the state and the arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ocllm.scoring.tool_use.environments.base import Environment, ToolError
from ocllm.scoring.tool_use.environments.schemas import function, string

MAX_FILES = 1000
MAX_FILE_CHARS = 100_000
MAX_MATCHES = 50


class Workspace(Environment):
    kind: ClassVar[str] = "workspace"
    SCHEMAS: ClassVar[tuple[dict[str, Any], ...]] = (
        function("list_files", "List the files of the workspace, or of one folder of it.",
                 {"folder": string("A folder, relative to the workspace; empty for all files.")}, required=()),
        function("read_file", "Read a whole text file.", {"path": string("The file's path.")}),
        function("search_files", "Find the lines that contain a text, in every file.",
                 {"text": string("The text to look for (case-sensitive).")}),
        function("write_file", "Create a file, or replace all of its text.",
                 {"path": string("The file's path."), "content": string("The whole new text.")}),
        function("edit_file", "Replace one occurrence of a text in a file; the text must occur exactly once.",
                 {"path": string("The file's path."), "old_text": string("The text to replace."),
                  "new_text": string("The text to put in its place.")}),
        function("move_file", "Move or rename a file.",
                 {"source": string("The file's path now."), "destination": string("Its new path.")}),
        function("delete_file", "Delete a file.", {"path": string("The file's path.")}),
    )  # fmt: skip

    def __init__(self, state: Mapping[str, Any]) -> None:
        self.files: dict[str, str] = dict(state.get("files", {}))

    @classmethod
    def state_problem(cls, state: object) -> str | None:
        if not isinstance(state, dict) or set(state) - {"files"}:
            return 'a workspace state is {"files": {path: text}}'
        files = state.get("files", {})
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            return "a workspace's files map each path to its text"
        if len(files) > MAX_FILES or any(len(v) > MAX_FILE_CHARS for v in files.values()):
            return f"a workspace holds at most {MAX_FILES} files of at most {MAX_FILE_CHARS} characters"
        return None

    def state(self) -> dict[str, Any]:
        return {"files": dict(sorted(self.files.items()))}

    def _file(self, path: str) -> str:
        if path not in self.files:
            raise ToolError(f"no file {path!r}")
        return self.files[path]

    def list_files(self, folder: str = "") -> dict[str, Any]:
        prefix = folder.strip("/")
        prefix = prefix + "/" if prefix else ""
        return {"files": sorted(p for p in self.files if p.startswith(prefix))}

    def read_file(self, path: str) -> dict[str, Any]:
        return {"path": path, "content": self._file(path)}

    def search_files(self, text: str) -> dict[str, Any]:
        if not text:
            raise ToolError("the text to look for is empty")
        matches = [
            {"path": path, "line": number, "text": line}
            for path in sorted(self.files)
            for number, line in enumerate(self.files[path].splitlines(), start=1)
            if text in line
        ]
        return {"matches": matches[:MAX_MATCHES], "more": max(0, len(matches) - MAX_MATCHES)}

    def write_file(self, path: str, content: str) -> dict[str, Any]:
        self._writable(path, content)
        self.files[path] = content
        return {"path": path, "characters": len(content)}

    def edit_file(self, path: str, old_text: str, new_text: str) -> dict[str, Any]:
        text = self._file(path)
        found = text.count(old_text) if old_text else 0
        if found != 1:
            raise ToolError(f"the text to replace occurs {found} times in {path!r}; it must occur exactly once")
        edited = text.replace(old_text, new_text, 1)
        self._writable(path, edited)
        self.files[path] = edited
        return {"path": path, "replaced": 1}

    def move_file(self, source: str, destination: str) -> dict[str, Any]:
        text = self._file(source)
        if destination in self.files:
            raise ToolError(f"{destination!r} exists already")
        self._writable(destination, text)
        del self.files[source]
        self.files[destination] = text
        return {"moved": source, "to": destination}

    def delete_file(self, path: str) -> dict[str, Any]:
        self._file(path)
        del self.files[path]
        return {"deleted": path}

    def _writable(self, path: str, text: str) -> None:
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise ToolError(f"{path!r} is not a path inside the workspace")
        if len(text) > MAX_FILE_CHARS:
            raise ToolError(f"a file holds at most {MAX_FILE_CHARS} characters")
        if path not in self.files and len(self.files) >= MAX_FILES:
            raise ToolError(f"the workspace holds at most {MAX_FILES} files")
