"""Split a response into the visible answer region and the reasoning region.

Each region is a list of pieces; a piece remembers which raw field it came from and where it
starts, so every span the scorer reports points into the text the server actually returned.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

Field = Literal["content", "reasoning"]

_THINK_TAG = re.compile(r"</?think>", re.IGNORECASE)


# gpt-oss's harmony format in the content: the analysis channel, then the final one. With its special tokens kept
# ("<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…"), or flattened when a
# server or tool decoded without them ("analysisWe need to…assistantfinalThe answer is 18.").
_HARMONY_ANALYSIS = re.compile(r"^\s*(?:<\|start\|>assistant)?<\|channel\|>analysis<\|message\|>")
_HARMONY_FINAL = re.compile(r"(?:<\|end\|>)?(?:<\|start\|>assistant)?<\|channel\|>final<\|message\|>")
_FLAT_ANALYSIS = re.compile(r"^\s*analysis(?=[A-Z*#\\$\"'(\[])")
_FLAT_FINAL = "assistantfinal"
_HARMONY_CLOSE = re.compile(r"<\|(?:return|end|call)\|>\s*$")


def _harmony_final(content: str) -> tuple[int, int | None] | None:
    """Where a harmony analysis ends and its final message starts (None: never reached), or None when the content
    is not in the harmony format."""
    if _HARMONY_ANALYSIS.match(content):
        finals = list(_HARMONY_FINAL.finditer(content))
        return (finals[-1].start(), finals[-1].end()) if finals else (len(content), None)
    at = content.rfind(_FLAT_FINAL)
    if at != -1:  # the analysis's own start may be cut away, its end never is: no prose writes "assistantfinal"
        return at, at + len(_FLAT_FINAL)
    if _FLAT_ANALYSIS.match(content):
        return len(content), None
    return None


class Piece(NamedTuple):
    field: Field
    offset: int  # where `text` starts in the raw field
    text: str


class Regions(NamedTuple):
    visible: list[Piece]
    reasoning: list[Piece]

    def visible_text(self) -> str:
        return "".join(p.text for p in self.visible)


def split_regions(content: str | None, reasoning: str | None, *, think_prefilled: bool = False) -> Regions:
    """Apply the region rule of docs/scoring.md to one response."""
    visible: list[Piece] = []
    thinking: list[Piece] = []
    if reasoning:
        thinking.append(Piece("reasoning", 0, reasoning))
    if not content:
        return Regions(visible, thinking)
    harmony = _harmony_final(content)
    if harmony is not None:
        analysis_end, final_start = harmony
        thinking.append(Piece("content", 0, content[:analysis_end]))
        if final_start is not None and final_start < len(content):
            end = len(content)
            closing = _HARMONY_CLOSE.search(content, final_start)
            if closing is not None:
                end = closing.start()  # "<|return|>" ends the final message: a token, not its words
            visible.append(Piece("content", final_start, content[final_start:end]))
        return Regions(visible, thinking)

    tags = [(m.start(), m.end(), m.group(0)[1] == "/") for m in _THINK_TAG.finditer(content)]
    closers = [t for t in tags if t[2]]
    start = 0
    if think_prefilled and not closers:
        # The template opened <think> in the prompt and it never closed: all of it is reasoning.
        thinking.append(Piece("content", 0, content))
        return Regions(visible, thinking)
    # The prefilled reading applies when the content's first tag is a closer (the thinking began in the
    # prompt); a stray closer after a proper <think> block is ignored.
    if closers and (think_prefilled or tags[0][2]):
        # A </think> with no opener: the thinking began in the prompt, so everything up to the
        # last </think> is reasoning.
        last_start, last_end, _ = closers[-1]
        thinking.append(Piece("content", 0, content[:last_start]))
        start = last_end
        tags = [t for t in tags if t[0] >= start]

    pos = start
    open_end = -1
    for tag_start, tag_end, is_close in tags:
        if not is_close and open_end == -1:
            if tag_start > pos:
                visible.append(Piece("content", pos, content[pos:tag_start]))
            open_end = tag_end
        elif is_close and open_end != -1:
            thinking.append(Piece("content", open_end, content[open_end:tag_start]))
            open_end = -1
            pos = tag_end
        elif is_close:
            # A stray closer after a finished block: drop the tag itself, keep the text around it.
            if tag_start > pos:
                visible.append(Piece("content", pos, content[pos:tag_start]))
            pos = tag_end
        # A nested opener inside an open block stays part of that block's thinking.
    if open_end != -1:
        # An opening <think> never closed: the rest is truncated thinking.
        thinking.append(Piece("content", open_end, content[open_end:]))
    elif pos < len(content):
        visible.append(Piece("content", pos, content[pos:]))
    return Regions(visible, thinking)
