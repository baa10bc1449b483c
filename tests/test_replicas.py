"""Replicas (issue 14): a lane whose base_url is a list sends each request to the least busy endpoint, rests
one that cannot be reached and gives its work to the others, and records each endpoint's requests, errors
and latency. Two real simulators on loopback stand for two vLLM replicas."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_until
from ports import refused_port

from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.run.lanes import lane_from_mapping
from ocllm.run.runner import run_lane
from ocllm.sim import SimConfig, SimServer


def lanes_toml(tmp: Path, urls: list[str], **settings: Any) -> Path:
    lines = [f"base_url = {json.dumps(urls)}", 'model = "sim-baseline"', 'suite = "demo"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    path = tmp / "lanes.toml"
    path.write_text("[lanes.replicas]\n" + "\n".join(lines) + "\n")
    return path


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_both_replicas_are_used_and_counted(tmp_path: Path) -> None:
    with SimServer(SimConfig(latency_s=0.01)) as a, SimServer(SimConfig(latency_s=0.01)) as b:
        config = lanes_toml(tmp_path, [a.base_url, b.base_url], concurrency=8)
        assert main(["run", "--config", str(config), "--lane", "replicas", "--out", str(tmp_path / "r")]) == 0
    manifest = read(tmp_path / "r" / "manifest.json")
    endpoints = manifest["endpoints"]
    assert [e["base_url"] for e in endpoints] == [a.base_url, b.base_url]
    assert all(e["requests"] > 0 and e["errors"] == 0 and e["latency_p50_s"] > 0 for e in endpoints)
    assert sum(e["requests"] for e in endpoints) == manifest["requests"] == 59
    serving = read(tmp_path / "r" / "metrics.json")["summary"]["serving"]
    assert serving["endpoints"] == endpoints
    # Each sample names the endpoint that answered it (what `ocllm watch` tells idle replicas by), as counted.
    answered = [json.loads(line)["endpoint"] for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert [answered.count(i) for i in (0, 1)] == [e["requests"] for e in endpoints]


def test_a_replica_going_away_mid_run_hands_its_work_to_the_other(tmp_path: Path) -> None:
    # Slow enough that the run is far from over when B goes (the 49 tasks after the 10th take seconds), however
    # late a loaded machine lets the stopping thread see the 10th.
    with SimServer(SimConfig(latency_s=0.2)) as a:
        b = SimServer(SimConfig(latency_s=0.2))
        b.__enter__()
        lane = lane_from_mapping(
            "replicas",
            {"base_url": [a.base_url, b.base_url], "model": "sim-baseline", "suite": "demo", "concurrency": 4},
            "test",
        )
        samples = tmp_path / "r" / "samples.jsonl"

        def stop_b_after_a_few() -> None:
            wait_until(lambda: samples.exists() and len(samples.read_text().splitlines()) >= 10)
            b.__exit__(None, None, None)

        stopper = threading.Thread(target=stop_b_after_a_few)
        stopper.start()
        result = run_lane(lane, tmp_path / "r", score=score_run_dir)
        stopper.join()
    assert result.summary.errors == 0 and result.summary.complete  # nothing lost: A answered the rest
    first, second = read(tmp_path / "r" / "manifest.json")["endpoints"]
    assert second["refusals"] >= 1  # B was found gone and rested
    assert first["requests"] > second["requests"] > 0


def test_every_replica_is_checked_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nobody = f"http://127.0.0.1:{refused_port()}/v1"
    with SimServer(SimConfig()) as a:
        config = lanes_toml(tmp_path, [a.base_url, nobody])
        assert main(["run", "--config", str(config), "--lane", "replicas", "--out", str(tmp_path / "r")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and f"{nobody}: cannot reach the server" in err[0]
    assert not (tmp_path / "r" / "samples.jsonl").exists()


@pytest.mark.parametrize(
    ("base_url", "server", "message"),
    [
        ([], None, "base_url is an empty list"),
        (["http://a:1/v1", "http://a:1/v1/"], None, "lists the same endpoint twice"),
        (["http://a:1/v1", "http://b:1/v1"], {"command": ["x"]}, "a managed server serves one base_url"),
    ],
)
def test_bad_replica_lists_are_refused(base_url: list[str], server: dict[str, Any] | None, message: str) -> None:
    from ocllm.errors import InputError

    settings: dict[str, Any] = {"base_url": base_url, "model": "m"}
    if server is not None:
        settings["server"] = server
    with pytest.raises(InputError, match=message):
        lane_from_mapping("l", settings, "test")
