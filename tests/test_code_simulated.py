"""The code room against the simulator: the shipped demo-code suite run with `ocllm run` against the simulator, each
task's outcome the one its simulated answer implies (written out below from the programs of
scoring/code/simulated.py, not computed by the code), a rescore of the run giving the same verdicts, and the hostile
programs (asked for by the test-only marker) put through the simulator, the runner and the sandbox.

Every program runs in the real sandbox: without one the tests are skipped (the outcomes would all be
sandbox_refused).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import CPU_HEAVY

from ocllm.models import Policy, Sample
from ocllm.scoring.code.extract import extract_code
from ocllm.scoring.code.fields import CodeTask, IoTest
from ocllm.scoring.code.simulated import HOSTILE_FILE, simulated_answer
from ocllm.scoring.isolation.sandboxes import Refused, find_sandbox
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.simulated import SimulatedRequest, SimulatedTools
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import load_suite, resolve_suite

REPO = Path(__file__).resolve().parent.parent
OUTCOMES = {"passed", "failed_assertion", "wrong_output", "exception", "timeout", "memory_limit", "output_limit",
            "syntax_error", "no_code", "sandbox_refused"}  # fmt: skip

# What each demo-code task's answers lead to, read from the programs (scoring/code/simulated.py). Drawn right: the
# right program, in its shape; the two `hard` tasks get their wrong one whatever the draw.
RIGHT = {
    "code_sum_evens": "passed",  # prose, a ```python block, prose
    "code_palindrome": "passed",  # a ```py block
    "code_fizzbuzz": "passed",  # the defining block, then a usage block (C3: the defining block runs)
    "code_running_max": "syntax_error",  # hard: cut mid-statement, the fence never closed
    "code_count_vowels": "no_code",  # hard: an explanation, no code (C5: prose_only)
    "code_dedupe": "passed",  # an indented body continuing the code prefix
    "code_gcd": "passed",  # two drafts, the corrected one last
    "code_stdin_sum": "passed",  # the program alone, no fence
    "code_stdin_reverse_words": "passed",
    "code_stdin_fibonacci": "passed",  # two drafts: plain recursion, then the loop
    "code_stdin_max": "passed",  # a fence that never closes
}
WRONG = {
    "code_sum_evens": "failed_assertion",  # the odd numbers summed
    "code_palindrome": "exception",  # str.lowercase() does not exist
    "code_fizzbuzz": "failed_assertion",  # range(1, n): one short
    "code_running_max": "syntax_error",
    "code_count_vowels": "no_code",
    "code_dedupe": "failed_assertion",  # sorted(set(items)): the order lost
    "code_gcd": "timeout",  # by subtraction: gcd(0, 5) never ends
    "code_stdin_sum": "wrong_output",  # "2" + "3" printed as 23
    "code_stdin_reverse_words": "wrong_output",  # the letters reversed, not the words
    "code_stdin_fibonacci": "timeout",  # plain recursion: F(90) never finishes
    "code_stdin_max": "exception",  # split(","): ValueError
}
# Answers whose outcome needs the extraction rules of docs/scoring/code.md (C3: the defining block runs, not the
# usage example after it; C5: prose is no code) rather than the first extraction, which ran the last block or the
# whole answer: checked once those rules are in (`_rules_in`).
NEEDS_RULES = {("right", "code_fizzbuzz"), ("right", "code_count_vowels"), ("wrong", "code_count_vowels")}


def _sandbox_problem() -> str | None:
    found = find_sandbox()
    return found.reason if isinstance(found, Refused) else None


def _rules_in() -> bool:
    """Whether the extraction is the one of docs/scoring/code.md C1-C5 (the defining block runs, not a later
    usage example)."""
    task = CodeTask(id="t", question="q", category="c", entry_point="f", test="def check(candidate):\n    pass\n")
    answer = "```python\ndef f(x):\n    return x\n```\n\n```python\nprint(f(1))\n```"
    return extract_code(task, Sample(task_id="t", content=answer), Policy()).method == "fenced_defining"


SANDBOX_PROBLEM = _sandbox_problem()
needs_sandbox = pytest.mark.skipif(SANDBOX_PROBLEM is not None, reason=f"no sandbox here: {SANDBOX_PROBLEM}")


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])),
    }


def _ocllm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ocllm", *args], capture_output=True, text=True, env=_env(),
                          timeout=600, check=False)  # fmt: skip


def _tasks(path: Path) -> dict[str, dict[str, Any]]:
    return {t["task_id"]: t for t in json.loads(path.read_text(encoding="utf-8"))["tasks"]}


def _assert_recorded(record: dict[str, Any]) -> None:
    """A decision whose answer held code records the program, its digest, where it ran and what each run did."""
    assert record["outcome"] in OUTCOMES and record["rule"] == record["outcome"], record
    if record["outcome"] == "no_code":
        assert record["program"] is None and record["no_code_reason"] and record["runs"] == [], record
        return
    assert record["program_sha256"] == hashlib.sha256(record["program"].encode()).hexdigest(), record
    assert record["extracted_final_answer"] == record["program_sha256"], record
    sandbox = record["sandbox"]
    assert sandbox["kind"] in ("bubblewrap", "podman", "docker") and sandbox["limits"]["cpu_s"] > 0, record
    if record["outcome"] != "syntax_error":
        assert record["runs"] and record["tests"], record


@needs_sandbox
@pytest.mark.slow
@CPU_HEAVY  # programs that never end, run to their CPU limits
@pytest.mark.timeout(900)
def test_demo_code_outcomes_are_those_its_simulated_answers_imply_and_a_rescore_agrees(tmp_path: Path) -> None:
    suite = resolve_suite("demo-code")
    ids = [task.id for task in load_suite("demo-code").tasks]
    assert sorted(ids) == sorted(RIGHT) == sorted(WRONG)
    rules = _rules_in()
    config = SimConfig(models={"sim-right": 1.0, "sim-wrong": 0.0}, suites=(suite,), truncation_rate=0.0)
    with SimServer(config) as sim:
        # The right answers with reasoning on and streamed (the reasoning is never read for code), the wrong ones
        # with reasoning off.
        lanes = {"right": ("sim-right", "--reasoning", "native", "--stream"), "wrong": ("sim-wrong",)}
        for name, (model, *extra) in lanes.items():
            done = _ocllm("run", "--suite", "demo-code", "--base-url", sim.base_url, "--model", model,
                          "--out", str(tmp_path / name), "--concurrency", "4", *extra)  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
    for name, expected in (("right", RIGHT), ("wrong", WRONG)):
        ran = _tasks(tmp_path / name / "metrics.json")
        assert sorted(ran) == sorted(ids)
        outcomes = {task_id: record["outcome"] for task_id, record in ran.items()}
        wanted = {
            task_id: outcome for task_id, outcome in expected.items() if rules or (name, task_id) not in NEEDS_RULES
        }
        assert {task_id: outcomes[task_id] for task_id in wanted} == wanted, name
        for record in ran.values():
            assert record["task_type"] == "code" and not record.get("error"), record
            assert record["correct"] is (record["outcome"] == "passed"), record
            _assert_recorded(record)
        # The simulator's answers are plain text: no request failed, none was cut.
        samples = [json.loads(line) for line in (tmp_path / name / "samples.jsonl").read_text().splitlines()]
        assert {s["finish_reason"] for s in samples} == {"stop"} and not any(s.get("error") for s in samples)
        # A rescore of the run directory decides every answer again, in fresh sandboxes: the same verdicts.
        again = tmp_path / f"{name}-rescored.json"
        done = _ocllm("rescore", str(tmp_path / name), "-o", str(again))
        assert done.returncode == 0, done.stdout + done.stderr
        rescored = _tasks(again)
        for task_id, record in ran.items():
            for key in ("correct", "outcome", "rule", "extraction_method", "ambiguity", "decided_by", "program_sha256",
                        "no_code_reason"):  # fmt: skip
                assert rescored[task_id][key] == record[key], (name, task_id, key)
            assert [t["result"] for t in rescored[task_id]["tests"]] == [t["result"] for t in record["tests"]]


RULES_PENDING = (
    "the extraction of docs/scoring/code.md C1-C5 is not in yet: the demo answers that need it (a usage block after "
    "the function, prose without code) are not checked"
)


@pytest.mark.skipif(not _rules_in(), reason=RULES_PENDING)
def test_the_extraction_rules_the_expected_outcomes_assume_are_in() -> None:
    assert _rules_in()


# --- hostile programs, asked for by the test-only marker --------------------------------------------------------


def _hostile(kind: str) -> dict[str, Any]:
    return {"id": f"hostile_{kind.split(':')[0]}", "type": "code", "category": "hostile",
            "question": f"Print nothing. [ocllm-sim:hostile:{kind}]",
            "io_tests": [{"input": "", "output": "nothing\n"}]}  # fmt: skip


@needs_sandbox
@pytest.mark.slow
@CPU_HEAVY  # hostile programs: fork bombs, endless loops run to their limits
@pytest.mark.timeout(600)
def test_hostile_programs_put_through_the_simulator_are_contained(tmp_path: Path) -> None:
    homes = [Path.home(), Path("/root"), Path("/home"), Path("/tmp")]
    for home in homes:
        (home / HOSTILE_FILE).unlink(missing_ok=True)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        kinds = ["fork_bomb", "write_home", f"loopback_socket:{port}", "huge_memory", "huge_output", "infinite_loop"]
        suite = tmp_path / "hostile.jsonl"
        suite.write_text("".join(json.dumps(_hostile(kind)) + "\n" for kind in kinds), encoding="utf-8")
        with SimServer(SimConfig(suites=(suite,), models={"sim-hostile": 1.0})) as sim:
            done = _ocllm("run", "--suite", str(suite), "--base-url", sim.base_url, "--model", "sim-hostile",
                          "--out", str(tmp_path / "run"))  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the host's loopback
    ran = _tasks(tmp_path / "run" / "metrics.json")
    outcomes = {task_id: record["outcome"] for task_id, record in ran.items()}
    assert outcomes == {
        "hostile_fork_bomb": "timeout",  # it forks until the process limit, then spins: the CPU-time limit
        "hostile_write_home": "wrong_output",  # it prints where it wrote: the sandbox's own /tmp home only
        "hostile_loopback_socket": "wrong_output",  # it prints "blocked: ..."
        "hostile_huge_memory": "memory_limit",
        "hostile_huge_output": "output_limit",
        "hostile_infinite_loop": "timeout",
    }
    for record in ran.values():
        _assert_recorded(record)
    printed = {task_id: record["runs"][0]["stdout_head"] for task_id, record in ran.items()}
    assert printed["hostile_loopback_socket"].startswith("blocked:"), printed
    assert "refused /root" in printed["hostile_write_home"], printed
    assert not [home for home in homes if (home / HOSTILE_FILE).exists()], "a hostile program wrote on the host"
    assert ran["hostile_infinite_loop"]["runs"][0]["timeout"] == "cpu"


# --- the hook itself ----------------------------------------------------------------------------------------------

TOOLS = SimulatedTools((), None, "structured", "mixed")


def _ask(task: Any, *, correct: bool = True, seed: int = 0, reasoning: bool = False) -> Any:
    request = SimulatedRequest(
        random.Random(seed), task, task.question if task else "hi", "m", correct, reasoning, TOOLS
    )
    return simulated_answer(request)


def test_the_same_draws_give_the_same_answer_and_reasoning_holds_no_code() -> None:
    for task in load_suite("demo-code").tasks:
        for correct in (True, False):
            first = _ask(task, correct=correct, reasoning=True)
            assert first == _ask(task, correct=correct, reasoning=True)
            assert first.content and first.tool_calls is None
            assert "```" not in first.reasoning and "def " not in first.reasoning


def test_no_answer_and_no_draw_for_a_prompt_that_is_not_a_code_task() -> None:
    mcq = McqTask(id="m", question="Which?", options=["a", "b"], answer="A", category="c")
    for task in (None, mcq):
        rng = random.Random(5)
        state = rng.getstate()
        assert simulated_answer(SimulatedRequest(rng, task, "Which?", "m", True, False, TOOLS)) is None
        assert rng.getstate() == state


def test_a_task_the_table_does_not_know_gets_a_plausible_program() -> None:
    function = CodeTask(id="code_sum_evens", question="Add.", category="c", entry_point="add",
                        test="def check(candidate):\n    assert candidate(1, 2) == 3\n")  # fmt: skip
    # A known id with another entry point is not the demo task: a function of that name that returns None.
    assert "def add(*args, **kwargs):\n    return None" in _ask(function).content
    stdin = CodeTask(id="s", question="Echo.", category="c", io_tests=[IoTest(input="1 2\n", output="3\n")])
    assert "'1 2\\n': '3\\n'," in _ask(stdin).content  # drawn right: the tests' outputs, by input
    assert "sys.stdout.write(sys.stdin.read())" in _ask(stdin, correct=False).content  # drawn wrong: its input back
    big = CodeTask(id="b", question="Big.", category="c", io_tests=[IoTest(input="x" * 30_000, output="y\n")])
    assert "ANSWERS" not in _ask(big).content


@needs_sandbox
def test_the_written_out_tests_of_an_unknown_stdin_task_pass() -> None:
    from ocllm.scoring.code.decide import decide_code

    task = CodeTask(id="s", question="Double.", category="c",
                    io_tests=[IoTest(input="2\n", output="4\n"), IoTest(input="'\"\n", output="x\n")])  # fmt: skip
    decision = decide_code(task, Sample(task_id="s", content=_ask(task).content), Policy())
    assert decision.outcome == "passed", decision.reason
