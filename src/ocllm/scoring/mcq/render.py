"""How the run report draws an MCQ record's own evidence: the options with the expected one and a wrong pick
marked, and each statement found with the letters it names and how it was read."""

from __future__ import annotations

from ocllm.scoring.mcq.decision import Candidate, McqDecision
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.option_letters import option_letter
from ocllm.scoring.scored import Scored
from ocllm.scoring.task_view import MarkedOption, Statement, Tag, TaskView, candidates_of, statement


def _options(scored: Scored[McqTask, McqDecision]) -> list[MarkedOption]:
    # The gold and the pick as every record gives them: a failed request's record names its gold too.
    expected = scored.record.get("expected_answer")
    picked = scored.record.get("extracted_final_answer")
    out = []
    for i, text in enumerate((scored.task.options if scored.task is not None else None) or []):
        # Past 26 options a record read from another tool's file has no letter: its options are numbered.
        letter = option_letter(i) if i < 26 else str(i + 1)
        out.append(MarkedOption(letter, str(text), letter == expected, letter == picked and picked != expected))
    return out


def _statement(candidate: Candidate, deciding: bool) -> Statement:
    tags = []
    if candidate.hedged:
        tags.append(Tag("hedged", warn=True))
    if candidate.out_of_range:
        tags.append(Tag("out of range", warn=True))
    if candidate.placeholder:
        tags.append(Tag("placeholder echo", warn=True))
    if candidate.value is not None:
        tags.append(Tag(f"value {candidate.value}"))
    letters = candidate.letters or ([candidate.letter] if candidate.letter else [])
    return statement(candidate, deciding, letters=letters, own_tags=tags)


def task_view(scored: Scored[McqTask, McqDecision]) -> TaskView:
    decision = scored.decision
    found = candidates_of(decision.candidates, decision.decided_by) if decision is not None else []
    return TaskView(options=_options(scored), statements=[_statement(c, deciding) for c, deciding in found])
