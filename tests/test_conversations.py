"""Conversations through the runner, against real servers on 127.0.0.1: the simulator playing demo-agent's episodes,
a scripted server failing or refusing a request mid-episode, and ocllm killed in the middle of episodes then resumed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from faultserver import FaultServer, Reply, Together, answer, models
from helpers import CPU_HEAVY, quiet, read_jsonl, wait_until

from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

AGENT = str(shipped_suites()["demo-agent"])
DECIDED = ("task_id", "correct", "rule", "cause", "turns_right", "turns_checked", "episode_end", "requests")


def lane(base_url: str, **settings: object) -> Lane:
    given: dict[str, object] = {"model": "sim-baseline", "suite": "demo-agent", **settings}
    return Lane(name="agent", base_url=base_url, **given)  # type: ignore[arg-type]


def test_every_episode_is_one_sample_holding_each_request(tmp_path: Path) -> None:
    with SimServer(SimConfig(suites=(AGENT,))) as sim:
        result = run_lane(lane(sim.base_url, concurrency=3), tmp_path / "r", progress=quiet, score=score_run_dir)
    samples = read_jsonl(tmp_path / "r" / "samples.jsonl")
    assert len(samples) == 12 == len({s["task_id"] for s in samples})
    requests = sum(len(s["turns"]) for s in samples)
    assert result.requests == requests > 24  # every episode asked at least two user turns
    for sample in samples:
        assert sample["request"]["messages"][-1]["role"] == "user"
        assert sample["episode_end"] in ("answered", "step_bound")
        # Each request after the first added the calls' results or the next user turn: never nothing.
        assert all(turn["sent"] for turn in sample["turns"][1:])
    logged = read_jsonl(tmp_path / "r" / "turns.jsonl")
    assert len(logged) == requests and {line["attempt"] for line in logged} == {0}
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert "turns" not in metrics["tasks"][0]  # samples.jsonl keeps them; metrics.json names it
    assert metrics["summary"]["by_type"]["tool_use"]["details"]["requests"] == requests


def test_the_run_report_draws_each_episode_turn_by_turn_with_its_causes(tmp_path: Path) -> None:
    with SimServer(SimConfig(suites=(AGENT,), models={"sim-weak": 0.5})) as sim:
        run_lane(lane(sim.base_url, model="sim-weak"), tmp_path / "r", progress=quiet, score=score_run_dir)
    assert main(["report", str(tmp_path / "r"), "-o", str(tmp_path / "report")]) == 0
    tasks = json.loads((tmp_path / "r" / "metrics.json").read_text())["tasks"]
    failed = [t for t in tasks if t["correct"] is False and t.get("cause")]
    assert failed, "the weak simulated model fails some episodes"
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert page.count("Turn by turn") == len(tasks)
    details = json.loads((tmp_path / "r" / "metrics.json").read_text())["summary"]["by_type"]["tool_use"]["details"]
    for task in failed:
        said = f"turn {task['failed_turn']}: {task['cause'].replace('_', ' ')}"
        assert said in page, said  # the first failed turn and its cause, among the episode's facts
        assert f"`{task['task_id']}`" in markdown and f"failed: {task['cause'].replace('_', ' ')}" in markdown
        assert details["first_failed_turn_by_cause"][task["cause"]] >= 1
    for check in (c for t in tasks for c in t["turn_checks"]):
        for run in check.get("calls", []):
            assert f"{run['status']}: " in page  # each call with what came of it


def test_sharded_conversations_merge_into_the_unsharded_run(tmp_path: Path) -> None:
    with SimServer(SimConfig(suites=(AGENT,))) as sim:
        args = ["run", "--suite", "demo-agent", "--base-url", sim.base_url, "--model", "sim-baseline"]
        for k in range(2):
            assert main([*args, "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}")]) in (0, 1)
        assert main([*args, "--out", str(tmp_path / "whole")]) in (0, 1)
    merged = tmp_path / "merged"
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s0"), "-o", str(merged)]) in (0, 1)
    whole = json.loads((tmp_path / "whole" / "metrics.json").read_text())["tasks"]
    joined = json.loads((merged / "metrics.json").read_text())["tasks"]
    assert [{k: t.get(k) for k in DECIDED} for t in joined] == [{k: t.get(k) for k in DECIDED} for t in whole]
    episodes = {s["task_id"]: len(s["turns"]) for s in read_jsonl(tmp_path / "whole" / "samples.jsonl")}
    assert {s["task_id"]: len(s["turns"]) for s in read_jsonl(merged / "samples.jsonl")} == episodes


def test_a_request_failing_mid_episode_makes_the_episode_an_error_never_wrong(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": '{"folder": "notes"}'}}
    with FaultServer() as server:
        server.script(models("m"), answer("", tool_calls=[call], finish_reason="tool_calls"), then=Reply(status=500))
        one = lane(server.base_url, model="m", max_attempts=1, concurrency=1, suite=str(_first_task_suite(tmp_path)))
        result = run_lane(one, tmp_path / "r", progress=quiet, score=score_run_dir)
        sent = [r.json() for r in server.requests if r.path.endswith("/chat/completions")]
    assert result.summary.errors == 1 and result.summary.scored == 0
    sample = read_jsonl(tmp_path / "r" / "samples.jsonl")[0]
    assert sample["error_kind"] == "http_status" and len(sample["turns"]) == 2
    # The second request is the first with the call's result after the model's call, as the server returned it.
    assert sent[1]["messages"][-2] == {"role": "assistant", "content": "", "tool_calls": [call]}
    assert sent[1]["messages"][-1]["role"] == "tool" and sent[1]["messages"][-1]["tool_call_id"] == "c1"


def test_a_request_refused_mid_episode_ends_it_as_context_exceeded(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
    said = "request (9000 tokens) exceeds the available context size (8192 tokens)"  # llama.cpp's words
    refusal = {"error": {"code": 400, "type": "exceed_context_size_error", "message": said}}
    with FaultServer() as server:
        server.script(models("m"), answer("", tool_calls=[call]), then=Reply(status=400, json=refusal))
        one = lane(server.base_url, model="m", max_attempts=1, concurrency=1, suite=str(_first_task_suite(tmp_path)))
        result = run_lane(one, tmp_path / "r", progress=quiet, score=score_run_dir)
    assert result.summary.errors == 0 and result.summary.scored == 1 and result.summary.correct == 0
    task = json.loads((tmp_path / "r" / "metrics.json").read_text())["tasks"][0]
    assert (task["episode_end"], task["rule"], task["cause"], task["failed_turn"]) == (
        "refused", "context_exceeded", "context_exceeded", 1,
    )  # fmt: skip


def test_concurrency_counts_requests_in_flight_not_episodes(tmp_path: Path) -> None:
    # Six episodes of two requests each, at concurrency 2: episodes run more at once than that (one works out its
    # next turn while another's request is out), but never more than two requests are in the server at once.
    lines = [json.loads(line) for line in Path(AGENT).read_text().splitlines()][:6]
    suite = tmp_path / "six.jsonl"
    suite.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with FaultServer() as server:
        server.script(models("m"), then=Together(count=2, then=answer("Done.")))
        result = run_lane(
            lane(server.base_url, model="m", concurrency=2, suite=str(suite)), tmp_path / "r", progress=quiet,
            score=score_run_dir,
        )  # fmt: skip
        most = server.max_in_flight
        asked = [_first_user(r.json()) for r in server.requests if r.path.endswith("/chat/completions")]
    assert result.summary.errors == 0 and most == 2
    assert result.requests == len(asked) == sum(len(line["user_turns"]) for line in lines)
    # Episodes alive at once (between their first request and their last, in the order the server saw them): more
    # than the two request slots.
    spans = {episode: (asked.index(episode), len(asked) - 1 - asked[::-1].index(episode)) for episode in set(asked)}
    alive = max(sum(1 for first, last in spans.values() if first <= at <= last) for at in range(len(asked)))
    assert alive > 2


def _first_user(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return str(next(m["content"] for m in messages if m["role"] == "user"))


@pytest.mark.slow  # ocllm in a process, killed
def test_sigkill_in_the_middle_of_episodes_then_resume_finishes_each_once(tmp_path: Path) -> None:
    with SimServer(SimConfig(suites=(AGENT,), latency_s=0.15)) as server:
        args = [
            sys.executable, "-m", "ocllm", "run", "--suite", "demo-agent", "--base-url", server.base_url,
            "--model", "sim-baseline", "--concurrency", "3",
        ]  # fmt: skip
        killed = tmp_path / "killed"
        proc = subprocess.Popen([*args, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Killed once an episode that has not finished has a turn on disk: in the middle of it, for its next
        # request takes 0.15 s at least.
        assert wait_until(lambda: _unfinished(killed))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        cut = _unfinished(killed)
        finished_before = len(read_jsonl(killed / "samples.jsonl")) if (killed / "samples.jsonl").exists() else 0
        assert cut and finished_before < 12
        assert subprocess.run([*args, "--out", str(killed), "--resume"], capture_output=True).returncode == 0
        whole = tmp_path / "whole"
        assert subprocess.run([*args, "--out", str(whole)], capture_output=True).returncode == 0
    resumed = read_jsonl(killed / "samples.jsonl")
    assert len(resumed) == 12 == len({s["task_id"] for s in resumed})  # none lost, none twice
    restarted = {s["task_id"] for s in resumed if s.get("restarted")}
    assert restarted == cut  # each episode cut in the middle was started again, and says so
    attempts = {(line["task_id"], line["attempt"]) for line in read_jsonl(killed / "turns.jsonl")}
    assert {(task_id, 0) for task_id in cut} <= attempts and {(task_id, 1) for task_id in cut} <= attempts
    a = json.loads((killed / "metrics.json").read_text())["tasks"]
    b = json.loads((whole / "metrics.json").read_text())["tasks"]
    assert [{k: t.get(k) for k in DECIDED} for t in a] == [{k: t.get(k) for k in DECIDED} for t in b]
    by_id = {s["task_id"]: s["turns"] for s in read_jsonl(whole / "samples.jsonl")}
    assert {s["task_id"]: _answers(s["turns"]) for s in resumed} == {k: _answers(v) for k, v in by_id.items()}


@pytest.mark.slow
@CPU_HEAVY  # eight CPU hogs
def test_the_same_episodes_idle_and_under_eight_cpu_hogs_give_the_same_outcomes_and_rescore_reproduces_them(
    tmp_path: Path,
) -> None:
    with SimServer(SimConfig(suites=(AGENT,))) as sim:
        run_lane(lane(sim.base_url, concurrency=4), tmp_path / "idle", progress=quiet, score=score_run_dir)
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(8)]
        try:
            run_lane(lane(sim.base_url, concurrency=4), tmp_path / "loaded", progress=quiet, score=score_run_dir)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    idle = json.loads((tmp_path / "idle" / "metrics.json").read_text())["tasks"]
    loaded = json.loads((tmp_path / "loaded" / "metrics.json").read_text())["tasks"]
    assert [{k: t.get(k) for k in DECIDED} for t in idle] == [{k: t.get(k) for k in DECIDED} for t in loaded]
    assert {t["rule"] for t in idle} - {"episode_right"}, "the simulator gets some episodes wrong"
    assert main(["rescore", str(tmp_path / "loaded"), "-o", str(tmp_path / "re.json")]) == 0
    again = json.loads((tmp_path / "re.json").read_text())
    assert again["summary"]["changed"] == 0
    assert [{k: t.get(k) for k in DECIDED} for t in again["tasks"]] == [{k: t.get(k) for k in DECIDED} for t in idle]


def _answers(turns: list[dict[str, object]]) -> list[object]:
    return [(t["reply"].get("content"), t["reply"].get("tool_calls") is not None) for t in turns]  # type: ignore[union-attr]


def _unfinished(run: Path) -> set[str]:
    """The episodes with a turn on disk and no sample: those in the middle of their conversation."""
    turns, samples = run / "turns.jsonl", run / "samples.jsonl"
    if not turns.exists():
        return set()
    logged = {line["task_id"] for line in _whole_lines(turns)}
    done = {line["task_id"] for line in _whole_lines(samples)} if samples.exists() else set()
    return logged - done


def _whole_lines(path: Path) -> list[dict[str, object]]:
    lines = path.read_bytes().split(b"\n")[:-1]  # a line being written has no newline yet
    return [json.loads(line) for line in lines if line.strip()]


def _first_task_suite(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text(Path(AGENT).read_text().splitlines()[0] + "\n")
    return path
