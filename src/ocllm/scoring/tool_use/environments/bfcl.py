"""`bfcl`: BFCL's own multi-turn backends (GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI,
TradingBot, TravelAPI, VehicleControlAPI), loaded from the user's copy of BFCL's code (`bfcl_code.py`), so that the
results a model reads and the states its turns are checked on are BFCL's to the byte (docs/scoring/tool_use.md,
"BFCL's multi-turn files", says why not ocllm's own).

State: `{"classes": [...], "initial_config": "<JSON text>", "long_context": bool, "backends": {"sha256": ...,
"from": ...}}`, as `ocllm import bfcl-multi-turn` writes it: the entry's involved classes in BFCL's order, their
configs, the long-context flag of its category, and which copy of the code the suite was made from. The configs are
JSON text, not an object, because a suite is written with its keys sorted and their order is BFCL's data: the order
of a folder's files is the order `ls` lists them, of a user's tweets the order they come back in.

What differs from BFCL's executor is only how a call gets to a method: BFCL builds Python source from the call and
evaluates it (any builtin, any module global reachable); here the method of that name of one of the instances is
called with the decoded arguments, and only the classes' public methods are tools. What comes back is made as
BFCL's executor makes it: a str as it is, a dict as json.dumps (else str), anything else str(), an exception
"Error during execution: " + its text.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ocllm.scoring.tool_use.environments import bfcl_code
from ocllm.scoring.tool_use.environments.base import Environment

ERROR_PREFIX = "Error during execution: "
# The names BFCL's executor refuses to run, whatever they name: kept so that a result is the same text.
_REFUSED = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_KEYS = {"classes", "initial_config", "long_context", "backends"}


class Bfcl(Environment):
    kind: ClassVar[str] = "bfcl"
    SCHEMAS: ClassVar[tuple[dict[str, Any], ...]] = ()  # a task's tools are BFCL's docs, written in the suite
    # The backends' modules of the replay under way, by digest: made at its first instance, shared by both sides.
    _replay_modules: ClassVar[dict[str, bfcl_code.ReplayModules]] = {}

    def __init__(self, state: Mapping[str, Any]) -> None:
        digest = state["backends"]["sha256"]
        modules = Bfcl._replay_modules.get(digest)
        if modules is None:
            modules = Bfcl._replay_modules[digest] = bfcl_code.ReplayModules(digest)
        config = json.loads(state["initial_config"])
        self.instances: dict[str, Any] = {}
        self._methods: dict[str, Callable[..., Any]] = {}
        for name in state["classes"]:
            instance = modules.cls(name)()
            if name not in bfcl_code.STATELESS:
                instance._load_scenario(copy.deepcopy(config.get(name, {})), long_context=state["long_context"])
            self.instances[name] = instance
            # Every public method of the instance, as BFCL's executor maps them (a later class's name wins).
            for method, bound in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method.startswith("_"):
                    self._methods[method] = bound

    @classmethod
    def fresh_replay(cls) -> None:
        cls._replay_modules.clear()
        bfcl_code.reset_precision()

    @classmethod
    def missing(cls, state: Mapping[str, Any]) -> str | None:
        backends = state["backends"]
        return bfcl_code.missing(backends["sha256"], backends.get("from", ""))

    @classmethod
    def state_problem(cls, state: object) -> str | None:
        if not isinstance(state, dict) or set(state) - _KEYS or not set(state) >= _KEYS:
            return f"a bfcl state is {{{', '.join(sorted(_KEYS))}}}, as ocllm import bfcl-multi-turn writes it"
        classes = state["classes"]
        known = bfcl_code.CLASS_MODULES
        if not isinstance(classes, list) or not classes or any(c not in known for c in classes):
            return f"classes is a list of BFCL's multi-turn classes ({', '.join(known)})"
        if len(set(classes)) != len(classes):
            return "classes names a class twice"
        try:
            config = json.loads(state["initial_config"]) if isinstance(state["initial_config"], str) else None
        except ValueError:
            config = None
        if not isinstance(config, dict) or any(not isinstance(v, dict) for v in config.values()):
            return "initial_config is JSON text of an object mapping class names to their configurations"
        if not isinstance(state["long_context"], bool):
            return "long_context is true or false"
        backends = state["backends"]
        if (
            not isinstance(backends, dict)
            or set(backends) - {"sha256", "from"}
            or not isinstance(backends.get("sha256"), str)
            or not _SHA256.match(backends["sha256"])
            or not isinstance(backends.get("from", ""), str)
        ):
            return 'backends is {"sha256": <64 hex digits>, "from": "..."}: which copy of BFCL\'s code it needs'
        return None

    def tools(self) -> tuple[str, ...]:
        return tuple(self._methods)

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name not in self._methods:
            raise ValueError(f"bfcl has no tool {name!r}")  # the room dispatches only offered tools
        if name in _REFUSED:
            return f"{ERROR_PREFIX}Function call {name} is not allowed."
        try:
            result = self._methods[name](**arguments)
        except Exception as error:
            return f"{ERROR_PREFIX}{error}"
        if type(result) is str:  # exact types, as BFCL tests them: a dict subclass is str()'d
            return result
        if type(result) is dict:
            try:
                return json.dumps(result)
            except Exception:
                return str(result)
        return str(result)

    def failure(self, result: str) -> str | None:
        if result.startswith(ERROR_PREFIX):
            return result[len(ERROR_PREFIX) :]
        return super().failure(result)

    def differs(self, other: Environment) -> list[str]:
        """"Class.attribute" for each public attribute of the gold's instances that the model's does not equal
        (Python ==, as BFCL's state checker compares them), in the order of the classes and the attributes."""
        assert isinstance(other, Bfcl)
        found = []
        for name, gold in other.instances.items():
            mine = self.instances.get(name)
            for attribute in vars(gold):
                if not attribute.startswith("_") and getattr(mine, attribute, _ABSENT) != getattr(gold, attribute):
                    found.append(f"{name}.{attribute}")
        return found

    def state(self) -> dict[str, Any]:
        """Each class's public attributes as JSON (what is not JSON as its repr): for reports, never compared."""
        return {
            name: {key: _json_view(value) for key, value in vars(instance).items() if not key.startswith("_")}
            for name, instance in self.instances.items()
        }


_ABSENT = object()


def _json_view(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dict):
        return {str(key): _json_view(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_view(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((_json_view(item) for item in value), key=repr)
    return repr(value)
