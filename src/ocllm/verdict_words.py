"""The input's verdicts against this scorer's in words, the same on the console, in the audit and in the reports:
which scopes are headlines (each task type, each of the tool's tasks within a type), what each says, and the
pooled figures named as pooled."""

from __future__ import annotations

from typing import Literal, NamedTuple

from ocllm.documents import InputVerdicts, Paired

# What this scorer's side of those verdicts is called, in every table and sentence.
SCORER_LABEL = "ocllm's scorer"
# Changed decisions a rescore lists on the terminal (and keeps in memory: the audit, --report, lists every one).
CHANGES_LISTED = 30

ScopeKind = Literal["type", "task", "pooled"]


class ScopeLine(NamedTuple):
    """One scope to draw: its name, whether it is a type, one of the tool's tasks or the pool, and its figures."""

    name: str  # "mcq (arc_easy)", "math", "math / gsm8k", "pooled over 3 task types"
    kind: ScopeKind
    paired: Paired | None  # None: no sample of it was paired, so no statistic
    unpaired: int


def scope_lines(verdicts: InputVerdicts) -> list[ScopeLine]:
    """Each type (named with its one task, when the tool's tasks of it are one), then each of its tasks when they
    are several; last, with several types, the figures pooled over them all."""
    lines: list[ScopeLine] = []
    for name, of_type in verdicts.by_type.items():
        tasks = list(of_type.by_task.items())
        title = f"{name} ({tasks[0][0]})" if len(tasks) == 1 else name
        lines.append(ScopeLine(title, "type", of_type.paired, of_type.unpaired))
        if len(tasks) > 1:
            lines += [ScopeLine(f"{name} / {task}", "task", f.paired, f.unpaired) for task, f in tasks]
    if len(verdicts.by_type) > 1:
        lines.append(ScopeLine(pooled_name(verdicts), "pooled", verdicts.pooled, verdicts.unpaired))
    return lines


def pooled_name(verdicts: InputVerdicts) -> str:
    return f"pooled over {len(verdicts.by_type)} task types"


def pooled_note(verdicts: InputVerdicts) -> str | None:
    """What the pooled figures are, where there are several types: a record, not a headline."""
    if len(verdicts.by_type) < 2:
        return None
    return (
        f"The figures {pooled_name(verdicts)} ({', '.join(verdicts.by_type)}) mix scorers of different kinds: they "
        "are no headline and carry no test; read each type and task above."
    )


def headline(line: ScopeLine, label: str) -> str | None:
    """The sentence of a type or a task: its own verdict, or that there is nothing to test. None for the pool."""
    if line.kind == "pooled":
        return None
    if line.paired is None or not line.paired.n_paired:
        return f"{line.name}: {no_statistic(line.unpaired, label)}"
    return f"{line.name}: {line.paired.verdict}"


def no_statistic(unpaired: int, label: str) -> str:
    left = f" ({unpaired} left out: the request failed, or {label} recorded no verdict)" if unpaired else ""
    return f"no task both decided{left}, so no statistic"


def sampled(paired: Paired) -> bool:
    """A task's samples paired as one task (paired.paired_by_task): the correct counts are of samples then. Told by
    the samples, not by `mcnemar_p` being None: it is None too where nothing was paired."""
    return paired.test != "exact McNemar" or max(paired.samples_per_task_a, paired.samples_per_task_b) > 1


def counted(paired: Paired, side: Literal["a", "b"]) -> str:
    """`3/4`: a side's correct samples of those paired (tasks, with one sample each)."""
    correct = paired.a_correct if side == "a" else paired.b_correct
    of = (paired.a_samples if side == "a" else paired.b_samples) if sampled(paired) else paired.n_paired
    return f"{correct}/{of}"


def difference(paired: Paired) -> str:
    """`+25.00 points (95% CI +0.00 to +50.00)`: this scorer minus the input; n/a for what was not measured."""
    low, high = paired.diff_ci_low, paired.diff_ci_high
    interval = "n/a" if low is None or high is None else f"{100 * low:+.2f} to {100 * high:+.2f}"
    return f"{signed_points(paired.diff)} (95% CI {interval})"


def signed_points(value: float | None) -> str:
    """`+25.00 points`; n/a where there is no difference (nothing paired)."""
    return "n/a" if value is None else f"{100 * value:+.2f} points"


def test_words(paired: Paired) -> str:
    # A document written before `p_value` has only the exact McNemar p; None in both: no test was made.
    p = paired.p_value if paired.p_value is not None else paired.mcnemar_p
    return f"{paired.test} p = {'n/a' if p is None else format(p, '.3g')}"


# --- the detectable difference beside the interval (issue 41, item 5) ----------------------------------------------


def interval_reach(low: float, high: float) -> float:
    """The largest difference, either way, the 95% interval still holds."""
    return max(abs(low), abs(high))


def detectable_may_be_said(mde: float | None, low: float | None, high: float | None, significant: bool) -> bool:
    """Whether the detectable-difference sentence ("only a difference of about X points or more would have been
    detected") may stand beside the interval. Where nothing was found, the interval says how large the difference
    may still be; a sentence that a difference of X "would have been detected" contradicts an interval that holds
    one of X or more (28.0 points beside -44.5 to +25.9: the exact interval of few tasks is wider than the normal
    approximation the detectable difference rests on). Then the interval is said alone. Compared as printed."""
    if mde is None:
        return False
    if significant or low is None or high is None:
        return True
    return round(100 * interval_reach(low, high), 1) < round(100 * mde, 1)


def interval_room(n_paired: int, low: float, high: float) -> str:
    """What the interval of a difference not found says, in place of a detectable difference it contradicts."""
    return (
        f"The 95% interval still holds a difference of up to {100 * interval_reach(low, high):.1f} points: "
        f"{n_paired} paired tasks cannot rule one that large out."
    )
