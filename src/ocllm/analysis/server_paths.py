"""Same weights, different servers (issue 44, item 4): two lanes whose server software differs (vLLM and
llama-server, Ollama and SGLang) agree task by task or not, and where their answers differ the server path often
decided it rather than the model. Each task whose verdict or extracted answer differs is put under the first cause
that tells its two answers apart, in this order:

- `truncation`: one side was cut off at max_tokens, the other finished;
- `channel`: one side's answer stood only in the reasoning field (no visible content), the other's in content;
- `call format`: one side's calls came back structured (`tool_calls`), the other's were left in the text;
- `answer`: none of these, so the answers themselves differ (the numerics of two engines, sampling).

The agreement's exact paired test is the comparison's own (McNemar on the same tasks); this module says what it is
made of. Each task's first sample is what is compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ocllm.documents import ServerPaths
from ocllm.scoring.text_calls import find_text_calls
from ocllm.visible_text import visible


class ScoredTask(Protocol):
    """What this module reads of one side's answer to a task (compare.ScoredTask has it)."""

    @property
    def correct(self) -> bool | None: ...
    @property
    def extracted(self) -> str | None: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def content(self) -> str | None: ...
    @property
    def reasoning(self) -> str | None: ...
    @property
    def structured_calls(self) -> bool: ...


class ScoredRun(Protocol):
    """What this module reads of one side (compare.ScoredRun has it)."""

    @property
    def label(self) -> str: ...
    @property
    def settings(self) -> dict[str, str] | None: ...
    @property
    def tasks(self) -> Mapping[str, Sequence[ScoredTask]]: ...

CAUSES = ("truncation", "channel", "call format", "answer")
_KIND = "server kind"


def server_kinds(a: ScoredRun, b: ScoredRun) -> tuple[str, str] | None:
    """The two sides' server kinds when both runs recorded one and they differ; else None."""
    kinds = [(run.settings or {}).get(_KIND) for run in (a, b)]
    if kinds[0] is None or kinds[1] is None or kinds[0] == kinds[1]:
        return None
    return kinds[0], kinds[1]


def _answered_in_content(task: ScoredTask) -> bool:
    return bool(visible(task.content or "").strip())


def _calls(task: ScoredTask) -> str:
    if task.structured_calls:
        return "structured"
    return "text" if task.content and find_text_calls(task.content) else "none"


def cause_of(a: ScoredTask, b: ScoredTask) -> str:
    """The first cause that tells two answers to one task apart (the module's list)."""
    if a.truncated != b.truncated:
        return "truncation"
    in_reasoning = [not _answered_in_content(t) and bool((t.reasoning or "").strip()) for t in (a, b)]
    if in_reasoning[0] != in_reasoning[1]:
        return "channel"
    if {_calls(a), _calls(b)} == {"structured", "text"}:
        return "call format"
    return "answer"


def server_paths_of(a: ScoredRun, b: ScoredRun, paired: list[str]) -> ServerPaths | None:
    """Agreement and what tells the answers apart, over the `paired` tasks, when the two lanes' server kinds differ."""
    kinds = server_kinds(a, b)
    if kinds is None or not paired:
        return None
    firsts = [(tid, a.tasks[tid][0], b.tasks[tid][0]) for tid in paired]
    same_verdict = sum(x.correct == y.correct for _, x, y in firsts)
    same_answer = sum(x.correct == y.correct and x.extracted == y.extracted for _, x, y in firsts)
    differ: dict[str, list[str]] = {}
    for tid, x, y in firsts:
        if x.correct != y.correct or x.extracted != y.extracted:
            differ.setdefault(cause_of(x, y), []).append(tid)
    ordered = {cause: differ[cause] for cause in CAUSES if cause in differ}
    n = len(firsts)
    said = (
        f"{a.label} ({kinds[0]}) and {b.label} ({kinds[1]}) agree on the verdict of {same_verdict} of {n} tasks "
        f"and on the answer of {same_answer}"
    )
    if ordered:
        said += "; the answers differ by " + ", ".join(f"{cause} ({len(ids)})" for cause, ids in ordered.items())
        server = sum(len(ids) for cause, ids in ordered.items() if cause != "answer")
        if server:
            said += f": {server} of {n - same_answer} by the server path, not the model's answer"
    return ServerPaths(
        kinds=list(kinds), paired=n, same_verdict=same_verdict, same_answer=same_answer, differ=ordered, said=said
    )
