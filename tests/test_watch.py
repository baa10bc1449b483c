"""`ocllm watch` (issue 46, item 3): a matrix in flight, read at three moments.

Two lanes are really run against the simulator (whole and as two shards each); the matrices in flight are then laid
out from those runs' own files as the runner writes them: the manifest while running, the suite copy, and
samples.jsonl growing line by line (a torn last line included), then finished (metrics.json and the final manifest).
Two of the samples are replaced by failed requests. At each moment the watch's counts, errors by kind, accuracy and
paired figures are checked against figures this file computes from the lines it wrote and the runs' own decisions
(their metrics.json), never from the code under test."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections import Counter
from pathlib import Path

import msgspec
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from ocllm.analysis.stats import exact_paired_interval
from ocllm.cli import main
from ocllm.models import Sample
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import resolve_suite
from ocllm.watch import cells
from ocllm.watch.figures import Row, Snapshot
from ocllm.watch.loop import Settings, Watcher
from ocllm.watch.tail import SamplesTail

LANES = {"A_base": "sim-baseline", "B_reason": "sim-reasoning"}
TASKS = 59  # the demo suite
# The failed requests written in place of real answers: (lane, line number) -> error kind.
FAILED = {("B_reason", 3): "timeout", ("B_reason", 25): "http_status", ("A_base", 7): "timeout"}
# Lines of samples.jsonl written at the first two moments, per lane (the third writes them all).
MOMENTS = {"A_base": (20, 41), "B_reason": (12, 33)}

Key = tuple[str, int]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The finished runs: OUT/<lane> whole, and OUT/shard-K/<lane>."""
    out = tmp_path_factory.mktemp("real")
    with SimServer(SimConfig(suites=(resolve_suite("demo"),))) as sim:
        for lane, model in LANES.items():
            base = ["run", "--base-url", sim.base_url, "--model", model, "--suite", "demo"]
            assert main([*base, "--out", str(out / "whole" / lane)]) in (0, 1)
            for k in range(2):
                assert main([*base, "--out", str(out / f"shard-{k}" / lane), "--shard", f"{k}/2"]) in (0, 1)
    return {"root": out}


def lines_of(run: Path, lane: str) -> list[bytes]:
    """The run's sample lines, with the ones FAILED names replaced by a failed request of that kind."""
    lines = (run / "samples.jsonl").read_bytes().splitlines(keepends=True)
    for (failed_lane, number), kind in FAILED.items():
        if failed_lane == lane and number < len(lines):
            sample = json.loads(lines[number])
            key = (sample["task_id"], sample.get("sample", 0))
            failed = Sample(task_id=key[0], sample=key[1], error=f"{kind} (test)", error_kind=kind)
            lines[number] = msgspec.json.encode(failed) + b"\n"
    return lines


def decisions(run: Path) -> dict[Key, bool | None]:
    """The run's own decisions (its metrics.json), by (task, sample)."""
    doc = json.loads((run / "metrics.json").read_text())
    return {(t["task_id"], t.get("sample", 0)): t["correct"] for t in doc["tasks"]}


def lay_out(real: Path, dest: Path, lane: str, count: int | None, torn: bool = False) -> list[bytes]:
    """The run `real` as it stands after `count` sample lines (None: finished), at `dest`; the lines written whole."""
    dest.mkdir(parents=True, exist_ok=True)
    lines = lines_of(real, lane)
    manifest = json.loads((real / "manifest.json").read_text())
    if count is not None:
        manifest.update(status="running", finished_at=None, endpoints=None, wall_s=0.0)
        (dest / "metrics.json").unlink(missing_ok=True)
    written = lines if count is None else lines[:count]
    (dest / "suite.jsonl").write_bytes((real / "suite.jsonl").read_bytes())
    (dest / "manifest.json").write_text(json.dumps(manifest))
    tail = lines[count][: len(lines[count]) // 2] if torn and count is not None and count < len(lines) else b""
    (dest / "samples.jsonl").write_bytes(b"".join(written) + tail)
    if count is None:
        shutil.copy(real / "metrics.json", dest / "metrics.json")
    return written


class Expected:
    """The figures of the lines written, from the runs' own decisions."""

    def __init__(self) -> None:
        self.outcome: dict[str, dict[Key, str]] = {}
        self.errors: dict[str, Counter[str]] = {}

    def add(self, lane: str, written: list[bytes], decided: dict[Key, bool | None]) -> None:
        outcomes, errors = self.outcome.setdefault(lane, {}), self.errors.setdefault(lane, Counter())
        for line in written:
            sample = json.loads(line)
            key = (sample["task_id"], sample.get("sample", 0))
            if sample.get("error"):
                outcomes[key] = "error"
                errors[sample["error_kind"]] += 1
            else:
                verdict = decided[key]
                outcomes[key] = "unscored" if verdict is None else "right" if verdict else "wrong"

    def check_lane(self, row: Row, lane: str) -> None:
        outcomes = self.outcome[lane]
        right = sum(o == "right" for o in outcomes.values())
        decided = sum(o in ("right", "wrong") for o in outcomes.values())
        assert row.done == len(outcomes)
        assert (row.right, row.wrong) == (right, decided - right)
        assert row.errors == self.errors[lane]
        low, high = proportion_confint(right, decided, method="wilson")
        assert row.interval is not None and row.accuracy == pytest.approx(right / decided)
        assert row.interval.low == pytest.approx(low, abs=1e-9) and row.interval.high == pytest.approx(high, abs=1e-9)

    def check_paired(self, row: Row, baseline: str, lane: str) -> None:
        base, other = self.outcome[baseline], self.outcome[lane]
        both = [k for k in other if other[k] in ("right", "wrong") and base.get(k) in ("right", "wrong")]
        lane_only = sum(other[k] == "right" and base[k] == "wrong" for k in both)
        base_only = sum(other[k] == "wrong" and base[k] == "right" for k in both)
        paired = row.paired
        assert paired is not None and paired.baseline == baseline
        assert (paired.n, paired.lane_only, paired.baseline_only) == (len(both), lane_only, base_only)
        assert paired.difference == pytest.approx((lane_only - base_only) / len(both))
        assert paired.interval == pytest.approx(exact_paired_interval(base_only, lane_only, len(both)))
        p = binomtest(lane_only, lane_only + base_only, 0.5).pvalue if lane_only + base_only else 1.0
        assert paired.p == pytest.approx(p)


def lane_named(shown: Snapshot, name: str) -> Row:
    return next(lane.row for lane in shown.lanes if lane.row.lane == name)


def watch_once(root: Path, html: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    capsys.readouterr()
    assert main(["watch", str(root), "--once", "--html", str(html), *extra]) == 0
    return capsys.readouterr().out


def test_a_matrix_in_flight_at_three_moments(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    real, root = runs["root"] / "whole", tmp_path / "matrix"
    watcher = Watcher(Settings(root))
    decided = {lane: decisions(real / lane) for lane in LANES}
    html = tmp_path / "watch.html"
    for moment in range(3):
        expected = Expected()
        for lane in LANES:
            count = None if moment == 2 else MOMENTS[lane][moment]
            expected.add(lane, lay_out(real / lane, root / lane, lane, count, torn=moment == 1), decided[lane])
        shown = watcher.read()  # the same watcher: each look reads only what was appended
        assert [lane.row.lane for lane in shown.lanes] == list(LANES) and shown.baseline == "A_base"
        for lane in LANES:
            row = lane_named(shown, lane)
            expected.check_lane(row, lane)
            assert row.total == TASKS
            assert row.status == ("finished" if moment == 2 else "running")
        expected.check_paired(lane_named(shown, "B_reason"), "A_base", "B_reason")
        assert lane_named(shown, "A_base").paired is None
        assert shown.finished == (moment == 2)

        # The command: the same figures, in the terminal and on the page.
        out = watch_once(root, html, capsys)
        page = html.read_text()
        b = lane_named(shown, "B_reason")
        assert b.paired is not None and b.paired.difference is not None
        signed = f"{b.paired.difference * 100:+.1f}"
        diff = f"{'0.0' if signed in ('+0.0', '-0.0') else signed} pts on {b.paired.n}"
        for text in (out, page):
            for lane in LANES:
                assert f"{expected_done(expected, lane)} of {TASKS}" in text
            assert diff in text
        for lane in LANES:
            for kind, n in expected.errors[lane].items():
                assert f"{kind} {n}" in out
        assert ('http-equiv="refresh"' in page) is False  # --once: a page nothing will rewrite does not reload
        assert page.count('data-lane="B_reason"') == 1 and 'data-baseline>baseline A_base' in page


def expected_done(expected: Expected, lane: str) -> int:
    return len(expected.outcome[lane])


def test_a_torn_last_line_is_left_for_the_next_look_and_the_file_never_touched(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    lines = lines_of(runs["root"] / "whole" / "A_base", "A_base")
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"".join(lines[:5]) + lines[5][:17])
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    tail = SamplesTail(path)
    first = tail.read()
    assert [s.task_id for s in first.samples] == [json.loads(line)["task_id"] for line in lines[:5]]
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before  # nothing repaired, nothing written
    assert tail.offset == len(b"".join(lines[:5]))
    with open(path, "ab") as fh:  # the writer finishes the line, and writes one more
        fh.write(lines[5][17:] + lines[6])
    second = tail.read()
    assert [s.task_id for s in second.samples] == [json.loads(line)["task_id"] for line in lines[5:7]]
    assert not tail.read().samples  # nothing new: nothing read twice
    # Rewritten whole (--retry-errors renames a shorter file into place): read again from its start.
    path.write_bytes(b"".join(lines[:2]))
    again = tail.read()
    assert again.restarted and len(again.samples) == 2


def test_a_sharded_matrix_sums_its_shards_and_names_a_shard_not_started(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    real, root = runs["root"], tmp_path / "submitted"
    watcher = Watcher(Settings(root, baseline="B_reason"))
    expected = Expected()
    for lane in LANES:  # only shard 0 has started, halfway
        run = real / "shard-0" / lane
        count = len(lines_of(run, lane)) // 2
        expected.add(lane, lay_out(run, root / "shard-0" / lane, lane, count, torn=True), decisions(run))
    shown = watcher.read()
    for lane in shown.lanes:
        assert [s.shard for s in lane.shards] == ["0/2"]
        assert lane.row.total is None and "1 of 2 shards not started" in lane.row.notes
        assert lane.row.status == "running"
        expected.check_lane(lane.row, lane.row.lane)
    expected.check_paired(lane_named(shown, "A_base"), "B_reason", "A_base")  # the baseline asked for
    # Every shard finished: each lane's row is its shards summed; a merged folder beside them is not counted twice.
    expected = Expected()
    for lane in LANES:
        for k in range(2):
            run = real / f"shard-{k}" / lane
            expected.add(lane, lay_out(run, root / f"shard-{k}" / lane, lane, None), decisions(run))
        shutil.copytree(real / "whole" / lane, root / "merged" / lane)
    shown = watcher.read()
    assert shown.finished
    for lane in shown.lanes:
        assert [s.shard for s in lane.shards] == ["0/2", "1/2"]
        assert lane.row.total == TASKS and lane.row.done == TASKS
        assert sum(s.done for s in lane.shards) == TASKS
        expected.check_lane(lane.row, lane.row.lane)
    expected.check_paired(lane_named(shown, "A_base"), "B_reason", "A_base")


def test_a_run_with_no_new_sample_for_a_while_is_stalled(runs: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "one"
    lay_out(runs["root"] / "whole" / "A_base", root, "A_base", 10)
    old = os.stat(root / "samples.jsonl").st_mtime - 1000
    os.utime(root / "samples.jsonl", (old, old))
    row = Watcher(Settings(root, stall_after=300)).read().lanes[0].row
    assert row.status == "stalled" and row.idle_s is not None and row.idle_s >= 1000
    assert Watcher(Settings(root, stall_after=5000)).read().lanes[0].row.status == "running"


def test_a_watch_started_before_its_folder_waits_for_it(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    root = tmp_path / "later"
    codes: list[int] = []
    watcher = threading.Thread(
        target=lambda: codes.append(main(["watch", str(root), "--once", "--interval", "0.05"])), daemon=True
    )
    watcher.start()
    out = ""
    for _ in range(600):  # until it says it waits (a thread may take a while to start on a loaded machine)
        out += capsys.readouterr().out
        if "waiting for" in out:
            break
        time.sleep(0.05)
    assert f"waiting for {root} to appear" in " ".join(out.split())
    assert not root.exists()
    building = tmp_path / "building"
    for lane in LANES:
        lay_out(runs["root"] / "whole" / lane, building / lane, lane, None)
    building.rename(root)  # the folder appears whole, as a matrix folder would with its first lanes
    watcher.join(60)
    assert not watcher.is_alive() and codes == [0]
    out = capsys.readouterr().out
    assert "A_base" in out and "B_reason" in out and f"{TASKS} of {TASKS}" in out


def test_the_live_watch_ends_by_itself_when_every_run_has_finished(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "done"
    for lane in LANES:
        lay_out(runs["root"] / "whole" / lane, root / lane, lane, None)
    html = tmp_path / "page" / "watch.html"
    assert main(["watch", str(root), "--interval", "0.05", "--html", str(html)]) == 0
    page = html.read_text()
    assert "all finished" in page and 'http-equiv="refresh"' not in page  # its last page stops reloading


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--once", "--follow"], "--once prints one reading"),
        (["--interval", "0"], "--interval must be more than 0"),
        (["--serve", "70000"], "--serve must be at least 0 and at most 65535"),
    ],
)
def test_a_bad_flag_is_one_line(args: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", str(tmp_path), *args]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and said in err[0], err


def test_a_page_among_a_runs_files_is_refused_in_one_line(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay_out(runs["root"] / "whole" / "A_base", tmp_path / "run", "A_base", 5)
    before = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert main(["watch", str(tmp_path / "run"), "--once", "--html", str(tmp_path / "run" / "w.html")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "inside a run folder" in err[0], err
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == before


def test_a_folder_that_is_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a-file"
    path.write_text("x")
    assert main(["watch", str(path), "--once"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "a-file" in err[0], err


def test_idle_replicas_are_told_while_the_lane_goes_and_at_its_end(runs: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "replicas"
    real = runs["root"] / "whole" / "A_base"
    urls = ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1", "http://127.0.0.1:8003/v1"]

    def replicas(running: bool) -> None:
        manifest = json.loads((root / "manifest.json").read_text())
        manifest["lane"]["base_url"] = urls
        # What the runner writes as the lane ends (run/endpoints.py's figures): the third answered nothing.
        manifest["endpoints"] = None if running else [
            {"base_url": urls[0], "requests": 40, "errors": 0},
            {"base_url": urls[1], "requests": 19, "errors": 0},
            {"base_url": urls[2], "requests": 3, "errors": 3},
        ]
        (root / "manifest.json").write_text(json.dumps(manifest))

    lay_out(real, root, "A_base", 30)
    replicas(running=True)
    row = Watcher(Settings(root)).read().lanes[0].row
    assert row.replicas == 3 and row.idle_replicas is None  # samples of before, which name no endpoint: cannot tell
    assert "3 replicas: too few answers yet to tell an idle one" in cells.notes(row)
    # Samples that name the endpoint that answered each (the runner's, for a lane of replicas): the first two
    # answered them in turn, the third none, while the run goes.
    lines = (root / "samples.jsonl").read_text().splitlines()
    named = [json.dumps({**json.loads(line), "endpoint": i % 2}) for i, line in enumerate(lines)]
    (root / "samples.jsonl").write_text("\n".join(named) + "\n")
    row = Watcher(Settings(root)).read().lanes[0].row
    assert row.status == "running" and row.idle_replicas == [urls[2]]
    assert f"idle replica(s): {urls[2]}" in cells.notes(row)
    lay_out(real, root, "A_base", None)
    replicas(running=False)
    row = Watcher(Settings(root)).read().lanes[0].row
    assert row.status == "finished" and row.idle_replicas == [urls[2]]


def test_a_sample_written_again_replaces_its_outcome(runs: dict[str, Path], tmp_path: Path) -> None:
    """--resume or --retry-errors appends a (task, sample) again: the last line is the one that counts, once."""
    root = tmp_path / "again"
    real = runs["root"] / "whole" / "A_base"
    written = lay_out(real, root, "A_base", 10)
    watcher = Watcher(Settings(root))
    failed = json.loads(written[7])  # FAILED made line 7 a timeout
    assert failed.get("error_kind") == "timeout"
    assert watcher.read().lanes[0].row.errors == Counter(timeout=1)
    original = (real / "samples.jsonl").read_bytes().splitlines(keepends=True)[7]
    with open(root / "samples.jsonl", "ab") as fh:
        fh.write(original)  # the retried request's answer
    row = watcher.read().lanes[0].row
    verdict = decisions(real)[(failed["task_id"], failed.get("sample", 0))]
    assert row.done == 10 and not row.errors and row.right + row.wrong == 10 - (verdict is None)
