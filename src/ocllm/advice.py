"""Every sentence that tells a user what to change, made in one place from what the run knows: the server's kind,
version and flags (`server_facts.ServerFacts`, from the manifest), the lane's settings, and what the answers did.

The rule: a server flag is advised only when the run shows it off and turning it on would keep what was lost.
Where the flag is already on, or no flag reads what the model wrote, the sentence says so and names what can help
instead (tool_choice, a prompt or chat template asking for the format the parser reads, another model). A server
ocllm did not start has no command on record: the sentence says what to check rather than assert a flag is off.

What each server's parsers read (checked against their sources, docs/lanes.md "Calls written as text"):
- vLLM answers tool_choice "auto" only when started with --enable-auto-tool-choice and a --tool-call-parser (else
  HTTP 400); `hermes` reads <tool_call> tags, `mistral` the [TOOL_CALLS] marker, `llama3_json` a JSON call object
  anywhere in the answer (streamed: only an answer that starts with it or with <|python_tag|>), `pythonic` a Python
  list of calls that is the whole answer. tool_choice "required" is served without a parser (constrained decoding,
  vLLM 0.8.3 and later). No tool parser reads the reasoning: the reasoning parser takes it out first.
- llama.cpp's llama-server refuses `tools` without Jinja ("tools param requires --jinja flag", HTTP 500); Jinja is on
  by default since 2025-11-27 (PR 17524). With it, the parser is derived from the model's chat template: it reads the
  call format that template writes, and no flag makes it read another; tool_choice "required" constrains the answer
  to that format with a grammar.
- SGLang parses calls with --tool-call-parser (no separate switch): `qwen25` reads <tool_call> tags, `mistral`,
  `llama3` a JSON call, `pythonic`; its /get_server_info reports the parser it runs.
- Ollama parses calls in the format of the model's template (its Modelfile TEMPLATE); no server flag changes it.

tool_choice "required" is advised only to a lane that does not send it already. A lane that sends it and whose
answers still ran to max_tokens with no call in tool_calls (llama-server with a template it derives no call grammar
from: a JSON block, then newlines to the limit) is told the constraint did not take, and what may make it take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ocllm.server_facts import ServerFacts


class TextCalls(Protocol):
    """What advice reads of the calls the answers wrote as text: the tool_call room's `scoring.task_type.TextCalls`
    has these fields. A protocol rather than that import: the run side's client takes its refusals' sentences from
    this module, and the client never imports the scoring side."""

    @property
    def said(self) -> str: ...  # the room's sentence of the facts
    @property
    def by_format(self) -> dict[str, int]: ...  # answers per format found
    @property
    def by_where(self) -> dict[str, int]: ...  # answers per field the calls stood in ("content", "reasoning")
    @property
    def format_words(self) -> dict[str, str]: ...  # each format found, in words

# A format the room finds -> the parser of each kind that reads it.
_VLLM_READS = {"hermes": "hermes", "mistral": "mistral", "llama_python_tag": "llama3_json", "json": "llama3_json",
               "pythonic": "pythonic"}  # fmt: skip
_SGLANG_READS = {"hermes": "qwen25", "mistral": "mistral", "llama_python_tag": "llama3", "json": "llama3",
                 "pythonic": "pythonic"}  # fmt: skip
# The kinds whose tool parser is the model's chat template's own: no flag picks another.
_TEMPLATE_PARSED = {"llama.cpp": "llama-server", "ollama": "Ollama"}
_REQUIRED = (
    'tool_choice = "required" for this lane (the server then constrains the answer to its parser\'s format; a task '
    "that expects no call cannot pass then)"
)
_PROMPT = "a system prompt or chat template that asks for the format the parser reads, or another model"


def _formats(calls: TextCalls, where: str = "content") -> list[str]:
    """The formats found, most answers first (a format found only in the reasoning is not the content's)."""
    return sorted(calls.by_format, key=lambda fmt: -calls.by_format[fmt]) if calls.by_where.get(where) else []


def _words(calls: TextCalls) -> str:
    return "; ".join(calls.format_words.get(fmt, fmt) for fmt in _formats(calls) or list(calls.by_format))


def _parsers(reads: Mapping[str, str], calls: TextCalls) -> list[str]:
    return sorted({reads[fmt] for fmt in _formats(calls) if fmt in reads})


def _caveats(parsers: list[str], lane: Mapping[str, Any]) -> str:
    said = []
    if "llama3_json" in parsers and lane.get("stream"):
        said.append("streamed, llama3_json reads only an answer that starts with the call")
    if "pythonic" in parsers:
        said.append("pythonic reads only an answer that is the call list alone")
    return f" ({'; '.join(said)})" if said else ""


def _sends_required(lane: Mapping[str, Any]) -> bool:
    """The lane already constrains its answers to a call: "required" is no advice for it."""
    return lane.get("tool_choice") == "required"


def _no_flag(calls: TextCalls, why: str, lane: Mapping[str, Any], required: bool = True) -> str:
    helps = f"{_REQUIRED}, {_PROMPT}" if required and not _sends_required(lane) else _PROMPT
    return f"No server flag keeps these: the model wrote its calls as {_words(calls)}, {why}. What can help: {helps}"


def dropped_calls(calls: TextCalls, server: ServerFacts | None, lane: Mapping[str, Any]) -> str:
    """The notice of calls written as text: the room's facts, then what to change, for this run's server."""
    return f"{calls.said}. {_content_advice(calls, server, lane)}{_reasoning_calls(calls)}"


def _content_advice(calls: TextCalls, server: ServerFacts | None, lane: Mapping[str, Any]) -> str:
    if not calls.by_where.get("content"):
        return "No server flag parses a call written inside the reasoning"
    if lane.get("tool_choice") == "none":
        return 'The lane sets tool_choice = "none", which forbids calls, so no server parses them: set it to "auto"'
    if "tools" in (lane.get("omit_fields") or []):
        return "The lane leaves tools out of its requests (omit_fields), so no server parses calls: send them"
    kind = server.kind if server is not None else None
    if kind == "vllm" and server is not None:
        return _vllm(calls, server, lane)
    if kind == "sglang" and server is not None:
        return _sglang(calls, server, lane)
    if kind in _TEMPLATE_PARSED and server is not None:
        return _template_parsed(calls, server, kind, lane)
    return _unknown(calls, lane)


def _vllm(calls: TextCalls, server: ServerFacts, lane: Mapping[str, Any]) -> str:
    needed = _parsers(_VLLM_READS, calls)
    caveats = _caveats(needed, lane)
    running = server.flag("tool_call_parser")
    if not needed:
        return _no_flag(calls, "which none of vLLM's tool parsers reads", lane)
    if server.managed and server.flag("enable_auto_tool_choice") is False:
        return (
            f"vLLM was started without --enable-auto-tool-choice: start it with --enable-auto-tool-choice "
            f"--tool-call-parser {' or '.join(needed)}{caveats}"
        )
    if server.managed and running is None:
        return f"vLLM was started without a tool parser: add --tool-call-parser {' or '.join(needed)}{caveats}"
    if running is not None and running not in needed:
        return (
            f"vLLM runs --tool-call-parser {running}, which does not read this format: --tool-call-parser "
            f"{' or '.join(needed)} does{caveats}"
        )
    if running is not None:
        return _no_flag(calls, f"which vLLM's --tool-call-parser {running} (already on) did not take{caveats}", lane)
    # A server ocllm did not start: its command is unknown. It served tool_choice "auto" (ocllm's default), which
    # vLLM refuses without --enable-auto-tool-choice, so that flag is on; which parser it runs is not known.
    on = ' (it served tool_choice "auto", so --enable-auto-tool-choice is on)'
    served_auto = lane.get("tool_choice") in (None, "auto")
    return (
        f"Check which --tool-call-parser this vLLM server runs{on if served_auto else ''}: --tool-call-parser "
        f"{' or '.join(needed)} reads this format{caveats}"
    )


def _sglang(calls: TextCalls, server: ServerFacts, lane: Mapping[str, Any]) -> str:
    needed = _parsers(_SGLANG_READS, calls)
    known = "tool_call_parser" in server.flags or "tool_call_parser" in server.reported
    running = server.flag("tool_call_parser")
    if not needed:
        return _no_flag(calls, "which none of SGLang's tool parsers reads", lane)
    choice = " or ".join(needed).replace("qwen25", "qwen25 (qwen in newer releases)")
    if known and running is None:
        return f"SGLang runs without a tool parser: start it with --tool-call-parser {choice}"
    if running is not None and running not in needed and not (running == "qwen" and "qwen25" in needed):
        return (
            f"SGLang runs --tool-call-parser {running}, which does not read this format: --tool-call-parser {choice} "
            "does"
        )
    if running is not None:
        return _no_flag(calls, f"which SGLang's --tool-call-parser {running} (already on) did not take", lane)
    return f"Check which --tool-call-parser this SGLang server runs: --tool-call-parser {choice} reads this format"


def _template_parsed(calls: TextCalls, server: ServerFacts, kind: str, lane: Mapping[str, Any]) -> str:
    name = _TEMPLATE_PARSED[kind]
    if kind == "llama.cpp":
        template = (
            "the chat template its command sets (--chat-template)"
            if server.flag("chat_template")
            else "the model's chat template"
        )
        # The requests carried tools and were answered: llama-server refuses tools without Jinja (HTTP 500), so
        # Jinja was on, whatever the command or the build's default; --jinja would change nothing.
        why = f"and {name} (Jinja on: it accepted the tools) parses only the call format of {template}"
        return _no_flag(calls, why, lane)
    why = f"and {name} parses only the call format of the model's template (its Modelfile TEMPLATE)"
    return _no_flag(calls, why, lane, required=False)  # Ollama's OpenAI API has no tool_choice


def _unknown(calls: TextCalls, lane: Mapping[str, Any]) -> str:
    vllm, sglang = _parsers(_VLLM_READS, calls), _parsers(_SGLANG_READS, calls)
    if not vllm:
        return _no_flag(calls, "which no known server's tool parser reads", lane)
    helps = "a prompt asking for that format"
    if not _sends_required(lane):
        helps = f'a tool_choice of "required", {helps}'
    return (
        f"The server's kind is not known, so its flags are not either: vLLM reads this format with "
        f"--enable-auto-tool-choice --tool-call-parser {' or '.join(vllm)}{_caveats(vllm, lane)}; SGLang with "
        f"--tool-call-parser {' or '.join(sglang)}; llama.cpp and Ollama read only the call format of the model's "
        f"chat template (no flag changes it: {helps}, or another model can)"
    )


def constraint_did_not_take(cut: int, answers: int, server: ServerFacts | None, lane: Mapping[str, Any]) -> str | None:
    """A lane that sends tool_choice "required" whose answers ran to max_tokens with no call in tool_calls: the
    server did not constrain them (it ignored the setting, or had no call format to constrain them to). Advising
    "required" again would change nothing; this says what may make the constraint take (None: nothing to say)."""
    if not cut or not _sends_required(lane):
        return None
    limit = lane.get("max_tokens")
    at = f" ({limit})" if limit is not None else ""
    return (
        f'The lane sends tool_choice = "required", yet {cut} of {answers} tool_call answer(s) ran to max_tokens{at} '
        "with no call in tool_calls: the server's constraint did not take (the server ignored tool_choice or could "
        f"not enforce it), so the answers only grew longer. What may help: {_make_it_take(server)}; or "
        'tool_choice = "auto" again, which costs fewer tokens'
    )


def _make_it_take(server: ServerFacts | None) -> str:
    """What lets each kind constrain an answer to a call."""
    kind = server.kind if server is not None else None
    if kind == "llama.cpp":
        return (
            "llama-server builds its call grammar from the chat template, so a chat template with tools whose call "
            "format it recognises (--chat-template-file), or a grammar of the call in the request (the lane's "
            "extra_body: json_schema or grammar)"
        )
    if kind == "vllm":
        return (
            'a vLLM of 0.8.3 or later (it constrains "required" itself), a --tool-call-parser for the model\'s '
            "call format, or guided decoding in the lane's extra_body (guided_json)"
        )
    if kind == "sglang":
        return "SGLang with a --tool-call-parser for the model's call format (it constrains through the parser)"
    if kind == "ollama":
        return 'none from Ollama\'s side: its OpenAI API takes no tool_choice, so "required" is ignored there'
    return (
        "a tool-call parser flag on the server (vLLM --enable-auto-tool-choice --tool-call-parser, SGLang "
        "--tool-call-parser), a chat template with tools (llama.cpp --chat-template-file), or a grammar of the "
        "call (the lane's extra_body)"
    )


def _reasoning_calls(calls: TextCalls) -> str:
    n = calls.by_where.get("reasoning", 0)
    if not n:
        return ""
    return (
        f". {n} answer(s) made their calls inside the reasoning, which no server's tool parser reads: turn thinking "
        'off for this lane (reasoning = "off") or ask for the call after the thinking'
    )


# --- failed requests whose reason names what to change on the server ---------------------------------------


def failure_advice(reason: str, server: ServerFacts | None, lane: Mapping[str, Any]) -> str | None:
    """What to change for a failure reason a server gives when it is set up not to serve the request (None: the
    reason names nothing this knows)."""
    text = reason.lower()
    if "requires --jinja" in text:
        return _jinja_off(server)
    if "enable-auto-tool-choice" in text:
        return _auto_tool_choice_off(server)
    if "does not support tools" in text:
        return "Ollama: this model's template has no tool calls; use a model whose template does"
    return None


def context_refused(refused: int, lane: Mapping[str, Any]) -> str | None:
    """Requests the server refused because the prompt and max_tokens do not fit its context, said plainly with what
    to change: the server's context (each kind's flag), the lane's max_tokens, and, for a lane run inside an agent's
    context (docs/lanes.md, "An agent's context"), what that context adds to every prompt. None when none was."""
    if not refused:
        return None
    max_tokens = lane.get("max_tokens")
    now = f" (now {max_tokens})" if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else ""
    changes = [
        "give the server a larger context (--max-model-len on vLLM, -c/--ctx-size on llama-server, --context-length "
        "on SGLang, num_ctx on Ollama)",
        f"lower max_tokens{now}",
    ]
    agent = [
        words
        for key, words in (
            ("system_prompt_file", "a shorter system prompt (system_prompt_file)"),
            ("extra_tools_file", "fewer tools (extra_tools_file)"),
        )
        if lane.get(key)
    ]
    if agent:
        changes.append(f"send {' or '.join(agent)}")
    return (
        f"{refused} task(s) failed because the prompt and max_tokens do not fit the server's context (refused, not "
        f"counted as wrong): {', '.join(changes[:-1])}, or {changes[-1]}"
    )


def _jinja_off(server: ServerFacts | None) -> str:
    said = "llama-server refused the tools because its Jinja chat templates are off"
    if server is not None and server.managed and server.flag("jinja") is False:
        return f"{said} (its command has --no-jinja): start it without --no-jinja"
    # The server said it is off; what turned it off is not on record (a build before 2025-11-27 has it off by
    # default; LLAMA_ARG_NO_JINJA in its environment turns it off too).
    return f"{said}: start it with --jinja (and without --no-jinja or LLAMA_ARG_NO_JINJA)"


def _auto_tool_choice_off(server: ServerFacts | None) -> str:
    said = 'vLLM refused tool_choice "auto"'
    if server is not None and server.flag("enable_auto_tool_choice") is True:
        return f"{said}: its command has --enable-auto-tool-choice but no --tool-call-parser; add one for the model"
    return (
        f"{said}: start it with --enable-auto-tool-choice --tool-call-parser NAME, NAME the parser of the model's "
        "call format (hermes for Qwen 2.5 and Hermes, llama3_json for Llama 3.1-3.3, mistral for Mistral, pythonic "
        'for a Python call list), or set tool_choice = "required" for this lane (served without them from vLLM 0.8.3; '
        "a task that expects no call cannot pass then)"
    )


def timeout_advice(timed_out: int, retried: int, lane: Mapping[str, Any]) -> str | None:
    """Requests that ran past timeout_s: the sentence of docs/lanes.md with the lane's own values."""
    if not timed_out and not retried:
        return None
    parts = []
    if timed_out:
        parts.append(f"{timed_out} task(s) failed on timeouts")
    if retried:
        parts.append(f"{retried} attempt(s) timed out and were sent again")
    max_tokens, timeout_s = lane.get("max_tokens"), lane.get("timeout_s")
    now_tokens = f" (now {max_tokens})" if max_tokens is not None else ""
    now_timeout = f" (now {timeout_s:g} s)" if isinstance(timeout_s, int | float) else ""
    return (
        f"{' and '.join(parts)}: an answer took longer than timeout_s{now_timeout}; lower max_tokens{now_tokens} "
        f"first, or raise timeout_s to what max_tokens needs at this server's speed"
    )


# --- reasoning ------------------------------------------------------------------------------------------------


def reasoning_not_off(server: ServerFacts | None) -> str:
    """Reasoning asked off, yet answers carried it: how to turn it off on this kind."""
    if server is not None and server.kind == "ollama":
        return 'Ollama turns thinking off with the request field "think": false (the lane\'s extra_body)'
    if server is not None and server.kind == "llama.cpp":
        return (
            "llama-server may ignore chat_template_kwargs for this template: start it with --reasoning off (older "
            "builds: --reasoning-budget 0), or use a system prompt"
        )
    return "this server may ignore chat_template_kwargs (use a system prompt or extra_body to turn thinking off)"


def reasoning_not_seen(server: ServerFacts | None) -> str:
    """Reasoning asked native, yet no answer carried any: what may be missing on this kind."""
    kind = server.kind if server is not None else None
    parser = server.flag("reasoning_parser") if server is not None else None
    if kind in ("vllm", "sglang") and server is not None:
        name = "vLLM" if kind == "vllm" else "SGLang"
        maybe = f"the model may not think, or {name}"
        if parser:
            return f"{maybe}'s --reasoning-parser {parser} (already on) does not match its tags"
        if server.managed or "reasoning_parser" in server.reported:
            return f"{maybe} needs a reasoning parser: start it with --reasoning-parser NAME"
        return f"{maybe} needs a reasoning parser: check that it runs with --reasoning-parser"
    if kind == "llama.cpp" and server is not None:
        if server.flag("reasoning_format") == "none":
            return "the model may not think: llama-server runs --reasoning-format none, yet no <think> tags came either"
        return (
            "the model may not think, or its chat template does not turn thinking on (llama-server extracts it by "
            "default)"
        )
    if kind == "ollama":
        return 'the model may not think, or Ollama needs the request field "think": true (the lane\'s extra_body)'
    return (
        "the model may not think, or the server needs a reasoning parser (vLLM and SGLang --reasoning-parser, "
        "llama.cpp --reasoning-format)"
    )


def answer_in_reasoning(server: ServerFacts | None, reasoning: str) -> str:
    """The preflight's answer came only in the reasoning field, content null: what keeps answers visible."""
    kind = server.kind if server is not None else None
    fallback = "or let the lane read answers from the reasoning (allow_reasoning_fallback = true, counted apart)"
    if kind in ("vllm", "sglang"):
        name = "vLLM" if kind == "vllm" else "SGLang"
        off = " or turn thinking off as the lane asks" if reasoning == "off" else ""
        said = f"{name}'s --reasoning-parser took the whole answer for thinking"
        return f"{said}: check it matches the model{off}, {fallback}"
    if kind == "llama.cpp":
        return f"llama-server extracted the whole answer as reasoning: try --reasoning-format none, {fallback}"
    return f"check the server's reasoning parser for this model, {fallback}"


def context_silently_cut(kept: int | None) -> str:
    """The preflight saw the server drop the start of a long prompt without refusing it."""
    size = f" (it kept ~{kept} tokens)" if kept else ""
    return (
        f"give the server a context that holds the suite's longest prompt and max_tokens{size}: Ollama's num_ctx "
        "(the lane's extra_body options, or the Modelfile), llama.cpp -c, vLLM --max-model-len, SGLang "
        "--context-length; a server that cuts silently makes long tasks wrong, not refused"
    )


AUTO_GIVES_NO_CALL = (
    'under tool_choice "auto" the server returned no structured call where "required" did: check its tool parser '
    "(vLLM --enable-auto-tool-choice --tool-call-parser NAME), or send tool_choice \"required\" (a task that expects "
    "no call cannot pass then)"
)


def budget_cuts(max_tokens: object) -> str:
    """Most of the preflight's answers to the suite's own prompts stopped at max_tokens."""
    now = f" (now {max_tokens})" if max_tokens is not None else " (the lane sets none: the server's default)"
    return (
        f"raise the lane's max_tokens{now} to what the model's answers (and its reasoning) need, or turn thinking "
        "down: a cut answer scores as wrong"
    )


def system_dropped(server: ServerFacts | None) -> str:
    """The chat template left the system message out of the prompt (the same prompt tokens with it and without)."""
    if server is not None and server.kind == "llama.cpp":
        where = "llama-server's --chat-template or --chat-template-file"
    elif server is not None and server.kind == "ollama":
        where = "the Modelfile's TEMPLATE (it must write .System)"
    elif server is not None and server.kind in ("vllm", "sglang"):
        where = "the server's --chat-template"
    else:
        where = "the server's chat template"
    return (
        f"serve a chat template that writes the system message ({where}), or put the lane's instructions in the "
        "user message: a system prompt the model never sees changes nothing, and the run measures without it"
    )


def stop_in_reasoning(server: ServerFacts | None) -> str:
    """A stop string the lane sends ended a reply inside its reasoning, before any answer."""
    name = {"vllm": "vLLM", "sglang": "SGLang", "llama.cpp": "llama-server", "ollama": "Ollama"}.get(
        server.kind if server is not None and server.kind else "", "this server"
    )
    return (
        f"{name} applies the lane's stop strings to the reasoning too: take them out of the lane's extra_body (stop), "
        "or choose strings the reasoning never writes; a reply stopped in its thinking has no answer to score"
    )


def think_prefilled() -> str:
    return (
        "if the chat template opens the thinking in the prompt, set think_prefilled = true for this lane "
        "(--think-prefilled to rescore)"
    )


# --- said while a run goes on, by the client and the progress line -----------------------------------------------
# What to change, said after a server's own reason when it refused a request (run/refusals.py holds which answer
# gets which): the run has not ended, so these name the flag the server's message names, without the manifest.

JINJA_OFF = "start llama-server with --jinja, without --no-jinja"
AUTO_TOOL_CHOICE_OFF = "start vLLM with --enable-auto-tool-choice and the --tool-call-parser of the model"
NO_TOOLS_IN_TEMPLATE = "serve a model whose chat template supports tools"
FIELD_NOT_ACCEPTED = "leave the field out of the lane's requests (omit_fields, or take it out of extra_body)"
MODEL_NOT_SERVED = "serve the lane's model, or set the lane's model to a name GET /v1/models lists"
CONTEXT_TOO_SMALL = (
    "give the server a larger context (llama.cpp -c, vLLM --max-model-len, SGLang --context-length) or lower max_tokens"
)
BATCH_TOO_SMALL = "raise llama-server's --ubatch-size (and --batch-size)"
KEY_REFUSED = "check the lane's api_key_env against the server's key"
PATH_NOT_FOUND = "check the lane's model, and that its base_url ends in /v1"
METHOD_NOT_ALLOWED = "check that the lane's base_url ends in /v1"
NOT_IMPLEMENTED = "start the server with what the request needs, or leave that out of the lane's requests"


def timeout_hint(timeout_s: float) -> str:
    """Said once, when the first attempt of a run passes timeout_s (docs/lanes.md, timeout_s); `timeout_advice`
    says the same with the run's counts once it has ended."""
    return (
        f"a request got no complete answer within timeout_s = {timeout_s:g} s: a slow server needs a lower "
        "max_tokens (a runaway answer costs up to timeout_s per attempt), or a timeout_s raised to what max_tokens "
        "takes at its speed (docs/lanes.md)"
    )
