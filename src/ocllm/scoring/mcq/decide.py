"""The MCQ final-answer policy: statements found in the regions -> one Decision."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from ocllm.models import Policy, Sample
from ocllm.scoring.evidence import bounded
from ocllm.scoring.mcq.candidates import TaskContext, rank
from ocllm.scoring.mcq.decision import Ambiguity, Candidate, McqDecision, Method, Rule
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.option_lines import find_bare_letter, find_option_claims, find_option_lines
from ocllm.scoring.mcq.statements import (
    MAX_STATEMENT_PLACES,
    find_statements,
    statement_places,
    task_context,
    value_contradiction,
)
from ocllm.scoring.mcq.values import normalize, same_value
from ocllm.scoring.mcq.withdrawal import withdraw
from ocllm.scoring.regions import split_regions


class _Pick(NamedTuple):
    letter: str | None
    ambiguity: Ambiguity
    rule: Rule
    reason: str
    method: Method
    hedged: bool = False
    statement: Candidate | None = None  # the statement that decided


def decide_mcq(task: McqTask, sample: Sample, policy: Policy) -> McqDecision:
    ctx = task_context(task.options or [], task.prompt)
    gold = (task.answer or "").upper() or None
    regions = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled)
    # The bound on statements (rule 2): a region with more places where a marker may begin than any answer writes
    # is not read, so that a decision's cost is bounded; the same verdict on any machine.
    places = statement_places(regions.visible)
    if places > MAX_STATEMENT_PLACES:
        return McqDecision(task_id=task.id, task_type=task.type, category=task.category, expected_answer=gold,
                        extracted_final_answer=None, extraction_source="none", extraction_method="none",
                        ambiguity="too_many_statements", correct=False, rule="too_many_statements",
                        reason=f"the visible content was not read: {_past_bound(places)}; not credited",
                        truncated=sample.finish_reason == "length")  # fmt: skip
    reasoning_places = statement_places(regions.reasoning)
    reasoning_unread = reasoning_places > MAX_STATEMENT_PLACES

    found = (
        find_statements(regions.visible, "content", ctx)
        + find_option_claims(regions.visible, "content", ctx)
        + find_option_lines(regions.visible, ctx)
    )
    found.sort(key=lambda c: c.start)  # visible pieces all come from `content`: reading order
    if not found:
        bare = find_bare_letter(regions.visible, ctx)
        found = [bare] if bare is not None else []
    # Statements in the reasoning decide only with the fallback: only then is R8c worth its cost there.
    in_reasoning = [
        c
        for c in find_statements(regions.reasoning, "reasoning", ctx, check_restated=policy.allow_reasoning_fallback)
        if not c.placeholder
    ] if not reasoning_unread else []  # fmt: skip
    reading = _Reading(found, sample.content or "", ctx, task)
    steps = [step.name for step in STEPS if step.marks(reading)]
    other_questions = reading.other_questions
    # Echoes of the prompt's placeholder ("The answer is (X)") and statements the model took back are
    # kept as evidence, and never decide.
    visible = [c for c in found if not _ignored(c)]
    echoes = [c for c in found if _ignored(c)]

    source: Literal["content", "reasoning", "none"]
    if visible:
        source = "content"
        pick = _select(visible, policy, "visible content")
        if in_reasoning:
            pick = pick._replace(reason=f"{pick.reason}; {len(in_reasoning)} statement(s) in the reasoning ignored")
        elif reasoning_unread:  # the visible answer decides whatever the reasoning holds (rule 6)
            pick = pick._replace(reason=f"{pick.reason}; the reasoning was not read: {_past_bound(reasoning_places)}")
    elif other_questions:
        # Only answers labelled for other numbered questions (few-shot exemplars answered again): which of
        # them is this task's, nothing says.
        source = "content"
        numbers = ", ".join(other_questions)
        pick = _Pick(
            None,
            "ambiguous_final_answer",
            "answers_other_questions",
            f"visible content: answers labelled for numbered questions {numbers}, none marked as this one",
            "none",
        )
    elif reasoning_unread:
        # What the reasoning states would decide here (a fallback) or be named (an answer only in the reasoning).
        source = "none"
        reason = f"the reasoning was not read: {_past_bound(reasoning_places)}; not credited"
        pick = _Pick(None, "too_many_statements", "too_many_statements", reason, "none")
    elif in_reasoning and policy.allow_reasoning_fallback:
        source = "reasoning"
        pick = _select(in_reasoning, policy, "reasoning (fallback allowed)")
        if pick.rule == "final_statement":
            pick = pick._replace(rule="reasoning_fallback")
    elif in_reasoning:
        source = "none"
        pick = _Pick(
            None,
            "answer_only_in_reasoning",
            "answer_only_in_reasoning",
            f"no statement in the visible content; the reasoning holds {len(in_reasoning)} "
            "and reasoning fallback is off",
            "none",
        )
    else:
        source = "none"
        empty = not regions.visible_text().strip()
        elsewhere = sum("for_another_question" in c.reading for c in echoes)
        if empty:
            why = "the visible content is empty"
        elif elsewhere:
            why = f"no statement answers this task's own question; {elsewhere} answer(s) other questions"
        else:
            why = "no final-answer statement in the visible content"
        pick = _Pick(None, "no_extractable_answer", "no_statement", why, "none")

    shown = bounded(sorted(visible + echoes, key=lambda c: c.start), pick.statement)
    candidates = shown + bounded(in_reasoning, pick.statement)
    left_out = len(visible) + len(echoes) + len(in_reasoning) - len(candidates)
    return McqDecision(
        task_id=task.id,
        task_type=task.type,
        category=task.category,
        expected_answer=gold,
        extracted_final_answer=pick.letter,
        extraction_source=source,
        extraction_method=pick.method,
        ambiguity=pick.ambiguity,
        correct=pick.letter is not None and pick.letter == gold,
        rule=pick.rule,
        reason=pick.reason,
        candidates=candidates,
        decided_by=next((i for i, c in enumerate(candidates) if c is pick.statement), None),
        reasoning_statements=len(in_reasoning),
        truncated=sample.finish_reason == "length",
        hedged=source != "none" and pick.hedged,
        candidates_left_out=left_out,
        reading_steps=steps,
    )




@dataclass
class _Reading:
    """What the reading steps look at and mark: the visible statements found, in reading order, the visible text,
    the task; `other_questions` is what the step of that name found (the numbers answered, when every statement
    answers another numbered question)."""

    found: list[Candidate]
    content: str
    ctx: TaskContext
    task: McqTask
    other_questions: list[str] = field(default_factory=list)

    def visible(self) -> list[Candidate]:
        """The statements that may still decide: not an echo, not taken back, not another question's."""
        return [c for c in self.found if not _ignored(c)]


def _withdrawn(r: _Reading) -> None:
    withdraw(r.found, r.content)


def _invented_questions(r: _Reading) -> None:
    if not _keep_own_question(r.found, r.content, r.ctx.options, r.task.question):
        _drop_invented_questions(r.found, r.content)


def _other_questions(r: _Reading) -> None:
    r.other_questions = mark_other_questions(r.found, r.content, r.task.prompt)


class Step(NamedTuple):
    """One named step of reading the statements found (docs/scoring/mcq.md, "Reading steps"): it marks statements
    with readings (and a contradiction), never adds or removes one. `marks` runs it and says whether it marked any."""

    name: str
    run: Callable[[_Reading], None]

    def marks(self, r: _Reading) -> bool:
        before = [(len(c.reading), c.contradiction) for c in r.found]
        self.run(r)
        return before != [(len(c.reading), c.contradiction) for c in r.found]


# The chain, in the order it runs: what one step marks, the next reads (an ignored statement is no later step's).
STEPS: tuple[Step, ...] = (
    Step("withdrawn", _withdrawn),
    Step("invented_questions", _invented_questions),
    Step("other_questions", _other_questions),
    Step("exemplar_answers", lambda r: mark_exemplar_answers(r.found, r.ctx.exemplar_letters)),
    Step("labels_before_letters", lambda r: _labels_before_letters(r.visible())),
    Step("values_before_letters", lambda r: _values_before_letters(r.visible())),
    Step("values_after_letters", lambda r: _values_after_letters(r.visible(), r.ctx)),
)


def _past_bound(places: int) -> str:
    return (
        f"it holds {places:,} places where a marker may begin (final, answer, boxed, correct, most, …), more than "
        f"the bound of {MAX_STATEMENT_PLACES:,}"
    )


# A base model run without a stop sequence answers, then writes a new question of its own, with options,
# and answers that too. Statements after the first such invented question are not about this task.
_INVENTED_QUESTION = re.compile(
    r"\n[ \t]*(?:#+[ \t]*)?(?:\*\*)?(?:Question[ \t]*\d*[ \t]*(?:\*\*)?[:.]|Q\d*[ \t]*(?:\*\*)?:)", re.IGNORECASE
)
_ITS_OPTIONS = re.compile(r"\n[ \t]*(?:Options?[ \t]*:|\(?[A-J][.)][ \t]+\S)|\bOptions?[ \t]*:")


# A question block of the visible text: "Question:" (numbered or not) at a line start.
_QUESTION_BLOCK = re.compile(r"(?:^|\n)[ \t]*(?:#+[ \t]*)?(?:\*\*)?Question[ \t]*\d*[ \t]*(?:\*\*)?[:.]", re.IGNORECASE)
_BLOCK_OPTION_LINE = re.compile(r"^[ \t]*\(?([A-Z])[.)][ \t]+(\S.*?)[ \t]*$", re.MULTILINE)
# How many of the task's own options a block must list, each under its own letter and none other, to be
# this task's question restated (all of them when there are fewer).
_OWN_OPTIONS_SHOWN = 3


def _keep_own_question(found: list[Candidate], content: str, options: list[str], question: str) -> bool:
    """A few-shot prompt's exemplars answered again, one "Question: ... Options: ... The answer is (F)" block
    each, and then this task's own question restated with its answer: the block that lists this task's
    own options (and holds its question, when the task's text is known) is this task's; statements outside
    it answer other questions (`for_another_question`). Only when the text opens with such blocks: a model
    that answered first and then wrote more questions invented them (R3e), even with the same options.
    Returns whether such a block was found (then R3e does not apply)."""
    if "uestion" not in content or not options:
        return False
    blocks = [m.start() for m in _QUESTION_BLOCK.finditer(content)]
    if len(blocks) < 2 or any(c.field == "content" and c.start < blocks[0] for c in found):
        return False
    bounds = list(zip(blocks, [*blocks[1:], len(content)], strict=True))
    asked = normalize(question)[:60]
    own = [
        (start, end)
        for start, end in bounds
        if _lists_own_options(content[start:end], options) and asked in normalize(content[start:end])
    ]
    if not own:
        return False
    # Every block of this task's own (a restated question, a loop repeating it) holds its answers.
    for c in found:
        if c.field == "content" and not any(start <= c.start < end for start, end in own):
            c.reading.append("for_another_question")
    return True


def _lists_own_options(block: str, options: list[str]) -> bool:
    shown = agree = 0
    for m in _BLOCK_OPTION_LINE.finditer(block):
        shown += 1
        index = ord(m.group(1)) - ord("A")
        agree += index < len(options) and same_value(m.group(2), options[index])
    # Every option line shown must be the task's own, under its own letter: a base model's invented question
    # often borrows most of the real options (two of them swapped is another question).
    return agree == shown and agree >= min(len(options), _OWN_OPTIONS_SHOWN)


def _drop_invented_questions(found: list[Candidate], content: str) -> None:
    # Counted from the first statement that could decide: an echoed format instruction or a hedge is not
    # yet an answer, and a question restated before the answer is not an invention.
    starts = [c.start for c in found if c.field == "content" and not c.hedged and not c.placeholder]
    if not starts or ("uestion" not in content and "Q" not in content):
        return
    for m in _INVENTED_QUESTION.finditer(content, min(starts)):
        if _ITS_OPTIONS.search(content, m.end(), m.end() + 800):
            for c in found:
                if c.field == "content" and c.start >= m.start():
                    c.reading.append("after_invented_question")
            return


# A label that says which numbered question a statement answers: "Question 4:", "**Q4.**", "- Problem 2 -" at
# the start of a line (its paragraph belongs to it), or "4." / "4)" heading a line that starts with an answer.
_QUESTION_LABEL = re.compile(
    r"^[ \t>]*(?:[-*•+][ \t]+)?(?:\*\*|__)?(?:(?:Question|Problem|Q)[ \t]*#?[ \t]*(?P<q>\d{1,3})\b"
    r"|(?P<n>\d{1,3})[.)][ \t]+(?=(?:\*\*|__)?(?:The[ \t]+)?(?:final[ \t]+|correct[ \t]+)?answer\b))",
    re.IGNORECASE | re.MULTILINE,
)
_PROMPT_QUESTION = re.compile(r"\b(?:Question|Q)[ \t]*#?[ \t]*(\d{1,3})\b", re.IGNORECASE)


def mark_other_questions(found: list[Candidate], content: str, prompt: str | None) -> list[str]:
    """Statements labelled as answers to other numbered questions (a few-shot prompt's exemplars answered
    again: "- Question 4: The answer is (J)") get the reading `for_another_question` and never decide.
    Only when two or more numbered questions are answered, with different letters: one label is just this
    answer's heading, and "1. The answer is (B). 2. The answer is (B)." is one answer said twice.
    A statement labelled with this task's own number (the last one its prompt names) still counts.
    Returns the numbers answered when every visible statement is such an answer, else []."""
    if not content or (
        "uestion" not in content and "Q" not in content and "roblem" not in content and ". " not in content
    ):
        return []
    labels = [
        (m.start(), m.group("q") or m.group("n"), m.group("q") is not None) for m in _QUESTION_LABEL.finditer(content)
    ]
    if len(labels) < 2:
        return []
    own = None
    if prompt:
        named = _PROMPT_QUESTION.findall(prompt)
        own = named[-1] if named else None
    owner: dict[int, str] = {}
    for i, c in enumerate(found):
        if c.field != "content" or not c.letters:
            continue  # a value with no letter answers nothing in particular
        number = _label_of(content, c.start, labels)
        if number is not None:
            owner[i] = number
    answered = sorted(set(owner.values()), key=int)
    # Numbered answers that all name the same letter are one answer said in steps, not several questions.
    if len(answered) < 2 or len({tuple(found[i].letters) for i in owner}) < 2:
        return []
    for i, number in owner.items():
        if number != own:
            found[i].reading.append("for_another_question")
    rest = [c for c in found if not _ignored(c)]
    return [] if rest else [n for n in answered if n != own]


def mark_exemplar_answers(found: list[Candidate], exemplar_letters: tuple[str, ...]) -> None:
    """The prompt's few-shot exemplars answered again before the model's own answer (R3g): when the visible
    letters open with two or more statements naming, in order, the letters the exemplars state, those statements
    get the reading `exemplar_answer` and never decide. The last statement is the model's own and never one."""
    if len(exemplar_letters) < 2:
        return
    firm = [c for c in found if c.field == "content" and c.letters and not c.hedged and not _ignored(c)]
    run = 0
    for c, letter in zip(firm[:-1], exemplar_letters, strict=False):
        if c.kind not in ("answer", "final_answer", "final_colon") or c.letters != [letter]:
            break
        run += 1
    if run >= 2:
        for c in firm[:run]:
            c.reading.append("exemplar_answer")


def _label_of(content: str, pos: int, labels: list[tuple[int, str, bool]]) -> str | None:
    """The number of the label whose block holds `pos`: a "Question N" label's paragraph, or the line of a
    "N." label."""
    at = bisect.bisect_right(labels, pos, key=lambda label: label[0])
    if not at:
        return None
    start, number, is_question = labels[at - 1]
    between = content[start:pos]
    if is_question:
        return None if re.search(r"\n[ \t]*\n", between) else number
    return None if "\n" in between else number


def _labels_before_letters(visible: list[Candidate]) -> None:
    """A lower-case list label before running text ("Final Answer:\n(i) The number is: ... The answer is F."),
    followed by another statement naming a letter, opened a list: it ranks below every letter, hedged ones
    included (reading `letter_follows`). With no letter after it, it is the answer its marker gives (R6)."""
    letter_later = False
    for c in reversed(visible):
        if "list_label" in c.reading and letter_later:
            c.reading.append("letter_follows")
        letter_later = letter_later or bool(c.letters)


def _values_before_letters(visible: list[Candidate]) -> None:
    """A value that is no option, followed by a statement naming a letter ("The answer is 492, which
    corresponds to option C"; "\\boxed{4}" then "Option B is correct") was the working, not the answer:
    it ranks below every letter (reading `letter_follows`). Last of all, it decides (R8b)."""
    letter_later = False  # one pass from the end: a megabyte of statements stays linear
    for c in reversed(visible):
        if not c.letters and letter_later:
            c.reading.append("letter_follows")
        letter_later = letter_later or bool(c.letters)


def _values_after_letters(visible: list[Candidate], ctx: TaskContext) -> None:
    """A value that is no option, stated after a letter in a statement of the same kind ("The answer is (B).
    The answer is 0.25 L."), says that letter again in other words, as a value restated right after a letter
    does (R8c): it ranks below every letter (reading `restates_letter`), and when it contradicts the letter
    ("533 cm^3" where B is 250 cm^3) the letter's statement carries the contradiction. A value matching
    another option is a statement of that option, and may conflict as any other."""
    # The nearest earlier statement of the same rank, by rank, in one forward pass (a value tagged here ranks
    # below every letter from then on, so it is nobody's statement of that rank).
    last_of_rank: dict[int, Candidate] = {}
    for c in visible:
        before = last_of_rank.get(rank(c))
        # Eligible: a value, named by no letter, that is not the value printed beside a letter.
        if c.letters or c.value is None or "letter_follows" in c.reading or before is None or before.letter is None:
            last_of_rank[rank(c)] = c
            continue
        c.reading.append("restates_letter")
        # A separate statement, not a value printed beside its letter: a bare number there is the model's
        # new figure in the option's unit ("(B) … The answer is 7" where B is 5 m), not a figure in another.
        contradiction = value_contradiction(c.value, before.letter, ctx, bare_takes_unit=True)
        if contradiction is not None and before.contradiction is None:
            before.contradiction = f"the later statement {contradiction}"
            before.reading.append("letter_value_mismatch")


def _ignored(candidate: Candidate) -> bool:
    """Kept as evidence, never deciding: placeholder echoes, statements taken back, statements about a
    question the model invented after answering, and answers labelled for other numbered questions."""
    return (
        candidate.placeholder
        or candidate.withdrawn
        or "after_invented_question" in candidate.reading
        or "for_another_question" in candidate.reading
        or "exemplar_answer" in candidate.reading
    )


# Statements of the deciding kind naming this many different letters, this many statements in all, are no answer
# under any policy (rule 3): a few-shot model solving the prompt's exemplars again writes "So the answer is (X)" once a
# block; a model correcting itself ("The answer is (A). Wait… (B). Hmm, no… (C).") names fewer, and policy last
# takes its last word.
CONFLICT_MANY = 3
CONFLICT_MANY_STATEMENTS = 4


def _select(candidates: list[Candidate], policy: Policy, where: str) -> _Pick:
    """Strongest kind present; within it the last statement; then the ambiguity classes."""
    strongest = min(rank(c) for c in candidates)
    group = [c for c in candidates if rank(c) == strongest]
    last = group[-1]
    said = f'{where}: the last {_kind_label(last)} statement "{_short(last.text)}"'
    if last.value is not None and last.letters:
        said += f" (its value matches the text of option {'/'.join(last.letters)})"
    if last.reading:
        said += f" [read by: {', '.join(last.reading)}]"

    def pick(letter: str | None, ambiguity: Ambiguity, rule: Rule, reason: str) -> _Pick:
        hedged = last.hedged or "guess" in last.reading or "list_label" in last.reading
        return _Pick(letter, ambiguity, rule, reason, last.method, hedged, last)

    if not last.letters:
        # "The answer is FINAL: 555." where no option is 555: the model's answer all the same, and no option.
        return pick(None, "out_of_range", "value_not_an_option", f"{said} states {last.value!r}, no option's text")
    if len(last.letters) > 1:
        return pick(None, "ambiguous_final_answer", "several_letters", f"{said} names several letters")
    if last.contradiction is not None:
        # "The answer is: C. 533" where C is 492: the letter says C, the value says something else.
        return pick(
            None,
            "ambiguous_final_answer",
            "letter_value_mismatch",
            f"{said} names {last.letters[0]} but {last.contradiction}: two readings, no single answer",
        )
    if last.out_of_range:
        return pick(None, "out_of_range", "out_of_range", f"{said} names {last.letters[0]}, not an option")
    named = {tuple(c.letters) for c in group}
    if len(named) > 1:
        sequence = " then ".join("/".join(c.letters) for c in group)
        disagree = f"{where}: {_kind_label(last)} statements disagree ({sequence})"
        if len(named) >= CONFLICT_MANY and len(group) >= CONFLICT_MANY_STATEMENTS:
            # Answers to several questions (the prompt's exemplars solved again, invented variants), not a change of
            # mind: none is this question's answer.
            return pick(
                None, "conflicting_final_answers", "conflict_many",
                f"{disagree}: {len(named)} different answers, none of them this question's under any policy",
            )  # fmt: skip
        if policy.conflict_policy == "strict":
            return pick(None, "conflicting_final_answers", "conflict_strict", f"{disagree}; policy strict fails them")
        return pick(
            last.letter,
            "conflicting_final_answers",
            "conflict_last",
            f"{disagree}; policy last takes {last.letter}",
        )
    count = f"{len(group)} statements of this kind agree" if len(group) > 1 else "the only one of its kind"
    return pick(last.letter, "none", "final_statement", f"{said} names {last.letter} ({count})")


_KIND_LABELS = {
    "final_colon": "FINAL:",
    "final_answer": "Final answer",
    "answer": "Answer",
    "boxed": "\\boxed{}",
    "option_line": "option-line",
    "option_claim": "option-is-correct",
    "bare": "bare-letter",
}


def _kind_label(candidate: Candidate) -> str:
    label = _KIND_LABELS.get(candidate.kind, candidate.kind)
    return f"hedged {label}" if candidate.hedged else label


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
