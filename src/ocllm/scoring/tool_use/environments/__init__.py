"""The environments a tool_use task may name, by kind. Each is a deterministic class (`base.Environment`); a new one
is a module here and a line below."""

from __future__ import annotations

from ocllm.scoring.tool_use.environments.base import Environment, ToolError
from ocllm.scoring.tool_use.environments.bfcl import Bfcl
from ocllm.scoring.tool_use.environments.tickets import Tickets
from ocllm.scoring.tool_use.environments.workspace import Workspace

ENVIRONMENTS: dict[str, type[Environment]] = {kind.kind: kind for kind in (Workspace, Tickets, Bfcl)}

__all__ = ["ENVIRONMENTS", "Environment", "ToolError"]
