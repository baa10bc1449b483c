"""Text from a file or a model made safe for Markdown: one table cell (or inline use) that can neither break the
table (`|`, newlines) nor become markup (`<`, `>`, `&`, emphasis, links, code spans), its control characters
written as visible text (visible_text); and GitHub's tables."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ocllm.visible_text import visible

_MD_SPECIAL = re.compile(r"([\\`*\[\]~])")
# Underscores only matter at a word's edge (GitHub ignores intraword ones), so task ids stay readable.
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def cell(text: object, limit: int | None = 120) -> str:
    """Text from a file or a model, made safe for one Markdown table cell (or inline use); cut at `limit`
    characters (None: whole)."""
    # Control characters first, written as visible text: the split below would take some of them (\x1c-\x1f,
    # \x85, U+2028) for spaces and lose them.
    s = "—" if text is None else visible(str(text))
    s = " ".join(s.split())  # newlines, tabs and runs of spaces: one line, one space
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    s = _MD_UNDERSCORE.sub(r"\\_", s)
    return s.replace("|", r"\|")


def code(text: object) -> str:
    """Text from a file or a model as one inline code span (a task id), safe in a table cell: one line, its control
    characters as visible text, fenced by more backticks than any run inside it (spaced from a backtick at either
    end), and `|` escaped, which GitHub reads in a table even inside a span. Nothing else is escaped: inside a code
    span nothing is markup, and an entity would show as written."""
    s = " ".join(visible(str(text)).split())
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}".replace("|", r"\|")


def fenced(text: str, language: str = "", indent: str = "") -> list[str]:
    """Text drawn verbatim as a fenced code block (a program, what it printed), each line after `indent` (a list
    item's): its fence longer than any run of backticks in the text, so that nothing in it can close the block, and
    nothing inside a fence is markup."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    info = language if re.fullmatch(r"[A-Za-z0-9_+-]*", language) else ""
    body = [indent + line if line else "" for line in text.replace("\r\n", "\n").split("\n")]
    if body and not body[-1]:
        body.pop()
    return [indent + fence + info, *body, indent + fence]


def table_head(header: Sequence[str], align: str | None = None) -> list[str]:
    """A GitHub table's header and separator lines; `align` is one letter per column (l, r or c)."""
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    sep = [marks[a] for a in align] if align else ["---"] * len(header)
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None) -> list[str]:
    """A GitHub table's lines; `align` is one letter per column (l, r or c). Its cells are escaped already."""
    return [*table_head(header, align), *("| " + " | ".join(row) + " |" for row in rows)]
