"""The run's decisions in worker processes (run/decision_pool.py): the same Decision as in-process, an event loop
that goes on reading while a decision runs, a worker's death neither hanging nor losing the run, and no process
left behind however the run ends. Real runs against the simulator on 127.0.0.1, the real pool."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from helpers import BACKSTOP_S, quiet, wait_until, write_suite
from processes import gone, processes

from ocllm.analysis.rescore import score_run_dir
from ocllm.models import Decision, Policy, Sample, Task, as_sent
from ocllm.run import runner
from ocllm.run.decision_pool import DecisionPool
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane
from ocllm.scoring import decide
from ocllm.scoring.mcq.fields import McqTask
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import load_suite, shipped_suites

pytestmark = pytest.mark.slow  # process pools started, killed and waited for

REPO = Path(__file__).resolve().parent.parent
# A worker's decider waits this long at most for what it waits for, so a broken pool fails the test, not hangs it.
WAIT_S = BACKSTOP_S


def lane(base_url: str, suite: str, **kw: object) -> Lane:
    settings: dict = {
        "name": "L", "base_url": base_url, "model": "sim-reasoning", "reasoning": "native", "suite": suite,
        "concurrency": 4,
    }  # fmt: skip
    return Lane(**{**settings, **kw})


def questions_suite(path: Path, questions: list[str]) -> Path:
    """A suite of one MCQ task per question (gold B of four options)."""
    rows = [{"id": f"t{i}", "type": "mcq", "question": question} for i, question in enumerate(questions)]
    return write_suite(path, rows, answer="B", category="c", options=["1", "2", "3", "4"])


def samples_of(run: Path) -> list[Sample]:
    return [msgspec.json.decode(line, type=Sample) for line in (run / "samples.jsonl").read_bytes().splitlines()]


# --- deciders the workers run in these tests: module-level, so that they pickle ---------------------------------


def waiting_decide(task: Task, sample: Sample, policy: Policy) -> Decision:
    """For a task whose question is "wait for N lines in PATH": decides once PATH holds N lines (or WAIT_S has
    passed) and says in its reason which it was."""
    decision = decide(task, sample, policy)
    words = (task.question or "").split()
    if words[:2] != ["wait", "for"]:
        return decision
    lines, path = int(words[2]), Path(words[-1])
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return msgspec.structs.replace(decision, reason=f"decided after {lines} samples were written")
        time.sleep(0.01)
    return msgspec.structs.replace(decision, reason="decided before the other samples were written")


def gated_decide(task: Task, sample: Sample, policy: Policy) -> Decision:
    """Every decision waits until the run's samples.jsonl (named by the task's category) holds every task's line (its
    count is the task id's suffix after "of"), or WAIT_S has passed, and says in its reason which it was."""
    decision = decide(task, sample, policy)
    path, lines = Path(task.category), int(task.id.split("of")[-1])
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return msgspec.structs.replace(decision, reason="decided after every answer was written")
        time.sleep(0.01)
    return msgspec.structs.replace(decision, reason="decided before every answer was written")


def crashing_decide(task: Task, sample: Sample, policy: Policy) -> Decision:
    """Dies (SIGKILL, as the OOM killer kills) on a task whose question is "crash always", and on one whose
    question is "crash once PATH" the first time (PATH marks that it did); else decides as the scorer does."""
    words = (task.question or "").split()
    if words[:2] == ["crash", "always"]:
        os.kill(os.getpid(), signal.SIGKILL)
    if words[:2] == ["crash", "once"] and not Path(words[2]).exists():
        Path(words[2]).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return decide(task, sample, policy)


def refusing_decide(task: Task, sample: Sample, policy: Policy) -> Decision:
    """Raises on a task whose question is "refuse"; else decides as the scorer does."""
    if task.question == "refuse":
        raise ValueError(f"refused {task.id}")
    return decide(task, sample, policy)


def _jobs(questions: list[str]) -> list[tuple[Task, Sample, Policy]]:
    """One MCQ task per question, each with an answer that states a letter among format examples."""
    jobs = []
    for i, question in enumerate(questions):
        task = McqTask(id=f"t{i}", question=question, options=["1", "2", "3", "4"], answer="B", category="c")
        content = f"Not 'FINAL: A' nor 'Answer: (C)'.\n\nFINAL: {'ABCD'[i % 4]}"
        jobs.append((task, Sample(task_id=task.id, content=content), Policy()))
    return jobs


# --- the tests -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()), truncation_rate=0.1)) as server:
        yield server


@pytest.mark.parametrize("suite", sorted(shipped_suites()))
def test_the_pools_decisions_equal_in_process_ones(sim: SimServer, tmp_path: Path, suite: str) -> None:
    run = tmp_path / "run"
    run_lane(lane(sim.base_url, suite, concurrency=8), run, progress=quiet, score=score_run_dir)
    tasks = {task.id: task for task in load_suite(suite).tasks}
    samples = samples_of(run)
    assert len(samples) == len(tasks)
    policies = [Policy(), Policy(allow_reasoning_fallback=True, conflict_policy="first", think_prefilled=True)]
    jobs = [(as_sent(tasks[s.task_id], s), s, policy) for s in samples for policy in policies]

    async def in_pool() -> list[Decision | None]:
        with DecisionPool(2) as pool:
            return list(await asyncio.gather(*(pool.decide(*job) for job in jobs)))

    assert [unmeasured(d) for d in asyncio.run(in_pool())] == [unmeasured(decide(*job)) for job in jobs]
    # And the run's own metrics.json, written from the decisions its pool took, holds the in-process ones.
    written = json.loads((run / "metrics.json").read_text())["tasks"]
    fresh = [unmeasured(decide(as_sent(tasks[s.task_id], s), s, Policy())) for s in samples]
    by_id = {d["task_id"]: d for d in fresh}
    for record in map(unmeasured, written):
        assert {k: v for k, v in record.items() if k in by_id[record["task_id"]]} == by_id[record["task_id"]]


def unmeasured(decision: object) -> dict:
    """A decision (or its record) as plain data, without what was measured while it was taken: the CPU and wall
    seconds of each program a code decision ran (the same program takes other times in another process)."""
    plain = msgspec.to_builtins(decision)
    for run in plain.get("runs") or ():
        run["cpu_s"] = run["wall_s"] = 0.0
    return plain


def test_the_event_loop_reads_other_answers_while_a_decision_runs(tmp_path: Path) -> None:
    # The first task's decision waits, in its worker, until every other task's sample is on disk. The runner
    # writes a sample only after reading its whole response, in its event loop: had the loop been deciding,
    # no other response would be read until the decision ended.
    run = tmp_path / "run"
    questions = [f"wait for 12 lines in {run / 'samples.jsonl'}"] + [f"What is {i} + 1?" for i in range(11)]
    path = questions_suite(tmp_path / "suite.jsonl", questions)
    with SimServer(SimConfig(suites=(path,))) as server, DecisionPool(2, decider=waiting_decide) as pool:
        result = run_lane(lane(server.base_url, str(path)), run, progress=quiet, decisions=pool, score=score_run_dir)
    assert result.summary.total == 12 and result.summary.missing == 0
    first = json.loads((run / "metrics.json").read_text())["tasks"][0]
    assert first["task_id"] == "t0"
    assert first["reason"] == "decided after 12 samples were written"


def test_requests_never_wait_for_decisions_and_answers_past_the_bound_wait_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No decision is taken before every answer is on disk: had a request waited for a decision, the run would never
    # get there (each decision then gives up after WAIT_S and says so). Four answers at most wait in memory; the
    # other 56 wait as their place in samples.jsonl and are read back from there.
    monkeypatch.setattr(runner, "DECISIONS_IN_MEMORY", 4)
    run, n = tmp_path / "run", 60
    rows = [{"id": f"t{i}of{n}", "type": "mcq", "question": f"What is {i} + 1?"} for i in range(n)]
    path = write_suite(tmp_path / "suite.jsonl", rows, answer="B", category=str(run / "samples.jsonl"),
                       options=["1", "2", "3", "4"])  # fmt: skip
    with SimServer(SimConfig(suites=(path,))) as server, DecisionPool(1, decider=gated_decide) as pool:
        sent = lane(server.base_url, str(path), concurrency=2)
        result = run_lane(sent, run, progress=quiet, decisions=pool, score=score_run_dir)
    tasks = json.loads((run / "metrics.json").read_text())["tasks"]
    assert result.summary.total == n and result.summary.missing == 0 and result.summary.errors == 0
    assert {t["reason"] for t in tasks} == {"decided after every answer was written"}
    # The decisions read back from disk are the scorer's own of each sample as written.
    suite = {task.id: task for task in load_suite(str(path)).tasks}
    for sample in samples_of(run):
        own = decide(as_sent(suite[sample.task_id], sample), sample, sent.policy())
        assert next(t for t in tasks if t["task_id"] == sample.task_id)["correct"] == own.correct
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["scoring_tail_s"] > 0  # the decisions came after the last response, and are counted apart
    assert result.summary.serving is not None and result.summary.serving.scoring_tail_s == manifest["scoring_tail_s"]


def test_a_worker_that_dies_neither_hangs_nor_loses_the_run(tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    questions = ["crash always", f"crash once {marker}"] + [f"What is {i} + 1?" for i in range(18)]
    path = questions_suite(tmp_path / "suite.jsonl", questions)
    suite = load_suite(str(path))
    run = tmp_path / "run"
    # One request at a time, so one decision at a time: a worker's death takes down no other task's decision.
    with SimServer(SimConfig(suites=(path,))) as server, DecisionPool(2, decider=crashing_decide) as pool:
        result = run_lane(
            lane(server.base_url, str(path), concurrency=1), run, progress=quiet, decisions=pool, score=score_run_dir,
        )
        # "crash always" killed its worker twice and was given up; "crash once" killed it once and was decided.
        assert marker.exists() and pool.restarts == 3 and pool.lost == 1
    assert result.summary.total == 20 and result.summary.missing == 0 and result.summary.errors == 0
    # Every task is in metrics.json with the decision the scorer takes in-process, the lost ones included.
    tasks = {task.id: task for task in suite.tasks}
    expected = {
        s.task_id: msgspec.to_builtins(decide(as_sent(tasks[s.task_id], s), s, Policy())) for s in samples_of(run)
    }
    written = {t["task_id"]: t for t in json.loads((run / "metrics.json").read_text())["tasks"]}
    assert written.keys() == expected.keys()
    for task_id, decision in expected.items():
        assert {k: v for k, v in written[task_id].items() if k in decision} == decision


def test_decisions_handed_over_together_come_back_each_to_its_caller(tmp_path: Path) -> None:
    # Sixty decisions at once go to two workers in batches; one that kills its worker, and one the scorer refuses,
    # cost only themselves: the first is given up (None, for the final scoring), the second raises to its caller.
    questions = [f"What is {i} + 1?" for i in range(60)]
    questions[7], questions[40] = "crash always", "refuse"
    jobs = _jobs(questions)

    async def both() -> tuple[list[object], list[object]]:
        with DecisionPool(2, decider=crashing_decide) as crashing, DecisionPool(2, decider=refusing_decide) as refusing:
            first = await asyncio.gather(*(crashing.decide(*job) for job in jobs), return_exceptions=True)
            second = await asyncio.gather(*(refusing.decide(*job) for job in jobs), return_exceptions=True)
            assert crashing.lost == 1 and refusing.lost == 0 and refusing.restarts == 0
            return first, second

    first, second = asyncio.run(both())
    expected = [decide(*job) for job in jobs]
    assert first[7] is None
    assert [d for i, d in enumerate(first) if i != 7] == [d for i, d in enumerate(expected) if i != 7]
    refused = second[40]
    assert isinstance(refused, ValueError) and str(refused) == "refused t40"
    assert any("raised in a decision worker" in note for note in refused.__notes__)
    assert [d for i, d in enumerate(second) if i != 40] == [d for i, d in enumerate(expected) if i != 40]


def test_one_pool_decides_in_one_event_loop_after_another() -> None:
    # A matrix's lanes share the pool, each lane in an event loop of its own.
    jobs = _jobs([f"What is {i} + 1?" for i in range(20)])
    with DecisionPool(2) as pool:
        pool.start()
        for _ in range(3):
            assert asyncio.run(_all(pool, jobs)) == [decide(*job) for job in jobs]


def test_a_pool_asked_to_warm_a_guarded_service_starts_it_in_each_worker_and_leaves_none_behind() -> None:
    # The demo's pool (warm=...): each worker starts the named service's child once it has started, before any
    # decision asks for it; the child goes with the pool.
    with DecisionPool(1, warm=["symbolic"]) as pool:
        pool.start()
        (worker,) = pool.pids()

        def warmed() -> list[int]:
            return [p.pid for p in processes() if p.parent == worker and "ocllm-guarded:symbolic" in p.command]

        assert wait_until(lambda: warmed())
        (child,) = warmed()
    assert wait_until(lambda: gone(child) and gone(worker))


async def _all(pool: DecisionPool, jobs: list[tuple[Task, Sample, Policy]]) -> list[Decision | None]:
    return list(await asyncio.gather(*(pool.decide(*job) for job in jobs)))


def _descendants(root: int) -> set[int]:
    """Every living process under `root`, from /proc (zombies, which hold no resources, left out)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
        if state != "Z":
            parents[int(entry.name)] = int(ppid)
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] != "Z":
            living.add(pid)
    return living


def _started_run(
    server: SimServer, out: Path, ignoring_sigint: bool = False
) -> tuple[subprocess.Popen[bytes], set[int]]:
    """`ocllm run` in a session of its own, once it has written samples and started its decision workers; and the
    processes under it then. `ignoring_sigint`: started with SIGINT ignored, as a shell script's background job is."""
    args = [
        sys.executable, "-m", "ocllm", "run", "--suite", "demo", "--base-url", server.base_url, "--model",
        "sim-reasoning", "--concurrency", "2", "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignoring_sigint else None
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, env=env, preexec_fn=ignore
    )
    deadline = time.monotonic() + WAIT_S
    under: set[int] = set()
    while time.monotonic() < deadline:
        samples = out / "samples.jsonl"
        under = _descendants(proc.pid)
        # The forkserver and at least one worker under it.
        if samples.exists() and samples.read_bytes().count(b"\n") >= 4 and len(under) >= 2:
            break
        time.sleep(0.01)
    assert len(under) >= 2 and proc.poll() is None, "the run should be under way, with its decision workers"
    return proc, under


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _alive(pids)


def test_ctrl_c_stops_the_run_and_leaves_no_process_behind(tmp_path: Path) -> None:
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()), latency_s=0.05)) as server:
        proc, under = _started_run(server, tmp_path / "run")
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group, workers included
        _, stderr = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 130, stderr.decode()
    said = stderr.decode().strip().splitlines()  # the progress lines, then the one line of the end
    assert said[-1] == "ocllm: interrupted; finished tasks are saved (run the same command again with --resume)"
    assert [line for line in said[:-1] if line and not line.startswith("[run] ")] == []  # no worker spoke
    assert _gone_within(under, WAIT_S) == set()


def test_ctrl_c_stops_a_run_started_with_sigint_ignored(tmp_path: Path) -> None:
    # A run started in the background from a script inherits SIGINT ignored: the wrapper's Ctrl-C did nothing and
    # the run went on to its end (issue 41). ocllm restores Ctrl-C at start: it stops as at a terminal.
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()), latency_s=0.2)) as server:
        proc, under = _started_run(server, tmp_path / "run", ignoring_sigint=True)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 130, stderr.decode()
    assert stderr.decode().strip().splitlines()[-1] == (
        "ocllm: interrupted; finished tasks are saved (run the same command again with --resume)"
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert len((tmp_path / "run" / "samples.jsonl").read_bytes().splitlines()) < 59  # it stopped, not finished
    assert _gone_within(under, WAIT_S) == set()


def test_a_killed_run_leaves_no_decision_worker_behind(tmp_path: Path) -> None:
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()), latency_s=0.05)) as server:
        proc, under = _started_run(server, tmp_path / "run")
        proc.send_signal(signal.SIGKILL)  # no cleanup at all: the workers must notice by themselves
        proc.communicate(timeout=BACKSTOP_S)
    assert _gone_within(under, WAIT_S) == set()
