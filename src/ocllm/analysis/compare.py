"""Pair two scored runs by task id and compute the lane-vs-lane figures (a task's samples together: with more
than one sample per task, each task's share of correct samples is what is paired).

Each side is a run directory or a metrics file (this project's or the old harness's). By default both
are re-scored with the current scorer, so the comparison is never an artefact of two scorers; with
`rescore=False` the files' own `correct` fields are used as they stand.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import numpy as np

from ocllm.analysis.metrics import PromptTally, ServingTally, chance_level, decision_gave_no_answer
from ocllm.analysis.notices import incomplete_notice
from ocllm.analysis.paired import paired_figures, sampled_paired_figures
from ocllm.analysis.rescore import PolicyOverrides, policy_of
from ocllm.analysis.run_settings import run_settings
from ocllm.analysis.server_paths import server_paths_of
from ocllm.documents import FLIP_TEXT_LIMIT, Comparison, Flip, FlipSide, Paired, PromptTokens, Serving, Side, TypeTable
from ocllm.errors import InputError
from ocllm.formats import RunMeta, SavedRecord, SavedRun, load_saved_run
from ocllm.formats.harnesses import format_of_run, read_harness_files, recognise, verdicts_label
from ocllm.models import Decision, Sample, token_counts
from ocllm.scoring import SCORER_VERSION, decide, task_types
from ocllm.scoring.no_answer import gave_no_answer
from ocllm.server_facts import simulated


class ScoredTask(NamedTuple):
    """What a comparison needs of one task on one side."""

    task_id: str
    category: str
    expected: str | None
    extracted: str | None
    correct: bool | None  # None: the request failed, or the input recorded no verdict
    error: str | None
    truncated: bool
    completion_tokens: int | None
    reasoning_tokens: int | None
    latency_s: float | None
    task_type: str  # the registered type it is of
    no_answer: bool = False  # a response the scorer found no answer in (scoring/no_answer.py)
    n_options: int | None = None  # an MCQ task's options, for the chance level
    # What a flipped task shows of this side: the visible answer, the reasoning and the decision's evidence.
    content: str | None = None
    reasoning: str | None = None
    rule: str | None = None
    reason: str | None = None
    method: str | None = None
    sample: int = 0  # which of the task's samples
    finish_reason: bool = True  # the answer recorded a finish_reason (lm-eval's and MMLU-Pro's do not)
    structured_calls: bool = False  # the server returned calls in tool_calls (any reply of an episode)


class ScoredRun(NamedTuple):
    label: str
    path: Path
    tasks: dict[str, list[ScoredTask]]  # each task's samples, in the order read (one, unless it was sampled)
    rescored: bool
    missing: int = 0  # tasks of the suite an interrupted run never ran
    in_suite: int | None = None  # tasks in the suite, when the input says
    serving: Serving | None = None  # how fast it was served (None: the input did not record its wall time)
    harness: str | None = None  # the other harness whose results these are (read with --from, or rescored from them)
    notices: tuple[str, ...] = ()  # what a reader must know about the input's format
    origin: Path | None = None  # where another tool's results were read from (a rescored document's source)
    settings: dict[str, str] | None = None  # what it ran with (run_settings.run_settings); None: the input does not say
    type_details: dict[str, dict[str, Any]] | None = None  # each type's own figures (re-scored runs only)
    simulated: bool = False  # the ocllm simulator answered it (the run's server record says so)
    prompt_tokens: PromptTokens | None = None  # of its requests, as the server counted them (None: none said)


class LoadedRun(NamedTuple):
    saved: SavedRun
    harness: str | None  # the other tool whose verdicts `previous` holds (formats/harnesses.verdicts_label), else None
    notices: list[str]  # what a reader must know about that tool's format


def load_run(path: Path, from_format: str | None = None, filter_name: str | None = None) -> LoadedRun:
    """A saved run for compare and report: this project's or the old harness's, a document rescored from another
    tool's results, or (`from_format`) that tool's files themselves, read as `rescore --from` reads them.
    Another tool's files given without `from_format` are refused in one line that names the flag."""
    if from_format is not None:
        run = read_harness_files(from_format, [path], filter_name)
        records = list(run.records)  # read through: the unscorable records are all gathered
        meta = msgspec.structs.replace(run.meta, origin=str(path), unscorable=list(run.unscorable))
        return LoadedRun(SavedRun(path, meta, records), verdicts_label(meta), run.notices)
    try:
        saved = load_saved_run(path)
    except InputError:
        fmt = recognise(path)
        if fmt is None:
            raise
        raise InputError(
            f"{path}: {fmt.harness} results, not a saved run of ocllm: read them with --from {fmt.name} "
            f"(or turn them into one with `ocllm rescore --from {fmt.name}`)"
        ) from None
    return LoadedRun(saved, verdicts_label(saved.meta), [])


def run_label(meta: RunMeta, path: Path) -> str:
    """What a run is called on every page: its lane, else its run id; for another tool's results, the model
    they record, else the name of the folder they were read from (a file's name, "out", says nothing)."""
    if meta.lane or meta.run_id or format_of_run(meta.run_format) is None:
        return meta.label(path)
    if meta.model:
        return meta.model
    origin = Path(meta.origin) if meta.origin else path
    folder = origin if origin.is_dir() or not origin.suffix else origin.parent
    return folder.name or origin.stem


def load_scored(
    path: Path,
    *,
    rescore: bool = True,
    overrides: PolicyOverrides | None = None,
    from_format: str | None = None,
    filter_name: str | None = None,
) -> ScoredRun:
    loaded = load_run(path, from_format, filter_name)
    saved = loaded.saved
    chosen = policy_of(saved, overrides)
    tasks: dict[str, list[ScoredTask]] = {}
    serving, prompts = ServingTally(), PromptTally()
    own = task_types.TypeTallies()  # each type's own figures (a tool lane's dropped calls), from the decisions
    for record in saved.records:
        if rescore:
            decision = decide(record.task, record.sample, chosen)
            own.add(decision)
            scored = scored_task(record, decision)
        else:
            scored = _as_recorded(record)
        tasks.setdefault(record.task.id, []).append(scored)
        serving.add(record.sample)
        prompts.add(record.sample)
    label = run_label(saved.meta, path)
    expected = saved.meta.tasks_in_suite
    ran = len(tasks) + len(saved.meta.unscorable)  # another tool's unscorable records ran: not missing
    in_suite = expected if expected is not None and expected >= ran else None
    missing = in_suite - ran if in_suite is not None else 0
    timing = serving.serving(saved.meta.timing)
    origin = Path(saved.meta.origin) if loaded.harness and saved.meta.origin else None
    notices = tuple(loaded.notices)
    types = {r.task.type for r in saved.records}
    settings = run_settings(path, {"lane_settings": saved.meta.lane_settings}, types)
    return ScoredRun(
        label, path, tasks, rescore, missing, in_suite, timing, loaded.harness, notices, origin, settings,
        own.figures() if rescore else None, simulated(saved.meta.server), prompts.said(),
    )  # fmt: skip


def _usage(record: SavedRecord) -> tuple[int | None, int | None]:
    return token_counts(record.sample.usage)


def _n_options(record: SavedRecord) -> int | None:
    return task_types.of(record.task.type).option_count(record.task)


def scored_task(record: SavedRecord, d: Decision) -> ScoredTask:
    """What a comparison needs of one decided task."""
    completion, reasoning = _usage(record)
    return ScoredTask(
        record.task.id,
        record.task.category,
        d.expected_answer,
        d.extracted_final_answer,
        d.correct,
        d.error,
        d.truncated,
        completion,
        reasoning,
        record.sample.latency_s,
        no_answer=decision_gave_no_answer(d),
        n_options=_n_options(record),
        content=record.sample.content,
        reasoning=record.sample.reasoning,
        rule=d.rule,
        reason=d.reason,
        method=d.extraction_method,
        task_type=record.task.type,
        sample=record.sample.sample,
        finish_reason=record.sample.finish_reason is not None,
        structured_calls=structured_calls(record.sample),
    )


def structured_calls(sample: Sample) -> bool:
    """Whether the server returned structured calls in the answer, or in any reply of an episode."""
    return bool(sample.tool_calls) or any(turn.reply.tool_calls for turn in sample.turns or ())


def _as_recorded(record: SavedRecord) -> ScoredTask:
    previous = record.previous
    correct = previous.get("correct")
    correct = correct if isinstance(correct, bool) else None
    completion, reasoning = _usage(record)
    extracted = previous.get("extracted_final_answer")
    method, source = previous.get("extraction_method"), previous.get("extraction_source")
    return ScoredTask(
        record.task.id,
        record.task.category,
        record.task.answer,
        extracted,
        correct,
        record.sample.error,
        record.sample.finish_reason == "length",
        completion,
        reasoning,
        record.sample.latency_s,
        # As the file recorded it: nothing extracted (a substring task: no visible text), and a verdict.
        no_answer=correct is not None
        and gave_no_answer(
            error=record.sample.error,
            correct=correct,
            task_type=record.task.type,
            extracted=extracted,
            source=source if source is not None else ("content" if (record.sample.content or "").strip() else "none"),
        ),
        n_options=_n_options(record),
        content=record.sample.content,
        reasoning=record.sample.reasoning,
        rule=str(previous["rule"]) if isinstance(previous.get("rule"), str) else None,
        reason=str(previous["reason"]) if isinstance(previous.get("reason"), str) else None,
        method=str(method) if isinstance(method, str) else None,
        task_type=record.task.type,
        sample=record.sample.sample,
        finish_reason=record.sample.finish_reason is not None,
        structured_calls=structured_calls(record.sample),
    )


def _paired_figures(a: list[ScoredTask], b: list[ScoredTask], label_a: str, label_b: str) -> Paired:
    figures = paired_figures(
        [t.correct is True for t in a], [t.correct is True for t in b], label_a, label_b,
        categories=[t.category for t in a],
    )  # fmt: skip
    # Of each side's wrong answers on these tasks, those that were no answer at all.
    figures.a_no_answer = sum(t.no_answer for t in a)
    figures.b_no_answer = sum(t.no_answer for t in b)
    return figures


def _sampled_paired_figures(
    a: list[list[ScoredTask]], b: list[list[ScoredTask]], label_a: str, label_b: str
) -> Paired:
    """Tasks' scored samples on each side (a[i] and b[i] are task i's): their shares of correct samples paired."""
    figures = sampled_paired_figures(
        [share(samples) for samples in a],
        [share(samples) for samples in b],
        (max(map(len, a), default=1), max(map(len, b), default=1)),
        label_a,
        label_b,
        categories=[samples[0].category for samples in a],
        correct=(sum(t.correct is True for s in a for t in s), sum(t.correct is True for s in b for t in s)),
        scored=(sum(map(len, a)), sum(map(len, b))),
    )
    figures.a_no_answer = sum(t.no_answer for s in a for t in s)
    figures.b_no_answer = sum(t.no_answer for s in b for t in s)
    return figures


def share(samples: list[ScoredTask]) -> float:
    """A task's share of correct samples (of those scored)."""
    return sum(t.correct is True for t in samples) / len(samples)


def resources_of(tasks: list[ScoredTask]) -> dict[str, Any]:
    def dist(values: list[float]) -> dict[str, float | list[float]] | None:
        if not values:
            return None
        arr = np.asarray(values, dtype=float)
        return {
            "n": len(values),
            "mean": float(arr.mean()),
            "p50": float(np.percentile(arr, 50)),
            "p95": float(np.percentile(arr, 95)),
            "values": [float(v) for v in values],
        }

    answered = [t for t in tasks if t.error is None]
    known = not answered or any(t.finish_reason for t in answered)
    return {
        "tasks": len(tasks),
        "errors": sum(t.error is not None for t in tasks),
        # None where no answer recorded a finish_reason: whether any was cut off is not known, and 0 would say none.
        "truncated": sum(t.truncated for t in tasks) if known else None,
        "completion_tokens": dist([t.completion_tokens for t in tasks if t.completion_tokens is not None]),
        "reasoning_tokens": dist([t.reasoning_tokens for t in tasks if t.reasoning_tokens is not None]),
        "latency_s": dist([t.latency_s for t in tasks if t.latency_s is not None]),
    }


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= FLIP_TEXT_LIMIT:
        return text
    more = len(text) - FLIP_TEXT_LIMIT
    return text[:FLIP_TEXT_LIMIT] + f"\n… ({more:,} more characters: the run's report has them all)"


def _flip_side(task: ScoredTask) -> FlipSide:
    """What a flipped task's side-by-side view shows of one side."""
    return FlipSide(
        content=_cut(task.content),
        reasoning=_cut(task.reasoning),
        rule=task.rule,
        reason=task.reason,
        method=task.method,
    )


def _side(run: ScoredRun) -> Side:
    return Side(
        label=run.label,
        path=str(run.path),
        missing=run.missing,
        tasks_in_suite=run.in_suite,
        serving=run.serving,
        prompt_tokens=run.prompt_tokens,
        tool=run.harness,
        settings=run.settings or {},
        type_details=run.type_details or {},
        simulated=run.simulated,
    )


def told_apart(a: ScoredRun, b: ScoredRun) -> tuple[ScoredRun, ScoredRun]:
    """Two sides called the same (one model, two thinking budgets) get the nearest folder that differs in
    their paths beside the name; the same path twice, A: and B:."""
    if a.label != b.label:
        return a, b
    where_a, where_b = ((run.origin or run.path).absolute() for run in (a, b))  # the tool's folder names the run
    differ = next(((x, y) for x, y in zip(where_a.parts[::-1], where_b.parts[::-1], strict=False) if x != y), None)
    if differ is None or where_a == where_b:
        return a._replace(label=f"A: {a.label}"), b._replace(label=f"B: {b.label}")
    return a._replace(label=f"{a.label} ({differ[0]})"), b._replace(label=f"{b.label} ({differ[1]})")


def _comparison_notices(
    a: ScoredRun, b: ScoredRun, failed: int, sampled: bool = False, unscored: int = 0
) -> list[str]:
    """What a reader must know before the figures: a side that never ran part of its suite, and tasks left
    out because a request failed or the answer was decided without a verdict (`unscored`)."""
    notices = []
    if not a.rescored and (a.harness or b.harness):
        notices.append(f"not re-scored: the verdicts compared are {_whose_verdicts(a, b)}")
    for run in (a, b):
        notices += [f"{run.label}: {note}" for note in run.notices]
        incomplete = incomplete_notice(run.missing, run.in_suite)
        if incomplete:
            notices.append(f"{run.label}: {incomplete}")
    if failed:
        what = "have no answered sample" if sampled else "failed"
        notices.append(f"{failed} task(s) {what} on one side or both and are left out of the paired figures")
    if unscored:
        notices.append(
            f"{unscored} task(s) were answered but not scored on one side or both (decided without a verdict: a "
            "program no sandbox could run, say) and are left out of the paired figures"
        )
    if sampled:
        k_a, k_b = (max(map(len, run.tasks.values()), default=1) for run in (a, b))
        if k_a != k_b:
            notices.append(
                f"{a.label} has up to {k_a} sample(s) per task and {b.label} {k_b}: each task's share of correct "
                "samples is paired, and the side with fewer samples measures its shares less precisely"
            )
    return notices


def _whose_verdicts(a: ScoredRun, b: ScoredRun) -> str:
    whose = [f"{run.harness}'s own" if run.harness else "as the file recorded them" for run in (a, b)]
    if whose[0] == whose[1]:
        return whose[0] + (" on both sides" if a.harness else "")
    return f"{whose[0]} for {a.label}, {whose[1]} for {b.label}"


def refuse_nothing_in_common(a: ScoredRun, b: ScoredRun) -> None:
    """`compare` of two runs that share no task id has nothing to pair: a full report of n/a figures, exit 0, read
    as a comparison made (two suites named alike, or ids renamed by an import). Refused in one line instead; the
    matrix report, which ranks many lanes, still lists such a lane apart."""
    if not any(task_id in b.tasks for task_id in a.tasks):
        raise InputError(
            f"{a.path} and {b.path} have no task in common ({len(a.tasks)} and {len(b.tasks)} tasks, paired by id): "
            "nothing to compare; compare two runs of one suite"
        )


def compare_runs(a: ScoredRun, b: ScoredRun, *, flip_sides: bool = True) -> Comparison:
    """The comparison document (comparison.json). `flip_sides`: each flipped task keeps what both sides answered,
    for the comparison page's side-by-side view (the matrix page, which has none, leaves them out). A side with
    more than one sample of a task pairs the tasks' shares of correct samples (docs/statistics.md)."""
    a, b = told_apart(a, b)
    sampled = any(len(samples) > 1 for run in (a, b) for samples in run.tasks.values())
    # Each task's scored samples (a failed request is no sample of it); a task with none on a side is not paired.
    scored_a = {tid: [t for t in samples if t.correct is not None] for tid, samples in a.tasks.items()}
    scored_b = {tid: [t for t in samples if t.correct is not None] for tid, samples in b.tasks.items()}
    shared = [tid for tid in a.tasks if tid in b.tasks]
    unscorable = [tid for tid in shared if not scored_a[tid] or not scored_b[tid]]
    failed = set(unscorable)
    # Of those, the tasks no side failed a request on: answered, but decided without a verdict (correct None).
    unscored = [tid for tid in unscorable if not any(t.error for t in (*a.tasks[tid], *b.tasks[tid]))]
    paired = [tid for tid in shared if tid not in failed]
    by_cat: dict[str, list[str]] = defaultdict(list)
    by_type: dict[str, list[str]] = defaultdict(list)
    for tid in paired:
        by_cat[scored_a[tid][0].category].append(tid)
        by_type[scored_a[tid][0].task_type].append(tid)

    def figures(ids: list[str]) -> Paired:
        if sampled:
            return _sampled_paired_figures([scored_a[t] for t in ids], [scored_b[t] for t in ids], a.label, b.label)
        return _paired_figures([scored_a[t][0] for t in ids], [scored_b[t][0] for t in ids], a.label, b.label)

    overall = figures(paired)
    firsts_a = [samples[0] for samples in a.tasks.values()]
    return Comparison(
        **msgspec.structs.asdict(overall),
        chance=chance_level(t.n_options for t in firsts_a),
        scorer_version=SCORER_VERSION if a.rescored else None,
        rescored=a.rescored,
        a=_side(a),
        b=_side(b),
        notices=_comparison_notices(a, b, len(unscorable) - len(unscored), sampled, len(unscored)),
        only_in_a=[t for t in a.tasks if t not in b.tasks],
        only_in_b=[t for t in b.tasks if t not in a.tasks],
        unpaired_errors=unscorable,
        by_category={cat: figures(ids) for cat, ids in sorted(by_cat.items())},
        # Per task type only where the suite mixes them: with one type it is the overall figures again.
        by_type={name: figures(ids) for name, ids in sorted(by_type.items())} if len(by_type) > 1 else {},
        flips=[
            _flip(tid, scored_a[tid], scored_b[tid], flip_sides)
            for tid in paired
            if share(scored_a[tid]) != share(scored_b[tid])
        ],
        resources={"a": resources_of(_every_sample(a)), "b": resources_of(_every_sample(b))},
        task_differences=[round(share(scored_b[t]) - share(scored_a[t]), 6) for t in paired] if sampled else [],
        pair_tables=_pair_tables(a, b, shared),
        censoring=censoring_of([scored_a[t] for t in paired], [scored_b[t] for t in paired], a.label, b.label),
        server_paths=server_paths_of(a, b, paired),
    )


# A difference of fewer points than this is not said to be mostly anything.
_SAID_FROM_POINTS = 2.0


def censoring_of(
    a: list[list[ScoredTask]], b: list[list[ScoredTask]], label_a: str, label_b: str
) -> dict[str, Any] | None:
    """Each side's scored samples of the paired tasks, those that finished (not cut off at max_tokens) and the correct
    among them; then the difference B - A on every task and on the tasks whose first samples both finished, and, when
    a difference on every task all but vanishes on those, that it is mostly truncation."""
    if not a or not all(t.finish_reason for side in (a, b) for samples in side for t in samples):
        return None

    def side(tasks: list[list[ScoredTask]]) -> dict[str, int]:
        every = [t for samples in tasks for t in samples]
        finished = [t for t in every if not t.truncated]
        return {
            "scored": len(every), "correct": sum(t.correct is True for t in every), "finished_scored": len(finished),
            "finished_correct": sum(t.correct is True for t in finished),
        }  # fmt: skip

    both = [(x[0], y[0]) for x, y in zip(a, b, strict=True) if not x[0].truncated and not y[0].truncated]
    overall = 100 * (sum(y[0].correct is True for y in b) - sum(x[0].correct is True for x in a)) / len(a)
    finished = 100 * (sum(y.correct is True for _, y in both) - sum(x.correct is True for x, _ in both)) / len(both) \
        if both else None  # fmt: skip
    said = (
        f"{label_b} - {label_a}: {overall:+.1f} points on the {len(a)} paired tasks"
        + (f", {finished:+.1f} on the {len(both)} both finished" if finished is not None else ", none both finished")
    )
    if finished is not None and abs(overall) >= _SAID_FROM_POINTS and abs(finished) <= abs(overall) / 2:
        said += ": most of the difference is truncation (answers cut off at max_tokens), not the answers"
    return {"a": side(a), "b": side(b), "both_finished": len(both), "said": said}


def _pair_tables(a: ScoredRun, b: ScoredRun, shared: list[str]) -> list[TypeTable]:
    """The tables each task type draws of its tasks' two sides paired (`TaskType.pair_tables`): every task both
    sides ran, its samples paired by index, as the records a comparison holds."""
    by_type: dict[str, list[tuple[ScoredTask, ScoredTask]]] = defaultdict(list)
    for tid in shared:
        name = a.tasks[tid][0].task_type
        known = task_types.TASK_TYPES.get(name)
        if known is None or known.pair_tables is None:
            continue
        by_type[name] += list(zip(a.tasks[tid], b.tasks[tid], strict=False))
    tables = []
    for name, pairs in sorted(by_type.items()):
        draw = task_types.of(name).pair_tables
        assert draw is not None
        tables += [TypeTable(task_type=name, title=t.title, header=t.header, rows=t.rows)
                   for t in draw(pairs, a.label, b.label)]  # fmt: skip
    return tables


def _every_sample(run: ScoredRun) -> list[ScoredTask]:
    return [t for samples in run.tasks.values() for t in samples]


def _flip(tid: str, a: list[ScoredTask], b: list[ScoredTask], sides: bool) -> Flip:
    """A task the two sides scored differently on (its share of correct samples, with samples), shown by each
    side's first sample."""
    first_a, first_b = a[0], b[0]
    sampled = len(a) > 1 or len(b) > 1
    return Flip(
        task_id=tid,
        category=first_a.category,
        expected=first_a.expected or first_b.expected,
        a_extracted=first_a.extracted,
        b_extracted=first_b.extracted,
        winner="a" if share(a) > share(b) else "b",
        a_side=_flip_side(first_a) if sides else None,
        b_side=_flip_side(first_b) if sides else None,
        a_share=share(a) if sampled else None,
        b_share=share(b) if sampled else None,
    )
