"""Records typed end to end (issue 42, item 1): a record read back is decoded once into its room's structs, and the
rooms' report hooks and tallies read their own evidence as attributes, never by string keys; a record that does not
decode is still drawn; the record <-> Sample mapping is declared once (models.SAMPLE_KEYS), and every Sample field
survives a write and a read."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_report_render import run_doc, task

from ocllm.analysis.rescore import task_record
from ocllm.formats.metrics_file import load_metrics_file
from ocllm.formats.records import SavedRecord
from ocllm.models import (
    SAMPLE_KEYS,
    SAMPLE_LEFT_OFF_RECORD,
    Decision,
    Policy,
    Sample,
    sample_from_record,
    sample_record,
)
from ocllm.report.html import run_report_html
from ocllm.report.markdown import run_report_markdown
from ocllm.scoring import decide, task_types
from ocllm.scoring.math.decision import MathDecision
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.tally import MathTally
from ocllm.scoring.mcq.decision import McqDecision
from ocllm.scoring.mcq.fields import McqTask

SCORING = Path(__file__).resolve().parents[1] / "src" / "ocllm" / "scoring"
SHIPPED = ("mcq", "required_substrings", "math", "instructions", "json", "tool_call", "code")


# --- no room reads its own evidence back by string keys ------------------------------------------------------------


def _own_fields(struct: type[msgspec.Struct]) -> set[str]:
    """A decision struct's fields that the base Decision lacks, and every field of the evidence structs in them."""
    found: set[str] = set()

    def walk(info: msgspec.inspect.Type) -> None:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls in seen:
                return
            seen.add(info.cls)
            for field in info.fields:
                found.add(field.name)
                walk(field.type)
        for inner in ("item_type", "value_type", "types"):
            value = getattr(info, inner, None)
            for each in value if isinstance(value, tuple) else [value]:
                if isinstance(each, msgspec.inspect.Type):
                    walk(each)

    seen: set[type] = set()
    walk(msgspec.inspect.type_info(struct))
    return found - {f.name for f in msgspec.structs.fields(Decision)} | {"candidates"}


_BY_NAME = ("getattr", "hasattr")


def _keyed_reads(path: Path) -> list[tuple[str, int, str]]:
    """Every string key read in a module (`x.get("k")`, `x["k"]`, `getattr(x, "k")`, `hasattr(x, "k")`), with the
    function it stands in. Not a read of a record: the summary's figures (a function taking `details`, a mapping as
    it should be), and a tally's own counters (`self.rules["k"]`) or a figure it writes (`figures["k"] = ...`)."""
    reads = []
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(function, ast.FunctionDef) or "details" in {a.arg for a in function.args.args}:
            continue
        for node in ast.walk(function):
            key: object = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BY_NAME:
                key = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else None
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                key = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            elif (
                isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                and isinstance(node.slice, ast.Constant) and not ast.unparse(node.value).startswith("self.")
            ):  # fmt: skip
                key = node.slice.value
            if isinstance(key, str):
                reads.append((function.name, node.lineno, key))
    return reads


@pytest.mark.parametrize("name", SHIPPED)
def test_no_room_reads_its_own_evidence_back_by_string_keys(name: str) -> None:
    room = task_types.of(name)
    own = _own_fields(room.decision_type)
    folder = SCORING / room.decision_type.__module__.split(".")[-2]
    for module in ("render.py", "tally.py"):
        path = folder / module
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if module == "tally.py":  # a tally is handed its room's decisions: it reads their attributes
            assert "getattr(" not in text and "hasattr(" not in text, path
        bad = [(f, line, key) for f, line, key in _keyed_reads(path) if key in own]
        assert not bad, f"{path}: {bad}"


def test_the_statements_are_read_from_the_candidate_structs() -> None:
    text = (SCORING / "task_view.py").read_text(encoding="utf-8")
    assert ".get(" not in text and "Mapping" not in text


# --- a record read once, and one that does not decode -----------------------------------------------------------


def test_a_record_is_read_into_its_rooms_structs() -> None:
    record = task("t1", "c", expected="B", extracted="B")
    scored = task_types.scored(record)
    assert isinstance(scored.task, McqTask) and scored.task.options == ["x", "y"]
    assert isinstance(scored.decision, McqDecision) and scored.decision.candidates[0].letters == ["B"]
    assert scored.unread is None and not scored.failed and scored.content == "FINAL: B"


def test_a_failed_requests_record_has_no_decision_and_keeps_its_task() -> None:
    scored = task_types.scored(task("t4", "c", error="HTTP 500 after 4 attempts"))
    assert scored.failed and scored.decision is None and scored.unread is None
    assert isinstance(scored.task, McqTask)  # its options are still drawn, the gold marked


def test_a_record_of_another_shape_is_still_drawn_saying_why_its_evidence_is_not() -> None:
    """A document an older version wrote, whose evidence has another shape (here a statement kind since renamed):
    the record does not decode into the room's struct; the report draws the task from the fields every record has
    (its gold, its answer, its rule and reason), leaves the room's evidence out, and says so in one line."""
    old = {**task("m1", "algebra", expected="26", extracted="26", content="**Answer:** 26", candidates=[]),
           "task_type": "math", "extraction_method": "answer_label", "normalised_answer": "26",
           "candidates": [{"kind": "bold", "method": "bold", "region": "content", "field": "content", "start": 11,
                           "end": 13, "text": "26", "value": "26", "normalised": "26"}]}  # fmt: skip
    scored = task_types.scored(old)
    assert scored.decision is None and scored.unread is not None and "$.candidates[0].kind" in scored.unread
    doc = run_doc([old])
    page, markdown = run_report_html(doc), run_report_markdown(doc)
    for drawn in (page, markdown):
        assert "m1" in drawn and "not drawn: the record is not of this version" in drawn
    assert "answer, normalised" not in page  # the room's own evidence is not guessed at


def test_an_inputs_previous_is_put_in_its_rooms_words() -> None:
    """The audit says an input's earlier answer in the room's words: a `previous` is no decision of the room, and
    what it holds in the room's own words (lm-eval's instructions followed) is read as such."""
    instructions = task_types.of("instructions")
    previous = {"tool": "lm-eval", "correct": False, "instructions_followed": [False, True],
                "instructions_followed_loose": [True, True]}  # fmt: skip
    assert instructions.extracted_text(task_types.scored(previous, "instructions")) == "1 of 2 followed (loose: 2)"
    code = task_types.of("code")
    assert code.extracted_text(task_types.scored({"tool_program": "a\nb\n"}, "code")) == "its program, 2 line(s)"
    sha = "ab" * 32
    said = code.extracted_text(task_types.scored({"extracted_final_answer": sha}, "code"))
    assert said == f"program sha256 {sha[:12]}"


# --- tallies typed on their own decision --------------------------------------------------------------------------


def test_a_tally_is_handed_its_rooms_decisions_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    handed: list[Decision] = []

    class Recording(MathTally):
        def add(self, decision: MathDecision) -> None:
            handed.append(decision)
            super().add(decision)

    math = task_types.TASK_TYPES["math"]
    monkeypatch.setitem(task_types.TASK_TYPES, "math", dataclasses.replace(math, new_tally=Recording))
    tallies = task_types.TypeTallies()
    task = MathTask(id="m", question="1+1?", answer="2")
    failed = decide(task, Sample(task_id="m", error="HTTP 500"), Policy())
    tallies.add(failed)
    # A type whose requests all failed still shows its figures, all nought, as it always did.
    assert tallies.figures() == {"math": MathTally().figures()} and handed == []
    answered = decide(task, Sample(task_id="m", content="\\boxed{2}", finish_reason="stop"), Policy())
    tallies.add(answered)
    assert handed == [answered] and type(failed) is Decision


# --- the Sample carried whole ---------------------------------------------------------------------------------------


def _every_field_set(**fields: Any) -> Sample:
    """A sample whose every field is away from its default."""
    return Sample(
        task_id="t1", sample=2, content="FINAL: B", reasoning="I think B.", tool_calls=[{"id": "c1"}],
        reasoning_field="reasoning_content", finish_reason="stop", usage={"prompt_tokens": 3, "completion_tokens": 4},
        model="m", response_id="r1", latency_s=1.25, ttft_s=0.5, attempts=3, request={"messages": []},
        retry_reasons={"HTTP 503": 2}, resends=1, **fields,
    )  # fmt: skip


def _written_and_read(tmp_path: Path, sample: Sample) -> tuple[dict[str, Any], Sample]:
    task = McqTask(id="t1", question="Pick one.", answer="B", options=["x", "y"])
    record = task_record(SavedRecord(task, sample, {}, {}), decide(task, sample, Policy()))
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"tasks": [record]}), encoding="utf-8")
    (saved,) = load_metrics_file(path).records
    return record, saved.sample


@pytest.mark.parametrize("failed", [False, True])
def test_every_sample_field_survives_a_write_and_a_read(tmp_path: Path, failed: bool) -> None:
    extra: dict[str, Any] = {"error": "HTTP 500 after 3 attempts", "error_kind": "http_status", "error_status": 500}
    sample = _every_field_set(**(extra if failed else {}))
    _, read = _written_and_read(tmp_path, sample)
    for field in msgspec.structs.fields(Sample):
        if field.name in SAMPLE_LEFT_OFF_RECORD:  # samples.jsonl keeps them, the record does not
            continue
        assert getattr(read, field.name) == getattr(sample, field.name), field.name


def test_the_record_keeps_its_flat_layout(tmp_path: Path) -> None:
    record, _ = _written_and_read(tmp_path, _every_field_set())
    keys = list(record)
    after_prompt = keys[keys.index("prompt") + 1 : keys.index("previous")]
    assert after_prompt == [key for key, _ in SAMPLE_KEYS]
    assert keys.index("sample") < keys.index("subset") < keys.index("options") < keys.index("prompt")
    # Without a structured call the key is not written; without raw outputs (a run directory's metrics.json) the
    # raw content and reasoning are not either.
    plain = sample_record(Sample(task_id="t1"), raw_outputs=False)
    assert list(plain) == ["sample", "finish_reason", "usage", "latency_s", "ttft_s", "attempts"]


def test_a_sample_field_added_later_round_trips_with_no_edit() -> None:
    class LongerSample(Sample, kw_only=True, omit_defaults=True):
        seed_sent: int | None = None  # a field this version does not have

    written = sample_record(LongerSample(task_id="t1", content="x", seed_sent=7))
    assert written["seed_sent"] == 7 and list(written)[-1] == "seed_sent"
    read = sample_from_record({"task_id": "t1", **written}, LongerSample)
    assert isinstance(read, LongerSample) and read.seed_sent == 7 and read.content == "x"
    assert "seed_sent" not in sample_record(LongerSample(task_id="t1"))  # at its default: the layout as it was


def test_a_value_is_read_as_the_file_gives_it() -> None:
    """An integer latency stays an integer: the record is written back as it was read (convert would make it 3.0)."""
    read = sample_from_record({"task_id": "t1", "latency_s": 3})
    assert read.latency_s == 3 and isinstance(read.latency_s, int)
    with pytest.raises(msgspec.ValidationError):
        sample_from_record({"task_id": "t1", "attempts": "three"})
