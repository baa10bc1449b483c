"""A slow server does not look stuck (issue 30, item 5), against scripted servers on 127.0.0.1.

The progress line counts timeouts and retries as they happen ("2 timed out after 5 s, retrying: attempt 2 of 2")
and says the hint of docs/lanes.md when the first timeout happens; the manifest counts every attempt made, a run
interrupted while attempts are in flight included. No wall-clock time is asserted: only what the progress and the
manifest say.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from faultserver import FaultServer, Hang, answer, models
from helpers import BACKSTOP_S, FIRES_ON_A_HELD_REQUEST_S, sums, wait_until, write_suite

from ocllm.analysis.rescore import score_run_dir
from ocllm.run.client import FailedAttempt
from ocllm.run.lanes import Lane
from ocllm.run.progress import RunProgress
from ocllm.run.runner import run_lane

pytestmark = pytest.mark.slow  # ocllm and a slow server in processes, interrupted


def test_timeouts_and_retries_show_as_they_happen_and_every_attempt_is_counted(tmp_path: Path) -> None:
    shown = io.StringIO()  # not a terminal: plain lines, one per refresh (interval 0)

    def progress(label: str, total: int, done: int) -> RunProgress:
        return RunProgress(label, total, done, stream=shown, interval_s=0.0)

    timeout = FIRES_ON_A_HELD_REQUEST_S
    with FaultServer() as server:
        # Both tasks' first attempts time out (concurrency 1); the second attempt of each answers.
        server.script(models("m"), Hang(600), answer(), Hang(600), then=answer())
        lane = Lane(
            name="slow", base_url=server.base_url, model="m", suite=str(write_suite(tmp_path / "suite.jsonl", sums(2))),
            concurrency=1, timeout_s=timeout, max_attempts=2,
        )  # fmt: skip
        result = run_lane(lane, tmp_path / "run", progress=progress, score=score_run_dir)
        sent = len(server.chat_requests)
    text = shown.getvalue()
    # The hint, once, when the first timeout happened.
    assert text.count(f"note: a request got no complete answer within timeout_s = {timeout:g} s") == 1
    assert "lower max_tokens" in text and "timeout_s raised to what max_tokens takes" in text
    # The progress line counted them live, with the retry in flight.
    assert f"1 timed out after {timeout:g} s, retrying: attempt 2 of 2" in text
    assert f"2 timed out after {timeout:g} s, retrying: attempt 2 of 2" in text
    assert text.rstrip().splitlines()[-1].startswith("[slow] 2/2 done")
    assert f"2 timed out after {timeout:g} s" in text.rstrip().splitlines()[-1]
    assert "retrying" not in text.rstrip().splitlines()[-1]  # nothing in flight at the end
    assert (result.summary.errors, sent, result.requests) == (0, 4, 4)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert (manifest["requests"], manifest["retries"]) == (4, {"timeout": 2})


def test_the_trouble_part_of_the_progress_line() -> None:
    bar = RunProgress("L", 3, stream=io.StringIO())
    assert bar.trouble() == ""
    bar.retry_moved(None, 2)
    bar.attempt_failed(FailedAttempt("HTTP 503", "http_status", 1, 4, retrying=True))
    assert bar.trouble() == "1 failed (HTTP 503), retrying: attempt 2 of 4"
    bar.retry_moved(None, 2)  # a second request, on its second attempt too
    bar.retry_moved(2, 3)
    bar.attempt_failed(FailedAttempt("timeout", "timeout", 2, 4, retrying=True, timeout_s=300.0))
    assert bar.trouble() == "1 timed out after 300 s, 1 failed (HTTP 503), retrying: attempt 3 of 4"
    assert "1 timed out after 300 s" in bar.status()
    bar.retry_moved(3, None)
    assert bar.trouble() == "1 timed out after 300 s, 1 failed (HTTP 503), retrying: attempt 2 of 4"
    bar.retry_moved(2, None)
    assert bar.trouble() == "1 timed out after 300 s, 1 failed (HTTP 503)"


def test_an_interrupted_run_counts_the_attempts_it_made(tmp_path: Path) -> None:
    out = tmp_path / "run"
    lanes = tmp_path / "lanes.toml"
    with FaultServer() as server:
        server.script(models("m"), then=Hang(600))  # no attempt ever answers
        suite = write_suite(tmp_path / "suite.jsonl", sums(4))
        lanes.write_text(
            f'[lanes.L]\nbase_url = "{server.base_url}"\nmodel = "m"\nsuite = "{suite}"\n'
            # Long enough a timeout that Ctrl-C lands while the second attempts are in flight, not between attempts.
            f"concurrency = 2\ntimeout_s = {FIRES_ON_A_HELD_REQUEST_S}\nmax_attempts = 4\n"
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "ocllm", "run", "--config", str(lanes), "--lane", "L", "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        wait_until(lambda: len(server.chat_requests) >= 4 or proc.poll() is not None)
        made = len(server.chat_requests)  # both tasks' first attempts timed out; their second ones are in flight
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=BACKSTOP_S)
    assert made == 4, err
    assert proc.returncode == 130, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert (manifest["requests"], manifest["retries"]) == (4, {"timeout": 2})
    assert not (out / "samples.jsonl").read_text().strip()  # no task finished: the attempts are counted all the same
