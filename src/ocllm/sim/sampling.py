"""How the ocllm SIMULATOR samples: which draws decide an answer, and a sampled task's chance of being right.

At temperature 0 (or none) an answer is decided by one `random.Random` seeded from the request as the model
reads it: (config seed, model, messages, reasoning on/off). The request's seed plays no part, as it plays
none in a real server's greedy decoding, and these are exactly the answers the simulator gave before it
sampled.

Above temperature 0 a real model's samples of one task are correlated: a hard task is wrong in most of them.
So each (model, task) has a latent chance of being right, drawn once from the same request identity, and each
sample is right with that chance. The chance is the quantile `u` of a Beta distribution whose mean is the
model's accuracy, accuracy * c and (1 - accuracy) * c its two shapes, with c = 2 * temperature: colder sampling
makes the Beta U-shaped (a task right in nearly every sample or in nearly none), hotter sampling brings every
task's chance nearer the accuracy (samples nearly independent). The samples of one task then correlate by
1 / (1 + c): 0.45 at temperature 0.6, a third at 1. Whatever the temperature, the mean chance over tasks is
the accuracy.

`u` is one minus the greedy draw that decides whether the temperature-0 answer is right, so a task right at
temperature 0 is one of the easy ones above it, and as the temperature falls towards 0 a task's samples come
to be right exactly when its greedy answer is.

Each sample then draws its own text (the wrong letter or number, the wording, truncation) from a
`random.Random` seeded by the request identity with the temperature and the request's seed; with no seed, by
fresh randomness, so two unseeded requests differ as they do on a real server.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
from typing import Any

from ocllm.sim.requests import ChatRequest

# c = this times the temperature; kept within the bounds below, where the Beta's quantiles are well computed.
CONCENTRATION_PER_TEMPERATURE = 2.0
_CONCENTRATION_BOUNDS = (1e-3, 1e4)


def request_digest(config_seed: int, request: ChatRequest, *extra: Any) -> str:
    """A SHA-256 of the request as the model reads it (and `extra`), as canonical JSON."""
    canonical = json.dumps(
        [config_seed, request.model, request.messages, request.reasoning, *extra],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def seeded(digest: str) -> random.Random:
    return random.Random(int(digest[:32], 16))


def sample_digest(config_seed: int, request: ChatRequest) -> str:
    """What seeds a sampled answer's draws: the request, its temperature and its seed, or fresh randomness."""
    drawn = ["seed", request.seed] if request.seed is not None else ["fresh", secrets.randbits(128)]
    return request_digest(config_seed, request, "sampled", request.temperature, *drawn)


def latent_chance(accuracy: float, temperature: float, quantile: float) -> float:
    """A task's chance of being right in each sample: the `quantile` of the Beta whose mean is `accuracy`."""
    if accuracy <= 0.0 or accuracy >= 1.0:
        return accuracy  # a model that is always (never) right is so in every sample
    low, high = _CONCENTRATION_BOUNDS
    concentration = min(max(CONCENTRATION_PER_TEMPERATURE * temperature, low), high)
    # Imported here: greedy requests, the common case, never pay for loading SciPy.
    from scipy.special import betaincinv

    return float(betaincinv(accuracy * concentration, (1.0 - accuracy) * concentration, quantile))
