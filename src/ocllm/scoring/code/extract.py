"""Which code of a model's answer runs (docs/scoring/code.md, rules C1-C5): only the visible answer is read; its
fenced blocks are the candidates; a function task runs the last block that defines the entry point, a standard-input
task the last Python block, each with the imports and definitions it uses from earlier blocks put before it; an
answer without fences runs whole if it is a program, as a body continuing the code prefix, or as the longest
parseable span around `def <entry_point>`. Every choice is recorded, with one sentence saying why. Pure: nothing
here runs the model's code."""

from __future__ import annotations

import ast
import re
from typing import Literal, NamedTuple

from ocllm.models import Policy, Sample
from ocllm.scoring.code.blocks import (
    Fence,
    ParseBudget,
    Provided,
    RawPlace,
    defines,
    fence_code,
    fenced_blocks,
    open_fence,
    provided,
    statement_source,
    top_level_names,
    used_names,
)
from ocllm.scoring.code.decision import CodeAmbiguity, CodeBlock, CodeMethod, NoCodeReason, Prepended
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.regions import split_regions

# The `def <entry_point>` lines the longest-span rule starts from: the last ones (a long answer repeating its
# function hundreds of times costs the same), each tried whole, then cut at its blank lines from the end.
MAX_SPAN_STARTS = 16
MAX_CUTS_PER_START = 8


class Extraction(NamedTuple):
    method: CodeMethod
    ambiguity: CodeAmbiguity
    blocks: list[CodeBlock]  # every fenced block of the visible answer, with its role
    chosen: int | None  # the block that runs (fenced methods), else None
    why: str  # one sentence: why this block or span, or why nothing
    prepended: list[Prepended]  # imports and definitions taken from earlier blocks, by block
    code: str | None  # prepended code, then the chosen code (the code prefix is not included); None: no code
    span: tuple[int, int] | None  # whole_answer / prefix_body / longest_span: offsets in the raw content
    no_code_reason: NoCodeReason | None
    source: Literal["content", "none"]


def extract_code(task: CodeTask, sample: Sample, policy: Policy) -> Extraction:
    """The code that runs for this answer, and the record of how it was chosen (rules C1-C5). The reasoning (the
    reasoning field, <think> blocks, a harmony analysis) is never read for code, whatever the policy's
    `allow_reasoning_fallback`: code the model did not give as its answer is not its answer."""
    content = sample.content or ""
    regions = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled)
    visible = regions.visible_text()
    place = RawPlace(content, regions.visible)
    budget = ParseBudget()
    # An answer whose start was prefilled inside a fence (lm-eval's *_instruct) begins inside that fence.
    fences = fenced_blocks(visible, open_fence(task.prefill))
    blocks = [_candidate(i, fence, visible, place) for i, fence in enumerate(fences)]
    unclosed = bool(content) and any(
        p.field == "content" and p.offset + len(p.text) == len(content) and p.text.strip() for p in regions.reasoning
    )
    if visible.strip():
        if any(fence.python and fence_code(visible, fence).strip() for fence in fences):
            return _from_blocks(task, visible, fences, blocks, place, budget)
        found = _unfenced(task, visible, place, budget, blocks)
        if found is not None:
            return found
    return _no_code(blocks, visible, fences, sample, unclosed, any(p.text.strip() for p in regions.reasoning))


# --- the candidates ---------------------------------------------------------------------------------------------


def _candidate(index: int, fence: Fence, visible: str, place: RawPlace) -> CodeBlock:
    start = place.offset(fence.body_start)
    end = place.end_offset(fence.body_end) if fence.body_end > fence.body_start else start
    last_line = place.line(end - 1) if end > start else place.line(start)
    return CodeBlock(
        index=index, start=start, end=end, first_line=place.line(start), last_line=last_line, label=fence.label,
        closed=fence.closed, python=fence.python,
    )  # fmt: skip


# --- rules C2-C4: fenced blocks ---------------------------------------------------------------------------------


def _from_blocks(
    task: CodeTask, visible: str, fences: list[Fence], blocks: list[CodeBlock], place: RawPlace, budget: ParseBudget
) -> Extraction:
    codes = [fence_code(visible, fence) for fence in fences]
    runnable = [i for i, fence in enumerate(fences) if fence.python and codes[i].strip()]
    modules: dict[int, ast.Module] = {}
    for i in reversed(runnable):  # the last blocks first, so a spent budget costs the earliest
        module = budget.parse(codes[i])
        if module is not None:
            modules[i] = module
            blocks[i].parses = True
    entry = task.entry_point if task.kind == "function" else None
    defining = [i for i in runnable if i in modules and entry and defines(modules[i], entry)]
    for i in defining:
        blocks[i].defines_entry_point = True
    if entry and not defining and not any(_def_line(entry).search(codes[i]) for i in runnable):
        # The def is outside every fence (the model left out an opening fence, or opened one only after the
        # code): the answer's text is read as if it had none (rule C5), and its blocks stay candidates.
        span = _longest_span(visible, entry, budget)
        if span is not None:
            start, end, code = span
            why = (f"no fenced block defines {entry}(), but the text outside them does: this is the longest span of "
                   f"whole lines holding `def {entry}` that parses")  # fmt: skip
            return _span(blocks, "longest_span", why, code, place, start, end)
    chosen, method, why = _choose(entry, runnable, defining, codes)
    prepended, before = _prepend(chosen, runnable, modules, codes)
    blocks[chosen].role = "ran"
    for item in prepended:
        blocks[item.block].role = "prepended"
    code = "\n\n".join([*before, codes[chosen]]) if before else codes[chosen]
    if prepended:
        why += f"; it uses {_listing(prepended)} from earlier blocks, put before it"
    return Extraction(
        method=method, ambiguity=_ambiguity(fences, chosen, defining), blocks=blocks, chosen=chosen, why=why + ".",
        prepended=prepended, code=code, span=None, no_code_reason=None, source="content",
    )  # fmt: skip


def _choose(
    entry: str | None, runnable: list[int], defining: list[int], codes: list[str]
) -> tuple[int, CodeMethod, str]:
    """The block that runs (rules C3, C4), its method, and why."""
    count = len(runnable)
    blocks_word = f"{count} Python block{'s' if count != 1 else ''}"
    if entry is None:
        return runnable[-1], "fenced_last", f"block {runnable[-1]} is the last of {blocks_word} (a standard-input task)"
    if defining:
        chosen = defining[-1]
        several = f", the last of {len(defining)} that do" if len(defining) > 1 else ""
        return chosen, "fenced_defining", f"block {chosen} defines {entry}() at its top level{several}"
    # No parsed block defines it. A block whose text has the def line but does not parse still runs, so that the
    # program reports its own syntax error rather than the answer counting as one without code.
    broken = [i for i in runnable if _def_line(entry).search(codes[i])]
    if broken:
        chosen = broken[-1]
        return chosen, "fenced_defining", f"block {chosen} has a `def {entry}` line but does not parse as Python"
    chosen = runnable[-1]
    body = " (an indented body: after the code prefix it completes the function)" if _indented(codes[chosen]) else ""
    return chosen, "fenced_last", f"no block defines {entry}(), so the last of {blocks_word} runs as written{body}"


def _indented(code: str) -> bool:
    first = next((line for line in code.split("\n") if line.strip()), "")
    return first[:1] in (" ", "\t")


def _def_line(entry: str) -> re.Pattern[str]:
    """A `def <entry>(` line at any indentation (the text test, for blocks that do not parse)."""
    return re.compile(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(entry)}[ \t]*\(", re.MULTILINE)


def _prepend(
    chosen: int, runnable: list[int], modules: dict[int, ast.Module], codes: list[str]
) -> tuple[list[Prepended], list[str]]:
    """The imports, defs, classes and constants the chosen block uses (transitively) that earlier Python blocks
    define and it does not, in their order; for each name the latest earlier definition is taken."""
    module = modules.get(chosen)
    if module is None:
        return [], []
    own = top_level_names(module)
    offers: dict[str, tuple[int, Provided]] = {}
    for i in runnable:
        if i < chosen and i in modules:
            for offer in provided(modules[i]):
                offers[offer.name] = (i, offer)  # a later block's definition replaces an earlier one's
    wanted = [name for name in sorted(used_names(module.body)) if name not in own]
    taken: dict[tuple[int, int], tuple[int, ast.stmt]] = {}
    labels: dict[tuple[int, int], list[str]] = {}
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen or name not in offers:
            continue
        seen.add(name)
        block, offer = offers[name]
        key = (block, offer.statement.lineno)
        labels.setdefault(key, []).append(offer.label)
        if key not in taken:
            taken[key] = (block, offer.statement)
            wanted.extend(n for n in sorted(used_names([offer.statement])) if n not in own and n not in seen)
    order = sorted(taken)
    sources = [statement_source(codes[block], statement) for block, statement in (taken[k] for k in order)]
    by_block: dict[int, list[str]] = {}
    for key in order:
        by_block.setdefault(key[0], []).extend(sorted(labels[key]))
    return [Prepended(block=b, names=names) for b, names in by_block.items()], sources


def _listing(prepended: list[Prepended]) -> str:
    return ", ".join(f"`{name}` (block {item.block})" for item in prepended for name in item.names)


def _ambiguity(fences: list[Fence], chosen: int, defining: list[int]) -> CodeAmbiguity:
    """What stood in the way of one clear reading: the chosen block never closed (its end is a guess), else
    several blocks define the entry point, else some other fence never closed."""
    if not fences[chosen].closed:
        return "unclosed_fence"
    if len(defining) > 1:
        return "several_defining_blocks"
    if any(not fence.closed for fence in fences):
        return "unclosed_fence"
    return "none"


# --- rule C5: no fences -----------------------------------------------------------------------------------------


def _unfenced(
    task: CodeTask, visible: str, place: RawPlace, budget: ParseBudget, blocks: list[CodeBlock]
) -> Extraction | None:
    """The code of an answer without a Python block: the whole answer, a body continuing the code prefix, or the
    longest parseable span around `def <entry_point>`, tried in that order; None when none applies."""
    entry = task.entry_point if task.kind == "function" else None
    start, end = _trimmed(visible)
    whole = visible[start:end]
    module = budget.parse(whole)
    is_program = module is not None and _looks_like_code(module)
    if is_program and (entry is None or defines(module, entry)):
        what = f"defines {entry}()" if entry else "is a program"
        return _span(blocks, "whole_answer", f"the answer has no fenced block and as a whole parses and {what}",
                     whole, place, start, end)  # fmt: skip
    if entry is None:
        return None
    body = _prefix_body(task, visible, budget)
    if body is not None:
        body_start, body_end = body
        why = "the answer has no fenced block and is an indented body that parses as the rest of the code prefix"
        return _span(blocks, "prefix_body", why, visible[body_start:body_end], place, body_start, body_end)
    span = _longest_span(visible, entry, budget)
    if span is not None:
        span_start, span_end, code = span
        return _span(blocks, "longest_span", f"the answer has no fenced block; this is the longest span of whole lines "
                     f"holding `def {entry}` that parses", code, place, span_start, span_end)  # fmt: skip
    if is_program:
        return _span(blocks, "whole_answer", f"the answer has no fenced block and parses as a program, but defines "
                     f"no {entry}(); it runs as written", whole, place, start, end)  # fmt: skip
    if _code_from_first_line(whole, entry):
        # All code, none of it parsing (a missing bracket, a cut): it runs whole, so that the program reports its
        # own syntax error rather than the answer counting as prose.
        return _span(blocks, "whole_answer", f"the answer has no fenced block, begins as code and has a `def {entry}` "
                     "line but does not parse; it runs as written", whole, place, start, end)  # fmt: skip
    return None


def _code_from_first_line(text: str, entry: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    starts = ("def ", "async def ", "import ", "from ", "class ", "@")
    def_line = re.compile(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(entry)}\b", re.MULTILINE)
    return first.startswith(starts) and def_line.search(text) is not None


def _trimmed(text: str) -> tuple[int, int]:
    """The span of the text without its leading blank lines and trailing whitespace (the first line's own
    indentation is kept: it is what makes a body a body)."""
    start = 0
    for match in re.finditer(r"[^\S\n]*\n", text):
        if match.start() != start:
            break
        start = match.end()
    end = len(text.rstrip())
    return (start, end) if end > start else (0, 0)


def _looks_like_code(module: ast.Module) -> bool:
    """Whether parsed text is code rather than prose that happens to parse ("Yes", "None", a lone name or
    string): some statement other than a bare expression, or a call."""
    return any(not isinstance(node, ast.Expr) or isinstance(node.value, ast.Call | ast.Await) for node in module.body)


def _prefix_body(task: CodeTask, visible: str, budget: ParseBudget) -> tuple[int, int] | None:
    """The span of an indented body that continues the code prefix (a HumanEval completion): the answer's first
    line is indented and the prefix followed by the answer parses."""
    prefix = task.code_prefix
    if not prefix or not prefix.strip():
        return None
    start, end = _trimmed(visible)
    text = visible[start:end]
    if not text or text[0] not in " \t":
        return None
    joined = prefix if prefix.endswith("\n") else prefix + "\n"
    if budget.parse(joined + text) is None:
        return None
    return start, end


def _longest_span(visible: str, entry: str, budget: ParseBudget) -> tuple[int, int, str] | None:
    """The longest parseable span of whole lines that holds `def <entry>` at its indentation: from each such line
    (the last MAX_SPAN_STARTS of them), the def and the lines indented under it, with the imports and decorators
    directly above it when the whole still parses; cut back at its blank lines when it does not."""
    lines = visible.split("\n")
    starts_at = [0]
    for line in lines[:-1]:
        starts_at.append(starts_at[-1] + len(line) + 1)
    def_line = re.compile(rf"^([ \t]*)(?:async[ \t]+)?def[ \t]+{re.escape(entry)}[ \t]*\(")
    starts = [i for i, line in enumerate(lines) if def_line.match(line)][-MAX_SPAN_STARTS:]
    best: tuple[int, int, str] | None = None
    for first in reversed(starts):
        found = _span_from(lines, first, budget)
        if found is None:
            continue
        top, bottom, code = found
        size = bottom - top
        if best is None or size > best[1] - best[0]:
            best = (top, bottom, code)
    if best is None:
        return None
    top, bottom, code = best
    start = starts_at[top] + _indent_width(lines[top])
    end = starts_at[bottom - 1] + len(lines[bottom - 1].rstrip())
    return start, end, code


def _span_from(lines: list[str], first: int, budget: ParseBudget) -> tuple[int, int, str] | None:
    """The parseable span (top line, bottom line exclusive, code) grown from the def at line `first`: the def with
    the lines under it (cut back at its blank lines until it parses), then, greedily, the definitions below it (a
    helper after the def, blank lines between) and whole statements above it (a decorator or import before it)
    while the span still parses."""
    indent = _indent_width(lines[first])
    bottom = _chunk_end(lines, first, indent)
    cuts = [bottom, *[i for i in range(bottom - 1, first, -1) if not lines[i].strip()][:MAX_CUTS_PER_START]]
    top, end = first, None
    for cut in cuts:
        if budget.parse(_dedented(lines[first:cut], indent)) is not None:
            end = cut
            break
    if end is None:
        return None
    if end == bottom:  # the def is whole: take the definitions after it (a helper below it) while the span parses
        while True:
            below = end
            while below < len(lines) and not lines[below].strip():
                below += 1  # blank lines between definitions, as models write them
            if below == len(lines) or _indent_width(lines[below]) != indent or not _DEFINITION.match(lines[below]):
                break  # anything else below (its own asserts, prints, a call) is a usage example: never run
            grown = _chunk_end(lines, below, indent)
            if budget.parse(_dedented(lines[top:grown], indent)) is None:
                break
            end = grown
    while top > 0:
        above = top - 1
        while above > 0 and (not lines[above].strip() or _indent_width(lines[above]) > indent):
            above -= 1
        if _indent_width(lines[above]) != indent or not lines[above].strip():
            break
        if budget.parse(_dedented(lines[above:end], indent)) is None:
            break
        top = above
    return top, end, _dedented(lines[top:end], indent)


# A line that starts a definition the code may use: an import, a def (async too), a class, a decorator.
_DEFINITION = re.compile(r"[ \t]*(?:import[ \t]|from[ \t]|def[ \t]|async[ \t]+def[ \t]|class[ \t]|@)")


def _chunk_end(lines: list[str], start: int, indent: int) -> int:
    """The end (exclusive) of the statement starting at line `start`: the lines indented under it, trailing blank
    lines left out."""
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent_width(lines[end]) > indent):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _indent_width(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _dedented(lines: list[str], width: int) -> str:
    return "\n".join(line[width:] if line[:width].strip() == "" else line.lstrip() for line in lines).strip("\n")


def _span(
    blocks: list[CodeBlock], method: CodeMethod, why: str, code: str, place: RawPlace, start: int, end: int
) -> Extraction:
    span = (place.offset(start), place.end_offset(end))
    return Extraction(
        method=method, ambiguity="none", blocks=blocks, chosen=None, why=why + ".", prepended=[], code=code,
        span=span, no_code_reason=None, source="content",
    )  # fmt: skip


# --- no code ----------------------------------------------------------------------------------------------------


def _no_code(
    blocks: list[CodeBlock], visible: str, fences: list[Fence], sample: Sample, unclosed: bool, reasoned: bool
) -> Extraction:
    """Why nothing runs, the most telling reason first: the thinking never closed (so the answer never began), the
    answer is empty (though the model reasoned, or not at all), it was cut at the token limit, its only blocks are
    in another language, or it is prose."""
    if unclosed:
        return _nothing(blocks, "unclosed_think", "the thinking (a <think> block or a harmony analysis) never closed, "
                        "so the answer never began; code in the reasoning is never run")  # fmt: skip
    if not visible.strip():
        if reasoned:
            return _nothing(blocks, "reasoning_only", "the visible answer is empty and only the reasoning has text; "
                            "code in the reasoning is never run")  # fmt: skip
        return _nothing(blocks, "empty", "the answer is empty")
    if sample.finish_reason == "length":
        return _nothing(blocks, "cut_off", "the answer was cut at the token limit before any code that parses")
    if any(not fence.python and visible[fence.body_start : fence.body_end].strip() for fence in fences):
        return _nothing(blocks, "other_language", "its only fenced blocks are in another language, and those never run")
    return _nothing(blocks, "prose_only", "the visible answer has no fenced block and no text that parses as code")


def _nothing(blocks: list[CodeBlock], reason: NoCodeReason, why: str) -> Extraction:
    return Extraction(
        method="none", ambiguity="none", blocks=blocks, chosen=None, why=why + ".", prepended=[], code=None,
        span=None, no_code_reason=reason, source="none",
    )  # fmt: skip
