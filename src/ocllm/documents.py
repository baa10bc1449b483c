"""The typed documents every output shares, produced once and read through these types everywhere.

A document read back from a file (an earlier metrics.json, a report's data) is converted to its type at
the boundary (`msgspec.convert`), so a consumer never re-states its shape with keys and defaults.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Figures(msgspec.Struct, kw_only=True):
    """Counts of one scope (a run, a category): failed requests are counted apart and never scored."""

    total: int
    correct: int
    errors: int = 0
    scored: int  # total - errors: what the accuracy is measured on
    accuracy: float


class Summary(msgspec.Struct, kw_only=True):
    """A scored run's summary (the `summary` of metrics.json and of every rescore)."""

    total: int
    correct: int
    errors: int = 0
    scored: int
    accuracy: float
    by_category: dict[str, Figures] = msgspec.field(default_factory=dict)
    by_ambiguity: dict[str, int] = msgspec.field(default_factory=dict)
    by_method: dict[str, int] = msgspec.field(default_factory=dict)
    by_source: dict[str, int] = msgspec.field(default_factory=dict)
    truncated: int = 0
    changed: int = 0  # decisions whose verdict differs from the input's own
    tasks_in_suite: int = 0
    missing: int = 0  # tasks of the suite that never ran
    complete: bool = True  # every task of the suite ran (failed requests are counted in `errors`)
    scorer: dict[str, Any] = msgspec.field(default_factory=dict)  # the scorer version and the policy

    @property
    def all_answered(self) -> bool:
        """Every task of the suite ran and has an answer: what exit code 0 means."""
        return self.complete and not self.errors


def as_summary(value: Summary | dict[str, Any]) -> Summary:
    """A summary, whether made here or read back from a document (extra keys, such as intervals, ignored)."""
    return value if isinstance(value, Summary) else msgspec.convert(value, Summary)
