"""Math rule M6's limits (issue 28): the screen before the symbolic step, the cache of checks, the CPU-time limit
that gives the same verdicts on an idle machine and a loaded one, and a symbolic child that never outlives the
`ocllm rescore` that started it. Real processes throughout; no test asserts how long anything took."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import BACKSTOP_S, CPU_HEAVY, wait_until
from processes import cpu_seconds, gone, processes, watch_until_gone

from ocllm.models import Policy, Sample
from ocllm.scoring.math import symbolic
from ocllm.scoring.math.decide import decide_math
from ocllm.scoring.math.decision import MathDecision
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.screen import MAX_LITERAL_DIGITS, screen
from ocllm.scoring.math.tally import MathTally

pytestmark = [pytest.mark.slow, CPU_HEAVY]  # symbolic children run to their limits and killed, eight CPU hogs

SRC = Path(__file__).resolve().parent.parent / "src"


def decide(content: str, gold: str) -> MathDecision:
    task = MathTask(id="m", question="q", answer=gold, category="c")
    decision = decide_math(task, Sample(task_id="m", content=content, finish_reason="stop"), Policy())
    assert isinstance(decision, MathDecision)
    return decision


# ---- the screen ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2^{10}", "10!", "3^{2^{3}}", "2^{2005}", "\\frac{1}{2004!}", "2^2^2^2", "10^{100}", "x^{100}",
        "(x+1)^{3000}", "e^{2}", "\\sqrt{2}^{10}", "1" * 4500, "x^2+2x+1", "\\{1,2,3\\}", "(1,2)", "[1,2)",
        "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "y=2x+3", "1^{10^{100}}", "a_{37}", "\\log_2 8", "-2^{100}",
    ],
)  # fmt: skip
def test_the_screen_lets_ordinary_answers_through(text: str) -> None:
    assert screen(text) is None


@pytest.mark.parametrize(
    ("text", "kind", "said"),
    [
        ("10^{10^{10^{10}}}", "power_tower", "the power tower 10^{10^{10}} would have about 10^10 digits"),
        ("9^{9^{9^9}}", "power_tower", "the power tower 9^{9^9} would have about 10^8 digits"),
        ("2^2^2^2^2", "power_tower", "the power tower 2^2^2^2^2 would have 19,729 digits"),
        ("123456!", "factorial", "the factorial 123456! would have 574,965 digits"),
        ("7" * 100_000, "literal", "it writes a number of 100,000 digits"),
        ("2^{100000}", "power", "the power 2^{100000} would have 30,103 digits"),
        ("10^{10000}", "power", "the power 10^{10000} would have 10,001 digits"),
        ("(x+1)^{20000}", "exponent", "(x+1)^{20000} is a power of an expression with variables"),
        ("e^{10^{10}}", "exponent", "e^{10^{10}} is a power of an expression with variables"),
    ],
)
def test_the_screen_names_what_fired_and_why(text: str, kind: str, said: str) -> None:
    screened = screen(text)
    assert screened is not None and screened.kind == kind
    assert screened.detail.startswith(said) and "(the screen's limit)" in screened.detail


def test_a_literal_at_the_screen_s_limit_passes_and_one_digit_more_is_screened() -> None:
    assert screen("7" * MAX_LITERAL_DIGITS) is None
    assert screen("7" * (MAX_LITERAL_DIGITS + 1)) is not None


_TOWERS = [f"{b}^{{{b}^{{{b}^{{{b}}}}}}}" for b in range(3, 31)] + ["2^2^2^2^2", "10^{10^{10^{10}}}"]


def test_thirty_power_towers_are_undecided_by_the_screen_and_none_is_sent_to_the_symbolic_check() -> None:
    assert len(_TOWERS) == 30
    checks = symbolic.counts["checks"]
    tally = MathTally()
    for tower in _TOWERS:
        d = decide(f"The answer is $\\boxed{{{tower}}}$.", "1")
        assert (d.comparator, d.comparison, d.correct) == ("screen", "undecided", False), tower
        assert (d.rule, d.ambiguity) == ("equivalence_undecided", "equivalence_undecided")
        assert d.comparison_detail.startswith("the answer is not sent to the symbolic check: the power tower ")
        tally.add(d)
    assert symbolic.counts["checks"] == checks  # not one was sent to the child
    assert (tally.figures()["screened"], tally.figures()["undecided"], tally.figures()["symbolic_checks_killed"]) == (
        30, 30, 0
    )  # fmt: skip
    (notice,) = tally.notices()
    assert notice.startswith("30 math answer(s) were left undecided") and "30 of them were not sent" in notice


def test_a_screened_gold_is_never_equal_even_to_the_same_value_written_otherwise() -> None:
    d = decide("\\boxed{9^{9^{9^{9}}}}", "9^{9^{9^9}}")  # one value, two spellings: not the same string
    assert (d.comparator, d.comparison, d.correct) == ("screen", "undecided", False)
    same = decide("\\boxed{9^{9^{9^{9}}}}", "9^{9^{9^{9}}}")  # the same string is equal before any screen
    assert (same.comparator, same.correct) == ("string", True)


# ---- the cache -----------------------------------------------------------------------------------------------


def test_identical_answers_cost_one_check() -> None:
    symbolic.clear_cache()
    before = dict(symbolic.counts)
    for _ in range(500):
        d = decide("$\\boxed{(x+1)^2}$", "x^2+2x+1")
        assert (d.comparator, d.comparison, d.correct) == ("symbolic", "equal", True)
    assert symbolic.counts["checks"] - before.get("checks", 0) == 1
    assert symbolic.counts["cache_hits"] - before.get("cache_hits", 0) == 499


def test_a_killed_check_is_cached_too_with_the_same_sentence() -> None:
    symbolic.clear_cache()
    checks = symbolic.counts["checks"]
    first = symbolic.check("2", "(x+1)^{3001}", limit_s=1)
    assert first.outcome == "killed"
    assert first.detail == "the symbolic check reached its CPU-time limit of 1 s and was killed"
    assert symbolic.check("2", "(x+1)^{3001}", limit_s=1) == first
    assert symbolic.counts["checks"] == checks + 1
    # A different limit is a different check.
    assert symbolic.check("2", "(x+1)^{3001}", limit_s=0.5).detail.endswith("limit of 0.5 s and was killed")


# ---- rescore: the same bytes idle and loaded; no child left behind ------------------------------------------

_PAIRS = [
    ("(x+1)^2", "x^2+2x+1"),
    ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}"),
    ("\\{3,2,1\\}", "\\{1,2,3\\}"),
    ("(2,1)", "(1,2)"),
    ("\\frac{1}{2006!}", "\\frac{1}{2004!}"),
    ("1+\\frac{1}{e}", "1-\\frac{1}{e}"),
    ("0.866025", "\\frac{\\sqrt{3}}{2}"),
    ("y=2x+3", "2x+3"),
    ("x+y=1", "y=1-x"),
    ("5+", "5"),
    ("9^{9^{9^{9}}}", "1"),  # screened
    ("123456!", "1"),  # screened
    ("(x+1)^{300}", "x^{300}+1"),  # half a second of CPU time: seconds of wall time on a loaded machine
    ("0.75", "\\frac{3}{4}"),
    ("26", "26"),
    ("\\begin{bmatrix}1\\\\2\\end{bmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
    ("1-e^{-1}", "1-\\frac{1}{e}"),
    ("\\frac{1}{2}\\pi", "\\frac{\\pi}{2}"),
    ("\\pm1", "\\{-1,1\\}"),
    ("h^{-1}(x) = \\frac{x+2}{7}", "\\frac{x+2}{7}"),
]


def math_file(path: Path, pairs: list[tuple[str, str]]) -> Path:
    """Math tasks in the old harness's metrics format."""
    tasks: list[dict[str, Any]] = [
        {
            "task_id": f"m{i}",
            "task_type": "math",
            "category": "algebra",
            "question": "q",
            "expected_answer": gold,
            "raw_content": f"So the answer is $\\boxed{{{answer}}}$.",
            "raw_reasoning": None,
            "finish_reason": "stop",
            "extracted_final_answer": None,
            "correct": False,
        }
        for i, (answer, gold) in enumerate(pairs)
    ]
    path.write_text(json.dumps({"run_id": "r", "lane": "L", "tasks": tasks}), encoding="utf-8")
    return path


def rescore_command(source: Path, out: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "ocllm", "rescore", str(source), "-o", str(out), *more]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}


def _hog() -> None:
    while True:
        pass


# The longest of the suite: 116-131 s beside four CPU hogs at a load of 15-19; a load of 50 could pass 300 s.
@pytest.mark.timeout(600)
def test_rescore_gives_the_same_bytes_on_an_idle_machine_and_under_eight_cpu_hogs(tmp_path: Path) -> None:
    source = math_file(tmp_path / "math.json", _PAIRS)
    outputs = []
    for name, hogs in (("idle", 0), ("loaded", 8)):
        out, audit = tmp_path / f"{name}.json", tmp_path / f"{name}.md"
        spinning = [multiprocessing.get_context("fork").Process(target=_hog, daemon=True) for _ in range(hogs)]
        for p in spinning:
            p.start()
        try:
            done = subprocess.run(rescore_command(source, out, "--report", str(audit)), env=child_env(),
                                  capture_output=True, text=True)  # fmt: skip
        finally:
            for p in spinning:
                p.kill()
                p.join()
        assert done.returncode == 0, done.stderr
        outputs.append((out.read_bytes(), audit.read_text(encoding="utf-8").replace(name, "NAME")))
    assert outputs[0] == outputs[1]
    tasks = {t["task_id"]: t for t in json.loads(outputs[0][0])["tasks"]}
    assert (tasks["m0"]["comparator"], tasks["m0"]["comparison"]) == ("symbolic", "equal")
    assert [tasks[f"m{i}"]["comparator"] for i in (10, 11)] == ["screen", "screen"]
    assert (tasks["m12"]["comparator"], tasks["m12"]["comparison"]) == ("symbolic", "different")


@pytest.mark.timeout(600)  # as the test above
def test_a_check_under_its_limit_and_one_past_it_decide_the_same_under_eight_cpu_hogs() -> None:
    # With a 1.5 s limit: (x+1)^{300} takes about half a second of CPU time (several seconds of wall time under the
    # hogs, which a wall-clock limit would have killed); (x+1)^{3000} runs into the limit, idle or loaded.
    pairs = [("x^{300}+1", "(x+1)^{300}"), ("2", "(x+1)^{3000}"), ("x^2+2x+1", "(x+1)^2")]
    verdicts = []
    for hogs in (0, 8):
        symbolic.clear_cache()
        spinning = [multiprocessing.get_context("fork").Process(target=_hog, daemon=True) for _ in range(hogs)]
        for p in spinning:
            p.start()
        try:
            verdicts.append([symbolic.check(gold, answer, limit_s=1.5) for gold, answer in pairs])
        finally:
            for p in spinning:
                p.kill()
                p.join()
    assert verdicts[0] == verdicts[1]
    assert [v.outcome for v in verdicts[0]] == ["different", "killed", "equal"]
    assert verdicts[0][1].detail == "the symbolic check reached its CPU-time limit of 1.5 s and was killed"


def guarded_children(pid: int) -> list[int]:
    """The symbolic checks' guarded children of process `pid`."""
    return [p.pid for p in processes() if p.parent == pid and "ocllm-guarded:symbolic" in p.command]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG are Linux's")
def test_a_rescore_killed_outright_leaves_no_symbolic_child_computing(tmp_path: Path) -> None:
    # Each answer is a check that runs into its CPU-time limit (distinct, so the cache serves none of them).
    source = math_file(tmp_path / "costly.json", [(f"(x+1)^{{{3000 + i}}}", "2") for i in range(6)])
    rescore = subprocess.Popen(
        rescore_command(source, tmp_path / "out.json"),
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    children: list[int] = []
    try:
        # Wait for a child deep inside a check: past the CPU its start takes (well under a second).
        def computing() -> bool:
            children[:] = [c for c in guarded_children(rescore.pid) if not gone(c) and cpu_seconds(c) >= 2.0]
            return bool(children)

        assert wait_until(computing), "no symbolic child started computing"
        os.kill(rescore.pid, signal.SIGKILL)
        rescore.wait()
        watched = watch_until_gone(children, BACKSTOP_S)
        assert not watched.left, f"left behind: {watched.left}"
        # Ended as rescore went (PR_SET_PDEATHSIG), not at their checks' limit of 5 s of CPU, 3 s on from here.
        assert max(watched.cpu_s.values()) < 1.0, f"they computed on after rescore was killed: {watched.cpu_s}"
    finally:
        if rescore.poll() is None:
            rescore.kill()
            rescore.wait()
        for c in children:
            if not gone(c):
                os.kill(c, signal.SIGKILL)
