"""IFEval's `detectable_format` instructions: bullets, a fixed answer, highlighted sections, numbered sections, JSON
and a <<title>>, each measured on the answer's text as it stands (docs/scoring/instructions.md, "Group B checks").

What each counts, and where it differs from IFEval on purpose:
- bullets: lines that start (after spaces) with `* ` or `- ` followed by text. IFEval's pattern also counts any
  line starting with `-` (a `---` rule, `-5 degrees`) and `*word*` emphasis at a line start; we do not (nor a
  `* * *` rule), and the evidence says so when IFEval's count would differ.
- highlighted sections: as IFEval, every `*text*` on one line and every `**text**`, with non-blank text.
- sections: as IFEval, each occurrence of the splitter word (case as given) followed by a number, anywhere in
  the text; "at least" the number asked, as IFEval compares.
- JSON: as IFEval, the whole answer after stripping one ```json (or ```Json, ```JSON, ```) fence must parse.
- title: as IFEval, `<<...>>` on one line with non-blank text inside.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import Check, Measured, Param

# A marker, a space, then text: a line of markers only (`* * *`, a markdown rule) is not a bullet.
_BULLET = re.compile(r"^[ \t]*[*-][ \t]+[^\n]*?[^\s*-]", re.MULTILINE)

# IFEval's own bullet patterns, used only to say when its count would differ from ours. Their `\s*` crosses blank
# lines, which makes them quadratic on a long run of them: they are asked only of answers up to this size (the
# verdict never needs them).
_IFEVAL_STAR_BULLET = re.compile(r"^\s*\*[^*].*$", re.MULTILINE)
_IFEVAL_DASH_BULLET = re.compile(r"^\s*-.*$", re.MULTILINE)
_IFEVAL_COMPARED_UP_TO = 4_000


def _bullets(text: str, kwargs: Mapping[str, Any]) -> Measured:
    """Exactly `num_bullets` markdown bullets. Differs from IFEval on lines that are no bullets (module docstring)."""
    wanted = kwargs["num_bullets"]
    found = len(_BULLET.findall(text))
    measured = f"bullets: {found}, needed exactly {wanted}"
    theirs = found
    if len(text) <= _IFEVAL_COMPARED_UP_TO:
        theirs = len(_IFEVAL_STAR_BULLET.findall(text)) + len(_IFEVAL_DASH_BULLET.findall(text))
    if theirs != found:
        measured += f" (IFEval's pattern counts {theirs}: it also takes lines like `---`, `-5`, `*word*`, `* * *`)"
    return Measured(found == wanted, measured)


# IFEval's fixed options, matched case-sensitively anywhere in the answer, as IFEval does.
CONSTRAINED_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def _constrained(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    for option in CONSTRAINED_OPTIONS:
        at = text.find(option)
        if at >= 0:
            return Measured(True, f'contains "{option}" at {at}')
    return Measured(False, "none of " + ", ".join(f'"{o}"' for o in CONSTRAINED_OPTIONS) + " found")


_SINGLE_HIGHLIGHT = re.compile(r"\*[^\n*]*\*")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*[^\n*]*\*\*")


def _highlights(text: str, kwargs: Mapping[str, Any]) -> Measured:
    wanted = kwargs["num_highlights"]
    # A `**bold**` span is seen by the double pattern only: the single one finds its two empty `**` ends.
    found = [m for m in _SINGLE_HIGHLIGHT.finditer(text) if m[0].strip("*").strip()]
    found += [m for m in _DOUBLE_HIGHLIGHT.finditer(text) if m[0][2:-2].strip()]
    spans = [m[0] for m in sorted(found, key=lambda m: m.start())]  # in the answer's order, for the evidence
    measured = f"highlighted sections: {len(spans)}, needed at least {wanted}"
    if spans:
        shown = ", ".join(spans[:3]) + (", ..." if len(spans) > 3 else "")
        measured += f" ({shown})"
    return Measured(len(spans) >= wanted, measured)


def _sections(text: str, kwargs: Mapping[str, Any]) -> Measured:
    splitter = kwargs["section_spliter"].strip()  # IFEval strips it too
    wanted = kwargs["num_sections"]
    if not splitter:
        return Measured(False, "the section splitter is blank: no section can be marked")
    # IFEval splits on the word followed by a number and counts the pieces after the first: one per marker.
    found = len(re.findall(re.escape(splitter) + r"\s?\d+", text))
    return Measured(
        found >= wanted, f'sections found: {found} (split on "{splitter}" and a number), needed at least {wanted}'
    )


_FENCE_OPENINGS = ("```json", "```Json", "```JSON", "```")


def _json(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    body = text.strip()
    removed: list[str] = []  # what was taken off the answer before parsing, said in the evidence
    for opening in _FENCE_OPENINGS:
        if body.startswith(opening):
            body = body[len(opening) :]
            removed.append(f"the opening {opening}")
            break
    if body.endswith("```"):
        body = body[:-3]
        removed.append("the closing ```")
    body = body.strip()
    where = f" (after removing {' and '.join(removed)})" if removed else ""
    try:
        value = json.loads(body)
    except ValueError as exc:
        return Measured(False, f"not JSON{where}: {exc}")
    except RecursionError:
        return Measured(False, f"not JSON{where}: nested too deeply to parse")
    return Measured(True, f"parses as JSON{where}: {_json_kind(value)}")


def _json_kind(value: object) -> str:
    """The JSON name of a parsed value's type, as the reader knows it (not Python's)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return "a number"


_TITLE = re.compile(r"<<[^\n]+>>")


def _title(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    found = _TITLE.findall(text)
    for title in found:
        if title.lstrip("<").rstrip(">").strip():
            return Measured(True, f"title {title}")
    if found:
        return Measured(False, f"only empty titles: {found[0]}")
    return Measured(False, "no <<title>> on one line found")


_COUNT = (int,)
CHECKS = [
    Check("detectable_format:number_bullet_lists", "an exact number of markdown bullets",
          (Param("num_bullets", _COUNT, minimum=0),), _bullets),
    Check("detectable_format:constrained_response", "one of IFEval's fixed answers", (), _constrained),
    Check("detectable_format:number_highlighted_sections", "a number of *highlighted* sections",
          (Param("num_highlights", _COUNT, minimum=0),), _highlights),
    Check("detectable_format:multiple_sections", "a number of sections marked SECTION X",
          (Param("section_spliter", (str,)), Param("num_sections", _COUNT, minimum=0)), _sections),
    Check("detectable_format:json_format", "the whole answer in JSON", (), _json),
    Check("detectable_format:title", "a title in <<double angular brackets>>", (), _title),
]  # fmt: skip
