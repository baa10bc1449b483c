"""Re-score a saved run from its raw model output alone, without calling any model."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm import __version__
from ocllm.analysis.audit import AuditTally, audit_document
from ocllm.analysis.metrics import ServingTally, Tally
from ocllm.analysis.notices import NoticeTally
from ocllm.analysis.verdict_scopes import input_verdicts
from ocllm.documents import Audit, MetricsDocument, Summary, UnscorableRecord
from ocllm.errors import OcllmError
from ocllm.files.atomic import METRICS as RUN_METRICS
from ocllm.files.atomic import SAMPLES, atomic_write_text, atomic_writer, pretty_json
from ocllm.files.output_guard import AUDIT, METRICS, Inputs, check_output
from ocllm.formats import SavedRecord, SavedRun, stream_saved_run
from ocllm.formats.harnesses import format_of_run, read_harness_files, verdicts_label
from ocllm.formats.records import RunMeta
from ocllm.formats.run_directory import stream_run_dir
from ocllm.models import Decision, Policy, Task, decision_record, sample_record
from ocllm.scoring import SCORER_VERSION, decide, task_types
from ocllm.server_facts import facts_of, simulated
from ocllm.summary_words import left_out_sentence

OUTPUT_FORMAT = "ocllm-metrics/1"


class Rescored(NamedTuple):
    source: SavedRun
    decisions: list[Decision]
    document: MetricsDocument  # what is written to OUTPUT


def scorer_settings(policy: Policy) -> dict[str, Any]:
    """The scorer's version and policy as a document records them; rooms' settings only when a lane set any."""
    settings = {"version": SCORER_VERSION, **msgspec.structs.asdict(policy)}
    if not settings["room_settings"]:
        del settings["room_settings"]
    return settings


def task_record(record: SavedRecord, decision: Decision, *, raw_outputs: bool = True) -> dict[str, Any]:
    """The per-task output record: the decision with its evidence, the raw output it was taken
    from (so the output can itself be re-scored), and the input's own decision under `previous`.
    Without `raw_outputs` the raw content and reasoning are left out: a run directory's metrics.json, whose
    samples.jsonl holds them already."""
    out = decision_record(decision)
    task = record.task
    carried = sample_record(record.sample, raw_outputs=raw_outputs)  # the sample's fields (models.SAMPLE_KEYS)
    out["sample"] = carried.pop("sample")  # which of the task's samples (0 to samples_per_task - 1) was decided
    out["subset"] = task.subset
    out.update(task_types.of(task.type).record_fields(task))
    out["prompt"] = task.prompt
    out.update(carried)
    out["previous"] = record.previous
    return out


def input_label_of(meta: RunMeta) -> str:
    """What the input's own verdicts are called: the other tool whose verdicts it holds (read with --from, or a
    document rescored from them), else "the input"."""
    return verdicts_label(meta) or "the input"


def changed(record: SavedRecord, decision: Decision) -> bool:
    old = record.previous_verdict
    return old is not None and old != decision.correct


def rescore_run(saved: SavedRun, policy: Policy) -> Rescored:
    """A whole saved run re-scored in memory: for the run, the reports and comparisons, which show every
    task. `rescore_file` writes the same document without holding it."""
    decisions = [decide(r.task, r.sample, policy) for r in saved.records]
    tally, notices, serving = Tally(), NoticeTally(policy), ServingTally()
    for record, decision in zip(saved.records, decisions, strict=True):
        tally.add(decision, record.sample)
        notices.add(record.sample, decision, record.task)
        serving.add(record.sample)
    n_changed = sum(changed(r, d) for r, d in zip(saved.records, decisions, strict=True))
    harness = format_of_run(saved.meta.run_format)  # another harness's: this project cannot rerun it
    summary, said = _closing(tally, notices, n_changed, saved.meta, policy, harness is None, saved.meta.unscorable)
    summary.serving = serving.serving(saved.meta.timing)
    # As `rescore` writes it: the input's verdicts against ours, per task type and the tool's task.
    summary.input_verdicts = input_verdicts(
        saved.records, decisions, input_label_of(saved.meta), harness.task_of if harness is not None else None
    )
    document = MetricsDocument(
        format=OUTPUT_FORMAT,
        harness_version=__version__,
        source=saved.meta.source(saved.path),
        summary=summary,
        notices=said,
        tasks=[task_record(r, d) for r, d in zip(saved.records, decisions, strict=True)],
    )
    return Rescored(saved, decisions, document)


def _closing(
    tally: Tally,
    notices: NoticeTally,
    n_changed: int,
    meta: RunMeta,
    policy: Policy,
    rerunnable: bool = True,
    unscorable: list[UnscorableRecord] | None = None,
) -> tuple[Summary, list[str]]:
    """The summary and the notices, once every task is counted (in memory or streamed alike). Records this
    scorer cannot score ran, so they are not missing; they are counted apart, in no figure."""
    unscorable = unscorable or []
    expected = meta.tasks_in_suite
    counted = tally.total + len(unscorable)
    in_suite = expected if expected is not None and expected >= counted else counted
    missing = in_suite - counted
    summary = msgspec.structs.replace(
        tally.summary(),
        changed=n_changed,
        tasks_in_suite=in_suite,
        missing=missing,
        # Complete: every task of the suite ran. A run can be complete with failed requests (counted in
        # `errors`), and incomplete without any (interrupted).
        complete=not missing,
        scorer=scorer_settings(policy),
        unscorable=len(unscorable),
        unscorable_records=list(unscorable),
    )
    said = notices.notices(
        missing=missing,
        in_suite=in_suite,
        requested_model=meta.requested_model,
        reasoning=(meta.lane_settings or {}).get("reasoning"),
        think_prefilled=policy.think_prefilled,
        rerunnable=rerunnable,
        server=facts_of(meta.server),
        lane=meta.lane_settings,
        command=meta.command,
    )
    if unscorable:
        said = [left_out_sentence(unscorable), *said]
    return summary, said


# Scoring switches asked for on the command line; each replaces the run's own setting, the rest stay.
PolicyOverrides = dict[str, Any]


def policy_of(saved: SavedRun, overrides: PolicyOverrides | None = None) -> Policy:
    """The run's own policy (recorded by this project's metrics, or the lane of a run directory), else the
    default; then the overrides asked for."""
    return policy_of_meta(saved.meta, overrides)


def policy_of_meta(meta: RunMeta, overrides: PolicyOverrides | None = None) -> Policy:
    base = Policy()
    for recorded in (meta.scorer, meta.lane_settings):
        if recorded is not None:
            base = Policy(
                conflict_policy="strict" if recorded.get("conflict_policy") == "strict" else "last",
                allow_reasoning_fallback=recorded.get("allow_reasoning_fallback") is True,
                think_prefilled=recorded.get("think_prefilled") is True,
                room_settings=_room_settings(recorded),
            )
            break
    if not overrides:
        return base
    # A room's own setting asked for (`--code-runs`) joins the run's others, which stay.
    rooms = {**base.room_settings, **overrides.get("room_settings", {})}
    return msgspec.structs.replace(base, **{**overrides, "room_settings": rooms})


def _room_settings(recorded: dict[str, Any]) -> dict[str, Any]:
    """The rooms' own settings a run recorded (a scorer block keeps them under `room_settings`, a lane record at its
    top level, as a lanes file writes them)."""
    declared = {key for room in task_types.TASK_TYPES.values() for key in room.lane_settings}
    found = recorded.get("room_settings")
    source = found if isinstance(found, dict) else recorded
    return {key: source[key] for key in declared if key in source}


class AuditOutput(NamedTuple):
    """Where a rescore's audit goes (`rescore --report`) and what draws it: the report side's Markdown
    (report/audit.py), handed in by the command, since analysis never imports the report."""

    path: Path
    draw: Callable[[Audit], str]


class RescoredFile(NamedTuple):
    """What `rescore_file` wrote, for the console: the summary and the notices (the tasks are on disk)."""

    summary: Summary
    notices: list[str]
    served_model: str | None = None  # the model most answers were given as, when the answers said
    audit: AuditTally | None = None  # the input's verdicts against this scorer's, and the changed decisions
    input_label: str = "the input"  # what the input's own verdicts are called (the other tool, for --from)
    simulated: bool = False  # the ocllm simulator answered the run (its server record says so): the console says it


# Where a rescore's decisions are taken: the records in order, and the decision of each (None: take it here). The
# command passes the run's decision pool (run/ordered_decisions.py); by default, in this process.
DecideIn = Callable[
    [Iterable[SavedRecord], Policy], tuple[Iterable[SavedRecord], Callable[[SavedRecord], Decision | None]]
]


def in_this_process(
    records: Iterable[SavedRecord], _policy: Policy
) -> tuple[Iterable[SavedRecord], Callable[[SavedRecord], Decision | None]]:
    return records, lambda _record: None


def rescore_file(
    input_path: Path,
    output_path: Path,
    overrides: PolicyOverrides | None = None,
    audit_to: AuditOutput | None = None,
    *,
    force: bool = False,
    decide_in: DecideIn = in_this_process,
) -> RescoredFile:
    """Re-score a saved run into OUTPUT (and the audit into `audit_to`), one task at a time: each task's record
    is written as it is decided and only counters are kept, so memory does not grow with the raw outputs
    of a run read from a run directory. Both files appear whole (renamed into place) or not at all."""
    _check_outputs(output_path, audit_to, [input_path], force)
    meta, records = stream_saved_run(input_path)
    policy = policy_of_meta(meta, overrides)
    # A document rescored from another tool's file keeps what it left out, and its failures stay not rerunnable.
    foreign = format_of_run(meta.run_format) is not None
    ordered, decided = decide_in(records, policy)
    return write_rescored(
        input_path,
        meta,
        ordered,
        policy,
        output_path,
        audit_to,
        decided=decided,
        input_label=input_label_of(meta),
        rerunnable=not foreign,
        unscorable=meta.unscorable,
        verdicts=True,
    )


def rescore_tool_files(
    format_name: str,
    inputs: list[Path],
    output_path: Path,
    overrides: PolicyOverrides | None = None,
    audit_to: AuditOutput | None = None,
    filter_name: str | None = None,
    *,
    force: bool = False,
    decide_in: DecideIn = in_this_process,
) -> RescoredFile:
    """Re-score another tool's result files (`--from`) into one document, each task's `previous` holding
    what that tool decided; the audit leads with the tool's accuracy against this scorer's."""
    run = read_harness_files(format_name, inputs, filter_name)
    _check_outputs(output_path, audit_to, run.files, force)
    where = run.files[0] if len(run.files) == 1 else inputs[0]
    source = {"path": str(where), "files": [str(f) for f in run.files]}
    title = run.files[0].name + (f" and {len(run.files) - 1} more file(s)" if len(run.files) > 1 else "")
    policy = policy_of_meta(run.meta, overrides)
    ordered, decided = decide_in(run.records, policy)
    return write_rescored(
        run.files[0],
        run.meta,
        ordered,
        policy,
        output_path,
        audit_to,
        decided=decided,
        source=source,
        input_notices=run.notices,
        input_label=input_label_of(run.meta),
        rerunnable=False,  # another tool's results: this project's --retry-errors cannot run them again
        title=f"{run.format.name}: {title}",
        unscorable=run.unscorable,  # filled while the records are read
        verdicts=True,
    )


def _check_outputs(output_path: Path, audit_to: AuditOutput | None, inputs: list[Path], force: bool) -> None:
    """Before anything is read: never over an input, nor over a file that is not our own kind (without
    --force)."""
    known = Inputs(inputs)
    check_output(output_path, METRICS, known, force=force)
    if audit_to is not None:
        report_path = audit_to.path
        check_output(report_path, AUDIT, known, force=force, flag="--report")
        if report_path.resolve() == output_path.resolve():
            raise OcllmError(f"{report_path}: the audit report and the output cannot be the same file")


def write_rescored(
    input_path: Path,
    meta: RunMeta,
    records: Iterable[SavedRecord],
    policy: Policy,
    output_path: Path,
    audit_to: AuditOutput | None = None,
    source: dict[str, Any] | None = None,
    decided: Callable[[SavedRecord], Decision | None] | None = None,
    raw_outputs: bool = True,
    input_notices: list[str] | None = None,
    input_label: str = "the input",
    title: str | None = None,
    rerunnable: bool = True,
    unscorable: list[UnscorableRecord] | None = None,
    verdicts: bool = False,
) -> RescoredFile:
    """The streaming writer itself: also what a run's metrics.json is written with (`source` replacing the
    document's source fields it names; `decided` giving the decisions the run already took, under the
    same policy and scorer, so that they are not taken twice; `raw_outputs` False for a run directory's
    metrics.json, whose raw outputs are in samples.jsonl and are named there by `source.raw_outputs`;
    `input_notices` what a reader must know about the input's format, `input_label` what its own verdicts are
    called, `title` what the audit is headed with, and `rerunnable` whether this project can run its failed
    tasks again; `unscorable` the records the reader left out, complete once `records` is read through; `verdicts`
    whether the summary holds the input's own verdicts against this scorer's, as a rescore's does)."""
    harness = format_of_run(meta.run_format)  # another harness's: its task of each id, to pair each task apart
    audit = AuditTally(harness.task_of if harness is not None else None)
    tally, notices, serving = Tally(), NoticeTally(policy), ServingTally()
    n_changed = 0
    with atomic_writer(output_path) as out:
        out.write(b'{\n  "format": ' + _json(OUTPUT_FORMAT) + b',\n  "harness_version": ' + _json(__version__))
        document_source = {**meta.source(input_path), **(source or {})}
        out.write(b',\n  "source": ' + _indented(document_source, 2) + b',\n  "tasks": [')
        for index, record in enumerate(records):
            decision = (decided and decided(record)) or decide(record.task, record.sample, policy)
            tally.add(decision, record.sample)
            notices.add(record.sample, decision, record.task)
            audit.add(record, decision)
            serving.add(record.sample)
            n_changed += changed(record, decision)
            # One line per task: indenting every field of every candidate statement made a document of a
            # thinking model's results more than twice its input; one line is also one task to grep or diff.
            task = task_record(record, decision, raw_outputs=raw_outputs)
            out.write((b",\n    " if index else b"\n    ") + _json(task))
        summary, said = _closing(tally, notices, n_changed, meta, policy, rerunnable, unscorable)
        audit.unscorable = summary.unscorable_records
        summary.serving = serving.serving(meta.timing)
        if verdicts:  # the input's verdicts against ours, per type and task, beside the console's and the audit's
            summary.input_verdicts = audit.scopes(input_label)
        said = [*(input_notices or []), *said]
        out.write((b"\n  ]" if tally.total else b"]") + b',\n  "summary": ' + _indented(summary, 2))
        out.write(b',\n  "notices": ' + _indented(said, 2) + b"\n}\n")
        if audit_to is not None:
            # Drawn before the output is renamed into place: a failure leaves neither file.
            document = audit_document(audit, title or input_path.name, summary.scorer, input_label)
            atomic_write_text(audit_to.path, audit_to.draw(document))
    return RescoredFile(summary, said, notices.most_served(), audit, input_label, simulated(meta.server))


def score_run_dir(
    out_dir: Path,
    lane_name: str,
    policy: Policy,
    decided: Callable[[tuple[str, int]], Decision | None] | None = None,
    tasks: Sequence[Task] | None = None,
) -> RescoredFile:
    """A run directory's final scoring: decide every task from the samples on disk and write its metrics.json, one
    task at a time (a run's memory does not grow with its outputs). `decided` gives, by (task id, sample), the
    decisions the run already took (its decision spool), so that they are not taken twice; `tasks`, the suite the
    run holds in memory (not parsed again). What `run_lane` is handed by its caller (runner.py says why), and what
    `ocllm merge` scores a merged run with."""
    meta, records = stream_run_dir(out_dir, tasks)
    # The raw outputs stay in samples.jsonl alone: metrics.json names the file instead of copying them.
    source = {"path": str(out_dir), "lane": lane_name, "raw_outputs": SAMPLES}
    by_record = None if decided is None else (lambda record: decided((record.task.id, record.sample.sample)))
    return write_rescored(
        out_dir, meta, records, policy, out_dir / RUN_METRICS, source=source, decided=by_record, raw_outputs=False
    )


def _json(value: object) -> bytes:
    return msgspec.json.encode(value)


def _indented(value: object, depth: int) -> bytes:
    """`value` as the pretty JSON of every file, its lines after the first indented by `depth` spaces, to
    stand inside an object being written piece by piece. (JSON strings hold no raw newline.)"""
    return pretty_json(value).rstrip(b"\n").replace(b"\n", b"\n" + b" " * depth)
