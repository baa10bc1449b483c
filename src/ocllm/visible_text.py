"""Text a model, a program or a file produced, made visible wherever ocllm draws it: the Markdown and HTML reports,
the rescore audit, the console and its error lines. A program's output may hold a terminal's escape sequences, NUL
bytes or a right-to-left override; drawn raw, `cat report.md` would replay them and a page or a terminal would show
text in another order than it was written. Every renderer draws such text through `visible`, so none of them is
ever drawn raw (docs/comparing.md, "Control characters").

The convention, one for every renderer:
- C0 controls (U+0000-U+001F), DEL (U+007F) and C1 controls (U+0080-U+009F) are written as a Python string literal
  writes them: `\\t`, `\\n`, `\\r`, else `\\xNN` (`\\x1b`, `\\x00`, `\\x85`). A line feed and a tab stay as they
  are where the text is drawn as a block (a program, what it printed, an answer), and so does a carriage return
  just before a line feed; inline (`inline=True`: a one-line message) they are escaped too. A Markdown table cell
  keeps its own rule: its line breaks, tabs and runs of spaces become one space (markdown_escaping.cell).
- Characters that reorder or break text without being seen: the bidirectional controls (U+061C, U+200E, U+200F,
  U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators (U+2028, U+2029) are written `U+XXXX`.

A backslash is left as it is: `\\x1b` on a page may be four characters the model wrote. The JSON documents hold
every text exactly; only what is drawn is escaped.
"""

from __future__ import annotations

import re

__all__ = ["HIDDEN", "quoted", "visible"]

# Every character `visible` escapes, but the three a block keeps (a carriage return only before a line feed).
_FORMAT = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
HIDDEN = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_FORMAT}]|\r(?!\n)")
_HIDDEN_INLINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_FORMAT}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(found: re.Match[str]) -> str:
    char = found.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0x9F else f"U+{code:04X}"


def visible(text: str, *, inline: bool = False) -> str:
    """`text` with every control and invisible reordering character written as visible text (the module's
    convention); `inline` escapes line feeds, tabs and carriage returns too, so the text stays on one line."""
    pattern = _HIDDEN_INLINE if inline else HIDDEN
    if text.isascii() and text.isprintable():  # the bulk of every page: nothing to escape
        return text
    return pattern.sub(_escaped, text)


def quoted(text: str) -> str:
    """One line of text between single quotes, made visible inline: what a program printed, beside what a test
    expected."""
    return f"'{visible(text, inline=True)}'"
