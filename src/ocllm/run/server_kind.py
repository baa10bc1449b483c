"""Which server software answers at a lane's endpoint, and what its requests need for a run to repeat.

Asked once when a run starts, by cheap GETs with short timeouts: each kind has a mark of its own that the
others lack. The answer is recorded in the manifest (`server_kind`, `server_identity`), and decides the
request fields ocllm adds so that two identical runs give identical answers (docs/lanes.md, "Runs that repeat").
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any, NamedTuple

import aiohttp
import msgspec

from ocllm.run.client.probe import get_json, post_json
from ocllm.run.client.settings import ClientSettings
from ocllm.simulated_words import SIMULATOR_MARK

UNKNOWN = "unknown"
# All the probes together: a server that does not know a path answers 404 at once; one that hangs costs this.
_IDENTIFY_TIMEOUT_S = 5.0
_PROBE_TIMEOUT_S = 2.0


class ServerIdentity(msgspec.Struct, kw_only=True):
    """What answered at one endpoint, and what said so."""

    base_url: str
    kind: str  # "llama.cpp", "vllm", "sglang", "ollama", or "unknown"
    version: str | None = None  # as the server reports it (llama.cpp: its build)
    evidence: str = ""  # the mark that told, e.g. "GET /props has default_generation_settings"
    # What the server said of its own parsing settings, where it says them (SGLang's /get_server_info holds its
    # arguments): the advice on calls and reasoning left in the text reads them (server_facts.py).
    reported: dict[str, Any] | None = None
    # The ocllm simulator answered (its /models names it as owner), whatever kind it mimics: no model did, and every
    # page of the run says so (simulated_words.py).
    simulated: bool = False
    # The lane's fingerprint, where the server says it: the sha256 of its chat template (llama.cpp's /props, SGLang's
    # /get_server_info, Ollama's /api/show of the model), and the context it serves (llama.cpp's n_ctx, vLLM's and
    # SGLang's max_model_len or context_length, the num_ctx of Ollama's Modelfile). Two lanes that differ in them
    # differ in what the model was asked, whatever their settings say.
    chat_template_sha256: str | None = None
    context: int | None = None


class Repeatability(NamedTuple):
    """For one kind: the request fields that make a run repeat, and why it may not even so (None: it does)."""

    settings: dict[str, Any]
    caveat: str | None


class _Found(NamedTuple):
    version: str | None  # None: the kind is certain, but the server gave no version
    reported: dict[str, Any] | None = None
    template: str | None = None  # the chat template's text (or name), as the server says it
    context: int | None = None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# SGLang's arguments that decide what its answers' text becomes (a tool call, reasoning); the rest are not kept.
_SGLANG_REPORTED = ("tool_call_parser", "reasoning_parser")


def _version(doc: Any) -> str | None:
    value = doc.get("version") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and value else None


def _llama_cpp(doc: Any) -> _Found | None:
    if not isinstance(doc, dict) or "default_generation_settings" not in doc:
        return None
    build = doc.get("build_info")
    settings = doc.get("default_generation_settings")
    context = _count(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return _Found(_text(build), template=_text(doc.get("chat_template")), context=context or _count(doc.get("n_ctx")))


def _sglang(doc: Any) -> _Found | None:
    # The server's own arguments beside its version: what vLLM's /version and Ollama's /api/version lack.
    if not isinstance(doc, dict) or "model_path" not in doc:
        return None
    reported = {name: doc[name] for name in _SGLANG_REPORTED if name in doc and isinstance(doc[name], str | None)}
    return _Found(_version(doc), reported, _text(doc.get("chat_template")), _count(doc.get("context_length")))


def _ollama_show(doc: Any) -> tuple[str | None, int | None]:
    """The template and the Modelfile's num_ctx from Ollama's /api/show of a model. Not model_info's
    context_length: that is what the model was trained for, while Ollama serves num_ctx (its own default when the
    Modelfile sets none, unknown here: the preflight's context probe measures it)."""
    if not isinstance(doc, dict):
        return None, None
    parameters = doc.get("parameters")
    words = [line.split() for line in parameters.splitlines()] if isinstance(parameters, str) else []
    num_ctx = next((said[1] for said in words if len(said) == 2 and said[0] == "num_ctx"), "")
    return _text(doc.get("template")), _count(int(num_ctx)) if num_ctx.isdigit() else None


def _version_only(doc: Any) -> _Found | None:
    version = _version(doc)
    return _Found(version) if version is not None else None


# (kind, path at the server's root, what /v1/models says as owned_by, the check: None when the answer is not this
# kind's). In this order: the most particular marks first.
_PROBES: tuple[tuple[str, str, tuple[str, ...], Callable[[Any], _Found | None]], ...] = (
    ("llama.cpp", "/props", ("llamacpp",), _llama_cpp),
    ("sglang", "/get_server_info", ("sglang",), _sglang),
    ("vllm", "/version", ("vllm",), _version_only),
    ("ollama", "/api/version", ("ollama", "library"), _version_only),
)

# llama.cpp's prompt cache lets a request start from another request's computed prefix; its own docs say the logits
# then differ (a prefix computed in another batch), so an answer depends on what ran before it. Measured on
# llama-server with two identical runs of 40 tasks: 3 greedy answers differed with the cache on at concurrency 4;
# with it off, still 2 at concurrency 4 (requests share the server's batches, and a batch's size changes the
# numbers), and none at concurrency 1.
_LLAMA_CPP_BATCHES = (
    "requests in flight together share llama.cpp's batches, and the size of a batch changes a request's numbers "
    "(llama.cpp documents it): with concurrency {concurrency}, answers, even greedy ones, can differ between "
    "identical runs; concurrency = 1 repeats exactly, at the cost of speed"
)
_REPEATABILITY = {
    "llama.cpp": Repeatability({"cache_prompt": False}, None),
    "vllm": Repeatability(
        {},
        "vLLM repeats a run exactly only when started with batch invariance (VLLM_BATCH_INVARIANT=1, on the GPUs "
        "that support it): otherwise the batch a request shares changes its numbers, and answers, even greedy "
        "ones, can differ between identical runs",
    ),
    "sglang": Repeatability(
        {},
        "SGLang repeats a run exactly only when started with --enable-deterministic-inference: otherwise the "
        "batch a request shares changes its numbers, and answers, even greedy ones, can differ between identical runs",
    ),
    "ollama": Repeatability(
        {},
        "Ollama reuses its prompt cache and no request field turns that off, so an answer can depend on the "
        "requests before it: identical runs may differ (llama-server with cache_prompt off repeats)",
    ),
}


# Servers known to close the connection after every streamed response although their headers announce keep-alive
# (llama-server, measured: docs/lanes.md). A streamed lane against one opens a connection per request; against any
# other it keeps them alive, and a pooled connection found closed is re-sent free (client.py).
_CLOSES_STREAMED_CONNECTIONS = frozenset({"llama.cpp"})


def closes_streamed_connections(kind: str) -> bool:
    return kind in _CLOSES_STREAMED_CONNECTIONS


def repeatability(kind: str, concurrency: int = 1) -> Repeatability:
    """What `kind` needs for runs of `concurrency` requests in flight to repeat; an unknown server gets nothing
    added, and nothing is promised of it."""
    needed = _REPEATABILITY.get(kind, Repeatability({}, None))
    if kind == "llama.cpp" and concurrency > 1:
        return Repeatability(needed.settings, _LLAMA_CPP_BATCHES.format(concurrency=concurrency))
    return needed


async def identify(
    session: aiohttp.ClientSession, settings: ClientSettings, models: dict[str, Any] | None, model: str | None = None
) -> ServerIdentity:
    """The kind of server at `settings.base_url`, from its /models answer (`owned_by`) and the marks at its
    root (and for Ollama, what it shows of `model`). Never raises for what the network or the server does: a server
    that shows no mark is "unknown"."""
    base_url = settings.base_url.rstrip("/")
    root = base_url.removesuffix("/v1")
    owners = _owners(models)
    simulated = SIMULATOR_MARK in owners
    # The kind /models names is asked first (for its version); the others only if it shows no mark.
    probes = sorted(_PROBES, key=lambda probe: not owners.intersection(probe[2]))
    try:
        async with asyncio.timeout(_IDENTIFY_TIMEOUT_S):
            for kind, path, _, check in probes:
                found = check(await get_json(session, settings, root + path, _PROBE_TIMEOUT_S))
                if found is not None:
                    if kind == "ollama" and model:
                        show = {"model": model}
                        template, context = _ollama_show(
                            await post_json(session, settings, f"{root}/api/show", show, _PROBE_TIMEOUT_S)
                        )
                        found = found._replace(template=template, context=context)
                    template = found.template
                    return ServerIdentity(
                        base_url=base_url, kind=kind, version=found.version, evidence=f"GET {path}",
                        reported=found.reported, simulated=simulated,
                        chat_template_sha256=hashlib.sha256(template.encode()).hexdigest() if template else None,
                        context=found.context or _listed_context(models),
                    )
    except TimeoutError:
        pass
    for kind, _, owned_by, _ in _PROBES:
        if owners.intersection(owned_by) and kind != "ollama":  # "library" alone is too weak a mark
            return ServerIdentity(
                base_url=base_url, kind=kind, evidence=f"/models owned_by {sorted(owners)}", simulated=simulated,
                context=_listed_context(models),
            )
    tried = ", ".join(path for _, path, _, _ in _PROBES)
    return ServerIdentity(base_url=base_url, kind=UNKNOWN, evidence=f"no known mark ({tried})", simulated=simulated)


def _listed_context(models: dict[str, Any] | None) -> int | None:
    """The context /models lists for the served model (vLLM's `max_model_len`)."""
    data = (models or {}).get("data")
    listed = [_count(m.get("max_model_len")) for m in data if isinstance(m, dict)] if isinstance(data, list) else []
    return next((n for n in listed if n is not None), None)


def _owners(models: dict[str, Any] | None) -> set[str]:
    data = (models or {}).get("data")
    if not isinstance(data, list):
        return set()
    return {str(m["owned_by"]).lower() for m in data if isinstance(m, dict) and m.get("owned_by")}
