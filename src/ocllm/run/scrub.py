"""The API key taken out of text, in one place: the client's errors and log lines, and a managed server's log
(servers.py) with everything quoted from it, go through `scrub`. Servers echo keys back in their 401 bodies,
and print them at start (vLLM's `--api-key`), in more spellings than one."""

from __future__ import annotations

import base64
import functools
import re

REDACTED = "[redacted]"
_BASE64_CORE_MIN = 6  # a shorter core would take ordinary words out of a log along with a (very short) key


def scrub(text: str, api_key: str | None) -> str:
    """The text with the API key taken out in every spelling it may be printed in: as it is, JSON-escaped
    ("\\/", "\\u00fc"), URL-encoded ("%2F", "%c3%bc", "+" for a space), or any mixture of these, character by
    character; base64 (standard or URL-safe, at any offset, so also inside `user:KEY` of basic auth) and hex."""
    if not api_key:
        return text
    return _key_pattern(api_key).sub(REDACTED, text)


@functools.lru_cache(maxsize=8)
def _key_pattern(key: str) -> re.Pattern[str]:
    raw = key.encode("utf-8")
    spellings = ["".join(_char_spellings(ch) for ch in key)]
    spellings += [re.escape(core) for core in _base64_cores(raw)]
    spellings.append(f"(?i:{raw.hex()})")
    return re.compile("|".join(spellings))


def _char_spellings(ch: str) -> str:
    """One character of the key, as a pattern of its spellings: itself, its UTF-8 bytes percent-encoded,
    its JSON escape (a surrogate pair beyond the BMP), "\\/" for "/", "+" for a space."""
    spellings = [re.escape(ch), "".join(f"%(?i:{b:02x})" for b in ch.encode("utf-8"))]
    code = ord(ch)
    if code > 0xFFFF:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        spellings.append(f"\\\\u(?i:{high:04x})\\\\u(?i:{low:04x})")
    else:
        spellings.append(f"\\\\u(?i:{code:04x})")
    if ch == "/":
        spellings.append(re.escape("\\/"))
    if ch == " ":
        spellings.append(re.escape("+"))
    return "(?:" + "|".join(spellings) + ")"


def _base64_cores(raw: bytes) -> list[str]:
    """The base64 characters that depend on the key's bytes alone, for each of the three offsets the key may
    start at within what is encoded: whatever comes before or after it, these are in the encoding (the one or
    two characters at each end that mix in a neighbour's bits say too little of the key to matter)."""
    cores = []
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        first = -(-8 * shift // 6)  # the first character whose six bits all lie in the key
        last = 8 * (shift + len(raw)) // 6  # one past the last
        core = text[first:last]
        if len(core) >= _BASE64_CORE_MIN:
            cores += [core, core.translate(str.maketrans("+/", "-_"))]
    return list(dict.fromkeys(cores))
