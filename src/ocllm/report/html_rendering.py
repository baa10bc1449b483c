"""The HTML pages' templates: one Jinja2 environment, with autoescaping on for every template, its filters and
globals (the shared words of `wording`), and the page's filter script with its Content-Security-Policy hash.

Nothing that came from a model or a file is ever marked safe: the only `Markup` values handed to a template are
the chart SVGs (matplotlib escapes the labels in them), the filter script, and a name made breakable after it was
escaped. A Content-Security-Policy meta tag forbids every fetch and admits only that script (by hash), so even a
mistake in escaping would leave injected markup inert.

Autoescaping leaves control characters as they are (ESC, NUL, a right-to-left override are no markup): the whole
rendered page goes through `visible_text.visible`, which writes them as visible text (`\\x1b`, `U+202E`). What it
writes is letters, digits, `\\` and `+`, never markup; the page's own text, script and charts hold no character it
changes, so the script's hash stays true.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup
from markupsafe import escape as markupsafe_escape

from ocllm import __version__
from ocllm.report.wording import (
    count,
    seconds,
    template_words,
)
from ocllm.visible_text import visible


# A few lines of progressive enhancement, shipped as templates/filter.js: the page is complete without them
# (every task is listed, and <details> opens without script). They only filter the list; model text is read
# via dataset, never written as HTML.
@lru_cache(maxsize=1)
def filter_script() -> str:
    """The run page's filter script, read once from the package. It is inlined exactly as returned here, and
    the Content-Security-Policy hash is computed from the same string."""
    return resources.files("ocllm.report").joinpath("templates", "filter.js").read_text(encoding="utf-8")


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    # autoescape=True rather than select_autoescape: the templates end in .html.j2, which the
    # extension-based helper would not recognise as HTML.
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ocllm.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    filters, names = template_words()
    env.filters.update(filters, count=count, seconds=seconds, breakable=breakable)
    env.globals.update(names, version=__version__)
    return env


def breakable(name: object) -> Markup:
    """A snake_case name that may wrap after its underscores (escaped first, so it stays text)."""
    return Markup(str(markupsafe_escape(str(name))).replace("_", "_<wbr>"))


def render(template: str, *, script: str | None = None, **context: Any) -> str:
    """A whole page, its control characters written as visible text."""
    return visible(
        environment()
        .get_template(template)
        .render(
            script=Markup(script) if script else None,
            script_source=_script_hash(script) if script else "'none'",
            **context,
        )
    )
