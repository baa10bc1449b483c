"""`ocllm rescore --from lm-eval` on lm-eval's math tasks (issue 20): gsm8k (two filters), gsm8k_cot*,
minerva_math* / minerva_math500 (metrics exact_match and math_verify), hendrycks_math*, aime*.

The lines are written here as lm-eval 0.4.13 writes them with --log_samples (the keys of its evaluator: doc_id,
doc, target, arguments, resps, filtered_resps, filter, metrics, the hashes, then each metric's value), with the
docs as each task's `process_docs` leaves them and the filter and metric names of its YAML. The math scorer lands
apart: these tests check what the reader produces (the task, the sample, `previous`), never a verdict of ours.
Every expected value is written by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import lm_eval_samples as samples_file

from ocllm.cli import main
from ocllm.formats.harnesses import read_harness_files
from ocllm.formats.records import SavedRecord

GSM8K_ANSWER = "Weng earns 12/60 = $<<12/60=0.2>>0.2 a minute.\nIn 50 minutes, 0.2 x 50 = $<<0.2*50=10>>10.\n#### 1,010"
# minerva_math's process_docs replaces `answer` by its normaliser's output. Before lm-eval 0.4.13 that dropped
# every `ft` (`\left(` -> `\le(`) and joined `2, 3, 5, 7` into `2357`; 0.4.13's (read in its wheel) keeps both and
# still drops the spaces. Either way the doc's answer is not the dataset's, so the gold is the solution's box.
POLAR_SOLUTION = r"We have $r = 3$ and $\theta = \frac{\pi}{2},$ so the polar coordinates are " + (
    r"$\boxed{\left( 3, \frac{\pi}{2} \right)}.$"
)
POLAR_NORMALISED = r"\le(3,\frac{\pi}{2}\right)"  # before 0.4.13
POLAR_NORMALISED_0_4_13 = r"\left(3,\frac{\pi}{2}\right)"
PRIMES_SOLUTION = r"Checking $2, 3, \dots$ we find $\boxed{2}$ first; all of them are $\boxed{2, 3, 5, 7}$."


def line(doc_id: int, doc: dict[str, Any], target: Any, response: str, filter_name: str, filtered: str,
         **metrics: float) -> dict[str, Any]:  # fmt: skip
    prompt = json.dumps([{"role": "user", "content": f"Question: {doc.get('question', doc.get('problem', ''))}"}])
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": [prompt], "arg_1": {"until": ["Question:"], "do_sample": False}}},
        "resps": [[response]],
        "filtered_resps": [filtered],
        "filter": filter_name,
        "metrics": list(metrics),
        "doc_hash": "0" * 64,
        "prompt_hash": "1" * 64,
        "target_hash": "2" * 64,
        **metrics,
    }


def records(path: Path, filter_name: str | None = None) -> list[SavedRecord]:
    run = read_harness_files("lm-eval", [path], filter_name)
    return list(run.records)


# --- gsm8k: two filters, each with its extraction and exact_match ---------------------------------------

GSM8K_DOCS = [
    {"question": "Weng earns $12 an hour...", "answer": GSM8K_ANSWER},
    {"question": "Betty needs $100...", "answer": "She needs 100 - 95 = <<100-95=5>>5 more.\n#### 5"},
]
GSM8K_RESPONSES = [
    "She earned 0.2 x 50 = 10 dollars, plus 1,000: the answer is $1,010.",
    "Betty still needs 5 dollars.\n#### 5",
]


def gsm8k_lines() -> list[dict[str, Any]]:
    # gsm8k.yaml: doc_to_target "{{answer}}" (the whole answer text), filters strict-match ("#### (number)")
    # then flexible-extract (the last number); lm-eval writes every doc of one filter before the next filter's.
    d0, d1 = GSM8K_DOCS
    r0, r1 = GSM8K_RESPONSES
    return [
        line(0, d0, d0["answer"], r0, "strict-match", "[invalid]", exact_match=0.0),
        line(1, d1, d1["answer"], r1, "strict-match", "5", exact_match=1.0),
        line(0, d0, d0["answer"], r0, "flexible-extract", "$1,010.", exact_match=1.0),
        line(1, d1, d1["answer"], r1, "flexible-extract", "5", exact_match=1.0),
    ]


def test_gsm8k_lines_of_both_filters_are_one_math_task_with_the_gold_from_the_doc(tmp_path: Path) -> None:
    got = records(samples_file(tmp_path, "gsm8k", gsm8k_lines()))
    assert [r.task.id for r in got] == ["gsm8k/0", "gsm8k/1"]
    first, second = got
    assert first.task.type == "math" and first.task.answer == "1010" and second.task.answer == "5"
    assert first.task.question == "Weng earns $12 an hour..." and first.task.category == "gsm8k"
    assert first.sample.content == GSM8K_RESPONSES[0] and first.sample.reasoning is None
    assert first.task.prompt == "Question: Weng earns $12 an hour..."
    previous = first.previous
    assert previous["tool"] == "lm-eval" and previous["filter"] == "flexible-extract"  # the default, as for GPQA
    assert previous["gold_source"] == "doc.answer, after its last ####"
    assert previous["tool_target"] == GSM8K_ANSWER
    assert (previous["extracted_final_answer"], previous["tool_answer"]) == ("$1,010.", "$1,010.")
    assert previous["correct"] is True
    assert previous["metric"] == "exact_match" and previous["verdicts"] == {"exact_match": True}
    strict = previous["filters"]["strict-match"]
    assert (strict["answer"], strict["extracted"], strict["correct"]) == ("[invalid]", None, False)
    assert set(previous["filters"]) == {"strict-match", "flexible-extract"}


def test_filter_chooses_whose_verdict_is_the_tools_own(tmp_path: Path) -> None:
    path = samples_file(tmp_path, "gsm8k", gsm8k_lines())
    strict = records(path, "strict-match")
    assert [r.previous["correct"] for r in strict] == [False, True]
    assert [r.previous["extracted_final_answer"] for r in strict] == [None, "5"]
    assert [r.task.answer for r in strict] == ["1010", "5"]  # the gold does not depend on the filter


@pytest.mark.parametrize("task", ["gsm8k_cot", "gsm8k_cot_zeroshot", "gsm8k_cot_llama", "gsm8k_cot_self_consistency"])
def test_gsm8k_cot_variants_take_the_gold_from_the_doc_not_the_target(task: str, tmp_path: Path) -> None:
    # gsm8k-cot.yaml: doc_to_target is the text after #### already; filters strict-match ("The answer is N.")
    # and flexible-extract.
    d0 = GSM8K_DOCS[0]
    lines = [
        line(0, d0, "1,010", "So the answer is 1010.", "strict-match", "1010", exact_match=1.0),
        line(0, d0, "1,010", "So the answer is 1010.", "flexible-extract", "1010.", exact_match=1.0),
    ]
    (got,) = records(samples_file(tmp_path, task, lines))
    assert (got.task.id, got.task.answer, got.task.category) == (f"{task}/0", "1010", task)
    assert got.previous["gold_source"] == "doc.answer, after its last ####" and got.previous["tool_target"] == "1,010"


def test_a_gsm8k_doc_without_its_answer_takes_the_target(tmp_path: Path) -> None:
    lines = [line(4, {"question": "How many?"}, "1,200", "It is 1200.", "flexible-extract", "1200.", exact_match=1.0)]
    (got,) = records(samples_file(tmp_path, "gsm8k_cot", lines))
    assert (got.task.answer, got.previous["gold_source"]) == ("1200", "target")


# --- minerva_math: one line, filter none, exact_match and math_verify -----------------------------------


def minerva_doc(solution: str, normalised: str, **extra: Any) -> dict[str, Any]:
    return {"problem": "Convert the point $(0,3)$ to polar coordinates.", "solution": solution, "answer": normalised,
            **extra}  # fmt: skip


@pytest.mark.parametrize("normalised", [POLAR_NORMALISED, POLAR_NORMALISED_0_4_13])
def test_minerva_math_gold_is_the_solutions_box_not_lm_evals_normalised_answer(normalised: str, tmp_path: Path) -> None:
    response = r"So the point is $\left( 3, \frac{\pi}{2} \right)$." + "\nFinal Answer: The final answer is 3."
    doc = minerva_doc(POLAR_SOLUTION, normalised, level="Level 2", type="Precalculus")
    lines = [line(0, doc, normalised, response, "none", response, exact_match=0, math_verify=1)]
    (got,) = records(samples_file(tmp_path, "minerva_math_precalc", lines))
    task, previous = got.task, got.previous
    assert (task.id, task.type) == ("minerva_math_precalc/0", "math")
    assert task.answer == r"\left( 3, \frac{\pi}{2} \right)"  # not lm-eval's "\le(3,...)"
    assert (task.category, task.subset) == ("Precalculus", "Level 2")
    assert task.question == doc["problem"] and got.sample.content == response
    assert previous["gold_source"] == "doc.solution, its last \\boxed{}"
    assert previous["tool_target"] == normalised
    assert previous["filter"] == "none" and previous["extraction_method"] == "lm-eval metric math_verify"
    assert previous["verdicts"] == {"exact_match": False, "math_verify": True}
    assert (previous["metric"], previous["metric_value"], previous["correct"]) == ("math_verify", 1, True)
    # With filter `none` lm-eval logs no extraction: nothing is claimed, and the response is not kept twice.
    assert previous["extracted_final_answer"] is None and previous["tool_answer"] is None


def test_minerva_math500_keeps_the_list_lm_eval_joined_into_one_number(tmp_path: Path) -> None:
    # MATH-500 through minerva_math500: subject, level (an integer) and unique_id stay beside the replaced answer.
    doc = {"problem": "Which primes are below 8?", "solution": PRIMES_SOLUTION, "answer": "2357",
           "subject": "Number Theory", "level": 1, "unique_id": "test/number_theory/1.json"}  # fmt: skip
    response = "They are 2, 3, 5, 7.\nFinal Answer: The final answer is $2, 3, 5, 7$. I hope it is correct."
    lines = [line(7, doc, "2357", response, "none", response, exact_match=1, math_verify=0)]
    (got,) = records(samples_file(tmp_path, "minerva_math500", lines))
    assert (got.task.id, got.task.answer) == ("minerva_math500/7", "2, 3, 5, 7")  # the LAST box of the solution
    assert (got.task.category, got.task.subset) == ("Number Theory", "Level 1")
    assert got.previous["verdicts"] == {"exact_match": True, "math_verify": False}
    assert got.previous["correct"] is False  # math_verify's verdict is the tool's own where it has one
    assert got.previous["filters"]["none"]["metric_value"] == 0


def test_hendrycks_math_has_exact_match_only(tmp_path: Path) -> None:
    doc = {"problem": "What is $1+1$?", "solution": r"It is $\boxed{2}$.", "answer": "2", "level": "Level 1",
           "type": "Algebra"}  # fmt: skip
    lines = [line(0, doc, "2", "$2$", "none", "$2$", exact_match=1)]
    (got,) = records(samples_file(tmp_path, "hendrycks_math_algebra", lines))
    assert got.task.answer == "2" and got.previous["verdicts"] == {"exact_match": True}
    assert got.previous["correct"] is True and got.previous["extraction_method"] == "lm-eval metric exact_match"


def test_a_math_doc_without_solution_takes_its_answer(tmp_path: Path) -> None:
    lines = [line(0, {"problem": "p", "answer": r"\frac{1}{2}"}, "x", "1/2", "none", "1/2", exact_match=0)]
    (got,) = records(samples_file(tmp_path, "minerva_math_algebra", lines))
    assert (got.task.answer, got.previous["gold_source"]) == (r"\frac{1}{2}", "doc.answer")


# --- aime: the doc's answer field, in whichever case the dataset writes it ------------------------------


@pytest.mark.parametrize(
    ("task", "doc", "question", "gold", "source"),
    [
        ("aime24", {"ID": "2024-I-1", "Problem": "Every morning Aya...", "Solution": "long", "Answer": 204},
         "Every morning Aya...", "204", "doc.Answer"),
        ("aime25", {"problem": "Find the sum...", "answer": "70", "id": "0"}, "Find the sum...", "70", "doc.answer"),
        ("aime", {"ID": "1983-1", "Year": 1983, "Problem Number": 1, "Question": "Let $x$...", "Answer": 60,
                  "Part": None}, "Let $x$...", "60", "doc.Answer"),
    ],
)  # fmt: skip
def test_aime_tasks_take_the_gold_from_the_docs_answer(
    task: str, doc: dict[str, Any], question: str, gold: str, source: str, tmp_path: Path
) -> None:
    response = r"Thus the answer is $\boxed{204}$."
    lines = [line(3, doc, str(doc.get("Answer", doc.get("answer"))), response, "none", response, exact_match=1)]
    (got,) = records(samples_file(tmp_path, task, lines))
    assert (got.task.id, got.task.type, got.task.category) == (f"{task}/3", "math", task)
    assert (got.task.question, got.task.answer, got.previous["gold_source"]) == (question, gold, source)
    assert got.previous["correct"] is True and got.previous["verdicts"] == {"exact_match": True}


# --- other names: math docs by their fields, only where no options are found ----------------------------


def test_a_custom_task_is_read_as_math_by_its_docs_fields(tmp_path: Path) -> None:
    math_lines = [line(0, {"problem": "p", "solution": r"$\boxed{9}$"}, "9", "9", "none", "9", exact_match=1)]
    (got,) = records(samples_file(tmp_path / "a", "my_math_local", math_lines))
    assert (got.task.type, got.task.answer, got.task.category) == ("math", "9", "my_math_local")
    gsm_lines = [line(0, GSM8K_DOCS[1], "5", "5", "flexible-extract", "5", exact_match=1)]
    (got,) = records(samples_file(tmp_path / "b", "grade_school_local", gsm_lines))
    assert (got.task.type, got.task.answer) == ("math", "5")


def test_a_doc_without_a_gold_is_left_out_with_why(tmp_path: Path) -> None:
    lines = [
        line(0, {"problem": "p", "solution": "no box"}, "", "r", "none", "r", exact_match=0),
        line(1, {"problem": "q", "solution": r"$\boxed{1}$"}, "1", "1", "none", "1", exact_match=1),
    ]
    run = read_harness_files("lm-eval", [samples_file(tmp_path, "minerva_math_algebra", lines)], None)
    assert [r.task.id for r in run.records] == ["minerva_math_algebra/1"]
    (left_out,) = run.unscorable
    assert left_out.task_id == "minerva_math_algebra/0" and "no gold answer" in left_out.reason


# --- through the command -------------------------------------------------------------------------------


def test_rescore_from_lm_eval_writes_math_tasks_with_the_tools_verdicts(tmp_path: Path) -> None:
    path = samples_file(tmp_path / "in", "gsm8k", gsm8k_lines())
    out, audit = tmp_path / "out.json", tmp_path / "audit.md"
    assert main(["rescore", "--from", "lm-eval", str(path), "-o", str(out), "--report", str(audit)]) == 0
    document = json.loads(out.read_text())
    tasks = {t["task_id"]: t for t in document["tasks"]}
    assert set(tasks) == {"gsm8k/0", "gsm8k/1"}
    assert {t["task_type"] for t in tasks.values()} == {"math"}
    assert tasks["gsm8k/0"]["raw_content"] == GSM8K_RESPONSES[0]
    assert tasks["gsm8k/0"]["previous"]["filters"]["strict-match"]["correct"] is False
    assert tasks["gsm8k/1"]["previous"]["correct"] is True
    assert audit.read_text().strip()
