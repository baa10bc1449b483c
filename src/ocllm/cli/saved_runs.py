"""Commands that read saved runs and other harnesses' results: rescore, compare, report, matrix-report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ocllm.errors import OcllmError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ocllm.formats.records import SavedRecord
    from ocllm.models import Decision, Policy

    Decided = Callable[[SavedRecord], Decision | None]

from ocllm.cli.app import app
from ocllm.cli.options import (
    FORCE_HELP,
    check_filter,
    file_name,
    from_option,
    from_options,
    out_option,
    policy_options,
    policy_overrides,
)


@app.command()
@click.argument("inputs", metavar="INPUT...", nargs=-1, required=True, type=click.Path(path_type=Path))
@out_option("The re-scored JSON output.", required=True, before=("--output",))
@click.option("--report", type=click.Path(path_type=Path), help="Also write a Markdown audit here.")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@from_option(
    "Read another tool's result files (or folders of them): lm-eval samples_*.jsonl, MMLU-Pro *_result.json, "
    "inspect_ai .eval/.json logs. Without it, INPUT is one saved run of this project or the old harness."
)
@click.option(
    "--filter",
    "filter_name",
    metavar="NAME",
    help="lm-eval: whose extraction is the tool's own answer (default: flexible-extract when a file has it, "
    "else its first filter).",
)
@policy_options
def rescore(
    inputs: tuple[Path, ...],
    out: Path,
    report: Path | None,
    from_format: str | None,
    filter_name: str | None,
    force: bool,
    conflict_policy: str | None,
    allow_reasoning_fallback: bool | None,
    think_prefilled: bool | None,
    code_runs: str | None,
) -> None:
    """Re-score a saved run, or another tool's results (--from), from the raw model output, without calling
    any model."""
    from ocllm import simulated_words
    from ocllm.analysis.rescore import AuditOutput, rescore_file, rescore_tool_files
    from ocllm.console import (
        answers_line,
        changed_words,
        console,
        print_notices,
        print_simulated,
        print_verdicts,
        summary_table,
        truncated_words,
    )
    from ocllm.report.audit import audit_markdown
    from ocllm.run.ordered_decisions import in_order

    check_filter(from_format, filter_name)
    overrides = policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled, code_runs)
    audit_to = AuditOutput(report, audit_markdown) if report is not None else None

    def pooled(records: Iterable[SavedRecord], policy: Policy) -> tuple[Iterable[SavedRecord], Decided]:
        """The decisions taken in the run's worker processes, as a run's are (run/ordered_decisions.py)."""
        return in_order(records, lambda record: (record.task, record.sample), policy)

    if from_format is not None:
        result = rescore_tool_files(
            from_format, list(inputs), out, overrides, audit_to, filter_name, force=force, decide_in=pooled
        )
        title = f"Re-scored {from_format} results"
    elif len(inputs) > 1:
        raise OcllmError(f"{len(inputs)} inputs: a saved run is one file or folder (several files need --from)")
    else:
        result = rescore_file(inputs[0], out, overrides, audit_to, force=force, decide_in=pooled)
        title = f"Re-scored {inputs[0].name}"
    summary = result.summary
    print_simulated(simulated_words.run_banner() if result.simulated else None)
    print_notices(result.notices)
    print_verdicts(result)
    console.print(summary_table(title, summary))
    console.print(
        f"changed decisions: {changed_words(result)}   {answers_line(summary)}   truncated: {truncated_words(summary)}",
        soft_wrap=True,
    )
    console.print(f"wrote {out}")
    if report is not None:
        console.print(f"wrote {report}")



@app.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@out_option("Output folder (default: comparisons/A_vs_B).")
@click.option(
    "--no-rescore",
    is_flag=True,
    help="Use the files' own decisions instead of re-scoring both sides (another tool's results: that tool's).",
)
@click.option("--force", is_flag=True, help=FORCE_HELP)
@from_options
@policy_options
def compare(
    a: Path,
    b: Path,
    out: Path | None,
    no_rescore: bool,
    force: bool,
    from_format: str | None,
    filter_name: str | None,
    conflict_policy: str | None,
    allow_reasoning_fallback: bool | None,
    think_prefilled: bool | None,
    code_runs: str | None,
) -> None:
    """Compare two runs (run directories, metrics files, or another tool's results with --from) task by task."""
    from ocllm.analysis.compare import compare_runs, load_scored, refuse_nothing_in_common
    from ocllm.console import console, console_comparison
    from ocllm.files.output_guard import COMPARISON_FILES, check_folder_output
    from ocllm.report.write import write_comparison

    check_filter(from_format, filter_name)
    if out is not None:  # refused before either side is read; the default folder is named after the sides
        check_folder_output(out, COMPARISON_FILES, [a, b], force=force)
    overrides = policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled, code_runs)
    sides = [
        load_scored(p, rescore=not no_rescore, overrides=overrides, from_format=from_format, filter_name=filter_name)
        for p in (a, b)
    ]
    refuse_nothing_in_common(*sides)
    doc = compare_runs(*sides)
    folder = out or Path("comparisons") / f"{file_name(doc.a.label)}_vs_{file_name(doc.b.label)}"
    if out is None:  # (a folder given was checked before the sides were read)
        check_folder_output(folder, COMPARISON_FILES, [a, b], force=force)
    paths = write_comparison(doc, folder)
    console_comparison(doc)
    for path in paths:
        console.print(f"wrote {path}")


@app.command()
@click.argument("run_path", metavar="RUN", type=click.Path(path_type=Path))
@out_option("Output folder (default: RUN's folder/report).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@from_options
@policy_options
def report(
    run_path: Path,
    out: Path | None,
    force: bool,
    from_format: str | None,
    filter_name: str | None,
    conflict_policy: str | None,
    allow_reasoning_fallback: bool | None,
    think_prefilled: bool | None,
    code_runs: str | None,
) -> None:
    """Report one run (or another tool's results, --from): summary, breakdowns and the tasks' evidence, as
    Markdown and HTML."""
    from ocllm.analysis.report_documents import run_report_doc
    from ocllm.console import (
        console,
        print_notices,
        print_report_verdicts,
        print_simulated,
        summary_table,
        truncated_words,
    )
    from ocllm.files.output_guard import REPORT_FILES, check_folder_output
    from ocllm.report.write import write_run_report
    from ocllm.simulated_words import run_banner

    check_filter(from_format, filter_name)
    if out is not None:
        folder = out
    elif run_path.is_dir() and from_format is None:
        folder = run_path / "report"
    else:  # beside a file, or beside another tool's folder (never inside it: its files are read by name)
        folder = run_path.parent / f"{run_path.stem if run_path.is_file() else run_path.name}_report"
    check_folder_output(folder, REPORT_FILES, [run_path], force=force)
    overrides = policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled, code_runs)
    doc = run_report_doc(run_path, overrides, from_format, filter_name)
    print_simulated(run_banner() if doc.simulated else None)
    print_notices(doc.notices)
    console.print(summary_table(doc.label, doc.summary))
    console.print(f"truncated: {truncated_words(doc.summary)}", soft_wrap=True, highlight=False)
    if doc.tool_verdicts is not None:  # another tool's results: its verdicts beside ours, as rescore --from says
        print_report_verdicts(doc)
    for path in write_run_report(doc, folder):
        console.print(f"wrote {path}")


@app.command("matrix-report")
@click.argument("folder", type=click.Path(path_type=Path))
@out_option("Output folder (default: FOLDER/report).")
@click.option(
    "--baseline", help="The lane the others are compared with (default: a lane named *baseline*, else the first)."
)
@click.option("--force", is_flag=True, help=FORCE_HELP)
@policy_options
def matrix_report(
    folder: Path,
    out: Path | None,
    baseline: str | None,
    force: bool,
    conflict_policy: str | None,
    allow_reasoning_fallback: bool | None,
    think_prefilled: bool | None,
    code_runs: str | None,
) -> None:
    """A leaderboard of the runs in FOLDER and each compared with the baseline lane."""
    from ocllm.analysis.report_documents import find_runs, matrix_doc
    from ocllm.console import console, console_matrix
    from ocllm.files.output_guard import MATRIX_FILES, check_folder_output
    from ocllm.report.write import write_matrix_report

    check_folder_output(out or folder / "report", MATRIX_FILES, find_runs(folder), force=force)
    overrides = policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled, code_runs)
    doc = matrix_doc(folder, baseline, overrides)
    console_matrix(doc, folder)
    for path in write_matrix_report(doc, out or folder / "report"):
        console.print(f"wrote {path}")
