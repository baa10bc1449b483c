"""Find every marker statement in a region: "FINAL:", "Final answer:", "The answer is", "\\boxed{" and
their kin, followed by a letter, a list of letters, or a value that is one option's text. Each becomes a
Candidate with its kind and its span in the raw field, whether or not it ends up deciding anything.
Option lines, option claims and bare letters live in option_lines.py."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from fractions import Fraction

from ocllm.scoring.mcq.candidates import Found, Region, TaskContext, hypothetical, json_answer_field, make_candidate
from ocllm.scoring.mcq.decision import Candidate, Kind
from ocllm.scoring.mcq.letters import (
    ENGLISH_WORD_LETTERS,
    LINE_WINDOW,
    OTHER_WORD_LETTERS,
    line_end,
    read_letters,
    skip_to_value,
)
from ocllm.scoring.mcq.option_letters import option_letter, option_letters
from ocllm.scoring.mcq.option_lines import LINE, OPTION_LINE
from ocllm.scoring.mcq.values import NUMBER, matching_options, normalize, value_key
from ocllm.scoring.regions import Piece

# By convention "(X)" is the placeholder of a format instruction ("The answer is (X)").
_CONVENTIONAL_PLACEHOLDERS = frozenset("X")

_WS = r"(?:\s|\\ |~)+"


def _words(*words: str) -> str:
    """Words of a marker, separated by any whitespace or LaTeX space ("The\\ answer\\ is")."""
    return _WS.join(words)


_COLON_OR_IS = r"(?:[ \t]*[*_]*[ \t]*:|" + _WS + r"(?:is|are)\b[ \t]*[*_]*[ \t]*:?)"
_HEADING_END = r"[ \t]*[*_#]*[ \t]*(?=\r?\n)"  # "**Final Answer**" alone on its line
_HEDGE = (
    r"(?:" + _words(r"(?:would|should|might|may|could|must)", "be")
    + r"|seems" + _WS + _words("to", "be")
    + r"|(?:is|seems)" + _WS + r"(?:most" + _WS + r")?(?:likely|probably|possibly|perhaps))\b[ \t]*:?"
)  # fmt: skip
_QUALIFIER = r"(?:correct|best|right|true)"
_MARKER_PATTERNS = {
    "final_colon": r"\bfinal[ \t]*[*_]*[ \t]*:",
    # Hedged: "the answer would be (A)", "the answer is likely C", "the most likely answer is C", "the
    # closest option is (G)", and "the false statement is D" (the answer to a "which is NOT" question,
    # but also a common aside). Tried before the firm kinds so that "answer is likely" is not read firm.
    "hedged": (
        r"\b(?:(?:" + _QUALIFIER + r"|final)" + _WS + r")?answer" + _WS + _HEDGE
        + r"|\b(?:most" + _WS + r")?(?:likely|probable)" + _WS + r"answer" + _COLON_OR_IS
        + r"|\bclosest" + _WS + r"(?:answer|option|choice|match)(?:es|s)?"
        + r"(?:[ \t]+(?:to|for)[^.:\n]{1,60}?)?" + _COLON_OR_IS
        + r"|\b(?:false|incorrect|untrue)" + _WS + r"(?:statement|option|choice)" + _COLON_OR_IS
    ),
    # "Final answer:", "The final answer is", "Final choice:", and a bold "**Final Answer**" heading on its
    # own line (the box or letter follows on the next lines).
    "final_answer": r"\bfinal" + _WS + r"(?:answer|choice|option)(?:" + _COLON_OR_IS + "|" + _HEADING_END + ")",
    "answer": (
        r"\b(?:" + _QUALIFIER + _WS + r")?answer(?:" + _WS + r"(?:choice|option))?"
        + r"(?:" + _WS + _words("to", r"(?:this|the)", "question") + r")?" + _COLON_OR_IS
        # The answer field of a JSON reply: {"reasoning": "…", "answer": "D"}
        + r'|(?<=")answer"[ \t]*:[ \t]*(?=")|(?<="final_)answer"[ \t]*:[ \t]*(?=")'
        # 【答案】 A: the label a Chinese exam solution ends with
        + r"|(?<=【)答案】[ \t]*[:：]?"
        # "Correct option: C", "the most accurate statement is (C)"
        + r"|\b(?:" + _QUALIFIER + r"|most" + _WS + r"(?:accurate|appropriate|suitable|plausible))" + _WS
        + r"(?:option|choice|statement|response|alternative)" + _COLON_OR_IS
        # "The correct answers are (G) and (I)": a plural with its qualifier names several letters, so it is never one
        # answer, whichever letter it names last. (A bare "the answer choices:" lists the options instead.)
        + r"|\b" + _QUALIFIER + _WS + r"(?:answer|option|choice|statement|response|alternative)s" + _COLON_OR_IS
        # The same in the languages models most often answer in besides English.
        + r"|答案\s*(?:是|为|：|:)"
        + r"|\brespuesta(?:" + _WS + r"correcta)?" + _WS + r"es\b[ \t]*:?|\brespuesta[ \t]*:"
        + r"|\bréponse(?:" + _WS + r"correcte)?" + _WS + r"est\b[ \t]*:?|\bréponse[ \t]*:"
        + r"|\bantwort(?:" + _WS + r"(?:ist|lautet))?[ \t]*:?(?=[ \t\n*(])"
        + r"|\bresposta(?:" + _WS + r"correta)?" + _WS + r"é(?![a-zà-ÿ])[ \t]*:?|\bresposta[ \t]*:"
        + r"|\brisposta(?:" + _WS + r"corretta)?" + _WS + r"è(?![a-zà-ÿ])[ \t]*:?|\brisposta[ \t]*:"
    ),
    "boxed": r"\\boxed[ \t]*\{",
}  # fmt: skip
MARKERS = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _MARKER_PATTERNS.items()), re.IGNORECASE)
# The kind of the statement each marker (MARKERS' group that matched) begins: a hedged one's is a hedged "answer".
_MARKER_KINDS: dict[str, Kind] = {
    "final_colon": "final_colon", "hedged": "answer", "final_answer": "final_answer", "answer": "answer",
    "boxed": "boxed",
}  # fmt: skip
# Every marker begins with one of these words. Finding them with str.find on a lower-cased copy and
# trying the marker pattern only there is ~20x faster than letting the regex scan long reasoning.
_MARKER_WORDS = (
    "final", "answer", "boxed", "correct", "best", "right", "likely", "probable", "most", "closest", "false",
    "incorrect", "untrue", "true", "答案", "respuesta", "réponse", "antwort", "resposta", "risposta",
)  # fmt: skip
_ASCII_MARKER_WORDS = tuple(word for word in _MARKER_WORDS if word.isascii())
# The bound on statements (docs/scoring/mcq.md, rule 2): every marker begins with one of _MARKER_WORDS, so their count
# bounds the statements a region yields and the work of reading them (about 70 µs of CPU each, read and judged).
# str.count finds them in C: a region past the bound is refused after one linear pass. The most in one region of
# tests/data/mcq_corpus.jsonl is 7; the longest real reasoning in tests/data/answers/math (37,677 characters) holds 5.
MAX_STATEMENT_PLACES = 10_000


def statement_places(pieces: list[Piece]) -> int:
    """The places in the pieces where a marker may begin: each of _MARKER_WORDS, in either case, within a word
    too ("almost" holds "most"), counted as marker_matches finds them (non-overlapping)."""
    count = 0
    for piece in pieces:
        lower = piece.text.lower()
        count += sum(lower.count(word) for word in _MARKER_WORDS)
    return count
# The words a marker may begin with that are also common English ("most of them", "the right way") begin a
# marker only when one of these follows them; checking that first spares the whole marker pattern at the
# hundreds of places in a long reasoning where they are plain words. The property test holds this to
# what MARKERS itself finds.
_LEADS_ON = {
    ("correct", "best", "right", "true"): ("answer", "option", "choice", "statement", "response", "alternative"),
    ("most",): ("likely", "probable", "accurate", "appropriate", "suitable", "plausible"),
    ("likely", "probable"): ("answer",),
    ("closest",): ("answer", "option", "choice", "match"),
    ("false", "incorrect", "untrue"): ("statement", "option", "choice"),
}
_QUALIFIER_LEADS = {
    word: re.compile(re.escape(word) + _WS + "(?:" + "|".join(nexts) + ")", re.IGNORECASE)
    for words, nexts in _LEADS_ON.items()
    for word in words
}


_MAX_BOX_CHARS = 300
_BRACE = re.compile(r"[{}]")
# A further wrapped letter after a comma in the same sentence: "(G) $438.00, (B) $459.60".
# Each sub-part letter carries a value; "(C), and (D) is off" and "(A) Paris, (B) is London" are asides.
_NUMERIC_VALUE = re.compile(r"[ \t]*[-+$€£]?[ \t]*\d")
_SUB_PART_LETTER = re.compile(
    r",[ \t]*(?:and[ \t]+)?\(([A-Z])\)[ \t]+(?!(?:is|are|was|were|isn't|would|could|can|seems|also)\b)[^\s,]"
)
# After a Roman-numeral-like letter: more numerals, as in "I and II only", "I, III and IV".
_ROMAN_LIST = re.compile(r"[ \t]*(?:,|and|&|or)[ \t]*(?:I{1,3}|IV|VI{0,3}|IX|X{1,3})\b")


def task_context(options: list[str], prompt: str | None) -> TaskContext:
    """Option letters, and the placeholder letters of the prompt's format instruction."""
    return _task_context(tuple(options), prompt)


@functools.lru_cache(maxsize=8192)
def _task_context(options: tuple[str, ...], prompt: str | None) -> TaskContext:
    # Cached: a suite's few hundred prompts are scored again and again (lanes, rescoring, audits).
    options_list = list(options)
    longest = max((len(o) for o in options), default=0)
    valid = frozenset(option_letters(len(options)))
    named: set[str] = set(_CONVENTIONAL_PLACEHOLDERS)
    exemplars: list[str] = []
    if prompt:
        plain = TaskContext(options_list, valid, frozenset(), longest)
        for candidate in find_statements([Piece("content", 0, prompt)], "content", plain, check_restated=False):
            named.update(candidate.letters)
            if len(candidate.letters) == 1 and candidate.letters[0] in valid:
                exemplars.append(candidate.letters[0])  # "… The answer is (B)." closing a few-shot exemplar
    # A letter that is a real option is never a placeholder: it may be the model's answer.
    return TaskContext(options_list, valid, frozenset(named - valid), longest, tuple(exemplars))


def find_statements(
    pieces: list[Piece], region: Region, ctx: TaskContext, *, check_restated: bool = True
) -> list[Candidate]:
    """All marker statements in the pieces of one region, in reading order. `check_restated` compares a
    letter with the value restated after it (R8c); it costs time, and only statements that may decide need it."""
    found: list[Candidate] = []
    for piece in pieces:
        text = piece.text
        consumed = 0
        for m in marker_matches(text):
            if m.start() < consumed:
                continue  # part of a statement already read ("Final answer: \boxed{B}")
            kind = m.lastgroup or ""
            reply_field = json_answer_field(text, m.start())
            if m.group(0).startswith('answer"') and not reply_field:
                continue  # {"answer": "B"} inside a sentence or a line of code: an example, not the reply
            reader = _read_box if kind == "boxed" else _read_after_marker
            words = OTHER_WORD_LETTERS if _OTHER_LANGUAGE.search(m.group(0)) else ENGLISH_WORD_LETTERS
            got = reader(text, m.end(), ctx, words, check_restated)
            if got is None:
                continue
            consumed = got.end
            if _negated(text, m.start()):
                continue
            # The reasoning before a JSON reply's answer field is the field's neighbour, not a hedge around it.
            hedged = kind == "hedged" or (not reply_field and hypothetical(text, m.start()))
            statement = got._replace(start=m.start())
            candidate = make_candidate(
                statement, "answer" if hedged else _MARKER_KINDS[kind], region, piece, ctx, hedged=hedged
            )
            if _GUESS_AFTER.match(text, got.end):
                # The model's final word all the same: it keeps its rank, and the decision says it was a guess.
                candidate.reading.append("guess")
            found.append(candidate)
    return found


def marker_matches(text: str) -> Iterator[re.Match[str]]:
    """Every marker in `text`, as MARKERS.finditer would find them, found faster: only where a marker word starts."""
    lower = text.lower()
    if len(lower) != len(text):  # a few Unicode letters change length when lower-cased
        yield from MARKERS.finditer(text)
        return
    starts: set[int] = set()
    for word in _ASCII_MARKER_WORDS if lower.isascii() else _MARKER_WORDS:
        at = lower.find(word)
        while at != -1:
            starts.add(at - 1 if word == "boxed" and at and text[at - 1] == "\\" else at)
            at = lower.find(word, at + len(word))
    end = 0
    for start in sorted(starts):
        if start < end:
            continue
        lead = _QUALIFIER_LEADS.get(lower[start : start + 9].split(maxsplit=1)[0] if start < len(lower) else "")
        if lead is not None and lead.match(text, start) is None:
            continue
        m = MARKERS.match(text, start)
        if m is not None:
            end = m.end()
            yield m


# Markers in another language: their one-letter words ("y", "o", "e") may follow the marker as words.
_OTHER_LANGUAGE = re.compile(r"答案|respuesta|réponse|antwort|resposta|risposta", re.IGNORECASE)
# A letter the model itself calls a guess right after naming it, the clause ending there: "FINAL: C would
# be my guess", "Answer: B seems right", "The answer is D, I think." Not "B, likely because ...".
_GUESS_AFTER = re.compile(
    r"[ \t]*,?[ \t]*(?:(?:would|might|could)[ \t]+be[ \t]+my[ \t]+(?:best[ \t]+)?(?:guess|answer|pick|choice)"
    r"|is[ \t]+my[ \t]+(?:best[ \t]+)?guess"
    r"|(?:seems|looks|appears)(?:[ \t]+to[ \t]+be)?[ \t]+(?:right|correct|likely|plausible|best)"
    r"|(?:,[ \t]*)?(?:I[ \t]+(?:think|guess|believe|suppose)|probably|perhaps|maybe|likely))"
    r"[ \t]*(?:[.!;)\n]|$)",
    re.IGNORECASE,
)

# A statement about a wrong answer is no statement of the model's answer: "The wrong answer is B".
_NEGATED_LEAD = re.compile(r"\b(?:wrong|incorrect|bad|not[ \t]+the|isn't[ \t]+the)[ \t]+$", re.IGNORECASE)


def _negated(text: str, start: int) -> bool:
    return _NEGATED_LEAD.search(text, max(0, start - 20), start) is not None


def _read_after_marker(
    text: str, marker_end: int, ctx: TaskContext, words: frozenset[str], check_restated: bool
) -> Found | None:
    start = skip_to_value(text, marker_end)
    got = read_letters(text, start, explicit_marker=True, word_letters=words)
    if got is None or (got.letters[0] in "IVX" and _ROMAN_LIST.match(text, got.end)):
        # No letter, or a Roman numeral list ("I and II only") that may be an option's text.
        stated = _stated_value(text, start, ctx)
        if stated is None and got is None:
            return _value_of_no_option(text, start)
        if stated is not None or got is None:
            return stated
    if got.label_before_text and _stated_value(text, _after_spaces(text, got.end), ctx) is None:
        # "Final Answer:\n(i) The number is: 42": a lower-case label before running text that is no option's
        # text opens a list more often than it names an option (R6); it ranks below every other letter.
        # "(c) Canberra" restates option text, and is a letter as any other; "(i) and (iii) only" may be an
        # option's whole text, label included.
        return _stated_value(text, start, ctx) or Found(got.letters, start, got.end, list_label=True)
    if got.before_word:
        # "The answer is D minor", "Answer: T cells": the words may be an option's text; only when they
        # are not is the capital a letter ("FINAL: C would be my guess"), and never one beyond the options.
        stated = _stated_value(text, start, ctx)
        if stated is not None or got.letters[0] not in ctx.valid:
            return stated
    letters, end = got.letters, got.end
    if "\n" in text[marker_end:start] and len(letters) == 1:
        # "Answer:" and then option lines on their own lines: each line names a letter.
        letters, end = _option_lines_after(text, start, letters, end)
    elif len(letters) == 1:
        # "The answer is (G) $438.00, (B) $459.60": one letter per sub-part, so no single answer.
        letters, end = _sub_part_letters(text, letters, end)
    if len(letters) == 1 and check_restated:
        contradiction = restated_contradiction(text, end, letters[0], ctx, wrapped=got.wrapped)
        return Found(letters, start, end, contradiction=contradiction)
    return Found(letters, start, end)


def _after_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _sub_part_letters(text: str, letters: list[str], end: int) -> tuple[list[str], int]:
    eol = line_end(text, end)
    sentence_end = text.find(". ", end, eol)
    stop = eol if sentence_end == -1 else sentence_end
    comma = text.find(",", end, stop)
    if comma == -1 or not text[end:comma].strip() or text.find("(", comma, stop) == -1:
        return letters, end  # no value after the first letter, or no further letter
    more = list(_SUB_PART_LETTER.finditer(text, end, stop))
    # One aside names one more letter ("(C) Canberra, (B) Sydney being the largest"); sub-part answers
    # come two or more after the first, or carry numbers ("(G) $438.00, (B) $459.60").
    numeric = all(_NUMERIC_VALUE.match(text, m.end(1) + 1) for m in more)
    if len(more) < 2 and not (more and numeric and _NUMERIC_VALUE.match(text, end)):
        return letters, end
    named = list(dict.fromkeys([*letters, *(m.group(1) for m in more)]))
    if len(named) > 1:
        return named, more[-1].end(1) + 1
    return letters, end


def _read_box(text: str, pos: int, ctx: TaskContext, words: frozenset[str], check_restated: bool) -> Found | None:
    """Inside \\boxed{...}: a letter (wrapped, or followed by option text), or one option's value."""
    depth, close = 1, pos
    # A box that names an answer is short; bounding the search keeps unclosed boxes from costing
    # quadratic time on long outputs.
    for brace in _BRACE.finditer(text, pos, min(len(text), pos + _MAX_BOX_CHARS)):
        depth += 1 if brace.group(0) == "{" else -1
        if not depth:
            close = brace.end()
            break
    else:
        return None
    inner = text[pos : close - 1]
    got = read_letters(inner, skip_to_value(inner, 0), explicit_marker=True, word_letters=words)
    if got is not None:
        rest = inner[got.end :].lstrip()
        # After the letter: nothing, option text after "." ")" ":", or anything after a closed
        # wrapper ("\boxed{\textbf{(B)}\ 100}", "\boxed{(C) 3.14}"); never math ("\boxed{A + B}").
        if not rest or rest[0] in ".):" or got.wrapped:
            contradiction = None
            if len(got.letters) == 1 and check_restated:
                contradiction = restated_contradiction(inner, got.end, got.letters[0], ctx, wrapped=got.wrapped)
            return Found(got.letters, pos, close, contradiction=contradiction)
        return None
    matches = matching_options(inner, ctx.option_keys) if len(inner) <= 2 * ctx.longest_option + 40 else []
    if not matches:
        stated = _value_of_no_option(inner, 0)
        return None if stated is None else Found([], pos, close, stated.value)
    return Found([option_letter(i) for i in matches], pos, close, inner.strip())


def _option_lines_after(text: str, start: int, letters: list[str], end: int) -> tuple[list[str], int]:
    eol = text.find("\n", start, start + LINE_WINDOW)
    if eol == -1 or not OPTION_LINE.match(text[start:eol].strip()):
        return letters, end
    letters = list(letters)
    for line in LINE.finditer(text, eol + 1):
        m = OPTION_LINE.match(line.group(0).strip())
        if m is None:
            break
        if m.group(1) not in letters:
            letters.append(m.group(1))
        end = line.end()
    return letters, end


def _stated_value(text: str, start: int, ctx: TaskContext) -> Found | None:
    """A marker followed by a value ("FINAL: 1284", "The answer is \\(\\frac{3}{4}\\)."): the letter(s)
    of the options whose text equals it. Tried on the rest of the line, then on shorter cuts of it
    (first sentence, first clause), longest first."""
    line = text[start : line_end(text, start, 301)].rstrip()
    if not line or len(line) > 300:
        return None
    for cut in _cuts(line):
        if len(cut) > 2 * ctx.longest_option + 40:
            continue  # LaTeX can double a value's length, but no more: skip prose
        matches = matching_options(cut, ctx.option_keys)
        if matches:
            return Found([option_letter(i) for i in matches], start, start + len(cut), cut.strip())
    return None


# What may stand between a letter and the option text it restates: "C. 533", "C) 533", "C: 533",
# "C - 533", "C = 533", "C (492)", "**C.** 492"; after a wrapped letter a space will do: "(C) 0.50 m/s".
_RESTATEMENT_LEAD = re.compile(
    r"[ \t]*(?:[*_]{1,2})?[ \t]*(?:[.):=]|[-–—](?=[ \t]))[ \t]*(?:[*_]{1,2})?[ \t]*\(?|[ \t]+\("
)
_SPACE_LEAD = re.compile(r"[ \t]+")


def restated_contradiction(text: str, end: int, letter: str, ctx: TaskContext, *, wrapped: bool) -> str | None:
    """What a letter's restated option text says when it is not that letter's option ("C. 533" where C is
    492), or None: it agrees, or what follows is prose ("B because ..."), not a restated value.

    Cautious on purpose: a value that may be the same option written another way (a unit or scale
    changed, a percentage for a fraction, a rounded figure, "490 J" for "492 J") is not a contradiction."""
    index = ord(letter) - ord("A")
    if not 0 <= index < len(ctx.options):
        return None
    lead = _RESTATEMENT_LEAD.match(text, end) or (_SPACE_LEAD.match(text, end) if wrapped else None)
    if lead is None:
        return None
    line = text[lead.end() : line_end(text, lead.end(), 301)].rstrip()
    if not line or line[0].isspace():
        return None
    return value_contradiction(line, letter, ctx)


def value_contradiction(line: str, letter: str, ctx: TaskContext, *, bare_takes_unit: bool = False) -> str | None:
    """What a value said of a letter ("533" of C) says instead, when it is neither that letter's option nor
    possibly the same option written another way; None when it agrees, or may agree, or is prose.
    `bare_takes_unit`: a number with no unit is compared as if it carried the unit of the letter's option
    ("7" against "5 m"), as a bare number is matched with options (R8b)."""
    index = ord(letter) - ord("A")
    if not 0 <= index < len(ctx.options) or not _may_restate(line, ctx):
        return None
    cuts = [c for c in _cuts(line) if len(c) <= 2 * ctx.longest_option + 40]
    if any(index in matching_options(cut, ctx.option_keys) for cut in cuts):
        return None  # "C. 492": the letter and its own option's text agree
    # Another option's text, as the whole restatement (an explanation may follow it, a list may not:
    # "B: 2, 3 and 5 are the primes" restates no option).
    for cut in _cuts(line, clauses=False):
        matches = matching_options(cut, ctx.option_keys) if len(cut) <= 2 * ctx.longest_option + 40 else []
        if matches:
            others = "/".join(option_letter(i) for i in matches)
            return f"restates {cut.strip()!r}, the text of option {others}, not of option {letter}"
    # A plain number where the letter's own option is a plain number (the same unit, or none on both
    # sides) and the two are far apart: "C. 533" where C is 492.
    stated = _value_of_no_option(line, 0, clauses=False)
    own = ctx.option_keys[index].number
    said = value_key(stated.value or "").number if stated is not None else None
    unit = own[1] if bare_takes_unit and said is not None and own is not None and not said[1] else None
    if stated is None or said is None or own is None or (unit or said[1]) != own[1] or _near(said[0], own[0]):
        return None
    return f"restates {stated.value!r}, which is not option {letter} ({ctx.options[index]!r}) nor any option"


# Within this, two figures may be one value written twice (491.6 for 492, 0.333 for 1/3, -500 for (500)).
_RELATIVE_TOLERANCE = Fraction(2, 100)


def _near(a: Fraction, b: Fraction) -> bool:
    if abs(a) == abs(b):
        return True
    scale = max(abs(a), abs(b))
    return abs(a - b) <= _RELATIVE_TOLERANCE * scale


def _may_restate(line: str, ctx: TaskContext) -> bool:
    """A cheap first look: a number, LaTeX, or the first word of some option's text. Prose ("because ...",
    "see the working") is most of what follows a letter, and needs no comparison with every option."""
    if line[0].isdigit() or line[0] in "-+−$.\\(√":
        return True
    head = normalize(line[:40]).split(" ", 1)[0]
    return bool(head) and any(key.text.startswith(head) for key in ctx.option_keys)


# A stated value: a number with at most one short unit after it ("2222", "0.50 m/s", "$438.00", "48°C",
# "\frac{3}{4}"), not a sentence that happens to start with a number ("3 of the 4 statements ...").
_MAX_UNIT = 12
_LIST_ITEM = re.compile(r"\d{1,2}[.)][ \t]+[A-Z(*]")
_MAX_VALUE = 60  # "\\frac{12}{5}\\ \\text{m/s}^2" and the like; anything longer is a sentence


def _value_of_no_option(text: str, start: int, *, clauses: bool = True) -> Found | None:
    """A marker followed by a number that is no option's text: `The correct answer is FINAL: 2222.` It is
    the model's statement all the same; it names no letter."""
    line = text[start : line_end(text, start, 301)].rstrip()
    if not line or not (line[0].isdigit() or line[0] in "-+−$.\\"):
        return None  # a value starts with its number (or a sign, a currency, LaTeX)
    if _LIST_ITEM.match(line):
        return None  # "Answer: 1. First, we find the moles": a numbered step, not a value
    for cut in _cuts(line, clauses=clauses)[::-1]:  # shortest first: the value, before any explanation
        if len(cut) > _MAX_VALUE:
            break
        key = value_key(cut)
        if key.number is None:
            continue
        unit = key.text[_number_prefix(key.text) :].strip()
        if len(unit) <= _MAX_UNIT and " " not in unit:
            value = _trim_value(cut)
            return Found([], start, start + len(value), value.strip())
        return None
    return None


_PAIRS = {"}": "{", ")": "(", "]": "["}


def _trim_value(cut: str) -> str:
    """A stated value without the sentence's end or the closers of wrappers it was read out of
    ("533}$" in "\\boxed{C. 533}$"), but with its own balanced brackets ("\\frac{1}{2}")."""
    value = cut.rstrip().rstrip(".,;:!")
    while value and value[-1] in "}$*_`)]":
        closer = value[-1]
        opener = _PAIRS.get(closer)
        if opener is not None and value.count(opener) >= value.count(closer):
            break
        if opener is None and value.count(closer) % 2 == 0:
            break  # "**5**": its own emphasis
        value = value[:-1].rstrip().rstrip(".,;:!")
    return value


def _number_prefix(normal: str) -> int:
    m = NUMBER.match(normal)
    return m.end() if m else 0


_CLAUSE_SEPARATORS = (", ", "; ")
_SEPARATORS = (". ", ", ", "; ", " because", " since", " as ", " (", " — ", " - ", " which")


def _cuts(line: str, *, clauses: bool = True) -> list[str]:
    """The line, its first sentence, and (with `clauses`) its first clause: candidates for a stated value,
    longest first."""
    cuts = {line}
    for sep in _SEPARATORS if clauses else tuple(s for s in _SEPARATORS if s not in _CLAUSE_SEPARATORS):
        at = line.find(sep)
        if at > 0:
            cuts.add(line[:at])
    return sorted(cuts, key=len, reverse=True)
