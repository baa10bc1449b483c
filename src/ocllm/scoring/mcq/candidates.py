"""The pieces every statement finder shares: what it knows of the task, and how a found statement
becomes a Candidate (its kind, method, rank, and the reading rules that shaped it)."""

from __future__ import annotations

import bisect
import functools
import re
from typing import Literal, NamedTuple

from ocllm.scoring.mcq.decision import Candidate, Kind, Method
from ocllm.scoring.mcq.values import ValueKey, value_key
from ocllm.scoring.regions import Piece

Region = Literal["content", "reasoning"]

# The kinds of statement, strongest first. The rank is what "take the strongest kind" compares.
KIND_RANK: dict[str, int] = {
    "final_colon": 1,
    "final_answer": 2,
    "answer": 3,
    "boxed": 4,
    "option_claim": 5,
    "option_line": 6,
    "bare": 7,
}
# Hedged statements ("the answer would be (A)") rank below every firm kind.
HEDGED_RANK = 10


class TaskContext(NamedTuple):
    """What statement-finding needs to know about the task."""

    options: list[str]
    valid: frozenset[str]  # the option letters
    placeholders: frozenset[str]  # letters the prompt uses as placeholders, none of them an option
    longest_option: int = 0  # no stated value much longer than this can equal an option
    exemplar_letters: tuple[str, ...] = ()  # the letters a few-shot prompt's exemplars state, in order

    @property
    def option_keys(self) -> tuple[ValueKey, ...]:
        """The options' texts as values are compared; computed only when a value is stated."""
        return _option_keys(tuple(self.options))


@functools.lru_cache(maxsize=4096)
def _option_keys(options: tuple[str, ...]) -> tuple[ValueKey, ...]:
    return tuple(value_key(o) for o in options)


class Found(NamedTuple):
    letters: list[str]
    start: int  # statement start in the piece's text
    end: int  # statement end in the piece's text
    value: str | None = None  # the stated value when the letters came from matching option texts
    contradiction: str | None = None  # a restated value that is not the letter's own option
    list_label: bool = False  # a lower-case label before running text ("(i) The number is"): maybe no answer


# A statement the sentence puts inside a hypothesis or someone else's mouth, right before its marker:
# "If the answer is A, ...", "A common mistake is to say the answer is A", "At first glance the answer is
# A", "I first thought the answer is B". Such a statement is hedged: it counts only when nothing firmer
# exists. Only the words just before the marker count, so "Since B is not the capital, the answer is C"
# and "If we check again, the answer is C" stay firm. ("I think the answer is C" is an answer.)
_HYPOTHETICAL_LEAD = re.compile(
    r"(?:\b(?:if|whether|suppose|supposing|assume|assuming|unless|say|says|said|saying|claim|claims|claimed|"
    r"thought|wrongly|incorrectly|naively|mistakenly|initially)|\bat[ \t]+first(?:[ \t]+glance)?|"
    r"\bfirst[ \t]+glance)[,:]?[ \t]+[\"'“‘]?(?:that[ \t]+)?(?:the[ \t]+)?[\"'“‘]?$",
    re.IGNORECASE,
)


def hypothetical(text: str, start: int) -> bool:
    return _HYPOTHETICAL_LEAD.search(text, max(0, start - 60), start) is not None


_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[ \t]*([\w+#.-]*)", re.MULTILINE)
# A fence with no language, or a prose one, only frames the answer ("```\nFINAL: C\n```"); a fence of
# program code holds code, where "print('FINAL: A')" states nothing.
_PROSE_FENCES = frozenset(("", "text", "txt", "plaintext", "plain", "markdown", "md", "output"))


@functools.lru_cache(maxsize=64)
def _fences(text: str) -> tuple[list[int], list[str]]:
    if "```" not in text and "~~~" not in text:
        return [], []
    found = list(_FENCE.finditer(text))
    return [m.start() for m in found], [m.group(1).lower() for m in found]


def inside_code_block(text: str, pos: int) -> bool:
    """Is `pos` inside a fenced block of program code (an odd number of fences before it, the opening
    one naming a language)? Cached per text: this is asked once per statement, and a text may hold thousands."""
    starts, languages = _fences(text)
    before = bisect.bisect_right(starts, pos)
    return before % 2 == 1 and languages[before - 1] not in _PROSE_FENCES


# A lower-case label before running text that is no option's text ("Final Answer:\n(i) The number is: 42"),
# with a statement naming a letter after it, opened a list: it decides only when no other statement names one.
LIST_LABEL_RANK = 11
# A value that is no option with a letter stated after it, or restating the letter of a statement of its kind
# before it, ranks below every letter, hedged ones included.
SUPERSEDED_VALUE_RANK = 12


def rank(candidate: Candidate) -> int:
    if not candidate.letters and ("letter_follows" in candidate.reading or "restates_letter" in candidate.reading):
        return SUPERSEDED_VALUE_RANK
    if "list_label" in candidate.reading and "letter_follows" in candidate.reading:
        return LIST_LABEL_RANK
    return HEDGED_RANK if candidate.hedged else KIND_RANK[candidate.kind]


def json_answer_field(text: str, start: int) -> bool:
    """Whether the statement at `start` is the "answer" field of a JSON reply ({"reasoning": "…", "answer": "D"}): a
    JSON object whose opening brace begins its line, as a reply's does, not one written inside a sentence or a line of
    code (`I'd write {"answer": "B"}`, `result = {"answer": "A"}`)."""
    if not (start > 0 and text[start - 1] in '"_' and text.startswith('answer"', start)):
        return False
    brace = text.rfind("{", max(0, start - _REPLY_REACH), start)
    return brace != -1 and not text[text.rfind("\n", 0, brace) + 1 : brace].strip()


# How far before its "answer" field a reply's opening brace is looked for: its other fields (a reasoning) come first.
_REPLY_REACH = 20_000


# The method of the letter a statement of each kind names.
_LETTER_METHODS: dict[Kind, Method] = {
    "final_colon": "final_colon_letter", "final_answer": "final_answer_letter", "answer": "answer_letter",
    "boxed": "boxed_letter", "option_claim": "option_claim", "option_line": "option_line", "bare": "bare_letter",
}  # fmt: skip


def make_candidate(
    found: Found, kind: Kind, region: Region, piece: Piece, ctx: TaskContext, *, hedged: bool = False
) -> Candidate:
    letters = found.letters
    method: Method
    if found.value is not None and not letters:
        method = "stated_value"  # a value that is no option's text: no letter at all
    elif found.value is not None:
        method = "option_text"
    else:
        method = _LETTER_METHODS[kind]
    # Code is not prose: "print('FINAL: A')" states nothing, unless nothing outside code does. The answer field of a
    # JSON reply is no code, fenced or not: it is the slot the prompt asked the answer in.
    in_code = not json_answer_field(piece.text, found.start) and inside_code_block(piece.text, found.start)
    hedged = hedged or in_code
    out_of_range = not letters or any(letter not in ctx.valid for letter in letters)
    placeholder = bool(letters) and out_of_range and all(letter in ctx.placeholders for letter in letters)
    text = piece.text[found.start : found.end]
    return Candidate(
        letter=letters[0] if len(letters) == 1 else None,
        letters=letters,
        kind=kind,
        method=method,
        region=region,
        field=piece.field,
        start=piece.offset + found.start,
        end=piece.offset + found.end,
        text=text,
        hedged=hedged,
        out_of_range=out_of_range,
        placeholder=placeholder,
        value=found.value,
        contradiction=found.contradiction,
        reading=reading_tags(text, kind, found, hedged=hedged, placeholder=placeholder)
        + (["in_code_block"] if in_code else []),
    )


_LATEX_SIGNS = ("\\(", "\\[", "$", "\\text", "\\math", "\\ ")


def reading_tags(text: str, kind: str, found: Found, *, hedged: bool, placeholder: bool) -> list[str]:
    """Name the reading rules that made this statement what it is, for the audit."""
    tags = []
    if any(sign in text for sign in _LATEX_SIGNS):
        tags.append("latex")
    if kind != "boxed" and "\\boxed" in text:
        tags.append("box_after_marker")
    if found.value is not None:
        tags.append("option_text" if found.letters else "stated_value")
    if found.contradiction is not None:
        tags.append("letter_value_mismatch")
    if found.list_label:
        tags.append("list_label")
    if kind in ("final_colon", "final_answer", "answer") and "\n" in text and len(found.letters) > 1:
        tags.append("several_option_lines")
    if hedged:
        tags.append("hedged")
    if placeholder:
        tags.append("placeholder_echo")
    return tags
