"""The pinned answer corpus (tests/answer_corpus.py, docs/scoring.md "The pinned answer corpus"): every verdict the
scorer gives on thousands of real published answers is the pinned one, or a change listed, with its reason, for the
current SCORER_VERSION; no record a person read as wrong is credited; on every math source the scorer agrees with
the person at least as often as math-verify does."""

from __future__ import annotations

import re
from pathlib import Path

import answer_corpus
import pytest
from answer_corpus import (
    CORPUS,
    INTENDED,
    KINDS,
    all_records,
    counted,
    differences,
    intended_changes,
    pinned,
    records_of,
    source_files,
    unpinned_changes,
    verdicts_of,
    version_key,
)
from reference_scorers import math_verify

from ocllm.scoring import SCORER_VERSION

FILES = [path for kind in KINDS for path in source_files(kind)]
MATH_FILES = source_files("math")
# Held out on purpose (issue 40): these sources check the scorer from outside and are never in the corpus.
OFF_LIMITS = (
    "gpt-oss", "qwen2.5-math", "macklinhrw/llm-reasoning", "shreyshahi/gsm8k-evals", "w1c2j3/gsm8k_rwkv",
    "sieu-n/llm-math-benchmark", "tcc-inatel-2025/poe-evaluation",
)  # fmt: skip


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.stem}" for p in paths]


def test_the_corpus_is_what_its_readme_says() -> None:
    records = all_records()
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    assert len({r["id"] for r in records}) == len(records), "record ids repeat"
    for path in FILES:
        assert f"| {path.stem} |" in readme, f"{path.stem} has no row in tests/data/answers/README.md"
    for record in records:
        assert record["source"] == _ids([_file_of(record)])[0].split("/", 1)[1]
        assert isinstance(record["verdict"], bool) and isinstance(record["why"], str) and record["why"].strip()
        assert isinstance(record["gold"], str) and record["gold"].strip()
        if record["kind"] == "mcq":
            assert record["verdict"] == (record["answer"] == record["gold"]), record["id"]
    for row in readme.splitlines():
        if row.startswith("| ") and not row.startswith("| source"):
            assert not any(name in row.lower() for name in OFF_LIMITS), f"an off-limits source: {row}"
    assert not [r["id"] for r in records if any(name in r["model"].lower() for name in OFF_LIMITS)]


def test_the_corpus_is_as_broad_as_issue_40_asks() -> None:
    math = [r for r in all_records() if r["kind"] == "math" and counted(r)]
    mcq = [r for r in all_records() if r["kind"] == "mcq" and counted(r)]
    assert len(math) >= 2000 and len(mcq) >= 1000
    assert len({r["family"] for r in math}) >= 12, sorted({r["family"] for r in math})
    assert len({r["harness"] for r in math}) >= 6, sorted({r["harness"] for r in math})


def _file_of(record: dict[str, object]) -> Path:
    return CORPUS / str(record["kind"]) / f"{record['source']}.jsonl"


# --- the gate ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_every_verdict_is_the_pinned_one_or_a_listed_change(path: Path) -> None:
    _, pins = pinned()
    listed = unpinned_changes()
    unpinned = [i for i in verdicts_of(path) if i not in pins]
    assert not unpinned, f"{len(unpinned)} records have no pinned verdict (new to the corpus?): `make scorer-pin`"
    unlisted = {
        record_id: change
        for record_id, change in differences(path).items()
        if record_id not in listed or (listed[record_id].old, listed[record_id].new) != change
    }
    assert not unlisted, (
        f"verdicts changed without a line in {INTENDED.name} for {SCORER_VERSION} (record, old -> new): {unlisted}; "
        "`make scorer-diff` shows what each change does against the person's verdicts"
    )
    stale = [c.record for c in listed.values() if c.record in verdicts_of(path) and c.record not in differences(path)]
    assert not stale, f"listed changes that no longer happen: {stale}"


def test_the_gate_sees_a_verdict_that_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate itself: one pinned verdict flipped is a difference, unlisted, and `make scorer-pin` refuses it."""
    version, pins = pinned()
    path = FILES[0]
    record_id, verdict = next(iter(verdicts_of(path).items()))
    monkeypatch.setattr(answer_corpus, "pinned", lambda: (version, {**pins, record_id: not verdict}))
    assert answer_corpus.differences(path) == {record_id: (not verdict, verdict)}
    assert [p for p in answer_corpus.unlisted() if p.startswith(f"{record_id}:")]


def test_listed_changes_move_the_version_and_say_why() -> None:
    version, pins = pinned()
    changes = intended_changes()
    for change in changes:
        assert change.why.strip(), f"{change.record}: a listed change needs its reason"
        assert change.record in pins, f"{change.record} is listed but is no record of the corpus"
        assert version_key(change.version) <= version_key(SCORER_VERSION), f"{change.record}: a future version"
    for change in unpinned_changes().values():
        assert change.version == SCORER_VERSION, (
            f"{change.record} is listed for {change.version}, neither the pinned {version} nor the current "
            f"{SCORER_VERSION}: pin each release (`make scorer-pin`) before the next begins"
        )
    assert version_key(SCORER_VERSION) >= version_key(version)
    assert len({(c.record, c.version) for c in changes}) == len(changes), "a change listed twice"


# --- against the person's reading --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_no_answer_a_person_read_as_wrong_is_credited(path: Path) -> None:
    now = verdicts_of(path)
    false_credit = [r["id"] for r in records_of(path) if counted(r) and now[r["id"]] is True and not r["verdict"]]
    assert false_credit == []


@pytest.mark.parametrize("path", MATH_FILES, ids=_ids(MATH_FILES))
def test_the_scorer_agrees_with_the_person_at_least_as_often_as_math_verify(path: Path) -> None:
    now = verdicts_of(path)
    rows = [r for r in records_of(path) if counted(r)]
    ours = [r["id"] for r in rows if (now[r["id"]] is True) != r["verdict"]]
    theirs = [r["id"] for r in rows if math_verify(r) != r["verdict"]]
    assert len(ours) <= len(theirs), f"ocllm misreads {ours}; math-verify misreads {theirs}"


# The reader's words for an answer naming several letters as right at once ("ends 'the answer is A, B, C, and E.':
# several letters"; "'The correct statements are (D) and (J).' - two letters at once").
_SEVERAL_READ = re.compile(r"several letters|two letters", re.IGNORECASE)


def test_several_letters_declared_correct_are_never_credited() -> None:
    """Issue 40: an answer naming several letters as right at once is no answer to a one-letter question, whatever
    letter it names last (`the answer is A, B, C, and E.` where E is the gold). Every such record a person read in the
    corpus is found by the reader's own words."""
    mcq = [r for r in all_records() if r["kind"] == "mcq"]
    several = [r for r in mcq if r["answer"] is None and _SEVERAL_READ.search(r["why"])]
    assert len(several) >= 3, "the corpus lost its multi-answer records"
    credited = [r["id"] for r in several if verdicts_of(_file_of(r))[r["id"]] is not False]
    assert credited == []
