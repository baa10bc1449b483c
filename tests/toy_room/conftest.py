"""Collecting this folder's tests imports its package, and importing the package registers the room (as importing
any room does). Left so, every test that runs after collection saw the toy type beside the shipped ones: in one
process the whole suite, and under pytest-xdist whichever tests a worker drew, so that tests listing the types
passed or failed with the order. The room is taken out once collection ends; the `room` fixture of
test_toy_room.py imports it again for this folder's tests and takes it out after them."""

from __future__ import annotations

import sys

import pytest

from ocllm.scoring import task_types


def pytest_collection_finish(session: pytest.Session) -> None:
    from toy_room import TASK_TYPE

    task_types.unregister(TASK_TYPE.name)
    # Imported afresh (and so registered again) by the fixture; the test modules themselves stay imported.
    for name in ("toy_room", "toy_room.room"):
        sys.modules.pop(name, None)
