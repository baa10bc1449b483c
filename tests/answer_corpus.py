"""The pinned answer corpus (tests/data/answers, docs/scoring.md "The pinned answer corpus"): real published model
answers, each verdict decided by a person reading it, and the scorer's own verdict on each at the pinned version.

Three files hold the discipline:
- `math/*.jsonl`, `mcq/*.jsonl`: the records and the person's verdicts (README.md says where each came from);
- `pinned.jsonl`: the scorer's verdict on every record at one SCORER_VERSION (its first line names the version);
- `intended_changes.jsonl`: every verdict a release changed on purpose (record, old, new, version, why).

The gate (tests/test_answer_corpus.py): the scorer's verdicts now differ from the pinned ones exactly where
intended_changes lists a change for the current SCORER_VERSION, and that version is not the pinned one.

    python tests/answer_corpus.py diff   # make scorer-diff: fixed / broken / unchanged per source, and the peers
    python tests/answer_corpus.py pin    # make scorer-pin: the current verdicts become the pinned ones
    python tests/answer_corpus.py misses [SOURCE ...]  # every record where the scorer and the person disagree
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from reference_scorers import MATH_REFERENCES, MCQ_REFERENCES

from ocllm.models import Policy, Sample
from ocllm.scoring import SCORER_VERSION, decide
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.mcq.fields import McqTask

CORPUS = Path(__file__).parent / "data" / "answers"
KINDS = ("math", "mcq")
PINNED = CORPUS / "pinned.jsonl"
INTENDED = CORPUS / "intended_changes.jsonl"

Verdict = bool | None  # the scorer's `correct`: True, False, or None (not scored)


class Change(NamedTuple):
    record: str
    old: Verdict
    new: Verdict
    version: str
    why: str


# --- the records ------------------------------------------------------------------------------------------------


def source_files(kind: str) -> list[Path]:
    return sorted((CORPUS / kind).glob("*.jsonl"))


@cache
def records_of(path: Path) -> tuple[dict[str, Any], ...]:
    kind = path.parent.name
    return tuple({**json.loads(line), "kind": kind} for line in path.read_text(encoding="utf-8").split("\n") if line)


def all_records() -> list[dict[str, Any]]:
    return [r for kind in KINDS for path in source_files(kind) for r in records_of(path)]


def counted(record: dict[str, Any]) -> bool:
    """Whether the person's verdict counts in the figures: unsure records are kept, and left out."""
    return not record.get("unsure", False)


# --- the scorer's verdict ---------------------------------------------------------------------------------------


def ocllm_verdict(record: dict[str, Any]) -> Verdict:
    """The scorer's `correct` on one record, under the default policy."""
    sample = Sample(
        task_id=record["id"], content=record["content"], reasoning=record.get("reasoning"),
        finish_reason=record.get("finish_reason"),
    )  # fmt: skip
    task: MathTask | McqTask
    if record["kind"] == "math":
        task = MathTask(id=record["id"], question=record["question"], answer=record["gold"])
    else:
        task = McqTask(id=record["id"], question=record["question"], options=record["options"], answer=record["gold"])
    return decide(task, sample, Policy()).correct


@cache
def verdicts_of(path: Path) -> dict[str, Verdict]:
    return {r["id"]: ocllm_verdict(r) for r in records_of(path)}


# --- the pinned verdicts and the listed changes -----------------------------------------------------------------


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@cache
def pinned() -> tuple[str, dict[str, Verdict]]:
    """The pinned version and the scorer's verdict on every record at that version (none before the first pin)."""
    if not PINNED.exists():
        return "0.0.0", {}
    lines = [json.loads(line) for line in PINNED.read_text(encoding="utf-8").split("\n") if line]
    header, rows = lines[0], lines[1:]
    return header["scorer_version"], {row["id"]: row["ocllm"] for row in rows}


@cache
def intended_changes() -> tuple[Change, ...]:
    if not INTENDED.exists():
        return ()
    rows = [json.loads(line) for line in INTENDED.read_text(encoding="utf-8").split("\n") if line]
    return tuple(Change(r["record"], r["old"], r["new"], r["version"], r["why"]) for r in rows)


def unpinned_changes() -> dict[str, Change]:
    """The changes listed for releases after the pinned one, by record: what the verdicts may differ by now."""
    version, _ = pinned()
    return {c.record: c for c in intended_changes() if version_key(c.version) > version_key(version)}


def differences(path: Path) -> dict[str, tuple[Verdict, Verdict]]:
    """Every record of one source file whose verdict now differs from the pinned one: id -> (pinned, now)."""
    _, pins = pinned()
    now = verdicts_of(path)
    return {i: (pins.get(i), v) for i, v in now.items() if i not in pins or pins[i] != v}


def previous_verdicts() -> dict[str, Verdict]:
    """The verdicts of the release before this one: the pinned ones, with the changes listed for the current
    version undone when the current version is already pinned."""
    version, pins = pinned()
    previous = dict(pins)
    if version == SCORER_VERSION:
        for change in intended_changes():
            if change.version == SCORER_VERSION:
                previous[change.record] = change.old
    return previous


# --- make scorer-diff ---------------------------------------------------------------------------------------------


def _credited(verdict: Verdict) -> bool:
    return verdict is True


def diff_table(records: Iterable[dict[str, Any]]) -> str:
    """Per source: the person's right answers, the scorer now and before against the person (agrees, false credit,
    fixed, broken, unchanged), and each peer that scores the source's kind."""
    previous = previous_verdicts()
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_source[record["source"]].append(record)
    head = (
        f"| source | kind | records (counted) | right | ocllm {SCORER_VERSION} agrees | false credit | fixed | broken "
        "| unchanged | peers agree (false credit) |"
    )
    lines = [head, "|" + "---|" * 10]
    totals: Counter[str] = Counter()
    for source, rows in sorted(by_source.items()):
        row = _source_row(rows, previous)
        totals.update({k: v for k, v in row.items() if isinstance(v, int)})
        peers = "; ".join(f"{name} {agree}/{n} ({false})" for name, (agree, n, false) in row["peers"].items())
        lines.append(
            f"| {source} | {rows[0]['kind']} | {len(rows)} ({row['n']}) | {row['right']} | {row['agrees']} "
            f"| {row['false_credit']} | {row['fixed']} | {row['broken']} | {row['unchanged']} | {peers} |"
        )
    lines.append(
        f"| **all** | | {totals['records']} ({totals['n']}) | {totals['right']} | {totals['agrees']} "
        f"| {totals['false_credit']} | {totals['fixed']} | {totals['broken']} | {totals['unchanged']} | |"
    )
    return "\n".join(lines)


def peer_table(records: Iterable[dict[str, Any]]) -> str:
    """Per peer and kind: on the records it scores, how often it and ocllm agree with the person, and false credit."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for record in records:
        if not counted(record):
            continue
        for name, score in references(record["kind"]).items():
            theirs = score(record)
            if theirs is None:
                continue
            row = counts[(name, record["kind"])]
            ours = _credited(verdicts_of(_path_of(record))[record["id"]])
            row["n"] += 1
            row["ocllm_agrees"] += ours == record["verdict"]
            row["peer_agrees"] += theirs == record["verdict"]
            row["ocllm_false_credit"] += ours and not record["verdict"]
            row["peer_false_credit"] += theirs and not record["verdict"]
            row["peer_only"] += theirs == record["verdict"] and ours != record["verdict"]
            row["ocllm_only"] += ours == record["verdict"] and theirs != record["verdict"]
    lines = [
        "| peer | kind | records it scores | ocllm agrees | peer agrees | ocllm false credit | peer false credit "
        "| only ocllm right | only the peer right |",
        "|" + "---|" * 9,
    ]
    for (name, kind), row in sorted(counts.items()):
        lines.append(
            f"| {name} | {kind} | {row['n']} | {row['ocllm_agrees']} | {row['peer_agrees']} | "
            f"{row['ocllm_false_credit']} | {row['peer_false_credit']} | {row['ocllm_only']} | {row['peer_only']} |"
        )
    return "\n".join(lines)


def references(kind: str) -> dict[str, Callable[[dict[str, Any]], bool | None]]:
    return dict(MATH_REFERENCES if kind == "math" else MCQ_REFERENCES)


def _path_of(record: dict[str, Any]) -> Path:
    return CORPUS / record["kind"] / f"{record['source']}.jsonl"


def _source_row(rows: list[dict[str, Any]], previous: dict[str, Verdict]) -> dict[str, Any]:
    now = verdicts_of(_path_of(rows[0]))
    row: dict[str, Any] = Counter(records=len(rows))
    peers: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for record in rows:
        if not counted(record):
            continue
        truth, ours, before = record["verdict"], _credited(now[record["id"]]), _credited(previous.get(record["id"]))
        row["n"] += 1
        row["right"] += truth
        row["agrees"] += ours == truth
        row["false_credit"] += ours and not truth
        row["fixed"] += ours == truth and before != truth
        row["broken"] += ours != truth and before == truth
        row["unchanged"] += ours == before
        for name, score in references(record["kind"]).items():
            theirs = score(record)
            if theirs is not None:
                tally = peers[name]
                tally[0] += theirs == truth
                tally[1] += 1
                tally[2] += theirs and not truth
    row["peers"] = {name: tuple(tally) for name, tally in peers.items()}
    return row


# --- make scorer-pin ----------------------------------------------------------------------------------------------


def unlisted() -> list[str]:
    """The differences from the pinned verdicts that intended_changes.jsonl does not list for this release (a record
    new to the corpus has no pinned verdict and needs none listed), and why each cannot be pinned."""
    version, pins = pinned()
    listed = unpinned_changes()
    problems = []
    for kind in KINDS:
        for path in source_files(kind):
            for record_id, (old, new) in differences(path).items():
                change = listed.get(record_id)
                if record_id not in pins:
                    continue
                if change is None or (change.old, change.new) != (old, new) or change.version != SCORER_VERSION:
                    problems.append(f"{record_id}: {old} -> {new} is not listed for {SCORER_VERSION}")
    if problems and version_key(SCORER_VERSION) <= version_key(version):
        problems.append(f"SCORER_VERSION {SCORER_VERSION} has not moved past the pinned {version}")
    return problems


def write_pinned() -> int:
    """The current verdicts of every record become the pinned ones, at the current SCORER_VERSION."""
    lines = [json.dumps({"scorer_version": SCORER_VERSION})]
    count = 0
    for kind in KINDS:
        for path in source_files(kind):
            for record_id, verdict in verdicts_of(path).items():
                lines.append(json.dumps({"id": record_id, "ocllm": verdict}, ensure_ascii=False))
                count += 1
    with tempfile.NamedTemporaryFile("w", dir=CORPUS, delete=False, encoding="utf-8", suffix=".tmp") as out:
        out.write("\n".join(lines) + "\n")
    os.replace(out.name, PINNED)
    return count


def main(argv: list[str]) -> int:
    if argv == ["diff"]:
        records = all_records()
        version, _ = pinned()
        print(f"ocllm {SCORER_VERSION} against the person's verdicts; 'fixed'/'broken' against the previous release's")
        undone = ", changes of this release undone" if version == SCORER_VERSION else ""
        print(f"verdicts (pinned at {version}{undone})")
        print()
        print(diff_table(records))
        print()
        print(peer_table(records))
        return 0
    if argv[:1] == ["misses"]:
        for record in all_records():
            if counted(record) and (not argv[1:] or record["source"] in argv[1:]):
                ours = verdicts_of(_path_of(record))[record["id"]]
                if (ours is True) != record["verdict"]:
                    print(f"{record['id']}: ocllm {ours}, the person {record['verdict']} ({record['why']})")
        return 0
    if argv == ["pin"]:
        if problems := unlisted():
            print("not pinned: list each change in intended_changes.jsonl first:", *problems, sep="\n  ")
            return 1
        print(f"pinned {write_pinned()} verdicts at scorer {SCORER_VERSION} in {PINNED}")
        return 0
    print("usage: python tests/answer_corpus.py diff | pin | misses [SOURCE ...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
