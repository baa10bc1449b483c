"""Required-substring tasks: visible content only, case rules."""

from ocllm.models import Policy, Sample
from ocllm.scoring import decide
from ocllm.scoring.substrings.fields import SubstringsTask


def score(content, reasoning=None, required=("green", "orange"), case_sensitive=False):
    task = SubstringsTask(
        id="s1",
        required_substrings=list(required),
        case_sensitive=case_sensitive,
        category="instruction",
    )
    return decide(task, Sample(task_id="s1", content=content, reasoning=reasoning), Policy())


def test_all_present_case_insensitive() -> None:
    d = score("GREEN and Orange.")
    assert d.correct is True and d.missing_substrings == []


def test_missing_one() -> None:
    d = score("Only green here.")
    assert d.correct is False and d.missing_substrings == ["orange"]


def test_case_sensitive_when_the_task_says_so() -> None:
    assert score('{"Status": 1}', required=['"status"'], case_sensitive=True).correct is False
    assert score('{"status": 1}', required=['"status"'], case_sensitive=True).correct is True


def test_text_only_in_reasoning_does_not_count() -> None:
    assert score("Just green.", reasoning="green and orange").correct is False
    assert score("<think>green and orange</think>Nothing.").correct is False


def test_empty_content() -> None:
    d = score(None)
    assert d.correct is False and d.extraction_source == "none"


def test_error_sample_is_not_scored() -> None:
    task = SubstringsTask(id="s1", required_substrings=["x"])
    d = decide(task, Sample(task_id="s1", error="HTTP 500 after 3 attempts"))
    assert d.correct is None and d.error == "HTTP 500 after 3 attempts" and d.rule == "request_error"
