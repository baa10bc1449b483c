"""Issue 40, item 4: null for what was not measured, in every document. The pages say n/a for a figure of nothing
(test_nothing_measured.py); here every JSON document ocllm writes for the same cases is read, and every numeric field
of it walked: a comparison with no paired task, one with a single paired task (one sample per task, and several,
where an interval or a test needs two tasks), a lane whose every request failed (its run, a merge of its shards, a
rescore, a matrix) and a category with nothing scored. A figure of nothing must be null, never 0, 1 or the whole
range."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers import quiet
from test_engine import DictEngine
from test_nothing_measured import run_dir

from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane
from ocllm.run.shards import Shard

IDS = [f"t{i}" for i in range(6)]

# The figures of a comparison (documents.Paired): each a measurement of the paired tasks, none of them a count.
PAIRED_FIGURES = (
    "a_accuracy", "b_accuracy", "a_ci_low", "a_ci_high", "b_ci_low", "b_ci_high", "mcnemar_p", "p_value", "diff",
    "diff_ci_low", "diff_ci_high", "diff_stderr", "diff_stderr_category", "minimum_detectable_effect",
)  # fmt: skip
# What needs two paired tasks: a spread (and the smallest difference it could detect); with repeated samples, the
# intervals and the test too (one task's samples say nothing of other tasks).
NEEDS_TWO_TASKS = ("diff_stderr", "minimum_detectable_effect")
NEEDS_TWO_SAMPLED = ("a_ci_low", "a_ci_high", "b_ci_low", "b_ci_high", "diff_ci_low", "diff_ci_high", "p_value")
# The figures of one scope (documents.Figures, Estimate): of its scored tasks.
SCOPE_FIGURES = (
    "accuracy", "ci_low", "ci_high", "accuracy_stderr", "accuracy_stderr_category", "pass_at_k", "majority_at_k",
)  # fmt: skip


def numbers(value: Any, path: str = "$") -> Iterator[tuple[str, float]]:
    """Every number held anywhere in `value` (dicts and lists, recursively), with its JSON path."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from numbers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from numbers(item, f"{path}[{i}]")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, value


def unmeasured(node: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys of this object that hold a figure of nothing, by what the object itself says it measured."""
    keys: tuple[str, ...] = ()
    n_paired = node.get("n_paired")
    if isinstance(n_paired, int) and not isinstance(n_paired, bool):
        sampled = (
            node.get("test", "exact McNemar") != "exact McNemar"
            or max(node.get("samples_per_task_a", 1), node.get("samples_per_task_b", 1)) > 1
        )
        if n_paired == 0:
            keys += PAIRED_FIGURES
        elif n_paired == 1:
            keys += NEEDS_TWO_TASKS + (NEEDS_TWO_SAMPLED if sampled else ())
    scored = node.get("scored")
    if isinstance(scored, int) and not isinstance(scored, bool) and "accuracy" in node:
        tasks = node.get("tasks_scored", scored)
        if scored == 0:
            keys += SCOPE_FIGURES
        elif tasks < 2:
            keys += ("accuracy_stderr",) + (("ci_low", "ci_high") if node.get("samples_per_task", 1) > 1 else ())
    if node.get("categories") in (0, 1):
        keys += ("accuracy_stderr_category", "diff_stderr_category")
    return keys


def figures_of_nothing(document: Any, path: str = "$") -> list[str]:
    """The JSON path of every number the document holds where nothing was measured (empty: none)."""
    found: list[str] = []
    if isinstance(document, Mapping):
        for key in unmeasured(document):
            found += [where for where, _ in numbers(document.get(key), f"{path}.{key}")]
        for key, item in document.items():
            found += figures_of_nothing(item, f"{path}.{key}")
    elif isinstance(document, list):
        for i, item in enumerate(document):
            found += figures_of_nothing(item, f"{path}[{i}]")
    return found


def scopes(document: Any) -> Iterator[Mapping[str, Any]]:
    """Every object of the document (to show the cases were there to be read)."""
    if isinstance(document, Mapping):
        yield document
        for item in document.values():
            yield from scopes(item)
    elif isinstance(document, list):
        for item in document:
            yield from scopes(item)


def sampled_run_dir(folder: Path, lane: str, answers: dict[str, list[str | None]]) -> Path:
    """A run directory of several samples per task (`sample` i of each), written by hand as `run_dir` writes one."""
    run_dir(folder, lane, "mcq6", dict.fromkeys(answers, "FINAL: B"))
    samples = [
        {"task_id": task_id, "sample": i, "content": content, "finish_reason": "stop"}
        if content is not None
        else {"task_id": task_id, "sample": i, "error": "HTTP 500 after 4 attempts", "error_kind": "http_status"}
        for task_id, contents in answers.items()
        for i, content in enumerate(contents)
    ]
    (folder / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["lane"]["samples_per_task"] = max(len(contents) for contents in answers.values())
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def failed_run(tmp_path: Path, name: str, shard: Shard | None = None) -> Path:
    """`ocllm run`'s own path (runner.run_lane, scored into metrics.json as the CLI scores it) through an engine that
    refuses every request: a lane with nothing scored, as a server that fails them all leaves it."""
    suite = tmp_path / "suite.jsonl"
    if not suite.exists():
        lines = [{"id": i, "type": "mcq", "question": f"q {i}", "options": ["3", "4", "5", "6"], "answer": "B",
                  "category": "c"} for i in IDS]  # fmt: skip
        suite.write_text("".join(json.dumps(line) + "\n" for line in lines))
    lane = Lane(name="failed", base_url="http://127.0.0.1:9/v1", model="dict-model", suite=str(suite))
    out = tmp_path / name
    run_lane(lane, out, progress=quiet, engine=DictEngine({}), score=score_run_dir, shard=shard)
    return out


@pytest.fixture()
def documents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """Every JSON document ocllm writes for the cases, by name."""
    good = run_dir(tmp_path / "m" / "A_good", "A_good", "mcq6", dict.fromkeys(IDS, "FINAL: B") | {"t5": "FINAL: C"})
    failed = run_dir(tmp_path / "m" / "B_failed", "B_failed", "mcq6", dict.fromkeys(IDS))
    one = run_dir(tmp_path / "one" / "D_one", "D_one", "mcq6", {"t0": "FINAL: A", **dict.fromkeys(IDS[1:])})
    # A lane with a category of its own whose every request failed, beside one that was scored.
    half = run_dir(tmp_path / "half", "E_half", "mcq6", {"t0": "FINAL: B", "t1": None})
    suite = [json.loads(line) for line in (half / "suite.jsonl").read_text().splitlines()]
    suite[1]["category"] = "d"
    (half / "suite.jsonl").write_text("".join(json.dumps(t) + "\n" for t in suite))
    # One paired task asked three times on each side: shares and their difference, but no interval and no test.
    s_a = sampled_run_dir(tmp_path / "s" / "F_a", "F_a", {"t0": ["FINAL: B", "FINAL: B", "FINAL: C"], "t1": [None] * 3})
    s_b = sampled_run_dir(tmp_path / "s" / "G_b", "G_b", {"t0": ["FINAL: B", "FINAL: C", "FINAL: C"], "t1": [None] * 3})

    run = failed_run(tmp_path, "run")
    shards = [failed_run(tmp_path, f"shard{k}", Shard(k, 2)) for k in range(2)]
    commands = {
        "compare_nothing_paired": ["compare", str(good), str(failed), "-o", str(tmp_path / "c0")],
        "compare_one_task": ["compare", str(good), str(one), "-o", str(tmp_path / "c1")],
        "compare_one_sampled_task": ["compare", str(s_a), str(s_b), "-o", str(tmp_path / "cs")],
        "compare_failed_runs": ["compare", str(run), str(failed), "-o", str(tmp_path / "cr")],
        "matrix": ["matrix-report", str(tmp_path / "m"), "--baseline", "A_good", "-o", str(tmp_path / "mr")],
        "matrix_sampled": ["matrix-report", str(tmp_path / "s"), "--baseline", "F_a", "-o", str(tmp_path / "ms")],
        "rescore_failed": ["rescore", str(failed), "-o", str(tmp_path / "rescored.json")],
        "rescore_half": ["rescore", str(half), "-o", str(tmp_path / "half.json")],
        "rescore_sampled": ["rescore", str(s_a), "-o", str(tmp_path / "sampled.json")],
        "rescore_run": ["rescore", str(run / "metrics.json"), "-o", str(tmp_path / "again.json")],
        "merge": ["merge", *map(str, shards), "-o", str(tmp_path / "merged")],
        # Readers of a metrics.json with nulls: its report (pages only) and a comparison of it.
        "report_merged": ["report", str(tmp_path / "merged" / "metrics.json"), "-o", str(tmp_path / "report")],
        "compare_merged": ["compare", str(tmp_path / "merged" / "metrics.json"), str(run), "-o", str(tmp_path / "cm")],
    }
    for name, argv in commands.items():
        assert main(argv) in (0, 1), name  # 1: a run with failed requests, said so
    capsys.readouterr()
    written = {
        "compare_nothing_paired": tmp_path / "c0" / "comparison.json",
        "compare_one_task": tmp_path / "c1" / "comparison.json",
        "compare_one_sampled_task": tmp_path / "cs" / "comparison.json",
        "compare_failed_runs": tmp_path / "cr" / "comparison.json",
        "compare_merged": tmp_path / "cm" / "comparison.json",
        "matrix": tmp_path / "mr" / "matrix.json",
        "matrix_sampled": tmp_path / "ms" / "matrix.json",
        "rescore_failed": tmp_path / "rescored.json",
        "rescore_half": tmp_path / "half.json",
        "rescore_sampled": tmp_path / "sampled.json",
        "rescore_run": tmp_path / "again.json",
        "run_metrics": run / "metrics.json",
        "run_manifest": run / "manifest.json",
        "merge_metrics": tmp_path / "merged" / "metrics.json",
        "merge_manifest": tmp_path / "merged" / "manifest.json",
    }
    return {name: json.loads(path.read_text()) for name, path in written.items()}


def test_no_document_holds_a_figure_of_nothing(documents: dict[str, Any]) -> None:
    offending = {name: found for name, doc in documents.items() if (found := figures_of_nothing(doc))}
    assert not offending, offending


def test_the_cases_are_in_the_documents(documents: dict[str, Any]) -> None:
    """The walk above found nothing because the figures are null, not because the cases were missing."""
    nothing = documents["compare_nothing_paired"]
    assert (nothing["n_paired"], nothing["p_value"], nothing["diff"], nothing["diff_ci_low"]) == (0, None, None, None)
    one = documents["compare_one_task"]
    assert one["n_paired"] == 1 and one["diff"] == -1.0 and one["diff_ci_high"] == pytest.approx(0.95, abs=1e-9)
    sampled = documents["compare_one_sampled_task"]
    assert (sampled["n_paired"], sampled["samples_per_task_a"]) == (1, 3)
    assert sampled["diff"] == pytest.approx(-1 / 3) and sampled["diff_ci_low"] is None and sampled["p_value"] is None
    assert (sampled["a_accuracy"], sampled["a_ci_low"]) == (pytest.approx(2 / 3), None)
    for name in ("run_metrics", "merge_metrics", "rescore_failed", "rescore_run"):
        summary = documents[name]["summary"]
        assert (summary["scored"], summary["errors"], summary["accuracy"]) == (0, 6, None), name
        assert all(c["accuracy"] is None for c in summary["by_category"].values()), name
    half = documents["rescore_half"]["summary"]
    assert half["accuracy"] == 1.0 and half["by_category"]["d"] == half["by_category"]["d"] | {"scored": 0}
    assert half["by_category"]["d"]["accuracy"] is None
    lanes = {lane["label"]: lane for lane in documents["matrix"]["lanes"]}
    assert (lanes["B_failed"]["accuracy"], lanes["B_failed"]["ci_low"], lanes["B_failed"]["ci_high"]) == (None,) * 3
    assert all(scope.get("n_paired") != 0 or scope["p_value"] is None for scope in scopes(documents["matrix"]))
    sampled_lane = documents["matrix_sampled"]["lanes"][0]
    assert sampled_lane["tasks_scored"] == 1 and (sampled_lane["ci_low"], sampled_lane["ci_high"]) == (None, None)


def test_the_walk_finds_a_figure_of_nothing() -> None:
    """The walk itself: the comparison.json issue 40 saw (0 paired, p 1.0, diff 0.0, the interval -1 to 1) is caught,
    each field by its path, as is an accuracy of 0 of 0 in a category."""
    old = {"n_paired": 0, "p_value": 1.0, "diff": 0.0, "diff_ci_low": -1.0, "diff_ci_high": 1.0, "a_wins": 0,
           "by_category": {"c": {"scored": 0, "accuracy": 0.0, "ci_low": 0.0, "ci_high": 1.0, "total": 3}}}  # fmt: skip
    assert figures_of_nothing(old) == [
        "$.p_value", "$.diff", "$.diff_ci_low", "$.diff_ci_high",
        "$.by_category.c.accuracy", "$.by_category.c.ci_low", "$.by_category.c.ci_high",
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["compare_nothing_paired", "compare_one_sampled_task", "matrix"])
def test_the_pages_read_the_nulls_back(documents: dict[str, Any], name: str, tmp_path: Path) -> None:
    """A document with nulls renders again (report/write.py, as `compare` and `matrix-report` render theirs), n/a
    where the figure is null."""
    from ocllm.report.write import write_comparison, write_matrix_report

    write = write_matrix_report if name.startswith("matrix") else write_comparison
    paths = write(documents[name], tmp_path / name)
    md = next(p for p in paths if p.suffix == ".md").read_text()
    assert "n/a" in md


def test_an_old_metrics_file_s_placeholders_are_read_and_written_as_null(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A metrics.json written before issue 40 holds 0.0 for an accuracy of nothing: `rescore` and `report` read it,
    and what they write says null."""
    run = failed_run(tmp_path, "run")
    old = json.loads((run / "metrics.json").read_text())
    for scope in (old["summary"], *old["summary"]["by_category"].values(), *old["summary"]["by_type"].values()):
        scope["accuracy"] = 0.0
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert main(["rescore", str(tmp_path / "old.json"), "-o", str(tmp_path / "new.json")]) in (0, 1)
    assert main(["report", str(tmp_path / "old.json"), "-o", str(tmp_path / "report")]) in (0, 1)
    capsys.readouterr()
    new = json.loads((tmp_path / "new.json").read_text())
    assert new["summary"]["accuracy"] is None and not figures_of_nothing(new)
    assert "**Accuracy n/a**" in (tmp_path / "report" / "report.md").read_text()
