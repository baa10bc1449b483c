"""A row of BFCL's multi-turn question files -> a tool_use task (docs/scoring/tool_use.md, "BFCL's multi-turn
files"): what BFCL's FC inference offers and sends, and its ground truth as each turn's expected calls.

- environments: `{"bfcl": {classes, initial_config, long_context, backends}}` (environments/bfcl.py): the entry's
  involved classes in its order, their configs as JSON text (another class's, which BFCL never loads, left out), the
  long-context flag of its category (BFCL's: "long_context" or "composite" in it), and the backends' digest.
- tools: the involved classes' function docs in that order, each as BFCL's FC handlers convert it (`tool_of`), the
  held-out functions of a miss_func entry left out; the Python 3 note appended to each description, as BFCL's
  loader does before it holds any out (so a held-out doc has none).
- user_turns: each turn's one user message; the held-out turn (an empty turn in the file) says BFCL's fixed sentence and
  adds the held-out tools, at the end of the list, as BFCL does.
- expected_calls: each ground-truth call parsed with `ast` (literals only, never evaluated), its positional
  arguments named by the method's signature in the backends; an empty turn expects nothing (`[]`).
"""

from __future__ import annotations

import ast
import copy
import json
from dataclasses import dataclass
from typing import Any

import msgspec

from ocllm.models import Task
from ocllm.scoring.dataset_rows import BadRow, Row, field
from ocllm.scoring.tool_use.environments import bfcl_code
from ocllm.scoring.tool_use.fields import ToolUseTask, UserTurn, task_problem

# What BFCL says, to the byte: the note its loader appends to each offered doc, the sentence of the turn that adds
# the held-out functions (FC), and what its handlers for strict tool formats append in place of `response`.
PYTHON_NOTE = " Note that the provided function is in Python 3 syntax."
FUNCTIONS_ADDED = "I have updated some more functions you can choose from. What about now?"
RESPONSE_NOTE = " The response field has the following schema: "
FLOAT_NOTE = " This is a float type value."
# BFCL's type names -> JSON Schema's, as its FC handlers map them (GORILLA_TO_OPENAPI); any other: "string".
TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string",
}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Context:
    """What one data folder's question rows need beside them (bfcl_files.py reads it)."""

    answers: dict[str, tuple[str, Any]]  # BFCL id -> (where, ground truth)
    docs: dict[str, list[dict[str, Any]]]  # class -> its function docs, in the file's order
    parameters: dict[str, dict[str, list[str]]]  # class -> method -> its parameters in the signature's order
    backends: dict[str, str]  # the task state's "backends": sha256 and from


def task_of(row: Row, context: Context) -> Task:
    bfcl_id = field(row, "id")
    if not isinstance(bfcl_id, str) or not bfcl_id.startswith("multi_turn_"):
        raise BadRow(f"id {bfcl_id!r} is not BFCL's multi_turn_<category>_<number>")
    test_category = bfcl_id.rsplit("_", 1)[0]
    classes = field(row, "involved_classes")
    if not isinstance(classes, list) or not classes or any(c not in bfcl_code.CLASS_MODULES for c in classes):
        raise BadRow(f"'involved_classes' is not a list of BFCL's classes ({', '.join(bfcl_code.CLASS_MODULES)})")
    config = row.fields.get("initial_config") or {}
    if not isinstance(config, dict):
        raise BadRow("'initial_config' is not an object")
    docs = [_doc(context, name) for name in classes]
    offered = [dict(doc, description=doc["description"] + PYTHON_NOTE) for class_docs in docs for doc in class_docs]
    held_out = _held_out(row.fields.get("missed_function") or {}, offered)
    for names in held_out.values():
        offered = [doc for doc in offered if doc["name"] not in names]
    all_docs = [doc for class_docs in docs for doc in class_docs]
    turns = _turns(field(row, "question"), held_out, all_docs)
    if bfcl_id not in context.answers:
        raise BadRow(f"no possible answer for {bfcl_id!r}")
    where, ground_truth = context.answers[bfcl_id]
    if len(ground_truth) != len(turns):
        raise BadRow(f"{len(turns)} turns, but its possible answer ({where}) has {len(ground_truth)}")
    methods = {name: params for c in classes for name, params in context.parameters[c].items()}
    for number, (turn, calls) in enumerate(zip(turns, ground_truth, strict=True), start=1):
        if not isinstance(calls, list) or not all(isinstance(call, str) for call in calls):
            raise BadRow(f"its possible answer ({where}): turn {number} is not a list of calls")
        try:
            turn.expected_calls = [call_of(call, methods) for call in calls]
        except BadRow as exc:
            raise BadRow(f"its possible answer ({where}): turn {number}: {exc}") from None
    state = {
        "classes": classes,
        # JSON text, in the file's order (environments/bfcl.py says why).
        "initial_config": json.dumps({name: config[name] for name in classes if isinstance(config.get(name), dict)}),
        "long_context": "long_context" in test_category or "composite" in test_category,
        "backends": dict(context.backends),
    }
    task = ToolUseTask(
        id=f"bfcl/{bfcl_id}", question=turns[0].content, category=test_category.removeprefix("multi_turn_"),
        environments={"bfcl": state}, tools=[tool_of(doc) for doc in offered], user_turns=turns,
    )  # fmt: skip
    # Checked as a suite line is when it is read, so that the import never writes a line a run refuses.
    if (problem := task_problem(msgspec.to_builtins(task))) is not None:
        raise BadRow(problem)
    return task


def _doc(context: Context, name: str) -> list[dict[str, Any]]:
    if name not in context.docs:
        raise BadRow(f"no function docs for {name} ({name}'s file of multi_turn_func_doc/ is missing)")
    return context.docs[name]


def _held_out(missed: Any, offered: list[dict[str, Any]]) -> dict[int, list[str]]:
    """miss_func's `missed_function` ({turn: [names]}) checked: each name one of the offered docs."""
    if not isinstance(missed, dict):
        raise BadRow("'missed_function' is not an object of turn -> function names")
    names = {doc["name"] for doc in offered}
    held: dict[int, list[str]] = {}
    for turn, functions in missed.items():
        if not str(turn).isdigit() or not isinstance(functions, list):
            raise BadRow("'missed_function' is not an object of turn -> function names")
        for name in functions:
            if name not in names:
                raise BadRow(f"'missed_function' holds out {name!r}, which none of the involved classes has")
        held[int(turn)] = list(functions)
    return held


def _turns(question: Any, held_out: dict[int, list[str]], docs: list[dict[str, Any]]) -> list[UserTurn]:
    if not isinstance(question, list) or not question:
        raise BadRow("'question' is not a list of turns")
    by_name = {doc["name"]: doc for doc in docs}
    turns = []
    for index, messages in enumerate(question):
        number = index + 1
        if index in held_out:
            if messages:
                raise BadRow(f"'question' turn {number} is where functions are added, yet holds messages")
            added = [tool_of(by_name[name]) for name in held_out[index]]
            turns.append(UserTurn(content=FUNCTIONS_ADDED, tools_added=added))
            continue
        if not isinstance(messages, list) or len(messages) != 1:
            raise BadRow(f"'question' turn {number} is not one user message")
        message = messages[0] if isinstance(messages[0], dict) else {}
        if message.get("role") != "user" or not isinstance(message.get("content"), str):
            raise BadRow(f"'question' turn {number} is not one user message with text 'content'")
        turns.append(UserTurn(content=message["content"]))
    if max(held_out, default=0) >= len(turns) or 0 in held_out:
        raise BadRow("'missed_function' names a turn the question does not have after its first")
    return turns


def tool_of(doc: Any) -> dict[str, Any]:
    """A BFCL function doc as an OpenAI function tool, as BFCL's FC handlers convert it: parameters' types mapped
    (float -> number with `"format": "float"` and a note in its description), and its `response` schema appended
    to the description as BFCL's handlers for strict tool formats do (not sent as a key of its own, which a strict
    server refuses)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not isinstance(doc.get("parameters"), dict):
        raise BadRow("a function doc is not {name, description, parameters}")
    parameters = copy.deepcopy(doc["parameters"])
    parameters["type"] = "object"
    parameters["properties"] = _cast(parameters.get("properties") or {})
    description = str(doc.get("description", ""))
    if "response" in doc:
        description += RESPONSE_NOTE + json.dumps(doc["response"])
    return {"type": "function", "function": {"name": doc["name"], "description": description, "parameters": parameters}}


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    for schema in properties.values():
        kind = schema.get("type")
        if kind == "float":
            schema["format"] = "float"
            schema["description"] = schema.get("description", "") + FLOAT_NOTE
        schema["type"] = TYPES.get(kind, "string") if isinstance(kind, str) else "string"
        if schema["type"] in ("array", "object"):
            if isinstance(schema.get("properties"), dict):
                schema["properties"] = _cast(schema["properties"])
            elif isinstance(schema.get("items"), dict):
                _cast_items(schema["items"])
    return properties


def _cast_items(items: dict[str, Any]) -> None:
    kind = items.get("type")
    items["type"] = TYPES.get(kind, "string") if isinstance(kind, str) else "string"
    if items["type"] == "array" and isinstance(items.get("items"), dict):
        _cast_items(items["items"])
    elif items["type"] == "object" and isinstance(items.get("properties"), dict):
        items["properties"] = _cast(items["properties"])


def call_of(text: str, methods: dict[str, list[str]]) -> dict[str, Any]:
    """One ground-truth call (`mv(source='a', destination='b')`, `sort('f.txt')`) as {"name", "arguments"}: parsed,
    never evaluated; each value a literal; positional arguments named by the method's parameters in order."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise BadRow(f"{text!r} is not a Python call") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise BadRow(f"{text!r} is not a call of one function by its name")
    name = node.func.id
    if name not in methods:
        raise BadRow(f"{text!r} calls {name!r}, which none of the involved classes has")
    parameters = methods[name]
    if len(node.args) > len(parameters) or any(isinstance(a, ast.Starred) for a in node.args):
        raise BadRow(f"{text!r}: more positional arguments than {name} takes")
    arguments = {parameters[i]: _literal(value, text) for i, value in enumerate(node.args)}
    for keyword in node.keywords:
        if keyword.arg is None or keyword.arg in arguments:
            raise BadRow(f"{text!r}: an argument given twice, or as **")
        arguments[keyword.arg] = _literal(keyword.value, text)
    return {"name": name, "arguments": arguments}


def _literal(node: ast.expr, text: str) -> Any:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise BadRow(f"{text!r}: an argument is not a literal") from None
    return _json(value, text)


def _json(value: Any, text: str) -> Any:
    """A literal as JSON holds it (what a model's call can say): a tuple as a list; a set, bytes or a number JSON has
    not refused."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return value
    if isinstance(value, list | tuple):
        return [_json(item, text) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _json(item, text) for key, item in value.items()}
    raise BadRow(f"{text!r}: an argument ({type(value).__name__}) has no JSON form")
