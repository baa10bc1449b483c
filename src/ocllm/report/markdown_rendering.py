"""The Markdown reports' templates (`templates/*.md.j2`): one Jinja2 environment with autoescaping off, since
Markdown is not HTML. Text from a model or a file is escaped by the `cell` filter (markdown_escaping), which a
template applies to each such value, as the Python renderer did; figures are written by the shared wording."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2

from ocllm.report.markdown_escaping import cell, table
from ocllm.report.wording import (
    category_stderr_sentence,
    diff_interval_name,
    interval,
    mde_sentence,
    pct,
    points,
    points_interval,
    stderr_points,
    test_text,
)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    # trim_blocks and lstrip_blocks: a line holding only a block tag writes nothing, so a template's lines are the
    # report's lines.
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ocllm.report", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(cell=cell, pct=pct, points=points, stderr=stderr_points)
    env.globals.update(
        table=lambda header, rows, align=None: "\n".join(table(header, rows, align)),
        interval=interval,
        points_interval=points_interval,
        diff_interval_name=diff_interval_name,
        test_text=test_text,
        mde_sentence=mde_sentence,
        category_stderr_sentence=category_stderr_sentence,
    )
    return env


def render_lines(template: str, **context: Any) -> list[str]:
    """A template's text as the lines the Markdown renderer joins (the last line break dropped)."""
    return environment().get_template(template).render(**context).removesuffix("\n").split("\n")
