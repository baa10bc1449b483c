"""Which code of a model's answer runs (docs/scoring/code.md, rules C1-C5, and the program of C7): only the visible
answer is read; its fenced blocks are the candidates; a function task runs the last block that defines the entry
point, a standard-input task the last Python block, each with the imports and definitions it uses from earlier
blocks put before it (only those whose taking runs nothing); an answer without fences runs whole if it is a program,
as a body continuing the code prefix, or as the longest parseable span around `def <entry_point>`. A stub (a def of
the entry point with only its docstring: the prompt restated) never runs in place of the model's code, and the
program's entry point is never the code prefix's stub. Every choice is recorded, with one sentence saying why.
Pure: nothing here runs the model's code."""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ocllm.models import Policy, Sample
from ocllm.scoring.code.blocks import (
    MAX_PARSE_CHARS,
    MAX_PARSES,
    Fence,
    ParseBudget,
    Provided,
    RawPlace,
    binding,
    defines,
    entry_def,
    fence_code,
    fenced_blocks,
    has_body,
    is_stub,
    open_fence,
    pieces,
    provided,
    top_level_names,
    used_names,
)
from ocllm.scoring.code.decision import (
    CodeAmbiguity,
    CodeBlock,
    CodeMethod,
    EntryPointFrom,
    LeftOut,
    NoCodeReason,
    Prepended,
)
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
    # prepended code, then the chosen code (the code prefix is not included; a body's prepended code is in
    # `preamble`); None: no code
    code: str | None
    span: tuple[int, int] | None  # whole_answer / prefix_body / longest_span: offsets in the raw content
    no_code_reason: NoCodeReason | None
    source: Literal["content", "none"]
    left_out: tuple[LeftOut, ...] = ()  # definitions used and given earlier, not taken: taking them would run code
    quoted: bool = False  # the code was taken out of a string the model wrapped it in
    preamble: str = ""  # an indented body's prepended code, which goes before the prefix's def of the entry point
    program: str | None = None  # the exact program (C7): the code prefix (as settled) and the code
    entry_point_from: EntryPointFrom | None = None  # where the program's entry point comes from (C7)
    prefix_stub_left_out: bool = False


@dataclass
class _Seen:
    """What the reading met on its way that decides the reason when nothing runs."""

    stub: bool = False  # a def of the entry point with only its docstring, set aside


def extract_code(task: CodeTask, sample: Sample, policy: Policy) -> Extraction:
    """The code that runs for this answer, and the record of how it was chosen (rules C1-C5, C7). The reasoning
    (the reasoning field, <think> blocks, a harmony analysis) is never read for code, whatever the policy's
    `allow_reasoning_fallback`: code the model did not give as its answer is not its answer."""
    content = sample.content or ""
    regions = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled)
    visible = regions.visible_text()
    place = RawPlace(content, regions.visible)
    budget = ParseBudget(left=MAX_PARSES - 1)  # the last parse is the program's own (C7, `_settle`)
    seen = _Seen()
    # An answer whose start was prefilled inside a fence (lm-eval's *_instruct) begins inside that fence.
    fences = fenced_blocks(visible, open_fence(task.prefill))
    blocks = [_candidate(i, fence, visible, place) for i, fence in enumerate(fences)]
    unclosed = bool(content) and any(
        p.field == "content" and p.offset + len(p.text) == len(content) and p.text.strip() for p in regions.reasoning
    )
    if visible.strip():
        found: Extraction | None
        if any(fence.python and fence_code(visible, fence).strip() for fence in fences):
            found = _from_blocks(task, visible, fences, blocks, place, budget, seen)
        else:
            found = _unfenced(task, visible, place, budget, blocks, seen)
        if found is not None:
            return _settle(task, found, sample) if found.code is not None else found
    reasoned = any(p.text.strip() for p in regions.reasoning)
    return _no_code(blocks, visible, fences, sample, unclosed, reasoned, seen)


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


@dataclass
class _Blocks:
    """The Python blocks of an answer as the rules read them: each one's code (dedented, or taken out of the
    string it was wrapped in, when that is what defines the entry point), its parse, and which are stubs."""

    codes: list[str]
    runnable: list[int]  # the Python blocks with text, in order
    modules: dict[int, ast.Module]  # the blocks that parse (as their code reads)
    bodies: dict[int, ast.Module]  # indented blocks that parse after the code prefix: the prefix and the body
    stubs: set[int]  # blocks whose entry point is a stub, or bodies that add nothing to the prefix's stub
    dedented: set[int]  # indented blocks read with their indentation taken off


def _read_blocks(
    task: CodeTask, visible: str, fences: list[Fence], blocks: list[CodeBlock], budget: ParseBudget
) -> _Blocks:
    codes = [fence_code(visible, fence) for fence in fences]
    runnable = [i for i, fence in enumerate(fences) if fence.python and codes[i].strip()]
    entry = task.entry_point if task.kind == "function" else None
    read = _Blocks(codes, runnable, {}, {}, set(), set())
    for i in reversed(runnable):  # the last blocks first, so a spent budget costs the earliest
        module = budget.parse(codes[i])
        if module is None and entry and _indented(codes[i]) and _def_line(entry).search(codes[i]):
            # A whole function indented in its block (copied out of a class or a list item): its lines dedented.
            # Read after the code prefix it would be a def nested in the prefix's stub, which never runs.
            dedented = textwrap.dedent(codes[i])
            module = budget.parse(dedented)
            if module is not None and has_body(module, entry):
                codes[i] = dedented
                read.dedented.add(i)
            else:
                module = None
        if module is not None and entry and not has_body(module, entry) and _def_line(entry).search(codes[i]):
            quoted = _quoted(module, entry, budget)
            if quoted is not None:  # the model's function wrapped in quotes inside its block
                codes[i], module = quoted
                blocks[i].quoted = True
        if module is not None:
            read.modules[i] = module
            blocks[i].parses = True
            if entry:
                found = entry_def(module, entry)
                blocks[i].defines_entry_point = found is not None and not is_stub(found)
                if found is not None and is_stub(found):
                    read.stubs.add(i)
        elif entry and task.code_prefix and _indented(codes[i]):
            body = _body_after_prefix(task.code_prefix, codes[i], entry, budget)
            if body is not None:
                read.bodies[i] = body.module
                if body.stub:
                    read.stubs.add(i)
    for i in read.stubs:
        blocks[i].stub = True
    return read


def _from_blocks(
    task: CodeTask, visible: str, fences: list[Fence], blocks: list[CodeBlock], place: RawPlace, budget: ParseBudget,
    seen: _Seen,
) -> Extraction:  # fmt: skip
    read = _read_blocks(task, visible, fences, blocks, budget)
    codes, runnable, modules = read.codes, read.runnable, read.modules
    entry = task.entry_point if task.kind == "function" else None
    defining = [i for i in runnable if blocks[i].defines_entry_point]
    seen.stub = seen.stub or bool(read.stubs)
    if entry and not defining and not any(_def_line(entry).search(codes[i]) for i in runnable if i not in read.stubs):
        # The def is outside every fence (the model left out an opening fence, or opened one only after the
        # code): the answer's text is read as if it had none (rule C5), and its blocks stay candidates.
        span = _longest_span(visible, entry, budget, seen)
        if span is not None:
            start, end, code = span
            why = (f"no fenced block defines {entry}(), but the text outside them does: this is the longest span of "
                   f"whole lines holding `def {entry}` that parses")  # fmt: skip
            return _span(blocks, "longest_span", why, code, place, start, end)
    choice = _choose(entry, read, defining)
    if choice is None:
        why = (f"its only code of {entry}() is a stub (a def with only its docstring, the prompt restated), which "
               "never runs in place of an answer")  # fmt: skip
        return _nothing(blocks, "stub_only", why)
    chosen, method, why = choice
    if chosen in read.dedented:
        why += " (its lines were indented as a whole: they are read with that indentation taken off)"
    if blocks[chosen].quoted:
        why += " (inside a string the model wrapped it in: the string's text is the code)"
    chosen_module = modules.get(chosen, read.bodies.get(chosen))
    prepended, before, left_out = _prepend(chosen, read, chosen_module, entry, budget)
    blocks[chosen].role = "ran"
    for item in prepended:
        blocks[item.block].role = "prepended"
    # A body continues the prefix's def: what it uses goes before that def (C7), not between it and the body.
    body = chosen in read.bodies
    code = "\n\n".join([*before, codes[chosen]]) if before and not body else codes[chosen]
    preamble = "\n\n".join(before) if body else ""
    if prepended:
        why += f"; it uses {_listing(prepended)} from earlier blocks, put before it"
    if left_out:
        names = ", ".join(f"`{item.name}` (block {item.block}: {item.why})" for item in left_out)
        why += f"; left out, since taking them would run code: {names}"
    return Extraction(
        method=method, ambiguity=_ambiguity(fences, chosen, defining), blocks=blocks, chosen=chosen, why=why + ".",
        prepended=prepended, code=code, span=None, no_code_reason=None, source="content", left_out=tuple(left_out),
        quoted=blocks[chosen].quoted, preamble=preamble,
    )  # fmt: skip


def _choose(entry: str | None, read: _Blocks, defining: list[int]) -> tuple[int, CodeMethod, str] | None:
    """The block that runs (rules C3, C4), its method, and why; None when every Python block is a stub."""
    runnable, codes = read.runnable, read.codes
    count = len(runnable)
    blocks_word = f"{count} Python block{'s' if count != 1 else ''}"
    if entry is None:
        return runnable[-1], "fenced_last", f"block {runnable[-1]} is the last of {blocks_word} (a standard-input task)"
    if defining:
        chosen = defining[-1]
        several = f", the last of {len(defining)} that do" if len(defining) > 1 else ""
        stubs = f" (block(s) {_numbers(read.stubs)} only restate its stub)" if read.stubs else ""
        return chosen, "fenced_defining", f"block {chosen} defines {entry}() at its top level{several}{stubs}"
    # No parsed block defines it. A block whose text has the def line but does not parse still runs, so that the
    # program reports its own syntax error rather than the answer counting as one without code.
    broken = [i for i in runnable if i not in read.modules and _def_line(entry).search(codes[i])]
    if broken:
        chosen = broken[-1]
        return chosen, "fenced_defining", f"block {chosen} has a `def {entry}` line but does not parse as Python"
    candidates = [i for i in runnable if i not in read.stubs]
    if not candidates:
        return None
    chosen = candidates[-1]
    body = " (an indented body: after the code prefix it completes the function)" if chosen in read.bodies else ""
    stubs = f"; block(s) {_numbers(read.stubs)} only restate its stub and never run" if read.stubs else ""
    why = f"no block defines {entry}(), so the last of {blocks_word} runs as written{body}{stubs}"
    return chosen, "fenced_last", why


def _numbers(indices: set[int]) -> str:
    return ", ".join(str(i) for i in sorted(indices))


def _indented(code: str) -> bool:
    first = next((line for line in code.split("\n") if line.strip()), "")
    return first[:1] in (" ", "\t")


def _def_line(entry: str) -> re.Pattern[str]:
    """A `def <entry>(` line at any indentation (the text test, for blocks that do not parse)."""
    return re.compile(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(entry)}[ \t]*\(", re.MULTILINE)


def _joined(prefix: str) -> str:
    return prefix if prefix.endswith("\n") else prefix + "\n"


class _Body(NamedTuple):
    """An indented code read after the code prefix."""

    module: ast.Module  # the prefix and the code, parsed together
    code: bool  # the code adds a statement of its own to the entry point's def (not only a bare name or string)
    stub: bool  # the entry point's def is still a stub: the code added nothing but strings and comments


def _body_after_prefix(prefix: str, code: str, entry: str, budget: ParseBudget) -> _Body | None:
    """An indented code read after the code prefix; None when they do not parse together."""
    joined = _joined(prefix)
    module = budget.parse(joined + code)
    if module is None:
        return None
    found = entry_def(module, entry)
    if found is None:
        return _Body(module, True, False)  # the prefix's last function is not the entry point: the code completes it
    lines = joined.count("\n")
    own = [statement for statement in found.body if statement.lineno > lines]
    return _Body(module, _looks_like_code(own), is_stub(found))


def _quoted(module: ast.Module, entry: str, budget: ParseBudget) -> tuple[str, ast.Module] | None:
    """The model's code wrapped in quotes: the last top-level string of the module whose text parses and defines
    the entry point with a body (a def inside a string is otherwise never code). None when there is none."""
    for node in reversed(module.body):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        text = node.value.value
        if not isinstance(text, str) or not _def_line(entry).search(text):
            continue
        code = textwrap.dedent(text).strip("\n").rstrip()
        inner = budget.parse(code)
        if inner is not None and has_body(inner, entry):
            return code, inner
    return None


def _prepend(
    chosen: int, read: _Blocks, module: ast.Module | None, entry: str | None, budget: ParseBudget
) -> tuple[list[Prepended], list[str], list[LeftOut]]:
    """The imports, defs, classes and constants the chosen block uses (transitively) that earlier Python blocks
    define and it does not, in their order; for each name the latest earlier definition is taken. A block that does
    not parse offers what its pieces do (each definition parsed alone). A definition whose taking would run code is
    left out, and listed with why. The entry point itself is never taken from an earlier block."""
    if module is None:
        return [], [], []
    offers: dict[str, tuple[int, Provided]] = {}
    for i in read.runnable:
        if i >= chosen:
            break
        for offer in _offers(i, read, budget):
            if offer.name != entry:
                offers[offer.name] = (i, offer)  # a later block's definition replaces an earlier one's
    own = top_level_names(module)
    wanted = [name for name in sorted(used_names(module.body)) if name not in own]
    taken: dict[tuple[int, int], Provided] = {}
    labels: dict[tuple[int, int], list[str]] = {}
    left_out: list[LeftOut] = []
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen or name not in offers:
            continue
        seen.add(name)
        block, offer = offers[name]
        refused = offer.refused or _not_library(offer, offers)
        if refused is not None:
            left_out.append(LeftOut(block=block, name=offer.label, why=refused))
            continue
        key = (block, offer.line)
        labels.setdefault(key, []).append(offer.label)
        if key not in taken:
            taken[key] = offer
            wanted.extend(n for n in sorted(used_names([offer.statement])) if n not in own and n not in seen)
    order = sorted(taken)
    by_block: dict[int, list[str]] = {}
    for key in order:
        by_block.setdefault(key[0], []).extend(sorted(labels[key]))
    prepended = [Prepended(block=b, names=names) for b, names in by_block.items()]
    return prepended, [taken[key].source for key in order], sorted(left_out, key=lambda item: (item.block, item.name))


def _offers(index: int, read: _Blocks, budget: ParseBudget) -> list[Provided]:
    if index in read.modules:
        return provided(read.modules[index], read.codes[index])
    found: list[Provided] = []
    for first, text in pieces(read.codes[index]):
        piece = budget.parse(text)
        if piece is not None:
            found.extend(provided(piece, text, first))
    return found


def _not_library(offer: Provided, offers: dict[str, tuple[int, Provided]]) -> str | None:
    """Why a decorated definition is left out: one of its decorators is named like the standard library's but is a
    def, class or constant of the model's own, which applying it would run."""
    for root in offer.library:
        other = offers.get(root)
        if other is not None and other[1].kind != "import":
            return f"its decorator `{root}` is the model's own {other[1].label}, which applying it would run"
    return None


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
    task: CodeTask, visible: str, place: RawPlace, budget: ParseBudget, blocks: list[CodeBlock], seen: _Seen
) -> Extraction | None:
    """The code of an answer without a Python block: the whole answer, a body continuing the code prefix, or the
    longest parseable span around `def <entry_point>`, tried in that order; then, when none of them parses, the
    model's own code as written (so that it reports its syntax error); None when none applies."""
    entry = task.entry_point if task.kind == "function" else None
    start, end = _trimmed(visible)
    whole = visible[start:end]
    module = budget.parse(whole)
    is_program = module is not None and _looks_like_code(module)
    if entry is not None and module is not None and defines(module, entry) and not has_body(module, entry):
        seen.stub = True
    if is_program and (entry is None or has_body(module, entry)):  # type: ignore[arg-type]
        what = f"defines {entry}()" if entry else "is a program"
        return _span(blocks, "whole_answer", f"the answer has no fenced block and as a whole parses and {what}",
                     whole, place, start, end)  # fmt: skip
    if entry is None:
        return None
    if module is not None and (quoted := _quoted(module, entry, budget)) is not None:
        code, _ = quoted
        at = _text_at(whole, code)
        q_start, q_end = (start + at, start + at + len(code)) if at >= 0 else (start, end)
        why = (f"the answer has no fenced block and is code wrapped in quotes: the string's text defines {entry}() "
               "and is the code")  # fmt: skip
        return _span(blocks, "whole_answer", why, code, place, q_start, q_end, quoted=True)
    body = _prefix_body(task, visible, entry, budget, seen)
    if body is not None:
        body_start, body_end = body
        why = "the answer has no fenced block and is an indented body that parses as the rest of the code prefix"
        return _span(blocks, "prefix_body", why, visible[body_start:body_end], place, body_start, body_end)
    span = _longest_span(visible, entry, budget, seen)
    if span is not None:
        span_start, span_end, code = span
        return _span(blocks, "longest_span", f"the answer has no fenced block; this is the longest span of whole lines "
                     f"holding `def {entry}` that parses", code, place, span_start, span_end)  # fmt: skip
    if is_program and not defines(module, entry):  # type: ignore[arg-type]
        return _span(blocks, "whole_answer", f"the answer has no fenced block and parses as a program, but defines "
                     f"no {entry}(); it runs as written", whole, place, start, end)  # fmt: skip
    if module is None and _code_from_first_line(whole, entry):
        # All code, none of it parsing (a missing bracket, a cut): it runs whole, so that the program reports its
        # own syntax error rather than the answer counting as prose.
        return _span(blocks, "whole_answer", f"the answer has no fenced block, begins as code and has a `def {entry}` "
                     "line but does not parse; it runs as written", whole, place, start, end)  # fmt: skip
    broken = _broken_def(visible, entry, budget)
    if broken is not None:
        top, bottom, code = broken
        why = (f"the answer has no fenced block and no span holding `def {entry}` parses: the last such def and the "
               "lines under it run as written, so that the program reports its own syntax error")  # fmt: skip
        return _span(blocks, "longest_span", why, code, place, top, bottom)
    if _broken_body(task, whole, budget):
        why = ("the answer has no fenced block and is an indented body that does not parse after the code prefix; it "
               "runs as written, so that the program reports its own syntax error")  # fmt: skip
        return _span(blocks, "prefix_body", why, whole, place, start, end)
    return None


def _text_at(whole: str, code: str) -> int:
    """Where a string's text stands in the answer (-1 when escapes or dedenting changed it)."""
    return whole.find(code) if code else -1


# How a text that begins as code begins: a def, an import, a class, a decorator, or an assignment to a name
# (HumanEval/64's prompt starts `FIX = """`).
_CODE_START = re.compile(r"(?:def |async def |import |from |class |@|[A-Za-z_]\w*[ \t]*=[^=])")


def _code_from_first_line(text: str, entry: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    def_line = re.compile(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(entry)}\b", re.MULTILINE)
    return _CODE_START.match(first) is not None and def_line.search(text) is not None


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


def _looks_like_code(module: ast.Module | list[ast.stmt]) -> bool:
    """Whether parsed text is code rather than prose that happens to parse ("Yes", "None", a lone name or
    string): some statement other than a bare expression, or a call."""
    body = module.body if isinstance(module, ast.Module) else module
    return any(not isinstance(node, ast.Expr) or isinstance(node.value, ast.Call | ast.Await) for node in body)


def _prefix_body(task: CodeTask, visible: str, entry: str, budget: ParseBudget, seen: _Seen) -> tuple[int, int] | None:
    """The span of an indented body that continues the code prefix (a HumanEval completion): the answer's first
    line is indented, the prefix followed by the answer parses, and the answer adds a statement of its own to the
    entry point's def (a docstring or comments alone leave the prompt's stub). A whole function indented (its
    lines dedented define the entry point) is not a body: it would be a def nested in the stub."""
    prefix = task.code_prefix
    if not prefix or not prefix.strip():
        return None
    start, end = _trimmed(visible)
    text = visible[start:end]
    if not text or text[0] not in " \t":
        return None
    if _def_line(entry).search(text):
        inner = budget.parse(textwrap.dedent(text))
        if inner is not None and defines(inner, entry):
            return None
    body = _body_after_prefix(prefix, text, entry, budget)
    if body is None:
        return None
    if body.stub:
        seen.stub = True
    if body.stub or not body.code:
        return None
    return start, end


def _broken_body(task: CodeTask, whole: str, budget: ParseBudget) -> bool:
    """Whether an answer that does not parse after the code prefix is an indented body all the same: a function
    task with a code prefix, the answer's first line indented, and its first line of code a statement (it parses
    alone, given a `pass` under it when it opens a block, and is not a bare name or string)."""
    if not task.code_prefix or whole[:1] not in (" ", "\t"):
        return False
    first = next((line.strip() for line in whole.split("\n") if line.strip() and not line.strip().startswith("#")), "")
    if not first:
        return False
    probe = budget.parse(first + ("\n    pass" if first.endswith(":") else ""))
    if probe is None or not _looks_like_code(probe):
        return False
    return budget.parse(_joined(task.code_prefix) + whole) is None  # else it was a body, or a stub, already


def _def_starts(lines: list[str], entry: str) -> list[int]:
    def_line = re.compile(rf"^([ \t]*)(?:async[ \t]+)?def[ \t]+{re.escape(entry)}[ \t]*\(")
    return [i for i, line in enumerate(lines) if def_line.match(line)][-MAX_SPAN_STARTS:]


def _line_starts(lines: list[str]) -> list[int]:
    starts_at = [0]
    for line in lines[:-1]:
        starts_at.append(starts_at[-1] + len(line) + 1)
    return starts_at


def _longest_span(visible: str, entry: str, budget: ParseBudget, seen: _Seen) -> tuple[int, int, str] | None:
    """The longest parseable span of whole lines that holds `def <entry>` at its indentation, with a body (a span
    whose def is a stub is never taken): from each such line (the last MAX_SPAN_STARTS of them), the def and the
    lines indented under it, with the imports and decorators directly above it when the whole still parses; cut
    back at its blank lines when it does not."""
    lines = visible.split("\n")
    best: tuple[int, int, str] | None = None
    for first in reversed(_def_starts(lines, entry)):
        found = _span_from(lines, first, entry, budget, seen)
        if found is None:
            continue
        top, bottom, code = found
        size = bottom - top
        if best is None or size > best[1] - best[0]:
            best = (top, bottom, code)
    if best is None:
        return None
    top, bottom, code = best
    starts_at = _line_starts(lines)
    start = starts_at[top] + _indent_width(lines[top])
    end = starts_at[bottom - 1] + len(lines[bottom - 1].rstrip())
    return start, end, code


def _span_from(
    lines: list[str], first: int, entry: str, budget: ParseBudget, seen: _Seen
) -> tuple[int, int, str] | None:
    """The parseable span (top line, bottom line exclusive, code) grown from the def at line `first`: the def with
    the lines under it (cut back at its blank lines until it parses), then, greedily, the definitions below it (a
    helper after the def, blank lines between) and whole statements above it (a decorator or import before it)
    while the span still parses. None when no cut parses, or the def that parses is a stub."""
    indent = _indent_width(lines[first])
    bottom = _chunk_end(lines, first, indent)
    cuts = [bottom, *[i for i in range(bottom - 1, first, -1) if not lines[i].strip()][:MAX_CUTS_PER_START]]
    top, end = first, None
    for cut in cuts:
        module = budget.parse(_dedented(lines[first:cut], indent))
        if module is not None:
            if not has_body(module, entry):  # a signature and its docstring: shorter cuts are no more
                seen.stub = True
                return None
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
            module = budget.parse(_dedented(lines[top:grown], indent))
            if module is None or not has_body(module, entry):
                break  # a stub of the entry point below it is never taken
            end = grown
    while top > 0:
        above = top - 1
        while above > 0 and (not lines[above].strip() or _indent_width(lines[above]) > indent):
            above -= 1
        if _indent_width(lines[above]) != indent or not lines[above].strip():
            break
        module = budget.parse(_dedented(lines[above:end], indent))
        if module is None or not has_body(module, entry):
            break
        top = above
    return top, end, _dedented(lines[top:end], indent)


def _broken_def(visible: str, entry: str, budget: ParseBudget) -> tuple[int, int, str] | None:
    """The model's def of the entry point as written, when no span holding it parses: from the last `def
    <entry>` line whose def and lines under it do not parse, those lines (offsets in the visible text, code)."""
    lines = visible.split("\n")
    starts_at = _line_starts(lines)
    for first in reversed(_def_starts(lines, entry)):
        indent = _indent_width(lines[first])
        bottom = _chunk_end(lines, first, indent)
        code = _dedented(lines[first:bottom], indent)
        if budget.parse(code) is None:
            start = starts_at[first] + indent
            end = starts_at[bottom - 1] + len(lines[bottom - 1].rstrip())
            return start, end, code
    return None


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
    blocks: list[CodeBlock], method: CodeMethod, why: str, code: str, place: RawPlace, start: int, end: int,
    *, quoted: bool = False,
) -> Extraction:  # fmt: skip
    span = (place.offset(start), place.end_offset(end))
    return Extraction(
        method=method, ambiguity="none", blocks=blocks, chosen=None, why=why + ".", prepended=[], code=code,
        span=span, no_code_reason=None, source="content", quoted=quoted,
    )  # fmt: skip


# --- rule C7: the program starts with the code prefix, never with its stub in place of the answer ----------------


def _settle(task: CodeTask, found: Extraction, sample: Sample) -> Extraction:
    """The exact program, and where its entry point comes from (rule C7). The program is the code prefix, then the
    code; it is parsed once more, whole (outside the parse budget): when the chosen code neither defines the entry
    point nor continues the prefix's def of it, that def (the prompt's stub) is left out of the program, so that the
    run reports the entry point missing rather than running the stub; a program whose entry point would still be a
    stub never runs (no code, `stub_only`)."""
    code = found.code or ""
    entry = task.entry_point if task.kind == "function" else None
    head = _joined(task.code_prefix) if task.code_prefix else ""
    if entry is not None and found.preamble:
        head = _before_entry(head, entry, found.preamble)
    if entry is None:
        return found._replace(program=head + code)
    program = head + code
    module = _parse_program(program)
    if module is None:
        why = found.why[:-1] + "; the program does not parse: it runs so that the model's code reports its error."
        return found._replace(program=program, entry_point_from="unparsed", why=why)
    lines = head.count("\n")
    bound = binding(module, entry)
    if bound is not None and bound.lineno > lines:
        if isinstance(bound, ast.FunctionDef | ast.AsyncFunctionDef) and is_stub(bound):
            return _stub_only(found, entry, sample)
        return found._replace(program=program, entry_point_from="answer")
    if isinstance(bound, ast.FunctionDef | ast.AsyncFunctionDef) and (bound.end_lineno or 0) > lines:
        if is_stub(bound):
            return _stub_only(found, entry, sample)
        return found._replace(program=program, entry_point_from="answer_body")
    if bound is None:
        return found._replace(program=program, entry_point_from="none")
    # The prefix binds the entry point and the chosen code neither binds it nor continues it: the prefix's def of
    # it (HumanEval's stub, a signature and a docstring) is left out, and nothing of the prompt stands in for it.
    first = min([bound.lineno, *(d.lineno for d in getattr(bound, "decorator_list", []))])
    kept = head.split("\n")
    del kept[first - 1 : bound.end_lineno or bound.lineno]
    why = (found.why[:-1] + f"; it defines no {entry}() and does not continue the code prefix's, so the prefix's "
           f"stub of {entry}() is left out of the program, and the run reports the entry point missing.")  # fmt: skip
    program = "\n".join(kept) + code
    return found._replace(program=program, entry_point_from="none", prefix_stub_left_out=True, why=why)


def _before_entry(head: str, entry: str, preamble: str) -> str:
    """The code prefix with an indented body's prepended code put before its def of the entry point (and that def's
    decorators); before the whole prefix when it has no such def at column 0."""
    lines = head.split("\n")
    def_line = re.compile(rf"(?:async[ \t]+)?def[ \t]+{re.escape(entry)}[ \t]*\(")
    at = next((i for i in range(len(lines) - 1, -1, -1) if def_line.match(lines[i])), None)
    if at is None:
        return preamble + "\n\n" + head
    while at > 0 and lines[at - 1].startswith("@"):
        at -= 1
    return "\n".join([*lines[:at], *preamble.split("\n"), "", "", *lines[at:]])


def _parse_program(program: str) -> ast.Module | None:
    if len(program) > MAX_PARSE_CHARS:
        return None
    return ParseBudget(left=1).parse(program)


def _stub_only(found: Extraction, entry: str, sample: Sample) -> Extraction:
    for block in found.blocks:
        block.role = "not_run"
    cut = " (the answer was cut at the token limit)" if sample.finish_reason == "length" else ""
    return _nothing(found.blocks, "stub_only", f"the program's {entry}() would be a stub (a def with only its "
                    f"docstring, the prompt restated), which never runs in place of an answer{cut}")  # fmt: skip


# --- no code ----------------------------------------------------------------------------------------------------


def _no_code(
    blocks: list[CodeBlock], visible: str, fences: list[Fence], sample: Sample, unclosed: bool, reasoned: bool,
    seen: _Seen,
) -> Extraction:  # fmt: skip
    """Why nothing runs, the most telling reason first: the thinking never closed (so the answer never began), the
    answer is empty (though the model reasoned, or not at all), its only code of the entry point is a stub (the
    prompt restated), it was cut at the token limit, its only blocks are in another language, or it is prose."""
    if unclosed:
        return _nothing(blocks, "unclosed_think", "the thinking (a <think> block or a harmony analysis) never closed, "
                        "so the answer never began; code in the reasoning is never run")  # fmt: skip
    if not visible.strip():
        if reasoned:
            return _nothing(blocks, "reasoning_only", "the visible answer is empty and only the reasoning has text; "
                            "code in the reasoning is never run")  # fmt: skip
        return _nothing(blocks, "empty", "the answer is empty")
    if seen.stub:
        cut = " (the answer was cut at the token limit)" if sample.finish_reason == "length" else ""
        return _nothing(blocks, "stub_only", "its only code of the entry point is a stub (a def with only its "
                        f"docstring, the prompt restated), which never runs in place of an answer{cut}")  # fmt: skip
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
