"""A room draws its own evidence in the run report's task view (TaskType.task_view, scoring/task_view.py): the
options with their marks, the statements found, facts and tables; the report draws the blocks without knowing
the type, and reads none of a type's own fields."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from test_report_render import candidate, run_doc, task

from ocllm.report.html import run_report_html
from ocllm.report.task_views import task_view
from ocllm.scoring import task_types
from ocllm.scoring.task_view import EvidenceTable, MarkedOption, Tag, TaskView

REPORT = Path(__file__).resolve().parents[1] / "src" / "ocllm" / "report"


def test_mcq_room_marks_its_options_and_names_each_statements_letters() -> None:
    content = "Maybe (A)... FINAL: C"
    record = task(
        "t1",
        "c",
        expected="B",
        extracted="C",
        content=content,
        candidates=[
            candidate(content, "(A)", "A", hedged=True, value="x"),
            candidate(content, "FINAL: C", "C", field="content", region="reasoning", reading=["latex"]),
        ],
        decided_by=1,
    )
    record["options"] = ["x", "y", "z"]
    view = task_view(record)
    assert view["options"] == [
        MarkedOption("A", "x", expected=False, wrong_pick=False),
        MarkedOption("B", "y", expected=True, wrong_pick=False),
        MarkedOption("C", "z", expected=False, wrong_pick=True),
    ]
    first, second = view["statements"]
    assert (first.letters, first.tags, first.deciding) == (["A"], [Tag("hedged", warn=True), Tag("value x")], False)
    assert second.deciding and second.tags == [Tag("in the content field"), Tag("latex")]
    # The statements are marked where they stand in the visible content, the deciding one apart.
    assert [(seg.text, seg.index, seg.deciding) for seg in view["content"] if seg.index is not None] == [
        ("(A)", 0, False),
        ("FINAL: C", 1, True),
    ]


def test_math_room_states_each_value_with_its_normal_form() -> None:
    content = "**Answer:** $26.00"
    record = {
        **task("m1", "algebra", expected="26", extracted="$26.00", content=content, candidates=[]),
        "task_type": "math",
        "extraction_method": "answer_label",
        "candidates": [
            {
                **candidate(content, "$26.00", "?", kind="answer_label", method="answer_label"),
                "value": "$26.00",
                "normalised": "26",
            }
        ],
        "normalised_answer": "26",
        "normalisation": ["dollars", "trailing_zeros"],
    }
    for key in ("letter", "letters", "options"):
        del (record["candidates"][0] if key != "options" else record)[key]
    view = task_view(record)
    assert view["options"] == []
    assert [s.stated for s in view["statements"]] == ["$26.00 → 26"]
    assert ("answer, normalised", "26 (dollars → trailing_zeros)") in view["facts"]


def test_substrings_room_says_what_was_missing() -> None:
    record = {
        **task("s1", "c", candidates=[]),
        "task_type": "required_substrings",
        **{key: "required_substrings" for key in ("extraction_method", "rule")},
        "missing_substrings": ["foo", "bar"],
    }
    del record["options"]
    facts = task_view(record)["facts"]
    assert facts[facts.index(("finish reason", "stop")) + 1] == ("missing substrings", "foo, bar")


def test_a_rooms_table_is_drawn_in_the_task_view(monkeypatch: pytest.MonkeyPatch) -> None:
    def with_table(_record: Any) -> TaskView:
        return TaskView(tables=[EvidenceTable("Calls <checked>", ["call", "verdict"], [["get_weather", "ok"]])])

    mcq = task_types.TASK_TYPES["mcq"]
    monkeypatch.setitem(task_types.TASK_TYPES, "mcq", dataclasses.replace(mcq, task_view=with_table))
    page = run_report_html(run_doc())
    assert page.count("<h4>Calls &lt;checked&gt;</h4>") == 4  # each task of the run; the title escaped
    assert "<td>get_weather</td><td>ok</td>" in page


def test_report_modules_read_no_field_of_a_type_and_name_no_room() -> None:
    own_fields = ("options", "candidates", "missing_substrings", "hedged", "letters", "normalised", "decided_by")
    for path in [*REPORT.glob("*.py"), *REPORT.glob("templates/*")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"ocllm\.scoring\.(mcq|math|substrings|instructions|json_answer|tool_call)\b", text), path
        for name in own_fields:
            # read as a record's key (`.get("options")`, `["options"]`), in Python or in a template
            assert not re.search(rf"""(get\(|\[)["']{name}["']""", text), (path, name)
