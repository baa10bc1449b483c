"""The math scorer against a person's reading of real published outputs (tests/data/math_dev, docs/scoring/math.md
"How the math rules were checked on real output"): no false credit on any record, and on every source at least
as many verdicts agreeing with the person's as math-verify alone, run on the same records, gets.

`python tests/test_math_devset.py` prints the table docs/scoring/math.md quotes.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring.math import decide_math
from ocllm.scoring.math.fields import MathTask

DEVSET = Path(__file__).parent / "data" / "math_dev"
FILES = ("gsm8k.jsonl", "math.jsonl")


class Verdicts(NamedTuple):
    record: dict[str, Any]
    ocllm: bool
    math_verify: bool


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for name in FILES for line in (DEVSET / name).read_text(encoding="utf-8").splitlines()]


def ocllm_credits(record: dict[str, Any]) -> bool:
    task = MathTask(id=record["id"], question=record["question"], answer=record["gold"])
    sample = Sample(
        task_id=record["id"], content=record["content"], reasoning=record["reasoning"],
        finish_reason=record["finish_reason"],
    )  # fmt: skip
    return decide_math(task, sample, Policy()).correct is True


def math_verify_credits(record: dict[str, Any]) -> bool:
    """math-verify as its README shows it: the gold parsed as math, the whole response parsed with the default
    extraction, then verify (gold first)."""
    from math_verify import parse, verify

    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    gold = parse(f"${record['gold']}$")
    answer = parse(record["content"] or "")
    return bool(gold and answer and verify(gold, answer))


@cache
def measured() -> tuple[Verdicts, ...]:
    return tuple(Verdicts(r, ocllm_credits(r), math_verify_credits(r)) for r in records())


def by_source() -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for v in measured():
        row = table[v.record["source"]]
        human = v.record["verdict"]
        row["records"] += 1
        row["right"] += human
        row["ocllm_agrees"] += v.ocllm == human
        row["math_verify_agrees"] += v.math_verify == human
        row["ocllm_false_credit"] += v.ocllm and not human
        row["math_verify_false_credit"] += v.math_verify and not human
    return table


def test_the_development_set_is_what_its_manifests_say() -> None:
    rows = records()
    assert len(rows) >= 300
    assert len({r["id"] for r in rows}) == len(rows)
    manifests = (DEVSET / "MANIFEST.md").read_text(encoding="utf-8")
    for source in {r["source"] for r in rows}:
        assert f"| {source} |" in manifests, f"{source} has no row in MANIFEST.md"
    assert all(isinstance(r["verdict"], bool) and r["gold"] for r in rows)
    assert not [r["id"] for r in rows if "gpt-oss" in r["model"].lower()], "gpt-oss outputs are held out"


@pytest.mark.slow  # every real output through the symbolic step
def test_no_false_credit_on_any_real_output() -> None:
    wrong = [v.record["id"] for v in measured() if v.ocllm and not v.record["verdict"]]
    assert wrong == []


@pytest.mark.parametrize("source", sorted({r["source"] for r in records()}))
def test_ocllm_agrees_with_the_person_at_least_as_often_as_math_verify(source: str) -> None:
    row = by_source()[source]
    missed = [v.record["id"] for v in measured() if v.record["source"] == source and v.ocllm != v.record["verdict"]]
    assert row["ocllm_agrees"] >= row["math_verify_agrees"], f"ocllm misses {missed}"


def table() -> str:
    lines = [
        "| source | records | right (person) | ocllm agrees | math-verify agrees | ocllm false credit "
        "| math-verify false credit |",
        "|---|---|---|---|---|---|---|",
    ]
    totals: dict[str, int] = defaultdict(int)
    for source, row in sorted(by_source().items()):
        lines.append(
            f"| {source} | {row['records']} | {row['right']} | {row['ocllm_agrees']} | {row['math_verify_agrees']} "
            f"| {row['ocllm_false_credit']} | {row['math_verify_false_credit']} |"
        )
        for key, value in row.items():
            totals[key] += value
    lines.append(
        f"| **all** | {totals['records']} | {totals['right']} | {totals['ocllm_agrees']} | "
        f"{totals['math_verify_agrees']} | {totals['ocllm_false_credit']} | {totals['math_verify_false_credit']} |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
    for v in measured():
        if v.ocllm != v.record["verdict"]:
            print(f"ocllm {'credits' if v.ocllm else 'misses'} {v.record['id']} (math-verify: {v.math_verify})")
