"""A task type is one room (DESIGN.md, "Task types"): outside its folder `scoring/<type>/` and the registry
(`scoring/task_types.py`), no module names a type by its string or imports a room's modules. A room imports no
other room either. The test lists every offender, with the line, so that a new leak is found where it is made."""

from __future__ import annotations

import ast
from pathlib import Path

from ocllm.scoring import task_types

SOURCE = Path(__file__).resolve().parents[1] / "src" / "ocllm"
REGISTRY = "ocllm.scoring.task_types"

# Strings that are a type's name by coincidence, each with its reason: (module, string).
COINCIDENCES: dict[tuple[str, str], str] = {
    ("scoring/simulated.py", "json"): "a tool call written as text in a JSON object: the name of a text format",
    ("advice.py", "json"): "the same text format of tool calls, and the server parsers that read it",
    ("cli/simulator.py", "json"): "the same text format, a choice of `serve-sim --tool-format`",
    ("run/client/failures.py", "code"): "the `code` of an OpenAI-style error object, which a server sends",
    ("sim/requests.py", "code"): "the `code` of the error object the simulator sends, as vLLM does",
    ("demo.py", "math"): "the folder the demo's math lanes write to (out/demo/math/), as docs/running.md names it",
}


def _room_packages() -> dict[str, str]:
    """Each shipped room's package (`ocllm.scoring.mcq`) by its type's name."""
    return {name: room.decide.__module__.rsplit(".", 1)[0] for name, room in task_types.TASK_TYPES.items()}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, package: str) -> list[str]:
    """The modules (and names in them) an import statement imports; a relative one resolved in `package`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parent = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parent, base] if base else parent)
        return [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return []


def _offences() -> list[str]:
    rooms = _room_packages()
    names = set(rooms)
    found: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        own_room = next((pkg for pkg in rooms.values() if module == pkg or module.startswith(pkg + ".")), None)
        if module == REGISTRY:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            for target in _imported(node, package):
                entered = next((pkg for pkg in rooms.values() if target == pkg or target.startswith(pkg + ".")), None)
                if entered is not None and entered != own_room:
                    found.append(f"{path.relative_to(SOURCE)}:{node.lineno}: imports {entered}")
            if own_room is None and isinstance(node, ast.Constant) and node.value in names:
                key = (str(path.relative_to(SOURCE)), node.value)
                if key not in COINCIDENCES:
                    found.append(f"{path.relative_to(SOURCE)}:{node.lineno}: names the type {node.value!r}")
    return sorted(set(found))


def test_no_module_outside_a_room_names_a_type_or_imports_a_room() -> None:
    offences = _offences()
    assert not offences, "modules that reach into a room:\n" + "\n".join(offences)
