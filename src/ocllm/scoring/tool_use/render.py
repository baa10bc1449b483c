"""How reports draw a tool_use episode: turn by turn, each user turn, each call with what came of it and its result,
the turn's verdict and, failed, its cause and what differed; the summary's causes and ends; a comparison's episodes
paired by what decided them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ocllm.scoring.scored import Scored
from ocllm.scoring.task_type import Compared, DetailTable
from ocllm.scoring.task_view import EvidenceTable, TaskView
from ocllm.scoring.tool_use.decision import CAUSES, ToolUseDecision, TurnCheck
from ocllm.scoring.tool_use.episode import CallRun
from ocllm.scoring.tool_use.fields import ToolUseTask

ToolUse = Scored[ToolUseTask, ToolUseDecision]
_SHORT = 160


def _short(text: str, limit: int = _SHORT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call(run: CallRun) -> str:
    return f"{run.name or '?'}({_short(run.arguments or '', 80)})"


def _verdict(check: TurnCheck) -> str:
    if check.passed is None:
        return "not checked" if check.requests else "not reached"
    if check.passed:
        return "passed"
    said = f"failed: {str(check.cause).replace('_', ' ')}"
    differs = "; ".join(f"{kind}: {', '.join(fields)}" for kind, fields in check.differs.items())
    if differs:
        said += f" ({differs} differ from the gold)"
    if check.missing_results:
        said += f"; {len(check.missing_results)} gold result(s) never given"
    if check.missing_content:
        said += "; the answer lacks " + ", ".join(repr(text) for text in check.missing_content)
    if check.text_calls:
        said += f"; {check.text_calls} call(s) written as text ({check.call_format}, in the {check.text_calls_in})"
    return said


def evidence_lines(scored: ToolUse) -> list[tuple[str, str]]:
    decision = scored.decision
    if decision is None:
        return []
    lines = [("episode", f"{decision.requests} request(s), ended: {decision.episode_end or 'by an error'}")]
    for check in decision.turn_checks:
        lines.append((f"turn {check.turn}", _verdict(check)))
        for number, run in enumerate(check.calls, start=1):
            said = f"{_call(run)} {run.status}: {_short(run.result, 100)}"
            lines.append((f"turn {check.turn} call {number}", said))
    if decision.end_state_differs:
        said = "; ".join(f"{kind}: {', '.join(fields)}" for kind, fields in decision.end_state_differs.items())
        lines.append(("end state differs", said))
    return lines


def task_view(scored: ToolUse) -> TaskView:
    """The episode's facts, and one table of its turns: each user message, each call and its result, the verdict."""
    decision = scored.decision
    if decision is None:
        return TaskView()
    right = f"{decision.turns_right} of {decision.turns_checked} checked ({len(decision.turn_checks)} in all)"
    facts = [
        ("turns right", right), ("requests", str(decision.requests)),
        ("ended", decision.episode_end or "by a failed request"),
    ]  # fmt: skip
    if decision.cause is not None:
        facts.append(("first failed turn", f"turn {decision.failed_turn}: {decision.cause.replace('_', ' ')}"))
    if decision.end_state_differs:
        differs = "; ".join(f"{k}: {', '.join(f)}" for k, f in decision.end_state_differs.items())
        facts.append(("end state differs", differs))
    users = scored.task.user_turns if scored.task is not None else []
    rows = []
    for check in decision.turn_checks:
        said = _short(users[check.turn - 1].content, 100) if check.turn - 1 < len(users) else ""
        if not check.calls:
            rows.append([str(check.turn), said, "no call", "", _verdict(check)])
        for number, run in enumerate(check.calls):
            first = number == 0
            rows.append([
                str(check.turn) if first else "", said if first else "", _call(run),
                f"{run.status}: {_short(run.result, 120)}", _verdict(check) if first else "",
            ])  # fmt: skip
    table = EvidenceTable("Turn by turn", ["turn", "user", "call", "what came of it", "turn's verdict"], rows)
    return TaskView(facts=facts, tables=[table])


def detail_words(details: Mapping[str, Any]) -> str:
    said = (
        f"{details.get('correct', 0)} of {details.get('episodes', 0)} episode(s) right; turns right "
        f"{details.get('turns_right', 0)} of {details.get('turns_checked', 0)} checked (not an accuracy); "
        f"{details.get('requests', 0)} request(s)"
    )
    causes = details.get("first_failed_turn_by_cause") or {}
    if causes:
        said += "; first failed turn by cause: " + ", ".join(f"{c.replace('_', ' ')} {n}" for c, n in causes.items())
    if details.get("episodes_with_calls_as_text"):
        said += f"; {details['episodes_with_calls_as_text']} episode(s) wrote calls as text (never run)"
    return said


def detail_tables(details: Mapping[str, Any]) -> list[DetailTable]:
    first = details.get("first_failed_turn_by_cause") or {}
    every = details.get("failed_turns_by_cause") or {}
    tables = []
    if every:
        rows = [[cause, str(first.get(cause, 0)), str(every.get(cause, 0))] for cause in CAUSES if cause in every]
        tables.append(DetailTable("Failed turns by cause", ["cause", "episodes (first failed turn)", "turns"], rows))
    ends = details.get("episode_ends") or {}
    if ends:
        rows = [[end, str(n)] for end, n in ends.items()]
        tables.append(DetailTable("How the episodes ended", ["end", "episodes"], rows))
    calls = details.get("calls_by_status") or {}
    if calls:
        rows = [[status, str(n)] for status, n in calls.items()]
        tables.append(DetailTable("Calls by what came of them", ["status", "calls"], rows))
    return tables


def _outcome(side: Compared) -> str:
    if side.error is not None:
        return "request_error"
    return side.rule or ("episode_right" if side.correct else "unknown")


def pair_tables(pairs: Sequence[tuple[Compared, Compared]], label_a: str, label_b: str) -> list[DetailTable]:
    """The episodes of the two sides paired by what decided each (right, or the cause of its first failed turn):
    how many went from each to each, the changes first (most first)."""
    counts: dict[tuple[str, str], int] = {}
    for a, b in pairs:
        key = (_outcome(a), _outcome(b))
        counts[key] = counts.get(key, 0) + 1
    if not counts:
        return []
    ordered = sorted(counts.items(), key=lambda item: (item[0][0] == item[0][1], -item[1], item[0]))
    rows = [[a, b, str(n)] for (a, b), n in ordered]
    changed = sum(n for (a, b), n in counts.items() if a != b)
    title = f"Episodes paired by what decided them, {label_a} → {label_b}: {changed} of {sum(counts.values())} changed"
    return [DetailTable(title, [f"on {label_a}", f"on {label_b}", "episodes"], rows)]
