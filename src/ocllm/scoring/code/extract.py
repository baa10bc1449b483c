"""Temporary extraction (replaced by the rules of docs/scoring/code.md C1-C5): the last python or untagged fenced
block, else the whole visible answer."""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decision import CodeAmbiguity, CodeBlock, CodeMethod, NoCodeReason, Prepended
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.regions import split_regions


class Extraction(NamedTuple):
    method: CodeMethod
    ambiguity: CodeAmbiguity
    blocks: list[CodeBlock]
    chosen: int | None
    why: str
    prepended: list[Prepended]
    code: str | None
    span: tuple[int, int] | None
    no_code_reason: NoCodeReason | None
    source: Literal["content", "none"]


_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def extract_code(task: CodeTask, sample: Sample, policy: Policy) -> Extraction:
    visible = split_regions(sample.content, None, think_prefilled=policy.think_prefilled).visible_text()
    if not visible.strip():
        reason: NoCodeReason = "reasoning_only" if sample.reasoning else "empty"
        return Extraction("none", "none", [], None, "no visible answer", [], None, None, reason, "none")
    blocks = [
        CodeBlock(index=i, start=m.start(2), end=m.end(2), first_line=1, last_line=1, label=m.group(1))
        for i, m in enumerate(_FENCE.finditer(visible))
        if m.group(1).lower() in ("", "python", "py", "python3")
    ]
    if blocks:
        last = blocks[-1]
        last.role = "ran"
        code = visible[last.start : last.end]
        return Extraction("fenced_last", "none", blocks, last.index, "the last block", [], code, None, None, "content")
    span = (0, len(visible))
    return Extraction("whole_answer", "none", [], None, "the whole answer", [], visible, span, None, "content")
