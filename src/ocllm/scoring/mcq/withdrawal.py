"""Statements the model takes back: "The closest option is (C) 14, but it is not the correct answer",
"... so we can't choose option D". They are kept as evidence and never decide."""

from __future__ import annotations

import re

from ocllm.scoring.mcq.decision import Candidate

# A statement taken back later: "The closest option is (C) 14, but it is not the correct answer",
# "... we can't choose option D".
# Only a denial that it is the answer counts: "but it is not the correct answer", "but it is not one of
# the options"; "but it's not an easy question" or "but it is not one of the largest cities" take nothing back.
_BUT_NOT = re.compile(
    r"\bbut[ \t]+(?:it|this|that)(?:'s|[ \t]+is)[ \t]+not[ \t]+(?:"
    r"(?:the[ \t]+)?(?:correct|right)(?:[ \t]+(?:answer|option|choice))?\b"
    r"|(?:an?|one[ \t]+of[ \t]+the)[ \t]+(?:options?|choices?|answers?)\b"
    r"|(?:listed|among[ \t]+the[ \t]+(?:options|choices))\b)",
    re.IGNORECASE,
)
# A refusal is the model's own and ends its clause: "so we can't choose option D." (not "cannot choose C
# without first ...", nor "some may say you can't choose C").
_REFUSAL = re.compile(
    r"\b(?:I|we)[ \t]+(?:can't|cannot|can[ \t]+not|won't|shouldn't)[ \t]+(?:choose|select|pick|go[ \t]+with)[ \t]+"
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
