"""What the user is told beside the figures (issue 8): runs that never finished, failed requests, the
model the server really served, truncation, reasoning asked for and never seen. Real runs against real
servers on 127.0.0.1 (the simulator and the scriptable fault server), real files, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faultserver import FaultServer, Reply, answer, models
from helpers import BACKSTOP_S, FIRES_ON_A_HELD_REQUEST_S, quiet, run_cli, wait_until, write_suite
from test_runner import lane

from ocllm.analysis.notices import Scored, run_notices
from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.models import Policy, Sample
from ocllm.run.runner import run_lane
from ocllm.scoring import decide, task_types
from ocllm.scoring.mcq.fields import McqTask
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

SUITE_LINES = [
    {"id": "m1", "type": "mcq", "question": "2+2?", "options": ["3", "4"], "answer": "B", "category": "maths"},
    {"id": "m2", "type": "mcq", "question": "3+3?", "options": ["6", "7"], "answer": "A", "category": "maths"},
    {"id": "s1", "type": "required_substrings", "question": "Say alpha.", "required_substrings": ["alpha"]},
    {"id": "s2", "type": "required_substrings", "question": "Say beta.", "required_substrings": ["beta"]},
]


def suite_file(tmp: Path) -> Path:
    return write_suite(tmp / "suite.jsonl", SUITE_LINES, category="text")


# --- The sentences themselves --------------------------------------------------------------------------


def scored(task: dict, content: str | None, *, finish: str = "stop", error: str | None = None, **kw: object) -> Scored:
    t = task_types.task_from({"category": "text", **task})
    sample = Sample(task_id=t.id, content=content, finish_reason=finish, error=error, **kw)  # type: ignore[arg-type]
    return Scored(sample, decide(t, sample, Policy()))


def test_a_clean_run_has_nothing_to_say() -> None:
    done = [scored(SUITE_LINES[0], "FINAL: B", model="m"), scored(SUITE_LINES[2], "alpha", model="m")]
    assert run_notices(done, in_suite=2, requested_model="m", reasoning="off") == []


def test_incomplete_comes_first_with_the_count() -> None:
    done = [scored(SUITE_LINES[0], None, error="HTTP 500 after 4 attempts: boom")]
    notices = run_notices(done, missing=3, in_suite=4)
    assert notices[0].startswith("INCOMPLETE: 3 of 4 tasks never ran")
    assert notices[1].startswith("1 of 1 task(s) failed") and "--retry-errors" in notices[1]
    assert notices[2] == "1 task(s) failed: HTTP 500 after 4 attempts: boom"


def test_truncation_is_counted_and_substring_passes_on_cut_output_are_named() -> None:
    done = [
        scored(SUITE_LINES[0], "Let me think", finish="length"),
        scored(SUITE_LINES[2], "alpha alpha and", finish="length"),  # passes, although cut off
        scored(SUITE_LINES[3], "beta.", finish="stop"),  # passes, finished
    ]
    notices = run_notices(done)
    assert notices[0].startswith("2 of 3 responses were cut off at max_tokens")
    assert notices[1].startswith("1 of the 2 required-substring passes came from truncated output")
    every = run_notices(done[:2])
    assert every[0].startswith("every response (2) was cut off at max_tokens")


def test_served_model_and_reasoning_mismatches() -> None:
    done = [scored(SUITE_LINES[0], "FINAL: B", model="smollm2")]
    assert run_notices(done, requested_model="smollm2:latest") == []  # Ollama's spelling of the same model
    (model_note,) = run_notices(done, requested_model="llama3")
    assert model_note == "the lane asked for model 'llama3', but the server answered as 'smollm2'"
    (native,) = run_notices(done, reasoning="native")
    assert native.startswith("reasoning is native for this lane, yet no response carried reasoning")
    tagged = [scored(SUITE_LINES[0], "<think>hm</think>FINAL: B")]
    assert run_notices(tagged, reasoning="native") == []  # think tags in the content are reasoning


# --- Said where the user looks ----------------------------------------------------------------------------


def test_a_model_served_under_another_name_is_said_before_the_run_starts(tmp_path: Path) -> None:
    said: list[tuple[str, int, bool]] = []
    out = tmp_path / "run"
    with FaultServer() as server:
        server.script(models("smollm2"), then=answer("FINAL: B", model="smollm2"))

        def announce(text: str) -> None:
            said.append((text, len(server.requests), (out / "samples.jsonl").exists()))

        result = run_lane(
            lane(server.base_url, model="llama3", suite=str(suite_file(tmp_path)), concurrency=1),
            out,
            progress=quiet,
            announce=announce,
            score=score_run_dir,
        )
    # Said after /models and the one trial request, before any task was sent or recorded.
    ((text, requests, recorded),) = said
    assert (requests, recorded) == (2, False)
    assert "'llama3' is not among those the server lists (smollm2)" in text and "as 'smollm2'" in text
    # Said once, before the run: not again, in other words, after the table (second review).
    assert not any("asked for model" in n for n in result.notices)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["served_model"] == "smollm2" and manifest["lane"]["model"] == "llama3"
    assert manifest["notices"][0] == text
    assert result.model == "smollm2"
    assert main(["report", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    assert "Model: smollm2; the lane asked for llama3" in report
    assert "the server answered as 'smollm2'" in report.split("## By category")[0]
    assert "model smollm2 (the lane asked for llama3)" in (out / "report" / "report.html").read_text()


@pytest.mark.slow  # runs with retries against a server
def test_resume_after_failed_requests_points_to_retry_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, suite = tmp_path / "run", suite_file(tmp_path)
    with FaultServer() as server:
        # A server error, which may pass when sent again (a 4xx would not: tests/test_refusals.py).
        server.script(models("m"), then=Reply(status=503, json={"error": {"message": "busy"}}))
        assert run_cli(server.base_url, out, suite=suite, concurrency=1) == 1
    capsys.readouterr()
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: A"))
        assert run_cli(server.base_url, out, "--resume", suite=suite, concurrency=1) == 1
        assert len(server.requests) == 1  # only /models: nothing was run again
    printed = capsys.readouterr().out
    assert "nothing left to run: every one of the 4 tasks has already run" in printed
    assert "4 of 4 task(s) failed" in printed and "--retry-errors" in printed
    assert "INCOMPLETE" not in printed  # every task ran: complete, with errors


def test_all_truncated_and_native_reasoning_never_seen_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FaultServer() as server:
        server.script(models("m"), then=answer("alpha beta FINAL: B and", finish_reason="length"))
        suite = suite_file(tmp_path)
        code = run_cli(server.base_url, tmp_path / "run", "--reasoning", "native", suite=suite, concurrency=1)
    printed = capsys.readouterr().out
    assert code == 0  # every task has an answer; what is off is said, not failed
    assert "note: every response (4) was cut off at max_tokens" in printed
    assert "2 of the 2 required-substring passes came from truncated output" in printed
    assert "reasoning is native for this lane, yet no response carried reasoning" in printed
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["summary"]["truncated"] == 4


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two finished runs of the smoke suite, one of them then cut back to 4 of its 10 tasks."""
    folder = tmp_path_factory.mktemp("matrix")
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as sim:
        for name in ("A_baseline", "B_cut"):
            run_lane(lane(sim.base_url, name=name), folder / name, progress=quiet, score=score_run_dir)
    samples = folder / "B_cut" / "samples.jsonl"
    samples.write_bytes(b"".join(samples.read_bytes().splitlines(keepends=True)[:4]))
    return folder / "A_baseline", folder / "B_cut"


INCOMPLETE = "INCOMPLETE: 6 of 10 tasks never ran"


def opening(lines: list[str]) -> list[str]:
    """The lines a page or the console opens with, blank lines and the simulator's banner aside (these runs are the
    simulator's: its banner stands above every figure, and the incomplete note comes next)."""
    return [line for line in lines if line.strip() and "SIMULATED" not in line]


def test_report_of_an_interrupted_run_opens_with_it(
    interrupted: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cut = interrupted
    assert main(["report", str(cut), "-o", str(tmp_path / "rep")]) == 0
    first_line = opening(capsys.readouterr().out.splitlines())[0]
    assert first_line.startswith("note: " + INCOMPLETE)
    markdown = opening((tmp_path / "rep" / "report.md").read_text().splitlines())
    assert markdown[1].startswith(f"> **⚠ {INCOMPLETE}")  # right under the title
    assert "**no: 6 of 10 tasks never ran**" in "\n".join(markdown)
    html = (tmp_path / "rep" / "report.html").read_text()
    assert html.index(INCOMPLETE) < html.index('id="summary"')


def test_compare_and_matrix_report_open_with_the_incomplete_side(
    interrupted: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full, cut = interrupted
    assert main(["compare", str(full), str(cut), "-o", str(tmp_path / "cmp")]) == 0
    first_line = opening(capsys.readouterr().out.splitlines())[0]
    assert first_line.startswith(f"note: B_cut: {INCOMPLETE}")
    doc = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert (doc["b"]["missing"], doc["b"]["tasks_in_suite"], doc["a"]["missing"]) == (6, 10, 0)
    assert opening((tmp_path / "cmp" / "comparison.md").read_text().splitlines())[1].startswith(
        f"> **⚠ B_cut: {INCOMPLETE}"
    )
    html = (tmp_path / "cmp" / "comparison.html").read_text()
    assert html.index(INCOMPLETE) < html.index('id="verdict"') and "B_cut incomplete: 6 tasks never ran" in html

    assert main(["matrix-report", str(full.parent), "-o", str(tmp_path / "mx")]) == 0
    assert opening(capsys.readouterr().out.splitlines())[0].startswith(f"note: B_cut: {INCOMPLETE}")
    assert f"B_cut: {INCOMPLETE}" in (tmp_path / "mx" / "matrix.md").read_text().split("## Leaderboard")[0]


# --- Progress: a stall is visible, the rate follows the recent speed ------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_and_eta_follow_the_recent_finishes(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from ocllm.run.progress import RunProgress

    clock = Clock()
    monkeypatch.setattr("ocllm.run.progress.time.monotonic", clock)
    bar = RunProgress("L", 100, stream=io.StringIO())
    for _ in range(30):  # one task a second
        bar.start()
        clock.now += 1.0
        bar.answered()
        bar.judged(True, False)
    assert bar.rate() == pytest.approx(20 / 19)  # the last 20 finishes span 19 s
    bar.start()
    clock.now += 60.0  # one slow task: nothing finishes for a minute
    status = bar.status()
    assert bar.rate() == pytest.approx(20 / 79)
    assert "1 in flight" in status and "last finished 1m00s ago" in status
    assert "3.9s/task" in status and "0.0/s" not in status  # slow rates are shown per task, never as 0.0/s
    assert "eta 4m36s" in status  # 70 left at 20/79 per second: 276.5 s


def test_a_stalled_server_shows_in_the_progress_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from faultserver import Hang

    from ocllm.run.progress import RunProgress

    monkeypatch.setattr("ocllm.run.execute.TICK_S", 0.05)
    log = io.StringIO()
    with FaultServer() as server:
        # The first request is held until it times out: its seconds are many ticks, however loaded the machine.
        server.script(models("m"), Hang(600), then=answer("FINAL: B"))
        timeout = FIRES_ON_A_HELD_REQUEST_S
        run_lane(
            lane(server.base_url, model="m", suite=str(suite_file(tmp_path)), concurrency=1, timeout_s=timeout),
            tmp_path / "run",
            progress=lambda label, total, done: RunProgress(label, total, done, stream=log, interval_s=0.05),
            score=score_run_dir,
        )
    lines = log.getvalue().splitlines()
    # While the first request hangs, lines keep coming: one in flight, nothing finished yet.
    stalled = [line for line in lines if "1 in flight" in line and "waiting" in line and "0/4 done" in line]
    assert len(stalled) >= 2, lines
    assert lines[-1].startswith("[L] 4/4 done, 0 in flight") and "last finished 0s ago" in lines[-1]


def test_piped_tables_never_wrap_a_figure(tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    from conftest import legacy_record, write_json

    category = "reasoning_mmlu_pro_engineering_and_applied_sciences"
    sides = []
    for name, right in (("lane_a_with_a_long_name", 6), ("lane_b_with_a_long_name", 9)):
        records = [
            legacy_record(f"t{i}", "FINAL: B" if i < right else "FINAL: A", category=category) for i in range(12)
        ]
        sides.append(str(write_json(tmp_path / f"{name}.json", {"tasks": records})))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run(
        [sys.executable, "-m", "ocllm", "compare", *sides, "-o", str(tmp_path / "c")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    # The whole difference and its interval stand on the row of their scope, on one line.
    figure = r"[+-]\d+\.\d \([+-]\d+\.\d to [+-]\d+\.\d\)"
    assert re.search(rf"{category} .*{figure}", proc.stdout), proc.stdout
    assert re.search(rf"all .*{figure}", proc.stdout), proc.stdout


# --- Prefilled thinking, detected (issue 9) ------------------------------------------------------------------


def test_closing_think_without_an_opening_one_suggests_think_prefilled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import legacy_record, write_json

    records = [
        legacy_record("t1", "Okay, 2 + 2 is 4, option B.\n</think>\n\nFINAL: B", correct=True),
        legacy_record("t2", "Hmm, so FINAL: B. Wait, let me recheck the sum of", correct=False),  # cut off
        legacy_record("t3", "<think>easy</think>FINAL: B", correct=True),
    ]
    path = write_json(tmp_path / "old.json", {"tasks": records})
    assert main(["rescore", str(path), "-o", str(tmp_path / "a.json")]) == 0
    printed = capsys.readouterr().out
    assert "note: 1 of 3 output(s) close a </think> they never opened" in printed
    assert "with think_prefilled = true, 1 decision(s) would change" in printed  # t2, read as B until then
    assert json.loads((tmp_path / "a.json").read_text())["notices"][0].startswith("1 of 3 output(s) close")
    assert main(["rescore", str(path), "-o", str(tmp_path / "b.json"), "--think-prefilled"]) == 0
    assert "never opened" not in capsys.readouterr().out
    assert json.loads((tmp_path / "b.json").read_text())["notices"] == []


def test_a_run_says_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # One output closes a </think> it never opened; the three others have none, and would be read as thinking
    # with think_prefilled = true: the two MCQ letters lost, the two substring passes failed (3 of them here).
    with FaultServer() as server:
        server.script(models("m"), answer("so the answer is B\n</think>\nFINAL: B"), then=answer("alpha beta FINAL: A"))
        assert run_cli(server.base_url, tmp_path / "run", suite=suite_file(tmp_path), concurrency=1) == 0
    printed = capsys.readouterr().out
    assert "note: 1 of 4 output(s) close a </think> they never opened" in printed
    assert "with think_prefilled = true, 3 decision(s) would change" in printed


# --- Prefilled thinking: advised only when it would change a decision (issue 19, item 13) -------------------

# Qwen3 with a logit bias that closes its thinking at once: every output begins with </think>, nothing before.
CLOSED_AT_ONCE = "</think>\n\nThe sum is 4, option B.\n\nFINAL: B"


def test_a_run_whose_outputs_close_at_once_gets_no_advice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FaultServer() as server:
        server.script(models("m"), then=answer(CLOSED_AT_ONCE.replace("FINAL: B", "alpha beta FINAL: B")))
        assert run_cli(server.base_url, tmp_path / "run", suite=suite_file(tmp_path), concurrency=1) == 0
    printed = capsys.readouterr().out
    assert "never opened" not in printed and "think_prefilled" not in printed, printed
    assert main(["report", str(tmp_path / "run"), "-o", str(tmp_path / "rep")]) == 0
    assert "never opened" not in capsys.readouterr().out
    manifest = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert not any("never opened" in n for n in manifest["notices"])


def test_rescore_advises_only_with_decisions_to_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import legacy_record, write_json

    closed = [legacy_record(f"c{i}", CLOSED_AT_ONCE, correct=True) for i in range(4)]
    opened = [legacy_record("o1", "<think>easy</think>FINAL: B", correct=True)]
    unfinished = [legacy_record("u1", "Hmm, let me think about the sum of", correct=False)]  # no statement
    plain = write_json(tmp_path / "plain.json", {"tasks": closed + opened + unfinished})
    assert main(["rescore", str(plain), "-o", str(tmp_path / "a.json")]) == 0
    assert "never opened" not in capsys.readouterr().out
    assert json.loads((tmp_path / "a.json").read_text())["notices"] == []

    # Two outputs cut off before their </think>, each read as a visible answer until think_prefilled is set:
    # one names the right letter (correct until then), one the wrong letter (still wrong, but no longer A).
    cut = [
        legacy_record("u2", "Okay, 2 + 2 = 4, so FINAL: B. Wait, let me double", correct=True),
        legacy_record("u3", "So FINAL: A? No, let me redo the", correct=False),
    ]
    mixed = write_json(tmp_path / "mixed.json", {"tasks": closed + opened + unfinished + cut})
    assert main(["rescore", str(mixed), "-o", str(tmp_path / "b.json")]) == 0
    note = (
        "4 of 8 output(s) close a </think> they never opened; with think_prefilled = true, 2 decision(s) would change"
    )
    assert note in capsys.readouterr().out
    assert json.loads((tmp_path / "b.json").read_text())["notices"][0].startswith(note)
    assert main(["report", str(mixed), "-o", str(tmp_path / "rep")]) == 0
    assert note in capsys.readouterr().out
    assert main(["rescore", str(mixed), "-o", str(tmp_path / "c.json"), "--think-prefilled"]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["notices"] == []


def test_rescore_from_another_tool_advises_by_the_same_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import write_json
    from test_rescore_from import mmlu_pro_result

    records = [mmlu_pro_result(i, "B", "B", "</think>\nSo the answer is (B).") for i in range(3)]
    path = write_json(tmp_path / "math_result.json", records)
    assert main(["rescore", "--from", "mmlu-pro", str(path), "-o", str(tmp_path / "a.json")]) == 0
    assert "never opened" not in capsys.readouterr().out
    records.append(mmlu_pro_result(9, "B", "B", "Okay, the answer is (B). But wait, the"))  # cut off, no </think>
    (tmp_path / "more").mkdir()
    path = write_json(tmp_path / "more" / "math_result.json", records)
    assert main(["rescore", "--from", "mmlu-pro", str(path), "-o", str(tmp_path / "b.json")]) == 0
    note = "3 of 4 output(s) close a </think> they never opened; with think_prefilled = true, 1 decision(s)"
    assert note in capsys.readouterr().out


def test_the_tally_counts_without_the_outputs() -> None:
    """A streaming tally: it keeps counters, never the samples it was given (a rescore of any size)."""
    from ocllm.analysis.notices import NoticeTally

    task = McqTask(id="t", question="q", options=["3", "4"], answer="B", category="x")
    tally = NoticeTally(Policy())
    for i in range(200):
        content = CLOSED_AT_ONCE if i % 2 else "so FINAL: B, but let me check the"
        sample = Sample(task_id="t", content=content, finish_reason="length")
        tally.add(sample, decide(task, sample, Policy()), task)
    assert (tally.closed_only, tally.prefill_changes) == (100, 100)
    names = ("reasons", "models", "retries", "text_passes", "cut_passes")  # Counters of names (of reasons, types)
    kept = [v for k, v in vars(tally).items() if k not in names]
    assert not any(isinstance(v, (list, dict, tuple, Sample)) for v in kept)


def test_run_takes_every_scoring_switch_that_rescore_takes(tmp_path: Path) -> None:
    """Issue 10: `run` lacked --think-prefilled and could not switch reasoning fallback off."""
    config = tmp_path / "lanes.toml"
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: B"))
        config.write_text(
            f'[lanes.L]\nbase_url = "{server.base_url}"\nmodel = "m"\nsuite = "{suite_file(tmp_path)}"\n'
            "allow_reasoning_fallback = true\n"
        )
        out = tmp_path / "run"
        args = ["run", "--config", str(config), "--lane", "L", "--out", str(out)]
        assert main([*args, "--think-prefilled", "--no-reasoning-fallback", "--conflict-policy", "strict"]) == 0
    lane = json.loads((out / "manifest.json").read_text())["lane"]
    assert (lane["think_prefilled"], lane["allow_reasoning_fallback"], lane["conflict_policy"]) == (
        True,
        False,
        "strict",
    )
    scorer = json.loads((out / "metrics.json").read_text())["summary"]["scorer"]
    assert (scorer["think_prefilled"], scorer["allow_reasoning_fallback"]) == (True, False)


# --- The second review of issues 8 and 10 ----------------------------------------------------------------------


def test_paths_with_markup_are_printed_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import REPO

    out = tmp_path / "x[/bold].json"
    report = tmp_path / "y[red].md"
    example = REPO / "examples" / "old_harness_metrics.json"
    assert main(["rescore", str(example), "-o", str(out), "--report", str(report)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and f"wrote {report}" in printed


def test_resume_mistakes_are_found_before_the_server_is_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ports import refused_port

    out, suite = tmp_path / "run", suite_file(tmp_path)
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: B"))
        assert run_cli(server.base_url, out, suite=suite, concurrency=1) == 0
    capsys.readouterr()
    down = f"http://127.0.0.1:{refused_port()}/v1"  # nothing listens there
    assert run_cli(down, out, "--resume", "--max-tokens", "7", suite=suite, concurrency=1) == 2
    err = capsys.readouterr().err
    assert "lane settings differ from the interrupted run (max_tokens)" in err and "cannot reach" not in err


def test_retrying_a_run_whose_every_task_failed_keeps_its_start_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run folder's clock, injected: every reading is a minute after the last, so the retry's own time
    # differs from the first run's however fast the machine is (manifests record whole seconds).
    readings = iter(range(60))
    monkeypatch.setattr("ocllm.run.directory._now", lambda: f"2030-01-01T00:{next(readings):02d}:00+00:00")
    out, suite = tmp_path / "run", suite_file(tmp_path)
    with FaultServer() as server:
        server.script(models("m"), then=Reply(status=400, json={"error": {"message": "no"}}))
        assert run_cli(server.base_url, out, suite=suite, concurrency=1) == 1
    started = json.loads((out / "manifest.json").read_text())["started_at"]
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: B"))
        assert run_cli(server.base_url, out, "--retry-errors", suite=suite, concurrency=1) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["started_at"] == started and manifest["status"] == "finished"
    assert manifest["finished_at"] > started  # the retry read the clock: a start time taken anew would differ
    assert not any(n.startswith("nothing left to run") for n in manifest["notices"])


def test_ctrl_c_while_the_server_is_asked_says_nothing_was_written(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from faultserver import Hang

    out = tmp_path / "run"
    with FaultServer() as server:
        server.script(Hang(30.0))  # /models never answers
        proc = subprocess.Popen(
            [sys.executable, "-m", "ocllm", "run", "--suite", str(suite_file(tmp_path)), "--base-url",
             server.base_url, "--model", "m", "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert wait_until(lambda: server.requests or proc.poll() is not None) and server.requests, "nothing asked"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 130
    assert "nothing was written (the run had not started)" in err and "--resume" not in err
    assert not out.exists()


def test_requests_and_retries_are_counted_across_retry_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: "requests this run" counted tasks, and --retry-errors dropped what the failed attempts cost."""
    out, suite = tmp_path / "run", suite_file(tmp_path)
    with FaultServer() as server:
        server.script(models("m"), Reply(status=500, body="busy"), then=answer("FINAL: A"))
        assert run_cli(server.base_url, out, suite=suite, concurrency=1) == 0
    assert "tasks this run: 4 (5 requests, 1 retries)" in capsys.readouterr().out
    assert json.loads((out / "manifest.json").read_text())["requests"] == 5
    with FaultServer() as server:
        server.script(models("m"), then=Reply(status=400, json={"error": {"message": "no"}}))
        assert run_cli(server.base_url, tmp_path / "failing", suite=suite, concurrency=1) == 1
    with FaultServer() as server:
        server.script(models("m"), then=answer("FINAL: A"))
        assert run_cli(server.base_url, tmp_path / "failing", "--retry-errors", suite=suite, concurrency=1) == 0
    # 4 failed requests, then 4 that answered: the run cost 8, though only 4 lines remain.
    assert json.loads((tmp_path / "failing" / "manifest.json").read_text())["requests"] == 8


@pytest.mark.parametrize(
    ("content", "fallback", "changes"),
    [
        ("so FINAL: B, but let me check the", False, True),  # B, then nothing visible
        ("so FINAL: B, but let me check the", True, False),  # the fallback reads the same B from the thinking
        ("Hmm, nothing said yet about the", False, False),  # no letter either way
        ("Hmm, nothing said yet about the", True, False),
        ("<think>sum</think>FINAL: B</think>", False, True),  # a stray closer: all of it thinking when prefilled
        ("<think>sum</think>FINAL: B</think>", True, False),
        (CLOSED_AT_ONCE, False, False),  # read the same either way (rule 1)
        ("<think>sum</think>FINAL: B", False, False),
    ],
)
def test_what_think_prefilled_would_change(content: str, fallback: bool, changes: bool) -> None:
    """Hand-labelled: the tally's count, whether it decides an output again or knows the answer by rule 5."""
    from ocllm.analysis.notices import NoticeTally

    task = McqTask(id="t", question="q", options=["3", "4"], answer="B", category="x")
    policy = Policy(allow_reasoning_fallback=fallback)
    sample = Sample(task_id="t", content=content, finish_reason="length")
    tally = NoticeTally(policy)
    tally.add(sample, decide(task, sample, policy), task)
    assert tally.prefill_changes == changes
