"""Hostile programs through the whole decision path (docs/scoring/code.md, "Trust"): tests/data/code/hostile/
corpus.jsonl holds programs a model could write to get a pass it did not earn, read ocllm's secrets, hold host memory,
reach the kernel or outlive its decision. All run, in a process of their own started with canary secrets in its
environment (as ocllm's API keys would be), each answering the function task `f(x) -> x + 1` wrongly:

- no program is credited `passed`, each ends in the outcome its line expects;
- no canary secret appears anywhere in any decision (the program's output is kept in it, and reports show it);
- everything the program wrote in all its mounts together stays within `file_bytes`, and memory outside the mounts
  (memfd, System V shared memory) is refused;
- ptrace, io_uring, keyctl and add_key are refused with EPERM;
- nothing a program started outlives its decision (the test waits for what the sandbox ended to go: a loaded machine
  is slow to reap it; what a program leaves behind sleeps or spins far longer than the wait).
"""

from __future__ import annotations

import json
import os
import platform
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import CPU_HEAVY, wait_until

pytestmark = [
    pytest.mark.slow,
    CPU_HEAVY,  # programs run to their CPU limits, fork bombs
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)"),
]

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "code" / "hostile" / "corpus.jsonl"
FILE_BYTES = 8 * 1024**2

RUNNER = """
import json, sys, time
from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeLimits
from ocllm.scoring.code.fields import CodeTask
import msgspec

limits = CodeLimits(cpu_s=2.0, wall_s=6.0, memory_bytes=512 * 1024**2, output_bytes=1024**2, file_bytes=FILE_BYTES)
task = CodeTask(id="hostile", question="q", entry_point="f",
                test="def check(candidate):\\n    assert candidate(1) == 2\\n    assert candidate(41) == 42\\n")
for line in open(sys.argv[1]):
    item = json.loads(line.replace("MARK", sys.argv[2]))
    sample = Sample(task_id="hostile", content=item["answer"], finish_reason="stop")
    decision = decide_code(task, sample, Policy(), limits)
    print(json.dumps({"id": item["id"], "expect": item["expect"], "done": time.monotonic(),
                      "decision": msgspec.to_builtins(decision)}), flush=True)
    sys.stdin.readline()  # the next program starts once the test has looked for this one's survivors
""".replace("FILE_BYTES", str(FILE_BYTES))


def _survivors(mark: str) -> list[int]:
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == mark:
                    alive.append(int(entry.name))
            except OSError:
                continue
    return alive


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str], str]:
    """Every program of the corpus decided, in a process whose environment holds canary secrets."""
    mark = "ocx" + secrets.token_hex(5)
    canaries = {
        "OPENAI_API_KEY": "sk-canary-" + secrets.token_hex(12),
        "OCLLM_JUDGE_API_KEY": "sk-canary-" + secrets.token_hex(12),
        "OCLLM_CANARY_SETTING": "canary-" + secrets.token_hex(12),
    }
    env = {**os.environ, **canaries, "OCLLM_SANDBOX_BUDGET_DIR": str(tmp_path_factory.mktemp("budget"))}
    env["PYTHONPATH"] = str(REPO / "src")
    process = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(CORPUS), mark], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    decided: dict[str, Any] = {}
    assert process.stdout is not None and process.stdin is not None
    for line in iter(process.stdout.readline, ""):
        item = json.loads(line)
        # Nothing of a program may outlive its decision (the longest leftover of the corpus sleeps 600 s).
        wait_until(lambda: not _survivors(mark))
        item["survivors"] = _survivors(mark)
        decided[item["id"]] = item
        process.stdin.write("next\n")
        process.stdin.flush()
    assert process.wait(timeout=600) == 0, process.stderr.read() if process.stderr else ""
    return decided, canaries, mark


def test_no_hostile_program_is_credited_a_pass(ran: tuple[dict[str, Any], dict[str, str], str]) -> None:
    decided, _, _ = ran
    expected = {json.loads(line)["id"] for line in CORPUS.read_text().splitlines()}
    assert set(decided) == expected
    wrong = {
        name: (item["decision"]["outcome"], item["decision"]["reason"])
        for name, item in decided.items()
        if item["decision"]["outcome"] not in item["expect"]
    }
    assert wrong == {}
    assert not [name for name, item in decided.items() if item["decision"]["correct"] is not False]


def test_no_secret_of_ocllm_reaches_a_program(ran: tuple[dict[str, Any], dict[str, str], str]) -> None:
    decided, canaries, _ = ran
    text = json.dumps([item["decision"] for item in decided.values()])
    for name, value in canaries.items():
        assert value not in text, f"{name} reached a program"
        assert name not in text, f"the variable {name} reached a program"
    said = decided["environment_read"]["decision"]["runs"][0]["stdout_head"]
    assert "/proc/1/environ" in said and "PATH" in said  # the program did read them, and found nothing of ours


def test_what_a_program_writes_in_all_its_mounts_stays_within_its_file_bytes(
    ran: tuple[dict[str, Any], dict[str, str], str],
) -> None:
    decided, _, _ = ran
    said = decided["fill_every_mount"]["decision"]["runs"][0]["stdout_head"]
    written = int(re.search(r"WRITTEN (\d+)", said).group(1))  # type: ignore[union-attr]
    assert 0 < written <= FILE_BYTES
    memory = decided["memory_outside_mounts"]["decision"]["runs"][0]["stdout_head"]
    if platform.machine() == "x86_64":
        assert "MEMFD EPERM" in memory and "SHMGET EPERM" in memory, memory


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the corpus names x86_64's system call numbers")
def test_ptrace_io_uring_and_the_keyrings_are_refused(ran: tuple[dict[str, Any], dict[str, str], str]) -> None:
    decided, _, _ = ran
    said = decided["kernel_calls"]["decision"]["runs"][0]["stdout_head"]
    for call in ("PTRACE", "IO_URING", "KEYCTL", "ADD_KEY"):
        assert f"{call} EPERM" in said, said
    sandbox = decided["kernel_calls"]["decision"]["sandbox"]
    assert sandbox["seccomp"].startswith("seccomp (x86_64)") and sandbox["tests_apart"] is True


def test_nothing_of_a_program_outlives_its_decision(
    ran: tuple[dict[str, Any], dict[str, str], str],
) -> None:
    decided, _, _ = ran
    assert {name: item["survivors"] for name, item in decided.items() if item["survivors"]} == {}
