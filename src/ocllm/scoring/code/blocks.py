"""The pieces the code extraction rules (docs/scoring/code.md, C1-C5) are built from: the fenced blocks of the
visible answer with their places in the raw content field, a bounded `ast.parse`, and what a parsed block defines
and uses. Pure functions: nothing here runs the model's code."""

from __future__ import annotations

import ast
import builtins
import re
import warnings
from bisect import bisect_right
from dataclasses import dataclass, field

from ocllm.scoring.regions import Piece

# A fence is a line of its own: optional indentation, 3 or more backticks or tildes, an optional info string
# (CommonMark's rule). A backtick fence's info string holds no backtick, so "```python```" on one line is inline
# code, not a fence. CommonMark allows 3 spaces of indentation; models indent fences further inside list items, so
# any indentation of spaces and tabs is taken (a fence line inside Python code is as rare either way).
# (The info string's first word is taken in one step that cannot backtrack, so a long line is read once.)
_OPENING = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*+([^\s`]*+)(.*)$")
_CLOSING = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
PYTHON_LABELS = ("", "python", "py", "python3")  # compared case aside; "" is an untagged block

# At most this many calls to ast.parse for one answer, whatever its length (rule C5, "Bounds"): a 100k-character
# answer with thousands of fences or `def` lines costs the same bounded work. Blocks past the budget count as not
# parsing, the earliest first (the last blocks are the ones the rules choose from).
MAX_PARSES = 200
# A text longer than this is not parsed at all (ast.parse's time and memory grow with it); no answer a server
# returns under a sane max_tokens comes near it.
MAX_PARSE_CHARS = 2_000_000
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Fence:
    """One fenced block of the visible text: its body's span there, its info string's first word as written, and
    whether its closing fence came (an unclosed one runs to the end of the text, as in CommonMark)."""

    body_start: int
    body_end: int  # the end of the body's last line, without its line break
    label: str
    closed: bool
    indent: int  # the opening fence's indentation, removed from each body line as CommonMark does
    fence: str = "```"  # the opening fence's characters, which the closing one must match

    @property
    def python(self) -> bool:
        return self.label.lower() in PYTHON_LABELS


def fenced_blocks(text: str, opened_by: Fence | None = None) -> list[Fence]:
    """Every fenced block of the text, in order (one pass over its lines). `opened_by`: a fence the text starts
    inside (one its prefill opened and left open, `open_fence`), whose body then starts at the text's start."""
    blocks: list[Fence] = []
    position = 0
    opened: tuple[int, str, str, int] | None = None  # (body start, fence characters, label, indentation)
    if opened_by is not None:
        opened = (0, opened_by.fence, opened_by.label, opened_by.indent)
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if opened is None:
            match = _OPENING.match(bare)
            if match and not (match.group(2)[0] == "`" and "`" in match.group(4)):
                indent = len(match.group(1).expandtabs(4))
                opened = (position + len(line), match.group(2), match.group(3), indent)
        else:
            closing = _CLOSING.match(bare)
            body_start, fence, label, indent = opened
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                end = max(body_start, _without_line_break(text, position))
                blocks.append(Fence(body_start, end, label, True, indent, fence))
                opened = None
        position += len(line)
    if opened is not None:
        body_start, fence, label, indent = opened
        start = min(body_start, len(text))
        blocks.append(Fence(start, max(start, len(text.rstrip("\r\n"))), label, False, indent, fence))
    return blocks


def open_fence(prefill: str | None) -> Fence | None:
    """The fence a prefilled answer start leaves open (lm-eval's *_instruct gen_prefix ends in ```python), which the
    response then starts inside; None when it leaves none open."""
    if not prefill:
        return None
    found = fenced_blocks(prefill)
    return found[-1] if found and not found[-1].closed else None


def _without_line_break(text: str, position: int) -> int:
    """`position` (a line's start) moved back over the line break before it."""
    if position > 0 and text[position - 1] == "\n":
        position -= 1
    if position > 0 and text[position - 1] == "\r":
        position -= 1
    return position


def fence_code(text: str, fence: Fence) -> str:
    """A block's code: its body with the fence's own indentation taken off each line (up to that many spaces)."""
    body = text[fence.body_start : fence.body_end]
    if fence.indent == 0:
        return body
    lines = body.split("\n")
    return "\n".join(_dedent_line(line, fence.indent) for line in lines)


def _dedent_line(line: str, width: int) -> str:
    taken = 0
    while taken < width and taken < len(line) and line[taken] == " ":
        taken += 1
    return line[taken:]


class RawPlace:
    """Where the visible text's characters stand in the raw content field, and on which line (from 1): the
    visible text is the content with <think> blocks or a harmony analysis cut out, and every offset the decision
    reports points into the raw field."""

    def __init__(self, content: str, pieces: list[Piece]) -> None:
        self._pieces = [p for p in pieces if p.field == "content"]
        self._starts: list[int] = []
        seen = 0
        for piece in self._pieces:
            self._starts.append(seen)
            seen += len(piece.text)
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", content))]

    def offset(self, index: int) -> int:
        """The raw offset of the visible text's character `index` (the end of a piece for an index at its end)."""
        if not self._pieces:
            return index
        at = max(bisect_right(self._starts, index) - 1, 0)
        piece = self._pieces[at]
        if index - self._starts[at] > len(piece.text) and at + 1 < len(self._pieces):
            at += 1
            piece = self._pieces[at]
        return piece.offset + index - self._starts[at]

    def end_offset(self, index: int) -> int:
        """The raw offset just after the visible character `index - 1` (so a span ending at a piece's end stays in
        that piece rather than jumping over the <think> block after it)."""
        return self.offset(index - 1) + 1 if index > 0 else self.offset(0)

    def line(self, raw_offset: int) -> int:
        return bisect_right(self._line_starts, raw_offset)


@dataclass
class ParseBudget:
    """The ast.parse calls left for one answer (MAX_PARSES)."""

    left: int = MAX_PARSES
    used: int = field(default=0)

    def parse(self, code: str) -> ast.Module | None:
        """The module `code` parses to, or None: it does not parse, is too long, or the budget is spent.
        ast.parse raises SyntaxError, ValueError (a null byte), RecursionError or MemoryError (deep nesting);
        every one means "does not parse" here, and the program's own run will report the compiler's message."""
        if self.left <= 0 or len(code) > MAX_PARSE_CHARS:
            return None
        self.left -= 1
        self.used += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning for "\d" and the like: still Python
                return ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return None


def defines(module: ast.Module, name: str) -> bool:
    """Whether the module defines the function `name` at its top level (a def in a string, a comment, or inside
    another function or class does not count)."""
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name for node in module.body)


def top_level_names(module: ast.Module) -> set[str]:
    """The names a module binds at its top level: imports, defs, classes, assignments."""
    names: set[str] = set()
    for node in module.body:
        names.update(_bound_names(node))
    return names


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"]
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def used_names(nodes: list[ast.stmt]) -> set[str]:
    """Every name the statements read (a superset of what they need from outside: a local that shares a name with
    an earlier block's import brings that import along, which is harmless), builtins left out."""
    found = {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return found - _BUILTINS


@dataclass(frozen=True)
class Provided:
    """A top-level statement of an earlier block that a later block may take: an import, a def, a class, or a
    constant (an assignment to one name whose value calls nothing, so taking it runs nothing of the model's)."""

    statement: ast.stmt
    name: str  # the name it binds
    label: str  # how the decision lists it: "import re", "from math import gcd", "def helper", "class Node", "MOD ="


def provided(module: ast.Module) -> list[Provided]:
    """What a block offers to later ones (usage examples, prints, asserts and other statements are never taken)."""
    offers: list[Provided] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            offers.append(Provided(node, node.name, f"def {node.name}"))
        elif isinstance(node, ast.ClassDef):
            offers.append(Provided(node, node.name, f"class {node.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = (alias.asname or alias.name).split(".")[0]
                offers.append(Provided(node, bound, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.name != "*":
                    offers.append(Provided(node, alias.asname or alias.name, f"from {node.module} import {alias.name}"))
        elif _is_constant(node):
            name = _bound_names(node)[0]
            offers.append(Provided(node, name, f"{name} ="))
    return offers


def _is_constant(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assign):
        target, value = (node.targets[0] if len(node.targets) == 1 else None), node.value
    elif isinstance(node, ast.AnnAssign):
        target, value = node.target, node.value
    else:
        return False
    if not isinstance(target, ast.Name) or value is None:
        return False
    effects = ast.Call | ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr
    return not any(isinstance(n, effects) for n in ast.walk(value))


def statement_source(code: str, node: ast.stmt) -> str:
    """A top-level statement's own lines of `code`, decorators included."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    last = node.end_lineno or node.lineno
    return "\n".join(code.split("\n")[first - 1 : last])
