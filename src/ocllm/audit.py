"""The Markdown audit of a rescore: what changed, why, and what the input got wrong."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ocllm.models import Decision

if TYPE_CHECKING:
    from ocllm.rescore import Rescored


def render_audit(result: Rescored) -> str:
    records = result.source.records
    decisions = result.decisions
    summary = result.document["summary"]
    scorer = summary["scorer"]
    lines = [
        f"# Rescoring audit: `{result.source.path.name}`",
        "",
        f"Scorer {scorer['version']}; conflict policy `{scorer['conflict_policy']}`; reasoning fallback "
        f"{'on' if scorer['allow_reasoning_fallback'] else 'off'}; think prefilled "
        f"{'on' if scorer['think_prefilled'] else 'off'}. Decided from the raw output alone "
        "(`raw_content`, `raw_reasoning`, `finish_reason`, `options`, `expected_answer`); the input's "
        "own decisions were not trusted.",
        "",
        "## Totals",
        "",
        "| scope | old | new | change |",
        "|---|---|---|---|",
    ]
    old_correct = [r.previous.get("correct") is True for r in records]
    has_old = any("correct" in r.previous for r in records)
    categories = sorted({d.category for d in decisions})
    for scope in ["all", *categories]:
        idx = [i for i, d in enumerate(decisions) if scope == "all" or d.category == scope]
        old = sum(old_correct[i] for i in idx)
        new = sum(decisions[i].correct is True for i in idx)
        old_cell = _fraction(old, len(idx)) if has_old else "n/a"
        lines.append(f"| {scope} | {old_cell} | {_fraction(new, len(idx))} | {new - old:+d} |")

    changed = [
        (r, d)
        for r, d in zip(records, decisions, strict=True)
        if isinstance(r.previous.get("correct"), bool) and r.previous["correct"] != d.correct
    ]
    lines += ["", f"## Changed decisions ({len(changed)})", ""]
    if changed:
        lines += [
            "| task | expected | old | new | rule | reason |",
            "|---|---|---|---|---|---|",
        ]
        for r, d in changed:
            lines.append(
                f"| `{_cell(d.task_id)}` | {_cell(d.expected_answer or '-')} | {_cell(_old_extraction(r.previous))} "
                f"| {_cell(_new_extraction(d))} | `{d.rule}` | {_cell(d.reason)} |"
            )
    else:
        lines.append("No decision changed.")

    inconsistent = [
        r.task.id
        for r in records
        if r.previous.get("correct") is False
        and r.previous.get("extracted_final_answer") is not None
        and r.previous.get("extracted_final_answer") == r.task.answer
    ]
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

    extraction_differs = [
        d.task_id
        for r, d in zip(records, decisions, strict=True)
        if "extracted_final_answer" in r.previous
        and r.previous["extracted_final_answer"] != d.extracted_final_answer
        and d.task_type == "mcq"
    ]
    with_reasoning = [d for d in decisions if d.reasoning_statements]
    lines += [
        "",
        "## Evidence",
        "",
        f"- Extracted letter differs from the input's on {len(extraction_differs)} MCQ task(s)"
        + (f" ({', '.join(f'`{_cell(t)}`' for t in extraction_differs)})" if extraction_differs else "")
        + "; a different extraction with the same verdict is not counted as a changed decision.",
        f"- {len(with_reasoning)} task(s) hold final-answer statements in their reasoning "
        f"({sum(d.reasoning_statements for d in with_reasoning)} in all); they are counted here and "
        "never raise an ambiguity.",
        f"- Truncated responses (`finish_reason: length`): {sum(d.truncated for d in decisions)}.",
        "",
    ]
    lines += _count_table("Ambiguity classes", "ambiguity", Counter(d.ambiguity for d in decisions))
    lines += _count_table("Extraction methods", "method", Counter(d.extraction_method for d in decisions))
    lines += _count_table("Extraction sources", "source", Counter(d.extraction_source for d in decisions))
    lines += _count_table("Deciding rules", "rule", Counter(d.rule for d in decisions))
    return "\n".join(lines).rstrip() + "\n"


def _count_table(title: str, key: str, counts: Counter[str]) -> list[str]:
    rows = [f"## {title}", "", f"| {key} | tasks |", "|---|---|"]
    rows += [f"| `{name}` | {n} |" for name, n in counts.most_common()]
    return [*rows, ""]


def _fraction(correct: int, total: int) -> str:
    pct = 100.0 * correct / total if total else 0.0
    return f"{correct}/{total} ({pct:.2f}%)"


def _old_extraction(previous: dict[str, Any]) -> str:
    letter = previous.get("extracted_final_answer") or "none"
    method = previous.get("extraction_method") or "?"
    flags = []
    if previous.get("ambiguity_flag"):
        flags.append("ambiguity_flag")
    if previous.get("ambiguity") not in (None, "none"):
        flags.append(str(previous["ambiguity"]))
    verdict = {True: "correct", False: "incorrect"}.get(previous.get("correct"), "unscored")
    suffix = f", {', '.join(flags)}" if flags else ""
    return f"{letter} via {method}{suffix} → {verdict}"


def _new_extraction(d: Decision) -> str:
    letter = d.extracted_final_answer or "none"
    verdict = {True: "correct", False: "incorrect"}.get(d.correct, "error")
    amb = f", {d.ambiguity}" if d.ambiguity != "none" else ""
    return f"{letter} via {d.extraction_method} from {d.extraction_source}{amb} → {verdict}"


def _cell(text: str) -> str:
    """Model-derived text inside a Markdown table: one line, no column breaks, no raw HTML."""
    flat = " ".join(str(text).split())
    return flat.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
