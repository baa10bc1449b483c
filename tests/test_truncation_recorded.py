"""Truncation is counted only where it was recorded (issue 28, section 4): the MMLU-Pro scripts' result files and
lm-eval's samples hold no finish_reason, so whether an answer was cut off at max_tokens is "not recorded", never
0, in the rescore's summary, its audit, the console, and the Markdown and HTML reports. A file whose answers record
their finish reason (inspect_ai's stop_reason) still shows its count.

The MMLU-Pro files are the ones TIGER-AI-Lab's script wrote (tests/fixtures/mmlu_pro/*/README.md); the inspect log
was written by inspect_ai: its README says one of its four outputs stopped at max_tokens, in each of three epochs
(twelve samples, three cut off)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ocllm.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
MMLU_PRO = FIXTURES / "mmlu_pro" / "evaluate_from_api-2a7ec7e"
INSPECT_VARIANT = next((FIXTURES / "inspect" / "0.3.285" / "variant").glob("*.eval"))
NOT_RECORDED = "not recorded (no response in the input records a finish_reason)"


def flat(text: str) -> str:
    return " ".join(text.split())


def test_mmlu_pro_results_say_truncation_is_not_recorded_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No record of these files holds a finish reason (the script keeps the text and its pred only).
    for path in MMLU_PRO.glob("*_result.json"):
        assert all("finish_reason" not in record for record in json.loads(path.read_text()))
    out, audit = tmp_path / "out.json", tmp_path / "audit.md"
    capsys.readouterr()
    assert main(["rescore", "--from", "mmlu-pro", str(MMLU_PRO), "-o", str(out), "--report", str(audit)]) == 0
    assert f"truncated: {NOT_RECORDED}" in flat(capsys.readouterr().out)
    summary = json.loads(out.read_text())["summary"]
    assert summary["truncated"] is None and summary["finish_reasons"] == 0
    assert f"- Truncated responses (`finish_reason: length`): {NOT_RECORDED}." in audit.read_text()
    # The report, read with --from and from the rescored document alike.
    for args, where in ((["--from", "mmlu-pro", str(MMLU_PRO)], "from"), ([str(out)], "doc")):
        capsys.readouterr()
        assert main(["report", *args, "-o", str(tmp_path / where)]) == 0
        assert f"truncated: {NOT_RECORDED}" in flat(capsys.readouterr().out)
        md = (tmp_path / where / "report.md").read_text()
        assert f"| truncated (finish_reason: length) | {NOT_RECORDED} |" in md
        assert "| truncated (finish_reason: length) | 0 |" not in md
        page = (tmp_path / where / "report.html").read_text()
        kpi = page.split('data-figure="truncated">')[1].split("</div></div>")[0]
        assert '<div class="value">not recorded</div>' in kpi
        assert "no response in the input records a finish_reason" in kpi


def test_a_comparison_of_results_without_finish_reasons_says_not_recorded(tmp_path: Path) -> None:
    a, b = tmp_path / "run-a", tmp_path / "run-b"
    shutil.copytree(MMLU_PRO, a)
    shutil.copytree(MMLU_PRO, b)
    assert main(["compare", "--from", "mmlu-pro", str(a), str(b), "-o", str(tmp_path / "cmp")]) == 0
    doc = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert doc["resources"]["a"]["truncated"] is None and doc["resources"]["b"]["truncated"] is None
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "| truncated | not recorded | not recorded |" in md


def test_answers_that_record_their_finish_reason_still_show_the_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, audit = tmp_path / "out.json", tmp_path / "audit.md"
    capsys.readouterr()
    assert main(["rescore", "--from", "inspect", str(INSPECT_VARIANT), "-o", str(out), "--report", str(audit)]) == 0
    said = flat(capsys.readouterr().out)
    summary = json.loads(out.read_text())["summary"]
    # Every one of the twelve samples recorded its stop reason; three stopped at max_tokens.
    assert (summary["truncated"], summary["finish_reasons"], summary["scored"]) == (3, 12, 12)
    assert "truncated: 3 wrote" in said and "not recorded" not in said
    assert "- Truncated responses (`finish_reason: length`): 3." in audit.read_text()
    capsys.readouterr()
    assert main(["report", str(out), "-o", str(tmp_path / "r")]) == 0
    assert "truncated: 3" in flat(capsys.readouterr().out)
    assert "| truncated (finish_reason: length) | 3 |" in (tmp_path / "r" / "report.md").read_text()
    page = (tmp_path / "r" / "report.html").read_text()
    kpi = page.split('data-figure="truncated">')[1].split("</div></div>")[0]
    assert '<div class="value">3</div>' in kpi and "finish_reason: length" in kpi
