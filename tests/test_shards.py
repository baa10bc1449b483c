"""Shards and merge (issue 14): `--shard K/N` runs a stable part of the suite; `ocllm merge` joins every shard
into one run directory that reads as an ordinary run and gives the figures an unsharded run gives. Against
the simulator, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ocllm.cli import main
from ocllm.run.shards import shard_of
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import load_suite


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(truncation_rate=0.1)) as server:
        yield server


def run(sim: SimServer, out: Path, *extra: str) -> int:
    return main(
        ["run", "--base-url", sim.base_url, "--model", "sim-baseline", "--suite", "demo", "--out", str(out), *extra]
    )


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_shards_are_a_partition_of_the_suite_by_the_hash_of_the_id(sim: SimServer, tmp_path: Path) -> None:
    suite = load_suite("demo")
    seen: list[str] = []
    for k in range(3):
        assert run(sim, tmp_path / f"s{k}", "--shard", f"{k}/3") in (0, 1)
        ids = [json.loads(line)["id"] for line in (tmp_path / f"s{k}" / "suite.jsonl").read_text().splitlines()]
        assert all(shard_of(i, 3) == k for i in ids)
        shard = read(tmp_path / f"s{k}" / "manifest.json")["shard"]
        assert shard["index"] == k and shard["count"] == 3 and shard["suite_tasks"] == len(suite.tasks)
        assert [suite.tasks[p].id for p in shard["positions"]] == ids
        seen += ids
    assert sorted(seen) == sorted(t.id for t in suite.tasks)


def test_merged_shards_give_the_metrics_of_one_unsharded_run(sim: SimServer, tmp_path: Path) -> None:
    for k in range(3):
        run(sim, tmp_path / f"s{k}", "--shard", f"{k}/3")
    run(sim, tmp_path / "whole")
    merged = tmp_path / "merged"
    assert main(["merge", *(str(tmp_path / f"s{k}") for k in (2, 0, 1)), "-o", str(merged)]) in (0, 1)
    whole, joined = read(tmp_path / "whole" / "metrics.json"), read(merged / "metrics.json")
    # The figures, not the timing (how fast each was served differs from run to run).
    assert {**joined["summary"], "serving": None} == {**whole["summary"], "serving": None}
    shard_walls = sum(read(tmp_path / f"s{k}" / "manifest.json")["wall_s"] for k in range(3))
    assert joined["summary"]["serving"]["wall_s"] == round(shard_walls, 3)  # machine time, summed
    decided = {t["task_id"]: (t["correct"], t["extracted_final_answer"], t["rule"]) for t in whole["tasks"]}
    assert {t["task_id"]: (t["correct"], t["extracted_final_answer"], t["rule"]) for t in joined["tasks"]} == decided
    # The merged suite is the whole suite, in its order: the same bytes as the unsharded run's copy.
    assert (merged / "suite.jsonl").read_bytes() == (tmp_path / "whole" / "suite.jsonl").read_bytes()
    manifest = read(merged / "manifest.json")
    assert manifest["shard"] is None and len(manifest["merged_from"]) == 3
    assert manifest["requests"] == sum(read(tmp_path / f"s{k}" / "manifest.json")["requests"] for k in range(3))
    # An ordinary run: the other commands read it.
    assert main(["report", str(merged), "-o", str(tmp_path / "report")]) == 0
    assert main(["rescore", str(merged), "-o", str(tmp_path / "again.json")]) == 0
    assert read(tmp_path / "again.json")["summary"]["correct"] == whole["summary"]["correct"]


def refused(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and message in err[0], err


def test_merge_refuses_shards_that_do_not_belong_together(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in range(2):
        run(sim, tmp_path / f"s{k}", "--shard", f"{k}/2")
    run(sim, tmp_path / "hot1", "--shard", "1/2", "--max-tokens", "100")
    run(sim, tmp_path / "third", "--shard", "0/3")
    run(sim, tmp_path / "whole")
    out = str(tmp_path / "m")
    s0, s1 = str(tmp_path / "s0"), str(tmp_path / "s1")
    capsys.readouterr()
    refused(["merge", s0, str(tmp_path / "hot1"), "-o", out], "lane setting 'max_tokens' is 100", capsys)
    refused(["merge", s0, s0, "-o", out], "shard 0/2 is also", capsys)
    refused(["merge", s0, "-o", out], "shard(s) 1 of 2 missing", capsys)
    refused(["merge", s0, str(tmp_path / "third"), "-o", out], "a shard of 3", capsys)
    refused(["merge", s0, str(tmp_path / "whole"), "-o", out], "not a shard (it ran the whole suite", capsys)
    refused(["merge", s0, s1, "-o", s0], "is one of the shards it merges", capsys)
    assert not Path(out).exists()


@pytest.mark.parametrize(
    ("text", "message"), [("3/3", "K must be 0 to N-1"), ("a/b", "expected K/N"), ("1/0", "K must")]
)
def test_a_bad_shard_is_one_line(text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused(["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--shard", text], message, capsys)


# --- Issue 19, items 5 and 6: a merge replaces only a merge; nothing is written before every input is checked.


def test_a_merge_is_made_again_over_an_earlier_merge_and_a_run_replaced_only_with_force(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = [str(tmp_path / f"s{k}") for k in range(2)]
    for k in range(2):
        run(sim, tmp_path / f"s{k}", "--shard", f"{k}/2")
    merged = tmp_path / "merged"
    code = main(["merge", *shards, "-o", str(merged)])
    first = read(merged / "metrics.json")["summary"]
    assert main(["merge", *shards, "-o", str(merged)]) == code  # a merge there: made again
    assert {**read(merged / "metrics.json")["summary"], "serving": None} == {**first, "serving": None}
    run(sim, tmp_path / "whole")
    (tmp_path / "whole" / "server.log").write_text("the whole run's server\n")
    capsys.readouterr()
    refused(["merge", *shards, "-o", str(tmp_path / "whole")], "holds a run that is not a merge", capsys)
    assert main(["merge", *shards, "-o", str(tmp_path / "whole"), "--force"]) == code
    assert read(tmp_path / "whole" / "manifest.json")["merged_from"] == shards
    assert not (tmp_path / "whole" / "server.log").exists()  # not the log of the merged shards' servers


def test_a_refused_merge_leaves_nothing_so_the_next_try_succeeds(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in range(2):
        run(sim, tmp_path / f"s{k}", "--shard", f"{k}/2")
    manifests = [tmp_path / f"s{k}" / "manifest.json" for k in range(2)]
    kept = [m.read_bytes() for m in manifests]
    for m in manifests:
        manifest = read(m)
        manifest["lane"]["temperature"] = -1.0
        m.write_text(json.dumps(manifest))
    out = tmp_path / "merged"
    capsys.readouterr()
    invalid = "temperature must be at least 0 and at most 10 (got -1.0)"
    refused(["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "-o", str(out)], invalid, capsys)
    assert not out.exists()
    for m, data in zip(manifests, kept, strict=True):
        m.write_bytes(data)
    assert main(["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "-o", str(out)]) in (0, 1)


def test_an_empty_shard_is_refused_before_its_run_folder_is_made(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    refused(
        ["run", "--base-url", sim.base_url, "--model", "sim-baseline", "--suite", "demo",
         "--out", str(tmp_path / "r"), "--shard", "1/99999999999999999999999"],
        "--shard",
        capsys,
    )  # fmt: skip
    assert not (tmp_path / "r").exists()
    # A matrix whose second lane's suite has no task in the shard runs no lane at all.
    demo, smoke = load_suite("demo"), load_suite("smoke")
    count = 40
    index = next(
        k for k in range(count)
        if any(shard_of(t.id, count) == k for t in demo.tasks) and all(shard_of(t.id, count) != k for t in smoke.tasks)
    )  # fmt: skip
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        "".join(
            f'[lanes.{name}]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nsuite = "{suite}"\n'
            for name, suite in (("A", "demo"), ("B", "smoke"))
        )
    )
    refused(
        ["matrix", str(lanes), "--out", str(tmp_path / "m"), "--shard", f"{index}/{count}"],
        f"no task of the suite falls in shard {index}/{count} (the suite 'smoke'",
        capsys,
    )
    assert not (tmp_path / "m").exists()


def edit_manifest(run_dir: Path, **fields: Any) -> None:
    manifest = read(run_dir / "manifest.json")
    for key, value in fields.items():
        if key == "suite_tasks":
            manifest["shard"]["suite_tasks"] = value
        else:
            manifest[key] = value
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_a_merge_sums_the_shards_retries_and_resends(sim: SimServer, tmp_path: Path) -> None:
    for k in range(2):
        run(sim, tmp_path / f"s{k}", "--shard", f"{k}/2")
    edit_manifest(tmp_path / "s0", retries={"HTTP 503": 1}, resends=2)
    edit_manifest(tmp_path / "s1", retries={"HTTP 503": 2, "server disconnected": 1}, resends=0)
    assert main(["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "-o", str(tmp_path / "m")]) in (0, 1)
    manifest = read(tmp_path / "m" / "manifest.json")
    assert (manifest["retries"], manifest["resends"]) == ({"HTTP 503": 3, "server disconnected": 1}, 2)


def test_a_merge_refuses_shards_whose_requests_carried_other_settings_or_another_suite_size(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in range(2):
        run(sim, tmp_path / f"s{k}", "--shard", f"{k}/2")
    args = ["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "-o", str(tmp_path / "m")]
    edit_manifest(tmp_path / "s1", request_settings={"cache_prompt": False})
    capsys.readouterr()
    refused(args, "its requests carried {'cache_prompt': False}, those of", capsys)
    edit_manifest(tmp_path / "s1", request_settings={}, suite_tasks=99)
    refused(args, "a shard of a suite of 99 tasks", capsys)
    assert not (tmp_path / "m").exists()
