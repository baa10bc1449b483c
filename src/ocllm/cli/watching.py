"""`ocllm watch`: a live view of a run, a matrix or a sharded matrix, read from its folders as they grow."""

from __future__ import annotations

from pathlib import Path

import click

from ocllm.cli.app import app
from ocllm.cli.options import Bounded
from ocllm.run.bounds import Bound


@app.command()
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--interval",
    type=Bounded("--interval", float, Bound(0, 3600, above_low=True)),
    default=2.0,
    show_default=True,
    help="Seconds between two readings (and the page's refresh).",
)
@click.option("--once", is_flag=True, help="Print one reading and exit (for scripts).")
@click.option("--follow", is_flag=True, help="Go on after every run has finished (until Ctrl-C).")
@click.option("--baseline", metavar="NAME", help="The lane the others are paired against (default: the first by name).")
@click.option(
    "--stall-after",
    type=Bounded("--stall-after", float, Bound(0, 604_800, above_low=True)),
    default=120.0,
    show_default=True,
    help="Seconds without a new sample after which a run that has not finished is called stalled.",
)
@click.option(
    "--html",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write the view as a self-refreshing HTML page here, at every reading.",
)
@click.option(
    "--serve",
    metavar="PORT",
    type=Bounded("--serve", int, Bound(0, 65_535)),
    help="Also serve the page on 127.0.0.1:PORT.",
)
def watch(
    folder: Path,
    interval: float,
    once: bool,
    follow: bool,
    baseline: str | None,
    stall_after: float,
    html: Path | None,
    serve: int | None,
) -> None:
    """Watch a run, a matrix (DIR/<lane>/) or a sharded matrix (DIR/shard-K/<lane>/) as it runs: per lane and
    shard, done of total, rate, ETA, errors by kind, running accuracy, the paired difference to a baseline lane,
    stalls. Read-only: it never writes in DIR. Exits once every run found has finished (unless --follow)."""
    if once and (follow or serve is not None):
        raise click.UsageError("--once prints one reading: it takes neither --follow nor --serve")
    from ocllm.console import console
    from ocllm.watch.loop import Settings
    from ocllm.watch.loop import watch as run_watch

    settings = Settings(folder, interval, once, follow, baseline, stall_after, html, serve)
    run_watch(settings, console)
