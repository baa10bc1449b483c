"""`ocllm rescore --from lm-eval` of a gsm8k `--log_samples` file whose answers are written as reasoning models
write them (issue 28): the final answer as prose, in bold, at the end of working, with typography, or with the
analysis channel of gpt-oss's harmony format left in the text. Every response, gold and lm-eval verdict was written
here by hand; lm-eval's flexible-extract takes the last number of the response, and its verdicts below are what
that filter gives on each text, worked out by reading."""

from __future__ import annotations

import json
from pathlib import Path

from test_rescore_from_math import line, samples_file

from ocllm.cli import main

# (response, gold, lm-eval flexible-extract's verdict: the last number of the response equals the gold)
CASES = [
    ("Adding the three weeks: 45 + 52 + 61 = **158** visitors.", "158", True),
    ("So the tank holds **72 litres** (about 19 gallons) after the refill.", "72", False),
    ("Altogether she spends $12 + $30 + $8 = **$50**.", "50", True),
    ("\\(48 + 264 = 312\\) tiles.", "312", True),
    ("**Answer:** Each bus carries **48 pupils** on both trips", "48", True),
    ("The answer is 5 bags of flour in the first month.", "5", True),
    ("So, the answer is 10 * 10 = 100.", "100", True),
    ("Final answer: 60\u202f% of the students enrolled in hip\u2011hop", "60", True),
    ("analysisWe need 16 - 3 - 4 = 9 eggs, times $2.assistantfinalShe makes **$18** every day.", "18", True),
    ("Each month she saves $255 each month, so the answer is $255 each month.", "255", True),
    ("Kylar pays 8 \u00d7 $5 + 8 \u00d7 $3 = **$64** for the 16 glasses.", "64", False),
    ("Thus the farm has 260 sheep. #### 260", "260", True),
]


def test_prose_answers_are_credited_and_the_headline_points_the_right_way(
    tmp_path: Path, capsys: object
) -> None:
    lines = [
        line(i, {"question": f"Question {i}?", "answer": f"Working.\n#### {gold}"}, gold, response, "flexible-extract",
             gold if lm_eval else "0", exact_match=1.0 if lm_eval else 0.0)
        for i, (response, gold, lm_eval) in enumerate(CASES)
    ]  # fmt: skip
    path = samples_file(tmp_path / "lm_eval", "gsm8k", lines)
    out = tmp_path / "rescored.json"
    assert main(["rescore", "--from", "lm-eval", str(path), "-o", str(out)]) == 0
    tasks = {t["task_id"]: t for t in json.loads(out.read_text())["tasks"]}
    credited = {task_id for task_id, t in tasks.items() if t["correct"]}
    assert credited == {f"gsm8k/{i}" for i in range(len(CASES))}, {
        task_id: (t["extracted_final_answer"], t["reason"]) for task_id, t in tasks.items() if not t["correct"]
    }
    said = capsys.readouterr().out  # type: ignore[attr-defined]
    # 12 of 12 against lm-eval's 10 of 12: ocllm's scorer is the higher one, never the other way round.
    assert "ocllm's scorer scores 16.7 points higher than lm-eval" in said, said
