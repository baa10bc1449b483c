"""A task type is one room (DESIGN.md, "Task types"): outside its folder `scoring/<type>/` and the registry
(`scoring/task_types.py`), no module names a type by its string or imports a room's modules. A room imports no
other room either.

The imports are import-linter's to check (`make lint`: the contracts `rooms-closed` and `rooms-independent` of
pyproject.toml); this file checks that those contracts name every registered room, and reads what import-linter
cannot see: a type's name written as a string outside its room. It lists every offender, with the line, so that a
new leak is found where it is made."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

from ocllm.scoring import task_types

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "ocllm"
REGISTRY = "ocllm.scoring.task_types"

# Strings that are a type's name by coincidence, each with its reason: (module, string).
COINCIDENCES: dict[tuple[str, str], str] = {
    ("scoring/simulated.py", "json"): "a tool call written as text in a JSON object: the name of a text format",
    ("advice.py", "json"): "the same text format of tool calls, and the server parsers that read it",
    ("scoring/text_calls.py", "json"): "the same text format, which the finder of calls written as text looks for",
    ("cli/simulator.py", "json"): "the same text format, a choice of `serve-sim --tool-format`",
    ("run/client/failures.py", "code"): "the `code` of an OpenAI-style error object, which a server sends",
    ("sim/requests.py", "code"): "the `code` of the error object the simulator sends, as vLLM does",
    ("demo.py", "math"): "the folder the demo's math lanes write to (out/demo/math/), as docs/running.md names it",
    ("cli/options.py", "math"): "the MATH dataset for `ocllm import` (its help lists what ships, loading no room)",
}


def _room_packages() -> dict[str, str]:
    """Each shipped room's package (`ocllm.scoring.mcq`) by its type's name."""
    return {name: room.decide.__module__.rsplit(".", 1)[0] for name, room in task_types.TASK_TYPES.items()}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return {contract["id"]: contract for contract in config["tool"]["importlinter"]["contracts"]}


def test_the_import_contracts_close_every_registered_room() -> None:
    # A room registered without its place in the contracts would be left open: import-linter checks only the
    # modules it is told of.
    rooms = sorted(_room_packages().values())
    contracts = _contracts()
    assert sorted(contracts["rooms-independent"]["modules"]) == rooms
    assert contracts["rooms-closed"]["type"] == "protected"
    assert sorted(contracts["rooms-closed"]["protected_modules"]) == rooms
    assert contracts["rooms-closed"]["allowed_importers"] == [REGISTRY]


def _offences() -> list[str]:
    rooms = _room_packages()
    names = set(rooms)
    found: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        module = _module_name(path)
        in_a_room = any(module == pkg or module.startswith(pkg + ".") for pkg in rooms.values())
        if module == REGISTRY or in_a_room:
            continue
        # import-linter reads imports, not strings: a type's name as a constant is found here.
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and node.value in names:
                key = (str(path.relative_to(SOURCE)), node.value)
                if key not in COINCIDENCES:
                    found.append(f"{path.relative_to(SOURCE)}:{node.lineno}: names the type {node.value!r}")
    return sorted(set(found))


def test_no_module_outside_a_room_names_a_type() -> None:
    offences = _offences()
    assert not offences, "modules that name a type outside its room:\n" + "\n".join(offences)
