"""A function program run as its entry point and what that uses (docs/scoring/code.md, C7a), when the lane asks
for it (`code_runs = "entry_point_only"`): evalplus's way of reading an answer, offered so that a lane can be set
beside a peer's figures. The default runs the program as the model wrote it.

What is kept, from the program's longest span that parses and holds the entry point's def: that def, and every
top-level def, class, assignment and import that binds a name it reads, followed through what those read in turn;
every other top-level statement (usage examples, prints, a `__main__` block, a line that does not parse) is left
out. Pure and deterministic: names are read with `ast`, no code runs here."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ocllm.models import Policy
from ocllm.scoring.task_type import LaneSetting

SETTING = "code_runs"
# How a function program runs: as the model wrote it (the default), or cut to its entry point and what that uses.
Runs = Literal["as_written", "entry_point_only"]
RUNS: tuple[str, ...] = get_args(Runs)

# A program whose whole text does not parse is searched for its longest parseable span between top-level lines,
# longest first, at most this many parses: enough for a def followed by a few broken usage lines; past it, the
# entry point's def alone with the lines before it that parse.
_MAX_PARSES = 400
_CONTINUATIONS = ("else", "elif", "except", "finally", ")", "]", "}")


def _runs_problem(value: object) -> str | None:
    return None if value in RUNS else f"must be one of {', '.join(repr(r) for r in RUNS)} (got {value!r})"


LANE_SETTINGS = {SETTING: LaneSetting(default="as_written", problem=_runs_problem)}


def runs_of(policy: Policy) -> Runs:
    """How the lane runs function programs; a saved run's record that no longer checks runs them as written."""
    given: Any = policy.room_settings.get(SETTING, "as_written")
    return "entry_point_only" if given == "entry_point_only" else "as_written"


@dataclass(frozen=True)
class Kept:
    """The program that runs, the top-level statements kept (`def f`, `class Node`, `import re`, `MOD =`), and how
    many of the program's non-blank lines were left out."""

    program: str
    kept: list[str]
    left_out_lines: int


def entry_point_only(program: str, entry_point: str) -> Kept | None:
    """The program cut to the entry point and what it uses, or None when no span that parses binds the entry point
    by a def at its top level (the program then runs as written, and the decision says so)."""
    lines = program.splitlines()
    found = _parsed_span(lines, entry_point)
    if found is None:
        return None
    module, first = found
    nodes = [node for node in module.body if _binds(node)]
    wanted = _reachable(nodes, entry_point)
    kept_nodes = [node for node in module.body if _binds(node) & wanted or _is_future(node)]
    pieces: list[str] = []
    names: list[str] = []
    kept_lines: set[int] = set()
    for node in kept_nodes:
        start, end = _first_line(node) + first - 1, (node.end_lineno or node.lineno) + first - 1
        pieces.append("\n".join(lines[start - 1 : end]))
        names.append(_label(node))
        kept_lines.update(range(start, end + 1))
    written = {i for i, line in enumerate(lines, 1) if line.strip() and not line.lstrip().startswith("#")}
    return Kept(program="\n\n".join(pieces) + "\n", kept=names, left_out_lines=len(written - kept_lines))


def _parsed_span(lines: list[str], entry_point: str) -> tuple[ast.Module, int] | None:
    """The longest span of the program (between top-level lines) that parses and defines the entry point at its top
    level, and its first line (from 1); the whole program when it parses."""
    starts = [i for i, line in enumerate(lines) if _top_level(line)] or [0]
    ends = sorted({*(s for s in starts if s > 0), len(lines)})
    spans = sorted(((s, e) for s in starts for e in ends if e > s), key=lambda span: (span[0] - span[1], span[0]))
    for s, e in spans[:_MAX_PARSES]:
        module = _parse("\n".join(lines[s:e]))
        if module is not None and entry_point in _defined(module):
            return module, s + 1
    return None


def _top_level(line: str) -> bool:
    """A line that may open a top-level statement: at column 0, not blank, not a comment, not a clause or closing
    bracket that continues the statement before it."""
    return bool(line) and not line[0].isspace() and not line.startswith("#") and not line.startswith(_CONTINUATIONS)


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defined(module: ast.Module) -> set[str]:
    return {node.name for node in module.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _binds(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds, when it is one that is kept if used: a def, a class, an import, an
    assignment to plain names."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    return {name.id for target in targets for name in _target_names(target)}


def _target_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for item in target.elts:
            yield from _target_names(item)


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _reachable(nodes: list[ast.stmt], entry_point: str) -> set[str]:
    """The entry point and every name it reads of the program's top level, followed through the statements that bind
    them (every statement binding a name, since a later one may replace an earlier)."""
    reads: dict[str, set[str]] = {}
    for node in nodes:
        for name in _binds(node):
            reads.setdefault(name, set()).update(_free_names(node))
    wanted, todo = set(), [entry_point]
    while todo:
        name = todo.pop()
        if name in wanted or name not in reads:
            continue
        wanted.add(name)
        todo.extend(reads[name])
    return wanted


def _free_names(node: ast.stmt) -> set[str]:
    """The names a statement reads that it does not bind itself: what it takes from the program's top level. A
    function's or class's own locals (its parameters, what it assigns, its comprehensions' variables) are left out
    unless declared global, so a local `result` never pulls in a usage line `result = f(3)`."""
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        value = node.value
        return set() if value is None else {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    loaded: set[str] = set()
    stored: set[str] = set()
    declared: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (loaded if isinstance(sub.ctx, ast.Load) else stored).add(sub.id)
        elif isinstance(sub, ast.arg):
            stored.add(sub.arg)
        elif isinstance(sub, ast.Global):
            declared.update(sub.names)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and sub is not node:
            stored.add(sub.name)
        elif isinstance(sub, ast.alias) and not isinstance(node, ast.Import | ast.ImportFrom):
            stored.add((sub.asname or sub.name).split(".")[0])
    return (loaded - stored) | declared  # a global one is the top level's, read or written


def _first_line(node: ast.stmt) -> int:
    """A statement's first line, its decorators included."""
    # A def and a class are the statements that have decorators.
    decorators = node.decorator_list if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _label(node: ast.stmt) -> str:
    """How a kept statement is named in a decision: `def f`, `class Node`, `import re`, `MOD =`."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return f"def {node.name}"
    if isinstance(node, ast.ClassDef):
        return f"class {node.name}"
    if isinstance(node, ast.Import | ast.ImportFrom):
        names = ", ".join(alias.name + (f" as {alias.asname}" if alias.asname else "") for alias in node.names)
        source = f"from {'.' * node.level}{node.module or ''} " if isinstance(node, ast.ImportFrom) else ""
        return f"{source}import {names}"
    return ", ".join(sorted(_binds(node))) + " ="
