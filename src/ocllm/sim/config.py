"""Settings of the ocllm SIMULATOR (a fake OpenAI-compatible server; it runs no model)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ocllm.errors import OcllmError
from ocllm.models import Task
from ocllm.scoring.simulated import TOOL_PARSERS, TOOL_TEXT_FORMATS
from ocllm.simulated_words import SIMULATOR_MARK

# The label the simulator puts on everything it returns, so that its output is never taken for a model's; a run
# reads it in /v1/models (`owned_by`) and records that it was simulated (run/server_kind.py).
SIM_LABEL = SIMULATOR_MARK
SIM_HEADER = "x-ocllm-simulator"
# What /v1/models advertises, and the budget a truncated answer used up when the request set no max_tokens.
MAX_MODEL_LEN = 32768
# vLLM has used both names for the reasoning field of a message or delta.
REASONING_FIELDS = ("reasoning_content", "reasoning")
# The server kinds whose identifying routes the simulator can answer (ocllm/server_kind.py asks for them).
MIMICS = ("llama.cpp", "vllm", "sglang", "ollama")
# Where a tool call the model makes arrives (TOOL_PARSERS), and how a call written as text is written: one format for
# every answer, or "mixed", one drawn per answer. The room that writes calls reads them (`ocllm.scoring.simulated`).
TOOL_FORMATS = ("mixed", *TOOL_TEXT_FORMATS)


def _default_models() -> dict[str, float]:
    return {"sim-baseline": 0.85, "sim-reasoning": 0.93}


@dataclass(frozen=True)
class SimConfig:
    """How the simulator answers. Every field has a default, so `SimConfig()` is a working set-up."""

    models: dict[str, float] = field(default_factory=_default_models)  # model name -> accuracy (0..1)
    latency_s: float = 0.0  # added delay before each response (streaming: spread over the chunks)
    truncation_rate: float = 0.03  # share of reasoning-mode answers cut off (finish_reason "length")
    reasoning_field: str = "reasoning_content"  # or "reasoning"
    seed: int = 0
    suites: tuple[Path, ...] = ()  # suite JSONL files whose gold answers the simulator knows
    tasks: tuple[Task, ...] = ()  # tasks it knows besides the suites', built in code (by a test, say)
    # Answer the route that marks this kind of server (llama.cpp's /props, ...), so that ocllm takes it for one;
    # None: no such route, a server of no known kind. The answers stay the simulator's.
    mimic: str | None = None
    tool_parser: str = "structured"  # one of TOOL_PARSERS
    tool_format: str = "mixed"  # one of TOOL_FORMATS

    def __post_init__(self) -> None:
        # The CLI builds this from flags, so a bad value is the user's error: OcllmError, one line, exit 2.
        if not self.models:
            raise OcllmError("simulator: at least one model is needed")
        for name, accuracy in self.models.items():
            if not isinstance(name, str) or not name:
                raise OcllmError(f"simulator: model name {name!r} must be a non-empty string")
            if not _is_rate(accuracy):
                raise OcllmError(f"simulator: accuracy of {name!r} must be between 0 and 1, got {accuracy!r}")
        if not _is_rate(self.truncation_rate):
            raise OcllmError(f"simulator: truncation_rate must be between 0 and 1, got {self.truncation_rate!r}")
        if not isinstance(self.latency_s, int | float) or not math.isfinite(self.latency_s) or self.latency_s < 0:
            raise OcllmError(f"simulator: latency_s must be a finite number >= 0, got {self.latency_s!r}")
        if self.reasoning_field not in REASONING_FIELDS:
            choices = " or ".join(REASONING_FIELDS)
            raise OcllmError(f"simulator: reasoning_field must be {choices}, got {self.reasoning_field!r}")
        if self.mimic is not None and self.mimic not in MIMICS:
            raise OcllmError(f"simulator: mimic must be one of {', '.join(MIMICS)}, got {self.mimic!r}")
        if self.tool_parser not in TOOL_PARSERS:
            choices = ", ".join(TOOL_PARSERS)
            raise OcllmError(f"simulator: tool_parser must be one of {choices}, got {self.tool_parser!r}")
        if self.tool_format not in TOOL_FORMATS:
            choices = ", ".join(TOOL_FORMATS)
            raise OcllmError(f"simulator: tool_format must be one of {choices}, got {self.tool_format!r}")
        # Callers may pass a list of str paths; normalise so the frozen value is always a tuple of Paths.
        object.__setattr__(self, "suites", tuple(Path(p) for p in self.suites))
        object.__setattr__(self, "models", dict(self.models))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        if not all(isinstance(task, Task) for task in self.tasks):
            raise OcllmError("simulator: tasks must be Task records")


def _is_rate(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0
