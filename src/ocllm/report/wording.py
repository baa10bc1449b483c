"""What both renderers say, in the same words: numbers, intervals, verdicts, answers and resource figures as
plain text. Nothing here escapes anything: the Markdown renderer passes these strings through `cell`, the HTML
templates through Jinja2's autoescaping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from ocllm import verdict_words
from ocllm.documents import InputVerdicts
from ocllm.scoring import task_types
from ocllm.scoring.no_answer import gave_no_answer
from ocllm.scoring.scored import Scored
from ocllm.scoring.task_type import DetailTable, TaskType
from ocllm.scoring.task_view import TaskView
from ocllm.summary_words import scored, serving_rate, truncation_parts, truncation_words

# --- Numbers and intervals ----------------------------------------------------------------------------


def pct(value: float | None, decimals: int = 1) -> str:
    return "n/a" if value is None else f"{100.0 * value:.{decimals}f}%"


def interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"{100.0 * low:.1f}–{100.0 * high:.1f}%"


def _signed(value: float) -> str:
    text = f"{100.0 * value:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def points(value: float | None) -> str:
    """A difference in accuracy, in percentage points, signed (zero unsigned); n/a where none was measured."""
    return "n/a" if value is None else f"{_signed(value)} pts"


def points_interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"{_signed(low)} to {_signed(high)} pts"


# --- Nothing measured: n/a, never a figure --------------------------------------------------------------
# A scope with no scored task has no accuracy and a comparison with no paired task no difference, test or
# interval. The documents hold null for them (issue 40); documents written before hold placeholder numbers (0.0, the
# whole range, p = 1), so each renderer first blanks those here, and every filter then prints None as n/a (issue
# 30, item 3: a lane with 30 errors was ranked at "0.0% (0.0-100.0%)").

_FIGURES_OF_NOTHING = ("accuracy", "ci_low", "ci_high")
_PAIRED_OF_NOTHING = (
    "a_accuracy", "b_accuracy", "a_ci_low", "a_ci_high", "b_ci_low", "b_ci_high", "diff", "diff_ci_low",
    "diff_ci_high", "p_value", "mcnemar_p", "minimum_detectable_effect", "diff_stderr",
)  # fmt: skip


def measured(figures: Mapping[str, Any]) -> bool:
    """Whether a scope's figures rest on at least one scored task."""
    return scored(figures) > 0


def blank_figures(figures: Mapping[str, Any]) -> dict[str, Any]:
    """A scope's figures (a lane, a category, a summary) with no accuracy and no interval where nothing was scored;
    the same, per category and per task type, inside it."""
    out = dict(figures)
    if "accuracy" in out and not measured(out):
        out.update(dict.fromkeys(_FIGURES_OF_NOTHING))
        out["ci_method"] = None
    for key in ("by_category", "by_type"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: blank_figures(v) if isinstance(v, Mapping) else v for k, v in out[key].items()}
    return out


def blank_paired(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A comparison (or one of its scopes) with no accuracy, difference, interval or p where no task was paired."""
    out = dict(doc)
    if not out.get("n_paired"):
        out.update(dict.fromkeys(_PAIRED_OF_NOTHING))
    for key in ("by_category", "by_type"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: blank_paired(v) if isinstance(v, Mapping) else v for k, v in out[key].items()}
    return out


def blank_matrix(doc: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    out["lanes"] = [blank_figures(lane) for lane in doc.get("lanes") or []]
    out["comparisons"] = [blank_paired(c) for c in doc.get("comparisons") or []]
    return out


def says_changed(doc: Mapping[str, Any]) -> bool:
    """Whether a run page shows how many decisions differ from the input's: where the input recorded verdicts of
    its own (`previous.correct`) for this scorer's to differ from. A run directory of this project holds this
    scorer's own verdicts of when it ran: a card there says something only when a newer scorer changed some (issue
    30, item 6: "CHANGED 0 decisions differ from the input's" on a native run was noise)."""
    if not any(isinstance((t.get("previous") or {}).get("correct"), bool) for t in doc.get("tasks") or []):
        return False
    own_run = str((doc.get("source") or {}).get("run_format") or "").startswith("ocllm-run/") and not doc.get("tool")
    return not own_run or bool((doc.get("summary") or {}).get("changed"))


def correct_of(figures: Mapping[str, Any]) -> str:
    """`47/59` (correct of scored); n/a where nothing was scored (0/0 reads as a measured zero)."""
    return f"{figures.get('correct', 0)}/{scored(figures)}" if measured(figures) else "n/a"


def rank_of(lane: Mapping[str, Any], position: int) -> str:
    """A lane's place on the leaderboard; a dash for a lane not ranked. A matrix written before lanes carried
    their rank is ranked by its order."""
    if lane.get("not_ranked"):
        return "—"
    rank = lane.get("rank")
    return str(rank if isinstance(rank, int) else position)


# Which interval a scope with repeated samples has, in a caption where scopes of several kinds are drawn together.
SAMPLED_INTERVALS = (
    "the t interval clustered on tasks; Wilson's over tasks where every task's share correct is the same (no "
    "clustered error to use); Wilson's with one sample per task"
)


def interval_methods_note(lanes: Sequence[Mapping[str, Any]]) -> str:
    """Which 95% interval each lane's is, where they are not all Wilson's: "95% intervals: Wilson for A; t interval
    clustered on tasks for B." (never "clustered" of a lane whose interval is another)."""
    by_method: dict[str, list[str]] = {}
    for lane in lanes:
        method = lane.get("ci_method")
        if method is None and "ci_method" not in lane and measured(lane):  # a document written before it was said
            method = "t interval clustered on tasks" if is_sampled(lane) else "Wilson"
        if method is not None:
            by_method.setdefault(str(method), []).append(str(lane["label"]))
    if set(by_method) <= {"Wilson"}:
        return ""
    return "95% intervals: " + "; ".join(f"{m} for {', '.join(names)}" for m, names in by_method.items()) + "."


def p_value(p: float | None) -> str:
    """Three significant digits, as the verdict sentences print them."""
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3g}"


def count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def seconds(value: float | None) -> str:
    """Latency: milliseconds below a second (the simulator's are tiny), seconds otherwise."""
    if value is None:
        return "n/a"
    if value < 1.0:
        return f"{1000.0 * value:.0f} ms"
    return f"{value:.2f} s"


# --- A task's verdict and answers ---------------------------------------------------------------------


def verdict_of(task: Mapping[str, Any]) -> str:
    """correct / wrong / no-answer / error / unscored: a failed request is never a wrong answer, and a
    response with no answer in it is told apart from a wrong answer (both count against the accuracy)."""
    correct = task.get("correct")
    if correct is True:
        return "correct"
    if correct is False:
        no_answer = gave_no_answer(
            error=task.get("error"),
            correct=correct,
            task_type=task.get("task_type"),
            extracted=task.get("extracted_final_answer"),
            source=task.get("extraction_source"),
        )
        return "no-answer" if no_answer else "wrong"
    return "error" if task.get("error") else "unscored"


def wrong_answers(figures: Mapping[str, Any]) -> int:
    """Scored tasks answered, and answered wrong: neither right nor without an answer."""
    return scored(figures) - int(figures.get("correct") or 0) - int(figures.get("no_answer") or 0)


def chance_text(chance: float | None) -> str:
    """How the accuracy charts label the suite's chance level."""
    return "" if chance is None else f"chance {100.0 * chance:.0f}%"


class Drawn(dict[str, Any]):
    """A task's record as a page draws it: the record, and the record read once into its room's structs for every
    hook the page asks of it (the gold, the answer, the evidence, the view: scoring/scored.py)."""

    __slots__ = ("scored",)

    def __init__(self, record: Mapping[str, Any]) -> None:
        super().__init__(record)
        self.scored = task_types.scored(record)


def drawn(tasks: Sequence[Mapping[str, Any]]) -> list[Drawn]:
    """The records of a document's tasks, each read once (a record read already stays as it is)."""
    return [t if isinstance(t, Drawn) else Drawn(t) for t in tasks]


def _scored(task: Mapping[str, Any]) -> Scored:
    return task.scored if isinstance(task, Drawn) else task_types.scored(task)


def _task_type(task: Mapping[str, Any]) -> TaskType:
    return task_types.drawn_as(task.get("task_type"))


def expected_text(task: Mapping[str, Any]) -> str:
    """The gold, in the words of the task's type."""
    return _task_type(task).expected_text(_scored(task))


def extracted_text(task: Mapping[str, Any]) -> str:
    """The answer found, in the words of the task's type."""
    return _task_type(task).extracted_text(_scored(task))


def _unread(scored: Scored) -> list[tuple[str, str]]:
    """What a page says of a record that is no decision of its room's struct (a document an older version wrote,
    whose evidence has another shape): it is drawn with the fields every record has, and this line says why its
    own evidence is not (a report of this version re-scores what it draws, so its own records never need it)."""
    if scored.unread is None:
        return []
    return [("evidence", f"not drawn: the record is not of this version's shape ({scored.unread})")]


def evidence_lines(task: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The type's own evidence beside the common fields, as (label, text) lines both renderers draw."""
    scored = _scored(task)
    return _task_type(task).evidence_lines(scored) + _unread(scored)


def task_evidence(task: Mapping[str, Any]) -> TaskView:
    """The type's own evidence in blocks for the view of one task, as its room draws them (a room without a view of
    its own: its evidence lines as facts)."""
    known, scored = _task_type(task), _scored(task)
    if known.task_view is None:
        return TaskView(facts=known.evidence_lines(scored) + _unread(scored))
    view = known.task_view(scored)
    return dataclasses.replace(view, facts=view.facts + _unread(scored)) if scored.unread else view


def type_rows(summary: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]]:
    """The figures per task type, as (label, figures, the type's own figures in words), when they say more than
    the overall figures: a suite of several types, or a type with figures of its own. Else no rows."""
    by_type = summary.get("by_type") or {}
    if len(by_type) < 2 and not any(figures.get("details") for figures in by_type.values()):
        return []
    rows = []
    for name, figures in sorted(by_type.items()):
        known = task_types.TASK_TYPES.get(name)
        own = figures.get("details") or {}
        if known is not None and known.detail_words is not None:
            details = known.detail_words(own)
        else:
            details = "; ".join(_detail(key, value) for key, value in own.items())
        rows.append((known.label if known else name, figures, details))
    return rows


def type_detail_rows(sides: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[list[str]]:
    """Each side's own figures per task type (a tool lane's calls dropped by the server's parser), as rows of
    (side, type, the figures in words): what a comparison or a matrix shows beside the accuracy, so that a lane
    that changes only a server flag shows what moved."""
    rows = []
    for label, details in sides:
        for name, own in sorted((details or {}).items()):
            known = task_types.TASK_TYPES.get(name)
            if not own:
                continue
            if known is not None and known.detail_words is not None:
                words = known.detail_words(own)
            else:
                words = "; ".join(_detail(key, value) for key, value in own.items())
            rows.append([label, known.label if known else name, words])
    return rows


def type_tables(summary: Mapping[str, Any]) -> list[DetailTable]:
    """The tables task types draw of their own figures (IFEval's per instruction kind), in type name order."""
    tables: list[DetailTable] = []
    for name, figures in sorted((summary.get("by_type") or {}).items()):
        known = task_types.TASK_TYPES.get(name)
        if known is not None:
            tables += known.detail_tables(figures.get("details") or {})
    return tables


def _detail(key: str, value: object) -> str:
    """One of a type's own figures in words: `decided by: number 40, symbolic 3`, `undecided 2`."""
    name = key.replace("_", " ")
    if isinstance(value, Mapping):
        return f"{name}: " + (", ".join(f"{k} {v}" for k, v in value.items()) or "none")
    return f"{name} {value}"


# --- Resource figures ---------------------------------------------------------------------------------

# A resource figure: (key in the resources object, label, integer-valued?)
RESOURCE_FIGURES: tuple[tuple[str, str, bool], ...] = (
    ("completion_tokens", "completion tokens", True),
    ("reasoning_tokens", "reasoning tokens", True),
    ("latency_s", "latency", False),
)


def resource_value(dist: Mapping[str, Any] | None, stat: str, integer: bool) -> str:
    if not dist:
        return "not recorded"
    value = dist.get(stat)
    return count(value) if integer else seconds(value)


def resource_rows(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[list[str]]:
    """Resource figures side by side, one column per run: [figure name, value per run...] (plain text)."""
    rows: list[list[str]] = []
    for key, name in (("tasks", "tasks"), ("errors", "errors (failed requests)"), ("truncated", "truncated")):
        rows.append([name, *[_resource_count(res, key) for _, res in columns]])
    for key, name, integer in RESOURCE_FIGURES:
        dists = [(res or {}).get(key) for _, res in columns]
        if not any(dists):
            rows.append([name, *["not recorded"] * len(columns)])
            continue
        for stat in ("mean", "p50", "p95"):
            rows.append(
                [f"{name}, {'median' if stat == 'p50' else stat}", *[resource_value(d, stat, integer) for d in dists]]
            )
    return rows


def _resource_count(resources: Mapping[str, Any] | None, key: str) -> str:
    value = (resources or {}).get(key)
    if key == "truncated" and value is None and resources and resources.get("tasks"):
        return "not recorded"  # no answer recorded a finish_reason (resources_of): not 0
    return count(value)


def partly_recorded(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[tuple[str, list[str]]]:
    """The resource figures only some runs recorded, with the labels of those that did: side-by-side
    numbers would mislead otherwise, so both renderers say so plainly."""
    partial = []
    for key, name, _ in RESOURCE_FIGURES:
        have = [label for label, res in columns if (res or {}).get(key)]
        if have and len(have) < len(columns):
            partial.append((name, have))
    return partial


# --- Serving figures ----------------------------------------------------------------------------------

SERVING_NOTE = (
    "Over the run's wall time (the time its requests were in flight, summed over every invocation); "
    "time to first token is measured on streamed lanes only."
)
SERVING_MISSING = "Serving figures not recorded: this input did not record its wall time."
PROMPT_TOKENS_NOTE = (
    "Tokens of each request's prompt as the server counted them (usage.prompt_tokens): the system prompt, the tools "
    "offered and the task; each request of a conversation counted."
)


def rate(value: float | None) -> str:
    """A throughput per second: two decimals below 10, one below 100, none above."""
    if value is None:
        return "n/a"
    decimals = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:,.{decimals}f}"


def duration(value: float | None) -> str:
    """A wall time: as latencies below a minute, in minutes and seconds (and hours) above."""
    if value is None or value < 60:
        return seconds(value)
    minutes, secs = divmod(round(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min {secs} s" if hours else f"{minutes} min {secs} s"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _recorded(value: object, form: Callable[[float], str]) -> str:
    number = _number(value)
    return "not recorded" if number is None else form(number)


def _rate(serving: Mapping[str, Any], key: str) -> str:
    """A serving rate: n/a where it was recorded but rests on no answer or no time (summary_words.serving_rate),
    "not recorded" where the input has none."""
    value = serving_rate(serving, key)
    if value is not None:
        return rate(value)
    counted = "wall_s" if key == "requests_per_s" else "output_tokens"  # what the rate would be over
    return "n/a" if serving.get(key) is not None or serving.get(counted) is not None else "not recorded"


# A serving figure: (label, the figure as text from a run's `serving` object)
SERVING_FIGURES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("requests/s", lambda s: _rate(s, "requests_per_s")),
    ("output tokens/s", lambda s: _rate(s, "output_tokens_per_s")),
    ("time to first token, median", lambda s: _recorded(s.get("ttft_p50_s"), seconds)),
    ("time to first token, 95th percentile", lambda s: _recorded(s.get("ttft_p95_s"), seconds)),
    ("wall time", lambda s: _recorded(s.get("wall_s"), duration)),
    ("scoring after the last response", lambda s: _recorded(s.get("scoring_tail_s"), duration)),
    ("requests (retries included)", lambda s: _recorded(s.get("requests"), count)),
    ("answers", lambda s: _recorded(s.get("answers"), count)),
    ("output tokens", lambda s: _recorded(s.get("output_tokens"), count)),
)


def serving_rows(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[list[str]]:
    """Serving figures side by side, one column per run: [figure name, value per run...] (plain text); a run
    that recorded none shows "not recorded" throughout."""
    return [
        [name, *[figure(serving) if serving else "not recorded" for _, serving in columns]]
        for name, figure in SERVING_FIGURES
    ]


# A prompt-token figure: (label, the figure as text from a summary's `prompt_tokens`)
PROMPT_TOKEN_FIGURES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("prompt tokens a request, mean", lambda p: _recorded(p.get("mean"), lambda v: f"{v:,.1f}")),
    ("prompt tokens a request, largest", lambda p: _recorded(p.get("max"), count)),
    ("requests whose usage said them", lambda p: _recorded(p.get("requests"), count)),
)


def prompt_token_rows(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[list[str]]:
    """The prompt tokens of each run's requests side by side (what an agent's context adds to every prompt): [figure
    name, value per run...]; none at all when no run's summary has them (no request's usage said)."""
    if not any(isinstance(figures, Mapping) for _, figures in columns):
        return []
    return [
        [name, *[figure(p) if isinstance(p, Mapping) else "not recorded" for _, p in columns]]
        for name, figure in PROMPT_TOKEN_FIGURES
    ]


def serving_cells(serving: Mapping[str, Any] | None) -> dict[str, str]:
    """The leaderboard's serving columns for one lane: requests/s, output tokens/s, median time to first token."""
    if not serving:
        return {"requests_per_s": "not recorded", "output_tokens_per_s": "not recorded", "ttft_p50": "not recorded"}
    return {
        "requests_per_s": _rate(serving, "requests_per_s"),
        "output_tokens_per_s": _rate(serving, "output_tokens_per_s"),
        "ttft_p50": _recorded(serving.get("ttft_p50_s"), seconds),
    }


def serving_recorded_by(columns: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    """The labels of the runs that recorded serving figures."""
    return [label for label, serving in columns if serving]


ENDPOINT_HEADER = ("endpoint", "requests", "errors", "latency, median", "latency, 95th percentile")


def endpoint_rows(serving: Mapping[str, Any] | None) -> list[list[str]]:
    """One row per replica of a lane served by several (empty otherwise), as ENDPOINT_HEADER names them."""
    rows = []
    for endpoint in (serving or {}).get("endpoints") or []:
        if not isinstance(endpoint, Mapping):
            continue
        rows.append(
            [
                str(endpoint.get("base_url") or "—"),
                _recorded(endpoint.get("requests"), count),
                _recorded(endpoint.get("errors"), count),
                _recorded(endpoint.get("latency_p50_s"), seconds),
                _recorded(endpoint.get("latency_p95_s"), seconds),
            ]
        )
    return rows


# --- Settings -----------------------------------------------------------------------------------------


def settings_rows(columns: Sequence[tuple[str, Mapping[str, str]]]) -> list[tuple[str, list[str], bool]]:
    """The runs' settings side by side: (setting, value per run, whether they differ), the differing ones first
    (what sets the runs apart is what a reader looks for), each group in the settings' own order. A run that
    does not say a setting shows "—", which is no difference: a lane of tool calls has no MCQ template, and the
    MCQ lanes beside it do not differ in theirs for that."""
    names: list[str] = []
    for _, settings in columns:
        names += [name for name in settings if name not in names]
    rows = []
    for name in names:
        values = [settings.get(name, "—") for _, settings in columns]
        rows.append((name, values, len({v for v in values if v != "—"}) > 1))
    return [row for row in rows if row[2]] + [row for row in rows if not row[2]]


# --- Repeated samples (docs/statistics.md) ------------------------------------------------------------

PASS_AT_K_NOTE = (
    "pass@j: the chance that at least one of j samples of a task is right (Chen et al.'s unbiased estimate, averaged "
    "over the tasks with j scored samples); pass^j: the chance that all j are right (tau-bench's estimate: how "
    "reliably, not whether at all); maj@k: the share of tasks whose gold answer is strictly the most "
    "frequent answer of their samples (a tie, or no answer, is not credited)."
)
AGREEMENT_NOTE = (
    "A task's samples agree when every scored sample gave the same answer (all right, or all one wrong answer)."
)


def samples_per_task(figures: Mapping[str, Any]) -> int:
    """The most samples any task of the scope has (1 for documents written before samples existed)."""
    value = figures.get("samples_per_task")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 1


def is_sampled(figures: Mapping[str, Any]) -> bool:
    """Figures over repeated samples of each task: accuracy is avg@k, and intervals are clustered on tasks."""
    return samples_per_task(figures) > 1


def comparison_sampled(doc: Mapping[str, Any]) -> bool:
    """A comparison that paired per-task shares of several samples (the paired t test), not one verdict a side."""
    return doc.get("test", "exact McNemar") != "exact McNemar" or any(
        int(doc.get(f"samples_per_task_{side}") or 1) > 1 for side in ("a", "b")
    )


def accuracy_name(figures: Mapping[str, Any]) -> str:
    """What the accuracy is: `accuracy`, or `avg@k` with the scope's k."""
    return f"avg@{samples_per_task(figures)}" if is_sampled(figures) else "accuracy"


def interval_name(sampled: bool) -> str:
    """How an accuracy's 95% interval was computed."""
    return "t interval clustered on tasks" if sampled else "Wilson interval"


def intervals_name(sampled: bool) -> str:
    """The same, of a chart's bars."""
    return "t intervals clustered on tasks" if sampled else "Wilson intervals"


def diff_intervals_name(doc: Mapping[str, Any]) -> str:
    """How a comparison's intervals of the difference were computed (its scopes': each named in its own row)."""
    sampled = comparison_sampled(doc)
    return "t intervals clustered on tasks" if sampled else "exact intervals (matching the McNemar test)"


def diff_interval_name(doc: Mapping[str, Any]) -> str:
    """How this scope's interval of the difference was computed: with samples, the t interval clustered on tasks,
    or where every task differs alike the exact bound over tasks (never called clustered)."""
    if test_name(doc) == "exact test over tasks":
        return "exact bound over tasks (every task the same difference)"
    return "t interval clustered on tasks" if comparison_sampled(doc) else "exact interval (matching the McNemar test)"


def test_name(doc: Mapping[str, Any]) -> str:
    """The test a comparison's p value is of (documents written before `test` existed: exact McNemar)."""
    return str(doc.get("test") or "exact McNemar")


def test_p(doc: Mapping[str, Any]) -> float | None:
    """A comparison's p value: `p_value`, or for documents written before it the exact McNemar p. None with no
    paired task: no statistic is drawn on nothing."""
    if doc.get("n_paired") == 0:
        return None
    value = doc.get("p_value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return doc.get("mcnemar_p")


def test_text(doc: Mapping[str, Any]) -> str:
    """`exact McNemar p = 0.0313`, `paired t p = 0.0199`, `paired t p < 0.001`."""
    if doc.get("n_paired") == 0:
        return "no test (no paired task)"
    text = p_value(test_p(doc))
    return f"{test_name(doc)} p {text}" if text.startswith("<") else f"{test_name(doc)} p = {text}"


def test_header(doc: Mapping[str, Any]) -> str:
    """A table column of the p values: `McNemar p` with one sample per task (as always), else the test's name."""
    return f"{test_name(doc)} p" if comparison_sampled(doc) else "McNemar p"


def mde_sentence(doc: Mapping[str, Any]) -> str:
    """What a comparison of this size could not have seen: the smallest difference it detects with 80% power at
    the 5% level (paired.minimum_detectable_effect). Empty where there is none (the sides never disagree)."""
    mde = doc.get("minimum_detectable_effect")
    if not isinstance(mde, int | float) or isinstance(mde, bool):
        return ""
    if not _detectable_may_be_said(doc):
        return ""  # the verdict says what the interval holds instead (verdict_words.interval_room)
    return (
        f"With {doc.get('n_paired', 0)} paired tasks a difference under {100.0 * mde:.1f} points could not be "
        "detected reliably (80% power)."
    )


def _detectable_may_be_said(doc: Mapping[str, Any]) -> bool:
    low, high = doc.get("diff_ci_low"), doc.get("diff_ci_high")
    return verdict_words.detectable_may_be_said(
        doc.get("minimum_detectable_effect"), low, high, bool(doc.get("significant"))
    )


def stderr_points(value: float | None) -> str:
    """A standard error of an accuracy or a difference, in percentage points."""
    return "n/a" if value is None else f"{100.0 * value:.1f} pts"


def category_stderr_larger(figures: Mapping[str, Any], task_key: str, category_key: str) -> bool:
    """The standard error clustered on category is shown beside the task-clustered one where it is larger."""
    on_tasks, on_categories = figures.get(task_key), figures.get(category_key)
    return isinstance(on_tasks, int | float) and isinstance(on_categories, int | float) and on_categories > on_tasks


def category_stderr_sentence(figures: Mapping[str, Any], task_key: str, category_key: str) -> str:
    """Why a second standard error is shown, when it is: the tasks of one category have more in common than the
    tasks do, so the suite is fewer independent units than its task count says."""
    if not category_stderr_larger(figures, task_key, category_key):
        return ""
    return (
        f"Clustered on its {figures.get('categories', 0)} categories the standard error is "
        f"{stderr_points(figures[category_key])}, larger than the {stderr_points(figures[task_key])} clustered on "
        "tasks: the tasks of a category share more than the tasks themselves do, so the figure rests on fewer "
        "independent units than its task count says."
    )


def pass_at_k_rows(figures: Mapping[str, Any]) -> list[tuple[int, float]]:
    """pass@j for j = 1..k, in order of j."""
    curve = figures.get("pass_at_k") or {}
    return sorted((int(j), float(v)) for j, v in curve.items())


def pass_at(figures: Mapping[str, Any], k: int) -> float | None:
    """A scope's pass@k at the run's k (a category's, a type's); None where it was not computed."""
    value = (figures.get("pass_at_k") or {}).get(str(k))
    return float(value) if isinstance(value, int | float) else None


def task_shares(summary: Mapping[str, Any]) -> list[float]:
    """Each task's share of correct samples (summary.by_task), in task order."""
    return [float(t["share"]) for t in (summary.get("by_task") or {}).values()]


def agreeing_tasks(summary: Mapping[str, Any]) -> int:
    """Tasks whose samples all gave the same answer."""
    return sum(bool(t.get("agree")) for t in (summary.get("by_task") or {}).values())


def in_sample_order(tasks: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records of repeated samples grouped by task (in the order tasks first appear), sample 0 first."""
    first: dict[str, int] = {}
    for i, t in enumerate(tasks):
        first.setdefault(str(t.get("task_id", "")), i)
    return sorted(tasks, key=lambda t: (first[str(t.get("task_id", ""))], int(t.get("sample") or 0)))


def share_text(value: float | None) -> str:
    """A task's share of correct samples."""
    return "—" if value is None else f"{100.0 * value:.0f}%"


RESOLVED_NOTE = (
    "A difference is resolved when its test is significant at the 5% level and its 95% interval holds no "
    "difference. One not resolved may still be real: smaller than its comparison could detect (the minimum "
    "detectable effect, at 80% power)."
)


def resolved_sentence(doc: Mapping[str, Any]) -> str:
    """Which lanes of a matrix differ from the baseline beyond chance, and which do not (with what each
    comparison could have detected)."""
    comparisons = doc.get("comparisons") or []
    resolved = [str(c["b"]["label"]) for c in comparisons if c.get("significant")]
    unresolved = []
    for c in comparisons:
        if c.get("significant"):
            continue
        mde = c.get("minimum_detectable_effect")
        if not c.get("n_paired"):
            why = " (no task paired with the baseline)"
        elif mde is None:
            why = " (never differs on a task)"
        elif _detectable_may_be_said(c):
            why = f" (under {100.0 * mde:.1f} points)"
        else:  # the interval holds more than the detectable difference: say the interval's reach, not "under"
            reach = verdict_words.interval_reach(c["diff_ci_low"], c["diff_ci_high"])
            why = f" (its 95% interval holds up to {100.0 * reach:.1f} points)"
        unresolved.append(str(c["b"]["label"]) + why)
    return (
        f"Resolved against {doc.get('baseline')} (significant at the 5% level): {', '.join(resolved) or 'none'}. "
        f"Not resolved: {', '.join(unresolved) or 'none'}."
    )


RESOLVED_HEADER = ("lane", "difference", "95% interval", "test", "resolved", "minimum detectable effect")


def resolved_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    """Each lane against the baseline, as RESOLVED_HEADER names the columns."""
    doc = blank_matrix(doc)
    return [
        [
            str(c["b"]["label"]),
            points(c["diff"]),
            points_interval(c["diff_ci_low"], c["diff_ci_high"]),
            test_text(c),
            "n/a" if not c.get("n_paired") else "yes" if c.get("significant") else "no",
            stderr_points(c.get("minimum_detectable_effect")),
        ]
        for c in doc.get("comparisons") or []
    ]


def _counted(values: Sequence[float], form: Callable[[float], str]) -> list[tuple[str, int]]:
    """Values counted by how they print, in order of value: the table beside a histogram."""
    counts: dict[str, list[float]] = {}
    for value in values:
        counts.setdefault(form(float(value)), []).append(float(value))
    return [(text, len(seen)) for text, seen in sorted(counts.items(), key=lambda item: item[1][0])]


def share_counts(summary: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Tasks per share of correct samples (the agreement histogram's counts)."""
    return _counted(task_shares(summary), share_text)


def difference_counts(doc: Mapping[str, Any]) -> list[tuple[str, int]]:
    """A sampled comparison's tasks per difference of shares, B - A (its histogram's counts); none otherwise."""
    return _counted(doc.get("task_differences") or [], points) if comparison_sampled(doc) else []


# --- Another tool's verdicts, per task type and task ---------------------------------------------------------


def verdict_scope_rows(summary: Mapping[str, Any]) -> list[dict[str, str]]:
    """The rows both renderers draw of a report's `input_verdicts`, where it holds more than one scope (a type
    with several of the tool's tasks, or several types): each type and task with its own figures, test and
    sentence, the pool of several types last with neither. [] where there is one scope: the pooled figures are
    that scope's, drawn as they always were."""
    raw = summary.get("input_verdicts")
    if not raw:
        return []
    verdicts = msgspec.convert(raw, InputVerdicts)
    lines = verdict_words.scope_lines(verdicts)
    if len(lines) < 2:
        return []
    rows = []
    for line in lines:
        f = line.paired
        pooled = line.kind == "pooled"
        said = {"name": line.name, "kind": line.kind, "headline": verdict_words.headline(line, verdicts.label) or ""}
        if f is None or not f.n_paired:  # nothing paired: no figure, no statistic
            rows.append({**said, "tasks": "0", "a": "-", "b": "-", "difference": "-", "test": "no statistic"})
            continue
        rows.append(
            {
                **said,
                "tasks": str(f.n_paired),
                "a": f"{verdict_words.counted(f, 'a')} ({pct(f.a_accuracy)})",
                "b": f"{verdict_words.counted(f, 'b')} ({pct(f.b_accuracy)})",
                "difference": f"{points(f.diff)} (pooled)" if pooled else
                f"{points(f.diff)} ({points_interval(f.diff_ci_low, f.diff_ci_high)})",
                "test": "not tested (pooled)" if pooled else verdict_words.test_words(f),
            }
        )  # fmt: skip
    return rows


def pooled_verdicts_note(summary: Mapping[str, Any]) -> str | None:
    raw = summary.get("input_verdicts")
    return verdict_words.pooled_note(msgspec.convert(raw, InputVerdicts)) if raw else None


def truncated_text(summary: Mapping[str, Any]) -> str:
    """A summary's truncated answers, "not recorded" where no answer recorded a finish_reason."""
    return truncation_words(summary.get("truncated", 0), summary.get("finish_reasons"), scored(summary))


def truncated_kpi(summary: Mapping[str, Any]) -> tuple[str, str]:
    """The run page's truncated figure and the line under it."""
    value, of = truncation_parts(summary.get("truncated", 0), summary.get("finish_reasons"), scored(summary))
    return value, of or "finish_reason: length"


def template_words() -> tuple[dict[str, Any], dict[str, Any]]:
    """The filters and globals both renderers' template environments take from here (html_rendering.py,
    markdown_rendering.py), so that a word both pages use is registered once; each adds its own beside them."""
    filters: dict[str, Any] = {
        "pct": pct, "points": points, "p_value": p_value, "share": share_text, "stderr": stderr_points,
        "scored": scored,
    }  # fmt: skip
    names: dict[str, Any] = {
        "interval": interval, "points_interval": points_interval, "rank_of": rank_of, "correct_of": correct_of,
        # The words of repeated samples: which test, which interval, what could not be detected.
        "sampled_comparison": comparison_sampled, "test_text": test_text, "test_header": test_header,
        "test_p": test_p, "diff_interval_name": diff_interval_name, "mde_sentence": mde_sentence,
        "category_stderr_sentence": category_stderr_sentence,
        "serving_note": SERVING_NOTE, "serving_missing": SERVING_MISSING, "endpoint_header": ENDPOINT_HEADER,
        "prompt_tokens_note": PROMPT_TOKENS_NOTE,
    }  # fmt: skip
    return filters, names
