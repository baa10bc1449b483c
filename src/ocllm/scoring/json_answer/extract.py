"""Where a json answer's JSON text is (rule J3: the whole visible answer, or its one fenced block) and what parsing
it gives (rule J4: Python's json module, strict RFC 8259: no NaN or Infinity)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from ocllm.scoring.regions import Piece

# A fence is a line of its own: up to 3 spaces, 3 or more backticks, an optional info string (CommonMark's rule,
# backticks only). A closing fence has at least as many backticks and nothing else.
# (The info string is its first word; what follows it is taken in one non-overlapping step, so a long line is read
# once, not once per split point.)
_OPENING = re.compile(r"^ {0,3}(`{3,})[ \t]*+([^`\s]*+)(?:[ \t][^`]*+)?$")
_CLOSING = re.compile(r"^ {0,3}(`{3,})[ \t]*$")
JSON_LABELS = ("", "json")  # the info strings a JSON block may carry (case aside)
# A JSON string, to skip while looking for the NaN or Infinity json.loads would have taken.
_NOT_JSON_CONSTANT = re.compile(r"-?Infinity|NaN")


@dataclass(frozen=True)
class Fence:
    """One fenced block of the visible answer: its body's span in the visible text, its info string."""

    body_start: int
    body_end: int
    start: int  # the opening fence's first character
    end: int  # after the closing fence (the end of the text when it never closed)
    label: str
    closed: bool


def fenced_blocks(text: str) -> list[Fence]:
    """Every fenced block of the text, in order. A fence that opens and never closes runs to the end (as in
    CommonMark: the answer was cut, or the model forgot)."""
    blocks: list[Fence] = []
    lines = text.splitlines(keepends=True)
    position = 0
    opened: tuple[int, int, int, str] | None = None  # (fence start, body start, backticks, label)
    for line in lines:
        bare = line.rstrip("\r\n")
        if opened is None:
            match = _OPENING.match(bare)
            if match:
                opened = (position, position + len(line), len(match.group(1)), match.group(2))
        else:
            closing = _CLOSING.match(bare)
            if closing and len(closing.group(1)) >= opened[2]:
                start, body_start, _, label = opened
                blocks.append(Fence(body_start, position, start, position + len(bare), label, True))
                opened = None
        position += len(line)
    if opened is not None:
        start, body_start, _, label = opened
        blocks.append(Fence(min(body_start, len(text)), len(text), start, len(text), label, False))
    return blocks


def raw_offset(pieces: list[Piece], index: int) -> int:
    """Where the visible text's character `index` stands in the raw content field (<think> blocks cut out of the
    visible text are in the raw one)."""
    seen = 0
    for piece in pieces:
        if index < seen + len(piece.text):
            return piece.offset + index - seen
        seen += len(piece.text)
    return pieces[-1].offset + len(pieces[-1].text) + index - seen if pieces else index


@dataclass(frozen=True)
class Parsed:
    value: Any = None
    ok: bool = False
    message: str = ""
    offset: int = 0  # where parsing failed, in the text parsed


class _NotJson(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotJson(name)


class _TooLarge(ValueError):
    pass


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _TooLarge(literal)
    return value


def parse(text: str) -> Parsed:
    """The JSON value of `text`, or why it is none and where (json.loads's own message and position)."""
    try:
        # A number past a float's range (1e400) would be read as inf, which is no JSON value either.
        return Parsed(json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float), ok=True)
    except json.JSONDecodeError as exc:
        return Parsed(message=exc.msg, offset=exc.pos)
    except _NotJson as exc:
        return Parsed(message=f"{exc} is not JSON (RFC 8259 has no NaN or Infinity)", offset=_constant_at(text))
    except _TooLarge as exc:
        return Parsed(message=f"{exc} is past the range of a number", offset=max(text.find(str(exc)), 0))
    except RecursionError:
        return Parsed(message="nested too deeply to read", offset=0)
    except ValueError as exc:  # an integer past Python's limit of digits
        return Parsed(message=str(exc), offset=0)


def _constant_at(text: str) -> int:
    """Where the first NaN or Infinity outside a string stands (json.loads does not say): one pass that knows
    whether it is inside a string (a pattern for strings backtracked quadratically on one that never closes)."""
    inside = escaped = False
    for at, char in enumerate(text):
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char in "-IN" and (found := _NOT_JSON_CONSTANT.match(text, at)) is not None:
            return found.start()
    return 0


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """Line and column (from 1) of `offset` in `text`, counted as json.JSONDecodeError counts them."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
