"""The `ocllm` command line: parse arguments, call one library function, print. No logic here.

Each command imports what it needs when it runs, the console included, so that `ocllm --help` and a mistyped
flag answer at once instead of first loading every task type's room (jsonschema, sympy through math-verify,
langdetect), SciPy, matplotlib, rich and aiohttp: `bench/bench_cli_help.py` measures it, and
tests/test_cli_help.py checks which modules `--help` leaves unloaded.

One grammar for every command: the output is `-o/--out` (the spellings of before still read, not shown), `--from`
names another tool's format (runs are arguments), and `--help` names what the registries hold (the shipped suites,
the datasets `import` reads, the tools `--from` reads) when it is shown, so it cannot drift from them."""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ocllm import __version__
from ocllm.errors import Interrupted, OcllmError
from ocllm.run.bounds import out_of_range

if TYPE_CHECKING:
    from ocllm.documents import Summary

# Every command with -o: what it writes replaces an existing file only when that file is its own kind of output.
FORCE_HELP = "Replace an existing file that is not an output of this command (never one of its inputs)."


class Bounded(click.ParamType):
    """A number in its documented range (bounds.py, the table a lanes file is checked against too): NaN,
    infinity and a value outside the range are refused in one line naming the setting and the range."""

    def __init__(self, setting: str, kind: type[int] | type[float]) -> None:
        self.setting, self.kind = setting, kind
        self.name = kind.__name__

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | float:
        try:
            number = self.kind(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not {'an integer' if self.kind is int else 'a number'}", param, ctx)
        if (problem := out_of_range(self.setting, number)) is not None:
            self.fail(problem, param, ctx)
        return number


def _shipped_suites() -> tuple[str, ...]:
    from ocllm.suites import shipped_suites

    return tuple(sorted(shipped_suites()))


def _dataset_names() -> tuple[str, ...]:
    from ocllm.importers.datasets import names

    return names()


def _dataset_labels() -> str:
    from ocllm.importers.datasets import labels

    return labels()


def _tool_formats() -> tuple[str, ...]:
    from ocllm.formats.harnesses import FORMATS

    return tuple(FORMATS)


# What a help text may name by `{key}`, filled from the registry when the help is shown (never at import: the
# registries load the rooms).
LISTINGS: dict[str, Callable[[], str]] = {
    "suites": lambda: ", ".join(_shipped_suites()),
    "datasets": lambda: ", ".join(_dataset_names()),
    "dataset_labels": _dataset_labels,
}


def _filled(text: str) -> str:
    for key, listing in LISTINGS.items():
        if "{" + key + "}" in text:
            text = text.replace("{" + key + "}", listing())
    return text


class Registered(click.Choice):
    """A choice among a registry's names (the datasets the task types register, the tools `--from` reads), read
    when asked, so that a type registered after this module was loaded (a test's own room) is a choice too, and
    `ocllm --help` loads no registry."""

    def __init__(self, names: Callable[[], tuple[str, ...]]) -> None:
        self._names = names
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return self._names()

    @choices.setter
    def choices(self, _value: Any) -> None:
        pass  # click.Choice sets its choices; these are the registry's


class ListingCommand(click.Command):
    """A command whose help names a registry's entries by `{key}` (LISTINGS), filled in when the help is shown.
    Its one-line summary in `ocllm --help` is its `short_help`, so that the list of commands loads no registry."""

    @property  # type: ignore[override]
    def help(self) -> str | None:
        return None if self._help is None else _filled(self._help)

    @help.setter
    def help(self, value: str | None) -> None:
        self._help = value


class Option(click.Option):
    """An option whose help may name a registry's entries by `{key}` (filled when shown), and which may keep
    spellings of before (`before`): they still parse, into the same value, but neither the help nor an error
    shows them. (click shows every name an option has; a hidden second option of the same name would, before
    click 8.5, overwrite the value given to the first with its own default.)"""

    def __init__(self, *args: Any, before: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.before = before

    @contextmanager
    def _shown_names(self) -> Iterator[None]:
        every = self.opts
        self.opts = [name for name in every if name not in self.before]
        try:
            yield
        finally:
            self.opts = every

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        with self._shown_names():
            record = super().get_help_record(ctx)
        return None if record is None else (record[0], _filled(record[1]))

    def get_error_hint(self, ctx: click.Context | None) -> str:
        with self._shown_names():
            return super().get_error_hint(ctx)  # type: ignore[arg-type]  # (None only from click 8.4 on)


def out_option(help: str, *, required: bool = False, before: tuple[str, ...] = ()) -> Callable[[Any], Any]:
    """A command's output, spelled `-o/--out` in every command; `before`: its spellings of before, still read."""
    return click.option(
        "-o", "--out", *before, "out", cls=Option, before=before, type=click.Path(path_type=Path), required=required,
        help=help,
    )  # fmt: skip


def from_option(help: str) -> Callable[[Any], Any]:
    """`--from FORMAT`: another tool's result files, in every command that reads them."""
    return click.option("--from", "from_format", type=Registered(_tool_formats), cls=Option, help=help)


def policy_options(func: click.decorators.FC) -> click.decorators.FC:
    """The scoring switches of every command that scores. Each one given replaces that setting only:
    the rest stay as the run recorded them (a run directory's lane, this project's metrics file), or
    the defaults (conflict policy `last`, no fallback, no prefilled thinking) for other inputs."""
    func = click.option(
        "--think-prefilled/--no-think-prefilled",
        default=None,
        help="The chat template opens <think> in the prompt: output before </think> is reasoning.",
    )(func)
    func = click.option(
        "--allow-reasoning-fallback/--no-reasoning-fallback",
        default=None,
        help="Score the reasoning's final statement when the visible content has none.",
    )(func)
    func = click.option(
        "--conflict-policy",
        type=click.Choice(["last", "strict"]),
        help="When visible final answers of the strongest kind disagree: take the last, or fail.",
    )(func)
    return func


def policy_overrides(
    conflict_policy: str | None, allow_reasoning_fallback: bool | None, think_prefilled: bool | None
) -> dict[str, Any]:
    given = {
        "conflict_policy": conflict_policy,
        "allow_reasoning_fallback": allow_reasoning_fallback,
        "think_prefilled": think_prefilled,
    }
    return {key: value for key, value in given.items() if value is not None}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ocllm")
def app() -> None:
    """Benchmark local LLMs behind OpenAI-compatible endpoints, with an auditable scorer."""


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
) -> None:
    """Re-score a saved run, or another tool's results (--from), from the raw model output, without calling
    any model."""
    from ocllm.analysis.rescore import rescore_file, rescore_tool_files
    from ocllm.console import answers_line, console, print_notices, print_verdicts, summary_table, truncated_words

    _check_filter(from_format, filter_name)
    overrides = policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled)
    if from_format is not None:
        result = rescore_tool_files(from_format, list(inputs), out, overrides, report, filter_name, force=force)
        title = f"Re-scored {from_format} results"
    elif len(inputs) > 1:
        raise OcllmError(f"{len(inputs)} inputs: a saved run is one file or folder (several files need --from)")
    else:
        result = rescore_file(inputs[0], out, overrides, report, force=force)
        title = f"Re-scored {inputs[0].name}"
    summary = result.summary
    print_notices(result.notices)
    print_verdicts(result)
    console.print(summary_table(title, summary))
    console.print(
        f"changed decisions: {summary.changed}   {answers_line(summary)}   truncated: {truncated_words(summary)}",
        soft_wrap=True,
    )
    console.print(f"wrote {out}")
    if report is not None:
        console.print(f"wrote {report}")


def from_options(func: click.decorators.FC) -> click.decorators.FC:
    """compare and report read another tool's results as `rescore --from` does."""
    func = click.option(
        "--filter",
        "filter_name",
        metavar="NAME",
        help="lm-eval: whose extraction is the tool's own answer (as for rescore --from).",
    )(func)
    func = from_option(
        "Read another tool's result files or folders (as rescore --from takes them), re-scored here, the tool's "
        "own verdicts kept beside this scorer's."
    )(func)
    return func


def _check_filter(from_format: str | None, filter_name: str | None) -> None:
    if filter_name is not None and from_format is None:
        raise OcllmError("--filter chooses among lm-eval's filters: it needs --from lm-eval")


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
) -> None:
    """Compare two runs (run directories, metrics files, or another tool's results with --from) task by task."""
    from ocllm.analysis.compare import compare_runs, load_scored
    from ocllm.console import console, console_comparison
    from ocllm.files.output_guard import COMPARISON_FILES, check_folder_output
    from ocllm.report.write import write_comparison

    _check_filter(from_format, filter_name)
    if out is not None:  # refused before either side is read; the default folder is named after the sides
        check_folder_output(out, COMPARISON_FILES, [a, b], force=force)
    overrides = policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled)
    sides = [
        load_scored(p, rescore=not no_rescore, overrides=overrides, from_format=from_format, filter_name=filter_name)
        for p in (a, b)
    ]
    doc = compare_runs(*sides)
    folder = out or Path("comparisons") / f"{_file_name(doc.a.label)}_vs_{_file_name(doc.b.label)}"
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
) -> None:
    """Report one run (or another tool's results, --from): summary, breakdowns and the tasks' evidence, as
    Markdown and HTML."""
    from ocllm.analysis.report_documents import run_report_doc
    from ocllm.console import console, print_notices, print_report_verdicts, summary_table, truncated_words
    from ocllm.files.output_guard import REPORT_FILES, check_folder_output
    from ocllm.report.write import write_run_report

    _check_filter(from_format, filter_name)
    if out is not None:
        folder = out
    elif run_path.is_dir() and from_format is None:
        folder = run_path / "report"
    else:  # beside a file, or beside another tool's folder (never inside it: its files are read by name)
        folder = run_path.parent / f"{run_path.stem if run_path.is_file() else run_path.name}_report"
    check_folder_output(folder, REPORT_FILES, [run_path], force=force)
    overrides = policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled)
    doc = run_report_doc(run_path, overrides, from_format, filter_name)
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
) -> None:
    """A leaderboard of the runs in FOLDER and each compared with the baseline lane."""
    from ocllm.analysis.report_documents import find_runs, matrix_doc
    from ocllm.console import console, console_matrix
    from ocllm.files.output_guard import MATRIX_FILES, check_folder_output
    from ocllm.report.write import write_matrix_report

    check_folder_output(out or folder / "report", MATRIX_FILES, find_runs(folder), force=force)
    doc = matrix_doc(folder, baseline, policy_overrides(conflict_policy, allow_reasoning_fallback, think_prefilled))
    console_matrix(doc, folder)
    for path in write_matrix_report(doc, out or folder / "report"):
        console.print(f"wrote {path}")


def _file_name(label: str) -> str:
    """A run's label as a folder name: a model's "org/name" or spaces made safe."""
    return re.sub(r"[^\w.+-]+", "_", label).strip("_.") or "run"


def lane_options(func: click.decorators.FC) -> click.decorators.FC:
    """Flags for a one-off run; with --config they override the lane's settings. Each one's name in the command's
    function is the lane setting it sets (`timeout_s` for --timeout), and a number is checked against that setting's
    range (bounds.py), so a flag and a lanes file are refused alike. Every setting the run's notices and advice tell
    a user to change is one of them, or is named there by its lanes-file key (tests/test_cli_help.py). Listed last
    shown first."""
    options = [
        click.option("--retry-errors", is_flag=True, help="Re-run only the tasks whose request failed."),
        click.option("--resume", is_flag=True, help="Finish an interrupted run without repeating finished tasks."),
        click.option("--stream/--no-stream", default=None, help="Stream responses (records time to first token)."),
        click.option("--api-key-env", help="Name of the environment variable holding the API key."),
        click.option("--concurrency", type=Bounded("concurrency", int), help="Requests in flight at once."),
        click.option(
            "--samples",
            "samples_per_task",
            type=Bounded("--samples", int),
            help="Ask each task K times (sample i sends seed + i); accuracy is then avg@K, with pass@K and maj@K.",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=Bounded("timeout_s", float),
            help="Seconds one request may take, connection to last byte (the lane's timeout_s).",
        ),
        click.option(
            "--system-prompt",
            help="The system message sent first with every task (the lane's system_prompt; default: none, the "
            "chat template's own).",
        ),
        click.option(
            "--seed",
            type=Bounded("seed", int),
            help="seed sent with each request (sample i sends seed + i); the lane's default is 0.",
        ),
        click.option("--top-p", type=Bounded("top_p", float), help="top_p sent with each request (default: not sent)."),
        click.option(
            "--temperature",
            type=Bounded("temperature", float),
            help="temperature sent with each request (default 0: greedy; sampling with --samples wants the "
            "model's own, e.g. 0.6).",
        ),
        click.option("--max-tokens", type=Bounded("max_tokens", int), help="max_tokens sent with each request."),
        click.option("--reasoning", type=click.Choice(["off", "native"]), help="Ask the chat template to think."),
        click.option("--model", help="Model name as the server knows it."),
        click.option("--base-url", help="Endpoint, e.g. http://127.0.0.1:8000/v1"),
        click.option("--suite", cls=Option, help="A shipped suite ({suites}) or a JSONL file."),
    ]
    for option in options:
        func = option(func)
    return func


NO_SERVER_HELP = "Ignore the lanes' [server] tables: run against whatever already answers at base_url."
SHARD_HELP = "Run only shard K of N (K from 0): the tasks whose stable hash of the id falls in it. Join with merge."


@app.command()
@click.option("--config", "config", type=click.Path(path_type=Path), help="A lanes TOML file.")
@click.option("--lane", "lane_name", help="Which lane of --config to run (the lane's name for a one-off run).")
@out_option("Run directory (default: runs/LANE).")
@click.option("--no-server", is_flag=True, help=NO_SERVER_HELP)
@click.option("--shard", "shard_text", metavar="K/N", help=SHARD_HELP)
@lane_options
@policy_options
def run(
    config: Path | None,
    lane_name: str | None,
    out: Path | None,
    no_server: bool,
    shard_text: str | None,
    resume: bool,
    retry_errors: bool,
    **flags: object,
) -> int:
    """Run one lane of a suite against an OpenAI-compatible server.

    Exit code 0 when every task has an answer, 1 when the run finished with failed requests (they are
    recorded; --retry-errors re-runs them), 2 for a mistake in the command or its files, or when the server refused
    the lane's requests alike (its reason is the last line; the results are written)."""
    from ocllm.analysis.rescore import score_run_dir
    from ocllm.console import ServerWait, all_answered, print_notice, print_run_result
    from ocllm.run.decision_pool import DecisionPool
    from ocllm.run.lanes import Lane, lane_from_mapping, pick_lane, with_flags
    from ocllm.run.runner import run_lane
    from ocllm.run.servers import ServerPool
    from ocllm.run.shards import parse_shard

    shard = parse_shard(shard_text) if shard_text is not None else None
    given = {k: v for k, v in flags.items() if v is not None}
    if config is not None:
        if lane_name is None:
            raise click.UsageError("--config needs --lane NAME")
        lane: Lane = pick_lane(config, lane_name, announce=print_notice)
        if given:
            lane = with_flags(lane, given)
    else:
        for needed in ("base_url", "model"):
            if needed not in given:
                raise click.UsageError(f"--{needed.replace('_', '-')} is needed without --config")
        lane = lane_from_mapping(lane_name or "adhoc", given, "command line")
    with ServerPool(ServerWait()) as servers, DecisionPool() as decisions:
        result = run_lane(
            lane,
            out or Path("runs") / lane.name,
            resume=resume,
            retry_errors=retry_errors,
            announce=print_notice,
            servers=None if no_server else servers,
            shard=shard,
            decisions=decisions,
            score=score_run_dir,
        )
    print_run_result(result)
    if result.stopped is not None:
        # The server refused the lane's requests alike: the results are written, and the run ends with its reason.
        raise OcllmError(result.stopped)
    return 0 if all_answered(result.summary) else 1


@app.command(name="import", cls=ListingCommand, short_help="Turn dataset files on disk into a suite.")
@click.argument("fmt", metavar="FORMAT", type=Registered(_dataset_names))
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(path_type=Path))
@out_option("The suite (JSONL) to write.", required=True, before=("--output",))
@click.option("--per-category", type=Bounded("--per-category", int), help="Take N tasks of each category (seeded).")
@click.option("--limit", type=Bounded("--limit", int), help="Take N tasks in all, in proportion to the categories.")
@click.option(
    "--seed",
    type=Bounded("--seed", int),
    default=0,
    show_default=True,
    help="Seed of the sample and of GPQA's option order.",
)
@click.option("--category", help="Give every task this category; the dataset's own goes to `subset`.")
@click.option("--skip-bad", is_flag=True, help="Leave bad rows out (counted) instead of failing.")
@click.option(
    "--answers",
    "answers",
    multiple=True,
    type=click.Path(path_type=Path),
    help="bfcl: the possible-answer file(s) or folder of the questions (repeatable).",
)
@click.option("--force", is_flag=True, help=FORCE_HELP)
def import_suite(
    fmt: str,
    paths: tuple[Path, ...],
    out: Path,
    per_category: int | None,
    limit: int | None,
    seed: int,
    category: str | None,
    skip_bad: bool,
    answers: tuple[Path, ...],
    force: bool,
) -> None:
    """Turn dataset files on disk ({dataset_labels}; CSV, Parquet, JSONL)
    into a suite.

    FORMAT, the dataset: {datasets}.

    Reads local files only. A PATH may be a folder: every file of the format inside, in sorted order. The
    same files and seed give a byte-identical suite; a larger N keeps every task of a smaller one."""
    from ocllm.console import print_import
    from ocllm.files.atomic import atomic_write_bytes
    from ocllm.files.output_guard import SUITE, check_output
    from ocllm.importers import Selection, answer_files, dataset_files, import_tasks
    from ocllm.suites import canonical_jsonl

    if per_category is not None and limit is not None:
        raise click.UsageError("--per-category and --limit cannot be used together")
    if category is not None and not category.strip():
        raise click.UsageError("--category needs a name")
    check_output(out, SUITE, dataset_files(fmt, list(paths)) + answer_files(list(answers)), force=force)
    selection = Selection(per_category, limit, seed, category)
    imported = import_tasks(fmt, list(paths), selection, skip_bad=skip_bad, answers=list(answers))
    atomic_write_bytes(out, canonical_jsonl(imported.tasks))
    print_import(imported, out)


@app.command()
@click.argument("config", type=click.Path(path_type=Path))
@out_option("Folder of run directories (default: runs/CONFIG).")
@click.option("--lane", "only", multiple=True, help="Run only these lanes (repeatable).")
@click.option("--resume", is_flag=True, help="Finish interrupted lanes without repeating finished tasks.")
@click.option("--no-server", is_flag=True, help=NO_SERVER_HELP)
@click.option("--shard", "shard_text", metavar="K/N", help=SHARD_HELP)
@click.option(
    "--samples", "samples_per_task", type=Bounded("--samples", int),
    help="Ask each task of every lane K times (the lanes' samples_per_task).",
)  # fmt: skip
def matrix(
    config: Path,
    out: Path | None,
    only: tuple[str, ...],
    resume: bool,
    no_server: bool,
    shard_text: str | None,
    samples_per_task: int | None,
) -> int:
    """Run every lane of a lanes file in turn, each into its own run directory.

    Lanes with a [server] table run against a server ocllm starts for them (consecutive lanes with the same
    table share one start) and stops after them. A lane whose server never becomes ready, or dies, fails
    and the next lane runs. Exit code 1 when any lane failed or finished with failed requests."""
    from ocllm.analysis.rescore import score_run_dir
    from ocllm.console import ServerWait, all_answered, print_lane_outcomes, print_notice, print_run_result
    from ocllm.run.decision_pool import DecisionPool
    from ocllm.run.lanes import load_lanes, with_flags
    from ocllm.run.runner import run_lane
    from ocllm.run.servers import ServerFailed, ServerPool
    from ocllm.run.shards import check_shards, parse_shard

    shard = parse_shard(shard_text) if shard_text is not None else None
    lanes = load_lanes(config, announce=print_notice)
    if samples_per_task is not None:
        lanes = {name: with_flags(lane, {"samples_per_task": samples_per_task}) for name, lane in lanes.items()}
    unknown = [name for name in only if name not in lanes]
    if unknown:
        raise click.UsageError(f"no lane named {unknown[0]!r} in {config}")
    if shard is not None:
        check_shards((lane.suite for name, lane in lanes.items() if not only or name in only), shard)
    folder = out or Path("runs") / config.stem
    outcomes: list[tuple[str, str, Summary | None]] = []
    with ServerPool(ServerWait()) as servers, DecisionPool() as decisions:  # one pool of scoring workers for every lane
        for name, lane in lanes.items():
            if only and name not in only:
                continue
            try:
                result = run_lane(
                    lane,
                    folder / name,
                    resume=resume,
                    announce=print_notice,
                    servers=None if no_server else servers,
                    shard=shard,
                    decisions=decisions,
                    command="matrix",
                    score=score_run_dir,
                )
            except ServerFailed as exc:
                print_notice(str(exc))
                outcomes.append((name, f"failed: {exc}", None))
                continue
            print_run_result(result)
            errors = result.summary.errors
            missing = result.summary.missing
            outcome = "complete" if all_answered(result.summary) else f"{errors} failed, {missing} missing"
            if result.stopped is not None:
                print_notice(result.stopped)
                outcome = f"stopped: {result.stopped}"
            outcomes.append((name, outcome, result.summary))
    print_lane_outcomes(outcomes)
    return 0 if all(outcome == "complete" for _, outcome, _ in outcomes) else 1


@app.command()
@click.argument("runs", metavar="RUN_DIR...", nargs=-1, required=True, type=click.Path(path_type=Path))
@out_option("The merged run directory.", required=True)
@click.option("--force", is_flag=True, help="Replace a run in OUT that is not a merge (a merge there is replaced).")
def merge(runs: tuple[Path, ...], out: Path, force: bool) -> int:
    """Join the run directories of a suite's shards (--shard K/N) into one run directory.

    Every shard must be there, of the same suite, lane settings and scorer; no task may be in two. The result
    is an ordinary run: report, compare, rescore and matrix-report read it. A torn or unfinished shard is refused,
    and nothing is written before every shard is checked."""
    from ocllm.analysis.merge import merge_runs
    from ocllm.console import all_answered, console, print_notices, summary_table

    merged = merge_runs(list(runs), out, force=force)
    summary = merged.result.summary
    print_notices(merged.result.notices)
    console.print(summary_table(f"{merged.lane.name}: {merged.shards} shards merged", summary))
    for name in ("manifest.json", "suite.jsonl", "samples.jsonl", "metrics.json"):
        console.print(f"wrote {out / name}")
    return 0 if all_answered(summary) else 1


@app.command()
@click.argument("runs", metavar="[RUN_A RUN_B]", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--difference", type=float, required=True, help="The difference in accuracy to detect, as a share (0.05: 5 points)."
)
@click.option("--discordance", type=float, help="The share of tasks on which the two lanes are expected to disagree.")
@click.option(
    "--from",
    "pilot",
    nargs=2,
    metavar="RUN_A RUN_B",
    type=click.Path(path_type=Path),
    hidden=True,  # the spelling of before: `--from` names another tool's format in every other command
    help="The pilot runs, as the arguments RUN_A RUN_B give them.",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="The level of the two-sided test.")
@click.option("--power", type=float, default=0.8, show_default=True, help="The chance of detecting the difference.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object; its `tasks` is the tasks needed.")
def plan(
    runs: tuple[Path, ...],
    difference: float,
    discordance: float | None,
    pilot: tuple[Path, Path] | None,
    alpha: float,
    power: float,
    as_json: bool,
) -> None:
    """How many tasks (and samples per task) a comparison of two lanes needs to detect a difference.

    With --discordance: the paired (McNemar) design, one sample per task. With two runs RUN_A RUN_B (run
    directories or metrics files of a pilot on the suite): the discordance, or with several samples per task the
    variance of a task's difference, estimated from them. Every figure is a normal approximation
    (docs/statistics.md)."""
    import msgspec

    from ocllm.analysis.planning import plan_from_runs, plan_paired
    from ocllm.analysis.power import McNemarPlan, PilotPlan
    from ocllm.console import print_plan

    if runs and pilot is not None:
        raise click.UsageError("give the pilot runs once: RUN_A RUN_B")
    if runs and len(runs) != 2:
        raise click.UsageError(f"a pilot is two runs, RUN_A RUN_B (got {len(runs)})")
    if runs:
        pilot = (runs[0], runs[1])
    if pilot is not None and discordance is None:
        result: McNemarPlan | PilotPlan = plan_from_runs(pilot[0], pilot[1], difference, alpha, power)
    elif discordance is not None and pilot is None:
        result = plan_paired(difference, discordance, alpha, power)
    else:
        raise click.UsageError("give either --discordance P or two pilot runs RUN_A RUN_B")
    if as_json:
        click.echo(msgspec.json.encode(result).decode())
    else:
        print_plan(result)


@app.command("serve-sim")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback by default).")
@click.option("--port", default=8000, show_default=True, type=Bounded("--port", int), help="Port to listen on.")
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="NAME=ACCURACY",
    help="A simulated model and its accuracy (repeatable). Default: sim-baseline=0.85, sim-reasoning=0.93.",
)
@click.option(
    "--latency",
    "latency_s",
    type=Bounded("--latency", float),
    default=0.0,
    show_default=True,
    help="Seconds per response.",
)
@click.option(
    "--truncation-rate",
    type=Bounded("--truncation-rate", float),
    default=0.03,
    show_default=True,
    help="Share of answers with reasoning on that are cut off (finish_reason: length).",
)
@click.option(
    "--reasoning-field",
    type=click.Choice(["reasoning_content", "reasoning"]),
    default="reasoning_content",
    show_default=True,
    help="The field the reasoning is sent in (vLLM and SGLang: reasoning_content; newer vLLM: reasoning).",
)
@click.option(
    "--seed",
    type=Bounded("--seed", int),
    default=0,
    show_default=True,
    help="Seed of every draw the simulator makes (with the request's own seed when sampling).",
)
@click.option(
    "--suite",
    "suites",
    multiple=True,
    cls=Option,
    help="A suite whose gold answers it knows, shipped or a JSONL file (repeatable; default: every shipped one: "
    "{suites}).",
)
@click.option(
    "--tool-parser",
    type=click.Choice(["structured", "none", "reasoning"]),
    default="structured",
    show_default=True,
    help="Where tool calls go: message.tool_calls, text in the content (no parser), or text in the reasoning.",
)
@click.option(
    "--tool-format",
    type=click.Choice(["mixed", "hermes", "json", "mistral", "llama", "pythonic"]),
    default="mixed",
    show_default=True,
    help="How a tool call written as text is written (mixed: one drawn per answer).",
)
def serve_sim(host: str, port: int, models: tuple[str, ...], suites: tuple[str, ...], **settings: Any) -> None:
    """Serve the built-in SIMULATOR (a fake vLLM-like server; it runs no model) on loopback."""
    from ocllm.sim import SimConfig, serve
    from ocllm.suites import resolve_suite, shipped_suites

    accuracy: dict[str, float] = {}
    for item in models:
        name, _, value = item.partition("=")
        try:
            accuracy[name] = float(value)
        except ValueError:
            raise click.BadParameter(f"{item!r} is not NAME=ACCURACY", param_hint="--model") from None
        if (problem := out_of_range("--model NAME=ACCURACY", accuracy[name])) is not None:
            raise click.BadParameter(f"{item!r}: {problem}", param_hint="--model")
    paths = tuple(resolve_suite(s) for s in suites) or tuple(shipped_suites().values())
    config = SimConfig(suites=paths, **settings, **({"models": accuracy} if accuracy else {}))
    serve(config, host, port)


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    # A scheduler, `timeout` or a container stop sends SIGTERM: it ends the command as Ctrl-C does, so a run
    # marks its manifest interrupted and says how to resume, instead of vanishing with a `running` manifest.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Entry point. Every error a user can cause ends in one line on stderr and exit code 2."""
    if threading.current_thread() is not threading.main_thread():
        return _main(argv)
    previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    try:
        if os.environ.get("OCLLM_TASK_TYPES"):  # rooms defined outside ocllm (loaded only when named)
            from ocllm.scoring import task_types

            task_types.import_rooms(os.environ["OCLLM_TASK_TYPES"])
        result = app.main(args=argv, prog_name="ocllm", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        print(exc.format_message())
        return 0
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        print(f"ocllm: error: {exc.format_message()}{hint}", file=sys.stderr)
        return 2
    except click.ClickException as exc:
        print(f"ocllm: error: {exc.format_message()}", file=sys.stderr)
        return 2
    except OcllmError as exc:
        print(f"ocllm: error: {exc}", file=sys.stderr)
        return 2
    except (click.Abort, KeyboardInterrupt) as exc:
        # click turns Ctrl-C into Abort; the command's own word on what it left behind is its cause.
        cause = exc if isinstance(exc, Interrupted) else exc.__cause__
        advice = cause.advice if isinstance(cause, Interrupted) else _after_interrupt(argv)
        print(f"ocllm: interrupted; {advice}", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0


def _after_interrupt(argv: list[str] | None) -> str:
    """What an interrupted command left behind: a run keeps every finished task; the others write their
    outputs whole or not at all."""
    words = sys.argv[1:] if argv is None else argv
    if any(word in ("run", "matrix") for word in words[:1]):
        return "finished tasks are saved (run the same command again with --resume)"
    return "nothing was written (outputs are written whole or not at all)"


def entry() -> None:
    """Console-script wrapper: the exit code of `main`."""
    sys.exit(main())
