"""The preflight: a few requests to a lane's own server, with the lane's own settings, before its first task, that
find what the server path (not the model) would decide of the scores (docs/lanes.md, "The preflight").

Each probe measures one thing and gives a Finding: `ok`, `problem` (with the change that fits the server, from
advice.py, and whether it will distort this lane's run) or `inconclusive` (the model could not answer the probe, the
server failed it: nothing is claimed). Probes, in order:

- `channel`: where a short answer lands (content, or the reasoning field with content null), and, for a lane with
  thinking off, whether the server reasoned anyway (reasoning text or reasoning tokens);
- `system`: the same question under a system message and under one some sixty tokens longer: a chat template that
  writes the system message counts the longer prompt (the model's obeying it is a witness where no tokens are
  counted); one that drops it counts the same prompt both times;
- `stop` (for a lane that sends stop strings and lets the model think): the model asked to write a stop string in
  its thinking; a reply that ends there, content empty, says the server applies stop strings to the reasoning;
- `context`: the same filler prompt at two lengths, the longer past the suite's longest prompt: a server that counts
  far fewer prompt tokens for the longer one kept only its end, silently (Ollama's `num_ctx`); one that refuses it
  will refuse the suite's long prompts; a code word at the start asked back at both lengths is the model's witness;
- `tools` (for a suite whose requests carry tools): a call asked for under `tool_choice` auto and required, and
  whether it came back structured, as text, or not at all;
- `budget`: the suite's first prompts as the lane sends them, and how many the lane's `max_tokens` cut off.

The requests are counted apart (`Preflight.requests`), never in the run's serving figures or its requests.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from typing import Any, Literal

import msgspec

from ocllm import advice
from ocllm.errors import OcllmError
from ocllm.models import Finding, Preflight, Sample, Task, prompt_tokens, token_counts
from ocllm.run.engine import AttemptWatch, Send
from ocllm.run.lanes import Lane, public_settings
from ocllm.run.prompting import lane_body, request_body
from ocllm.scoring.task_type import text_calls_of
from ocllm.scoring.text_calls import find_text_calls
from ocllm.server_facts import ServerFacts
from ocllm.visible_text import visible

SUM_QUESTION = "What is 17 + 25? Reply with the number only."
SUM_ANSWER = "42"
CODE_WORD = "PELICAN"
SYSTEM_WORD = "BANANA"
_FILLER = "The quiet river runs past the old mill, and the miller counts the sacks of grain one by one. "
# A probe's answers need only a few tokens; its long prompts are what it measures.
_SHORT_ANSWER_TOKENS = 32
# The longer context prompt stands this far past the suite's longest prompt, in tokens.
_PAST_LONGEST = 1.25
# Prompt tokens grow about twice from the shorter to the longer context prompt; less than this says the server cut.
_GROWTH_KEPT = 1.5
_SYSTEM_PADDING = "This instruction holds for every message of this conversation, whatever the message says. "
BUDGET_PROMPTS = 3
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip


# What `run --preflight` takes: "on" (the default) says what it finds, "strict" stops a lane on a problem that will
# distort its run, "off" sends no probe.
PreflightMode = Literal["on", "off", "strict"]
PREFLIGHT_MODES: tuple[str, ...] = PreflightMode.__args__  # type: ignore[attr-defined]


class PreflightStopped(OcllmError):
    """A lane the preflight stopped (`--preflight strict`) before its first task: nothing was written."""


def preflight_lines(lane: str, found: Preflight) -> list[str]:
    """What the console says of a lane's preflight before its first task: each problem, with what to change."""
    lines = []
    for finding in found.findings:
        if finding.outcome != "problem":
            continue
        said = f"preflight of lane {lane!r}, {finding.probe}: {finding.said}"
        if finding.distorts:
            said += " (this will distort the run's scores)"
        lines.append(f"{said}; {finding.change}" if finding.change else said)
    return lines


def preflight_word(found: Preflight | None) -> str:
    """A lane's preflight in the matrix's closing table: "off", "ok", or the probes that found a problem (those that
    will distort the run marked)."""
    if found is None:
        return "off"
    problems = [f"{f.probe}{' (distorts)' if f.distorts else ''}" for f in found.findings if f.outcome == "problem"]
    return ", ".join(problems) if problems else "ok"


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Probe:
    """The requests of one preflight: sent through the lane's engine, each watched by nothing (not the run's)."""

    def __init__(self, lane: Lane, send: Send) -> None:
        self.lane, self._send, self.requests = lane, send, 0

    async def ask(self, name: str, messages: list[dict[str, Any]], **fields: Any) -> Sample:
        self.requests += 1
        body = lane_body(self.lane, messages)
        body.update(fields)
        return await self._send(f"preflight/{name}", body, AttemptWatch)

    async def own(self, name: str, messages: list[dict[str, Any]], **fields: Any) -> Sample:
        """A request of the lane's with these messages only: without the lane's own system prompt."""
        self.requests += 1
        return await self._send(f"preflight/{name}", lane_body(self.lane, messages, fields=fields), AttemptWatch)

    async def body(self, name: str, body: dict[str, Any]) -> Sample:
        self.requests += 1
        return await self._send(f"preflight/{name}", body, AttemptWatch)


async def probe_lane(lane: Lane, tasks: list[Task], send: Send, server: ServerFacts | None) -> Preflight:
    """Every probe, in order, against the lane's server: the findings and what they cost."""
    probe = _Probe(lane, send)
    began = time.monotonic()
    bodies = [request_body(task, lane) for task in _probed_tasks(tasks)]
    findings = [*await _channel(probe, server)]
    context = await _context(probe, bodies)
    # A server that keeps only a prompt's end counts two long system messages alike: that says nothing of the template.
    cuts = context.outcome == "problem" and context.change != advice.CONTEXT_TOO_SMALL  # cut, not refused
    findings.append(await _system(probe, bodies, server, cuts_prompts=cuts))
    stops = _stop_strings(lane_body(lane, []))
    if stops and lane.reasoning != "off":
        findings.append(await _stop(probe, stops[0], server))
    findings.append(context)
    if any(body.get("tools") for body in bodies):
        findings.append(await _tools(probe, server))
    findings.append(await _budget(probe, bodies))
    return Preflight(findings=findings, requests=probe.requests, seconds=round(time.monotonic() - began, 3))


# The tasks whose requests the probes look at, of a suite of any size: the first few (the budget probe sends them), the
# largest as encoded (the longest prompt is among them: a prompt is its task's text in a template), and the first of
# each type (whether the suite's requests carry tools or a system message is the type's and the lane's doing).
_LARGEST = 16


def _probed_tasks(tasks: list[Task]) -> list[Task]:
    chosen = {id(task): task for task in tasks[:BUDGET_PROMPTS]}
    for task in heapq.nlargest(_LARGEST, tasks, key=lambda task: len(_ENCODER.encode(task))):
        chosen.setdefault(id(task), task)
    for task in {task.type: task for task in reversed(tasks)}.values():
        chosen.setdefault(id(task), task)
    return list(chosen.values())


_ENCODER = msgspec.json.Encoder()


async def _channel(probe: _Probe, server: ServerFacts | None) -> list[Finding]:
    lane = probe.lane
    reply = await probe.ask("channel", [{"role": "user", "content": SUM_QUESTION}])
    if reply.error is not None:
        said = f"the server failed the probe: {reply.error}"
        return [Finding(probe="channel", outcome="inconclusive", said=said)]
    content = visible(reply.content or "")
    reasoning = reply.reasoning or ""
    _, reasoning_tokens = token_counts(reply.usage)
    measured = {
        "content": bool(content.strip()), "reasoning": bool(reasoning.strip()), "reasoning_tokens": reasoning_tokens,
        "reasoning_field": reply.reasoning_field, "finish_reason": reply.finish_reason,
    }  # fmt: skip
    found: list[Finding] = []
    if SUM_ANSWER in content:
        found.append(Finding(probe="channel", outcome="ok", said="the answer landed in content", measured=measured))
    elif content.strip() and SUM_ANSWER not in reasoning:
        # The model answered otherwise, yet in content: where the answer lands is what the probe asks.
        said = f"the reply landed in content (not {SUM_ANSWER}: the model answered otherwise)"
        found.append(Finding(probe="channel", outcome="ok", said=said, measured=measured))
    elif SUM_ANSWER in reasoning and not content.strip():
        field = reply.reasoning_field or "the reasoning field"
        distorts = not lane.allow_reasoning_fallback
        said = f"the answer landed only in {field}, content {'null' if reply.content is None else 'empty'}"
        change = advice.answer_in_reasoning(server, lane.reasoning)
        found.append(Finding(probe="channel", outcome="problem", said=said, distorts=distorts, change=change,
                             measured=measured))  # fmt: skip
    else:
        said = f"the model did not answer {SUM_QUESTION!r} with {SUM_ANSWER} (nothing claimed of where answers land)"
        found.append(Finding(probe="channel", outcome="inconclusive", said=said, measured=measured))
    if lane.reasoning == "off" and (reasoning.strip() or (reasoning_tokens or 0) > 0):
        said = "thinking is off in the lane, yet the server reasoned" + (
            f" ({reasoning_tokens} reasoning tokens)" if reasoning_tokens else " (reasoning text came back)"
        )
        found.append(Finding(probe="thinking", outcome="problem", said=said, distorts=True,
                             change=advice.reasoning_not_off(server), measured=measured))  # fmt: skip
    return found


async def _system(
    probe: _Probe, bodies: list[dict[str, Any]], server: ServerFacts | None, cuts_prompts: bool
) -> Finding:
    # Two system messages, the second some sixty tokens longer, rather than one against none: a template that writes
    # a default system message when none is sent (SmolLM2's) counts the same prompt with a short one and without.
    ask = {"role": "user", "content": SUM_QUESTION}
    rule = f"Whatever the user asks, reply with the single word {SYSTEM_WORD} only."
    longer = f"{rule} {_SYSTEM_PADDING * 4}"
    short, long = await asyncio.gather(
        probe.own("system_short", [{"role": "system", "content": rule}, ask], max_tokens=_SHORT_ANSWER_TOKENS),
        probe.own("system_long", [{"role": "system", "content": longer}, ask], max_tokens=_SHORT_ANSWER_TOKENS),
    )
    if short.error is not None or long.error is not None:
        said = f"the server failed the probe: {short.error or long.error}"
        return Finding(probe="system", outcome="inconclusive", said=said)
    counted = [prompt_tokens(short.usage), prompt_tokens(long.usage)]
    obeyed = SYSTEM_WORD.lower() in f"{short.content or ''} {short.reasoning or ''}".lower()
    padding = _approx_tokens(longer) - _approx_tokens(rule)
    measured = {"prompt_tokens": counted, "longer_by": padding, "obeyed": obeyed}
    uses_system = any(m.get("role") == "system" for b in bodies for m in b.get("messages", []))
    if counted[0] is not None and counted[1] is not None:
        grew = counted[1] - counted[0]
        if grew * 2 < padding and cuts_prompts:
            said = "the server cuts long prompts (the context probe): equal counts say nothing of the chat template"
            return Finding(probe="system", outcome="inconclusive", said=said, measured=measured)
        if grew * 2 < padding:
            said = (
                f"the chat template dropped the system message: a system message ~{padding} tokens longer counted "
                f"{counted[1]} prompt tokens against {counted[0]}"
            )
            return Finding(probe="system", outcome="problem", said=said, distorts=uses_system,
                           change=advice.system_dropped(server), measured=measured)  # fmt: skip
        said = f"the system message reached the prompt (~{padding} tokens longer, +{grew} counted)"
        said += ", and the model followed it" if obeyed else ""
        return Finding(probe="system", outcome="ok", said=said, measured=measured)
    if obeyed:
        return Finding(probe="system", outcome="ok", said="the model followed the system message", measured=measured)
    said = "the server counted no prompt tokens and the model did not follow the system message (nothing claimed)"
    return Finding(probe="system", outcome="inconclusive", said=said, measured=measured)


def _stop_strings(body: dict[str, Any]) -> list[str]:
    stop = body.get("stop")
    listed = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    return [s for s in listed if isinstance(s, str) and s.strip()]


async def _stop(probe: _Probe, stop: str, server: ServerFacts | None) -> Finding:
    ask = (
        f"While you think, write the marker {stop} once on a line of its own. Then answer: what is 17 + 25? "
        "Reply with the number only."
    )
    reply = await probe.ask("stop", [{"role": "user", "content": ask}])
    if reply.error is not None:
        return Finding(probe="stop", outcome="inconclusive", said=f"the server failed the probe: {reply.error}")
    content, reasoning = visible(reply.content or "").strip(), (reply.reasoning or "").strip()
    measured = {"stop": stop, "in_reasoning": stop in reasoning, "content": bool(content), "reasoning": bool(reasoning),
                "finish_reason": reply.finish_reason}  # fmt: skip
    if stop in reasoning and content:
        said = f"the stop string {stop!r} stood in the reasoning and the reply went on to its answer"
        return Finding(probe="stop", outcome="ok", said=said, measured=measured)
    if reasoning and not content and reply.finish_reason == "stop":
        said = (
            f"the reply ended in its reasoning with finish_reason stop and no content: the lane's stop string {stop!r} "
            "is applied to the reasoning"
        )
        return Finding(probe="stop", outcome="problem", said=said, distorts=True,
                       change=advice.stop_in_reasoning(server), measured=measured)  # fmt: skip
    said = f"the model did not write {stop!r} in its reasoning (nothing claimed of where stop strings apply)"
    return Finding(probe="stop", outcome="inconclusive", said=said, measured=measured)


async def _context(probe: _Probe, bodies: list[dict[str, Any]]) -> Finding:
    # What a chat template writes of a request, about: its messages and its tools (an agent's two dozen tools are
    # thousands of tokens).
    sizes = (msgspec.json.encode([b.get("messages", []), b.get("tools") or []]).decode() for b in bodies)
    longest = max((_approx_tokens(text) for text in sizes), default=0)
    long_tokens = max(512, int(longest * _PAST_LONGEST))
    asked = {}
    for name, tokens in (("short", long_tokens // 2), ("long", long_tokens)):
        filler = _FILLER * max(1, tokens * 4 // len(_FILLER))
        prompt = f"Remember this code word: {CODE_WORD}.\n\n{filler}\n\nWhat was the code word? Reply with it only."
        asked[name] = await probe.ask(
            f"context_{name}", [{"role": "user", "content": prompt}], max_tokens=_SHORT_ANSWER_TOKENS
        )
    short, long = asked["short"], asked["long"]
    counted = [prompt_tokens(s.usage) for s in (short, long)]
    witness = [CODE_WORD.lower() in f"{s.content or ''} {s.reasoning or ''}".lower() for s in (short, long)]
    measured = {"longest_prompt_tokens": longest, "sent_tokens": [long_tokens // 2, long_tokens],
                "prompt_tokens": counted, "code_word_recalled": witness}  # fmt: skip
    if long.error is not None and long.error_kind == "refused":
        said = f"the server refused a prompt of ~{long_tokens} tokens (the suite's longest is ~{longest}): {long.error}"
        distorts = longest >= long_tokens // 2
        return Finding(probe="context", outcome="problem", said=said, distorts=distorts,
                       change=advice.CONTEXT_TOO_SMALL, measured=measured)  # fmt: skip
    if short.error is not None or long.error is not None:
        said = f"the server failed the probe: {(short.error or long.error)}"
        return Finding(probe="context", outcome="inconclusive", said=said, measured=measured)
    if counted[0] and counted[1] and counted[1] < _GROWTH_KEPT * counted[0]:
        kept = counted[1]
        said = (
            f"the server counted {counted[1]} prompt tokens for a prompt about twice the one it counted {counted[0]} "
            f"for: it keeps only the last ~{kept} tokens of a prompt and drops the start silently"
        )
        return Finding(probe="context", outcome="problem", said=said, distorts=longest > kept,
                       change=advice.context_silently_cut(kept), measured=measured)  # fmt: skip
    if witness[0] and not witness[1]:
        said = (
            f"the model recalled a code word at the start of a ~{long_tokens // 2}-token prompt, not of a "
            f"~{long_tokens}-token one: the server may drop the start of long prompts"
        )
        return Finding(probe="context", outcome="problem", said=said, distorts=True,
                       change=advice.context_silently_cut(None), measured=measured)  # fmt: skip
    said = f"a ~{long_tokens}-token prompt was taken whole (the suite's longest is ~{longest} tokens)"
    if not counted[1]:
        said = f"a ~{long_tokens}-token prompt was taken (the server counted no prompt tokens to check it whole)"
    return Finding(probe="context", outcome="ok", said=said, measured=measured)


async def _tools(probe: _Probe, server: ServerFacts | None) -> Finding:
    ask = [{"role": "user", "content": "What is the weather in Paris right now? Use the tool."}]
    auto, required = await asyncio.gather(
        probe.ask("tools_auto", ask, tools=[WEATHER_TOOL], tool_choice="auto", max_tokens=128),
        probe.ask("tools_required", ask, tools=[WEATHER_TOOL], tool_choice="required", max_tokens=128),
    )
    kinds = {name: _call_kind(reply) for name, reply in (("auto", auto), ("required", required))}
    measured: dict[str, Any] = {"auto": kinds["auto"][0], "required": kinds["required"][0]}
    refused = next((r for r in (auto, required) if r.error_kind in ("misconfigured", "refused")), None)
    if refused is not None:
        said = f"the server refused a request with tools: {refused.error}"
        return Finding(probe="tools", outcome="problem", said=said, distorts=True, measured=measured)
    if kinds["auto"][0] == "structured":
        return Finding(probe="tools", outcome="ok", said="calls came back structured (tool_calls)", measured=measured)
    text = next((k for k in kinds.values() if k[0] == "text"), None)
    if text is not None:
        fmt, where = text[1], text[2]
        calls = text_calls_of(1, "1 preflight answer", {fmt: 1}, {where: 1}, "they would count as no call")
        said = f"a call came back as text ({fmt}, in the {where}), not in tool_calls"
        return Finding(probe="tools", outcome="problem", said=said, distorts=True,
                       change=advice.dropped_calls(calls, server, _lane_record(probe.lane)), measured=measured)
    if kinds["required"][0] == "structured":
        said = 'no call under tool_choice "auto", a structured one under "required"'
        return Finding(probe="tools", outcome="problem", said=said, distorts=True,
                       change=advice.AUTO_GIVES_NO_CALL, measured=measured)  # fmt: skip
    said = "the model made no call, even under tool_choice \"required\" (nothing claimed of the server's parser)"
    return Finding(probe="tools", outcome="inconclusive", said=said, measured=measured)


def _call_kind(reply: Sample) -> tuple[str, str, str]:
    """("structured" | "text" | "none" | "failed", the text format, the field it stood in)."""
    if reply.error is not None:
        return ("failed", "", "")
    if reply.tool_calls:
        return ("structured", "", "")
    for field, text in (("content", reply.content), ("reasoning", reply.reasoning)):
        found = find_text_calls(text) if text else []
        if found:
            return ("text", found[0].format, field)
    return ("none", "", "")


async def _budget(probe: _Probe, bodies: list[dict[str, Any]]) -> Finding:
    sample = bodies[:BUDGET_PROMPTS]
    if not sample:
        return Finding(probe="budget", outcome="inconclusive", said="the suite has no task to try")
    replies = await asyncio.gather(*(probe.body(f"budget_{n}", body) for n, body in enumerate(sample)))
    answered = [r for r in replies if r.error is None]
    cut = sum(1 for r in answered if r.finish_reason == "length")
    measured = {"answers": len(answered), "cut_off": cut, "max_tokens": probe.lane.sampling.get("max_tokens")}
    if not answered:
        return Finding(probe="budget", outcome="inconclusive", said="the server failed every probe", measured=measured)
    if cut * 2 > len(answered):
        said = f"max_tokens cut {cut} of {len(answered)} of the suite's first answers"
        return Finding(probe="budget", outcome="problem", said=said, distorts=True,
                       change=advice.budget_cuts(probe.lane.sampling.get("max_tokens")), measured=measured)
    said = f"{cut} of {len(answered)} of the suite's first answers cut off at max_tokens"
    return Finding(probe="budget", outcome="ok", said=said, measured=measured)


def _lane_record(lane: Lane) -> dict[str, Any]:
    return public_settings(lane)  # the lane as advice reads it everywhere (a manifest's `lane`)
