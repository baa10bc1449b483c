"""`rescore --from lm-eval` and `report --from lm-eval` of a folder of mixed tasks (issue 28, section 4): letters
(arc_easy), numbers (gsm8k, minerva_math500) and instructions (ifeval). Each task type, and each lm-eval task within
a type, gets its own headline and test; the figures pooled over the types are labelled as pooled and carry no test;
a scope with no paired task shows no statistic.

The lines are written here as lm-eval 0.4 writes them with --log_samples (`samples_<task>_<datetime>.jsonl`: doc_id,
doc, target, arguments, resps, filtered_resps, filter, metrics, the hashes, then each metric's value). lm-eval's
verdicts are the metric values written below; this scorer's are worked out by hand from each response (a `FINAL:`
letter, a `\\boxed{}` value, a comma or none), so every expected count and p-value is counted here, not taken from
the code under test. The exact McNemar p of b discordant pairs all one way is 2 * 0.5^b (capped at 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ocllm.cli import main

STAMP = "2026-12-01T10-00-00.000000"
HASHES = {"doc_hash": "0" * 64, "prompt_hash": "1" * 64, "target_hash": "2" * 64}


def _line(doc_id: int, doc: dict[str, Any], target: Any, prompt: str, response: str, filtered: str,
          filter_name: str, **metrics: Any) -> dict[str, Any]:  # fmt: skip
    chat = json.dumps([{"role": "user", "content": prompt}])
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": [chat], "arg_1": {"until": [], "do_sample": False}}},
        "resps": [[response]],
        "filtered_resps": [filtered],
        "filter": filter_name,
        "metrics": list(metrics) or ["exact_match"],
        **HASHES,
        **metrics,
    }


def arc_line(doc_id: int, gold: str, response: str, filtered: str, exact_match: float) -> dict[str, Any]:
    texts = ["a ruler", "a balance", "a thermometer", "a compass"]
    doc = {"id": f"ARC-{doc_id}", "question": "Which tool measures mass?",
           "choices": {"text": texts, "label": ["A", "B", "C", "D"]}, "answerKey": gold}  # fmt: skip
    prompt = "Which tool measures mass?\n" + "\n".join(f"{x}. {t}" for x, t in zip("ABCD", texts, strict=True))
    return _line(doc_id, doc, gold, prompt, response, filtered, "none", exact_match=exact_match)


def gsm8k_line(doc_id: int, gold: int, response: str, filtered: str, **metric: float) -> dict[str, Any]:
    doc = {"question": f"Question {doc_id}?", "answer": f"Working.\n#### {gold}"}
    return _line(doc_id, doc, doc["answer"], doc["question"], response, filtered, "flexible-extract", **metric)


def math500_line(doc_id: int, gold: str, response: str, correct: bool) -> dict[str, Any]:
    doc = {"problem": f"Problem {doc_id}.", "solution": f"So it is $\\boxed{{{gold}}}$.", "answer": gold,
           "subject": "Algebra", "level": 1, "unique_id": f"test/algebra/{doc_id}.json"}  # fmt: skip
    score = 1.0 if correct else 0.0
    return _line(doc_id, doc, gold, doc["problem"], response, response, "none", exact_match=score, math_verify=score)


IFEVAL_NULLS = {"num_highlights": None, "relation": None, "num_words": None, "keywords": None, "language": None,
                "end_phrase": None, "section_spliter": None, "num_sections": None}  # fmt: skip


def ifeval_line(doc_id: int, key: int, response: str, strict: bool) -> dict[str, Any]:
    doc = {"key": key, "prompt": "Write without commas.", "instruction_id_list": ["punctuation:no_comma"],
           "kwargs": [dict(IFEVAL_NULLS)]}  # fmt: skip
    metrics = {"prompt_level_strict_acc": strict, "inst_level_strict_acc": [strict],
               "prompt_level_loose_acc": strict, "inst_level_loose_acc": [strict]}  # fmt: skip
    return _line(doc_id, doc, 0, doc["prompt"], response, response, "none", **metrics)


def write(folder: Path, task: str, lines: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"samples_{task}_{STAMP}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def mixed_folder(folder: Path) -> Path:
    # arc_easy (mcq): every answer right by its FINAL: letter; lm-eval's exact match on the whole text (filter
    # none) failed two of them. lm-eval 2/4, this scorer 4/4: 2 discordant, p = 2 * 0.5^2 = 0.5.
    write(folder, "arc_easy", [
        arc_line(0, "B", "FINAL: B", "B", 1.0),
        arc_line(1, "B", "A balance weighs things.\n\nFINAL: B", "A balance weighs things.\n\nFINAL: B", 0.0),
        arc_line(2, "B", "FINAL: B", "B", 1.0),
        arc_line(3, "B", "Not a ruler.\n\nFINAL: B", "Not a ruler.\n\nFINAL: B", 0.0),
    ])  # fmt: skip
    # gsm8k (math): the last number lm-eval's flexible-extract takes is right three times; doc 2's boxed answer is
    # 13, not 12 (the number after it is a check). lm-eval 3/3, this scorer 2/3: p = 1.
    write(folder, "gsm8k", [
        gsm8k_line(0, 5, "She needs 5 more. The answer is $\\boxed{5}$.", "5", exact_match=1.0),
        gsm8k_line(1, 8, "Two times four: $\\boxed{8}$", "8", exact_match=1.0),
        gsm8k_line(2, 12, "Three boxes of four hold $\\boxed{13}$ in all. Check: 3 x 4 = 12", "12", exact_match=1.0),
    ])  # fmt: skip
    # minerva_math500 (math): both right on both. 2/2 each: the same accuracy, p = 1.
    write(folder, "minerva_math500", [
        math500_line(0, "3", "Hence $\\boxed{3}$.", True),
        math500_line(1, "\\frac{1}{2}", "So $\\boxed{\\frac{1}{2}}$.", True),
    ])  # fmt: skip
    # ifeval (instructions): doc 1 keeps a comma in its <think> block, which lm-eval checked and this scorer does not
    # (it checks the visible answer). lm-eval 1/2, this scorer 2/2: p = 1.
    write(folder, "ifeval", [
        ifeval_line(0, 1001, "The river wakes slowly. Mist lifts from the water.", True),
        ifeval_line(1, 1002, "<think>Hmm, no commas.</think>A heron stands still.", False),
    ])  # fmt: skip
    return folder


# By hand, from the records above: (lm-eval correct, this scorer's correct, tasks) per scope.
ARC = (2, 4, 4)
GSM8K = (3, 2, 3)
MATH500 = (2, 2, 2)
MATH = (5, 4, 5)  # gsm8k and minerva_math500 together
IFEVAL = (1, 2, 2)
POOLED = (8, 10, 11)


def flat(text: str) -> str:
    return " ".join(text.split())


def rescore_console(folder: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, dict[str, Any], str]:
    out, audit = tmp / "out.json", tmp / "audit.md"
    capsys.readouterr()
    assert main(["rescore", "--from", "lm-eval", str(folder), "-o", str(out), "--report", str(audit)]) == 0
    return capsys.readouterr().out, json.loads(out.read_text()), audit.read_text()


def row_of(text: str, name: str) -> list[str]:
    """The cells of the console table's row that starts with `name` (rich draws │ between cells)."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f"no row {name!r} in:\n{text}")


def test_each_type_and_each_lm_eval_task_has_its_own_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, doc, _ = rescore_console(mixed_folder(tmp_path / "lm-eval"), tmp_path, capsys)
    said = flat(out)
    # The scorer's verdicts are the ones worked out by hand above.
    verdicts = {t["task_id"]: t["correct"] for t in doc["tasks"]}
    assert [verdicts[f"arc_easy/{i}"] for i in range(4)] == [True] * 4
    assert [verdicts[f"gsm8k/{i}"] for i in range(3)] == [True, True, False]
    assert verdicts["ifeval/1001"] is verdicts["ifeval/1002"] is True
    # One row per type (named with its one task where it has one), one per task of a type with several.
    for name, (old, new, n), p in (
        ("mcq (arc_easy)", ARC, "0.5"),
        ("math", MATH, "1"),
        ("math / gsm8k", GSM8K, "1"),
        ("math / minerva_math500", MATH500, "1"),
        ("instructions (ifeval)", IFEVAL, "1"),
    ):
        cells = row_of(out, name)
        assert cells[1] == str(n) and cells[2].startswith(f"{old}/{n} ") and cells[3].startswith(f"{new}/{n} ")
        assert cells[5] == f"exact McNemar p = {p}"
    # Each its own sentence, with its own numbers (differences in points, this scorer minus lm-eval).
    assert (
        "mcq (arc_easy): ocllm's scorer scores 50.0 points higher than lm-eval on these tasks, but the difference "
        "is not statistically significant" in said
    )
    assert "exact McNemar p = 0.5): no evidence that either scoring is better" in said
    assert "math: ocllm's scorer scores 20.0 points lower than lm-eval on these tasks" in said
    assert "math / gsm8k: ocllm's scorer scores 33.3 points lower than lm-eval on these tasks" in said
    assert "math / minerva_math500: lm-eval and ocllm's scorer have the same accuracy on the paired tasks" in said
    assert "instructions (ifeval): ocllm's scorer scores 50.0 points higher than lm-eval" in said
    # The pool of the three types: labelled as pooled, last, with no test and no sentence of its own.
    old, new, n = POOLED
    pooled = row_of(out, "pooled over 3 task types")
    assert pooled[1:4] == [str(n), f"{old}/{n} (72.73%)", f"{new}/{n} (90.91%)"]
    assert pooled[4] == "+18.18 points (pooled)" and pooled[5] == "not tested (pooled)"
    # The pooled McNemar p (3 discordant one way, 1 the other: 2 * 5/16) is said nowhere.
    assert "0.625" not in said
    assert (
        "The figures pooled over 3 task types (instructions, math, mcq) mix scorers of different kinds: they are no "
        "headline and carry no test" in said
    )
    assert said.index("mcq (arc_easy):") < said.index("The figures pooled over 3 task types")
    # No sentence claims a pooled difference.
    assert not re.search(r"scores 18\.2 points higher", said)


def test_the_summary_holds_each_scope_and_the_audit_draws_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, doc, audit = rescore_console(mixed_folder(tmp_path / "lm-eval"), tmp_path, capsys)
    scopes = doc["summary"]["input_verdicts"]
    assert scopes["label"] == "lm-eval" and list(scopes["by_type"]) == ["instructions", "math", "mcq"]
    math = scopes["by_type"]["math"]
    assert list(math["by_task"]) == ["gsm8k", "minerva_math500"]
    for figures, (old, new, n) in (
        (scopes["by_type"]["mcq"]["paired"], ARC),
        (math["paired"], MATH),
        (math["by_task"]["gsm8k"]["paired"], GSM8K),
        (math["by_task"]["minerva_math500"]["paired"], MATH500),
        (scopes["by_type"]["instructions"]["paired"], IFEVAL),
        (scopes["pooled"], POOLED),
    ):
        assert (figures["a_correct"], figures["b_correct"], figures["n_paired"]) == (old, new, n)
    assert scopes["by_type"]["mcq"]["paired"]["p_value"] == pytest.approx(0.5)
    # Every per-task record keeps its fields: the summary gained a field, nothing was renamed.
    record = next(t for t in doc["tasks"] if t["task_id"] == "gsm8k/2")
    for key in ("task_id", "task_type", "category", "expected_answer", "extracted_final_answer", "extraction_source",
                "extraction_method", "ambiguity", "correct", "candidates", "previous"):  # fmt: skip
        assert key in record
    # The audit: a section per scope with its own counts; the pool's without a test or a verdict.
    lead = audit.split("## Totals")[0]
    assert "## lm-eval against ocllm's scorer, per task type" in lead
    sections = dict(re.findall(r"### (.+?)\n\n(.*?)(?=\n### |\Z)", lead, re.S))
    assert list(sections) == [
        "instructions (ifeval)", "math", "math / gsm8k", "math / minerva_math500", "mcq (arc_easy)",
        "pooled over 3 task types",
    ]  # fmt: skip
    assert "| lm-eval | 3/3 |" in sections["math / gsm8k"] and "| ocllm's scorer | 2/3 |" in sections["math / gsm8k"]
    assert "| lm-eval | 2/4 |" in sections["mcq (arc_easy)"] and "exact McNemar p = 0.5" in sections["mcq (arc_easy)"]
    pooled = sections["pooled over 3 task types"]
    assert "| lm-eval | 8/11 |" in pooled and "| ocllm's scorer | 10/11 |" in pooled and "not tested" in pooled
    assert "McNemar" not in pooled and "0.625" not in lead


def test_a_type_with_no_paired_task_shows_no_statistic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "lm-eval"
    write(folder, "arc_easy", [arc_line(0, "B", "FINAL: B", "B", 0.0), arc_line(1, "B", "FINAL: B", "B", 1.0)])
    # gsm8k lines that name their metric and hold no value of it: lm-eval gave no verdict, nothing is paired.
    write(folder, "gsm8k", [gsm8k_line(0, 5, "$\\boxed{5}$", "5"), gsm8k_line(1, 8, "$\\boxed{8}$", "8")])
    out, doc, audit = rescore_console(folder, tmp_path, capsys)
    said = flat(out)
    assert doc["summary"]["input_verdicts"]["by_type"]["math"] == {"paired": None, "unpaired": 2, "by_task": {
        "gsm8k": {"paired": None, "unpaired": 2}}}  # fmt: skip
    cells = row_of(out, "math (gsm8k)")
    assert cells[1:] == ["0", "-", "-", "-", "no statistic"]
    assert (
        "math (gsm8k): no task both decided (2 left out: the request failed, or lm-eval recorded no verdict), so no "
        "statistic" in said
    )
    # mcq has its own figures: lm-eval 1/2, this scorer 2/2.
    assert row_of(out, "mcq (arc_easy)")[2:4] == ["1/2 (50.00%)", "2/2 (100.00%)"]
    section = audit.split("### math (gsm8k)")[1].split("###")[0]
    assert "no statistic" in section and "p =" not in section


def test_the_report_of_a_mixed_folder_draws_each_scope(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = mixed_folder(tmp_path / "lm-eval")
    capsys.readouterr()
    assert main(["report", "--from", "lm-eval", str(folder), "-o", str(tmp_path / "r")]) == 0
    said = flat(capsys.readouterr().out)
    assert "math / gsm8k: ocllm's scorer scores 33.3 points lower than lm-eval on these tasks" in said
    assert "0.625" not in said
    md = (tmp_path / "r" / "report.md").read_text()
    section = md.split("## lm-eval's verdicts against ocllm's scorer")[1].split("### Changed decisions")[0]
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:-1]] for r in section.splitlines()
            if r.startswith("| ") and not r.startswith("| scope")}  # fmt: skip
    assert rows["math / gsm8k"][:3] == ["3", "3/3 (100.0%)", "2/3 (66.7%)"]
    assert rows["mcq (arc_easy)"][:3] == ["4", "2/4 (50.0%)", "4/4 (100.0%)"]
    assert rows["pooled over 3 task types"][1:] == ["8/11 (72.7%)", "10/11 (90.9%)", "+18.2 pts (pooled)",
                                                    "not tested (pooled)"]  # fmt: skip
    assert "- **math / minerva_math500**: lm-eval and ocllm's scorer have the same accuracy" in section
    assert "0.625" not in md
    page = (tmp_path / "r" / "report.html").read_text()
    table = page.split("<table data-tool-verdict-scopes>")[1].split("</table>")[0]
    assert '<tr data-scope-kind="pooled"><td>pooled over 3 task types</td><td class="num">11</td>' in table
    assert "not tested (pooled)" in table and "0.625" not in page
    assert "<strong>math / gsm8k</strong>: ocllm&#39;s scorer scores 33.3 points lower" in page
