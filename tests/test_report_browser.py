"""The HTML reports in a real headless browser (Debian's chromium, driven by playwright).

Each page is opened from file://, and must draw its charts, open its tasks, log no error, request
nothing from anywhere, and run none of the markup a model might put in its answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

# The documents are built by hand in the renderer tests; the browser sees the same ones.
from test_report_render import FLIP_A_TEXT, XSS, candidate, comparison_doc, endpoint, matrix_doc, run_doc, serving, task
from test_samples import DESIGN, RIGHT_A, RIGHT_B, _lane_design, sampled_file

from ocllm.analysis.compare import compare_runs, load_scored
from ocllm.analysis.report_documents import run_report_doc
from ocllm.report.write import write_comparison, write_matrix_report, write_run_report

pytestmark = pytest.mark.slow  # a real headless browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the HTML reports are tested in Debian's chromium "
            "(`apt-get install chromium`, or `make browser`)"
        )
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


def xss_run() -> dict[str, Any]:
    """A run whose model output, prompt, ids and categories all try to run script."""
    content = f"Here: {XSS}\nFINAL: B"
    reasoning = f"Maybe {XSS} then FINAL: A"
    hostile = task(
        f"task{XSS}",
        f"cat{XSS}",
        content=content,
        reasoning=reasoning,
        prompt=f"Question {XSS}",
        candidates=[
            candidate(content, "FINAL: B", "B"),
            candidate(reasoning, "FINAL: A", "A", field="reasoning"),
            {**candidate(content, XSS, "A"), "kind": "answer", "reading": [XSS]},
        ],
    )
    return run_doc([hostile, task("plain", "math", extracted="A", content="FINAL: A")])


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("reports")
    return {
        "run": write_run_report(run_doc(), out / "run")[-1],
        "xss": write_run_report(xss_run(), out / "xss")[-1],
        "comparison": write_comparison(comparison_doc(), out / "comparison")[-1],
        "matrix": write_matrix_report(matrix_doc(), out / "matrix")[-1],
        "run-serving": write_run_report(run_doc(speed=SPEED), out / "run-serving")[-1],
        "comparison-serving": write_comparison(comparison_doc(speed_b=SPEED), out / "comparison-serving")[-1],
        "matrix-serving": write_matrix_report(matrix_doc(speeds=[SPEED, serving(), None]), out / "matrix-serving")[-1],
        "matrix-long-names": write_matrix_report(long_lane_names(), out / "matrix-long-names")[-1],
        # Repeated samples (issue 21): documents made from sampled metrics files, as `report` and `compare` make them.
        "run-sampled": write_run_report(run_report_doc(sampled_file(out, "L", DESIGN)), out / "run-sampled")[-1],
        "comparison-sampled": write_comparison(
            compare_runs(
                load_scored(sampled_file(out, "A", _lane_design(RIGHT_A))),
                load_scored(sampled_file(out, "B", _lane_design(RIGHT_B))),
            ),
            out / "comparison-sampled",
        )[-1],
        # Instructions and json tasks (issue 22): each instruction's verdict and measure, a JSON answer's evidence.
        "run-formats": write_run_report(run_report_doc(formats_file(out)), out / "run-formats")[-1],
    }


def formats_file(folder: Path) -> Path:
    """A metrics file of one instructions task and one json task, in the old harness's record format."""
    words = {"id": "length_constraints:number_words", "kwargs": {"num_words": 5, "relation": "at least"}}
    records = [
        {"task_id": "if1", "task_type": "instructions", "category": "ifeval", "finish_reason": "stop",
         "instructions": [{"id": "punctuation:no_comma", "kwargs": {}}, words],
         "raw_content": "Sure, here it is:\nThe river runs slowly past the stone bridge"},
        {"task_id": "js1", "task_type": "json", "category": "json", "finish_reason": "stop",
         "schema": {"type": "object", "required": ["name"]}, "raw_content": '```json\n{"age": 3}\n```'},
    ]  # fmt: skip
    path = folder / "formats.json"
    path.write_text(json.dumps({"lane": "F", "tasks": records}))
    return path


def long_lane_names() -> dict[str, Any]:
    """The serving matrix with lane names as long as real ones (a quantisation and a parser in the name)."""
    text = json.dumps(matrix_doc(speeds=[SPEED, serving(), None]))
    for short, long in (("lane_A", "A_baseline_reasoning_off_q4"), ("lane_B", "B_native_reasoning_fp8_kv")):
        text = text.replace(short, long)
    return json.loads(text)


# Serving figures of a lane served by two replicas, one of them behind a hostile address.
SPEED = serving(endpoints=[endpoint("http://gpu0:8000/v1", 60), endpoint(f"http://gpu1/{XSS}", 40, errors=2)])


@dataclass
class Watched:
    page: Page
    problems: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


def local(url: str) -> bool:
    return url.startswith(("file://", "about:", "data:", "http://127.0.0.1", "http://localhost"))


def open_report(browser: Browser, path: Path) -> Iterator[Watched]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    watched = Watched(page)
    page.on("console", lambda m: watched.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: watched.problems.append(f"page error: {e}"))
    page.on("request", lambda r: None if local(r.url) else watched.problems.append(f"request to {r.url}"))

    def on_dialog(dialog: Any) -> None:
        watched.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(path.as_uri(), wait_until="load")
    try:
        yield watched
    finally:
        page.close()


@pytest.fixture
def opened(browser: Browser, reports: dict[str, Path], request: pytest.FixtureRequest) -> Iterator[Watched]:
    yield from open_report(browser, reports[request.param])


EXPECTED_CHARTS = {
    "run": {"category-accuracy", "latency", "completion-tokens"},
    "comparison": {"accuracy", "difference", "category-accuracy", "latency", "completion-tokens"},
    "matrix": {"accuracy", "difference", "category-accuracy", "latency", "completion-tokens"},
}


@pytest.mark.parametrize("opened", ["run", "comparison", "matrix"], indirect=True)
def test_page_draws_every_chart_quietly(opened: Watched, request: pytest.FixtureRequest) -> None:
    page = opened.page
    kind = request.node.callspec.params["opened"]
    keys = page.eval_on_selector_all("figure[data-chart]", "els => els.map(e => e.dataset.chart)")
    assert set(keys) == EXPECTED_CHARTS[kind]
    for key in keys:
        svg = page.locator(f'figure[data-chart="{key}"] svg')
        assert svg.count() == 1, key
        box = svg.bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 50, (key, box)
        # Something is drawn inside: matplotlib's paths and text, laid out.
        assert page.eval_on_selector(f'figure[data-chart="{key}"] svg', "s => s.getBBox().width") > 0
    page.wait_for_timeout(50)
    assert opened.problems == []
    assert opened.dialogs == []


@pytest.mark.parametrize(
    "opened", ["run-serving", "comparison-serving", "matrix-serving", "matrix-long-names"], indirect=True
)
def test_serving_figures_show_as_text_and_fit_the_page(opened: Watched) -> None:
    page = opened.page
    tables = page.locator("table[data-serving], table[data-endpoints], td[data-serving]")
    assert tables.count() > 0
    for i in range(tables.count()):
        assert tables.nth(i).is_visible()
    endpoints = page.locator("table[data-endpoints] td.mono")
    assert endpoints.count() == 2
    assert f"http://gpu1/{XSS}" in endpoints.nth(1).inner_text()  # text where the address put it
    # The serving and endpoint tables, and the matrix's leaderboard with its three more columns, are narrow
    # enough not to scroll sideways on a laptop's screen.
    wide = page.eval_on_selector_all(
        "table[data-serving], table[data-endpoints], table[data-leaderboard]",
        "els => els.map(t => t.closest('.table-wrap')).filter(w => w.scrollWidth > w.clientWidth + 1).length",
    )
    assert wide == 0
    page.wait_for_timeout(50)
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator("img").count() == 0
    assert opened.problems == [] and opened.dialogs == []


@pytest.mark.parametrize("opened", ["run"], indirect=True)
def test_clicking_a_task_opens_its_evidence(opened: Watched) -> None:
    page = opened.page
    row = page.locator('details.task[data-task-id="t2"]')
    assert row.get_attribute("open") is None
    body = row.locator(".task-body")
    assert not body.is_visible()
    row.locator(":scope > summary").click()
    assert row.evaluate("d => d.open") is True
    assert body.is_visible()
    assert "Hmm." in row.locator("pre.content").inner_text()
    assert "Pick one." in row.locator("pre.prompt").inner_text()
    deciding = row.locator("li.candidate.deciding")
    assert deciding.count() == 1 and "decided" in deciding.inner_text().lower()
    # The reasoning stays folded until asked for.
    reasoning = row.locator("details.reasoning")
    assert not reasoning.locator("pre").is_visible()
    reasoning.locator(":scope > summary").click()
    assert reasoning.locator("pre").is_visible()
    assert opened.problems == []


@pytest.mark.parametrize("opened", ["run"], indirect=True)
def test_filter_narrows_the_task_list(opened: Watched) -> None:
    page = opened.page
    assert page.locator("[data-filters]").is_visible()  # the script ran, so the CSP hash admitted it
    page.select_option("#verdict-filter", "failing")
    visible = page.eval_on_selector_all("details.task", "els => els.filter(e => !e.hidden).map(e => e.dataset.taskId)")
    assert visible == ["t2", "t4"]
    page.select_option("#verdict-filter", "")
    page.fill("#task-filter", "logic")
    visible = page.eval_on_selector_all("details.task", "els => els.filter(e => !e.hidden).map(e => e.dataset.taskId)")
    assert visible == ["t3", "t4"]
    assert page.locator("#task-count").inner_text() == "2 of 4 tasks"
    assert opened.problems == []


@pytest.mark.parametrize("opened", ["xss"], indirect=True)
def test_model_markup_runs_nothing_and_shows_as_text(opened: Watched) -> None:
    page = opened.page
    row = page.locator("details.task").first
    assert row.get_attribute("data-task-id") == f"task{XSS}"
    row.locator(":scope > summary").click()
    row.locator("details.reasoning > summary").click()
    page.wait_for_timeout(100)  # give any injected handler (onerror, onload) its chance to fire
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert opened.dialogs == []
    # The payload is on screen as text, where the model put it.
    assert XSS in row.locator(":scope > summary").inner_text()
    assert XSS in row.locator("pre.prompt").inner_text()
    assert XSS in row.locator("pre.content").inner_text()
    assert XSS in row.locator("pre.reasoning-text").inner_text()
    assert XSS in row.locator("li.candidate").nth(2).inner_text()
    # And none of it became an element.
    assert page.locator("img").count() == 0
    assert page.locator("svg[onload]").count() == 0
    assert page.locator("script").count() == 1  # the page's own filter script
    assert page.locator("figure[data-chart] svg").count() == 3
    assert opened.problems == []


def long_names_run() -> dict[str, Any]:
    """Tasks with the longest method and ambiguity names the scorer gives, truncated: the layout's worst case."""
    tasks = []
    for i, (method, ambiguity) in enumerate(
        [
            ("option_text_after_final_answer_marker", "ambiguous_final_answer"),
            ("final_colon_letter", "answer_only_in_reasoning"),
            ("boxed_letter_after_explicit_marker", "conflicting_final_answers"),
            ("none", "no_extractable_answer"),
        ]
    ):
        t = task(f"reasoning_mmlu_pro_engineering_{i:03d}", "reasoning_mmlu_pro_engineering")
        t.update(extraction_method=method, ambiguity=ambiguity, truncated=True, finish_reason="length")
        tasks.append(t)
    doc = run_doc(tasks)
    doc["summary"]["truncated"] = len(tasks)
    return doc


@pytest.mark.parametrize("width", [1400, 1024, 760])
def test_tags_stay_whole_and_tables_fit_the_page(browser: Browser, tmp_path: Path, width: int) -> None:
    """Issue 8: the "truncated" tag was cut off in the task list, and the ambiguity table scrolled sideways
    at 1400 px."""
    page_path = write_run_report(long_names_run(), tmp_path / "long")[-1]
    for watched in open_report(browser, page_path):
        page = watched.page
        page.set_viewport_size({"width": width, "height": 900})
        tags = page.eval_on_selector_all(
            "details.task > summary .tag",
            """els => els.map(t => {
                const r = t.getBoundingClientRect(), box = t.closest('.task-row > span').getBoundingClientRect();
                return [t.textContent, r.width > 0 && r.left >= box.left - 0.5 && r.right <= box.right + 0.5];
            })""",
        )
        assert tags and all(whole for _, whole in tags), tags
        wide = page.eval_on_selector_all(
            "#extraction .table-wrap",
            "els => els.filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.dataset.breakdown)",
        )
        assert wide == []
        assert watched.problems == []


# --- issue 19 item 14: a large run's page ------------------------------------------------------------------


def test_a_large_runs_filter_counts_and_narrows_the_rows_not_shown_in_full(browser: Browser, tmp_path: Path) -> None:
    from test_report_render import large_run

    doc = large_run(1000)
    write_run_report(doc, tmp_path)
    for watched in open_report(browser, tmp_path / "report.html"):
        page = watched.page
        assert page.locator("#task-count").inner_text() == "1000 tasks"  # the rows count with the tasks in full
        page.fill("#task-filter", "q0099")  # q00990-q00998: listed as rows, or drawn in full
        shown = page.eval_on_selector_all(
            "table[data-task-index] tr[data-v]", "rows => rows.filter(r => !r.hidden).map(r => r.cells[1].textContent)"
        )
        opened = page.eval_on_selector_all(
            "details.task", "els => els.filter(e => !e.hidden).map(e => e.dataset.taskId)"
        )
        expected = sorted(t["task_id"] for t in doc["tasks"] if t["task_id"].startswith("q0099"))
        assert sorted(shown + opened) == expected and shown  # some are rows, some (the wrong one) in full
        assert page.locator("#task-count").inner_text() == f"{len(expected)} of 1000 tasks"
        page.fill("#task-filter", "")
        page.select_option("#verdict-filter", "wrong")
        wrong = page.eval_on_selector_all("tr[data-v]", "rows => rows.filter(r => !r.hidden).length")
        assert wrong == 0  # every wrong answer of this run is among the tasks shown in full
        assert page.evaluate("window.__xss") is None and watched.problems == []


# --- Flipped tasks side by side (issue 19, item 18) -----------------------------------------------------------


@pytest.mark.parametrize("opened", ["comparison"], indirect=True)
def test_a_flipped_task_opens_to_show_both_answers_side_by_side(opened: Watched) -> None:
    page = opened.page
    flip = page.locator('details[data-flip-detail="flip|1"]')
    assert flip.count() == 1 and not flip.evaluate("d => d.open")
    side_a, side_b = flip.locator('[data-side="a"]'), flip.locator('[data-side="b"]')
    assert not side_a.is_visible()
    flip.locator("summary").first.click()
    assert side_a.is_visible() and side_b.is_visible()
    side_a.locator("details.reasoning > summary").click()
    # The model's text as text (the hostile markup inert), the decision's evidence beside it.
    assert side_a.locator("pre.content").inner_text() == FLIP_A_TEXT
    assert page.evaluate("window.__xss") is None
    assert side_b.locator("pre.content").inner_text() == "B says\nFINAL: C"
    assert "the last FINAL: statement names A" in side_a.inner_text()
    assert "A reasons it out." in side_a.inner_text() and "no reasoning" in side_b.inner_text()
    a, b = side_a.bounding_box(), side_b.bounding_box()
    assert a and b and a["x"] + a["width"] <= b["x"] + 1 and abs(a["y"] - b["y"]) < 2  # side by side
    # A flip recorded without the sides (a comparison.json written earlier) is listed, with nothing to open.
    assert page.locator('details[data-flip-detail="flip2"]').count() == 0
    assert opened.problems == [] and opened.dialogs == []


SAMPLED_CHARTS = {
    "run-sampled": {"category-accuracy", "pass-at-k", "task-agreement"},
    "comparison-sampled": {"accuracy", "difference", "category-accuracy", "task-differences"},
}


@pytest.mark.parametrize("opened", ["run-sampled", "comparison-sampled"], indirect=True)
def test_sampled_pages_draw_their_pass_at_k_curve_and_histograms_quietly(
    opened: Watched, request: pytest.FixtureRequest
) -> None:
    page = opened.page
    kind = request.node.callspec.params["opened"]
    keys = set(page.eval_on_selector_all("figure[data-chart]", "els => els.map(e => e.dataset.chart)"))
    assert SAMPLED_CHARTS[kind] <= keys
    for key in SAMPLED_CHARTS[kind] & {"pass-at-k", "task-agreement", "task-differences"}:
        svg = page.locator(f'figure[data-chart="{key}"] svg')
        assert svg.count() == 1, key
        box = svg.bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 50, (key, box)
        # matplotlib drew the bars (or the curve's points) inside: paths with an area.
        assert page.eval_on_selector(f'figure[data-chart="{key}"] svg', "s => s.getBBox().width") > 0
        assert page.locator(f'figure[data-chart="{key}"] svg path').count() > 5, key
    page.wait_for_timeout(50)
    assert opened.problems == []
    assert opened.dialogs == []


@pytest.mark.parametrize("opened", ["run-formats"], indirect=True)
def test_an_instructions_and_a_json_task_open_to_their_evidence(opened: Watched) -> None:
    page = opened.page
    assert "Instructions by kind" in page.locator("#task-types").inner_text()
    row = page.locator('details.task[data-task-id="if1"]')
    row.locator(":scope > summary").click()
    text = row.inner_text()
    # The comma of the first line breaks no_comma as the answer stands; without that line it is followed.
    assert "punctuation:no_comma" in text and "1 comma(s), the first at 4" in text and "no first line" in text
    assert "words: 12, needed at least 5" in text
    json_row = page.locator('details.task[data-task-id="js1"]')
    json_row.locator(":scope > summary").click()
    assert "'name' is a required property" in json_row.inner_text()
    assert opened.problems == []


# --- issue 30: the matrix leaderboard at 1,400 px -------------------------------------------------------------


def sampled_matrix_folder(root: Path) -> Path:
    """Run directories of three lanes with real models' names, two samples a task, their tokens, latency and wall
    time recorded: the widest leaderboard a matrix draws (avg@k, samples per task and the serving columns)."""
    from test_nothing_measured import run_dir

    ids = [f"t{i}" for i in range(6)]
    for name in (
        "Qwen2.5-Coder-0.5B-Instruct_q4_k_m_baseline",
        "SmolLM2-135M-Instruct_f16_native_reasoning",
        "Qwen2.5-Coder-0.5B-Instruct_q8_0_tools_jinja",
    ):
        folder = run_dir(root / name, name, "mcq6", dict.fromkeys(ids, "FINAL: B"))
        usage = {"completion_tokens": 1234, "prompt_tokens": 30, "total_tokens": 1264}
        samples = [
            {"task_id": t, "sample": s, "content": "FINAL: C" if (i + s) % 3 == 0 else "FINAL: B",
             "finish_reason": "stop", "latency_s": 12.5, "usage": usage}
            for i, t in enumerate(ids) for s in range(2)
        ]  # fmt: skip
        (folder / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest.update(wall_s=125.0, requests=len(samples))
        manifest["lane"]["samples_per_task"] = 2
        (folder / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_the_matrix_leaderboard_fits_a_1400_px_screen(browser: Browser, tmp_path: Path) -> None:
    from ocllm.cli import main

    folder = sampled_matrix_folder(tmp_path / "m")
    assert main(["matrix-report", str(folder), "-o", str(tmp_path / "r")]) == 0
    for watched in open_report(browser, tmp_path / "r" / "matrix.html"):
        page = watched.page
        page.set_viewport_size({"width": 1400, "height": 900})
        columns = page.eval_on_selector_all("table[data-leaderboard] thead th", "els => els.length")
        assert columns == 16  # #, lane, avg@k, interval, its bar, samples per task, 7 counts and figures, 3 serving
        overflow = page.eval_on_selector(
            "table[data-leaderboard]",
            "t => { const w = t.closest('.table-wrap'); return w.scrollWidth - w.clientWidth; }",
        )
        assert overflow <= 1, overflow
        assert watched.problems == []
