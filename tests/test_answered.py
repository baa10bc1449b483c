"""Answered, no answer, wrong and failed, apart everywhere (issue 19, item 15): metrics.json, the console after
run, rescore and matrix, the run report (Markdown and HTML), the comparison, the matrix leaderboard, and the
chance level of the suite on the accuracy charts.

Real runs against the scriptable server on 127.0.0.1, real files, the real CLI. Every expected count comes from
the table below (what each reply is), never from the code under test."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer, Reply, answer, models
from helpers import write_suite

from ocllm.cli import main

# (task, what the model replies, what that reply is): None as the reply is a failed request (HTTP 400).
LANE_A: list[tuple[dict[str, Any], str | None, str]] = [
    ({"id": "m1", "category": "maths", "options": ["3", "4", "5", "6"], "answer": "B"}, "FINAL: B", "correct"),
    ({"id": "m2", "category": "maths", "options": ["3", "4", "5", "6"], "answer": "A"}, "FINAL: C", "wrong"),
    ({"id": "m3", "category": "maths", "options": ["3", "4", "5", "6"], "answer": "A"}, "I cannot tell.", "none"),
    ({"id": "w1", "category": "words", "options": ["a", "b", "c", "d", "e"], "answer": "A"}, "Hmm.", "none"),
    ({"id": "w2", "category": "words", "options": ["a", "b", "c", "d", "e"], "answer": "E"}, None, "error"),
    ({"id": "s1", "category": "words", "required_substrings": ["alpha"]}, "beta", "wrong"),
    ({"id": "s2", "category": "words", "required_substrings": ["beta"]}, "", "none"),
]
# Lane B answers every MCQ task with A (right where A is the gold letter) and every substring task with both words.
LANE_B = [
    (task, "FINAL: A", "correct" if task["answer"] == "A" else "wrong")
    if "options" in task
    else (task, "alpha beta", "correct")
    for task, _, _ in LANE_A
]


def outcomes(lane: list[tuple[dict[str, Any], str | None, str]], category: str | None = None) -> dict[str, int]:
    """What the table says of a lane's tasks (of one category), counted here."""
    counts = {"correct": 0, "wrong": 0, "none": 0, "error": 0}
    for task, _, outcome in lane:
        if category is None or task["category"] == category:
            counts[outcome] += 1
    return counts


# The suite of both lanes: LANE_A's tasks, each with its type and a question.
SUITE = [
    {"type": "mcq" if "options" in task else "required_substrings", "question": f"Question {task['id']}?", **task}
    for task, _, _ in LANE_A
]


def chance() -> float:
    """The suite's chance level: the mean of 1/options over its MCQ tasks."""
    shares = [Fraction(1, len(task["options"])) for task, _, _ in LANE_A if "options" in task]
    return float(sum(shares) / len(shares))


def run(tmp: Path, name: str, lane: list[tuple[dict[str, Any], str | None, str]], out: Path) -> tuple[int, str]:
    failed = Reply(status=400, json={"error": {"message": "no"}})
    replies = [answer(text) if text is not None else failed for _, text, _ in lane]
    with FaultServer() as server:
        # /models (which lists the model: no trial request), then the tasks in the suite's order, one at a time.
        server.script(models("m"), *replies)
        args = ["run", "--suite", str(write_suite(tmp / "suite.jsonl", SUITE)), "--base-url", server.base_url]
        code = main([*args, "--model", "m", "--lane", name, "--out", str(out), "--concurrency", "1"])
    return code, name


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("answered")
    run(folder, "A", LANE_A, folder / "runs" / "A")
    run(folder, "B", LANE_B, folder / "runs" / "B")
    return folder / "runs"


def test_metrics_json_counts_no_answer_apart_from_wrong_and_errors(folder: Path) -> None:
    summary = json.loads((folder / "A" / "metrics.json").read_text())["summary"]
    want = outcomes(LANE_A)
    assert summary["correct"] == want["correct"] and summary["errors"] == want["error"]
    assert summary["no_answer"] == want["none"]
    assert summary["scored"] - summary["correct"] - summary["no_answer"] == want["wrong"]
    for category in ("maths", "words"):
        want = outcomes(LANE_A, category)
        assert summary["by_category"][category]["no_answer"] == want["none"], category


def test_the_console_after_run_and_rescore_says_no_answer(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    want = outcomes(LANE_A)
    capsys.readouterr()
    code, _ = run(tmp_path, "A", LANE_A, tmp_path / "again")
    printed = capsys.readouterr().out
    assert code == 1  # one failed request
    assert f"no answer: {want['none']}" in printed and f"wrong: {want['wrong']}" in printed
    header = next(line for line in printed.splitlines() if "scope" in line)
    assert "wrong" in header and "no answer" in header
    all_row = next(line for line in printed.splitlines() if re.match(r"\W*all\b", line))
    figures = [str(want[key]) for key in ("correct", "wrong", "none", "error")]
    assert re.findall(r"\d+", all_row)[:4] == figures
    assert main(["rescore", str(folder / "A"), "-o", str(tmp_path / "r.json")]) == 0
    assert f"no answer: {want['none']}" in capsys.readouterr().out


def test_the_run_report_shows_correct_wrong_no_answer_and_errors(folder: Path, tmp_path: Path) -> None:
    want = outcomes(LANE_A)
    assert main(["report", str(folder / "A"), "-o", str(tmp_path)]) == 0
    html = (tmp_path / "report.html").read_text()
    for figure, key in (("correct", "correct"), ("wrong", "wrong"), ("no-answer", "none"), ("errors", "error")):
        value = re.search(rf'data-figure="{figure}">.*?<div class="value">(\d+)</div>', html, re.S)
        assert value and int(value.group(1)) == want[key], figure
    assert html.count('data-verdict="no-answer"') == want["none"]
    md = (tmp_path / "report.md").read_text()
    assert f"| no answer (nothing extracted) | {want['none']} |" in md
    assert f"| wrong | {want['wrong']} |" in md
    # The category chart draws the suite's chance level and says what it is.
    assert f"chance {100 * chance():.0f}%" in html


def test_the_comparison_and_the_matrix_show_no_answer(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = outcomes(LANE_A), outcomes(LANE_B)
    capsys.readouterr()
    assert main(["compare", str(folder / "A"), str(folder / "B"), "-o", str(tmp_path / "c")]) == 0
    printed = capsys.readouterr().out
    doc = json.loads((tmp_path / "c" / "comparison.json").read_text())
    # Paired: every task but the one that failed on A's side.
    assert (doc["a_no_answer"], doc["b_no_answer"]) == (a["none"], b["none"])
    assert f"no answer: A {a['none']}, B {b['none']}" in printed
    assert f"chance {100 * chance():.0f}%" in (tmp_path / "c" / "comparison.html").read_text()
    assert "no answer" in (tmp_path / "c" / "comparison.md").read_text()
    # Each flipped task carries what both sides answered, and opens on the page to show them side by side.
    replies = {task["id"]: (text_a, text_b) for (task, text_a, _), (_, text_b, _) in zip(LANE_A, LANE_B, strict=True)}
    flips = {f["task_id"]: f for f in doc["flips"]}
    assert "m2" in flips and "m3" in flips
    for tid, flip in flips.items():
        assert (flip["a_side"]["content"], flip["b_side"]["content"]) == replies[tid], tid
        assert f'data-flip-detail="{tid}"' in (tmp_path / "c" / "comparison.html").read_text()
    assert flips["m3"]["a_side"]["rule"] == "no_statement" and flips["m3"]["b_side"]["rule"] == "final_statement"

    assert main(["matrix-report", str(folder), "-o", str(tmp_path / "m")]) == 0
    matrix = json.loads((tmp_path / "m" / "matrix.json").read_text())
    lanes = {lane["label"]: lane for lane in matrix["lanes"]}
    assert (lanes["A"]["no_answer"], lanes["B"]["no_answer"]) == (a["none"], b["none"])
    # The matrix page lists flips without opening them: its document keeps no answer texts for them.
    (comparison,) = matrix["comparisons"]
    assert comparison["flips"] and all(f["a_side"] is None and f["b_side"] is None for f in comparison["flips"])
    html = (tmp_path / "m" / "matrix.html").read_text()
    assert "<th class=\"num\">no answer</th>" in html and f"chance {100 * chance():.0f}%" in html
    row = re.search(r'<tr data-lane="A">.*?</tr>', html, re.S)
    assert row and f'data-no-answer="{a["none"]}"' in row.group(0)
    md = (tmp_path / "m" / "matrix.md").read_text()
    assert "no answer" in md.split("## Leaderboard")[1].splitlines()[2]


# --- What the lanes are (issue 19, item 16) ---------------------------------------------------------------

LANES_TOML = """
[defaults]
base_url = "http://127.0.0.1:9/v1"  # each run gives the scriptable server's with --base-url
model = "m"
concurrency = 1
api_key_env = "OCLLM_TEST_SETTINGS_KEY"

[lanes.cool]
temperature = 0.0
max_tokens = 512

[lanes.warm]
temperature = 0.7
max_tokens = 2048
prompt_template = "{question}\\n\\n{options}\\n\\nAnswer <b>now</b>: FINAL: <letter>."
"""
KEY = "sk-never-shown-0123456789"


def settings_table(page: str) -> list[tuple[str, list[str], bool]]:
    """The settings table of a page: (setting, the values shown, marked as differing), in the page's order."""
    table = re.search(r"<table data-settings>(.*?)</table>", page, re.S)
    assert table, "no settings table"
    rows = []
    for attrs, cells in re.findall(r"<tr data-setting=([^>]*)>(.*?)</tr>", table.group(1), re.S):
        values = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", cells, re.S)]
        rows.append((values[0].removesuffix("differs").strip(), values[1:], "data-differs" in attrs))
    return rows


@pytest.fixture(scope="module")
def lanes_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import os

    tmp = tmp_path_factory.mktemp("settings")
    (tmp / "lanes.toml").write_text(LANES_TOML)
    suite = write_suite(tmp / "suite.jsonl", SUITE)
    os.environ["OCLLM_TEST_SETTINGS_KEY"] = KEY
    try:
        for name in ("cool", "warm"):
            with FaultServer() as server:
                server.script(models("m"), then=answer("FINAL: A"))
                args = ["run", "--config", str(tmp / "lanes.toml"), "--lane", name, "--suite", str(suite)]
                assert main([*args, "--base-url", server.base_url, "--out", str(tmp / "runs" / name)]) == 0
    finally:
        del os.environ["OCLLM_TEST_SETTINGS_KEY"]
    # A managed server's record, as servers.py writes it into the manifest, with a key typed into its command.
    manifest_path = tmp / "runs" / "warm" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["server"] = {"command": ["vllm", "serve", "m", "--api-key", KEY, f"--hf-token={KEY}"], "env": []}
    manifest["server_kind"] = "vllm"
    manifest_path.write_text(json.dumps(manifest))
    # The other as a run written before the server kind was recorded.
    older = tmp / "runs" / "cool" / "manifest.json"
    manifest = json.loads(older.read_text())
    assert manifest.pop("server_kind") == "unknown"  # the fault server carries no server's marks
    manifest.pop("server_identity")
    older.write_text(json.dumps(manifest))
    return tmp / "runs"


def test_the_run_page_shows_the_lane_settings(lanes_folder: Path, tmp_path: Path) -> None:
    assert main(["report", str(lanes_folder / "warm"), "-o", str(tmp_path)]) == 0
    page = (tmp_path / "report.html").read_text()
    rows = {name: values for name, values, _ in settings_table(page)}
    assert rows["temperature"] == ["0.7"] and rows["max_tokens"] == ["2048"]
    assert rows["reasoning"] == ["off"] and rows["reasoning switch"] == ["chat_template_kwargs"]
    assert rows["server kind"] == ["vllm"] and rows["API key variable"] == ["OCLLM_TEST_SETTINGS_KEY"]
    assert rows["server command"] == ["vllm serve m --api-key *** --hf-token=***"]
    # The template is shown as text: its markup escaped, not drawn.
    assert "Answer &lt;b&gt;now&lt;/b&gt;" in page and "Answer <b>now</b>" not in page
    assert "| temperature | 0.7 |" in (tmp_path / "report.md").read_text()
    for written in tmp_path.iterdir():
        assert KEY not in written.read_text(), written
    # A run without a server_kind in its manifest (older runs): no such row, and no failure.
    assert main(["report", str(lanes_folder / "cool"), "-o", str(tmp_path / "cool")]) == 0
    rows = {name: values for name, values, _ in settings_table((tmp_path / "cool" / "report.html").read_text())}
    assert "server kind" not in rows and rows["server command"] == ["none (a server already running)"]


def test_the_comparison_and_matrix_pages_show_the_differing_settings_first(lanes_folder: Path, tmp_path: Path) -> None:
    differing = {"temperature", "max_tokens", "templates.mcq", "server command"}
    assert main(["compare", str(lanes_folder / "cool"), str(lanes_folder / "warm"), "-o", str(tmp_path / "c")]) == 0
    assert main(["matrix-report", str(lanes_folder), "-o", str(tmp_path / "m")]) == 0
    for page in (tmp_path / "c" / "comparison.html", tmp_path / "m" / "matrix.html"):
        rows = settings_table(page.read_text())
        marked = [name for name, _, differs in rows if differs]
        assert set(marked) >= differing and rows[: len(marked)] == [r for r in rows if r[2]], page
        values = {name: v for name, v, _ in rows}
        order = [lane for lane in ("cool", "warm")]
        if page.name == "matrix.html":  # the leaderboard's order: both have the same accuracy, name order then
            order = re.findall(r'<tr data-lane="([^"]+)">', page.read_text())
        assert values["temperature"] == [{"cool": "0.0", "warm": "0.7"}[lane] for lane in order], page
        assert "model" not in marked  # the same on both sides
        assert KEY not in page.read_text()
    assert "(differs)" in (tmp_path / "c" / "comparison.md").read_text()


# --- The end of `ocllm matrix`, and a shard's console (issue 19, item 18) ------------------------------------


def wilson(correct: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson score interval, written out from the formula."""
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return centre - half, centre + half


def test_the_end_of_matrix_shows_each_lanes_accuracy_and_its_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "suite.jsonl", SUITE)
    failed = Reply(status=400, json={"error": {"message": "no"}})
    with FaultServer() as server:
        script = []
        for lane in (LANE_A, LANE_B):
            script += [models("m"), *[answer(text) if text is not None else failed for _, text, _ in lane]]
        server.script(*script)
        (tmp_path / "lanes.toml").write_text(
            f'[defaults]\nbase_url = "{server.base_url}"\nmodel = "m"\nconcurrency = 1\nsuite = "{suite}"\n'
            "[lanes.first]\n[lanes.second]\ntemperature = 0.5\n"
        )
        capsys.readouterr()
        assert main(["matrix", str(tmp_path / "lanes.toml"), "--out", str(tmp_path / "runs")]) == 1
    printed = capsys.readouterr().out
    end = printed[printed.rindex("Lanes") :]
    for name, lane in (("first", LANE_A), ("second", LANE_B)):
        want = outcomes(lane)
        scored = len(lane) - want["error"]
        low, high = wilson(want["correct"], scored)
        row = next(line for line in end.splitlines() if f" {name} " in line)
        assert f"{100 * want['correct'] / scored:.1f}%" in row, row
        assert f"{100 * low:.1f}-{100 * high:.1f}%" in row, row
        answered = scored - want["none"]
        assert re.search(rf"\b{answered}\b.*\b{want['none']}\b.*\b{want['error']}\b", row.split("%")[-1]), row
    header = next(line for line in end.splitlines() if "lane" in line and "outcome" in line)
    assert "answered" in header and "no answer" in header and "errors" in header


def test_a_shard_says_it_is_one_at_its_start_and_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocllm.run.shards import shard_of

    suite = write_suite(tmp_path / "suite.jsonl", SUITE)
    mine = sum(shard_of(task["id"], 3) == 1 for task, _, _ in LANE_A)
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: A"))
        args = ["run", "--suite", str(suite), "--base-url", server.base_url, "--model", "m", "--shard", "1/3"]
        capsys.readouterr()
        main([*args, "--out", str(tmp_path / "s1")])
    lines = capsys.readouterr().out.splitlines()
    said = f"shard 1/3: {mine} of {len(LANE_A)} tasks"
    where = [i for i, line in enumerate(lines) if said in line]
    table = next(i for i, line in enumerate(lines) if "scope" in line)
    assert len(where) == 2 and where[0] < table < where[1], lines
