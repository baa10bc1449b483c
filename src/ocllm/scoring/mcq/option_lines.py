"""Statements that are not "marker + letter": an option line ("B. Canberra"), a claim about an option
("Option C is correct"), and a visible answer that is nothing but a letter."""

from __future__ import annotations

import re

from ocllm.scoring.mcq.candidates import Found, Region, TaskContext, hypothetical, make_candidate
from ocllm.scoring.mcq.decision import Candidate
from ocllm.scoring.mcq.letters import read_letters, skip_to_value
from ocllm.scoring.mcq.values import normalize, same_value
from ocllm.scoring.regions import Piece
from ocllm.scoring.special_tokens import TRAILING_SPECIAL_TOKENS

# Claims where the letter comes first or is referred to: "Option C is correct", "(C) is the correct answer",
# "C is the answer." at the start of a sentence, and (hedged) "this corresponds to option C".
_OPTION_CLAIM = re.compile(
    r"\b(?i:option|choice)[ \t]+(?:\*\*)?\(?(?P<a>[A-Za-z])\)?(?:\*\*)?[ \t]+(?i:is)[ \t]+(?i:the[ \t]+)?"
    r"(?P<how_a>(?i:correct|right|best|closest))\b(?:[ \t]+(?i:answer|option|choice)\b)?"
    r"|(?:^|(?<=[.:!?,;][ \t])|(?<=\n))(?:\*\*)?(?:\((?P<b>[A-Z])\)|(?P<c>[A-Z]))(?:\*\*)?[ \t]+is[ \t]+the[ \t]+"
    r"(?:(?P<how_b>correct|right|best|closest)[ \t]+)?answer\b"
    r"|\b(?P<how_d>(?i:corresponds|corresponding|matches))[ \t]+(?:to[ \t]+|with[ \t]+)?(?i:option|choice|answer)[ \t]+"
    r"\(?(?P<d>[A-Za-z])\)?(?![A-Za-z])",
)
# Several letters declared right at once: "Both (G) and (I) are correct", "Options B and D are both correct". A
# multi-answer: never one letter, whichever it names last. "Both" or "Options" must lead, so that "A and B are
# correct" in a statement about numbered facts is no claim.
_LETTER = r"(?:\*\*)?\(?[A-Z]\)?(?:\*\*)?"
_SEVERAL_CLAIM = re.compile(
    r"\b(?:(?i:both)[ \t]+(?:(?i:options|choices)[ \t]+)?|(?i:options|choices)[ \t]+)"
    r"(?P<letters>" + _LETTER + r"(?:(?:[ \t]*,[ \t]*|[ \t]*,?[ \t]+(?i:and)[ \t]+)" + _LETTER + r")+)"
    r"[ \t]+(?i:are)[ \t]+(?:(?i:both|all)[ \t]+)?(?i:correct|right|true)\b"
)
LINE = re.compile(r"[^\n]*\S[^\n]*")  # a line that is not blank
OPTION_LINE = re.compile(r"(?:[*_]{1,2})?\(?([A-Z])[.)](?:[*_]{1,2})?[ \t]+(\S.*)$")
_BOLD_LINE = re.compile(r"(?:\*\*|__).+(?:\*\*|__)[.:]?")
# What may follow an option's text on an option line: an explanation, never more of a longer text.
_AFTER_OPTION = frozenset(" -–—:(,;")


def find_option_claims(pieces: list[Piece], region: Region, ctx: TaskContext) -> list[Candidate]:
    """ "Option C is correct", "(C) is the correct answer", and, hedged, "this corresponds to option C"."""
    found = []
    for piece in pieces:
        lower = piece.text.lower()
        if " is " not in lower and " are " not in lower and "correspond" not in lower and "matches" not in lower:
            continue
        for m in _OPTION_CLAIM.finditer(piece.text):
            letter = (m.group("a") or m.group("b") or m.group("c") or m.group("d")).upper()
            how = (m.group("how_a") or m.group("how_b") or m.group("how_d") or "").lower()
            # "…, which corresponds to option G" names the option a value was found to be: a statement (R3g
            # of issue 28); "the closest option is" stays a hedge.
            hedged = how == "closest" or hypothetical(piece.text, m.start())
            statement = Found([letter], m.start(), m.end())
            found.append(make_candidate(statement, "option_claim", region, piece, ctx, hedged=hedged))
        if " are " in lower:
            for m in _SEVERAL_CLAIM.finditer(piece.text):
                if piece.text.startswith("?", m.end()):
                    continue  # "Both C and D are correct? No.": asked, not claimed
                letters = re.findall(r"[A-Z]", m.group("letters"))
                statement = Found(letters, m.start(), m.end())
                hedged = hypothetical(piece.text, m.start())
                found.append(make_candidate(statement, "option_claim", region, piece, ctx, hedged=hedged))
    return found


def find_option_lines(pieces: list[Piece], ctx: TaskContext) -> list[Candidate]:
    """Visible lines "X. <text>" / "X) <text>" whose text is option X's text: the first line of the answer
    when no other line looks like an option line, or bold lines that all name one letter. (Not the last
    line: an analysis often ends on a distractor, "the most common wrong pick is\nB. Sydney".)
    Several option lines are a list (an echo of the options, or an analysis of each), not an answer."""
    shaped: list[tuple[Piece, re.Match[str], str, bool]] = []  # lines shaped like an option line
    first: tuple[Piece, re.Match[str]] | None = None
    for piece in pieces:
        for line in LINE.finditer(piece.text):
            body = line.group(0).strip()
            if first is None:
                first = (piece, line)
            m = OPTION_LINE.match(body)
            if m is not None and m.group(1) in ctx.valid:
                shaped.append((piece, line, m.group(1), _BOLD_LINE.fullmatch(body) is not None))
    chosen: list[tuple[Piece, re.Match[str]]] = []
    if first is not None and len(shaped) == 1 and shaped[0][1] is first[1]:
        chosen = [(shaped[0][0], shaped[0][1])]
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
        statement = Found([letter], line.start() + lead, line.start() + len(body.rstrip()))
        found.append(make_candidate(statement, "option_line", "content", piece, ctx))
    return found


def find_bare_letter(pieces: list[Piece], ctx: TaskContext) -> Candidate | None:
    """A visible region that is nothing but one letter: "D", "(D)", "**D**", "D.", "D<|endoftext|>"."""
    texts = [p for p in pieces if p.text.strip()]
    if len(texts) != 1:
        return None
    piece = texts[0]
    stripped = TRAILING_SPECIAL_TOKENS.sub("", piece.text).strip()
    if len(stripped) > 24:
        return None
    lead = piece.text.index(stripped[0])
    got = read_letters(stripped, skip_to_value(stripped, 0), explicit_marker=False)
    if got is None or len(got.letters) != 1 or stripped[got.end :].strip() not in ("", "."):
        return None
    return make_candidate(Found(got.letters, lead, lead + got.end), "bare", "content", piece, ctx)


def _option_line_letter(line: str, ctx: TaskContext) -> str | None:
    m = OPTION_LINE.match(line)
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
    if not wanted or not said.startswith(wanted):
        return False
    rest = said[len(wanted) :]
    if len(wanted) >= 2:
        return rest[:1] in _AFTER_OPTION
    # A one-character option ("B", "5") needs a clear break before any explanation: "D. B (Boron…)".
    return rest.startswith((" (", " -", " –", " —", ":", ",", ";"))
