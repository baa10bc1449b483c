"""Statements the model takes back: "The closest option is (C) 14, but it is not the correct answer",
"... so we can't choose option D". They are kept as evidence and never decide."""

from __future__ import annotations

import re

from ocllm.models import Candidate

# A statement taken back later: "The closest option is (C) 14, but it is not the correct answer",
# "... we can't choose option D".
# Only a denial of correctness counts: "but it's not an easy question" takes nothing back.
_BUT_NOT = re.compile(
    r"\bbut[ \t]+(?:it|this|that)(?:'s|[ \t]+is)[ \t]+not[ \t]+(?:the[ \t]+|an?[ \t]+)?"
    r"(?:correct|right|exact|accurate|listed|among|one[ \t]+of|answer|option|choice|valid)\b",
    re.IGNORECASE,
)
# A refusal ends its clause: "we can't choose option D." (not "cannot choose C without first ...").
_REFUSAL = re.compile(
    r"\b(?:can't|cannot|can[ \t]+not|won't|shouldn't)[ \t]+(?:choose|select|pick|go[ \t]+with)[ \t]+"
    r"(?:option[ \t]+|choice[ \t]+)?\(?([A-Z])\)?(?=[ \t]*(?:[.,;:!]|$)|[ \t]+(?:here|either|as[ \t]+the)\b)",
    re.IGNORECASE | re.MULTILINE,
)
_REFUSAL_WORDS = ("n't", "cannot", "can not")


def withdraw(candidates: list[Candidate], content: str) -> list[Candidate]:
    """Mark visible statements the model takes back in the same sentence or refuses later."""
    lower = content.lower()
    refused: dict[str, int] = {}
    if any(word in lower for word in _REFUSAL_WORDS):
        refused = {m.group(1).upper(): m.start() for m in _REFUSAL.finditer(content)}
    for c in candidates:
        if c.field != "content" or c.letter is None:
            continue
        sentence = content[c.end : c.end + 200].split("\n", 1)[0].lower()
        cut = sentence.find(". ")
        taken_back = "but" in sentence and _BUT_NOT.search(sentence, 0, len(sentence) if cut == -1 else cut)
        if taken_back or refused.get(c.letter, -1) > c.end:
            c.withdrawn = True
            c.reading.append("withdrawn")
    return candidates
