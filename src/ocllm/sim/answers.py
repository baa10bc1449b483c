"""The text of a simulated answer: each task type's room writes the answers to its tasks (its
`simulated_answer` hook, `ocllm.scoring.simulated` says which room answers what); the simulator adds the plain
sentence for a prompt no room answers, and a trace cut off mid-sentence.

Every random choice comes from the `random.Random` handed in, so the same draws give the same text.
"""

from __future__ import annotations

import random

from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest, snippet
from ocllm.scoring.task_types import TASK_TYPES
from ocllm.sim.config import SIM_LABEL


def draft_answer(request: SimulatedRequest) -> SimulatedAnswer:
    """The answer to the request: its task's room's, when the prompt quotes a known task; for a prompt the simulator
    does not know, the first room's in registry order that answers it; else the plain sentence."""
    if request.task is not None:
        known = TASK_TYPES.get(request.task.type)
        hook = known.simulated_answer if known is not None else None
        answer = hook(request) if hook is not None else None
    else:
        # Lazily, so that no room after the one that answers is asked (a room that declines draws nothing).
        answers = (t.simulated_answer(request) for t in TASK_TYPES.values() if t.simulated_answer is not None)
        answer = next((found for found in answers if found is not None), None)
    if answer is not None:
        return answer
    return _plain_answer(request.rng, request.prompt, request.model, reasoning=request.reasoning)


def _plain_answer(rng: random.Random, prompt: str, model: str, *, reasoning: bool) -> SimulatedAnswer:
    content = rng.choice(
        [
            f"This is a simulated reply from {SIM_LABEL} (model {model}); it does not know this question.",
            f"{SIM_LABEL} (model {model}) has no answer on file for this prompt, so it replies with this sentence.",
        ]
    )
    thinking = None
    if reasoning:
        thinking = (
            f'The prompt starts with "{snippet(prompt)}". '
            "It is not one of the questions I know, so I will answer with a plain sentence."
        )
    return SimulatedAnswer(content, thinking)


def cut_mid_sentence(rng: random.Random, text: str) -> str:
    """Stop a trace inside a sentence, as a model does when it runs out of tokens."""
    words = text.split(" ")
    if len(words) < 2:
        return text[: max(1, len(text) // 2)]
    cut = rng.randint(max(1, len(words) // 2), len(words) - 1)
    return " ".join(words[:cut]).rstrip(".!?,;:") or words[0]
