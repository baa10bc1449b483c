"""The report renderers (Markdown, HTML, charts, files) on small documents written here by hand."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from ocllm.report import charts
from ocllm.report.html import comparison_html, matrix_html, run_report_html
from ocllm.report.html_rendering import filter_script
from ocllm.report.markdown import cell, comparison_markdown, matrix_markdown, run_report_markdown
from ocllm.report.task_views import segments
from ocllm.report.wording import SERVING_MISSING, duration, rate
from ocllm.report.write import write_comparison, write_matrix_report, write_run_report

# --- Documents --------------------------------------------------------------------------------------------


def dist(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    return {
        "n": len(values),
        "mean": sum(values) / len(values),
        "p50": ordered[len(values) // 2],
        "p95": ordered[-1],
        "values": values,
    }


def resources(tokens: list[float] | None, latency: list[float] | None, *, errors: int = 0) -> dict[str, Any]:
    n = len(tokens or latency or [])
    return {
        "tasks": n,
        "errors": errors,
        "truncated": 0,
        "completion_tokens": dist(tokens) if tokens else None,
        "reasoning_tokens": None,
        "latency_s": dist(latency) if latency else None,
    }


def serving(
    requests_per_s: float = 2.5,
    tokens_per_s: float | None = 412.25,
    ttft: tuple[float, float] | None = (0.35, 1.25),
    *,
    endpoints: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A run's serving figures as metrics.json's summary holds them."""
    wall = 40.0
    return {
        "wall_s": wall,
        "requests": round(requests_per_s * wall),
        "requests_per_s": requests_per_s,
        "answers": round(requests_per_s * wall),
        "output_tokens": round(tokens_per_s * wall) if tokens_per_s is not None else None,
        "output_tokens_per_s": tokens_per_s,
        "ttft_p50_s": ttft[0] if ttft else None,
        "ttft_p95_s": ttft[1] if ttft else None,
        "ttft_samples": round(requests_per_s * wall) if ttft else 0,
        "endpoints": endpoints or [],
    }


def endpoint(base_url: str, requests: int, errors: int = 0) -> dict[str, Any]:
    return {"base_url": base_url, "requests": requests, "errors": errors, "latency_p50_s": 0.8, "latency_p95_s": 2.5}


def candidate(raw: str, text: str, letter: str, field: str = "content", **extra: Any) -> dict[str, Any]:
    """A statement the scorer found, with its span computed from the raw text it sits in."""
    start = raw.index(text)
    return {
        "letter": letter,
        "letters": [letter],
        "kind": "final_colon",
        "method": "final_colon_letter",
        "region": field,
        "field": field,
        "start": start,
        "end": start + len(text),
        "text": text,
        "hedged": False,
        "out_of_range": False,
        "placeholder": False,
        "value": None,
        "reading": [],
        **extra,
    }


def task(
    task_id: str,
    category: str,
    *,
    expected: str = "B",
    extracted: str | None = "B",
    content: str = "FINAL: B",
    reasoning: str | None = "I think B.",
    prompt: str = "Pick one.\n\nA. x\nB. y",
    error: str | None = None,
    candidates: list[dict[str, Any]] | None = None,
    decided_by: int | None = 0,
) -> dict[str, Any]:
    if error:  # a failed request has no output, so nothing was extracted from it
        extracted, candidates = None, []
    if candidates is None:
        candidates = [candidate(content, f"FINAL: {extracted}", extracted)] if extracted else []
    correct = None if error else extracted == expected
    return {
        "task_id": task_id,
        "task_type": "mcq",
        "category": category,
        "expected_answer": expected,
        "extracted_final_answer": extracted,
        "extraction_source": "content" if extracted else "none",
        "extraction_method": "final_colon_letter" if extracted else "none",
        "ambiguity": "none" if extracted or error else "no_extractable_answer",
        "correct": correct,
        "rule": "final_statement" if extracted else "no_statement",
        "reason": f"visible content: the last FINAL: statement names {extracted}" if extracted else "no statement",
        "candidates": candidates,
        "decided_by": decided_by if candidates else None,
        "truncated": False,
        "hedged": False,
        "missing_substrings": None,
        "error": error,
        "options": ["x", "y"],
        "prompt": prompt,
        "raw_content": None if error else content,
        "raw_reasoning": None if error else reasoning,
        "finish_reason": None if error else "stop",
        "usage": {"prompt_tokens": 10, "completion_tokens": 20},
        "latency_s": 1.5,
        "previous": {},
    }


def run_doc(
    tasks: list[dict[str, Any]] | None = None,
    *,
    label: str = "lane_B",
    res: dict[str, Any] | None = None,
    speed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    tasks = (
        tasks
        if tasks is not None
        else [
            task("t1", "math"),
            task("t2", "math", extracted="A", content="Hmm.\nFINAL: A"),
            task("t3", "logic"),
            task("t4", "logic", error="HTTP 500 after 4 attempts"),
        ]
    )
    by_cat: dict[str, dict[str, Any]] = {}
    for t in tasks:
        c = by_cat.setdefault(t["category"], {"total": 0, "correct": 0, "errors": 0})
        c["total"] += 1
        c["correct"] += t["correct"] is True
        c["errors"] += t["error"] is not None
    for c in by_cat.values():
        scored = c["total"] - c["errors"]
        c.update(accuracy=c["correct"] / scored if scored else 0.0, ci_low=0.1, ci_high=0.95)
    correct = sum(t["correct"] is True for t in tasks)
    errors = sum(t["error"] is not None for t in tasks)
    return {
        "format": "ocllm-run-report/1",
        "label": label,
        "source": {"path": "/runs/lane_B", "model": "tiny-model"},
        "summary": {
            "total": len(tasks),
            "correct": correct,
            "errors": errors,
            "accuracy": correct / (len(tasks) - errors) if len(tasks) > errors else 0.0,
            "ci_low": 0.3,
            "ci_high": 0.9,
            "complete": True,
            "truncated": 0,
            "by_category": by_cat,
            "by_ambiguity": dict(Counter(t["ambiguity"] for t in tasks)),
            "by_method": dict(Counter(t["extraction_method"] for t in tasks)),
            "by_source": dict(Counter(t["extraction_source"] for t in tasks)),
            "scorer": {
                "version": "9.9.9",
                "conflict_policy": "strict",
                "allow_reasoning_fallback": True,
                "think_prefilled": False,
            },
            "serving": speed,
        },
        "resources": res if res is not None else resources([100, 250, 400], [1.2, 2.5, 3.0], errors=1),
        "tasks": tasks,
    }


def paired(
    a_correct: int, b_correct: int, n: int, *, diff_ci: tuple[float, float], p: float, significant: bool, verdict: str
) -> dict[str, Any]:
    return {
        "n_paired": n,
        "a_correct": a_correct,
        "b_correct": b_correct,
        "a_accuracy": a_correct / n,
        "b_accuracy": b_correct / n,
        "a_ci_low": 0.2,
        "a_ci_high": 0.8,
        "b_ci_low": 0.4,
        "b_ci_high": 0.95,
        "a_wins": 1,
        "b_wins": 3,
        "both_correct": a_correct - 1,
        "both_wrong": n - a_correct - 3,
        "mcnemar_p": p,
        "diff": (b_correct - a_correct) / n,
        "diff_ci_low": diff_ci[0],
        "diff_ci_high": diff_ci[1],
        "significant": significant,
        "verdict": verdict,
    }


VERDICT = (
    "lane_B scores 20.0 points higher than lane_A (lane_B minus lane_A: +20.0 points, 95% CI +5.0 to +35.0; "
    "exact McNemar p = 0.0312), so this difference is unlikely to be chance at the 5% level."
)


# A's answer on a flipped task: model text that tries to run script.
FLIP_A_TEXT = 'A thinks <script>window.__xss=5</script><img src=x onerror="window.__xss=6">\nFINAL: A'


def comparison_doc(
    *,
    a: str = "lane_A",
    b: str = "lane_B",
    res_a: dict[str, Any] | None = None,
    res_b: dict[str, Any] | None = None,
    speed_a: dict[str, Any] | None = None,
    speed_b: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "format": "ocllm-comparison/1",
        "scorer_version": "9.9.9",
        "rescored": True,
        "a": {"label": a, "path": "/runs/a", "serving": speed_a},
        "b": {"label": b, "path": "/runs/b", "serving": speed_b},
        **paired(6, 8, 10, diff_ci=(0.05, 0.35), p=0.0312, significant=True, verdict=VERDICT),
        "only_in_a": ["solo_a"],
        "only_in_b": [],
        "unpaired_errors": ["failed_1"],
        "by_category": {
            "math": paired(3, 5, 6, diff_ci=(0.0, 0.6), p=0.5, significant=False, verdict="math verdict"),
            "logic": paired(3, 3, 4, diff_ci=(-0.25, 0.25), p=1.0, significant=False, verdict="logic verdict"),
        },
        "flips": [
            {
                "task_id": "flip|1",
                "category": "math",
                "expected": "C",
                "a_extracted": "A",
                "b_extracted": "C",
                "winner": "b",
                # What each side answered, for the flipped task's side-by-side view (issue 19, item 18).
                "a_side": {
                    "content": FLIP_A_TEXT,
                    "reasoning": "A reasons it out.",
                    "rule": "final_statement",
                    "reason": "visible content: the last FINAL: statement names A",
                    "method": "final_colon_letter",
                },
                "b_side": {
                    "content": "B says\nFINAL: C",
                    "reasoning": None,
                    "rule": "final_statement",
                    "reason": "visible content: the last FINAL: statement names C",
                    "method": "final_colon_letter",
                },
            },
            {
                "task_id": "flip2",
                "category": "logic",
                "expected": "D",
                "a_extracted": "D",
                "b_extracted": None,
                "winner": "a",
            },
        ],
        "resources": {
            "a": res_a if res_a is not None else resources([10, 20, 30], [0.5, 0.7, 0.9]),
            "b": res_b if res_b is not None else resources([100, 200, 300], [1.5, 2.0, 4.0]),
        },
    }


def lane(
    label: str, correct: int, total: int, res: dict[str, Any] | None = None, speed: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "label": label,
        "path": f"/runs/{label}",
        "total": total,
        "correct": correct,
        "errors": 0,
        "accuracy": correct / total,
        "ci_low": 0.2,
        "ci_high": 0.9,
        "truncated": 1,
        "by_category": {
            "math": {
                "total": total,
                "correct": correct,
                "errors": 0,
                "accuracy": correct / total,
                "ci_low": 0.2,
                "ci_high": 0.9,
            }
        },
        "resources": res if res is not None else resources([10, 20, 30], [0.5, 0.7, 0.9]),
        "serving": speed,
    }


def matrix_doc(
    *, res: dict[str, Any] | None = None, speeds: list[dict[str, Any] | None] | None = None
) -> dict[str, Any]:
    speed_b, speed_c, speed_a = speeds or [None, None, None]
    lanes = [
        lane("lane_B", 8, 10, res, speed_b),
        lane("lane_C", 7, 10, res, speed_c),
        lane("lane_A", 6, 10, res, speed_a),
    ]
    comp_b = comparison_doc()
    comp_c = comparison_doc(b="lane_C")
    comp_c.update(verdict="lane_C is not significantly different from lane_A.", significant=False)
    return {
        "format": "ocllm-matrix/1",
        "folder": "/runs",
        "baseline": "lane_A",
        "lanes": lanes,
        "comparisons": [comp_b, comp_c],
    }


# --- HTML inspection -----------------------------------------------------------------------------------


class Elements(HTMLParser):
    """Every start tag with its attributes, as the browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Elements()
    parser.feed(page)
    return parser.tags


URL_ATTRIBUTES = {"src", "href", "xlink:href", "action", "formaction", "srcset", "poster", "data", "background"}


def assert_self_contained(page: str) -> None:
    tags = elements(page)
    for tag, attrs in tags:
        assert tag not in {"link", "iframe", "object", "embed", "img", "base"}, f"<{tag}> in a self-contained page"
        for name, value in attrs.items():
            assert not name.startswith("on"), f"event handler attribute {name} on <{tag}>"
            if name in URL_ATTRIBUTES:
                assert value is not None and value.startswith("#"), f"<{tag} {name}={value!r}> leaves the page"
        if tag == "script":
            assert "src" not in attrs
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?\s*https?:", page, re.I)
    assert "<script src" not in page.lower()
    assert "@import" not in page and "url(http" not in page


def table_rows(page: str, marker: str) -> list[list[list[str]]]:
    """The text of every cell, row by row (header first), of each table carrying the attribute `marker`."""
    tables = re.findall(rf"<table [^>]*\b{marker}\b[^>]*>(.*?)</table>", page, re.S)
    return [
        [
            [
                html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)
            ]
            for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
        ]
        for table in tables
    ]


def charts_in(page: str) -> dict[str, str]:
    """data-chart value -> the figure's markup, for every drawn chart."""
    found = re.findall(r'<figure class="chart[^"]*" data-chart="([^"]+)">(.*?)</figure>', page, re.S)
    return dict(found)


# --- Markdown --------------------------------------------------------------------------------------------


def test_run_markdown_holds_the_figures() -> None:
    md = run_report_markdown(run_doc())
    assert md.startswith("# Run report: lane_B\n")
    assert "**Accuracy 66.7%** (2/3 scored tasks; 95% Wilson interval 30.0–90.0%)" in md
    assert "| errors (failed requests, not scored) | 1 |" in md
    assert "| scorer | 9.9.9 |" in md and "| conflict policy | strict |" in md
    assert "| reasoning fallback | on |" in md
    assert "| math | 1 | 2 | 0 | 50.0% | 10.0–95.0% |" in md
    assert "| logic | 1 | 1 | 1 | 100.0% | 10.0–95.0% |" in md
    for heading in ("### Extraction method", "### Extraction source", "### Ambiguity class", "## Tokens and latency"):
        assert heading in md
    assert "| final_colon_letter | 3 | 75.0% |" in md
    assert "| t2 | math | B | A | final_colon_letter | none | **✗ wrong** |" in md
    assert "| t4 | logic | B | — | none | none | ⚠ error |" in md
    assert "| completion tokens, median | 250 |" in md and "| latency, mean | 2.23 s |" in md


def test_markdown_escapes_model_text_in_tables() -> None:
    nasty = task("id|with\npipe", "cat<b>\nnew", extracted="A|B", content="FINAL: A|B", candidates=[], decided_by=None)
    md = run_report_markdown(run_doc([nasty]))
    row = next(line for line in md.splitlines() if "pipe" in line)
    assert r"id\|with pipe" in row
    assert "cat&lt;b&gt; new" in row
    assert r"A\|B" in row
    # Each table row is one line with exactly the table's own unescaped pipes (7 columns: 8 pipes).
    assert len(re.findall(r"(?<!\\)\|", row)) == 8
    assert "<b>" not in md


def test_cell_neutralises_markdown() -> None:
    assert cell("a|b") == r"a\|b"
    assert cell("x\ny\r\nz") == "x y z"
    assert cell("<img src=x>") == "&lt;img src=x&gt;"
    assert cell("[link](http://e)") == r"\[link\](http://e)"
    assert cell("*bold* `code`") == r"\*bold\* \`code\`"
    assert cell("snake_case_id") == "snake_case_id"  # intraword underscores are harmless and stay readable
    assert cell("_emph_") == r"\_emph\_"
    assert cell(None) == "—"
    assert cell("x" * 300, limit=10).endswith("…")


def test_comparison_markdown_leads_with_the_verdict() -> None:
    md = comparison_markdown(comparison_doc())
    body = [line for line in md.splitlines() if line and not line.startswith("#")]
    assert body[0] == f"> **{cell(VERDICT, 1000)}**"
    assert "| accuracy | 60.0% | 80.0% |" in md
    assert "| 95% interval | 20.0–80.0% | 40.0–95.0% |" in md
    assert "**+20.0 pts**, 95% exact interval (matching the McNemar test) +5.0 to +35.0 pts; **significant**" in md
    assert "wrong on 1; the reverse on 3" in md and "exact McNemar p = 0.0312" in md
    assert "| math | 6 | 50.0% | 83.3% | +33.3 pts | 0.0 to +60.0 pts | 1 | 3 | 0.5 | no |" in md
    assert r"| flip\|1 | math | C | A | C | lane_B |" in md
    assert "| flip2 | logic | D | D | — | lane" in md
    assert "Only in lane_A (1): solo_a" in md
    assert "(left out of the pairing) (1): failed" in md
    assert "| completion tokens, median | 20 | 200 |" in md
    assert "| latency, median | 700 ms | 2.00 s |" in md


def test_comparison_markdown_says_when_only_one_side_recorded_a_figure() -> None:
    md = comparison_markdown(comparison_doc(res_b=resources([1, 2, 3], None)))
    assert "| latency, mean | 700 ms | not recorded |" in md
    assert "Only lane_A recorded latency." in md


def test_matrix_markdown_leaderboard_then_comparisons() -> None:
    md = matrix_markdown(matrix_doc())
    board = md.index("## Leaderboard")
    rows = [line for line in md[board:].splitlines() if re.match(r"\| \d ", line)]
    assert [r.split("|")[2].strip() for r in rows] == ["lane_B", "lane_C", "lane_A (baseline)"]
    assert "| 1 | lane" in md and "**80.0%**" in md
    against = md.index("## Against the baseline")
    assert board < against
    assert md.count("> **") == 2
    assert "lane_C is not significantly different from lane_A." in md


# --- HTML ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("render", "doc", "expected_charts"),
    [
        (run_report_html, run_doc(), {"category-accuracy", "latency", "completion-tokens"}),
        (
            comparison_html,
            comparison_doc(),
            {"accuracy", "difference", "category-accuracy", "latency", "completion-tokens"},
        ),
        (matrix_html, matrix_doc(), {"accuracy", "difference", "category-accuracy", "latency", "completion-tokens"}),
    ],
    ids=["run", "comparison", "matrix"],
)
def test_html_is_self_contained_with_every_chart(render: Any, doc: dict[str, Any], expected_charts: set[str]) -> None:
    page = render(doc)
    assert page.startswith("<!doctype html>")
    assert_self_contained(page)
    found = charts_in(page)
    assert set(found) == expected_charts
    for key, figure in found.items():
        assert "<figcaption>" in figure, key
        assert figure.count("<svg ") == 1, key
        assert "<?xml" not in figure and "<!DOCTYPE" not in figure
    # Ids are unique across the page: several charts must not resolve each other's clip paths.
    ids = [attrs["id"] for _, attrs in elements(page) if attrs.get("id")]
    assert len(ids) == len(set(ids))


def test_html_figures_in_the_run_report() -> None:
    page = run_report_html(run_doc())
    assert "66.7%" in page and "30.0–90.0%" in page
    assert "conflict policy strict" in page and "scorer 9.9.9" in page
    tags = elements(page)
    tasks = [attrs for tag, attrs in tags if tag == "details" and "task" in (attrs.get("class") or "").split()]
    assert [t["data-task-id"] for t in tasks] == ["t1", "t2", "t3", "t4"]
    assert [t["data-verdict"] for t in tasks] == ["correct", "wrong", "correct", "error"]
    assert "HTTP 500 after 4 attempts" in page
    for key in ("method", "source", "ambiguity"):
        assert f'data-breakdown="{key}"' in page


def test_html_highlights_the_deciding_statement() -> None:
    content = "Maybe FINAL: A.\nActually FINAL: B"
    t = task(
        "t1",
        "math",
        content=content,
        candidates=[candidate(content, "FINAL: A", "A"), candidate(content, "FINAL: B", "B", reading=["latex"])],
        decided_by=1,
    )
    page = run_report_html(run_doc([t]))
    items = re.findall(r'<li class="(candidate[^"]*)" data-candidate-index="(\d)">(.*?)</li>', page, re.S)
    assert [(cls, idx) for cls, idx, _ in items] == [("candidate", "0"), ("candidate deciding", "1")]
    assert '<span class="decided">decided</span>' in items[1][2] and "decided" not in items[0][2]
    assert "latex" in items[1][2]
    # The statements are marked where they stand in the visible text, the deciding one apart.
    assert '<mark class="stmt" data-candidate="0"' in page
    assert '<mark class="stmt deciding" data-candidate="1"' in page


def test_missing_resource_figures_give_a_note_not_a_chart() -> None:
    empty = resources(None, None)
    page = run_report_html(run_doc(res=empty))
    assert set(charts_in(page)) == {"category-accuracy"}
    for key in ("latency", "completion-tokens"):
        assert f'data-chart-missing="{key}"' in page
    assert "Not drawn: this run recorded no latency." in page
    assert "Not drawn: this run recorded no completion tokens." in page

    page = comparison_html(comparison_doc(res_a=empty, res_b=empty))
    assert "latency" not in charts_in(page) and 'data-chart-missing="latency"' in page
    assert "Not drawn: any of these runs recorded no latency." in page

    # One side missing: the chart is drawn from the other, and says who recorded nothing.
    page = comparison_html(comparison_doc(res_b=resources([1, 2, 3], None)))
    assert "latency" in charts_in(page)
    assert "Not recorded by lane_B." in page

    page = matrix_html(matrix_doc(res=empty))
    assert {"latency", "completion-tokens"}.isdisjoint(charts_in(page))


XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">"><svg onload=window.__xss=3>'


def test_html_escapes_labels_and_model_text_everywhere() -> None:
    content = f"{XSS}\nFINAL: B"
    t = task(
        f"id{XSS}",
        f"cat{XSS}",
        content=content,
        reasoning=f"reasoning {XSS}",
        prompt=f"prompt {XSS}",
        candidates=[candidate(content, "FINAL: B", "B"), candidate(content, XSS, "A", reading=[XSS])],
    )
    pages = [
        run_report_html(run_doc([t], label=f"label{XSS}")),
        comparison_html(comparison_doc(a=f"A{XSS}", b="<script>alert(1)</script>")),
        matrix_html({**matrix_doc(), "baseline": XSS, "folder": XSS}),
    ]
    for page in pages:
        assert_self_contained(page)
        assert "<script>window.__xss" not in page and "<script>alert" not in page
        assert "<img" not in page and "<svg onload" not in page
        assert sum(tag == "script" for tag, _ in elements(page)) <= 1  # only the page's own filter script
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in pages[0]


def test_chart_labels_are_escaped_by_matplotlib() -> None:
    svg = charts.accuracy_chart(
        [
            charts.LaneAccuracy("<script>alert(1)</script>", charts.Estimate(0.5, 0.3, 0.7)),
            charts.LaneAccuracy("a$b$c & d", charts.Estimate(0.2, 0.1, 0.4)),
        ]
    )
    assert "<script" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert "a$b$c &amp; d" in svg  # dollars are not mathtext, ampersands are escaped
    assert svg.startswith("<svg ") and "<style" not in svg
    svg = charts.category_chart(
        ["<img src=x onerror=alert(1)>"], [("lane", {"<img src=x onerror=alert(1)>": charts.Estimate(0.5, 0.2, 0.8)})]
    )
    assert "<img" not in svg and "&lt;img src=x onerror=alert(1)&gt;" in svg


def csp(page: str) -> str:
    policies = [
        attrs["content"]
        for tag, attrs in elements(page)
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    assert len(policies) == 1
    return str(policies[0])


def test_filter_script_is_the_only_script_and_allowed_by_hash() -> None:
    page = run_report_html(run_doc())
    assert page.count("<script>") == 1
    assert f"<script>{filter_script()}</script>" in page
    digest = base64.b64encode(hashlib.sha256(filter_script().encode()).digest()).decode()
    policy = csp(page)
    assert "default-src 'none'" in policy
    assert f"script-src 'sha256-{digest}';" in policy
    # Pages without script forbid all scripts.
    assert "script-src 'none';" in csp(comparison_html(comparison_doc()))


def test_segments_mark_statements_and_ignore_bad_spans() -> None:
    text = "abc FINAL: A xyz"
    out = segments(text, [(4, 12, 0), (6, 9, 1), (14, 99, 2)], decided=0)
    assert [(s.text, s.index, s.deciding) for s in out] == [
        ("abc ", None, False),
        ("FINAL: A", 0, True),
        (" xyz", None, False),
    ]
    assert "".join(s.text for s in out) == text


# --- Files ---------------------------------------------------------------------------------------------------


def test_writers_write_every_file_atomically(tmp_path: Path) -> None:
    written = write_run_report(run_doc(), tmp_path / "run")
    assert [p.name for p in written] == ["report.md", "report.html"]
    written = write_comparison(comparison_doc(), tmp_path / "cmp")
    assert [p.name for p in written] == ["comparison.json", "comparison.md", "comparison.html"]
    assert json.loads(written[0].read_text())["verdict"] == VERDICT
    written = write_matrix_report(matrix_doc(), tmp_path / "mx")
    assert [p.name for p in written] == ["matrix.json", "matrix.md", "matrix.html"]
    assert json.loads(written[0].read_text())["baseline"] == "lane_A"
    for folder in ("run", "cmp", "mx"):
        leftovers = [p.name for p in (tmp_path / folder).iterdir() if p.name.startswith(".")]
        assert leftovers == []
    assert all(p.stat().st_size > 0 for p in (tmp_path / "mx").iterdir())


def test_sparse_documents_still_render() -> None:
    """Optional fields left out (no source, scorer, resources, tasks; one lane; nothing paired)."""
    run = {"label": "empty", "summary": {"total": 0, "correct": 0, "accuracy": 0.0, "by_category": {}}, "tasks": []}
    assert "Not drawn: no scored task in any category." in run_report_html(run)
    assert "# Run report: empty" in run_report_markdown(run)
    none_paired = {
        "a": {"label": "x", "path": "x"},
        "b": {"label": "y", "path": "y"},
        **paired(0, 0, 1, diff_ci=(0.0, 0.0), p=1.0, significant=False, verdict="No paired tasks to compare."),
        "n_paired": 0,
    }
    page = comparison_html(none_paired)
    # Nothing paired: no test, no difference, no accuracy (issue 30, item 3), only the sentence saying so.
    assert "No paired tasks to compare." in page and "not significant" not in page and ">no test<" in page
    assert "No paired tasks to compare." in comparison_markdown(none_paired)
    single = {
        "folder": "/runs",
        "baseline": "only",
        "lanes": [lane("only", 1, 2, resources(None, None))],
        "comparisons": [],
    }
    page = matrix_html(single)
    assert "Only one lane: nothing to compare." in page and "difference" not in charts_in(page)
    assert "Only one lane: nothing to compare." in matrix_markdown(single)


def test_failed_requests_are_listed_with_their_reason_in_markdown() -> None:
    from ocllm.report.markdown import run_report_markdown

    doc = run_doc()
    doc["tasks"][0]["error"] = "HTTP 400 after 1 attempt: Extra inputs | are not permitted"
    doc["tasks"][0]["correct"] = None
    text = run_report_markdown(doc)
    assert "## Failed requests (2)" in text and "Extra inputs \\| are not permitted" in text


# --- Serving figures -------------------------------------------------------------------------------------


def test_rate_and_duration_read_at_a_glance() -> None:
    assert [rate(v) for v in (0.4567, 12.345, 1594.595, None)] == ["0.46", "12.3", "1,595", "n/a"]
    assert [duration(v) for v in (0.037, 42.0, 125.4, 3725.0)] == ["37 ms", "42.00 s", "2 min 5 s", "1 h 2 min 5 s"]


def test_run_report_shows_its_serving_figures_and_each_endpoint() -> None:
    speed = serving(endpoints=[endpoint("http://gpu0:8000/v1", 60), endpoint("http://gpu1:8000/v1", 40, errors=2)])
    doc = run_doc(speed=speed)
    md = run_report_markdown(doc)
    section = md[md.index("## Serving") : md.index("## Tasks")]
    for row in (
        "| requests/s | 2.50 |",
        "| output tokens/s | 412 |",
        "| time to first token, median | 350 ms |",
        "| time to first token, 95th percentile | 1.25 s |",
        "| wall time | 40.00 s |",
        "| requests (retries included) | 100 |",
        "| output tokens | 16,490 |",
        "| http://gpu1:8000/v1 | 40 | 2 | 800 ms | 2.50 s |",
    ):
        assert row in section, row
    assert "### Per endpoint" in section and SERVING_MISSING not in md

    page = run_report_html(doc)
    (table,) = table_rows(page, "data-serving")
    assert table[0] == ["figure", "lane_B"]
    assert ["requests/s", "2.50"] in table and ["time to first token, median", "350 ms"] in table
    (endpoints,) = table_rows(page, "data-endpoints")
    assert endpoints[1:] == [
        ["http://gpu0:8000/v1", "60", "0", "800 ms", "2.50 s"],
        ["http://gpu1:8000/v1", "40", "2", "800 ms", "2.50 s"],
    ]


def test_a_lane_that_did_not_stream_has_no_time_to_first_token() -> None:
    doc = run_doc(speed=serving(ttft=None, tokens_per_s=None))
    md = run_report_markdown(doc)
    assert "| time to first token, median | not recorded |" in md
    assert "| output tokens/s | not recorded |" in md and "| requests/s | 2.50 |" in md
    assert "### Per endpoint" not in md  # one endpoint: no per-endpoint table
    page = run_report_html(doc)
    assert ["time to first token, median", "not recorded"] in table_rows(page, "data-serving")[0]
    assert table_rows(page, "data-endpoints") == []


def test_without_serving_figures_each_report_says_so_or_nothing() -> None:
    md = run_report_markdown(run_doc())
    assert md.count(SERVING_MISSING) == 1 and "requests/s" not in md
    page = run_report_html(run_doc())
    assert "data-serving-missing" in page and table_rows(page, "data-serving") == []

    md = comparison_markdown(comparison_doc())
    assert "## Serving" not in md and "requests/s" not in md
    page = comparison_html(comparison_doc())
    assert 'id="serving"' not in page and "requests/s" not in page

    md = matrix_markdown(matrix_doc())
    assert "requests/s" not in md and "time to first token" not in md
    page = matrix_html(matrix_doc())
    assert "req/s" not in page and "data-serving" not in page


def test_comparison_shows_each_sides_serving_figures() -> None:
    doc = comparison_doc(speed_a=serving(1.25, 80.5, None), speed_b=serving(3.5, 640.0, (0.2, 0.9)))
    md = comparison_markdown(doc)
    section = md[md.index("## Serving") :]
    assert "| figure | lane_A | lane_B |" in section
    assert "| requests/s | 1.25 | 3.50 |" in section
    assert "| output tokens/s | 80.5 | 640 |" in section
    assert "| time to first token, median | not recorded | 200 ms |" in section
    page = comparison_html(doc)
    (table,) = table_rows(page, "data-serving")
    assert table[0] == ["figure", "lane_A", "lane_B"]
    assert ["requests/s", "1.25", "3.50"] in table

    # One side recorded none (a metrics file of another tool): it says so, and the other's still show.
    doc = comparison_doc(speed_b=serving(3.5, 640.0, (0.2, 0.9), endpoints=[endpoint("http://a/v1", 9)]))
    md = comparison_markdown(doc)
    assert "| requests/s | not recorded | 3.50 |" in md
    assert "- Only lane_B recorded serving figures." in md
    assert "### Per endpoint: lane_B" in md and "| http://a/v1 | 9 | 0 | 800 ms | 2.50 s |" in md
    page = comparison_html(doc)
    assert ["requests/s", "not recorded", "3.50"] in table_rows(page, "data-serving")[0]
    assert "Only lane_B recorded serving figures" in page
    assert len(table_rows(page, "data-endpoints")) == 1


def test_matrix_leaderboard_shows_each_lanes_serving_figures() -> None:
    doc = matrix_doc(speeds=[serving(2.5, 412.25, (0.35, 1.25)), serving(7.75, 1234.5, None), None])
    md = matrix_markdown(doc)
    header = next(line for line in md.splitlines() if line.startswith("| # |"))
    assert header.endswith("| requests/s | output tokens/s | time to first token (median) |")
    rows = {r.split("|")[2].strip(): r for r in md.splitlines() if re.match(r"\| \d ", r)}
    assert rows["lane_B"].endswith("| 2.50 | 412 | 350 ms |")
    assert rows["lane_C"].endswith("| 7.75 | 1,234 | not recorded |")
    assert rows["lane_A (baseline)"].endswith("| not recorded | not recorded | not recorded |")

    page = matrix_html(doc)
    cells = dict(re.findall(r'<tr data-lane="([^"]+)">(.*?)</tr>', page, re.S))
    for label, expected in (
        ("lane_B", ["2.50", "412", "350 ms"]),
        ("lane_C", ["7.75", "1,234", "—"]),  # the page's "—" is titled "not recorded"
        ("lane_A", ["—"] * 3),
    ):
        found = re.findall(r'<td class="num[^"]*" data-serving="[^"]+"[^>]*>([^<]*)</td>', cells[label])
        assert found == expected, label
    assert '<th class="num">req/s</th>' in page


def test_endpoint_urls_are_escaped_in_both_renderers() -> None:
    speed = serving(endpoints=[endpoint(f"http://x/{XSS}|a", 3), endpoint("http://y/v1", 4)])
    md = run_report_markdown(run_doc(speed=speed))
    row = next(line for line in md.splitlines() if "http://x/" in line)
    assert "<script>" not in md and "&lt;script&gt;" in row and r"\|a" in row
    assert len(re.findall(r"(?<!\\)\|", row)) == 6
    pages = [
        run_report_html(run_doc(speed=speed)),
        comparison_html(comparison_doc(speed_a=speed)),
        matrix_html(matrix_doc(speeds=[speed, None, None])),
    ]
    for page in pages:
        assert_self_contained(page)
        assert "<script>window.__xss" not in page and "<img" not in page
        assert table_rows(page, "data-endpoints")[0][1][0] == f"http://x/{XSS}|a"


# --- issue 19 item 14: a large run's page stays small ------------------------------------------------------


def large_run(n: int) -> dict[str, Any]:
    """`n` tasks with ~2 KB of output each (an MMLU-Pro chain of thought), one in ten wrong, one in a hundred
    changed from the input's verdict, one failed request, and one task whose id and output are markup."""
    thought = "Computing step by step: the first term gives 86, and the second adds a factor of 5. " * 24
    tasks = []
    for i in range(n):
        wrong = i % 10 == 3
        letter = "C" if wrong else "B"
        t = task(f"q{i:05d}", f"cat{i % 7}", extracted=letter, content=f"{thought}\nFINAL: {letter}")
        if i % 100 == 7:
            t["previous"] = {"tool": "mmlu-pro", "correct": not t["correct"], "extracted_final_answer": None}
        tasks.append(t)
    tasks[5] = task("q00005", "cat5", error="HTTP 500 after 4 attempts")
    tasks[-1] = task(f"q{XSS}", "cat0", content=f"{XSS}\n{thought}\nFINAL: B")
    return run_doc(tasks)


def test_a_large_runs_page_shows_the_notable_tasks_in_full_and_lists_the_rest_in_a_few_bytes() -> None:
    from ocllm.report.task_views import FULL_EVIDENCE

    n = 2000
    doc = large_run(n)
    page = run_report_html(doc)
    # Every task's evidence was 4.4 KB a task here (70 MB for 12,000 MMLU-Pro tasks); beyond the tasks shown in
    # full, a task costs one row of a table.
    assert len(page.encode()) / n < 1000
    growth = len(run_report_html(large_run(2 * n)).encode()) - len(page.encode())
    assert growth / n < 150
    changed = [t["task_id"] for t in doc["tasks"] if t["previous"]]
    opened = re.findall(r'<details class="task v-[a-z]+" data-task-id="([^"]+)"', page)
    assert set(changed) <= set(opened) and "q00005" in opened  # every changed decision and the failed request
    assert len(opened) == FULL_EVIDENCE
    index = re.search(r"<table data-task-index>(.*?)</table>", page, re.S)
    assert index is not None
    listed = re.findall(r"<tr data-v=\"[a-z]+\"><td>[a-z]+<td>([^<]+)<td>", index.group(1))
    assert sorted(html.unescape(i) for i in listed + opened) == sorted(t["task_id"] for t in doc["tasks"])
    assert "<script>window.__xss" not in page and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page
    assert f"{FULL_EVIDENCE} of the {n} tasks are shown with their whole evidence" in page


def test_a_run_of_a_few_hundred_tasks_still_shows_every_task_in_full() -> None:
    from ocllm.report.task_views import FULL_EVIDENCE

    doc = large_run(FULL_EVIDENCE)
    page = run_report_html(doc)
    assert page.count('<details class="task ') == FULL_EVIDENCE and "<table data-task-index" not in page


# --- A lane keeps its colour from page to page (issue 19, item 18) -------------------------------------------


def lane_swatches(page: str) -> dict[str, set[str]]:
    """The swatch colour beside each lane's name on a page: leaderboard rows and the comparison cards."""
    found: dict[str, set[str]] = {}
    swatch = r'<span class="swatch" style="background: (#[0-9a-f]{6})"'
    for pattern in (r'<tr data-lane="([^"]+)">.*?' + swatch, r'title="([^"]+)">' + swatch):
        for label, colour in re.findall(pattern, page):
            found.setdefault(label, set()).add(colour)
    return found


def chart_svg(page: str, key: str) -> str:
    found = re.search(rf'<figure class="chart[^"]*" data-chart="{key}">(.*?)</figure>', page, re.S)
    assert found, key
    return found.group(1)


def test_a_lane_has_one_colour_on_the_run_comparison_and_matrix_pages() -> None:
    """Colours followed the rank, so the baseline ranked last on the matrix page was drawn in another colour on
    the comparison page with the same lanes."""
    matrix = matrix_html(matrix_doc())
    comparison = comparison_html(comparison_doc())
    on_matrix, on_comparison = lane_swatches(matrix), lane_swatches(comparison)
    assert set(on_matrix) == {"lane_A", "lane_B", "lane_C"} and set(on_comparison) == {"lane_A", "lane_B"}
    for label, colours in on_matrix.items():
        assert len(colours) == 1, (label, colours)  # the leaderboard and each comparison card agree
    assert len({next(iter(c)) for c in on_matrix.values()}) == 3  # three lanes, three colours
    for label in on_comparison:
        assert on_comparison[label] == on_matrix[label], label
        colour = next(iter(on_matrix[label]))
        assert f"fill: {colour}" in chart_svg(matrix, "accuracy"), label
        assert f"fill: {colour}" in chart_svg(comparison, "accuracy"), label
    run = run_report_html(run_doc(label="lane_A"))
    assert f"fill: {next(iter(on_matrix['lane_A']))}" in chart_svg(run, "category-accuracy")
