"""The preflight (run/preflight.py): against servers that misbehave as the reports describe, each problem is named
before the first task, with what to change; against a well-configured server (and the simulator) none is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from misbehaving_server import MisbehavingServer

from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

REPO = Path(__file__).resolve().parent.parent


def ocllm(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OCLLM_PREFLIGHT": "on", "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "ocllm", *args], capture_output=True, text=True, env=env, check=False)


def probed(server: MisbehavingServer, suite: str = "demo", *more: str) -> tuple[int, dict[str, Any]]:
    done = ocllm("probe", "--base-url", server.base_url, "--model", "m", "--suite", suite, "--json", *more)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1])


def problems(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["probe"]: f for f in found["findings"] if f["outcome"] == "problem"}


def test_a_well_configured_server_shows_no_problem() -> None:
    with MisbehavingServer() as server:
        code, found = probed(server, "demo-tools")
    assert code == 0 and problems(found) == {}
    assert {f["probe"]: f["outcome"] for f in found["findings"]} == {
        "channel": "ok", "system": "ok", "context": "ok", "tools": "ok", "budget": "ok",
    }  # fmt: skip
    assert found["requests"] == 1 + 2 + 2 + 2 + 3


def test_the_simulator_shows_no_problem() -> None:
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as sim:
        for suite in ("demo", "demo-agent", "demo-tools"):
            done = ocllm("probe", "--base-url", sim.base_url, "--model", "sim-baseline", "--suite", suite, "--json")
            assert done.returncode == 0, done.stderr
            found = json.loads(done.stdout.strip().splitlines()[-1])
            assert problems(found) == {}
            outcomes = {f["probe"]: f["outcome"] for f in found["findings"]}
            assert outcomes["channel"] == outcomes["system"] == outcomes["context"] == "ok", outcomes


@pytest.mark.parametrize(
    ("fault", "suite", "probe", "words"),
    [
        ({"answer_in_reasoning": True}, "demo", "channel", "landed only in reasoning_content, content null"),
        ({"thinks_anyway": True}, "demo", "thinking", "thinking is off in the lane, yet the server reasoned"),
        ({"keep_last": 50}, "demo", "context", "keeps only the last ~50 tokens"),
        ({"calls_as_text": True}, "demo-tools", "tools", "a call came back as text (hermes, in the content)"),
        ({"budget_cuts": True}, "demo", "budget", "max_tokens cut 3 of 3"),
    ],
)
def test_each_misbehaviour_is_named_with_what_to_change(
    fault: dict[str, Any], suite: str, probe: str, words: str
) -> None:
    with MisbehavingServer(**fault) as server:
        code, found = probed(server, suite)
    named = problems(found)
    # The answer in the reasoning field with thinking off is also reasoning that came back (vllm#17609: both).
    also = {"thinking"} if "answer_in_reasoning" in fault else set()
    assert set(named) - also == {probe}, found
    assert words in named[probe]["said"] and named[probe]["change"] and named[probe]["distorts"] is True
    assert code == 1  # a problem that will distort a run


def test_a_dropped_system_message_distorts_only_a_lane_that_sends_one() -> None:
    with MisbehavingServer(drops_system=True) as server:
        _, plain = probed(server, "demo")
        _, told = probed(server, "demo", "--system-prompt", "Answer with the letter only.")
    # A suite that sends no system message loses nothing by it; a lane with a system prompt loses its instructions.
    assert "distorts" not in problems(plain)["system"] and problems(told)["system"]["distorts"] is True
    said = problems(told)["system"]["said"]
    assert "the chat template dropped the system message" in said and problems(told)["system"]["change"]
    short, long = problems(told)["system"]["measured"]["prompt_tokens"]
    assert short == long


@pytest.mark.parametrize("applies_stop", [False, True])
def test_stop_strings_in_reasoning_are_probed_for_a_lane_that_sends_them(tmp_path: Path, applies_stop: bool) -> None:
    lanes = tmp_path / "lanes.toml"
    with MisbehavingServer(stop_in_reasoning=applies_stop) as server:
        lanes.write_text(
            f'[lanes.think]\nbase_url = "{server.base_url}"\nmodel = "m"\nreasoning = "native"\n'
            'allow_reasoning_fallback = true\n[lanes.think.extra_body]\nstop = ["</answer>"]\n'
        )
        code, found = probed(server, "demo", "--config", str(lanes), "--lane", "think")
    stop = next(f for f in found["findings"] if f["probe"] == "stop")
    if applies_stop:
        assert stop["outcome"] == "problem" and "'</answer>' is applied to the reasoning" in stop["said"]
        assert "stop strings to the reasoning" in stop["change"] and code == 1
    else:
        assert stop["outcome"] == "ok" and stop["measured"]["in_reasoning"] is True and code == 0


def test_run_says_each_problem_before_the_first_task_and_keeps_it_in_the_manifest(tmp_path: Path) -> None:
    with MisbehavingServer(keep_last=50) as server:
        done = ocllm("run", "--base-url", server.base_url, "--model", "m", "--suite", "smoke", "--out",
                     str(tmp_path / "r"))  # fmt: skip
        sent = len(server.requests)
    assert done.returncode in (0, 1), done.stderr
    said = [line for line in done.stdout.splitlines() if "preflight of lane" in line]
    assert len(said) == 1 and "keeps only the last ~50 tokens" in said[0] and "will distort" in said[0]
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    preflight = manifest["preflight"]
    assert {f["probe"]: f["outcome"] for f in preflight["findings"]}["context"] == "problem"
    # The probes are counted apart: the run's requests are its tasks' alone.
    tasks = len((tmp_path / "r" / "suite.jsonl").read_text().splitlines())
    assert manifest["requests"] == tasks and sent == tasks + preflight["requests"]


def test_strict_stops_the_lane_before_anything_is_written(tmp_path: Path) -> None:
    with MisbehavingServer(budget_cuts=True) as server:
        done = ocllm("run", "--base-url", server.base_url, "--model", "m", "--suite", "smoke", "--out",
                     str(tmp_path / "r"), "--preflight", "strict")  # fmt: skip
        sent = len(server.requests)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    stopped = "ocllm: error: lane 'r' stopped by the preflight (--preflight strict): budget: max_tokens cut"
    assert last.startswith(stopped)
    assert not (tmp_path / "r" / "samples.jsonl").exists()
    assert sent == 1 + 2 + 2 + 3  # the probes, and no task


def test_off_sends_no_probe(tmp_path: Path) -> None:
    with MisbehavingServer(budget_cuts=True) as server:
        done = ocllm("run", "--base-url", server.base_url, "--model", "m", "--suite", "smoke", "--out",
                     str(tmp_path / "r"), "--preflight", "off")  # fmt: skip
        bodies = list(server.requests)
    assert done.returncode in (0, 1), done.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest.get("preflight") is None
    assert not any("code word" in str(body) or "17 + 25" in str(body) for body in bodies)


def test_what_the_preflight_measured_is_a_setting_compare_flags(tmp_path: Path) -> None:
    for name, fault in (("well", {}), ("cut", {"keep_last": 50})):
        with MisbehavingServer(**fault) as server:  # type: ignore[arg-type]
            done = ocllm("run", "--base-url", server.base_url, "--model", "m", "--suite", "smoke", "--out",
                         str(tmp_path / name))  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
    done = ocllm("compare", str(tmp_path / "well"), str(tmp_path / "cut"), "-o", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    rows = [line for line in (tmp_path / "cmp" / "comparison.md").read_text().splitlines() if "**preflight**" in line]
    assert len(rows) == 1 and "(differs)" in rows[0] and "context problem: the server counted" in rows[0]


def test_the_matrix_closing_table_says_each_lane_s_preflight(tmp_path: Path) -> None:
    lanes = tmp_path / "lanes.toml"
    with MisbehavingServer() as good, MisbehavingServer(budget_cuts=True) as cut:
        lanes.write_text(
            f'[defaults]\nmodel = "m"\nsuite = "smoke"\n[lanes.good]\nbase_url = "{good.base_url}"\n'
            f'[lanes.cut]\nbase_url = "{cut.base_url}"\n[lanes.quiet]\nbase_url = "{good.base_url}"\n'
        )
        done = ocllm("matrix", str(lanes), "--out", str(tmp_path / "m"), "--lane", "good", "--lane", "cut")
        off = ocllm("matrix", str(lanes), "--out", str(tmp_path / "m2"), "--lane", "quiet", "--preflight", "off")
    assert done.returncode in (0, 1), done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.count("│") > 5}
    assert rows["good"].rstrip(" │").endswith("ok") and "budget (distorts)" in rows["cut"], done.stdout
    quiet_rows = [line for line in off.stdout.splitlines() if line.count("│") > 5 and "quiet" in line]
    assert quiet_rows and quiet_rows[0].rstrip(" │").endswith("off"), off.stdout


def test_the_probes_look_at_the_first_tasks_the_longest_and_one_of_each_type() -> None:
    from ocllm.run.preflight import _probed_tasks
    from ocllm.scoring.math.fields import MathTask
    from ocllm.scoring.mcq.fields import McqTask

    tasks = [McqTask(id=f"q{i}", question="Which?" * (1 + (i == 700) * 500), options=["a", "b"], answer="A",
                     category="c") for i in range(1000)]  # fmt: skip
    tasks.append(MathTask(id="m", question="1 + 1?", answer="2", category="c"))
    chosen = _probed_tasks(tasks)
    assert [t.id for t in chosen[:3]] == ["q0", "q1", "q2"]
    assert "q700" in {t.id for t in chosen} and "m" in {t.id for t in chosen}
    assert len(chosen) <= 3 + 16 + 2  # a suite of any size: a few bodies built, never one a task
