"""Boxes that state one answer together (docs/scoring/math.md, rule M2): a list joined by commas or "and" on one line,
the same name given each value, and, where the question asks for every value, boxes one to a line or joined by "or";
boxes joined by "or" elsewhere offer alternatives, and one value said twice is one value."""

from __future__ import annotations

import re

from ocllm.scoring.math.decision import MathCandidate
from ocllm.scoring.math.stated import make_candidate
from ocllm.scoring.regions import Piece

# Between the boxes of one list: "\boxed{2}, \boxed{3} and \boxed{5}", "$\boxed{2}$, $\boxed{3}$", "x = \boxed{1} and
# x = \boxed{2}" (the same name given each value).
_NAME = r"[A-Za-z](?:_\{?\w+\}?)?"
_ASSIGNED = r"(?:" + _NAME + r"[ \t]*=[ \t]*)?"
_NAMED_AT_END = re.compile(r"(" + _NAME + r")[ \t]*=[ \t$]*$")
_NAMED_AT_START = re.compile(r"^[^=]*?(" + _NAME + r")[ \t]*=")
_LIST_GLUE = re.compile(
    r"^[ \t$]*(?:,|;|\band\b|,[ \t]*and\b|\\text\{[ \t]*(?:,|and)[ \t]*\})?[ \t$]*" + _ASSIGNED + r"[ \t$]*$"
)
_OR_GLUE = re.compile(r"^[ \t$]*,?[ \t]*(?:\bor\b|\\text\{[ \t]*or[ \t]*\})[ \t$]*" + _ASSIGNED + r"[ \t$]*$")
# Where the question asks for every value, boxes one to a line (a list's items, a name given each) are one list too,
# and so are boxes joined by "or": "x = \boxed{1} or x = \boxed{2}" is the set of solutions it asks for.
_SPACE_OR_DELIMITER = r"(?:[ \t$]|\\[][()])*"
_LINE_GLUE = re.compile(
    r"^[.,;]?" + _SPACE_OR_DELIMITER + r"(?:\r?\n" + _SPACE_OR_DELIMITER + r"(?:[-*•]|\d+[.)]|\\item)?"
    + _SPACE_OR_DELIMITER + _ASSIGNED + _SPACE_OR_DELIMITER + r")+$"
)  # fmt: skip
# "The sum of all the solutions", "How many real roots": one value about the list, not the list.
_ONE_VALUE_OF_ALL = re.compile(
    r"\b(?:sum|product|largest|smallest|greatest|least|maximum|minimum|number|mean|average|count|difference)\b"
    r"[^.?]{0,30}\b(?:of|among)[ \t]+(?:all|the)\b|\bhow[ \t]+many\b",
    re.IGNORECASE,
)
EVERY_VALUE_ASKED = re.compile(
    r"\ball[ \t]+(?:the[ \t]+)?(?:possible[ \t]+|real[ \t]+|integer[ \t]+|complex[ \t]+|positive[ \t]+|distinct[ \t]+)*"
    r"(?:values|solutions|roots|zeros|zeroes|numbers|integers|pairs|answers)\b|separated[ \t]+by[ \t]+commas"
    r"|\b(?:find|enter|list)[ \t]+(?:them[ \t]+)?all\b",
    re.IGNORECASE,
)


def box_lists(boxes: list[MathCandidate], piece: Piece, every_value: bool) -> list[MathCandidate]:
    """Boxes joined by commas or "and" on one line state one list ("\boxed{2}, \boxed{3}" states "2, 3"), not
    answers that conflict; where the question asks for every value, so do boxes one to a line or joined by "or"."""
    merged: list[MathCandidate] = []
    for box in boxes:
        last = merged[-1] if merged else None
        glue = piece.text[last.end - piece.offset : box.start - piece.offset] if last is not None else None
        if last is not None and glue is not None and not _same_name(piece, last, glue):
            glue = None  # "x = \boxed{3} and y = \boxed{5}": two names, two answers, no list
        if (
            every_value
            and last is not None
            and glue is not None
            and (_OR_GLUE.match(glue) or _LINE_GLUE.match(glue))
            and "," not in last.value + box.value  # a box that holds the list already is its own answer
            and box.value.strip() not in last.value.split(", ")  # a value said again is a repeat, not an item
        ):
            glue = ","  # the items of the list the question asks for
        alternatives = glue is not None and _OR_GLUE.match(glue) is not None
        if alternatives and last is not None and box.value.strip() == last.value.strip():
            glue = None  # "x = \boxed{2} or x = \boxed{2}": one value said twice, the two boxes agree
        if last is None or glue is None or not glue.strip() or not (_LIST_GLUE.match(glue) or alternatives):
            merged.append(box)
            continue
        text = piece.text[last.start - piece.offset : box.end - piece.offset]
        # "\boxed{24} or \boxed{19}" offers two answers: stated as both, it equals no single gold.
        value = f"{last.value} or {box.value}" if alternatives else f"{last.value}, {box.value}"
        joined = make_candidate("boxed", last.region, last.field, last.start, box.end, text, value)
        note = "box_alternatives" if alternatives else "box_list"
        joined.reading = [*dict.fromkeys([*last.reading, *box.reading, note])]
        merged[-1] = joined
    return merged


def _same_name(piece: Piece, first: MathCandidate, glue: str) -> bool:
    """Whether a name the glue gives the next box ("… and x = ") is the one the list's first box was given."""
    named = _NAMED_AT_END.search(glue)
    if named is None:
        return True
    line_start = piece.text.rfind("\n", 0, first.start - piece.offset) + 1
    before = _NAMED_AT_END.search(piece.text[line_start : first.start - piece.offset])
    if before is None:  # on its own line: "\[ x = \boxed{1} \]" names it after the line's opening
        before = _NAMED_AT_START.search(piece.text[line_start : first.start - piece.offset])
    return before is not None and before.group(1) == named.group(1)


def every_value_asked(question: str | None) -> bool:
    """Whether the question asks for every value ("Find all real x …", "separated by commas"), not one value about
    them ("the sum of all the solutions", "how many real roots")."""
    if not question or EVERY_VALUE_ASKED.search(question) is None:
        return False
    return _ONE_VALUE_OF_ALL.search(question) is None
