"""Find every final-answer statement in a region.

A statement is a marker ("FINAL:", "Final answer:", "The answer is", "\\boxed{") followed by a
letter or by a value that is one option's text; an option line ("B. 1284") whose text is that
option's; or a visible answer that is nothing but a letter. Each statement becomes a Candidate with
its kind and its span in the raw field, whether or not it ends up deciding anything.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Literal, NamedTuple

from ocllm.models import Candidate
from ocllm.scoring.letters import LINE_WINDOW, line_end, read_letters, skip_to_value
from ocllm.scoring.regions import Piece
from ocllm.scoring.values import ValueKey, matching_options, normalize, same_value, value_key

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
# By convention "(X)" is the placeholder of a format instruction ("The answer is (X)").
_CONVENTIONAL_PLACEHOLDERS = frozenset("X")

_WS = r"(?:\s|\\ |~)+"


def _words(*words: str) -> str:
    """Words of a marker, separated by any whitespace or LaTeX space ("The\\ answer\\ is")."""
    return _WS.join(words)


_COLON_OR_IS = r"(?:[ \t]*[*_]*[ \t]*:|" + _WS + r"(?:is|are)\b[ \t]*[*_]*[ \t]*:?)"
_HEADING_END = r"[ \t]*[*_#]*[ \t]*(?=\r?\n)"  # "**Final Answer**" alone on its line
_HEDGE = (
    r"(?:"
    + _words(r"(?:would|should|might|may|could|must)", "be")
    + r"|(?:is|seems)(?:"
    + _WS
    + _words("to", "be")
    + r")?"
    + _WS
    + r"(?:most"
    + _WS
    + r")?"
    + r"(?:likely|probably|possibly|perhaps))\b[ \t]*:?"
)
_QUALIFIER = r"(?:correct|best|right)"
_MARKER_PATTERNS = {
    "final_colon": r"\bfinal[ \t]*[*_]*[ \t]*:",
    # "Final answer:", "The final answer is", "Final choice:", and a bold "**Final Answer**" heading on its
    # own line (the box or letter follows on the next lines).
    "final_answer": r"\bfinal" + _WS + r"(?:answer|choice|option)(?:" + _COLON_OR_IS + "|" + _HEADING_END + ")",
    # Hedged: "the answer would be (A)", "the answer is likely C", "the most likely answer is C",
    # "the closest option is (G)". Tried before "answer" so that "answer is likely" is not read firm.
    "hedged": (
        r"\b(?:(?:"
        + _QUALIFIER
        + r"|final)"
        + _WS
        + r")?answer"
        + _WS
        + _HEDGE
        + r"|\b(?:most"
        + _WS
        + r")?(?:likely|probable)"
        + _WS
        + r"answer"
        + _COLON_OR_IS
        + r"|\bclosest"
        + _WS
        + r"(?:answer|option|choice|match)(?:es|s)?"
        + r"(?:[ \t]+(?:to|for)[^.:\n]{1,60}?)?"
        + _COLON_OR_IS
    ),
    "answer": (
        r"\b(?:"
        + _QUALIFIER
        + _WS
        + r")?answer(?:"
        + _WS
        + r"(?:choice|option))?"
        + r"(?:"
        + _WS
        + _words("to", r"(?:this|the)", "question")
        + r")?"
        + _COLON_OR_IS
        # "Correct option: C", "the most accurate statement is (C)"
        + r"|\b(?:"
        + _QUALIFIER
        + r"|most"
        + _WS
        + r"(?:accurate|appropriate|suitable|plausible))"
        + _WS
        + r"(?:option|choice|statement|response|alternative)"
        + _COLON_OR_IS
        + r"|答案\s*(?:是|为|：|:)"
    ),
    "boxed": r"\\boxed[ \t]*\{",
}
_MARKERS = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _MARKER_PATTERNS.items()), re.IGNORECASE)
# Every marker begins with one of these words. Finding them with str.find on a lower-cased copy and
# trying the marker pattern only there is ~20x faster than letting the regex scan long reasoning.
_MARKER_WORDS = (
    "final", "answer", "boxed", "correct", "best", "right", "likely", "probable", "most", "closest", "答案",
)  # fmt: skip

# Claims where the letter comes first or is referred to: "Option C is correct", "(C) is the correct answer",
# "C is the answer." at the start of a sentence, and (hedged) "this corresponds to option C".
_OPTION_CLAIM = re.compile(
    r"\b(?i:option|choice)[ \t]+(?:\*\*)?\(?(?P<a>[A-Za-z])\)?(?:\*\*)?[ \t]+(?i:is)[ \t]+(?i:the[ \t]+)?"
    r"(?P<how_a>(?i:correct|right|best|closest))\b(?:[ \t]+(?i:answer|option|choice)\b)?"
    r"|(?:^|(?<=[.:!?][ \t])|(?<=\n))(?:\*\*)?(?:\((?P<b>[A-Z])\)|(?P<c>[A-Z]))(?:\*\*)?[ \t]+is[ \t]+the[ \t]+"
    r"(?:(?P<how_b>correct|right|best|closest)[ \t]+)?answer\b"
    r"|\b(?P<how_d>(?i:corresponds|corresponding))[ \t]+to[ \t]+(?i:option|choice|answer)[ \t]+"
    r"\(?(?P<d>[A-Za-z])\)?(?![A-Za-z])",
)

_MAX_BOX_CHARS = 300
_BRACE = re.compile(r"[{}]")
_LINE = re.compile(r"[^\n]*\S[^\n]*")  # a line that is not blank
# A further wrapped letter after a comma in the same sentence: "(G) $438.00, (B) $459.60".
_SUB_PART_LETTER = re.compile(r",[ \t]*(?:and[ \t]+)?\(([A-Z])\)")
# After a Roman-numeral-like letter: more numerals, as in "I and II only", "I, III and IV".
_ROMAN_LIST = re.compile(r"[ \t]*(?:,|and|&|or)[ \t]*(?:I{1,3}|IV|VI{0,3}|IX|X{1,3})\b")
_OPTION_LINE = re.compile(r"(?:[*_]{1,2})?\(?([A-Z])[.)](?:[*_]{1,2})?[ \t]+(\S.*)$")
_BOLD_LINE = re.compile(r"(?:\*\*|__).+(?:\*\*|__)[.:]?")
# What may follow an option's text on an option line: an explanation, never more of a longer text.
_AFTER_OPTION = frozenset(" -–—:(,;")


class TaskContext(NamedTuple):
    """What statement-finding needs to know about the task."""

    options: list[str]
    valid: frozenset[str]  # the option letters
    placeholders: frozenset[str]  # letters the prompt uses as placeholders, none of them an option
    longest_option: int = 0  # no stated value much longer than this can equal an option

    @property
    def option_keys(self) -> tuple[ValueKey, ...]:
        """The options' texts as values are compared; computed only when a value is stated."""
        return _option_keys(tuple(self.options))


class _Found(NamedTuple):
    letters: list[str]
    start: int  # statement start in the piece's text
    end: int  # statement end in the piece's text
    value: str | None = None  # the stated value when the letters came from matching option texts


def task_context(options: list[str], prompt: str | None) -> TaskContext:
    """Option letters, and the placeholder letters of the prompt's format instruction."""
    return _task_context(tuple(options), prompt)


@functools.lru_cache(maxsize=4096)
def _option_keys(options: tuple[str, ...]) -> tuple[ValueKey, ...]:
    return tuple(value_key(o) for o in options)


@functools.lru_cache(maxsize=8192)
def _task_context(options: tuple[str, ...], prompt: str | None) -> TaskContext:
    # Cached: a suite's few hundred prompts are scored again and again (lanes, rescoring, audits).
    options_list = list(options)
    longest = max((len(o) for o in options), default=0)
    valid = frozenset(chr(ord("A") + i) for i in range(len(options)))
    named: set[str] = set(_CONVENTIONAL_PLACEHOLDERS)
    if prompt:
        plain = TaskContext(options_list, valid, frozenset(), longest)
        for candidate in find_statements([Piece("content", 0, prompt)], "content", plain):
            named.update(candidate.letters)
    # A letter that is a real option is never a placeholder: it may be the model's answer.
    return TaskContext(options_list, valid, frozenset(named - valid), longest)


def find_statements(pieces: list[Piece], region: Region, ctx: TaskContext) -> list[Candidate]:
    """All marker statements in the pieces of one region, in reading order."""
    found: list[Candidate] = []
    for piece in pieces:
        text = piece.text
        consumed = 0
        for m in _marker_matches(text):
            if m.start() < consumed:
                continue  # part of a statement already read ("Final answer: \boxed{B}")
            kind = m.lastgroup or ""
            reader = _read_box if kind == "boxed" else _read_after_marker
            got = reader(text, m.end(), ctx)
            if got is None:
                continue
            consumed = got.end
            hedged = kind == "hedged"
            statement = _Found(got.letters, m.start(), got.end, got.value)
            found.append(_candidate(statement, "answer" if hedged else kind, region, piece, ctx, hedged=hedged))
    return found


def find_option_claims(pieces: list[Piece], region: Region, ctx: TaskContext) -> list[Candidate]:
    """ "Option C is correct", "(C) is the correct answer", and, hedged, "this corresponds to option C"."""
    found = []
    for piece in pieces:
        lower = piece.text.lower()
        if " is " not in lower and "correspond" not in lower:
            continue
        for m in _OPTION_CLAIM.finditer(piece.text):
            letter = (m.group("a") or m.group("b") or m.group("c") or m.group("d")).upper()
            how = (m.group("how_a") or m.group("how_b") or m.group("how_d") or "").lower()
            hedged = how in ("closest", "corresponds", "corresponding")
            statement = _Found([letter], m.start(), m.end())
            found.append(_candidate(statement, "option_claim", region, piece, ctx, hedged=hedged))
    return found


def find_option_lines(pieces: list[Piece], ctx: TaskContext) -> list[Candidate]:
    """Visible lines "X. <text>" / "X) <text>" whose text is option X's text: the first line of the
    answer when no other line looks like an option line, or bold lines that all name one letter.
    Several option lines are a list (an echo of the options, or an analysis of each), not an answer."""
    shaped: list[tuple[Piece, re.Match[str], str, bool]] = []  # lines shaped like an option line
    first: tuple[Piece, re.Match[str]] | None = None
    for piece in pieces:
        for line in _LINE.finditer(piece.text):
            body = line.group(0).strip()
            if not body:
                continue
            if first is None:
                first = (piece, line)
            m = _OPTION_LINE.match(body)
            if m is not None and m.group(1) in ctx.valid:
                shaped.append((piece, line, m.group(1), _BOLD_LINE.fullmatch(body) is not None))
    chosen: list[tuple[Piece, re.Match[str]]] = []
    if first is not None and len(shaped) == 1 and shaped[0][1] is first[1]:
        chosen = [first]
    else:
        bold = [(piece, line, letter) for piece, line, letter, is_bold in shaped if is_bold]
        if len({letter for _, _, letter in bold}) == 1:
            chosen = [(piece, line) for piece, line, _ in bold]
    found: list[Candidate] = []
    for piece, line in chosen:
        body = line.group(0)
        letter = _option_line_letter(body.strip(), ctx)
        if letter is None:
            continue  # the text is not that option's text
        lead = len(body) - len(body.lstrip())
        statement = _Found([letter], line.start() + lead, line.start() + len(body.rstrip()))
        found.append(_candidate(statement, "option_line", "content", piece, ctx))
    return found


def find_bare_letter(pieces: list[Piece], ctx: TaskContext) -> Candidate | None:
    """A visible region that is nothing but one letter: "D", "(D)", "**D**", "D."."""
    texts = [p for p in pieces if p.text.strip()]
    if len(texts) != 1:
        return None
    piece = texts[0]
    stripped = piece.text.strip()
    if len(stripped) > 24:
        return None
    lead = piece.text.index(stripped[0])
    got = read_letters(stripped, skip_to_value(stripped, 0), explicit_marker=False)
    if got is None or len(got.letters) != 1 or stripped[got.end :].strip() not in ("", "."):
        return None
    return _candidate(_Found(got.letters, lead, lead + got.end), "bare", "content", piece, ctx)


# A statement taken back later: "The closest option is (C) 14, but it is not the correct answer",
# "... we can't choose option D".
_BUT_NOT = re.compile(r"[ \t]*[,;]?[ \t]*but[ \t]+(?:it|this|that)(?:'s|[ \t]+is)[ \t]+not\b", re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(?:can't|cannot|can[ \t]+not|won't|shouldn't)[ \t]+(?:choose|select|pick|go[ \t]+with)[ \t]+"
    r"(?:option[ \t]+|choice[ \t]+)?\(?([A-Z])\)?(?![A-Za-z])",
    re.IGNORECASE,
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


def rank(candidate: Candidate) -> int:
    return HEDGED_RANK if candidate.hedged else KIND_RANK[candidate.kind]


def _marker_matches(text: str) -> Iterator[re.Match[str]]:
    lower = text.lower()
    if len(lower) != len(text):  # a few Unicode letters change length when lower-cased
        yield from _MARKERS.finditer(text)
        return
    starts: set[int] = set()
    for word in _MARKER_WORDS:
        at = lower.find(word)
        while at != -1:
            starts.add(at - 1 if word == "boxed" and at and text[at - 1] == "\\" else at)
            at = lower.find(word, at + len(word))
    end = 0
    for start in sorted(starts):
        if start < end:
            continue
        m = _MARKERS.match(text, start)
        if m is not None:
            end = m.end()
            yield m


def _read_after_marker(text: str, marker_end: int, ctx: TaskContext) -> _Found | None:
    start = skip_to_value(text, marker_end)
    got = read_letters(text, start, explicit_marker=True)
    if got is None or (got.letters[0] in "IVX" and _ROMAN_LIST.match(text, got.end)):
        # No letter, or a Roman numeral list ("I and II only") that may be an option's text.
        stated = _stated_value(text, start, ctx)
        if stated is not None or got is None:
            return stated
    letters, end = got.letters, got.end
    if "\n" in text[marker_end:start] and len(letters) == 1:
        # "Answer:" and then option lines on their own lines: each line names a letter.
        letters, end = _option_lines_after(text, start, letters, end)
    elif len(letters) == 1:
        # "The answer is (G) $438.00, (B) $459.60": one letter per sub-part, so no single answer.
        letters, end = _sub_part_letters(text, letters, end)
    return _Found(letters, start, end)


def _sub_part_letters(text: str, letters: list[str], end: int) -> tuple[list[str], int]:
    eol = line_end(text, end)
    sentence_end = text.find(". ", end, eol)
    stop = eol if sentence_end == -1 else sentence_end
    if text.find("(", end, stop) == -1:
        return letters, end
    more = list(_SUB_PART_LETTER.finditer(text, end, stop))
    named = list(dict.fromkeys([*letters, *(m.group(1) for m in more)]))
    if len(named) > 1:
        return named, more[-1].end()
    return letters, end


def _read_box(text: str, pos: int, ctx: TaskContext) -> _Found | None:
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
    got = read_letters(inner, skip_to_value(inner, 0), explicit_marker=True)
    if got is not None:
        rest = inner[got.end :].lstrip()
        # After the letter: nothing, option text after "." ")" ":", or anything after a closed
        # wrapper ("\boxed{\textbf{(B)}\ 100}", "\boxed{(C) 3.14}"); never math ("\boxed{A + B}").
        if not rest or rest[0] in ".):" or got.wrapped:
            return _Found(got.letters, pos, close)
        return None
    matches = matching_options(inner, ctx.option_keys) if len(inner) <= 2 * ctx.longest_option + 40 else []
    if not matches:
        return None
    return _Found([chr(ord("A") + i) for i in matches], pos, close, inner.strip())


def _option_lines_after(text: str, start: int, letters: list[str], end: int) -> tuple[list[str], int]:
    eol = text.find("\n", start, start + LINE_WINDOW)
    if eol == -1 or not _OPTION_LINE.match(text[start:eol].strip()):
        return letters, end
    letters = list(letters)
    for line in _LINE.finditer(text, eol + 1):
        m = _OPTION_LINE.match(line.group(0).strip())
        if m is None:
            break
        if m.group(1) not in letters:
            letters.append(m.group(1))
        end = line.end()
    return letters, end


def _stated_value(text: str, start: int, ctx: TaskContext) -> _Found | None:
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
            return _Found([chr(ord("A") + i) for i in matches], start, start + len(cut), cut.strip())
    return None


def _cuts(line: str) -> list[str]:
    cuts = {line}
    for sep in (". ", ", ", "; ", " because", " since", " as ", " (", " — ", " - ", " which"):
        at = line.find(sep)
        if at > 0:
            cuts.add(line[:at])
    return sorted(cuts, key=len, reverse=True)


def _option_line_letter(line: str, ctx: TaskContext) -> str | None:
    m = _OPTION_LINE.match(line)
    if m is None or m.group(1) not in ctx.valid:
        return None
    letter = m.group(1)
    text = m.group(2).rstrip("*_ ")
    option = ctx.options[ord(letter) - ord("A")]
    return letter if _text_names_option(text, option) else None


def _text_names_option(text: str, option: str) -> bool:
    """The line's text is the option's text, alone or followed by an explanation."""
    text = text.replace("**", "").replace("__", "")
    if same_value(text, option):
        return True
    said, wanted = normalize(text), normalize(option)
    return len(wanted) >= 2 and said.startswith(wanted) and said[len(wanted) : len(wanted) + 1] in _AFTER_OPTION


def _candidate(
    found: _Found, kind: str, region: Region, piece: Piece, ctx: TaskContext, *, hedged: bool = False
) -> Candidate:
    letters = found.letters
    if found.value is not None:
        method = "option_text"
    elif kind in ("option_line", "option_claim"):
        method = kind
    else:
        method = f"{kind}_letter"
    out_of_range = any(letter not in ctx.valid for letter in letters)
    placeholder = out_of_range and all(letter in ctx.placeholders for letter in letters)
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
        reading=_reading(text, kind, found, hedged=hedged, placeholder=placeholder),
    )


_LATEX_SIGNS = ("\\(", "\\[", "$", "\\text", "\\math", "\\ ")


def _reading(text: str, kind: str, found: _Found, *, hedged: bool, placeholder: bool) -> list[str]:
    """Name the reading rules that made this statement what it is, for the audit."""
    tags = []
    if any(sign in text for sign in _LATEX_SIGNS):
        tags.append("latex")
    if kind != "boxed" and "\\boxed" in text:
        tags.append("box_after_marker")
    if found.value is not None:
        tags.append("option_text")
    if kind in ("final_colon", "final_answer", "answer") and "\n" in text and len(found.letters) > 1:
        tags.append("several_option_lines")
    if hedged:
        tags.append("hedged")
    if placeholder:
        tags.append("placeholder_echo")
    return tags
