"""A task type made from its room's modules by convention (docs/architecture.md, "Task types: one room each"): a
room's `__init__.py` says its name, its label and what differs, and `room_type` finds the rest where a room keeps it.

Where each hook is found, in the room's modules named in ROOM_MODULES (those it has):
- `task_struct`: the Task subclass of `fields` tagged with the type's name; `decision_type`: the one Decision subclass
  `decision` defines; `decide`: the one function `decide` defines named `decide_*`; `new_tally`: the class `tally`
  defines named `*Tally`;
- every other hook under its own name (`check_suite_line`, `prompt`, `expected_text`, `simulated_answer`, ...), a
  function defined in the room; each constant under its name in capitals (`DEFAULT_TEMPLATE`, `PLACEHOLDERS`,
  `REQUIRED_PLACEHOLDERS`, `LANE_SETTINGS`, `DATASETS`, `LM_EVAL`, `HARNESS_RECORDS`).
A name found in two modules must be one object; a function's positional parameters must fit the hook's signature as
TaskType declares it. Both are checked when the room is registered, so a misnamed or misshapen hook fails every test,
not a report that never draws it."""

from __future__ import annotations

import collections.abc
import functools
import importlib
import inspect
import types
import typing
from typing import Any

from ocllm.models import Decision, Task
from ocllm.scoring.task_type import TaskType

# The modules a room keeps its hooks in, by name (a room has those it needs; a small room may keep them all in one
# module, `room`).
ROOM_MODULES = (
    "fields", "prompt", "request", "decision", "decide", "conversation", "render", "tally", "simulated", "datasets",
    "lm_eval", "harness_tasks", "room",
)  # fmt: skip
# TaskType's fields a room gives as constants, by the constant's name.
CONSTANTS = {
    "DEFAULT_TEMPLATE": "default_template", "PLACEHOLDERS": "template_placeholders",
    "REQUIRED_PLACEHOLDERS": "required_placeholders", "LANE_SETTINGS": "lane_settings", "DATASETS": "datasets",
    "LM_EVAL": "lm_eval", "HARNESS_RECORDS": "harness_records",
}  # fmt: skip
# TaskType's fields found otherwise than by their name (above), or never a room's module's: given by the caller.
_FOUND_OTHERWISE = {"task_struct", "decision_type", "decide", "new_tally"}
_GIVEN = {"name", "label", "template_key_before", "extracts_answer", "passes_word", "cut_pass_held", "demo_suite"}


def room_type(package: str, *, name: str, label: str, **differs: Any) -> TaskType[Any]:
    """The task type of the room `package` (its `__name__`): its hooks found in its modules, then `differs` (what
    is not found by convention, or replaces what is)."""
    modules = [_module(f"{package}.{module}") for module in ROOM_MODULES]
    found = [module for module in modules if module is not None]
    hooks: dict[str, Any] = {}
    for module in found:
        for attribute, value in vars(module).items():
            field = CONSTANTS.get(attribute) or (attribute if _is_hook(attribute, value, package) else None)
            if field is None:
                continue
            if field in hooks and hooks[field] is not value:
                raise AssertionError(f"room {package}: {attribute} is given twice, by two modules")
            hooks[field] = value
    by_name = {module.__name__.rpartition(".")[2]: module for module in found}
    if "room" in by_name:  # one module holds the room's parts: each is looked for there
        by_name = {part: by_name["room"] for part in ("fields", "decision", "decide", "tally")} | by_name
    hooks["task_struct"] = _one(by_name, "fields", package, lambda v: _is_task(v, name), f"Task tagged {name!r}")
    hooks["decision_type"] = _one(by_name, "decision", package, _is_decision, "Decision subclass")
    hooks["decide"] = _one(by_name, "decide", package, lambda v: _named(v, "decide_", ""), "decide_* function")
    if "tally" in by_name and _defines(by_name["tally"], _is_tally):  # a room without figures of its own has none
        hooks["new_tally"] = _one(by_name, "tally", package, _is_tally, "*Tally class")
    hooks.update(differs)
    for field, value in hooks.items():
        _check_signature(package, field, value)
    return TaskType(name=name, label=label, **hooks)


def _module(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # the module exists and imports something missing: that is its error, not a missing module
        return None


@functools.cache
def _task_type_hints() -> dict[str, Any]:
    """TaskType's declarations, evaluated once (each evaluation walks every annotation: a second of CPU when every
    hook of every room asked again, measured in issue 45)."""
    return typing.get_type_hints(TaskType)


@functools.cache
def _hook_fields() -> frozenset[str]:
    return frozenset(_task_type_hints()) - _FOUND_OTHERWISE - _GIVEN - set(CONSTANTS.values())


def _is_hook(attribute: str, value: object, package: str) -> bool:
    """A function of the room (not one it imported from elsewhere) named as one of TaskType's hooks."""
    return (
        attribute in _hook_fields()
        and inspect.isfunction(value)
        and (value.__module__ == package or value.__module__.startswith(package + "."))
    )


def _one(by_name: dict[str, types.ModuleType], module: str, package: str, wanted: Any, what: str) -> Any:
    """The one object of the room's `module` that is `wanted`, defined there."""
    if module not in by_name:
        raise AssertionError(f"room {package}: no module {module} (it holds the {what})")
    home = by_name[module]
    chosen = [v for v in vars(home).values() if getattr(v, "__module__", None) == home.__name__ and wanted(v)]
    if len(chosen) != 1:
        raise AssertionError(f"room {package}: {module} must define one {what}, not {len(chosen)}")
    return chosen[0]


def _defines(module: types.ModuleType, wanted: Any) -> bool:
    return any(getattr(v, "__module__", None) == module.__name__ and wanted(v) for v in vars(module).values())


def _is_tally(value: object) -> bool:
    return isinstance(value, type) and _named(value, "", "Tally")


def _is_task(value: object, name: str) -> bool:
    return isinstance(value, type) and issubclass(value, Task) and value.__struct_config__.tag == name


def _is_decision(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, Decision) and value is not Decision


def _named(value: object, prefix: str, suffix: str) -> bool:
    name = getattr(value, "__name__", "")
    return callable(value) and name.startswith(prefix) and name.endswith(suffix) and not name.startswith("_")


def _check_signature(package: str, field: str, value: object) -> None:
    """A function given for a hook takes as many positional arguments as TaskType's declaration passes it."""
    arity = _arity(field)
    if arity is None or not inspect.isfunction(value):
        return
    parameters = [
        p for p in inspect.signature(value).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]  # fmt: skip
    required = [p for p in parameters if p.default is p.empty]
    if not len(required) <= arity <= len(parameters):
        raise AssertionError(
            f"room {package}: {value.__name__} is its {field}, which is called with {arity} argument(s), but it "
            f"takes {len(required)} to {len(parameters)}"
        )


def _arity(field: str) -> int | None:
    """How many arguments TaskType's declaration of a hook passes it (a Callable, or an optional one)."""
    hint = _task_type_hints().get(field)
    arms = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    for arm in arms:
        if typing.get_origin(arm) is collections.abc.Callable:
            arguments = typing.get_args(arm)[0]
            return len(arguments) if isinstance(arguments, list) else None
    return None
