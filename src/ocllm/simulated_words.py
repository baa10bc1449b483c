"""How a run answered by the ocllm simulator is told apart, and the words every page and the console say of it.

The simulator runs no model: figures of a run it answered say nothing of any model, so each place that shows them
says so (issue 41, item 2). The mark is the simulator's `owned_by` in its /v1/models answer (`sim/config.py` puts it
on everything it returns); the run records it in its manifest (`simulated`), the metrics document carries it in
`source.server`, and the reports and comparisons read it from there. At the bottom beside `documents.py`, so that
the simulator, the run side, the analysis, the report and the console all take the one mark and the one wording.
"""

from __future__ import annotations

from collections.abc import Sequence

# What the simulator names as its owner in /v1/models and puts in every response's `system_fingerprint`.
SIMULATOR_MARK = "ocllm-simulator"

# The settings tables' row (a run's manifest that recorded whether it was simulated), and its two values.
SETTING = "simulated"
SIMULATED_VALUE = "yes: the ocllm simulator answered (no real model)"
REAL_VALUE = "no"

# The console's `server:` line for an endpoint that is the simulator.
SERVER_WORDS = "ocllm simulator (simulated answers, no real model)"

_NOTHING_OF_A_MODEL = "they say nothing about any model"


def run_banner() -> str:
    """The banner of one simulated run's page and console summary."""
    return (
        "SIMULATED: this run was answered by the ocllm simulator, which runs no model; its figures are simulated and "
        f"{_NOTHING_OF_A_MODEL}."
    )


def lanes_banner(lanes: Sequence[tuple[str, bool]]) -> str | None:
    """The banner of a page of several runs (`(label, simulated)` each: a comparison's two sides, a matrix's
    lanes): None when none was simulated; else which were, and which were not when they mix."""
    simulated = [label for label, is_simulated in lanes if is_simulated]
    if not simulated:
        return None
    real = [label for label, is_simulated in lanes if not is_simulated]
    if not real:
        if len(lanes) == 1:
            return run_banner()
        every = "both lanes" if len(lanes) == 2 else f"all {len(lanes)} lanes"
        return (
            f"SIMULATED: {every} ({', '.join(simulated)}) were answered by the ocllm simulator, which runs no model; "
            f"their figures are simulated and {_NOTHING_OF_A_MODEL}."
        )
    return (
        f"SIMULATED lanes mixed with real ones: {', '.join(simulated)} answered by the ocllm simulator (no model: "
        f"simulated figures that say nothing about any model); {', '.join(real)} answered by a real server. A "
        "difference between the two kinds measures the simulator, not a model."
    )
