"""Calls written as text: what a server's tool parser should have taken out of the answer and did not. Shared by the
rooms whose answers are calls (docs/scoring/ says what each makes of them).

Each known format is looked for in one piece of text, in a fixed order (Hermes/Qwen tags, Mistral's marker, Llama's
python tag, a bare JSON call, Python-call syntax); the first format that yields a well-formed call gives all the
calls of that piece. Python-call syntax is read with `ast` and its values with `ast.literal_eval` on the parsed
nodes: literals only, nothing is ever evaluated. Every search is bounded, so a long degenerate answer costs little.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Literal, NamedTuple

# The formats a call written as text is found in, and each in words (what the advice says the model wrote).
CallFormat = Literal["hermes", "mistral", "llama_python_tag", "json", "pythonic"]
FORMAT_WORDS = {
    "hermes": "<tool_call> tags (Hermes, Qwen)",
    "mistral": "Mistral's [TOOL_CALLS] marker",
    "llama_python_tag": "Llama's <|python_tag|>",
    "json": 'bare JSON objects {"name": ..., "arguments": ...} (no call tags; in prose or a code fence)',
    "pythonic": "a Python list of calls [f(x=1)]",
}

_HERMES_OPEN, _HERMES_CLOSE = "<tool_call>", "</tool_call>"
_MISTRAL = "[TOOL_CALLS]"
_MISTRAL_NAMED = re.compile(r"\s*([A-Za-z_][\w.\-]*)\[ARGS\]")  # the newer form: name[ARGS]{...}
_PYTHON_TAG = "<|python_tag|>"
_LLAMA_END = re.compile(r"<\|eom_id\|>|<\|eot_id\|>")
# A call object starts with its name, or with its type or id before it ({"type": "function", "name": ...}).
_JSON_CALL = re.compile(r'\[\s*\{\s*"(?:name|type|id)"\s*:|\{\s*"(?:name|type|id)"\s*:')
_SPACE = re.compile(r"\s*")
_PY_CALLS = re.compile(r"\[\s*[A-Za-z_][\w.]*\s*\(")
_TRIES = 200  # starts tried per format and piece
# What one piece may cost: a Python-syntax call list longer than this is not read, and an answer longer than
# _LONG gets fewer JSON decodes (each may read to the end of the text).
_PY_SPAN = 20_000
_LONG = 200_000
_LONG_TRIES = 10
_DECODER = json.JSONDecoder()


class TextCall(NamedTuple):
    name: str
    arguments: dict[str, Any]
    format: CallFormat
    start: int  # where the call's text stands in the piece searched
    end: int


def find_text_calls(text: str) -> list[TextCall]:
    """The calls of the first known format found in `text` (none: [])."""
    for finder in (_hermes, _mistral, _llama, _bare_json, _pythonic):
        found = finder(text)
        if found:
            return found
    return []


def _as_call(value: object, fmt: CallFormat, start: int, end: int) -> TextCall | None:
    """A {"name", "arguments"|"parameters"} object as a call (arguments may be a JSON string of an object)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):  # JSONDecodeError, or an integer past Python's limit of digits
            return None
    if not isinstance(arguments, dict) or set(value) - {"name", "arguments", "parameters", "id", "type"}:
        return None
    return TextCall(value["name"], arguments, fmt, start, end)


def _decode(text: str, at: int) -> tuple[Any, int] | None:
    try:
        return _DECODER.raw_decode(text, at)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return None


def _calls_of(value: object, fmt: CallFormat, start: int, end: int) -> list[TextCall]:
    """One call object, or a list of them (every item must be one)."""
    items = value if isinstance(value, list) else [value]
    calls = [_as_call(item, fmt, start, end) for item in items]
    return [c for c in calls if c is not None] if calls and all(calls) else []


def _hermes(text: str) -> list[TextCall]:
    """`<tool_call>{...}</tool_call>` blocks. Each closing tag takes the body after the last opening tag before it
    (a tag named in the prose earlier is not a block's start); an opening tag with no closing tag after it is a
    block cut at the end of the answer, read to the end. Found with `str.find`: each character is looked at once."""
    found: list[TextCall] = []
    at = text.find(_HERMES_OPEN)
    tries = 0
    while at != -1 and tries < _TRIES:
        tries += 1
        close = text.find(_HERMES_CLOSE, at)
        end = len(text) if close == -1 else close
        start = text.rfind(_HERMES_OPEN, at, end)  # the last opening tag before the close
        body = text[start + len(_HERMES_OPEN) : end]
        decoded = _decode(body, len(body) - len(body.lstrip()))
        if decoded is not None and not body[decoded[1] :].strip():
            found += _calls_of(decoded[0], "hermes", start, end if close == -1 else close + len(_HERMES_CLOSE))
        if close == -1:
            break  # no closing tag after this one, nor after any later one
        at = text.find(_HERMES_OPEN, close + len(_HERMES_CLOSE))
    return found


def _mistral(text: str) -> list[TextCall]:
    found: list[TextCall] = []
    at = text.find(_MISTRAL)
    tries = 0
    while at != -1 and tries < _TRIES:
        tries += 1
        after = at + len(_MISTRAL)
        named = _MISTRAL_NAMED.match(text, after)
        if named:
            decoded = _decode(text, named.end())
            if decoded is not None:
                found += _calls_of({"name": named.group(1), "arguments": decoded[0]}, "mistral", at, decoded[1])
        else:
            space = _SPACE.match(text, after)  # read in place: copying the rest at each marker was quadratic
            decoded = _decode(text, space.end() if space else after)
            if decoded is not None:
                found += _calls_of(decoded[0], "mistral", at, decoded[1])
        at = text.find(_MISTRAL, after)
    return found


def _llama(text: str) -> list[TextCall]:
    at = text.find(_PYTHON_TAG)
    if at == -1:
        return []
    start = at + len(_PYTHON_TAG)
    stop = _LLAMA_END.search(text, start)
    body_end = stop.start() if stop else len(text)
    body = text[start:body_end]
    # JSON calls, one or several separated by ";" (as Llama 3.1 writes them), or one Python call.
    found: list[TextCall] = []
    pos = len(body) - len(body.lstrip())
    while pos < len(body) and len(found) < _TRIES:
        decoded = _decode(body, pos)
        if decoded is None:
            break
        calls = _calls_of(decoded[0], "llama_python_tag", at, start + decoded[1])
        if not calls:
            break
        found += calls
        rest = body[decoded[1] :].lstrip()
        pos = len(body) - len(rest) + (1 if rest.startswith(";") else 0)
        pos += len(body[pos:]) - len(body[pos:].lstrip())
        if not rest.startswith(";"):
            break
    if found:
        return found
    return _python_calls(body.strip(), "llama_python_tag", at, body_end)


def _bare_json(text: str) -> list[TextCall]:
    found: list[TextCall] = []
    covered = 0
    tries = _LONG_TRIES if len(text) > _LONG else _TRIES  # each decode may read to the end of a long text
    for number, match in enumerate(_JSON_CALL.finditer(text)):
        if number >= tries:
            break
        if match.start() < covered:
            continue
        decoded = _decode(text, match.start())
        if decoded is None:
            continue
        calls = _calls_of(decoded[0], "json", match.start(), decoded[1])
        if calls:
            found += calls
            covered = decoded[1]
    return found


def _pythonic(text: str) -> list[TextCall]:
    for number, match in enumerate(_PY_CALLS.finditer(text)):
        if number >= _TRIES:
            break
        closer = _matching_bracket(text, match.start())
        if closer == -1:
            continue
        calls = _python_calls(text[match.start() : closer + 1], "pythonic", match.start(), closer + 1)
        if calls:
            return calls
    return []


def _matching_bracket(text: str, start: int) -> int:
    """Where the `]` closing the `[` at `start` stands, brackets nested and strings skipped; -1 when it does not
    close within _PY_SPAN characters. One scan per start, and one parse of what it spans."""
    depth, quote, escaped = 0, "", False
    for at in range(start, min(len(text), start + _PY_SPAN)):
        char = text[at]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[({":
            depth += 1
        elif char in "])}":
            depth -= 1
            if depth == 0:
                return at if char == "]" else -1
    return -1


def _python_calls(source: str, fmt: CallFormat, start: int, end: int) -> list[TextCall]:
    """`[f(a=1), g(b="x")]` or `f(a=1)` as calls: keyword arguments with literal values only."""
    try:
        tree = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    nodes = tree.elts if isinstance(tree, ast.List) else [tree]
    calls: list[TextCall] = []
    for node in nodes:
        if not isinstance(node, ast.Call) or node.args:
            return []  # positional arguments name no parameter: not a call this checker can read
        name = _dotted(node.func)
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return []  # **kwargs
            try:
                arguments[keyword.arg] = _json_value(ast.literal_eval(keyword.value))
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return []
        if name is None:
            return []
        calls.append(TextCall(name, arguments, fmt, start, end))
    return calls


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _json_value(value: Any) -> Any:
    """A literal as the JSON value it stands for (a tuple is a list); ValueError for one JSON has not."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _json_value(v) for k, v in value.items()}
    raise ValueError(f"{type(value).__name__} is no JSON value")
