"""How much of a decision's evidence is kept: the statements of a region are all decided on, and the first and
last of them (and the deciding one) are kept. An output repeating "FINAL: A or FINAL: B" holds a hundred
thousand statements; every one of them decided nothing new, and keeping them all cost gigabytes and minutes."""

from __future__ import annotations

from typing import TypeVar

EVIDENCE_KEPT = 25  # statements kept from each end of a region

_S = TypeVar("_S")


def bounded(found: list[_S], deciding: _S | None) -> list[_S]:
    """The first and last EVIDENCE_KEPT of a region's statements, with the deciding one wherever it stands."""
    if len(found) <= 2 * EVIDENCE_KEPT:
        return found
    kept = found[:EVIDENCE_KEPT] + found[-EVIDENCE_KEPT:]
    if deciding is not None and any(c is deciding for c in found) and not any(c is deciding for c in kept):
        kept.insert(EVIDENCE_KEPT, deciding)
    return kept
