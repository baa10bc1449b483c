"""`ocllm import`: dataset files on disk into a suite."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass

from ocllm.cli.app import app
from ocllm.cli.options import FORCE_HELP, Bounded, ListingCommand, Registered, dataset_names, out_option


@app.command(name="import", cls=ListingCommand, short_help="Turn dataset files on disk into a suite.")
@click.argument("fmt", metavar="FORMAT", type=Registered(dataset_names))
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
@click.option(
    "--split",
    help="mbpp: only this split of MBPP's, by task id (test 11-510, train 601-974, validation 511-600, prompt 1-10); "
    "default: every row the files hold.",
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
    split: str | None,
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
    selection = Selection(per_category, limit, seed, category, split)
    imported = import_tasks(fmt, list(paths), selection, skip_bad=skip_bad, answers=list(answers))
    atomic_write_bytes(out, canonical_jsonl(imported.tasks))
    print_import(imported, out)
