"""Option letters: A is the first option. One place for the arithmetic every module needs."""

from __future__ import annotations

# An MCQ task has 2 to 26 options (A-Z): suites, saved runs and importers all hold tasks to this.
MIN_OPTIONS = 2
MAX_OPTIONS = 26


def option_letter(index: int) -> str:
    """The letter of the option at `index` (0 -> A)."""
    return chr(ord("A") + index)


def option_letters(count: int) -> list[str]:
    """The letters of `count` options: A, B, ..."""
    return [option_letter(i) for i in range(count)]
