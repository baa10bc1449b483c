"""Shared test helpers. Tests use data written here; acceptance tests read ../shared when present."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from ports import reserved_ports

from ocllm.models import Decision, Policy, Sample
from ocllm.scoring import decide
from ocllm.scoring.mcq.fields import McqTask

# A fixed console width for every test, in this process and the ocllm commands tests start: rich wraps at the
# terminal's width, or at 160 columns when output is piped, and a line holding a temporary path (longer under
# pytest-xdist: .../popen-gw0/...) then wrapped or not with the path's length. Set before ocllm.console is
# imported, which reads it once. A test of the piped default removes it from its child's environment.
os.environ["COLUMNS"] = "250"
# `run` and `matrix` probe each lane's server before its first task (the preflight, on by default): a few requests
# that a scripted server's queue, or a test counting requests, is not written for. Off for the ocllm commands tests
# start, as a CI against scripted servers would set it; tests/test_preflight.py and the real-server lane turn it on.
os.environ["OCLLM_PREFLIGHT"] = "off"

# Hypothesis in CI and `make test`: the same examples on every run and every machine (derandomize), and no
# per-example deadline or slowness check (a loaded machine is slow, not wrong). HYPOTHESIS_PROFILE=dev explores
# new examples on each run, for finding bugs rather than repeating a result.
settings.register_profile(
    "ci", deadline=None, derandomize=True, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parent.parent
SHARED_AUDIT = REPO.parent / "shared" / "fixtures" / "audit"
# The reason every test that needs the bug report's audit data skips with, so the end of the run can count them.
NO_SHARED_AUDIT = "../shared/fixtures/audit is not here"


def mcq(
    content: str | None,
    reasoning: str | None = None,
    *,
    answer: str = "D",
    n_options: int = 4,
    options: list[str] | None = None,
    finish_reason: str = "stop",
    prompt: str | None = None,
    **policy: Any,
) -> Decision:
    """Score one MCQ response against a task with `n_options` options."""
    opts = options or [f"option {i}" for i in range(n_options)]
    task = McqTask(id="t1", question="q", options=opts, answer=answer, category="reasoning", prompt=prompt)
    sample = Sample(task_id="t1", content=content, reasoning=reasoning, finish_reason=finish_reason)
    return decide(task, sample, Policy(**policy))


def legacy_record(
    task_id: str,
    content: str | None,
    *,
    expected: str = "B",
    reasoning: str | None = None,
    correct: bool = False,
    extracted: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A task record in the old harness's metrics format, written for these tests."""
    record: dict[str, Any] = {
        "task_id": task_id,
        "category": "reasoning",
        "subset": "unit",
        "task_type": "mcq",
        "prompt": "What is 2 + 2?\n\nA. 3\nB. 4\nC. 5\nD. 6\n\nEnd with FINAL: <letter>.",
        "options": ["3", "4", "5", "6"],
        "expected_answer": expected,
        "required_substrings": None,
        "raw_content": content,
        "raw_reasoning": reasoning,
        "finish_reason": "stop",
        "extracted_final_answer": extracted,
        "extraction_method": "final_colon_letter" if extracted else "none",
        "ambiguity_flag": reasoning is not None and "FINAL:" in reasoning,
        "scoring_decision": {"correct": correct, "required_substrings": None},
        "correct": correct,
    }
    record.update(extra)
    return record


# The per-task fields every scored output carries (docs: DESIGN's contract for rescore, run and reports).
PER_TASK_FIELDS = (
    "task_id", "task_type", "category", "expected_answer", "extracted_final_answer", "extraction_source",
    "extraction_method", "ambiguity", "correct", "candidates",
)  # fmt: skip


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The seconds each retry of the HTTP client waits, as it asks asyncio to sleep them (and then sleeps): a
    test checks the wait asked for, never a wall-clock duration (which a loaded machine stretches)."""
    waits: list[float] = []

    class RecordingAsyncio:
        @staticmethod
        async def sleep(seconds: float) -> None:
            waits.append(seconds)
            await asyncio.sleep(seconds)

    monkeypatch.setattr("ocllm.run.client.retries.asyncio", RecordingAsyncio)
    return waits


@pytest.fixture
def reserve_port() -> Iterator[Callable[[], int]]:
    """Ports for managed servers' command lines (which must name the port before the server starts), each
    locked machine-wide until the test ends, so parallel workers and other checkouts never pick the same one."""
    with contextlib.ExitStack() as held:

        def take() -> int:
            return held.enter_context(reserved_ports(1))[0]

        yield take


@pytest.fixture
def shared_audit() -> Path:
    if not (SHARED_AUDIT / "lane_b_native_reasoning_metrics.json").exists():
        pytest.skip(NO_SHARED_AUDIT)
    return SHARED_AUDIT


def assert_instructions_refused(tmp: Path, capsys: pytest.CaptureFixture[str], instructions: object, said: str) -> None:
    """A suite of one instructions task with these `instructions` is refused when `ocllm run` reads it: one line
    naming the problem, exit code 2, no run folder."""
    from ocllm.cli import main

    path = tmp / "suite.jsonl"
    line = {"id": "t", "type": "instructions", "question": "Write.", "category": "c", "instructions": instructions}
    path.write_text(json.dumps(line) + "\n")
    assert main(["run", "--suite", str(path), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--out", str(tmp / "r")]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ocllm: error: ") and said in err[0], err
    assert not (tmp / "r").exists()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker under `--dist loadgroup` (pyproject's addopts): the group of each test marked
    `xdist_group` at the end of its node id ("...::test@cpu_heavy"), which is how the controller learns it. xdist
    writes it where pytest 9.2 no longer reads it (pytest-dev/pytest-xdist#1386), and every test then went to any
    worker: the CPU-heavy ones side by side. Written here where xdist did not (an xdist that does is left alone);
    tests/test_repository.py checks that the group arrives."""
    if not getattr(config.option, "loadgroup", False):  # set in workers only, under --dist loadgroup
        return
    for item in items:
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in
                         item.iter_markers("xdist_group")})  # fmt: skip
        if groups and "@" not in item.nodeid and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line at the end of the run saying how many tests skipped for want of the audit data, and why: a plain
    clone does not have it, and a skip nobody reads looks like a pass."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if NO_SHARED_AUDIT in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: ../shared/fixtures/audit is not here (the bug report's audit data; "
            "see README)"
        )
