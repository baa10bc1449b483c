"""`ocllm run` / `matrix` end to end: the real runner and client against the simulator on 127.0.0.1."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from conftest import PER_TASK_FIELDS
from faultserver import Close, FaultServer, Reply, Stream, answer, models, sse
from helpers import quiet, read_jsonl, wait_until
from helpers import run_cli as ocllm_run
from ports import refused_port

from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

SUITES = tuple(shipped_suites().values())
# `ocllm run` through the real entry point, as the simulator's reasoning model unless a test names another.
run_cli = functools.partial(ocllm_run, model="sim-reasoning")
DECISION_KEYS = (
    "task_id",
    "extracted_final_answer",
    "extraction_method",
    "ambiguity",
    "correct",
    "finish_reason",
    "error",
)


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(suites=SUITES, truncation_rate=0.1)) as server:
        yield server


def lane(base_url: str, **kw: object) -> Lane:
    settings: dict = {
        "name": "L",
        "base_url": base_url,
        "model": "sim-reasoning",
        "reasoning": "native",
        "suite": "smoke",
        "concurrency": 4,
    }
    settings.update(kw)
    return Lane(**settings)


@pytest.mark.parametrize("stream", [False, True])
def test_run_writes_a_complete_run_directory(sim: SimServer, tmp_path: Path, stream: bool) -> None:
    result = run_lane(
        lane(sim.base_url, stream=stream, suite="demo"),
        tmp_path / "run",
        progress=quiet,
        score=score_run_dir,
    )
    out = tmp_path / "run"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "finished"
    assert manifest["suite"]["name"] == "demo" and len(manifest["suite"]["sha256"]) == 64
    assert manifest["lane"]["model"] == "sim-reasoning" and manifest["scorer_version"]
    assert {m["owned_by"] for m in manifest["server_models"]["data"]} == {"ocllm-simulator"}
    assert manifest["started_at"] and manifest["finished_at"]
    samples = read_jsonl(out / "samples.jsonl")
    assert len(samples) == 59 == len({s["task_id"] for s in samples})
    assert all(s["reasoning_field"] == "reasoning_content" for s in samples if s.get("reasoning"))
    if stream:
        assert all(s["ttft_s"] is not None for s in samples)
    metrics = json.loads((out / "metrics.json").read_text())
    s = metrics["summary"]
    assert (s["total"], s["errors"], s["complete"]) == (59, 0, True)
    assert s == msgspec.to_builtins(result.summary)  # the typed summary is what metrics.json holds
    truncated = [t for t in metrics["tasks"] if t["finish_reason"] == "length"]
    assert all(t["truncated"] and not t["correct"] for t in truncated)
    for field in (*PER_TASK_FIELDS, "error"):
        assert field in metrics["tasks"][0]


def test_a_run_without_lane_is_named_after_its_out_folder(sim: SimServer, tmp_path: Path) -> None:
    # Every one-off run was called `adhoc` (issue 41): two of them compared or reported read as one lane twice.
    assert run_cli(sim.base_url, tmp_path / "qwen-t1") == 0
    assert json.loads((tmp_path / "qwen-t1" / "manifest.json").read_text())["lane"]["name"] == "qwen-t1"
    # --lane still names it; a folder name no lane may have (it names a folder inside runs) falls back to adhoc.
    assert run_cli(sim.base_url, tmp_path / "b", "--lane", "mine") == 0
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["lane"]["name"] == "mine"
    assert run_cli(sim.base_url, tmp_path / "two words") == 0
    assert json.loads((tmp_path / "two words" / "manifest.json").read_text())["lane"]["name"] == "adhoc"


def test_run_limit_runs_the_suites_first_tasks(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(sim.base_url, tmp_path / "r", "--limit", "3", suite="demo") == 0
    demo = [json.loads(line)["id"] for line in shipped_suites()["demo"].read_text().splitlines() if line.strip()]
    assert [s["task_id"] for s in read_jsonl(tmp_path / "r" / "samples.jsonl")] == demo[:3]
    assert [t["id"] for t in read_jsonl(tmp_path / "r" / "suite.jsonl")] == demo[:3]
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["summary"]["total"] == 3
    # The same limit resumes; a limit past the suite's size is the whole suite; 0 is refused in one line.
    assert run_cli(sim.base_url, tmp_path / "r", "--limit", "3", "--resume", suite="demo") == 0
    assert run_cli(sim.base_url, tmp_path / "all", "--limit", "1000", suite="smoke") == 0
    assert len(read_jsonl(tmp_path / "all" / "samples.jsonl")) == 10
    capsys.readouterr()
    assert run_cli(sim.base_url, tmp_path / "none", "--limit", "0") == 2
    assert "--limit must be at least 1" in capsys.readouterr().err and not (tmp_path / "none").exists()


def test_transport_failures_are_errors_and_retry_errors_reruns_them(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FaultServer() as broken:
        broken.script(then=Reply(status=500, body="overloaded"))
        # max_attempts ends the retries; a budget far above the back-off keeps a loaded machine from ending them
        # first (the error would then say the budget was spent, not the attempts).
        failing = lane(broken.base_url, max_attempts=2, retry_budget_s=60.0)
        result = run_lane(failing, out, progress=quiet, score=score_run_dir)
    # Every task ran, so the run is complete; its requests failed, which `errors` counts (issue 8).
    assert (result.summary.errors, result.summary.correct, result.summary.complete) == (10, 0, True)
    assert "--retry-errors" in result.notices[0] and result.notices[0].startswith("10 of 10 task(s) failed")
    metrics = json.loads((out / "metrics.json").read_text())
    assert all(t["correct"] is None and t["rule"] == "request_error" for t in metrics["tasks"])
    assert all(t["error"].startswith("HTTP 500 after 2 attempts") for t in metrics["tasks"])
    assert json.loads((out / "manifest.json").read_text())["status"] == "finished_with_errors"

    # The same lane against a server that works (only the endpoint differs, which resume allows).
    with SimServer(SimConfig(suites=SUITES)) as sim:
        again = run_lane(
            lane(sim.base_url, max_attempts=2),
            out,
            retry_errors=True,
            progress=quiet,
            score=score_run_dir,
        )
    assert (again.summary.errors, again.ran) == (0, 10)
    samples = read_jsonl(out / "samples.jsonl")
    assert sorted(s["task_id"] for s in samples) == sorted({s["task_id"] for s in samples})
    assert len(samples) == 10 and all(s.get("error") is None for s in samples)


def test_unreachable_server_or_unknown_model_is_refused_before_any_request(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli(f"http://127.0.0.1:{refused_port()}/v1", tmp_path / "a", model="m")
    assert code == 2 and "cannot reach the server" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
    code = run_cli(sim.base_url, tmp_path / "b", model="no-such-model")
    err = capsys.readouterr().err
    assert code == 2 and "a request for model 'no-such-model' fails" in err and "sim-baseline" in err
    assert not (tmp_path / "b").exists()


def test_resume_refuses_a_changed_lane(sim: SimServer, tmp_path: Path) -> None:
    run_lane(lane(sim.base_url), tmp_path / "run", progress=quiet, score=score_run_dir)
    code = run_cli(sim.base_url, tmp_path / "run", "--resume", model="sim-baseline")
    assert code == 2
    code = run_cli(sim.base_url, tmp_path / "run", "--reasoning", "native")
    assert code == 2  # already holds a run, and --resume was not given


def test_resume_refuses_a_changed_math_template_and_takes_a_manifest_from_before_it(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lanes, out = tmp_path / "lanes.toml", tmp_path / "run"
    head = f'[lanes.L]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nsuite = "demo-math"\n'
    lanes.write_text(head, encoding="utf-8")
    args = ["run", "--config", str(lanes), "--lane", "L", "--out", str(out)]
    assert main(args) in (0, 1)
    lanes.write_text(head + 'math_template = "{question} Box it."\n', encoding="utf-8")
    capsys.readouterr()
    assert main([*args, "--resume"]) == 2
    assert "lane settings differ from the interrupted run (templates.math)" in capsys.readouterr().err
    # A manifest of before issue 41 kept each shipped type's template under its key of before (`prompt_template`),
    # the others under `templates`; one written before math tasks has no math_template: it was the default then,
    # and the run resumes.
    lanes.write_text(head, encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text())
    table = manifest["lane"].pop("templates")
    before = {"mcq": "prompt_template", "required_substrings": "substring_template", "json": "json_template",
              "instructions": "instructions_template", "tool_call": "tool_template"}  # fmt: skip
    manifest["lane"].update({key: table.pop(name) for name, key in before.items()})
    del table["math"]
    manifest["lane"]["templates"] = table  # the types without a key of before (code)
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main([*args, "--resume"]) in (0, 1)


def test_a_template_moved_to_the_table_resumes_the_run_it_made(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The manifest records a template by its type whichever way the lane wrote it (issue 31): a run made with
    `math_template` resumes with the same template in `[lanes.L.templates]`, and a changed one is still refused."""
    lanes, out = tmp_path / "lanes.toml", tmp_path / "run"
    head = f'[lanes.L]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nsuite = "demo-math"\n'
    args = ["run", "--config", str(lanes), "--lane", "L", "--out", str(out)]
    lanes.write_text(head + 'math_template = "{question} Box it."\n', encoding="utf-8")
    assert main(args) in (0, 1)
    assert "math_template is read as before, but templates are one table now" in capsys.readouterr().out
    lanes.write_text(head + '[lanes.L.templates]\nmath = "{question} Box it."\n', encoding="utf-8")
    assert main([*args, "--resume"]) in (0, 1)
    assert "templates are one table now" not in capsys.readouterr().out
    lanes.write_text(head + '[lanes.L.templates]\nmath = "{question} Box it!"\n', encoding="utf-8")
    assert main([*args, "--resume"]) == 2
    assert "lane settings differ from the interrupted run (templates.math)" in capsys.readouterr().err


def test_resume_repairs_a_torn_last_line(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_lane(lane(sim.base_url), out, progress=quiet, score=score_run_dir)
    samples = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
    (out / "samples.jsonl").write_bytes(b"".join(samples[:6]) + samples[6][:25])  # died mid-write
    result = run_lane(lane(sim.base_url), out, resume=True, progress=quiet, score=score_run_dir)
    assert result.ran == 4
    assert sorted(s["task_id"] for s in read_jsonl(out / "samples.jsonl")) == sorted(
        json.loads(line)["id"] for line in (out / "suite.jsonl").read_text().splitlines()
    )


def test_resume_after_a_lost_final_newline(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_lane(lane(sim.base_url), out, progress=quiet, score=score_run_dir)
    samples = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
    (out / "samples.jsonl").write_bytes(b"".join(samples[:6]).rstrip(b"\n"))  # whole lines, no final newline
    assert run_lane(lane(sim.base_url), out, resume=True, progress=quiet, score=score_run_dir).ran == 4
    assert len(read_jsonl(out / "samples.jsonl")) == 10


@pytest.mark.slow  # ocllm in a process, killed
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    # Slow enough that the 44 tasks left after the 15th answer take seconds: the kill lands part-way however late
    # a loaded machine lets this process see the 15th.
    with SimServer(SimConfig(suites=SUITES, latency_s=0.1)) as server:
        args = [
            sys.executable,
            "-m",
            "ocllm",
            "run",
            "--suite",
            "demo",
            "--base-url",
            server.base_url,
            "--model",
            "sim-reasoning",
            "--reasoning",
            "native",
            "--concurrency",
            "2",
        ]
        killed = tmp_path / "killed"
        proc = subprocess.Popen([*args, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples = killed / "samples.jsonl"
        wait_until(lambda: samples.exists() and samples.read_bytes().count(b"\n") >= 15)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        partial = samples.read_bytes().count(b"\n")
        assert 15 <= partial < 59, "the run should have been killed part-way"
        assert subprocess.run([*args, "--out", str(killed), "--resume"], capture_output=True).returncode == 0
        whole = tmp_path / "whole"
        assert subprocess.run([*args, "--out", str(whole)], capture_output=True).returncode == 0

    resumed = read_jsonl(samples)
    assert len(resumed) == 59 == len({s["task_id"] for s in resumed})
    a = json.loads((killed / "metrics.json").read_text())
    b = json.loads((whole / "metrics.json").read_text())
    # The figures, not the timing: how fast each was served differs from run to run.
    assert {**a["summary"], "serving": None} == {**b["summary"], "serving": None}
    assert [{k: t[k] for k in DECISION_KEYS} for t in a["tasks"]] == [
        {k: t[k] for k in DECISION_KEYS} for t in b["tasks"]
    ]
    # The raw outputs are in samples.jsonl only (metrics.json names the file): the same there too.
    assert a["source"]["raw_outputs"] == "samples.jsonl" and "raw_content" not in a["tasks"][0]
    outputs = ("task_id", "content", "reasoning", "finish_reason")
    by_id = {s["task_id"]: [s.get(k) for k in outputs] for s in read_jsonl(whole / "samples.jsonl")}
    assert {s["task_id"]: [s.get(k) for k in outputs] for s in resumed} == by_id


def test_api_key_is_never_written(
    sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "sk-ocllm-TESTKEY-7f3a9c1e5b"
    monkeypatch.setenv("OCLLM_TEST_KEY", key)
    run_lane(lane(sim.base_url, api_key_env="OCLLM_TEST_KEY"), tmp_path / "ok", progress=quiet, score=score_run_dir)
    with FaultServer() as broken:
        broken.script(models("sim-reasoning"), then=Reply(status=500, body="overloaded"))
        dead = lane(broken.base_url, api_key_env="OCLLM_TEST_KEY", max_attempts=1)
        run_lane(dead, tmp_path / "failed", progress=quiet, score=score_run_dir)
    assert (
        main(["rescore", str(tmp_path / "ok"), "-o", str(tmp_path / "re.json"), "--report", str(tmp_path / "audit.md")])
        == 0
    )
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 9
    for path in written:
        assert key.encode() not in path.read_bytes(), path
    captured = capsys.readouterr()
    assert key not in captured.out + captured.err
    manifest = json.loads((tmp_path / "ok" / "manifest.json").read_text())
    assert manifest["lane"]["api_key_env"] == "OCLLM_TEST_KEY"


def test_missing_api_key_variable_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            "--suite",
            "smoke",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--api-key-env",
            "OCLLM_SURELY_UNSET_VAR",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2 and "OCLLM_SURELY_UNSET_VAR" in capsys.readouterr().err


BAD_SUITES = {
    "bad_json": ('{"id": "a", "type": "mcq"\n', ":1: invalid JSON"),
    "missing_field": (
        '{"id": "a", "type": "mcq", "question": "q", "options": ["1", "2"], "answer": "A"}\n',
        ":1: missing field 'category'",
    ),
    "gold_outside": (
        '{"id": "a", "type": "mcq", "question": "q", "options": ["1", "2"], "answer": "C", "category": "c"}\n',
        ":1: field 'answer'",
    ),
    "duplicate": (
        '{"id": "a", "type": "required_substrings", "question": "q", "required_substrings": ["x"], '
        '"category": "c"}\n' * 2,
        ":2: field 'id': 'a' already used on line 1",
    ),
    "one_option": (
        '{"id": "a", "type": "mcq", "question": "q", "options": ["1"], "answer": "A", "category": "c"}\n',
        ":1: field 'options'",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_SUITES))
def test_bad_suite_is_refused_before_any_request(tmp_path: Path, name: str) -> None:
    text, expected = BAD_SUITES[name]
    suite = tmp_path / f"{name}.jsonl"
    suite.write_text(text)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ocllm",
            "run",
            "--suite",
            str(suite),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert f"{suite}{expected}" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_matrix_runs_every_lane_from_toml(sim: SimServer, tmp_path: Path) -> None:
    config = tmp_path / "lanes.toml"
    config.write_text(
        f'[defaults]\nbase_url = "{sim.base_url}"\nsuite = "smoke"\n\n'
        '[lanes.A_baseline]\nmodel = "sim-baseline"\nreasoning = "off"\n\n'
        '[lanes.B_native_reasoning]\nmodel = "sim-reasoning"\nreasoning = "native"\nstream = true\n'
    )
    assert main(["matrix", str(config), "--out", str(tmp_path / "m")]) == 0
    for name in ("A_baseline", "B_native_reasoning"):
        assert json.loads((tmp_path / "m" / name / "metrics.json").read_text())["summary"]["total"] == 10
    a = read_jsonl(tmp_path / "m" / "A_baseline" / "samples.jsonl")
    assert all(s.get("reasoning") is None for s in a)
    assert main(["run", "--config", str(config), "--lane", "B_native_reasoning", "--out", str(tmp_path / "one")]) == 0
    assert main(["run", "--config", str(config), "--lane", "nope"]) == 2


def test_bad_lanes_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "lanes.toml"
    config.write_text('[lanes.A]\nbase_url = "http://x/v1"\nmodel = "m"\ntemperture = 0.2\n')
    assert main(["matrix", str(config)]) == 2
    assert "temperture" in capsys.readouterr().err


@pytest.mark.slow  # ocllm in a process
def test_plain_progress_lines_when_not_a_terminal(sim: SimServer, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ocllm",
            "run",
            "--suite",
            "smoke",
            "--base-url",
            sim.base_url,
            "--model",
            "sim-baseline",
            "--out",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0
    assert "[r] 10/10 done" in proc.stderr and "acc " in proc.stderr and "errors 0" in proc.stderr


def test_rescore_a_run_directory(sim: SimServer, tmp_path: Path) -> None:
    run_lane(lane(sim.base_url, suite="demo"), tmp_path / "run", progress=quiet, score=score_run_dir)
    assert main(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "re.json"), "--allow-reasoning-fallback"]) == 0
    doc = json.loads((tmp_path / "re.json").read_text())
    original = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert doc["summary"]["total"] == 59
    assert doc["summary"]["correct"] >= original["summary"]["correct"]
    assert all("correct" in t["previous"] for t in doc["tasks"])


def test_rescore_never_writes_over_a_run_directory_file(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_lane(lane(sim.base_url), out, progress=quiet, score=score_run_dir)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for name in ("samples.jsonl", "suite.jsonl", "manifest.json", "metrics.json"):
        assert main(["rescore", str(out), "-o", str(out / name)]) == 2
    assert main(["rescore", str(out), "-o", str(tmp_path / "x.json"), "--report", str(tmp_path / "x.json")]) == 2
    assert main(["rescore", str(out), "-o", str(tmp_path)]) == 2  # a directory
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["rescore", str(out), "-o", str(blocker / "x.json")]) == 2  # cannot create a folder there
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_damaged_manifest_and_metrics_do_not_stop_a_rescore(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_lane(lane(sim.base_url), out, progress=quiet, score=score_run_dir)
    for manifest, metrics in (("[]", "[1]"), ('{"lane": null}', '{"tasks": [{"task_id": ["a"]}]}')):
        (out / "manifest.json").write_text(manifest)
        (out / "metrics.json").write_text(metrics)
        assert main(["rescore", str(out), "-o", str(tmp_path / "r.json")]) == 0
        assert main(["report", str(out), "-o", str(tmp_path / "rep")]) == 0
    assert run_cli(sim.base_url, out, "--reasoning", "native", "--resume") == 2  # cannot check what it would resume


def test_an_interrupted_run_is_reported_incomplete(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_lane(lane(sim.base_url), out, progress=quiet, score=score_run_dir)
    samples = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
    (out / "samples.jsonl").write_bytes(b"".join(samples[:4]))
    assert main(["rescore", str(out), "-o", str(tmp_path / "r.json")]) == 0
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert (summary["total"], summary["missing"], summary["complete"]) == (4, 6, False)


def test_policy_flags_replace_only_what_they_name(sim: SimServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_lane(
        lane(sim.base_url, conflict_policy="strict", allow_reasoning_fallback=True),
        out,
        progress=quiet,
        score=score_run_dir,
    )
    assert main(["rescore", str(out), "-o", str(tmp_path / "a.json"), "--conflict-policy", "last"]) == 0
    scorer = json.loads((tmp_path / "a.json").read_text())["summary"]["scorer"]
    assert (scorer["conflict_policy"], scorer["allow_reasoning_fallback"]) == ("last", True)
    assert main(["rescore", str(out / "metrics.json"), "-o", str(tmp_path / "b.json")]) == 0
    scorer = json.loads((tmp_path / "b.json").read_text())["summary"]["scorer"]
    assert (scorer["conflict_policy"], scorer["allow_reasoning_fallback"]) == ("strict", True)
    assert main(["rescore", str(out), "-o", str(tmp_path / "c.json"), "--no-reasoning-fallback"]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["summary"]["scorer"]["allow_reasoning_fallback"] is False


NOT_FOUND = Reply(status=404, json={"detail": "Not Found"})


@pytest.mark.parametrize(
    ("first", "then", "base_suffix", "message"),
    [
        (Reply(status=503, json={"error": {"message": "Loading model"}}), None, "/v1", "not ready"),
        (NOT_FOUND, NOT_FOUND, "", "is '/v1' missing"),
        (Reply(json={"error": "Unexpected endpoint or method. (GET /models)"}), NOT_FOUND, "", "is '/v1' missing"),
        (Reply(status=401, json={"error": "bad key"}), None, "/v1", "refused the credentials"),
        (
            models("a", "b"),
            Reply(status=404, json={"error": {"message": "model m does not exist"}}),
            "/v1",
            "a request for model 'm' fails (served: a, b): HTTP 404",
        ),
    ],
)
def test_servers_that_cannot_answer_are_refused_up_front(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    first: Reply,
    then: Reply | None,
    base_suffix: str,
    message: str,
) -> None:
    monkeypatch.setattr("ocllm.run.http_engine._NOT_READY_WAIT_S", 0.01)
    with FaultServer() as server:
        server.script(first, then=then or first)
        base = server.base_url.removesuffix("/v1") + base_suffix
        code = main(["run", "--suite", "smoke", "--base-url", base, "--model", "m", "--out", str(tmp_path / "r")])
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_lenient_model_checks_and_notices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Ollama's ":latest"; a single-model server under another name; a server without /models.
    for first, out in (
        (models("qwen3:latest", "llama3:latest"), "a"),
        (models("/models/q.gguf"), "b"),
        (Reply(status=404, body="no"), "c"),
    ):
        with FaultServer() as server:
            server.script(first, then=answer(reasoning_content="thinking anyway"))
            code = run_cli(server.base_url, tmp_path / out, model="qwen3")
        assert code == 0
    printed = capsys.readouterr().out
    assert "model 'qwen3' is not among those the server lists (/models/q.gguf); it answers, as 'm'" in printed
    assert "the lane asked for model 'qwen3', but the server answered as 'm'" in printed
    assert "/models answered with an error" in printed and "requests work" in printed
    assert "reasoning is off for this lane, yet 10 response(s) carried reasoning" in printed


def test_a_run_with_failed_requests_exits_1_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FaultServer() as server:
        # A 400 that names no configuration problem (one that does stops the lane: tests/test_refusals.py).
        server.script(models("m"), then=Reply(status=400, json={"error": {"message": "'messages' is required"}}))
        code = main(
            ["run", "--suite", "smoke", "--base-url", server.base_url, "--model", "m", "--out", str(tmp_path / "r")]
        )
    out = capsys.readouterr().out
    assert code == 1 and "10 task(s) failed: HTTP 400" in out and "'messages' is required" in out
    assert "n/a" in out  # nothing was scored, so there is no accuracy to show


def test_omit_fields_and_aborted_generations(tmp_path: Path) -> None:
    with FaultServer() as server:
        aborted = answer("FINAL: A")
        aborted.json["choices"][0]["finish_reason"] = "abort"
        server.script(models("m"), aborted, then=answer())
        result = run_lane(
            lane(
                server.base_url,
                model="m",
                stream=False,
                omit_fields=["seed", "chat_template_kwargs"],
                max_attempts=2,
                concurrency=1,
            ),
            tmp_path / "r",
            progress=quiet,
            score=score_run_dir,
        )
        bodies = [r.body for r in server.requests[1:]]
    assert result.summary.errors == 0 and result.ran == 10
    assert all(b"seed" not in b and b"chat_template_kwargs" not in b for b in bodies)
    assert len(bodies) == 11  # the aborted generation was retried


def test_an_unlisted_alias_that_the_server_accepts_is_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # llama-swap and routers accept names they do not list: one request decides, not the list.
    with FaultServer() as server:
        server.script(models("qwen3-8b", "llama-3.1-8b"), then=answer())
        code = main(
            ["run", "--suite", "smoke", "--base-url", server.base_url, "--model", "coder", "--out", str(tmp_path / "r")]
        )
    assert code == 0 and "is not among those the server lists" in capsys.readouterr().out


def test_the_runs_own_decisions_equal_a_fresh_rescore_of_its_samples(sim: SimServer, tmp_path: Path) -> None:
    # The run decides each answer once, as it arrives, and metrics.json is written from those decisions;
    # deciding the saved samples afresh must give the very same records, evidence included.
    out = tmp_path / "run"
    first = lane(sim.base_url, suite="demo", allow_reasoning_fallback=True, concurrency=8)
    run_lane(first, out, progress=quiet, score=score_run_dir)
    assert not [p.name for p in out.iterdir() if p.name.startswith(".decisions")]  # the spool is gone
    assert main(["rescore", str(out), "-o", str(tmp_path / "fresh.json")]) == 0
    spooled = json.loads((out / "metrics.json").read_text())
    fresh = json.loads((tmp_path / "fresh.json").read_text())
    assert len(spooled["tasks"]) == 59
    apart = ("previous", "raw_content", "raw_reasoning")  # the run's raw outputs are in samples.jsonl
    for ran, again in zip(spooled["tasks"], fresh["tasks"], strict=True):
        assert {k: v for k, v in ran.items() if k not in apart} == {k: v for k, v in again.items() if k not in apart}
    assert spooled["summary"]["correct"] == fresh["summary"]["correct"]


def test_resumed_tasks_are_decided_afresh_and_new_ones_from_the_spool(sim: SimServer, tmp_path: Path) -> None:
    # Half the suite in a first invocation (stopped by a limit on the suite), the rest on --resume: the final
    # metrics hold every task, the earlier ones decided from disk, the later ones from this invocation's spool.
    out = tmp_path / "run"
    run_lane(lane(sim.base_url, suite="demo"), out, progress=quiet, score=score_run_dir)
    samples = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text("".join(samples[:30]))
    result = run_lane(lane(sim.base_url, suite="demo"), out, resume=True, progress=quiet, score=score_run_dir)
    assert result.ran == 29 and result.summary.total == 59
    assert main(["rescore", str(out), "-o", str(tmp_path / "fresh.json")]) == 0
    fresh = json.loads((tmp_path / "fresh.json").read_text())
    metrics = json.loads((out / "metrics.json").read_text())
    assert [t["correct"] for t in metrics["tasks"]] == [t["correct"] for t in fresh["tasks"]]


def test_a_runs_metrics_file_is_read_with_the_samples_beside_it(sim: SimServer, tmp_path: Path) -> None:
    # metrics.json of a run holds no raw outputs (samples.jsonl does): given the file, the reader reads the
    # run it belongs to, so the file re-scores and reports like the folder.
    run_lane(lane(sim.base_url, suite="demo"), tmp_path / "run", progress=quiet, score=score_run_dir)
    assert main(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "folder.json")]) == 0
    assert main(["rescore", str(tmp_path / "run" / "metrics.json"), "-o", str(tmp_path / "file.json")]) == 0
    folder = json.loads((tmp_path / "folder.json").read_text())
    file = json.loads((tmp_path / "file.json").read_text())
    assert folder["tasks"] == file["tasks"] and folder["summary"] == file["summary"]
    assert sum(bool(t["raw_content"]) for t in file["tasks"]) > 50


# --- issue 19, item 9: connections llama-server closes; every retry's reason counted and shown -------------------


def _stream_reply(close_after: bool) -> Stream:
    events = [
        {"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"content": "FINAL: B"}, "finish_reason": None}]},
        {"id": "x", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    return Stream([sse(*events)], close_after=close_after)


def _lanes_file(path: Path, base_url: str, **settings: object) -> Path:
    lane = {"base_url": base_url, "model": "m", "suite": "smoke", **settings}
    path.write_text("[lanes.L]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in lane.items()), encoding="utf-8")
    return path


LLAMA_CPP_PROPS = {"/props": Reply(json={"default_generation_settings": {}, "build_info": "b1"})}
VLLM_VERSION = {"/version": Reply(json={"version": "0.11.0"})}


def test_a_streamed_lane_against_a_server_closing_after_every_stream_spends_no_attempt(tmp_path: Path) -> None:
    # llama-server closes the connection after each streamed response although it announces keep-alive.
    with FaultServer(routes=LLAMA_CPP_PROPS) as server:
        server.script(models("m"), then=_stream_reply(close_after=True))
        lanes = _lanes_file(tmp_path / "lanes.toml", server.base_url, stream=True, max_attempts=1, concurrency=2)
        code = main(["run", "--config", str(lanes), "--lane", "L", "--out", str(tmp_path / "r")])
        met_a_closed_connection = [r.path for r in server.requests if r.closed]
    assert code == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert (manifest["requests"], manifest["retries"], manifest["resends"]) == (10, {}, 0)
    assert met_a_closed_connection == []  # each streamed request had a connection of its own


def test_a_streamed_lane_keeps_its_connections_where_the_server_keeps_them(tmp_path: Path) -> None:
    # vLLM keeps a streamed response's connection alive: a new one per request cost 20-25 ms of time to first token
    # at p95 at concurrency 64 (bench/bench_stream_fidelity.py). One request at a time: one connection for all ten.
    with FaultServer(routes=VLLM_VERSION) as server:
        server.script(models("m"), then=_stream_reply(close_after=False))
        lanes = _lanes_file(tmp_path / "lanes.toml", server.base_url, stream=True, max_attempts=1, concurrency=1)
        code = main(["run", "--config", str(lanes), "--lane", "L", "--out", str(tmp_path / "r")])
        peers = {r.peer for r in server.requests if r.path.endswith("/chat/completions")}
    assert code == 0 and len(peers) == 1
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert (manifest["server_kind"], manifest["requests"], manifest["resends"]) == ("vllm", 10, 0)


def test_a_streamed_lane_to_llama_cpp_opens_a_connection_per_request(tmp_path: Path) -> None:
    with FaultServer(routes=LLAMA_CPP_PROPS) as server:
        server.script(models("m"), then=_stream_reply(close_after=False))
        lanes = _lanes_file(tmp_path / "lanes.toml", server.base_url, stream=True, max_attempts=1, concurrency=1)
        code = main(["run", "--config", str(lanes), "--lane", "L", "--out", str(tmp_path / "r")])
        peers = [r.peer for r in server.requests if r.path.endswith("/chat/completions")]
    assert code == 0 and len(peers) == 10 and len(set(peers)) == 10


def test_kept_alive_connections_that_ran_out_are_resent_and_counted_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FaultServer() as server:
        server.script(models("m"), then=Reply(json=answer().json, close_after=True))
        lanes = _lanes_file(tmp_path / "lanes.toml", server.base_url, max_attempts=1, concurrency=1)
        code = main(["run", "--config", str(lanes), "--lane", "L", "--out", str(tmp_path / "r")])
        closed = sum(r.closed for r in server.requests)
    assert code == 0 and closed > 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert (manifest["requests"], manifest["retries"], manifest["resends"]) == (10, {}, closed)
    assert f"{closed} re-sent on a new connection" in capsys.readouterr().out


def test_every_retry_reason_is_counted_in_the_manifest_and_said_on_the_console_and_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FaultServer() as server:
        server.script(
            # The close on the run's first, new connection: on a reused one it would be re-sent free instead.
            models("m"),
            Close(),
            Reply(status=503, body="busy"),
            Reply(status=503, body="busy"),
            then=answer(),
        )
        lanes = _lanes_file(tmp_path / "lanes.toml", server.base_url, max_attempts=4, concurrency=1)
        code = main(["run", "--config", str(lanes), "--lane", "L", "--out", str(tmp_path / "r")])
    assert code == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["retries"] == {"HTTP 503": 2, "server disconnected": 1}
    said = "3 retries (a failed attempt sent again): HTTP 503 (2), server disconnected (1)"
    printed = capsys.readouterr().out
    assert "tasks this run: 10 (13 requests, 3 retries)" in printed and said in printed
    assert said in manifest["notices"]
    assert main(["report", str(tmp_path / "r")]) == 0
    assert said in (tmp_path / "r" / "report" / "report.md").read_text(encoding="utf-8")


# --- issue 19, item 10: the server's kind, and the request settings that make its runs repeat --------------------


@pytest.mark.parametrize(
    ("mimic", "kind", "added"),
    [
        ("llama.cpp", "llama.cpp", {"cache_prompt": False}),
        ("vllm", "vllm", {}),
        ("sglang", "sglang", {}),
        ("ollama", "ollama", {}),
        (None, "unknown", {}),
    ],
)
def test_the_server_kind_is_recorded_and_decides_what_is_added_to_each_request(
    tmp_path: Path, mimic: str | None, kind: str, added: dict[str, object]
) -> None:
    with SimServer(SimConfig(suites=SUITES, mimic=mimic)) as server:
        run_lane(lane(server.base_url), tmp_path / "r", progress=quiet, score=score_run_dir)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["server_kind"] == kind
    (identity,) = manifest["server_identity"]
    assert (identity["base_url"], identity["kind"]) == (server.base_url, kind)
    assert identity["version"] == (None if mimic is None else "ocllm-simulator")
    # Whatever kind it answers as, the simulator is recorded as such: its figures are simulated (issue 41).
    assert identity["simulated"] is True and manifest["simulated"] is True
    assert manifest["request_settings"] == added
    assert "cache_prompt" not in manifest["lane"]["extra_body"]  # the lane as the user wrote it
    requests = [s["request"] for s in read_jsonl(tmp_path / "r" / "samples.jsonl")]
    assert len(requests) == 10 and all({k: r.get(k) for k in added} == added for r in requests)
    if not added:
        assert not any("cache_prompt" in r for r in requests)
    caveat = [n for n in manifest["notices"] if n.startswith(f"{kind} server: ") and "differ" in n]
    assert bool(caveat) == (kind != "unknown")  # the lane runs 4 requests at once: llama.cpp's batches too


@pytest.mark.parametrize("concurrency", [1, 3])
def test_llama_cpp_runs_repeat_one_request_at_a_time_and_the_notice_says_why_not_otherwise(
    tmp_path: Path, concurrency: int
) -> None:
    with SimServer(SimConfig(suites=SUITES, mimic="llama.cpp")) as server:
        run_lane(lane(server.base_url, concurrency=concurrency), tmp_path / "r", progress=quiet, score=score_run_dir)
    notices = json.loads((tmp_path / "r" / "manifest.json").read_text())["notices"]
    batches = [n for n in notices if "share llama.cpp's batches" in n]
    if concurrency == 1:
        assert batches == []
    else:
        assert batches and "with concurrency 3" in batches[0] and "concurrency = 1 repeats exactly" in batches[0]


@pytest.mark.parametrize(
    ("settings", "sent"),
    [({"extra_body": {"cache_prompt": True}}, True), ({"repeatable": False}, None)],
    ids=["extra_body", "repeatable_false"],
)
def test_the_lane_wins_over_the_repeatability_settings_and_is_told_the_cost(
    tmp_path: Path, settings: dict[str, object], sent: bool | None
) -> None:
    with SimServer(SimConfig(suites=SUITES, mimic="llama.cpp")) as server:
        result = run_lane(lane(server.base_url, **settings), tmp_path / "r", progress=quiet, score=score_run_dir)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["request_settings"] == {}
    assert {s["request"].get("cache_prompt") for s in read_jsonl(tmp_path / "r" / "samples.jsonl")} == {sent}
    said = [n for n in manifest["notices"] if "cache_prompt" in n and "may differ" in n]
    assert said and said[0] in " ".join(result.notices + manifest["notices"])


def test_replicas_of_different_kinds_are_each_recorded_and_get_nothing_added(tmp_path: Path) -> None:
    with (
        SimServer(SimConfig(suites=SUITES, mimic="llama.cpp")) as first,
        SimServer(SimConfig(suites=SUITES, mimic="vllm")) as second,
    ):
        run_lane(lane([first.base_url, second.base_url]), tmp_path / "r", progress=quiet, score=score_run_dir)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert [i["kind"] for i in manifest["server_identity"]] == ["llama.cpp", "vllm"]
    assert manifest["server_kind"] == "llama.cpp, vllm" and manifest["request_settings"] == {}
    assert any("different kinds" in n for n in manifest["notices"])


def test_the_console_names_the_server_kind(sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with SimServer(SimConfig(suites=SUITES, mimic="llama.cpp")) as server:
        assert run_cli(server.base_url, tmp_path / "r") in (0, 1)
    # The simulator is named as what it is, and the kind it answers as beside it (issue 41: never just a kind).
    said = capsys.readouterr().out
    assert (
        "server: ocllm simulator (simulated answers, no real model), answering as llama.cpp "
        "(sent with every request: cache_prompt=false)"
    ) in said
    assert "SIMULATED: this run was answered by the ocllm simulator" in said
