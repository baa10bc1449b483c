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
    return entry_def(module, name) is not None


def entry_def(module: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The last top-level def of `name`: the one a program of this module ends up with."""
    found = None
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            found = node
    return found


def is_stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a def is a stub: its body holds nothing but strings (HumanEval's prompt, a signature and its
    docstring, restated). `pass` or `...` is a statement the model wrote, not a stub."""
    return all(_is_string(statement) for statement in node.body)


def _is_string(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def has_body(module: ast.Module, name: str) -> bool:
    """Whether the module's program ends up with a def of `name` that is not a stub (rule C3)."""
    found = entry_def(module, name)
    return found is not None and not is_stub(found)


def binding(module: ast.Module, name: str) -> ast.stmt | None:
    """The last top-level statement that binds `name` (a def, a class, an import, an assignment): the one whose
    value a program of this module ends up with. A binding inside an `if`, a `try` or a function does not count."""
    found = None
    for node in module.body:
        if name in _bound_names(node):
            found = node
    return found


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


# --- what an earlier block offers (rule C3) ---------------------------------------------------------------------

# Decorators whose application runs the standard library's code, never the model's: a def or class decorated with
# one of these (called with arguments that call nothing, as `lru_cache(maxsize=None)`) may be taken. Inside a class,
# `@<name>.setter` (and getter, deleter) of a property is one too.
LIBRARY_DECORATORS = frozenset({
    "staticmethod", "classmethod", "property", "cache", "lru_cache", "cached_property", "total_ordering",
    "dataclass", "functools.cache", "functools.lru_cache", "functools.cached_property", "functools.total_ordering",
    "dataclasses.dataclass",
})  # fmt: skip
# Methods that run when some other class is defined or subscripted: a class defining one is never taken.
_HOOKS = frozenset({"__init_subclass__", "__class_getitem__"})
_EFFECTS = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


@dataclass(frozen=True)
class Provided:
    """A top-level statement of an earlier block that a later block may take: an import, a def, a class, or a
    constant (an assignment to one name). `refused` says why taking it would run code, so it is left out: a
    default value, decorator, base or class-body statement that calls something, a constant whose value does."""

    name: str  # the name it binds
    label: str  # how the decision lists it: "import re", "from math import gcd", "def helper", "class Node", "MOD ="
    kind: str  # "import", "def", "class", "constant"
    line: int  # its first line in its block (from 1), decorators included: the order statements are put in
    source: str  # its own lines, decorators included
    statement: ast.stmt
    refused: str | None = None
    library: tuple[str, ...] = ()  # the decorators' first names, which must be the standard library's


def provided(module: ast.Module, code: str, first_line: int = 1) -> list[Provided]:
    """What a block (or a piece of one, whose first line is `first_line` of its block) offers to later ones: its
    imports, defs, classes and constants. Usage examples, prints, asserts and other statements are never taken."""
    offers: list[Provided] = []
    for node in module.body:
        source = statement_source(code, node)
        line = first_line - 1 + _first_line(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "def"
            refused, library = _definition_problem(node, in_class=False)
            offers.append(Provided(node.name, f"{kind} {node.name}", kind, line, source, node, refused, library))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = (alias.asname or alias.name).split(".")[0]
                offers.append(Provided(bound, f"import {alias.name}", "import", line, source, node))
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.name != "*":
                    label = f"from {node.module} import {alias.name}"
                    offers.append(Provided(alias.asname or alias.name, label, "import", line, source, node))
        elif _single_assignment(node):
            name = _bound_names(node)[0]
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            annotation = node.annotation if isinstance(node, ast.AnnAssign) else None
            refused = "its value calls code" if _effect(value) or _effect(annotation) else None
            offers.append(Provided(name, f"{name} =", "constant", line, source, node, refused))
    return offers


def _single_assignment(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assign):
        return len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    return isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None


def _effect(node: ast.AST | None) -> ast.AST | None:
    """The first part of an expression that runs code when it is evaluated: a call, an await, a yield, an
    assignment expression. A lambda's body does not run when the lambda is made (its defaults do)."""
    stack: list[ast.AST] = [] if node is None else [node]
    while stack:
        item = stack.pop()
        if isinstance(item, _EFFECTS):
            return item
        if isinstance(item, ast.Lambda):
            stack.extend(item.args.defaults)
            stack.extend(d for d in item.args.kw_defaults if d is not None)
            continue
        stack.extend(ast.iter_child_nodes(item))
    return None


def _definition_problem(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, *, in_class: bool
) -> tuple[str | None, tuple[str, ...]]:
    """Why defining this def or class runs code (None when it runs nothing of the model's), and the first names of
    its decorators (and its methods'), which must turn out to be the standard library's."""
    library: list[str] = []
    for decorator in node.decorator_list:
        problem, root = _decorator_problem(decorator, in_class=in_class)
        if problem:
            return problem, ()
        if root:
            library.append(root)
    if isinstance(node, ast.ClassDef):
        if node.keywords:
            return "its class statement names a metaclass or keywords, whose code runs when the class is made", ()
        if any(_effect(base) for base in node.bases):
            return "a base of its class calls code", ()
        for statement in node.body:
            problem, roots = _class_statement_problem(statement)
            if problem:
                return f"{problem} (line {statement.lineno - node.lineno + 1} of the class)", ()
            library.extend(roots)
        return None, tuple(library)
    arguments = node.args
    defaults = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    if any(_effect(default) for default in defaults):
        return "a default value of its arguments calls code, which runs when the def is", ()
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    annotations = [a.annotation for a in every if a is not None] + [node.returns]
    if any(_effect(annotation) for annotation in annotations):
        return "an annotation of its arguments calls code, which runs when the def is", ()
    return None, tuple(library)


def _class_statement_problem(statement: ast.stmt) -> tuple[str | None, tuple[str, ...]]:
    """Why a statement of a class body runs code when the class is made (its body runs then), else None."""
    if isinstance(statement, ast.Pass) or (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
    ):
        return None, ()
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        if statement.name in _HOOKS:
            return f"its class defines {statement.name}, which runs when another class is defined or subscripted", ()
        return _definition_problem(statement, in_class=True)
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        annotation = statement.annotation if isinstance(statement, ast.AnnAssign) else None
        if _effect(statement.value) or _effect(annotation):
            return "its class body calls code", ()
        return None, ()
    return "its class body runs a statement other than a def, a docstring or a constant", ()


def _decorator_problem(decorator: ast.expr, *, in_class: bool) -> tuple[str | None, str | None]:
    """Why applying this decorator would run code of the model's (None when it is the standard library's), and the
    name it starts with, which must turn out to be the library's."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(decorator, ast.Call):
        values = [*decorator.args, *(keyword.value for keyword in decorator.keywords)]
        if any(_effect(value) for value in values):
            return "an argument of its decorator calls code", None
    dotted = _dotted(target)
    if dotted in LIBRARY_DECORATORS:
        return None, dotted.split(".")[0] if dotted else None
    parts = (dotted or "").split(".")
    if in_class and len(parts) == 2 and parts[1] in ("setter", "getter", "deleter") and target is decorator:
        return None, None  # a property's setter: the property is the class's own, made by the builtin
    return f"its decorator @{ast.unparse(target)} is not one of the standard library's, and applying it runs it", None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _first_line(node: ast.stmt) -> int:
    # A def and a class are the statements that have decorators.
    decorators = node.decorator_list if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else []
    return min([node.lineno, *(d.lineno for d in decorators)])


def statement_source(code: str, node: ast.stmt) -> str:
    """A top-level statement's own lines of `code`, decorators included."""
    last = node.end_lineno or node.lineno
    return "\n".join(code.split("\n")[_first_line(node) - 1 : last])


# A line at column 0 that starts what a block may offer: an import, a def, a class, a decorator, an assignment to
# one name. A block that does not parse as a whole is read as these pieces (rule C3).
_PIECE_START = re.compile(
    r"(?:import[ \t]|from[ \t]|def[ \t]|async[ \t]+def[ \t]|class[ \t]|@|[A-Za-z_]\w*[ \t]*(?::[^=\n]*)?=(?!=))"
)
MAX_PIECES = 32


def pieces(code: str) -> list[tuple[int, str]]:
    """The definitions of a block that does not parse as a whole, each to be parsed alone: (first line from 1,
    text) for every line at column 0 that starts an import, a def, a class, a decorator or an assignment, with
    the lines indented under it (a decorator with what it decorates); at most MAX_PIECES."""
    lines = code.split("\n")
    found: list[tuple[int, str]] = []
    index = 0
    while index < len(lines) and len(found) < MAX_PIECES:
        if not _PIECE_START.match(lines[index]):
            index += 1
            continue
        end = index + 1
        while end < len(lines) and (
            not lines[end].strip() or lines[end][:1] in (" ", "\t")
            or (lines[end - 1].startswith("@") and _PIECE_START.match(lines[end]) is not None)
        ):  # fmt: skip
            end += 1
        while end > index + 1 and not lines[end - 1].strip():
            end -= 1
        found.append((index + 1, "\n".join(lines[index:end])))
        index = end
    return found
