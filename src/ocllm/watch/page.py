"""The watch as a page: the report pages' look (their style sheet and macros, report/templates/), a table of the
lanes and their shards, the paired difference to the baseline drawn as an interval around zero, and a meta refresh
every interval. Written whole each refresh (a temporary file renamed into place: a browser reloading it never reads
half of one). Escaped as every report page is (autoescaping; control characters made visible)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ocllm.files.atomic import atomic_write_text
from ocllm.report.html_rendering import environment as report_environment
from ocllm.visible_text import visible
from ocllm.watch import cells
from ocllm.watch.figures import Paired, Row, Snapshot


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The report pages' environment with the watch's template beside theirs."""
    report = report_environment()
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("ocllm.watch", "templates"), report.loader]),  # type: ignore[list-item]
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(report.filters)
    env.globals.update(report.globals)
    return env


def page(snapshot: Snapshot, root: Path, taken: str, interval: float, *, live: bool) -> str:
    """The whole page. `live`: it refreshes itself (not once every run has finished and the watch has ended)."""
    return visible(
        environment()
        .get_template("watch.html.j2")
        .render(
            root=str(root),
            taken=taken,
            refresh=max(1, round(interval)) if live else None,
            baseline=snapshot.baseline,
            lanes=[{"row": _row(lane.row), "shards": [_row(s) for s in lane.shards]} for lane in snapshot.lanes],
            notes=snapshot.notes,
            finished=snapshot.finished,
            columns=cells.COLUMNS,
        )
    )


def write_page(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def _row(row: Row) -> dict[str, Any]:
    return {
        "lane": row.lane,
        "shard": row.shard,
        "status": row.status,
        "status_words": cells.status(row),
        "done": cells.done(row),
        "progress": min(row.done / row.total, 1.0) if row.total else None,
        "rate": cells.rate(row),
        "eta": cells.eta(row),
        "errors": cells.errors(row.errors),
        "error_count": sum(row.errors.values()),
        "accuracy": row.accuracy,
        "accuracy_words": cells.accuracy(row),
        "ci": row.interval,
        "ci_words": cells.accuracy_interval(row),
        "paired": _paired(row.paired),
        "notes": cells.notes(row),
    }


def _paired(paired: Paired | None) -> dict[str, Any] | None:
    if paired is None:
        return None
    track = None
    if paired.difference is not None and paired.interval is not None:
        # Drawn on -100 to +100 points, zero in the middle (the ci_track macro takes shares of the track's width).
        track = tuple((v + 1) / 2 for v in (paired.difference, paired.interval.low, paired.interval.high))
    return {
        "n": paired.n,
        "words": cells.difference(paired),
        "interval": cells.difference_interval(paired),
        "p": cells.mcnemar(paired),
        "significant": paired.significant,
        "measured": paired.difference is not None,
        "track": track,
    }
