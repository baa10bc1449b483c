"""The tool_call room's dataset for `ocllm import`, the Berkeley Function Calling Leaderboard: a question row
(`BFCL_v3_simple.json`, ...: `id`, `question`, `function`) and its possible answer (`possible_answer/
BFCL_v3_simple.json`: `id`, `ground_truth`) -> a Task of type tool_call. The importers read the question files and
the `--answers` files; their rows are mapped here.

Only BFCL's single-turn Python categories are read (SINGLE_TURN below); a Java or JavaScript row, a multi-turn
one, or one whose first turn holds anything but user messages is a bad row. Each function doc becomes an OpenAI
tool: BFCL's own type names are JSON Schema's (`dict` -> `object`, `float` -> `number`, `tuple` -> `array`; `any`
-> no `type`, any value), at every depth of the schema. A name with dots is sent with underscores
(`math.factorial` -> `math_factorial`), as BFCL does for OpenAI's models, whose names may not hold a dot; the
expected calls are renamed alike, so both sides of the check speak the sent names, and a task whose renamed
functions collide is refused. The ground truth `[{"func": {"param": [acceptable values]}}]` becomes
`expected_calls: [{"name", "arguments"}]`, values verbatim; irrelevance's is `[]` (no call expected). Ids are
`bfcl/<BFCL's id>`; the category is BFCL's (`simple`, `parallel_multiple`, v4's `simple_python`, ...).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.dataset_rows import BadRow, Dataset, Row, RowTask, field
from ocllm.scoring.tool_call.fields import ToolCallTask

# BFCL's single-turn Python categories, by the name its ids start with. v4 calls the Python simple set
# `simple_python`; the live sets are the same layout, written by users.
SINGLE_TURN = (
    "simple", "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance",
)  # fmt: skip
NO_CALL = ("irrelevance", "live_irrelevance")  # the categories whose right answer is no call at all
_ID = re.compile(r"^(?P<category>[a-z_]+?)_(?P<number>\d+(?:-\d+)*)$")  # simple_0, live_simple_0-0-0
# BFCL's type names -> JSON Schema's; "any" has none (any value).
_TYPES = {
    "dict": "object", "object": "object", "float": "number", "number": "number", "integer": "integer",
    "string": "string", "boolean": "boolean", "array": "array", "list": "array", "tuple": "array", "null": "null",
}  # fmt: skip
_ANY = "any"


def sent_name(name: str) -> str:
    """A function's name as it is sent: dots replaced by underscores (OpenAI's names are `[a-zA-Z0-9_-]`)."""
    return name.replace(".", "_")


def category_of(bfcl_id: str) -> str:
    match = _ID.match(bfcl_id)
    if match is None:
        raise BadRow(f"id {bfcl_id!r} is not BFCL's <category>_<number>")
    category = match.group("category")
    if category.startswith("multi_turn"):
        raise BadRow(f"category {category!r}: multi-turn tool use (results fed back) is not imported")
    if category not in SINGLE_TURN:
        raise BadRow(
            f"category {category!r} is not one ocllm imports (single-turn Python categories only: "
            f"{', '.join(SINGLE_TURN)})"
        )
    return category


def question_of(turns: Any) -> str:
    """The first turn's user messages, joined by a blank line. More turns (multi-turn) are not imported."""
    if not isinstance(turns, list) or not turns:
        raise BadRow("'question' is not a list of turns")
    if len(turns) > 1:
        raise BadRow(f"'question' has {len(turns)} turns; multi-turn tool use is not imported")
    messages = turns[0]
    if not isinstance(messages, list) or not messages:
        raise BadRow("'question' turn 1 is not a list of messages")
    texts: list[str] = []
    for number, message in enumerate(messages, start=1):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise BadRow(f"'question' message {number} has no text 'content'")
        if message.get("role") != "user":
            raise BadRow(
                f"'question' message {number} is a {message.get('role')!r} message; ocllm sends the question as "
                "one user message"
            )
        texts.append(message["content"])
    question = "\n\n".join(texts)
    if not question.strip():
        raise BadRow("'question' is empty")
    return question


def schema_of(node: Any, where: str) -> dict[str, Any]:
    """A BFCL parameter schema as JSON Schema: its type names translated at every depth, all else kept."""
    if not isinstance(node, dict):
        raise BadRow(f"{where} is not a schema object")
    out = dict(node)
    if "type" in node:
        kind = node["type"]
        if kind == _ANY:
            del out["type"]
        elif isinstance(kind, str) and kind in _TYPES:
            out["type"] = _TYPES[kind]
        else:
            raise BadRow(f"{where}: type {kind!r} is not one of BFCL's ({', '.join([*_TYPES, _ANY])})")
    if "properties" in node:
        if not isinstance(node["properties"], dict):
            raise BadRow(f"{where}: 'properties' is not an object")
        out["properties"] = {
            name: schema_of(sub, f"{where}.{name}") for name, sub in node["properties"].items()
        }
    if isinstance(node.get("items"), dict):
        out["items"] = schema_of(node["items"], f"{where}[]")
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = schema_of(node["additionalProperties"], f"{where}.*")
    return out


def tool_of(doc: Any, number: int) -> dict[str, Any]:
    """A BFCL function doc as an OpenAI function tool."""
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not doc["name"].strip():
        raise BadRow(f"'function' {number} has no name")
    name = doc["name"].strip()
    parameters = doc.get("parameters", {"type": "dict", "properties": {}})
    if not isinstance(parameters, dict) or parameters.get("type", "dict") not in ("dict", "object"):
        raise BadRow(f"function {name!r}: 'parameters' is not an object schema")
    schema = schema_of({**parameters, "type": "dict", "properties": parameters.get("properties", {})}, name)
    required = schema.get("required", [])
    if not isinstance(required, list) or any(r not in schema["properties"] for r in required):
        raise BadRow(f"function {name!r}: 'required' names a parameter it does not have")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise BadRow(f"function {name!r}: 'description' is not text")
    return {"type": "function", "function": {"name": sent_name(name), "description": description,
                                             "parameters": schema}}  # fmt: skip


def tools_of(docs: Any) -> list[dict[str, Any]]:
    if not isinstance(docs, list) or not docs:
        raise BadRow("'function' is not a list of function docs")
    tools = [tool_of(doc, number) for number, doc in enumerate(docs, start=1)]
    names = Counter(tool["function"]["name"] for tool in tools)
    twice = sorted(name for name, count in names.items() if count > 1)
    if twice:
        raise BadRow(f"two functions are sent as {twice[0]!r} (names with '.' are sent with '_')")
    return tools


def expected_calls_of(ground_truth: Any, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL's ground truth as expected calls, each naming one of the task's tools by its sent name, each argument
    a parameter of that tool with a list of acceptable values (kept verbatim: `""` among them = may be omitted)."""
    if not isinstance(ground_truth, list) or not ground_truth:
        raise BadRow("'ground_truth' is not a non-empty list of calls")
    parameters = {tool["function"]["name"]: tool["function"]["parameters"]["properties"] for tool in tools}
    calls: list[dict[str, Any]] = []
    for number, call in enumerate(ground_truth, start=1):
        if not isinstance(call, dict) or len(call) != 1:
            raise BadRow(f"'ground_truth' call {number} is not one {{function: {{parameter: [values]}}}}")
        ((bfcl_name, arguments),) = call.items()
        name = sent_name(bfcl_name)
        if name not in parameters:
            raise BadRow(f"'ground_truth' call {number} names {bfcl_name!r}, which is not among the functions")
        if not isinstance(arguments, dict):
            raise BadRow(f"'ground_truth' call {number}: the arguments of {bfcl_name!r} are not an object")
        for param, values in arguments.items():
            if param not in parameters[name]:
                raise BadRow(f"'ground_truth' call {number}: {bfcl_name!r} has no parameter {param!r}")
            if not isinstance(values, list) or not values:
                raise BadRow(f"'ground_truth' call {number}: {param!r} is not a list of acceptable values")
        calls.append({"name": name, "arguments": arguments})
    return calls


def answers_from(rows: Iterable[Row]) -> dict[str, tuple[str, Any]]:
    """The possible-answer files' ground truths by BFCL id, each with the row it came from (the importers read the
    files, within the same bounds, counted apart from the questions)."""
    answers: dict[str, tuple[str, Any]] = {}
    for row in rows:
        bfcl_id = row.fields.get("id")
        if not isinstance(bfcl_id, str) or "ground_truth" not in row.fields:
            raise InputError(f"{row.where()}: not a BFCL possible answer (an 'id' and a 'ground_truth')")
        if bfcl_id in answers:
            raise InputError(f"{row.where()}: id {bfcl_id!r} answered twice (first at {answers[bfcl_id][0]})")
        answers[bfcl_id] = (row.where(), row.fields["ground_truth"])
    return answers


def bfcl_task_with(answer_rows: Iterable[Row] | None) -> RowTask:
    """The row -> Task function that takes each question's ground truth from these possible-answer rows (all read
    before it returns); None: no possible answers were given (--answers)."""
    given = answer_rows is not None
    answers = answers_from(answer_rows) if answer_rows is not None else {}

    def task(row: Row, seed: int, seen: Counter[str]) -> Task:
        if "ground_truth" in row.fields and "question" not in row.fields:
            raise InputError(f"{row.where()}: a possible-answer row; give possible-answer files with --answers")
        bfcl_id = field(row, "id")
        if not isinstance(bfcl_id, str) or not bfcl_id.strip():
            raise BadRow("'id' is not text")
        bfcl_id = bfcl_id.strip()
        category = category_of(bfcl_id)
        question = question_of(field(row, "question"))
        tools = tools_of(field(row, "function"))
        if category in NO_CALL:
            expected: list[dict[str, Any]] = []
        elif not given:
            raise InputError(f"{row.where()}: {bfcl_id!r} ({category}) needs its possible answer: give --answers")
        elif bfcl_id not in answers:
            raise BadRow(f"no possible answer for {bfcl_id!r} in the --answers files")
        else:
            try:
                expected = expected_calls_of(answers[bfcl_id][1], tools)
            except BadRow as exc:
                raise BadRow(f"its possible answer ({answers[bfcl_id][0]}): {exc}") from None
        return ToolCallTask(id=f"bfcl/{bfcl_id}", question=question, tools=tools,
                    expected_calls=expected, category=category)  # fmt: skip

    return task


DATASETS = (
    Dataset(name="bfcl", label="BFCL", files=("jsonl",), task=bfcl_task_with(None), with_answers=bfcl_task_with),
)
