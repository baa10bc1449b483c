"""The ocllm SIMULATOR: a fake OpenAI-compatible server (vLLM-like, with a reasoning parser).

It runs no model. Its answers are written from templates at a configured accuracy, deterministically at
temperature 0 and by seeded (or, with no seed, fresh) draws above it, so that the demo and the tests have a
real HTTP server to talk to. Everything it returns is labelled:
`owned_by` and `system_fingerprint` are "ocllm-simulator" and every response carries the header
`x-ocllm-simulator: 1`.
"""

from ocllm.sim.config import MAX_MODEL_LEN, REASONING_FIELDS, SIM_HEADER, SIM_LABEL, SimConfig
from ocllm.sim.server import SimServer, create_app, serve

__all__ = [
    "MAX_MODEL_LEN",
    "REASONING_FIELDS",
    "SIM_HEADER",
    "SIM_LABEL",
    "SimConfig",
    "SimServer",
    "create_app",
    "serve",
]
