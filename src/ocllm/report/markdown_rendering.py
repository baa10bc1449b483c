"""The Markdown reports' templates (`templates/*.md.j2`): one Jinja2 environment with autoescaping off, since
Markdown is not HTML. Text from a model or a file is escaped by the `cell` filter (markdown_escaping), which a
template applies to each such value; figures are written by the shared wording, as on the HTML pages."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import jinja2

from ocllm.report.markdown_escaping import cell, table, table_head
from ocllm.report.wording import (
    AGREEMENT_NOTE,
    ENDPOINT_HEADER,
    RESOLVED_HEADER,
    RESOLVED_NOTE,
    SERVING_MISSING,
    SERVING_NOTE,
    category_stderr_sentence,
    comparison_sampled,
    correct_of,
    diff_interval_name,
    expected_text,
    extracted_text,
    interval,
    mde_sentence,
    p_value,
    pass_at,
    pct,
    points,
    points_interval,
    rank_of,
    scored,
    share_text,
    stderr_points,
    test_header,
    test_p,
    test_text,
    verdict_of,
    wrong_answers,
)


def _table(header: Sequence[object], rows: Sequence[Sequence[object]], align: str | None = None) -> str:
    """A GitHub table of cells already escaped (or figures: written as text), without its last line break."""
    return "\n".join(table([str(h) for h in header], [[str(v) for v in row] for row in rows], align))


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
    env.filters.update(cell=cell, pct=pct, points=points, stderr=stderr_points, p_value=p_value, share=share_text)
    env.filters.update(scored=scored)
    env.globals.update(
        # A table whose rows a template writes itself starts with `head`; `table` writes rows given whole.
        head=lambda header, align=None: "\n".join(table_head(header, align)),
        table=_table,
        interval=interval,
        points_interval=points_interval,
        rank_of=rank_of,
        correct_of=correct_of,
        diff_interval_name=diff_interval_name,
        sampled_comparison=comparison_sampled,
        test_text=test_text,
        test_header=test_header,
        test_p=test_p,
        mde_sentence=mde_sentence,
        category_stderr_sentence=category_stderr_sentence,
        serving_note=SERVING_NOTE,
        endpoint_header=ENDPOINT_HEADER,
        resolved_header=RESOLVED_HEADER,
        resolved_note=RESOLVED_NOTE,
        serving_missing=SERVING_MISSING,
        agreement_note=AGREEMENT_NOTE,
        pass_at=pass_at,
        wrong_answers=wrong_answers,
        verdict_of=verdict_of,
        expected_text=expected_text,
        extracted_text=extracted_text,
    )
    return env


def render(template: str, **context: Any) -> str:
    """A whole report from its template, ending in one line break."""
    return environment().get_template(template).render(**context).rstrip() + "\n"


def render_macro(template: str, macro: str, *args: Any) -> str:
    """One macro of a template (a section other code draws alone, such as a comparison's headline figures)."""
    return str(getattr(environment().get_template(template).module, macro)(*args))
