"""The simulator samples as a server does, over real HTTP on 127.0.0.1: temperature 0 (or none) is today's
repeatable answer whatever the seed; above it a seeded request repeats, another seed draws again, no seed
draws afresh; and a task's samples are correlated (a hard task is mostly wrong in every sample).

Answers are read here by a small reader of the "FINAL: X" line, not by ocllm's scorer. The figures the tests
compare with (the binomial variance of independent draws, the standard error of the mean) are worked out in
the tests from textbook formulas, never taken from the simulator's code.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import re
from collections import Counter
from typing import Any

import aiohttp
import pytest

from ocllm.models import Task
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.substrings.fields import SubstringsTask
from ocllm.sim import SimConfig, SimServer

LETTERS = "ABCDEFGHIJ"
FINAL = re.compile(r"FINAL: ([A-J])\s*\Z")


def mcq_tasks(count: int, seed: int = 11) -> list[Task]:
    """`count` MCQ tasks with 4 to 10 options and a random gold letter."""
    rng = random.Random(seed)
    tasks = []
    for n in range(count):
        options = [f"quantity {n}-{i}" for i in range(rng.randint(4, 10))]
        question = f"Sampled question number {n}: which of these quantities is the {n}th one?"
        tasks.append(McqTask(id=f"s{n:03d}", question=question, options=options,
                          answer=LETTERS[rng.randrange(len(options))], category="sampled"))
    return tasks


def prompt_of(task: Task) -> str:
    lines = [f"{LETTERS[i]}. {text}" for i, text in enumerate(task.options or [])]
    return task.question + "\n\n" + "\n".join(lines) + "\n\nThink step by step, then end with FINAL: <letter>."


def body(model: str, task: Task, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": prompt_of(task)}], "max_tokens": 2048, **extra}


async def _post_all(url: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=32)) as session:

        async def one(payload: dict[str, Any]) -> dict[str, Any]:
            async with session.post(url, json=payload) as response:
                assert response.status == 200, await response.text()
                answer: dict[str, Any] = await response.json()
                answer.pop("created")  # the only field that may differ between two identical requests
                return answer

        return await asyncio.gather(*(one(b) for b in bodies))


def post_all(server: SimServer, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return asyncio.run(_post_all(server.base_url + "/chat/completions", bodies))


def letter(response: dict[str, Any]) -> str | None:
    match = FINAL.search(response["choices"][0]["message"]["content"] or "")
    return match.group(1) if match else None


def sampled_letters(
    tasks: list[Task], model: str, accuracy: float, temperature: float, k: int
) -> list[list[str | None]]:
    """Each task's k answers at `temperature`, sample i sent with seed i (as a lane of seed 0 sends them)."""
    config = SimConfig(models={model: accuracy}, tasks=tuple(tasks), truncation_rate=0.0, seed=3)
    bodies = [body(model, t, temperature=temperature, seed=i) for t in tasks for i in range(k)]
    with SimServer(config) as server:
        responses = post_all(server, bodies)
    letters = [letter(r) for r in responses]
    return [letters[n * k : (n + 1) * k] for n in range(len(tasks))]


def per_task_means(tasks: list[Task], letters: list[list[str | None]]) -> list[float]:
    return [sum(x == t.answer for x in row) / len(row) for t, row in zip(tasks, letters, strict=True)]


def variance(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


# ---------------------------------------------------------------------------------------------- temperature 0

# A sha256 of the answers to GREEDY_REQUESTS, taken from the simulator before it honoured temperature and seed
# (main at 9eeedc8): temperature 0, or none, must keep giving exactly those answers, whatever the seed.
GREEDY_DIGEST = "1a824914562af38ba9b7a4ea30f92ee4a5cbe27f91b916ba4bf9e2a9962f5882"


def greedy_tasks() -> list[Task]:
    math = MathTask(id="m", question="A baker sells 12 boxes of 6 cookies. How many cookies?", answer="72")
    listed = SubstringsTask(id="l", question="Name the colour and the shape of object 7.",
                  required_substrings=["colour-7", "shape-7"])
    return [*mcq_tasks(12), math, listed]


def greedy_requests(tasks: list[Task]) -> list[dict[str, Any]]:
    requests = []
    for task in tasks:
        prompt = prompt_of(task) if task.type == "mcq" else task.question
        for model in ("sim-baseline", "sim-reasoning"):
            base = {"model": model, "messages": [{"role": "user", "content": prompt}]}
            requests += [base, {**base, "temperature": 0.0}, {**base, "temperature": 0, "seed": 7}]
    return requests


def test_temperature_zero_gives_todays_answer_whatever_the_seed() -> None:
    tasks = greedy_tasks()
    with SimServer(SimConfig(tasks=tuple(tasks), seed=5)) as server:
        answers = post_all(server, greedy_requests(tasks))
    # No temperature, temperature 0 and temperature 0 with a seed: one answer, three times.
    for n in range(0, len(answers), 3):
        assert answers[n] == answers[n + 1] == answers[n + 2]
    digest = hashlib.sha256(json.dumps(answers, sort_keys=True).encode()).hexdigest()
    assert digest == GREEDY_DIGEST


# ----------------------------------------------------------------------------------------------- sampled draws


def test_a_seeded_sampled_request_repeats_even_on_a_new_server() -> None:
    tasks = mcq_tasks(30)
    config = SimConfig(tasks=tuple(tasks), seed=2)
    requests = [body("sim-reasoning", t, temperature=0.6, seed=41) for t in tasks]
    with SimServer(config) as server:
        first, second = post_all(server, requests), post_all(server, requests)
    with SimServer(config) as server:
        third = post_all(server, requests)
    assert first == second == third


def test_other_seeds_draw_other_answers() -> None:
    tasks = mcq_tasks(100)
    rows = sampled_letters(tasks, "m", 0.6, temperature=0.8, k=6)
    # At 0.6 a task is mixed in most of its draws; one seed giving one answer for every task would be no sampling.
    mixed = [row for row in rows if len(set(row)) > 1]
    assert len(mixed) >= 30, len(mixed)
    assert all(x is not None for row in rows for x in row)  # every sampled answer is still readable


def test_the_seed_and_the_temperature_decide_the_draw() -> None:
    tasks = mcq_tasks(40)
    with SimServer(SimConfig(tasks=tuple(tasks))) as server:
        ids = {
            (seed, temperature): [r["id"] for r in post_all(server, [body("sim-baseline", t, temperature=temperature,
                                                                          seed=seed) for t in tasks])]
            for seed in (0, 1)
            for temperature in (0.6, 0.7)
        }
    # Four different draws of every task: no two (seed, temperature) pairs share an answer's id.
    assert len({i for draw in ids.values() for i in draw}) == 4 * len(tasks)


def test_unseeded_sampled_requests_draw_afresh() -> None:
    task = mcq_tasks(1)[0]
    with SimServer(SimConfig(tasks=(task,))) as server:
        answers = post_all(server, [body("sim-baseline", task, temperature=0.7) for _ in range(40)])
    assert len({a["id"] for a in answers}) == 40
    # The wording is drawn too (3 openings times 3 closings at least), so 40 alike would be no fresh draw.
    assert len({a["choices"][0]["message"]["content"] for a in answers}) > 1


def test_a_sampled_request_with_a_seed_of_another_type_is_answered() -> None:
    task = mcq_tasks(1)[0]
    with SimServer(SimConfig(tasks=(task,))) as server:
        answers = post_all(server, [body("sim-baseline", task, temperature=0.7, seed="7"),
                                    body("sim-baseline", task, temperature="hot", seed=7)])
    assert all(letter(a) is not None for a in answers)


# ----------------------------------------------------------------------------------------- accuracy, clustering

# 200 tasks of 8 samples each. With the config seed fixed these draws are fixed, so no test below is flaky; the
# bounds are loose enough that they would hold for almost any config seed.
TASKS, K, ACCURACY = 200, 8, 0.7


@pytest.fixture(scope="module")
def sampled() -> dict[float, tuple[list[Task], list[list[str | None]]]]:
    tasks = mcq_tasks(TASKS)
    return {t: (tasks, sampled_letters(tasks, "m", ACCURACY, temperature=t, k=K)) for t in (0.3, 0.6, 1.5)}


@pytest.mark.parametrize("temperature", [0.3, 0.6, 1.5])
def test_the_mean_over_tasks_and_samples_is_the_configured_accuracy(sampled: Any, temperature: float) -> None:
    tasks, letters = sampled[temperature]
    means = per_task_means(tasks, letters)
    observed = sum(means) / len(means)
    # Samples of one task are not independent: the standard error of the mean comes from the per-task means
    # (clustered on tasks). Five of them, or 0.05 at least, is a loose bound.
    stderr = math.sqrt(variance(means) / len(means))
    assert abs(observed - ACCURACY) < max(0.05, 5 * stderr), (observed, stderr)


@pytest.mark.parametrize("temperature", [0.3, 0.6, 1.5])
def test_samples_of_a_task_are_correlated(sampled: Any, temperature: float) -> None:
    tasks, letters = sampled[temperature]
    means = per_task_means(tasks, letters)
    p = sum(means) / len(means)
    # k independent draws of chance p give per-task means of variance p(1 - p) / k (the binomial's, over k).
    independent = p * (1 - p) / K
    # The sample variance of 200 such means is within ~10% of it; clustered samples give several times more.
    assert variance(means) > 2 * independent, (variance(means), independent)
    # A real model's hard tasks exist: some tasks are wrong in most samples, some right in all (independent
    # draws at 0.7 would give about 2 and 12 of 200). And the samples are no copies: many tasks are mixed.
    assert sum(m <= 0.25 for m in means) >= 10 and sum(m == 1 for m in means) >= 20
    assert sum(0 < m < 1 for m in means) >= 40


def test_a_higher_temperature_spreads_the_samples_more(sampled: Any) -> None:
    spread = {t: variance(per_task_means(*sampled[t])) for t in (0.3, 0.6, 1.5)}
    # A task's samples are more alike the colder the sampling: more variance between tasks, less within.
    assert spread[0.3] > spread[0.6] > spread[1.5], spread


def test_wrong_answers_vary_between_samples_so_majorities_split(sampled: Any) -> None:
    tasks, letters = sampled[0.6]
    splits = ties = 0
    for task, row in zip(tasks, letters, strict=True):
        wrong = {x for x in row if x != task.answer}
        splits += len(wrong) > 1
        counts = Counter(row).most_common()
        ties += len(counts) > 1 and counts[0][1] == counts[1][1]
    assert splits >= 20 and ties >= 5, (splits, ties)


def test_a_cold_sample_is_right_where_the_greedy_answer_is(sampled: Any) -> None:
    tasks, letters = sampled[0.3]
    config = SimConfig(models={"m": ACCURACY}, tasks=tuple(tasks), truncation_rate=0.0, seed=3)
    with SimServer(config) as server:
        greedy = [letter(r) == t.answer for t, r in zip(tasks, post_all(server, [body("m", t) for t in tasks]),
                                                        strict=True)]
    # A task's chance of being right rises with its greedy outcome: tasks right at temperature 0 are the easy ones.
    means = per_task_means(tasks, letters)
    right = [m for m, g in zip(means, greedy, strict=True) if g]
    wrong = [m for m, g in zip(means, greedy, strict=True) if not g]
    assert sum(right) / len(right) > 0.8 and sum(wrong) / len(wrong) < 0.4, (right, wrong)


@pytest.mark.parametrize(("accuracy", "right"), [(1.0, True), (0.0, False)])
def test_a_sure_model_is_sure_in_every_sample(accuracy: float, right: bool) -> None:
    tasks = mcq_tasks(20)
    rows = sampled_letters(tasks, "m", accuracy, temperature=1.0, k=4)
    assert all((x == t.answer) is right for t, row in zip(tasks, rows, strict=True) for x in row)


def test_wrong_math_answers_vary_between_samples() -> None:
    task = MathTask(id="m", question="A baker sells 12 boxes of 6 cookies. How many cookies?", answer="72")
    with SimServer(SimConfig(models={"m": 0.0}, tasks=(task,), truncation_rate=0.0)) as server:
        answers = post_all(server, [
            {"model": "m", "messages": [{"role": "user", "content": task.question}], "temperature": 1.0, "seed": i}
            for i in range(16)
        ])
    stated = {re.findall(r"-?\d+", a["choices"][0]["message"]["content"])[-1] for a in answers}
    assert stated <= {"71", "73", "-72"} and len(stated) >= 2, stated


# ------------------------------------------------------------------------------------------- a lane's samples


def test_a_sampled_lanes_requests_draw_k_answers_that_come_again() -> None:
    # The bodies ocllm sends for a lane's k samples (sample i with seed + i), scored by ocllm's own scorer.
    from ocllm.models import Policy, Sample
    from ocllm.run.lanes import lane_from_mapping
    from ocllm.run.prompting import request_body
    from ocllm.scoring import decide
    from ocllm.suites import load_suite, resolve_suite

    suite = resolve_suite("demo")
    tasks = load_suite(str(suite)).tasks
    settings = {"base_url": "http://127.0.0.1:1/v1", "model": "sim-reasoning", "temperature": 0.6, "seed": 0,
                "reasoning": "native", "samples_per_task": 4}  # fmt: skip
    lane = lane_from_mapping("L", settings, "test")
    bodies = [request_body(t, lane, i) for t in tasks for i in range(lane.samples_per_task)]
    with SimServer(SimConfig(suites=(suite,))) as server:
        first, again = post_all(server, bodies), post_all(server, bodies)
    assert first == again
    decisions = []
    for n, response in enumerate(first):
        choice = response["choices"][0]
        task = tasks[n // lane.samples_per_task]
        sample = Sample(task_id=task.id, sample=n % lane.samples_per_task, content=choice["message"]["content"],
                        reasoning=choice["message"].get("reasoning_content"), finish_reason=choice["finish_reason"])
        decisions.append(decide(task, sample, Policy()))
    rows = [decisions[n : n + lane.samples_per_task] for n in range(0, len(decisions), lane.samples_per_task)]
    # Some tasks are split between right and wrong; of the lettered answers, the truncated ones are the only
    # unread ones (a list of required items has no letter to read).
    assert any(len({d.correct for d in row}) > 1 for row in rows)
    lettered = [d for n, d in enumerate(decisions) if tasks[n // lane.samples_per_task].type == "mcq"]
    assert lettered and all(d.extracted_final_answer is not None or d.truncated for d in lettered)
