"""The gold answer a math dataset's row holds, read the way its publisher writes it: GSM8K's after `####`,
MATH's in the last `\\boxed{}` of a solution, AIME's an integer 0-999, MATH's difficulty as "Level N".

Pure text functions of the math room, shared by its dataset mappings (`ocllm import`, datasets.py) and its mapping
of lm-eval's docs (lm_eval.py, whose docs are those datasets' rows): the gold never depends on which of the two read
it.
"""

from __future__ import annotations

import re
from typing import Any

from ocllm.scoring.math.braces import brace_pairs

# A number with thousands separators: "1,000", "-12,345.5". Only such commas are removed; "3,5" is no number.
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# The box commands a solution marks its answer with; `\boxed 5` (a space, no braces) also occurs in MATH.
_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_AIME_INTEGER = re.compile(r"\d{1,3}")


def without_thousands_commas(text: str) -> str:
    """"1,000" -> "1000"; any other text as it is."""
    return text.replace(",", "") if _THOUSANDS.fullmatch(text) else text


def gsm8k_gold(answer: str) -> str | None:
    """The gold of a GSM8K answer text: what follows its last `####`, stripped, thousands commas removed;
    None when there is no `####` or nothing after it."""
    _, marker, gold = answer.rpartition("####")
    if not marker:
        return None
    gold = gold.strip()
    return without_thousands_commas(gold) or None


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` / `\\fbox{...}` of a text, braces matched (nested ones kept),
    stripped; None when there is none or its braces never close. A box inside another box is part of the
    outer one: the last box is the last one not inside another. `\\boxed 5` (no braces) is read up to the
    next `$` or line end."""
    found: str | None = None
    at = 0
    pairs = brace_pairs(text)
    while (match := _BOX.search(text, at)) is not None:
        start = match.end()
        rest = text[start:]
        stripped = rest.lstrip(" ")
        if stripped.startswith("{"):
            opening = start + len(rest) - len(stripped)
            closing = pairs.get(opening)
            if closing is None:
                return None  # an unclosed box: no gold can be told from it, whatever came before
            found = text[opening + 1 : closing].strip()
            at = closing + 1
        elif rest.startswith(" ") and stripped and not stripped.startswith("\\"):
            value = re.split(r"[$\n]", stripped, maxsplit=1)[0].strip()
            found = value or found
            at = start
        else:
            at = start
    return found or None


def aime_integer(value: Any) -> str | None:
    """An AIME answer as its integer's digits (AIME answers are integers 0-999; "033", 33 and 33.0 are 33);
    None when the value is no such integer."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return str(value) if 0 <= value <= 999 else None
    if isinstance(value, str):
        text = value.strip()
        digits = text.lstrip("0") or ("0" if text else "")
        return digits if _AIME_INTEGER.fullmatch(digits) else None
    return None


def level_name(value: Any) -> str | None:
    """MATH's difficulty as hendrycks writes it: "Level 5" as it is, MATH-500's 5 as "Level 5"."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return f"Level {value}"
    text = str(value).strip()
    if text.isdigit():
        return f"Level {int(text)}"
    return text or None
