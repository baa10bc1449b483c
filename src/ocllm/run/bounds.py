"""The range of every numeric setting, in one table: a lane's settings, its `[server]` table's, and the numbers
of the command line. A lanes file and a flag are checked against the same range, so a value is refused (or
taken) whichever way it comes; NaN and infinity are never in a range. docs/lanes.md shows this table
(tests/test_lanes.py holds the two together).

Each range is finite on purpose: `ready_timeout_s = inf` would wait forever for a server that never answers,
`max_attempts = 1e20` would retry a dead server for good, a seed beyond 32 bits is cut short by llama.cpp."""

from __future__ import annotations

import math
from typing import NamedTuple


class Bound(NamedTuple):
    low: float
    high: float
    above_low: bool = False  # the low end itself is out ("more than 0"), as for a time that must pass

    def describe(self) -> str:
        low = f"more than {_num(self.low)}" if self.above_low else f"at least {_num(self.low)}"
        return f"{low} and at most {_num(self.high)}"

    def holds(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False  # (an int is finite; isfinite would overflow on one of 309 digits)
        return (value > self.low if self.above_low else value >= self.low) and value <= self.high


SEED_MAX = 2**32 - 1  # llama.cpp keeps a seed in 32 bits; vLLM and SGLang take any of these

# The setting's name as a lanes file spells it (the `[server]` table's with `server.`, flags with their `--`). The
# sampling settings' ranges are declared with them (sampling.py).
BOUNDS: dict[str, Bound] = {
    "samples_per_task": Bound(1, 1_000),
    "concurrency": Bound(1, 1024),
    "timeout_s": Bound(0, 86_400, above_low=True),  # a day for one request
    "max_attempts": Bound(1, 100),
    "retry_budget_s": Bound(0, 604_800),  # a week
    "server.ready_timeout_s": Bound(0, 86_400, above_low=True),  # a day to load a model
    "server.stop_timeout_s": Bound(0, 3_600, above_low=True),
    "--shard": Bound(1, 10_000),  # N, the number of shards (K is 0 to N-1)
    "--per-category": Bound(1, 10_000_000),
    "--limit": Bound(1, 10_000_000),
    "--seed": Bound(0, SEED_MAX),
    "--samples": Bound(1, 1_000),
    "--port": Bound(0, 65_535),  # serve-sim's
    "--latency": Bound(0, 3_600),
    "--truncation-rate": Bound(0, 1),
    "--model NAME=ACCURACY": Bound(0, 1),
}


def out_of_range(name: str, value: float, bound: Bound | None = None) -> str | None:
    """The one line saying `value` is not in the range of `name` (its range in BOUNDS, or `bound`), or None when
    it is."""
    bound = bound or BOUNDS[name]
    if bound.holds(value):
        return None
    return f"{name} must be {bound.describe()} (got {value!r})"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
