"""Find the answer statements of a region (docs/scoring/math.md, math rules M2 and M3): boxes, "FINAL:" / "Final
answer:", "#### N", "The answer is ...", answer labels. Each becomes a MathCandidate with its span in the raw
field, the value it states, and the reading notes that shaped it, whether or not it ends up deciding."""

from __future__ import annotations

import bisect
import json
import re
from typing import NamedTuple

from ocllm.scoring.math.box_lists import box_lists, every_value_asked
from ocllm.scoring.math.braces import brace_pairs
from ocllm.scoring.math.decision import MathCandidate
from ocllm.scoring.math.result_line import result_line
from ocllm.scoring.math.stated import ASIDES, BOX, HEDGES, NOT_A_VALUE, make_candidate, matching_brace
from ocllm.scoring.regions import Field, Piece

# Strength of each kind, strongest first: the strongest kind present decides (rule M2).
RANK: dict[str, int] = {
    "boxed": 1, "final": 2, "hashes": 3, "answer_is": 4, "answer_label": 5, "result_line": 6, "last_number": 9
}  # fmt: skip


def rank(c: MathCandidate) -> int:
    """A statement's strength (rule M2). The answer field of a JSON reply that closes the answer (nothing stated after
    it) is the slot the prompt asked the answer in, as strong as a "Final answer:": "The answer is $42" in the working
    before a corrected {"answer": "26"} does not outrank it. A JSON field followed by prose ("{"answer": 24} … so the
    answer is 26") keeps the rank of an "Answer:" label."""
    return RANK["final"] if c.kind == "answer_label" and "closes_reply" in c.reading else RANK[c.kind]

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
        line_start, looked = 0, 0  # the line start of the last place, found from there on: one line, one scan
        while at != -1:
            newline = text.rfind("\n", looked, at)
            line_start = newline + 1 if newline != -1 else line_start
            looked = at
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
    for marker in tried:
        if not kept or marker.start >= kept[-1].end:
            kept.append(marker)
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


# The bound on what one region is read for (docs/scoring/math.md, rule M2, "the bound on statements"): every
# statement begins at, or holds, one of these, so their count bounds the statements a region yields and the work
# of finding them (about 40 µs of CPU each). str.count finds them in C, so a region past the bound is refused
# after one linear pass and no more. The largest count in the dev set (tests/data/answers/math) is 49; a model
# looping "\\boxed{42}" until a 32,768-token limit writes about 6,500.
MAX_STATEMENT_PLACES = 10_000
_PLACE_WORDS = ("final", "answer", "####")
_PLACE_COMMANDS = ("\\boxed", "\\fbox")


# The second bound (rule M2): the characters a region's markers and boxes span, their values included, read in
# all. Reading a statement's value (strip, normalise, examples) costs about 1 µs of CPU a character, so ten
# thousand statements of a thousand characters each would cost seconds where the count alone allowed them. The
# longest statement in the dev set spans 131 characters, the most a region's statements span 638.
MAX_STATED_CHARS = 100_000


class TooManyStatements(Exception):
    """A region past the bound on statements: it is not read further (the decision says so, rule M2)."""

    def __init__(self, read: int) -> None:
        super().__init__(read)
        self.read = read  # the characters its markers and boxes spanned when reading stopped


class _Budget:
    """The characters a region's statements have spanned so far, against MAX_STATED_CHARS."""

    def __init__(self) -> None:
        self.chars = 0

    def spend(self, chars: int) -> None:
        self.chars += chars
        if self.chars > MAX_STATED_CHARS:
            raise TooManyStatements(self.chars)


def statement_places(pieces: list[Piece]) -> int:
    """The places in the region's pieces where a statement may begin: "final", "answer" (either case, within a
    word too) and "####", `\\boxed` and `\\fbox`, each occurrence counted once (non-overlapping)."""
    count = 0
    for piece in pieces:
        lower = piece.text.lower()
        count += sum(lower.count(word) for word in _PLACE_WORDS)
        count += sum(piece.text.count(command) for command in _PLACE_COMMANDS)
    return count


def find_statements(
    pieces: list[Piece], region: Field, prompt: str | None, question: str | None = None
) -> list[MathCandidate]:
    """Every statement in the pieces of one region, in reading order within each piece (the question, when given,
    says what a concluding sentence counts: rule M2f). Raises TooManyStatements once the markers and boxes read
    span more than MAX_STATED_CHARS characters."""
    raw = {(p.field, p.offset): p.text for p in pieces}
    pieces = scanned(pieces)
    found: list[MathCandidate] = []
    budget = _Budget()
    every_value = every_value_asked(question)
    for piece in pieces:
        boxes = _boxes(piece, region, budget, every_value)
        found.extend(boxes)
        found.extend(_markers(piece, region, boxes, budget))
        found.extend(_json_answers(piece, region, boxes, budget))
    if (label := _last_line_label(pieces, region, found)) is not None:
        found.append(label)
    if (result := result_line(pieces, region, found, question)) is not None:
        found.append(result)
    raw_pieces = [Piece(f, o, t) for (f, o), t in raw.items()]
    at_raw, at_scanned = _PieceIndex(raw_pieces), _PieceIndex(pieces)
    for c in found:  # the statement as written, in the raw field's own characters
        piece = at_raw.holding(c)
        c.text = piece.text[c.start - piece.offset : c.end - piece.offset]
    found.sort(key=lambda c: (c.field != "reasoning", c.start) if region == "reasoning" else (0, c.start))
    for c in found:
        _mark_examples(c, at_scanned.holding(c), prompt)
    standing = [c for c in found if not (c.example or c.withdrawn)]
    if standing and "json_field" in standing[-1].reading:
        standing[-1].reading.append("closes_reply")  # nothing stated after it: the reply's answer (rank())
    return found


class _PieceIndex:
    """The piece a statement stands in, found by bisection: the first of the pieces, in their order, whose span
    (its end included) holds the statement's start. Searching every piece for every statement was quadratic in
    an answer of thousands of think blocks each followed by a box."""

    def __init__(self, pieces: list[Piece]) -> None:
        self.pieces = pieces
        self.by_field: dict[str, list[tuple[int, int]]] = {}  # field: (offset, index in pieces), by offset
        for i, p in enumerate(pieces):
            self.by_field.setdefault(p.field, []).append((p.offset, i))
        for spans in self.by_field.values():
            spans.sort()

    def holding(self, c: MathCandidate) -> Piece:
        spans = self.by_field[c.field]
        j = bisect.bisect_right(spans, (c.start, len(self.pieces))) - 1
        # Pieces before it may end exactly where it starts (or be empty there): the first in order is the one
        # meant. The pieces of a field do not overlap, so those that hold the start are the last few.
        holders = []
        while j >= 0 and self._holds(self.pieces[spans[j][1]], c.start):
            holders.append(spans[j][1])
            j -= 1
        return self.pieces[min(holders)]

    @staticmethod
    def _holds(p: Piece, at: int) -> bool:
        return p.offset <= at <= p.offset + len(p.text)


def last_number(pieces: list[Piece], region: Field, statements: list[MathCandidate]) -> MathCandidate | None:
    """The weak salvage (rule M7): the one number of the region's last non-empty line, when it holds one only.
    Numbers inside statements (examples, statements taken back) are not there to salvage."""
    for piece in reversed(scanned(pieces)):
        stripped = piece.text.rstrip()
        if not stripped:
            continue
        line_start = stripped.rfind("\n") + 1
        line = stripped[line_start:]
        if len(line) > 300 or "?" in line or NOT_A_VALUE.search(line) or HEDGES.search(ASIDES.sub(" ", line)):
            return None  # asked, denied, bounded or hedged ("Roughly 12 litres are lost.")
        numbers = list(_NUMBER.finditer(line))
        if len(numbers) != 1:
            return None
        m = numbers[0]
        start = piece.offset + line_start + m.start()
        if any(c.field == piece.field and c.start <= start < c.end for c in statements):
            return None
        end = start + len(m.group(0))
        return make_candidate("last_number", region, piece.field, start, end, m.group(0), m.group(0))
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
        if not value.strip() or BOX.search(value):
            return None
        end = piece.offset + value_end
        return make_candidate("answer_label", region, piece.field, start, end, stripped[line_start:value_end], value)
    return None


def _boxes(piece: Piece, region: Field, budget: _Budget, every_value: bool = False) -> list[MathCandidate]:
    text = piece.text
    found: list[MathCandidate] = []
    covered = -1
    pairs = brace_pairs(text) if "\\boxed" in text or "\\fbox" in text else {}
    for m in BOX.finditer(text):
        if m.start() < covered:
            continue  # a box inside a box: the outer one states it
        close = matching_brace(text, m.end() - 1, pairs)
        if close is None:
            continue  # never closed (a truncated output): states nothing
        budget.spend(close + 1 - m.start())
        covered = close + 1
        found.append(
            make_candidate("boxed", region, piece.field, piece.offset + m.start(), piece.offset + close + 1,
                       text[m.start() : close + 1], text[m.end() : close])
        )  # fmt: skip
    braced = [(c.start, c.end) for c in found]  # in order, and apart (a box inside a box is the outer one's)
    for m in _BOX_SPACE.finditer(text):
        # Inside a braced box? The last one opened before it, found by bisection: a linear scan of every box for
        # every "\\boxed 5" was quadratic.
        at = piece.offset + m.start()
        before = bisect.bisect_right(braced, (at, float("inf"))) - 1
        if before < 0 or not braced[before][0] <= at < braced[before][1]:
            budget.spend(m.end() - m.start())
            found.append(
                make_candidate("boxed", region, piece.field, piece.offset + m.start(), piece.offset + m.end(),
                           m.group(0), m.group(1))
            )  # fmt: skip
    found.sort(key=lambda c: c.start)
    return box_lists(found, piece, every_value)


def _markers(piece: Piece, region: Field, boxes: list[MathCandidate], budget: _Budget) -> list[MathCandidate]:
    text = piece.text
    found: list[MathCandidate] = []
    box_starts = [b.start for b in boxes]  # in order
    lines = _Lines(text)
    for m in marker_matches(text):
        kind = m.kind
        value_start, value_end = _value_span(text, m.end, kind, lines)
        # Counted whether or not it states anything: reading its value cost as much ("Final answer: \\boxed{…}").
        budget.spend(value_end - m.start)
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
        if not value.strip() or BOX.search(value):
            continue  # nothing stated, or a box never closed (a truncated output): it states nothing
        if lines.end(m.end) < value_start:  # the value stands on the next line
            marker = text[m.start : m.end]
            named_only = kind == "final" and not _SAYS_IT.search(marker)
            if named_only and not _HEADING_LEAD.fullmatch(_line_before(text, m.start)):
                continue  # "## Step 6: Write the final answer": a step that names the answer, not its heading
            if len(_PROSE_WORD.findall(value)) >= 3 and len(_NUMBER.findall(value)) > 1:
                continue  # "**Final Answer:**" then "First, 3 x 8 = 24 pencils …": the working below, not a value
        if value.rstrip().endswith("?") or _ASKED.match(text, value_end):
            continue  # "So the answer is 19?": asked, not stated
        found.append(make_candidate(kind, region, piece.field, start, end, text[m.start : value_end], value))  # type: ignore[arg-type]
    return found


# A marker that says the answer follows ("The final answer is:", "Final answer:"), whatever stands before it.
_SAYS_IT = re.compile(r"[:：]|\bis\b", re.IGNORECASE)
# A line of prose (three words of three letters or more, LaTeX commands aside): a heading's next line that is working.
_PROSE_WORD = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{3,}")
# What may stand before a "Final Answer" heading on its line: markup, a list or step number, "The".
_HEADING_LEAD = re.compile(
    r"[ \t>#*_\-.)\d]*(?:step[ \t]*\d+[ \t]*[:.)\-]?[ \t]*)?(?:the[ \t]+)?[ \t*_]*", re.IGNORECASE
)


def _line_before(text: str, at: int) -> str:
    return text[text.rfind("\n", 0, at) + 1 : at]


# {"reasoning": "…", "answer": "5"}: the answer field of a JSON reply, as a prompt that asks for JSON gets it.
_JSON_ANSWER = re.compile(
    r'"(?:final_answer|answer)"[ \t]*:[ \t]*(?:"(?P<string>(?:[^"\\\n]|\\.){0,2000})"|(?P<number>-?\d[\d.,]*))'
)


def _json_answers(piece: Piece, region: Field, boxes: list[MathCandidate], budget: _Budget) -> list[MathCandidate]:
    """An `answer_label` statement for each "answer" field of JSON in the text (reading `json_field`), its string
    read as JSON reads it ("\\\\frac{1}{2}" states \\frac{1}{2}); a box inside it is the box's statement."""
    found: list[MathCandidate] = []
    if '"answer"' not in piece.text and '"final_answer"' not in piece.text:
        return found
    box_starts = [b.start for b in boxes]  # in order
    for m in _JSON_ANSWER.finditer(piece.text):
        group = "string" if m.group("string") is not None else "number"
        start, end = piece.offset + m.start(), piece.offset + m.end()
        budget.spend(end - start)
        if bisect.bisect_left(box_starts, start) < bisect.bisect_left(box_starts, end):
            continue  # a box inside it: the box's statement
        raw = m.group(group)
        try:
            value = json.loads(f'"{raw}"') if group == "string" else raw
        except ValueError:
            value = raw  # a backslash JSON does not allow ("\frac" written once): the text as it stands
        if not value.strip():
            continue
        candidate = make_candidate("answer_label", region, piece.field, start, end, m.group(0), value)
        candidate.reading.insert(0, "json_field")
        found.append(candidate)
    return found


# A question mark right after a statement ("… is $\boxed{19}$?", "the answer is 19 ?").
_ASKED = re.compile(r"[ \t$*_)\\]{0,6}\?")


_NEXT_LINE = re.compile(r"\n[ \t]*(\S[^\n]*)")


class _Lines:
    """Where the next newline, closing delimiter or digit stands, for positions asked in increasing order (the
    markers of a piece): each answer is kept and reused until a position passes it, so that the markers of one
    line of megabytes cost one scan of it, not one each."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._next: dict[str, tuple[int, int]] = {}  # needle: (asked from, where it stands at or after, or -1)

    def next(self, needle: str, at: int) -> int:
        """text.find(needle, at), answered from the last answer when it still holds."""
        asked, found = self._next.get(needle, (-1, -1))
        if not (0 <= asked <= at and (found == -1 or at <= found)):
            if needle == "digit":
                m = _DIGIT.search(self.text, at)
                found = -1 if m is None else m.start()
            else:
                found = self.text.find(needle, at)
            self._next[needle] = (at, found)
        return found

    def end(self, at: int) -> int:
        found = self.next("\n", at)
        return len(self.text) if found == -1 else found

    def digit_before(self, at: int, end: int) -> bool:
        found = self.next("digit", at)
        return found != -1 and found < end

    def find(self, needle: str, at: int, end: int) -> int:
        found = self.next(needle, at)
        return found if found != -1 and found + len(needle) <= end else -1


_DIGIT = re.compile(r"\d")


def _value_span(text: str, at: int, kind: str, lines: _Lines | None = None) -> tuple[int, int]:
    """The value after a marker: the rest of its line; a heading's value is on the next non-empty line (a
    display block \\[ … \\] or $$ … $$ whole). Running text ends at the sentence's end."""
    lines = lines if lines is not None else _Lines(text)
    line_end = lines.end(at)
    start = at
    while start < line_end and text[start] in " \t":
        start += 1
    if kind in ("final", "answer_label") and not text[start:line_end].strip(" \t*_"):
        # "**Final Answer**" (or "**Final Answer:**") alone on its line: the next non-empty line holds the value.
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
            close = lines.find(closer, start + len(opener), line_end)
            while close > 0 and closer == "$" and text[close - 1] == "\\":
                close = lines.find(closer, close + 1, line_end)  # \$ is a dollar sign, not the closer
            # "$26.00 because both cost $13": a dollar sign, not math, when the sentence ends before the next $.
            if close != -1 and (opener != "$" or cut is None or close < cut.start()):
                return start, close + len(closer)
            break
    if cut is not None:
        if _CONDITION.match(text, cut.start()) and lines.digit_before(cut.end(), line_end):
            return start, start  # "28 if no one sits on a lap, and 40 otherwise": two answers under conditions
        end = cut.start()
    return start, end


# A marker whose value only opens what holds the answer ("The final answer is:" then a ```json block or a "{"), or
# ends the JSON string it stands in ("…the final answer is:\\n\","): the answer field inside decides, not the marker.
_OPENS_BLOCK = re.compile(r"`{3}[\w-]*|\{|(?:\\[nt]|[\s\\\",])+")


def _mark_examples(c: MathCandidate, piece: Piece, prompt: str | None) -> None:
    local = c.start - piece.offset
    before = piece.text[max(0, local - 40) : local]
    plain = re.sub(r"\\text\{([^{}]*)\}", r"\1", c.value).strip().lower()
    if c.kind != "boxed" and _OPENS_BLOCK.fullmatch(c.value.strip()):
        c.example = True
        c.reading.append("opens_block")
    elif plain in _PLACEHOLDERS or re.fullmatch(r"[_.…\s]+|<[^<>]*>|\[[a-z ]*\]", plain):
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
