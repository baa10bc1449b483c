"""Lone UTF-16 surrogates: `"\\udc00"` is valid JSON, and Python's json module reads it as a code point that is no
character, which no UTF-8 file can hold (msgspec and every writer refuse it: a UnicodeEncodeError). Where one is
found and what is done with it is each reader's rule (docs/lanes.md, "Inputs that are not text"); these are the
words and the walk they share.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

# json.loads joins a valid pair (\\ud83d\\ude00) into one code point: a surrogate left in a str is a lone one.
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"  # what a repaired surrogate becomes: Unicode's own mark of a character that could not be read


# Where a JSON text can spell a surrogate: an escape \uD800-\uDFFF (a valid pair too, or an escaped backslash
# before "ud800": a walk then finds out), or the code point itself in a str decoded to allow one.
_SURROGATE_IN_JSON = re.compile(r"\\u[dD][89abcdefABCDEF]|[\ud800-\udfff]")


def may_hold_surrogate(json_text: str) -> bool:
    """Whether the JSON text can decode to a string holding a lone surrogate: one search of the line in C, where
    walking every string of what it decodes to costs a Python call each (issue 45: a third of a suite's parsing)."""
    return _SURROGATE_IN_JSON.search(json_text) is not None


# The bytes of a JSON text that escape a surrogate (`\ud800`-`\udfff`): without one, nothing read from the file
# can hold one (a UTF-8 file holds no surrogate itself, and the readers refuse a file that is not UTF-8).
_ESCAPED_SURROGATE_BYTES = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_ESCAPE_LENGTH = 4
_SCAN_BYTES = 1 << 20


def file_may_hold_surrogate(path: Path) -> bool:
    """Whether anything read from the file at `path` can hold a lone surrogate: False only for a plain JSON or JSON
    Lines text (it opens on `{` or `[`) that escapes no surrogate anywhere, found by one search of its bytes; a file
    in any other form (zipped, compressed) may, and its records are screened one by one."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64).removeprefix(b"\xef\xbb\xbf").lstrip()
            if not head.startswith((b"{", b"[")):
                return True
            fh.seek(0)
            # In pieces, each searched with the end of the one before (an escape is 4 bytes long, so it may stand
            # across two): a whole mapped file would stay resident for the rest of the rescore.
            carried = b""
            while piece := fh.read(_SCAN_BYTES):
                if _ESCAPED_SURROGATE_BYTES.search(carried + piece) is not None:
                    return True
                carried = piece[-_ESCAPE_LENGTH:]
            return False
    except OSError:
        return True  # cannot tell: screen every record


def lone_surrogate(text: str | None) -> str | None:
    """Where `text` holds a lone surrogate, in words ("\\udc00 at character 5"); None when it holds none."""
    if not text or text.isascii():  # ASCII, the bulk of every file, holds none
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return f"\\u{ord(found.group()):04x} at character {found.start()}"


def first_lone_surrogate(value: Any) -> tuple[str, str] | None:
    """The first string of `value` (a JSON value, or a msgspec Struct of them) holding a lone surrogate, as its
    field (`question`, `options[1]`, `instructions[0].kwargs.keywords`; a key that holds one is named as the key)
    and where in it; None when there is none. Walked without recursion: a value may be nested deep."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        field, item = stack.pop()
        if isinstance(item, str):
            where = lone_surrogate(item)
            if where is not None:
                return field or "the value", where
        elif isinstance(item, dict | msgspec.Struct):
            pairs = item.items() if isinstance(item, dict) else msgspec.structs.asdict(item).items()
            children = []
            for key, sub in pairs:
                name = f"{field}.{key}" if field else str(key)
                where = lone_surrogate(key) if isinstance(key, str) else None
                if where is not None:
                    return f"{field or 'the value'} (a key)", where
                children.append((name, sub))
            stack.extend(reversed(children))  # in the document's order
        elif isinstance(item, list | tuple):
            stack.extend((f"{field}[{index}]", sub) for index, sub in reversed(list(enumerate(item))))
    return None


def repaired(value: Any) -> Any:
    """`value` with every lone surrogate of its strings (keys too) replaced by U+FFFD: the same object when it holds
    none, else a copy of what holds one. For values read from JSON, whose depth the readers bound."""
    if first_lone_surrogate(value) is None:
        return value
    return _repaired(value)


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {_repaired(key): _repaired(sub) for key, sub in value.items()}
    if isinstance(value, list):
        return [_repaired(sub) for sub in value]
    return value
