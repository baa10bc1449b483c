"""The Markdown audit of a rescore: what changed, why, and what the input got wrong. Text from the input or a model
is drawn through `visible_text` (its control characters as visible text), the whole audit too."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec

from ocllm import verdict_words
from ocllm.analysis.verdict_scopes import ToolTask, VerdictScopes
from ocllm.documents import InputVerdicts, Paired, UnscorableRecord
from ocllm.formats import SavedRecord
from ocllm.models import Decision
from ocllm.scoring import task_types
from ocllm.summary_words import truncation_words
from ocllm.verdict_words import SCORER_LABEL
from ocllm.visible_text import quoted, visible

__all__ = ["NO_EARLIER_VERDICT", "AuditTally", "left_out_sentence", "render_audit"]


class AuditTally:
    """What the audit reports, gathered one task at a time: counts per scope, and the few tasks it names
    (changed decisions, inconsistent inputs, different extractions), never every task's output."""

    def __init__(self, tool_task: ToolTask | None = None) -> None:
        self.overall = [0, 0, 0]  # [old correct, new correct, tasks]
        self.categories: dict[str, list[int]] = {}  # the same per category
        self.has_old = False
        self.changed: list[tuple[str, str, str, str, str, str]] = []  # id, expected, old, new, rule, reason
        self.inconsistent: list[str] = []
        self.extraction_differs: list[str] = []
        self.differs_by_type: Counter[str] = Counter()
        self.with_reasoning = 0
        self.reasoning_statements = 0
        self.truncated = 0
        self.finish_reasons = 0  # answered samples that recorded a finish_reason: truncation is known for these
        self.answered = 0
        self.counts: dict[str, Counter[str]] = {key: Counter() for key in ("ambiguity", "method", "source", "rule")}
        # The input's verdict and this scorer's for every sample both decided, by task type and the tool's task.
        self.verdicts = VerdictScopes(tool_task)
        self.failed = 0  # tasks whose request failed: left out of the totals
        self.unscorable: list[UnscorableRecord] = []  # records the reader left out, in no figure (set at the end)

    def add(self, record: SavedRecord, d: Decision) -> None:
        previous = record.previous
        # An earlier verdict read: a `correct` of true or false (evalplus's samples and run directories hold none).
        self.has_old = self.has_old or isinstance(previous.get("correct"), bool)
        old, new = previous.get("correct") is True, d.correct is True
        if d.correct is None:
            self.failed += 1  # a failed request: an error, never a wrong answer on either side of the totals
        else:
            for figures in (self.overall, self.categories.setdefault(d.category, [0, 0, 0])):
                figures[0] += old
                figures[1] += new
                figures[2] += 1
        verdict = record.previous_verdict  # None: none, or the whole task's (lm-eval's filter over repeats)
        self.verdicts.add_decided(record, d)
        if verdict is not None and verdict != d.correct:
            self.changed.append(
                (
                    d.task_id,
                    d.expected_answer or "-",
                    _old_extraction(previous, d.task_type),
                    _new_extraction(d),
                    d.rule,
                    d.reason,
                )
            )
        extracted = previous.get("extracted_final_answer")
        if previous.get("correct") is False and extracted is not None and extracted == record.task.answer:
            self.inconsistent.append(record.task.id)
        differs = "extracted_final_answer" in previous and extracted != d.extracted_final_answer
        if differs and task_types.extracts_answer(d.task_type):
            self.extraction_differs.append(d.task_id)
            self.differs_by_type[d.task_type] += 1
        self.with_reasoning += bool(d.reasoning_statements)
        self.reasoning_statements += d.reasoning_statements
        self.truncated += d.truncated
        if record.sample.error is None:
            self.answered += 1
            self.finish_reasons += record.sample.finish_reason is not None
        for key, value in (("ambiguity", d.ambiguity), ("method", d.extraction_method),
                           ("source", d.extraction_source), ("rule", d.rule)):  # fmt: skip
            self.counts[key][value] += 1

    @property
    def unpaired(self) -> int:
        """Samples one side left undecided: a failed request, or no verdict in the input."""
        return self.verdicts.unpaired_samples

    def scopes(self, label: str) -> InputVerdicts | None:
        """The input's verdicts (side A, called `label`) against this scorer's (side B) on the samples both
        decided, per task type and the tool's task; None when the input recorded no verdict."""
        return self.verdicts.figures(label)

    def paired(self, label: str) -> Paired | None:
        """The pooled figures over every type (the headline only where there is one type)."""
        scopes = self.scopes(label)
        return scopes.pooled if scopes is not None else None


# Said where the input recorded no verdict (a `correct` of true or false) on any task: nothing to count as changed.
NO_EARLIER_VERDICT = "no earlier verdict was read from the input"

LEFT_OUT_SHOWN = 10  # unscorable records named in the one sentence; the audit's table and the document list all


def left_out_sentence(records: list[UnscorableRecord], shown: int = LEFT_OUT_SHOWN) -> str:
    """What the console, the notices and the audit say of the records a reader could not make tasks of."""
    named = ", ".join(f"{r.task_id} ({r.reason})" for r in records[:shown])
    more = ""
    if len(records) > shown:
        more = f", and {len(records) - shown} more (summary.unscorable_records lists them all)"
    noun = "record" if len(records) == 1 else "records"
    return (
        f"left out {len(records)} {noun} this scorer cannot score: {named}{more}; they are in no figure, "
        "neither the input's nor this scorer's"
    )


def render_audit(tally: AuditTally, source_name: str, scorer: dict[str, Any], input_label: str = "the input") -> str:
    lines = [
        f"# Rescoring audit: `{_cell(source_name)}`",
        "",
        f"Scorer {scorer['version']}; conflict policy `{scorer['conflict_policy']}`; reasoning fallback "
        f"{'on' if scorer['allow_reasoning_fallback'] else 'off'}; think prefilled "
        f"{'on' if scorer['think_prefilled'] else 'off'}. Decided from the raw output alone "
        "(`raw_content`, `raw_reasoning`, `finish_reason`, `options`, `expected_answer`); the input's "
        "own decisions were not trusted.",
        "",
    ]
    lines += _verdicts_section(tally, input_label)
    lines += _left_out_section(tally.unscorable)
    lines += [
        "## Totals",
        "",
        "| scope | old | new | change |",
        "|---|---|---|---|",
    ]
    for scope, (old, new, n) in [("all", tally.overall), *sorted(tally.categories.items())]:
        old_cell = _fraction(old, n) if tally.has_old else "n/a"
        change = f"{new - old:+d}" if tally.has_old else "n/a"
        lines.append(f"| {_cell(scope)} | {old_cell} | {_fraction(new, n)} | {change} |")
    if tally.failed:
        failed = f"{tally.failed} task(s) whose request failed are left out of these totals: errors, not wrong answers."
        lines += ["", failed]

    lines += ["", f"## Changed decisions ({len(tally.changed)})", ""]
    if not tally.has_old:
        lines.append(NO_EARLIER_VERDICT.capitalize() + ", so no decision can be counted as changed.")
    elif tally.changed:
        lines += [
            "| task | expected | old | new | rule | reason |",
            "|---|---|---|---|---|---|",
        ]
        for task_id, expected, old_text, new_text, rule, reason in tally.changed:
            lines.append(
                f"| `{_cell(task_id)}` | {_cell(expected)} | {_cell(old_text)} | {_cell(new_text)} | `{rule}` "
                f"| {_cell(reason)} |"
            )
    else:
        lines.append("No decision changed.")

    inconsistent = tally.inconsistent
    lines += [
        "",
        "## Scoring inconsistencies in the input",
        "",
        f"{len(inconsistent)} task(s) are marked `correct: false` although their `extracted_final_answer` "
        "equals `expected_answer`" + (":" if inconsistent else "."),
    ]
    if inconsistent:
        lines.append("")
        lines += [f"- `{_cell(t)}`" for t in inconsistent]

    differs = tally.extraction_differs
    lines += [
        "",
        "## Evidence",
        "",
        f"- The extracted answer (a letter, a number, a program's sha256 against another tool's program text) differs "
        f"from the input's on {len(differs)} task(s)"
        + (f" ({', '.join(f'{kind} {n}' for kind, n in sorted(tally.differs_by_type.items()))}:" if differs else "")
        + (f" {', '.join(f'`{_cell(t)}`' for t in differs)})" if differs else "")
        + "; a different extraction with the same verdict is not counted as a changed decision.",
        f"- {tally.with_reasoning} task(s) hold final-answer statements in their reasoning "
        f"({tally.reasoning_statements} in all); they are counted here and never raise an ambiguity.",
        f"- Truncated responses (`finish_reason: length`): "
        f"{truncation_words(tally.truncated, tally.finish_reasons, tally.answered)}.",
        "",
    ]
    lines += _count_table("Ambiguity classes", "ambiguity", tally.counts["ambiguity"])
    lines += _count_table("Extraction methods", "method", tally.counts["method"])
    lines += _count_table("Extraction sources", "source", tally.counts["source"])
    lines += _count_table("Deciding rules", "rule", tally.counts["rule"])
    return visible("\n".join(lines).rstrip()) + "\n"


def _verdicts_section(tally: AuditTally, label: str) -> list[str]:
    """What a user asks first: the input's own accuracy on these tasks beside the re-scored one, and whether
    the difference is more than chance (the same figures `compare` gives for two lanes), per task type and per
    the tool's task within a type; the pooled figures, with several types, last and named as pooled."""
    verdicts = tally.scopes(label)
    if verdicts is None:
        return []
    lines = verdict_words.scope_lines(verdicts)
    several = len(lines) > 1
    out = [f"## {_cell(label)} against {SCORER_LABEL}" + (", per task type" if several else ""), ""]
    if several:
        out += [
            f"Each task type, and each of {_cell(label)}'s tasks within a type, has its own figures and test: "
            "their rules, golds and prompts differ, and one figure over them all would say nothing of any one.",
            "",
        ]
    for line in lines:
        out += _scope_section(line, label, several)
    if note := verdict_words.pooled_note(verdicts):
        out += [_cell(note), ""]
    if tally.unpaired:
        sampled = verdicts.pooled is not None and verdict_words.sampled(verdicts.pooled)
        what = "sample(s)" if sampled else "task(s)"
        out += [
            f"{tally.unpaired} {what} are left out of these figures: the request failed, or the input recorded "
            "no verdict for them.",
            "",
        ]
    return out


# A figure that was not measured (None: one task's samples have no interval or test) reads n/a, never a number.
def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _percent_range(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"{100 * low:.1f}-{100 * high:.1f}%"


def _points_range(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"{100 * low:+.2f} to {100 * high:+.2f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _scope_section(line: verdict_words.ScopeLine, label: str, titled: bool) -> list[str]:
    """One scope's sides, difference and verdict (the pool's without a test: it is no headline)."""
    title = [f"### {_cell(line.name)}", ""] if titled else []
    figures = line.paired
    if figures is None or not figures.n_paired:
        return [*title, _cell(verdict_words.no_statistic(line.unpaired, label)) + ".", ""]
    sampled = verdict_words.sampled(figures)  # a task's samples (inspect's epochs) paired as one task, by shares
    points = verdict_words.signed_points(figures.diff)  # measured wherever a task is paired
    if line.kind == "pooled":
        difference = (
            f"Difference ({SCORER_LABEL} minus {_cell(label)}), pooled: {points} "
            f"({figures.b_wins} task(s) right only here, {figures.a_wins} only in the input); not tested."
        )
    elif sampled:
        difference = (
            f"Difference ({SCORER_LABEL} minus {_cell(label)}): {points}, the mean of the "
            f"{figures.n_paired} tasks' differences of shares correct; 95% t interval clustered on tasks "
            f"{_points_range(figures.diff_ci_low, figures.diff_ci_high)}; {figures.test} p = "
            f"{_p(figures.p_value)} ({figures.b_wins} task(s) with a higher share here, {figures.a_wins} in the input)."
        )
    else:
        difference = (
            f"Difference ({SCORER_LABEL} minus {_cell(label)}): {points}, exact 95% "
            f"CI {_points_range(figures.diff_ci_low, figures.diff_ci_high)}; exact McNemar p = "
            f"{_p(figures.p_value)} ({figures.b_wins} task(s) right only here, {figures.a_wins} only in the input)."
        )
    lines = [
        *title,
        "| verdicts of | correct | accuracy | 95% CI |",
        "|---|---|---|---|",
        f"| {_cell(label)} | {verdict_words.counted(figures, 'a')} | {_percent(figures.a_accuracy)} "
        f"| {_percent_range(figures.a_ci_low, figures.a_ci_high)} |",
        f"| {SCORER_LABEL} | {verdict_words.counted(figures, 'b')} | {_percent(figures.b_accuracy)} "
        f"| {_percent_range(figures.b_ci_low, figures.b_ci_high)} |",
        "",
        *([f"Counted in samples, of {figures.n_paired} tasks; the intervals are clustered on tasks.", ""]
          if sampled else []),
        difference,
        "",
    ]  # fmt: skip
    if line.kind != "pooled":
        lines += [_cell(figures.verdict), ""]
    return lines


def _left_out_section(records: list[UnscorableRecord]) -> list[str]:
    if not records:
        return []
    lines = [
        f"## Records this scorer cannot score ({len(records)})",
        "",
        "The reader " + _cell(left_out_sentence(records)) + ".",
        "",
        "| task | file | where | why |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{_cell(r.task_id)}` | {_cell(r.file)} | {_cell(r.where)} | {_cell(r.reason)} |" for r in records]
    return [*lines, ""]


def _count_table(title: str, key: str, counts: Counter[str]) -> list[str]:
    rows = [f"## {title}", "", f"| {key} | tasks |", "|---|---|"]
    rows += [f"| `{name}` | {n} |" for name, n in counts.most_common()]
    return [*rows, ""]


def _fraction(correct: int, total: int) -> str:
    pct = 100.0 * correct / total if total else 0.0
    return f"{correct}/{total} ({pct:.2f}%)"


def _answer_in_words(record: dict[str, Any], task_type: str) -> str:
    """The answer a record states, in its type's words (a letter, a number, "2 of 3 followed"); "none" for none."""
    known = task_types.TASK_TYPES.get(task_type)
    said = known.extracted_text(record) if known is not None else record.get("extracted_final_answer")
    return "none" if said in (None, "", "—") else str(said)


# Keyed by any value: an input's `correct` is whatever its JSON held (None and a missing one read alike).
_VERDICT_WORDS: dict[object, str] = {True: "correct", False: "incorrect"}


def _old_extraction(previous: dict[str, Any], task_type: str) -> str:
    letter = _answer_in_words(previous, task_type)
    raw = previous.get("tool_answer")
    if previous.get("extracted_final_answer") is None and isinstance(raw, str) and raw.strip():
        letter += f" ({_quoted(raw)})"  # what another tool took, when it is not a letter
    method = previous.get("extraction_method")
    # No extraction recorded (the old harness's record of a code task holds its verdict alone): the verdict's field.
    how = f" via {method}" if method else "; verdict: the input's `correct` field"
    flags = []
    if previous.get("ambiguity_flag"):
        flags.append("ambiguity_flag")
    if previous.get("ambiguity") not in (None, "none"):
        flags.append(str(previous["ambiguity"]))
    said = previous.get("tool_result")  # what the tool said of the sample in its own words (human-eval's result)
    if isinstance(said, str) and said.strip():
        flags.append(f"{previous.get('tool') or 'the tool'} said {_quoted(said, 80)}")
    verdict = _VERDICT_WORDS.get(previous.get("correct"), "unscored")
    suffix = f", {', '.join(flags)}" if flags else ""
    return f"{letter}{how}{suffix} → {verdict}"


def _new_extraction(d: Decision) -> str:
    letter = _answer_in_words(msgspec.to_builtins(d), d.task_type)
    verdict = _VERDICT_WORDS.get(d.correct, "error")
    amb = f", {d.ambiguity}" if d.ambiguity != "none" else ""
    return f"{letter} via {d.extraction_method} from {d.extraction_source}{amb} → {verdict}"


def _quoted(text: str, limit: int = 40) -> str:
    flat = " ".join(visible(text).split())
    return quoted(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _cell(text: str) -> str:
    """Model-derived text inside a Markdown table: one line, no column breaks, no raw HTML, its control characters
    as visible text (before the split, which would take some of them for spaces)."""
    flat = " ".join(visible(str(text)).split())
    return flat.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
