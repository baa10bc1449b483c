"""The code room registered for the tests of its importers and readers (tests/test_code_import.py,
tests/test_code_harnesses.py), whether or not the registry lists it yet and whether or not its `decide` is on this
branch: reading files into code tasks does not decide them, so a missing decide is a stub that says so."""

from __future__ import annotations

import importlib
import sys
import types

try:
    importlib.import_module("ocllm.scoring.code.decide")
except ModuleNotFoundError:
    _stub = types.ModuleType("ocllm.scoring.code.decide")

    def decide_code(task: object, sample: object, policy: object) -> object:
        raise NotImplementedError("the code room's decide is not on this branch")

    decide_code.__module__ = _stub.__name__  # the room's package is read off its decide (test_rooms_closed.py)
    _stub.decide_code = decide_code  # type: ignore[attr-defined]
    sys.modules["ocllm.scoring.code.decide"] = _stub
    DECIDES = False
else:
    DECIDES = True

from collections.abc import Iterator
from contextlib import contextmanager

from ocllm.scoring import code, task_types


@contextmanager
def registered() -> Iterator[None]:
    """The room registered for the duration (taken out after, unless it was registered already), so that no other
    test of the process sees a registry it did not expect."""
    added = "code" not in task_types.TASK_TYPES
    if added:
        task_types.register(code.TASK_TYPE)
    try:
        yield
    finally:
        if added:
            task_types.unregister("code")
