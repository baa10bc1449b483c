"""Which failed requests another attempt may pass: the one rule the client retries by (an HTTP status that says the
server is busy or broken for now), and what a failed sample on disk says of `--retry-errors`; and which refused
requests were refused as too long for the server's context.

At the bottom, beside the records, because both sides read it: the run side's client retries by it (refusals.py
holds the rest of the table: what a body says), and the analysis side counts by it, in the notices after a run,
how many failed requests may pass when sent again; neither side imports the other for it.
"""

from __future__ import annotations

from ocllm.models import Sample

# What ocllm writes in the error of a request the server refused as too long for its context (run/refusals.py's
# `Refusal.context`, written by run/client/failures.py), after "not retried, ": the words that tell this refusal from
# the others of kind "refused" on disk. ocllm's own words, not the server's, which differ by server and version.
CONTEXT_REFUSED = "the prompt and max_tokens do not fit the server's context"


def transient_status(status: int) -> bool:
    """Whether a status says the server is busy or broken for now: retried unless the body says otherwise."""
    return status in (408, 429) or status >= 500


def can_pass(sample: Sample) -> bool:
    """Whether a failed request may pass when sent again as it was (--retry-errors): not when the server said it
    cannot succeed on it, nor after a 4xx (other than 408 and 429), which the same request meets again."""
    if sample.error_kind in ("refused", "misconfigured"):
        return False
    status = sample.error_status
    return not (sample.error_kind == "http_status" and status is not None and not transient_status(status))


def refused_for_context(sample: Sample) -> bool:
    """Whether a failed request was refused because its prompt and max_tokens do not fit the server's context (a run
    saved before the words were written reads as another refusal)."""
    return sample.error_kind == "refused" and f"; not retried, {CONTEXT_REFUSED}: " in (sample.error or "")
