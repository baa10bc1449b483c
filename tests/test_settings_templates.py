"""Settings tables show what was sent (issue 41, item 4): each lane's prompt template of each task type it ran, as
its prompts carried it (the math template's `\\boxed{}`, not the `\\boxed{{}}` a template escapes it as), and no
template of a type it did not run; a new manifest records the templates under `templates` alone, the keys the docs
ask users to move away from (`math_template`, ...) never, and a manifest that has them still reads. Real runs on
the simulator (HTTP on 127.0.0.1), real files, the pages as written."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_answered import settings_table

from ocllm.cli import main
from ocllm.scoring import task_types
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

KEYS_BEFORE = {"prompt_template", "substring_template", "math_template", "instructions_template", "json_template",
               "tool_template"}  # fmt: skip
# Every shipped room (a test's toy room may be registered beside them).
TYPES = tuple(t.name for t in task_types.TASK_TYPES.values() if t.decide.__module__.startswith("ocllm.scoring."))
# The math room's default, as the request carried it (read off the prompt sent, below, not off the code).
BOXED = "Put your final answer within \\boxed{}."


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two math lanes (one sets its own math template, braces escaped as a template must) and a tool-call lane."""
    tmp = tmp_path_factory.mktemp("templates")
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as sim:
        (tmp / "lanes.toml").write_text(
            f'[defaults]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nconcurrency = 4\n'
            '[lanes.math]\nsuite = "demo-math"\n'
            '[lanes.math_own]\nsuite = "demo-math"\n[lanes.math_own.templates]\nmath = "{question} Say {{it}}."\n'
            '[lanes.tools]\nsuite = "demo-tools"\n'
        )
        assert main(["matrix", str(tmp / "lanes.toml"), "--out", str(tmp / "runs")]) in (0, 1)
    yield tmp / "runs"


def test_a_new_manifest_records_the_templates_under_the_current_key_alone(matrix: Path) -> None:
    lane = json.loads((matrix / "math" / "manifest.json").read_text())["lane"]
    assert not KEYS_BEFORE & set(lane), sorted(KEYS_BEFORE & set(lane))
    assert set(lane["templates"]) == set(TYPES)
    sent = [json.loads(line) for line in (matrix / "math" / "samples.jsonl").read_text().splitlines()]
    # What the requests carried: the figure the pages are checked against.
    assert all(BOXED in json.dumps(sample, ensure_ascii=False).replace("\\\\", "\\") for sample in sent)


def rows_of(page: Path) -> dict[str, list[str]]:
    return {name: [html.unescape(v) for v in values] for name, values, _ in settings_table(page.read_text())}


def test_a_run_page_shows_the_template_of_its_own_type_as_sent(matrix: Path, tmp_path: Path) -> None:
    for lane, ran in (("math", "math"), ("tools", "tool_call")):
        assert main(["report", str(matrix / lane), "-o", str(tmp_path / lane)]) == 0
        rows = rows_of(tmp_path / lane / "report.html")
        md = (tmp_path / lane / "report.md").read_text()
        shown = {name for name in rows if name.startswith("templates")}
        assert shown == {f"templates.{ran}"}, shown
        for other in TYPES:
            assert (f"templates.{other}" in md) == (other == ran), other
        assert '{"code": "{question}"}' not in md and "prompt template" not in md
    math = rows_of(tmp_path / "math" / "report.html")["templates.math"][0]
    assert BOXED in math and "\\boxed{{}}" not in math and "{question}" in math


def test_compare_and_matrix_pages_show_each_lane_s_own_templates_unescaped(matrix: Path, tmp_path: Path) -> None:
    assert main(["compare", str(matrix / "math"), str(matrix / "math_own"), "-o", str(tmp_path / "c")]) == 0
    rows = rows_of(tmp_path / "c" / "comparison.html")
    assert [name for name in rows if name.startswith("templates")] == ["templates.math"]
    default, own = rows["templates.math"]
    assert BOXED in default and "{{" not in default and own == "{question} Say {it}."
    assert main(["matrix-report", str(matrix), "-o", str(tmp_path / "m")]) == 0
    page = tmp_path / "m" / "matrix.html"
    rows = rows_of(page)
    table = re.search(r"<table data-settings>\s*<thead>(.*?)</thead>", page.read_text(), re.S)
    assert table
    order = [re.sub(r"<[^>]+>", "", th).strip() for th in re.findall(r"<th>(.*?)</th>", table.group(1))][1:]
    assert {name for name in rows if name.startswith("templates")} == {"templates.math", "templates.tool_call"}
    math = dict(zip(order, rows["templates.math"], strict=True))
    tools = dict(zip(order, rows["templates.tool_call"], strict=True))
    assert tools["math"] == tools["math_own"] == "—" and math["tools"] == "—"  # nothing for a type not run
    assert BOXED in math["math"] and math["math_own"] == "{question} Say {it}." and tools["tools"] == "{question}"
    md = (tmp_path / "m" / "matrix.md").read_text()
    assert "\\boxed{{}}" not in md.replace("\\\\", "\\") and "templates.code" not in md


def test_a_manifest_of_before_still_reads(matrix: Path, tmp_path: Path) -> None:
    """A manifest written before issue 41: each shipped type's template under its key of before, `templates` of
    the later types only. Its page shows its own type's template as sent, and a resume of it is not refused."""
    run = tmp_path / "old"
    run.mkdir()
    for name in ("samples.jsonl", "suite.jsonl", "manifest.json"):
        (run / name).write_bytes((matrix / "math" / name).read_bytes())
    manifest = json.loads((run / "manifest.json").read_text())
    table = manifest["lane"].pop("templates")
    before = dict(zip(("mcq", "required_substrings", "math", "instructions", "json", "tool_call"),
                      ("prompt_template", "substring_template", "math_template", "instructions_template",
                       "json_template", "tool_template"), strict=True))  # fmt: skip
    manifest["lane"].update({key: table.pop(name) for name, key in before.items()})
    manifest["lane"]["templates"] = table
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", str(run), "-o", str(tmp_path / "page")]) == 0
    rows = rows_of(tmp_path / "page" / "report.html")
    assert [name for name in rows if name.startswith("templates")] == ["templates.math"]
    assert BOXED in rows["templates.math"][0]
