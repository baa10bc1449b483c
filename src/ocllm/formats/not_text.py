"""A saved response that is not text: a lone UTF-16 surrogate (`"\\udc00"`, valid JSON that Python's reader
keeps as a code point no UTF-8 file can hold).

A live server's answer with the same escape is refused by the client's JSON reader (msgspec: "invalid utf-16
surrogate pair"), so that request ends as a failed sample of kind `malformed`, never a verdict. A file read by
`rescore --from` gets the same: the sample is a failed one naming where the surrogate is, and writing the output
no longer meets a character it cannot encode.
"""

from __future__ import annotations

import re

import msgspec

from ocllm.formats.records import SavedRecord

__all__ = ["lone_surrogate", "not_text_failed"]

# json.loads joins a valid pair (\\ud83d\\ude00) into one code point: a surrogate left in a str is a lone one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str | None) -> str | None:
    """Where `text` holds a lone surrogate, in words ("\\udc00 at character 5"); None when it holds none."""
    found = _SURROGATE.search(text) if text else None
    if found is None:
        return None
    return f"\\u{ord(found.group()):04x} at character {found.start()}"


def not_text_failed(record: SavedRecord) -> SavedRecord:
    """`record` as it is, or with its sample failed (kind `malformed`, no text) where its content or reasoning
    holds a lone surrogate."""
    sample = record.sample
    for field, text in (("content", sample.content), ("reasoning", sample.reasoning)):
        where = lone_surrogate(text)
        if where is not None:
            error = f"malformed response body: its {field} holds a lone UTF-16 surrogate ({where}), which is not text"
            failed = msgspec.structs.replace(sample, content=None, reasoning=None, error=error, error_kind="malformed")
            return record._replace(sample=failed)
    return record
