"""The Markdown reports' templates (`templates/*.md.j2`): one Jinja2 environment with autoescaping off, since
Markdown is not HTML. Text from a model or a file is escaped by the `cell` filter (markdown_escaping), which a
template applies to each such value; figures are written by the shared wording, as on the HTML pages. Whatever a
template drew, the control characters of the whole report are written as visible text (visible_text), fenced
listings included: `cat report.md` replays no program's escape sequences."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import jinja2

from ocllm.report.markdown_escaping import cell, code, table, table_head
from ocllm.report.wording import (
    AGREEMENT_NOTE,
    RESOLVED_HEADER,
    RESOLVED_NOTE,
    expected_text,
    extracted_text,
    pass_at,
    template_words,
    verdict_of,
    wrong_answers,
)
from ocllm.visible_text import visible


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
    filters, names = template_words()
    env.filters.update(filters, cell=cell, code=code)
    env.globals.update(
        names,
        # A table whose rows a template writes itself starts with `head`; `table` writes rows given whole.
        head=lambda header, align=None: "\n".join(table_head(header, align)),
        table=_table,
        resolved_header=RESOLVED_HEADER,
        resolved_note=RESOLVED_NOTE,
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
    return visible(environment().get_template(template).render(**context).rstrip()) + "\n"


def render_macro(template: str, macro: str, *args: Any) -> str:
    """One macro of a template (a section other code draws alone, such as a comparison's headline figures)."""
    return visible(str(getattr(environment().get_template(template).module, macro)(*args)))
