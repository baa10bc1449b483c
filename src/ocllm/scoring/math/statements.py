"""Find the answer statements of a region (docs/scoring.md, math rules M2 and M3): boxes, "FINAL:" / "Final
answer:", "#### N", "The answer is ...", answer labels. Each becomes a MathCandidate with its span in the raw
field, the value it states, and the reading notes that shaped it, whether or not it ends up deciding."""

from __future__ import annotations

import bisect
import json
import re
from fractions import Fraction
from typing import NamedTuple

from ocllm.scoring.math.arithmetic import evaluate, rounds_to
from ocllm.scoring.math.braces import brace_pairs
from ocllm.scoring.math.decision import MathCandidate, MathKind
from ocllm.scoring.math.normalise import assignment_value, normalise, strip_delimiters
from ocllm.scoring.math.words import PHRASE_WORDS, VALUE_WORDS
from ocllm.scoring.regions import Field, Piece

# Strength of each kind, strongest first: the strongest kind present decides (rule M2).
RANK: dict[str, int] = {
    "boxed": 1, "final": 2, "hashes": 3, "answer_is": 4, "answer_label": 5, "result_line": 6, "last_number": 9
}  # fmt: skip

_BOX = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_BOX_SPACE = re.compile(r"\\boxed[ \t]+([^\s${}]+)")  # "\boxed 5", as some models write it
_BOLD = r"(?:\*\*|__)?"
_MARKER_PATTERNS = {
    # FINAL: 18, **Final Answer:** 18, The final answer is 18, a "**Final Answer**" heading before its value
    "final": r"\bfinal[ \t]*[*_]*[ \t]*[:：]|\bfinal[ \t]+answer\b(?:[ \t]*[*_]*[ \t]*(?:[:：]|is\b[ \t]*:?)"
    r"|[ \t]*[*_#]*[ \t]*(?=\r?\n|$))",
    # #### 18 (GSM8K), only before a value: "#### Step 2" is a markdown heading
    # "#### 18" also after a sentence on its line ("… = 260.#### 260"): only a heading stands first on its line
    "hashes": r"(?:^[ \t]*|(?<=[.!:;)\s]))####[ \t]*(?=[-+$\d\\.]|<[ \t]*\d|(?:\*\*|__)[ \t]*[-+$\d])",
    # The answer is 18, So the correct answer is 18, the answer (arabic numerals) is 18: one aside in parentheses
    "answer_is": r"\b(?:the[ \t]+)?(?:correct[ \t]+|right[ \t]+)?answer(?:[ \t]*\([^()\n]{1,40}\))?[ \t]+is\b[ \t]*:?",
    # Answer: 18, **Answer:** $26, **Answer: 26**, at the start of a line
    "answer_label": r"^[ \t>#*_-]*" + _BOLD + r"[ \t]*answer[ \t]*" + _BOLD + r"[ \t]*[:：][ \t]*",
}  # fmt: skip
# The specification: every marker, leftmost first, as one scan. `marker_matches` finds the same matches faster.
MARKERS = re.compile(
    "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _MARKER_PATTERNS.items()), re.IGNORECASE | re.MULTILINE
)
_ONE_MARKER = {kind: re.compile(pattern, re.IGNORECASE | re.MULTILINE) for kind, pattern in _MARKER_PATTERNS.items()}
_ORDER = {kind: i for i, kind in enumerate(_MARKER_PATTERNS)}
# What may stand before "answer" in an answer_is marker: "the ", "the correct ", "right ".
_BEFORE_ANSWER = re.compile(r"(?:\bthe[ \t]+)?(?:\b(?:correct|right)[ \t]+)?$")


class _Marker(NamedTuple):
    kind: str
    start: int
    end: int


def marker_matches(text: str) -> list[_Marker]:
    """The matches of MARKERS in the text, found from the words every marker holds ("final", "answer", "####")
    with str.find rather than by trying the whole pattern at every character of a long reasoning."""
    lower = text.lower()
    if len(lower) != len(text):  # a character whose lower case is longer: positions would not line up
        return [_Marker(m.lastgroup or "", m.start(), m.end()) for m in MARKERS.finditer(text)]
    tried: list[_Marker] = []
    for word in ("final", "answer", "####"):
        at = lower.find(word)
        while at != -1:
            line_start = text.rfind("\n", 0, at) + 1
            if word == "final":
                starts = [("final", at)]
            elif word == "####":
                starts = [("hashes", line_start), ("hashes", at)]
            else:
                before = _BEFORE_ANSWER.search(lower, max(line_start, at - 40), at)
                prefixed = before.start() if before else at
                starts = [("answer_is", prefixed), ("answer_is", at), ("answer_label", line_start)]
            for kind, start in starts:
                m = _ONE_MARKER[kind].match(text, start)
                if m is not None and m.end() > at:
                    tried.append(_Marker(kind, start, m.end()))
                    break
            at = lower.find(word, at + 1)
    tried.sort(key=lambda m: (m.start, _ORDER[m.kind]))
    kept: list[_Marker] = []
    for m in tried:
        if not kept or m.start >= kept[-1].end:
            kept.append(m)
    return kept


# Where a value stated in running text ends: a sentence's full stop (not a decimal point), a semicolon, or the
# reason that follows it ("18 because ...").
_VALUE_END = re.compile(
    r"\.(?=\s|$|[\"'”’)\]])|;|,?[ \t]+(?:because|since|as|which|so|given|for|when|where|if)\b"
    r"|,[ \t]+(?:and|but|so|thus)\b|,[ \t]+(?:not|rather[ \t]+than)\b",
    re.IGNORECASE,
)
# Placeholders of a format instruction: "\boxed{}", "\boxed{answer}", "Final answer: <your answer>".
# A condition after a value: with another value later on the line, the statement gives answers under conditions.
_CONDITION = re.compile(r",?[ \t]+(?:if|when|given|unless|assuming|provided)\b", re.IGNORECASE)
_PLACEHOLDERS = frozenset(
    {"", "answer", "your answer", "final answer", "the answer", "your final answer", "ans", "...", "\\ldots",
     "\\dots", "…", "<answer>", "[answer]", "{answer}", "(answer)", "your_answer", "number",
     "your answer here", "answer here", "value", "result", "?"}
)  # fmt: skip
# "e.g. \boxed{42}", "for example, FINAL: 7", "in the form \boxed{42}": an example of the format, not an answer.
_EXAMPLE_BEFORE = re.compile(
    r"(?:\be\.\s?g\.|\bfor[ \t]+(?:example|instance)|\bsuch[ \t]+as|\bsomething[ \t]+like|\bformat(?:ted)?(?:[ \t]+as)?"
    r"|\bin[ \t]+the[ \t]+form(?:[ \t]+of)?)[ \t,:(\"'`$]*$",
    re.IGNORECASE,
)
# Taken back in the same or the next sentence: "\boxed{12}, but that is wrong", "FINAL: 7. Wait, that's not right".
_TAKEN_BACK = re.compile(
    r"^[\s\S]{0,80}?\b(?:(?:that|this|it)(?:'s|’s|[ \t]+is|[ \t]+was)[ \t]+(?:wrong|incorrect|not[ \t]+(?:right|correct"
    r"|the[ \t]+(?:final[ \t]+|correct[ \t]+|right[ \t]+)?answer))\b|wait,?[ \t]+no\b"
    r"|\bis[ \t]+(?:the[ \t]+|a[ \t]+)?(?:wrong|incorrect)\b"
    r"|\bactually,?[ \t]+(?:i[ \t]+think[ \t]+)?(?:it(?:'s|’s|[ \t]+is)|the[ \t]+answer[ \t]+is)[ \t]+"
    r"(?!correct\b|right\b)"
    r"|\b(?:that|this|it)[ \t]+(?:isn't|isn’t|wasn't|wasn’t)[ \t]+(?:quite[ \t]+)?(?:right|correct)\b"
    r"|\bnot[ \t]+quite[ \t]+(?:right|correct)\b|\b(?:oops|whoops|scratch[ \t]+that)\b|\bno,?[ \t]+wait\b"
    r"|\bi[ \t]+(?:made[ \t]+(?:a|an)[ \t]+(?:mistake|error)|forgot)\b|\bmy[ \t]+mistake\b|\bcorrection[ \t]*:"
    r"|\bon[ \t]+re-?checking\b|\blet[ \t]+me[ \t]+correct\b|\bhold[ \t]+on\b)",
    re.IGNORECASE,
)
# The next paragraph opening by taking the statement back: "\boxed{19}\n\nWait, that's not right. …".
_TAKEN_BACK_NEXT = re.compile(
    r"^\s*(?:\*\*)?(?:wait|hmm|oops|whoops|correction|actually|no|on[ \t]+re-?checking|scratch[ \t]+that|i[ \t]+made"
    r"|i[ \t]+forgot|let[ \t]+me[ \t]+correct)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.^_])-?\$?\d[\d,]*(?:\.\d+)?(?![\d\w])")
# A last line that denies or bounds its number states no value to salvage: "Not 5", "x > 5", "at most 5".
_NOT_A_VALUE = re.compile(
    r"\bnot\b|n't\b|\bcannot\b|\bnever\b|\\neq?\b|≠|[<>≤≥]|\\[lg]eq?\b|\bexceed"
    r"|\bat[ \t]+(?:least|most)\b|\b(?:more|less|fewer)[ \t]+than\b",
    re.IGNORECASE,
)


# Typography read as the plain character it stands for (rule M4's `typography`), one character for one, so that
# every span found in the scanned text is the same span of the raw field: "Final\u00a0answer:", "hip\u2011hop".
_SCAN = str.maketrans(
    {"\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2007": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ",
     "\u2005": " ", "\u2006": " ", "\u2008": " ", "\u200a": " ", "\u2010": "-", "\u2011": "-"}
)  # fmt: skip


# GSM8K's calculator annotations, "$<<9*2=18>>18": the tool's working, not the model's words, read as blanks.
_CALCULATOR = re.compile(r"<<[^<>\n]{0,200}>>")


def scanned(pieces: list[Piece]) -> list[Piece]:
    """The pieces with their typography read plainly and calculator annotations blanked (same lengths, same
    offsets)."""
    return [
        Piece(p.field, p.offset, _CALCULATOR.sub(lambda m: " " * len(m.group(0)), p.text.translate(_SCAN)))
        for p in pieces
    ]


def find_statements(pieces: list[Piece], region: Field, prompt: str | None) -> list[MathCandidate]:
    """Every statement in the pieces of one region, in reading order within each piece."""
    raw = {(p.field, p.offset): p.text for p in pieces}
    pieces = scanned(pieces)
    found: list[MathCandidate] = []
    for piece in pieces:
        boxes = _boxes(piece, region)
        found.extend(boxes)
        found.extend(_markers(piece, region, boxes))
        found.extend(_json_answers(piece, region, boxes))
    if (label := _last_line_label(pieces, region, found)) is not None:
        found.append(label)
    if (result := _result_line(pieces, region, found)) is not None:
        found.append(result)
    for c in found:  # the statement as written, in the raw field's own characters
        offset, text = next((o, t) for (f, o), t in raw.items() if f == c.field and o <= c.start <= o + len(t))
        c.text = text[c.start - offset : c.end - offset]
    found.sort(key=lambda c: (c.field != "reasoning", c.start) if region == "reasoning" else (0, c.start))
    for c in found:
        _mark_examples(c, pieces, prompt)
    return found


def last_number(pieces: list[Piece], region: Field, statements: list[MathCandidate]) -> MathCandidate | None:
    """The weak salvage (rule M7): the one number of the region's last non-empty line, when it holds one only.
    Numbers inside statements (examples, statements taken back) are not there to salvage."""
    for piece in reversed(scanned(pieces)):
        stripped = piece.text.rstrip()
        if not stripped:
            continue
        line_start = stripped.rfind("\n") + 1
        line = stripped[line_start:]
        if len(line) > 300 or "?" in line or _NOT_A_VALUE.search(line) or _HEDGES.search(_ASIDES.sub(" ", line)):
            return None  # asked, denied, bounded or hedged ("Roughly 12 litres are lost.")
        numbers = list(_NUMBER.finditer(line))
        if len(numbers) != 1:
            return None
        m = numbers[0]
        start = piece.offset + line_start + m.start()
        if any(c.field == piece.field and c.start <= start < c.end for c in statements):
            return None
        return _candidate("last_number", region, piece.field, start, start + len(m.group(0)), m.group(0), m.group(0))
    return None


# "A: 18" as GSM8K's few-shot solutions end: a capital A and a colon opening the region's last non-empty line.
# Only there: elsewhere "A: ..." is as often an option, a speaker or a list item as an answer.
_A_LABEL = re.compile(r"[ \t>*_-]*(?:\*\*)?A(?:\*\*)?[ \t]*[:：](?:\*\*)?[ \t]*(?=\S)")


def _last_line_label(pieces: list[Piece], region: Field, found: list[MathCandidate]) -> MathCandidate | None:
    """An `answer_label` statement for "A: N" on the last non-empty line of the region (rule M2)."""
    for piece in reversed(pieces):
        stripped = piece.text.rstrip()
        if not stripped:
            continue
        line_start = stripped.rfind("\n") + 1
        m = _A_LABEL.match(stripped, line_start)
        if m is None:
            return None
        start = piece.offset + line_start
        if any(c.field == piece.field and c.start <= start < c.end for c in found):
            return None  # already inside a statement ("A: \boxed{18}" is the box's)
        value_start, value_end = _value_span(stripped, m.end(), "answer_label")
        value = stripped[value_start:value_end]
        if not value.strip() or _BOX.search(value):
            return None
        end = piece.offset + value_end
        return _candidate("answer_label", region, piece.field, start, end, stripped[line_start:value_end], value)
    return None


def _boxes(piece: Piece, region: Field) -> list[MathCandidate]:
    text = piece.text
    found: list[MathCandidate] = []
    covered = -1
    pairs = brace_pairs(text) if "\\boxed" in text or "\\fbox" in text else {}
    for m in _BOX.finditer(text):
        if m.start() < covered:
            continue  # a box inside a box: the outer one states it
        close = _matching_brace(text, m.end() - 1, pairs)
        if close is None:
            continue  # never closed (a truncated output): states nothing
        covered = close + 1
        found.append(
            _candidate("boxed", region, piece.field, piece.offset + m.start(), piece.offset + close + 1,
                       text[m.start() : close + 1], text[m.end() : close])
        )  # fmt: skip
    for m in _BOX_SPACE.finditer(text):
        if not any(c.start <= piece.offset + m.start() < c.end for c in found):
            found.append(
                _candidate("boxed", region, piece.field, piece.offset + m.start(), piece.offset + m.end(),
                           m.group(0), m.group(1))
            )  # fmt: skip
    found.sort(key=lambda c: c.start)
    return _box_lists(found, piece)


# Between the boxes of one list: "\boxed{2}, \boxed{3} and \boxed{5}", "$\boxed{2}$, $\boxed{3}$".
_LIST_GLUE = re.compile(r"^[ \t$]*(?:,|;|\band\b|,[ \t]*and\b|\\text\{[ \t]*(?:,|and)[ \t]*\})?[ \t$]*$")
_OR_GLUE = re.compile(r"^[ \t$]*,?[ \t]*(?:\bor\b|\\text\{[ \t]*or[ \t]*\})[ \t$]*$")


def _box_lists(boxes: list[MathCandidate], piece: Piece) -> list[MathCandidate]:
    """Boxes joined by commas or "and" on one line state one list ("\boxed{2}, \boxed{3}" states "2, 3"), not
    answers that conflict."""
    merged: list[MathCandidate] = []
    for box in boxes:
        last = merged[-1] if merged else None
        glue = piece.text[last.end - piece.offset : box.start - piece.offset] if last is not None else None
        alternatives = glue is not None and _OR_GLUE.match(glue) is not None
        if last is None or glue is None or not glue.strip() or not (_LIST_GLUE.match(glue) or alternatives):
            merged.append(box)
            continue
        text = piece.text[last.start - piece.offset : box.end - piece.offset]
        # "\boxed{24} or \boxed{19}" offers two answers: stated as both, it equals no single gold.
        value = f"{last.value} or {box.value}" if alternatives else f"{last.value}, {box.value}"
        joined = _candidate("boxed", last.region, last.field, last.start, box.end, text, value)
        note = "box_alternatives" if alternatives else "box_list"
        joined.reading = [*dict.fromkeys([*last.reading, *box.reading, note])]
        merged[-1] = joined
    return merged


# The longest box read, in characters: no answer is longer.
BOX_LIMIT = 4000


def _matching_brace(text: str, open_at: int, pairs: dict[int, int] | None = None) -> int | None:
    """Where the brace opened at `open_at` closes, within BOX_LIMIT characters."""
    close = (pairs if pairs is not None else brace_pairs(text)).get(open_at)
    return close if close is not None and close - open_at <= BOX_LIMIT else None


def _markers(piece: Piece, region: Field, boxes: list[MathCandidate]) -> list[MathCandidate]:
    text = piece.text
    found: list[MathCandidate] = []
    box_starts = [b.start for b in boxes]  # in order
    for m in marker_matches(text):
        kind = m.kind
        value_start, value_end = _value_span(text, m.end, kind)
        value = text[value_start:value_end]
        start, end = piece.offset + m.start, piece.offset + value_end
        # A box after the marker ("Final answer: \boxed{18}") is stated by the box, the stronger kind.
        first = bisect.bisect_left(box_starts, start)
        inner = boxes[first : bisect.bisect_left(box_starts, end, first)]
        if inner:
            for b in inner:
                if "box_after_marker" not in b.reading:
                    b.reading.append("box_after_marker")
            continue
        if not value.strip() or _BOX.search(value):
            continue  # nothing stated, or a box never closed (a truncated output): it states nothing
        if value.rstrip().endswith("?") or _ASKED.match(text, value_end):
            continue  # "So the answer is 19?": asked, not stated
        found.append(_candidate(kind, region, piece.field, start, end, text[m.start : value_end], value))  # type: ignore[arg-type]
    return found


# {"reasoning": "…", "answer": "5"}: the answer field of a JSON reply, as a prompt that asks for JSON gets it.
_JSON_ANSWER = re.compile(
    r'"(?:final_answer|answer)"[ \t]*:[ \t]*(?:"(?P<string>(?:[^"\\\n]|\\.){0,2000})"|(?P<number>-?\d[\d.,]*))'
)


def _json_answers(piece: Piece, region: Field, boxes: list[MathCandidate]) -> list[MathCandidate]:
    """An `answer_label` statement for each "answer" field of JSON in the text (reading `json_field`), its string
    read as JSON reads it ("\\\\frac{1}{2}" states \\frac{1}{2}); a box inside it is the box's statement."""
    found = []
    if '"answer"' not in piece.text and '"final_answer"' not in piece.text:
        return found
    for m in _JSON_ANSWER.finditer(piece.text):
        group = "string" if m.group("string") is not None else "number"
        start, end = piece.offset + m.start(), piece.offset + m.end()
        if any(start <= b.start < end for b in boxes):
            continue
        raw = m.group(group)
        try:
            value = json.loads(f'"{raw}"') if group == "string" else raw
        except ValueError:
            value = raw  # a backslash JSON does not allow ("\frac" written once): the text as it stands
        if not value.strip():
            continue
        candidate = _candidate("answer_label", region, piece.field, start, end, m.group(0), value)
        candidate.reading.insert(0, "json_field")
        found.append(candidate)
    return found


# A question mark right after a statement ("… is $\boxed{19}$?", "the answer is 19 ?").
_ASKED = re.compile(r"[ \t$*_)\\]{0,6}\?")


_NEXT_LINE = re.compile(r"\n[ \t]*(\S[^\n]*)")


def _value_span(text: str, at: int, kind: str) -> tuple[int, int]:
    """The value after a marker: the rest of its line; a heading's value is on the next non-empty line (a
    display block \\[ … \\] or $$ … $$ whole). Running text ends at the sentence's end."""
    line_end = text.find("\n", at)
    line_end = len(text) if line_end == -1 else line_end
    start = at
    while start < line_end and text[start] in " \t":
        start += 1
    if start == line_end and kind in ("final", "answer_label"):
        # "**Final Answer**" alone on its line: the next non-empty line holds the value.
        m = _NEXT_LINE.search(text, line_end)
        if m is None or m.start() > line_end + 3:
            return start, start
        start = m.start(1)
        line_end = m.end(1)
        for opener, closer in (("\\[", "\\]"), ("$$", "$$")):
            if text.startswith(opener, start) and closer not in text[start + 2 : line_end]:
                close = text.find(closer, start + 2)
                if close != -1 and close - start < 2000:
                    return start, close + len(closer)
        return start, line_end
    end = line_end
    cut = _VALUE_END.search(text, start, end)
    for opener, closer in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opener, start):
            close = text.find(closer, start + len(opener), line_end)
            while close > 0 and closer == "$" and text[close - 1] == "\\":
                close = text.find(closer, close + 1, line_end)  # \$ is a dollar sign, not the closer
            # "$26.00 because both cost $13": a dollar sign, not math, when the sentence ends before the next $.
            if close != -1 and (opener != "$" or cut is None or close < cut.start()):
                return start, close + len(closer)
            break
    if cut is not None:
        if _CONDITION.match(text, cut.start()) and re.search(r"\d", text[cut.end() : line_end]):
            return start, start  # "28 if no one sits on a lap, and 40 otherwise": two answers under conditions
        end = cut.start()
    return start, end


def _lone_dollar(value: str) -> str:
    """A math delimiter left alone by a cut ("**Answer: $\\frac{3}{4}**"): the one unescaped $, at either end, when
    it is no dollar sign before a number."""
    dollars = [i for i, ch in enumerate(value) if ch == "$" and (i == 0 or value[i - 1] != "\\")]
    if len(dollars) != 1:
        return value
    if dollars[0] == 0 and not re.match(r"\$[ \t]*[-\d.]", value):
        return value[1:].strip()
    if dollars[0] == len(value) - 1 and dollars[0] > 0:
        return value[:-1].strip()
    return value


def strip_statement(value: str) -> tuple[str, list[str]]:
    """The answer a statement states (rule M3): without markdown bold, end punctuation, wrapping math delimiters
    or box, and a single-name assignment ("x = 5" states 5). Returns it and the reading notes applied."""
    notes: list[str] = []
    while True:
        before = value
        value = value.strip()
        inner = _bold_value(value)
        if inner is not None:
            value = inner
            _note(notes, "bold_value")
        number = _sentence_number(value)
        if number is not None:
            value = number
            _note(notes, "sentence_number")
        unmarked = re.sub(r"^#{4}[ \t]*(?=\S)", "", value)
        if unmarked != value:  # "### Final Answer:" then "#### 18": the GSM8K marker inside the value
            value = unmarked
            _note(notes, "hashes")
        angled = re.fullmatch(r"<[ \t]*([^<>\s][^<>]*?)[ \t]*>", value)
        if angled is not None:  # "#### <48>": the brackets of a format's "<answer>" kept around the value
            value = angled.group(1)
            _note(notes, "angle_brackets")
        unbolded = re.sub(r"^(?:\*\*|__|\*)+|(?:\*\*|__|\*)+$", "", value).strip()
        if unbolded != value:
            value = unbolded
            _note(notes, "bold")
        # "!" after a digit or a closing bracket is a factorial (5! = 120), not an exclamation.
        unpunctuated = re.sub(r"(?<!\\)(?:[.,;:]|(?<![\d})\]])!)+$", "", value).strip()
        if unpunctuated != value:
            value = unpunctuated
            _note(notes, "punctuation")
        undelimited = _lone_dollar(strip_delimiters(value))
        if undelimited != value:
            value = undelimited
            _note(notes, "delimiters")
        m = _BOX.match(value)
        if m and _matching_brace(value, m.end() - 1) == len(value) - 1:
            value = value[m.end() : -1]
            _note(notes, "box")
        assigned = assignment_value(value)
        if assigned is not None:
            value = assigned
            _note(notes, "assignment")
        if value == before:
            return value, notes


_INNER_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*|(?<![\w_])__([^_\n]+?)__(?![\w_])")


def _bold_value(value: str) -> str | None:
    """The bold value inside a statement's words ("Each bus carries **48 pupils** on both trips" states
    "48 pupils"): the bold spans that hold a number, all stating the same text, and no number outside them."""
    spans = [m for m in _INNER_BOLD.finditer(value) if re.search(r"\d", m.group(1) or m.group(2))]
    if not spans or (spans[0].start() == 0 and spans[-1].end() == len(value)):
        return None  # no bold number, or bold around all of it (the unbolding below takes that)
    outside = _INNER_BOLD.sub(" ", value)
    inners = {(m.group(1) or m.group(2)).strip() for m in spans}
    if re.search(r"\d", outside) or len(inners) != 1 or _hedged_words(outside):
        return None  # "not **19**", "about **19**", "at least **19**": the words outside change the value
    return inners.pop()


# Words that make a value something else or one of several: the value words, denials and bounds, hedges.
_HEDGES = re.compile(
    r"\b(?:either|or|if|unless|assuming|provided|otherwise|likely|probably|maybe|perhaps|possibly|approx"
    r"|approximately|about|roughly|around|nearly|almost|estimated?)\b|~|≈|\\approx|\\sim",
    re.IGNORECASE,
)


def _hedged_words(text: str) -> bool:
    """Whether words around a value change it, deny or bound it, or hedge it ("about", "not", "at least", "or")."""
    return (
        _HEDGES.search(text) is not None
        or _NOT_A_VALUE.search(text) is not None
        or any(w.lower() in VALUE_WORDS and w.lower() not in PHRASE_WORDS for w in re.findall(r"[A-Za-z]+", text))
    )


# A value that is a sentence about one number: "She has 19 pencils left." (as a marker's value, or a JSON answer).
_SENTENCE_NUMBER = re.compile(r"(?<![\w.^_{\\])-?\$?\d[\d,]*(?:\.\d+)?(?![\d\w])")
_MATH_IN_SENTENCE = re.compile(r"[=<>+*/^×÷\\{}]|\s-\s")


def _sentence_number(value: str) -> str | None:
    """The number a one-number sentence states, with the words after it (its unit phrase, which normalisation reads
    or keeps): "She has 19 pencils left" states "19 pencils left". None when the value is no such sentence: it
    opens with its number, holds more than one, holds math, or words before the number change or hedge it."""
    numbers = list(_SENTENCE_NUMBER.finditer(value))
    if len(numbers) != 1 or _MATH_IN_SENTENCE.search(value):
        return None
    before = value[: numbers[0].start()]
    if not re.search(r"[A-Za-z]{2}", before) or _hedged_words(before):
        return None
    return value[numbers[0].start() :]


def _note(notes: list[str], note: str) -> None:
    if note not in notes:
        notes.append(note)


def _candidate(
    kind: MathKind, region: Field, field: Field, start: int, end: int, text: str, value: str
) -> MathCandidate:
    stated, notes = strip_statement(value)
    normalised, _ = normalise(stated)
    return MathCandidate(
        kind=kind,
        method=kind,
        region=region,
        field=field,
        start=start,
        end=end,
        text=text,
        value=stated,
        normalised=normalised,
        reading=notes,
    )


def _mark_examples(c: MathCandidate, pieces: list[Piece], prompt: str | None) -> None:
    piece = next(p for p in pieces if p.field == c.field and p.offset <= c.start <= p.offset + len(p.text))
    local = c.start - piece.offset
    before = piece.text[max(0, local - 40) : local]
    plain = re.sub(r"\\text\{([^{}]*)\}", r"\1", c.value).strip().lower()
    if plain in _PLACEHOLDERS or re.fullmatch(r"[_.…\s]+|<[^<>]*>|\[[a-z ]*\]", plain):
        c.example = True
        c.reading.append("placeholder")
    elif _EXAMPLE_BEFORE.search(before):
        c.example = True
        c.reading.append("format_example")
    elif prompt and c.text in prompt and (before[-20:] + c.text) in prompt and before[-20:].strip():
        # The prompt's own words echoed with the statement ("Put your final answer within \boxed{...}").
        c.example = True
        c.reading.append("prompt_echo")
    if not c.example and _ASKED.match(piece.text, local + len(c.text)):
        c.example = True  # "So is the answer $\boxed{19}$?": asked, not stated
        c.reading.append("asked")
    after, _, next_paragraph = piece.text[local + len(c.text) : local + len(c.text) + 300].partition("\n\n")
    after = after[:200]
    opening = next_paragraph[:120]
    if _TAKEN_BACK.search(after) or (_TAKEN_BACK_NEXT.match(opening) and _TAKEN_BACK.search(opening)):
        c.withdrawn = True
        c.reading.append("withdrawn")


# ---- the result on the last line (rule M2e) --------------------------------------------------------------------

# Math spans of a line: \( … \), \[ … \], $$ … $$, $ … $ (a $ before a digit and a space-free run is money:
# "$12 + $30" holds no math span).
_MATH_SPAN = re.compile(
    r"\\\((?P<a>.*?)\\\)|\\\[(?P<b>.*?)\\\]|\$\$(?P<c>.*?)\$\$|(?<![\\$])\$(?!\s*\d)(?P<d>[^$\n]+?)(?<!\\)\$", re.DOTALL
)
_BOLD_SPAN = re.compile(r"\*\*(?P<inner>[^*\n]+?)\*\*|(?<![\w_])__(?P<inner2>[^_\n]+?)__(?![\w_])")
# The value after the last equals sign of prose working: a number, perhaps money, bold, a percent or a fraction.
_PROSE_RESULT = re.compile(
    r"[ \t]*(?:\*\*|__)?[ \t]*(?:\\?\$)?[ \t]*(?P<value>-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)|\\[dt]?frac\{\d+\}\{\d+\})"
    r"(?:[ \t]*(?:\\?%))?(?:\*\*|__)?"
)
# Another number after the result, outside brackets ("= 42 dollars, and she keeps 8"): the line states two values.
# An aside in brackets is no second value ("**72 litres** (about 19 gallons)").
_NUMBER_AFTER = re.compile(r"(?:[^\d(\n]|\([^()\n]*\))*\d")
_CHAIN_GOES_ON = re.compile(r"[ \t]*(?:[-+*/×÷^·]|\\(?:times|cdot|div))[ \t]*[\d(\\$]")
# The longest last line read: a result is stated in one sentence or a short paragraph, not a page.
_RESULT_LINE_LIMIT = 600
# Decoration after the answer: a markdown rule, an empty bold.
_DECORATION = re.compile(r"^[ \t]*(?:[-*_=]{3,}|\*\*\s*\*\*)[ \t]*$")


def _result_line(pieces: list[Piece], region: Field, found: list[MathCandidate]) -> MathCandidate | None:
    """A `result_line` statement (rule M2e): on the region's last non-empty line of prose (or its closing display
    block), the value after the last equals sign of working whose sides agree, or of a one-name assignment, else
    the one bold value; nothing when the line asks, denies or bounds (as M7), or is already a statement's."""
    line = _last_line(pieces)
    if line is None:
        return None
    piece, start, text = line
    asked = text.rfind("?")
    if asked != -1:  # "Does she keep any? Yes: 24 − 5 = 19 pencils.": the answer follows the question
        start, text = start + asked + 1, text[asked + 1 :]
    prose = _ASIDES.sub(" ", _without_math(text))
    if len(text) > _RESULT_LINE_LIMIT or not text.strip() or _NOT_A_VALUE.search(prose) or _HEDGES.search(prose):
        return None  # asked, denied, bounded or hedged: "either **19** or 18", "if she works every day, **72**"
    at = piece.offset + start
    if any(c.field == piece.field and c.end > at and c.start < at + len(text) for c in found):
        return None  # the line holds a statement already ("The answer is 45 + 52 = 97."): that one decides
    picked = _chain_result(text) or _bold_result(text)
    if picked is None:
        return None
    value_start, value_end, reading = picked
    candidate = _candidate(
        "result_line", region, piece.field, at, at + value_end, text[:value_end], text[value_start:value_end]
    )
    candidate.reading.insert(0, reading)
    return candidate


def _last_line(pieces: list[Piece]) -> tuple[Piece, int, str] | None:
    """The last non-empty line of the region (decoration skipped), or the display block it closes."""
    for piece in reversed(pieces):
        stripped = piece.text.rstrip()
        while stripped:
            line_start = stripped.rfind("\n") + 1
            line = stripped[line_start:]
            if _DECORATION.match(line):
                stripped = stripped[:line_start].rstrip()
                continue
            closing = line.strip()
            if closing in ("\\]", "$$"):
                opener = "\\[" if closing == "\\]" else "$$"
                begin = stripped.rfind(opener, 0, line_start)
                if begin == -1:
                    return None
                line_start = stripped.rfind("\n", 0, begin) + 1
                return piece, line_start, stripped[line_start:]
            return piece, line_start, line
    return None


_ASIDES = re.compile(r"\([^()\n]*\)")


def _without_math(text: str) -> str:
    return _MATH_SPAN.sub(" ", text)


def _chain_result(text: str) -> tuple[int, int, str] | None:
    """The value at the end of the line's last equation: in math, what the assignment rule gives (its sides of
    numbers agreeing, or one name); in prose, the number after the last "=" when the working before it equals it."""
    last_equals = text.rfind("=")
    if last_equals == -1:
        return None
    spans = list(_MATH_SPAN.finditer(text))
    for m in spans:
        if m.start() < last_equals < m.end():
            if sum("=" in span.group(0) for span in spans) > 1 or _NUMBER_AFTER.match(text, m.end()):
                return None  # "$x = 2$ or $x = 3$", "… = 312\) tiles, 12 of them broken": which is the result?
            inner = next(n for n in "abcd" if m.group(n) is not None)
            _, reading = strip_statement(text[m.start(inner) : m.end(inner)])
            if "assignment" not in reading:
                return None  # an equation, or working whose sides disagree
            return m.start(inner), m.end(inner), "chain_result"
    result = _PROSE_RESULT.match(text, last_equals + 1)
    if result is None or _CHAIN_GOES_ON.match(text, result.end()):
        return None
    emphasised = "**" in result.group(0) or "__" in result.group(0)
    if not emphasised and _NUMBER_AFTER.match(text, result.end()):
        return None  # "= 42 dollars, and she keeps 8"; in bold the result says it is one: "= **$64** for the 16"
    previous = text.rfind("=", 0, last_equals)
    working = _working_suffix(text[previous + 1 : last_equals])
    exact = evaluate(result.group("value"))
    if working is None or exact is None or not rounds_to(working, result.group("value")):
        return None
    return result.start(), result.end(), "chain_result"


_WORKING_START = re.compile(r"(?<![\w.,])(?=[(\\$]|-?\d)")


def _working_suffix(side: str) -> Fraction | None:
    """The value of the arithmetic the side ends with, after its words: "Adding the three weeks: 45 + 52 + 61"
    is worth 158; "So 2x" and "the total" are no arithmetic."""
    for m in _WORKING_START.finditer(side):
        worth = evaluate(side[m.start() :])
        if worth is not None:
            return worth
    return None


def _bold_result(text: str) -> tuple[int, int, str] | None:
    """The line's bold value that holds a number, when there is one, or when all such state one value; a bold
    label ("**Step 3:**") is no value."""
    spans = []
    for m in _BOLD_SPAN.finditer(text):
        inner = (m.group("inner") or m.group("inner2") or "").strip()
        if re.search(r"\d", inner) and not inner.endswith((":", "：")):
            spans.append(m)
    if not spans:
        return None
    values = {normalise(strip_statement(m.group(0))[0])[0] for m in spans}
    if len(values) != 1 or re.search(r"\d", _ASIDES.sub(" ", _BOLD_SPAN.sub(" ", text))):
        return None  # "**5** boys and **7** girls", "Reading 2: **19**": which number is the answer is not said
    last = spans[-1]
    return last.start(), last.end(), "bold_result"
