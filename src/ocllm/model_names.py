"""The model a server answered as against the one a lane asked for, in words said once.

The run side says it before a run (the engine's first request answered as another model than it lists) and the
analysis side after one (the answers name another model); both take the rule and the sentences from here, so the
runner can tell the two apart and say the mismatch once, and neither side imports the other for it.
"""

from __future__ import annotations

_MODEL_MISMATCH = "the lane asked for model"
_ANSWERS_AS = "it answers, as"


def same_model(wanted: str, served: str) -> bool:
    """Whether a served model name is the one asked for (Ollama lists "qwen3:latest" for "qwen3")."""
    return served in {wanted, f"{wanted}:latest", wanted.removesuffix(":latest")}


def model_mismatch_notice(requested: str, served: list[str]) -> str:
    """After a run: the answers named other models than the lane asked for (`served`, the most frequent first)."""
    return f"{_MODEL_MISMATCH} {requested!r}, but the server answered as {', '.join(map(repr, served))}"


def unlisted_model_notice(requested: str, listed: list[str], answered_as: str | None) -> str:
    """Before a run: the model asked for is not listed, but the server answers a request for it."""
    if answered_as and not same_model(requested, answered_as):
        answered = f"{_ANSWERS_AS} {answered_as!r}: results and reports name the model the server answered as"
    else:
        answered = "but it answers to that name"
    return f"model {requested!r} is not among those the server lists ({', '.join(listed)}); {answered}"


def is_model_mismatch(notice: str) -> bool:
    """Whether a notice says the server answered as another model than asked for, before or after a run:
    it is said once per run."""
    return notice.startswith(_MODEL_MISMATCH) or f"; {_ANSWERS_AS} " in notice
