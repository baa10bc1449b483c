"""Which engine a lane's requests go through: the one place an engine is chosen (`engine.py` says what an engine
is; a module of its own so that the protocol imports no implementation of it)."""

from __future__ import annotations

from ocllm.run.engine import Engine
from ocllm.run.http_engine import HttpEngine
from ocllm.run.lanes import Lane


def engine_for(lane: Lane) -> Engine:
    """The engine a lane's requests go through. Raises InputError for settings no engine can use (an invalid
    base URL) and OcllmError for a key the lane names but the environment lacks.

    Only the OpenAI-compatible HTTP client so far; another engine is chosen here, by a lane setting."""
    return HttpEngine(lane)
