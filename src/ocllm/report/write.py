"""Write a report's files: the document as JSON (for comparisons and matrices), Markdown and HTML.

Each file goes to a temporary name in the output folder and is renamed into place, so a reader never
sees half a report and a crash never leaves one behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ocllm.documents import Comparison, Matrix, RunReport
from ocllm.errors import InputError
from ocllm.files.atomic import atomic_write_bytes, atomic_write_text, pretty_json
from ocllm.report.html import comparison_html, matrix_html, run_report_html
from ocllm.report.markdown import comparison_markdown, matrix_markdown, run_report_markdown
from ocllm.report.wording import drawn


def _write_all(out_dir: Path, files: list[tuple[str, str | bytes]]) -> list[Path]:
    # Render everything before writing anything: a rendering error then leaves no partial set of files.
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: exists and is not a folder; the report is a folder of files")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{out_dir}: cannot create the folder ({exc.strerror or exc})") from None
    paths = []
    for name, content in files:
        path = out_dir / name
        if isinstance(content, bytes):
            atomic_write_bytes(path, content)
        else:
            atomic_write_text(path, content)
        paths.append(path)
    return paths


def write_run_report(doc: RunReport | dict[str, Any], out_dir: Path) -> list[Path]:
    """report.md and report.html for one run report document (ocllm-run-report/1)."""
    data = msgspec.to_builtins(doc)  # the renderers draw the document as its JSON says it
    data["tasks"] = drawn(data.get("tasks") or [])  # each record read into its room's structs once, for both pages
    return _write_all(out_dir, [("report.md", run_report_markdown(data)), ("report.html", run_report_html(data))])


def write_comparison(doc: Comparison | dict[str, Any], out_dir: Path) -> list[Path]:
    """comparison.json, comparison.md and comparison.html for one comparison document (ocllm-comparison/1)."""
    data = msgspec.to_builtins(doc)  # the renderers draw the document as its JSON says it
    return _write_all(
        out_dir,
        [
            ("comparison.json", pretty_json(doc)),
            ("comparison.md", comparison_markdown(data)),
            ("comparison.html", comparison_html(data)),
        ],
    )


def write_matrix_report(doc: Matrix | dict[str, Any], out_dir: Path) -> list[Path]:
    """matrix.json, matrix.md and matrix.html for one matrix document (ocllm-matrix/1)."""
    data = msgspec.to_builtins(doc)  # the renderers draw the document as its JSON says it
    return _write_all(
        out_dir,
        [
            ("matrix.json", pretty_json(doc)),
            ("matrix.md", matrix_markdown(data)),
            ("matrix.html", matrix_html(data)),
        ],
    )
