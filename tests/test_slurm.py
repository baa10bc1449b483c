"""`ocllm matrix LANES --slurm` against a real Slurm: Debian's slurmctld, slurmd and munge, started on this machine by
tests/slurm_cluster.py (`make test` installs them). Two lanes of the simulator, each with the server ocllm starts for
it, two shards a lane: one element killed mid-run and requeued by Slurm finishes where it stopped, the merge waits for
every array, and the merged runs are a local run of the same lanes, task for task. Checked before anything is
submitted: resources the cluster refuses, resources of the wrong form, an API key variable that is not set."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import reserved_ports
from slurm_cluster import LocalSlurm, installed

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("slurm"),  # one cluster for the module, on one worker
    pytest.mark.skipif(not installed(), reason="Slurm is not installed (make test installs it)"),
]

SRC = Path(__file__).resolve().parents[1] / "src"
DEADLINE_S = 240  # a backstop for the whole matrix, never a measurement


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalSlurm]:
    # A short folder of its own: munge's and slurmd's unix sockets live in it (at most 108 bytes a path).
    folder = Path(tempfile.mkdtemp(prefix="ocllm-slurm-", dir="/tmp"))
    try:
        with LocalSlurm(folder) as running:
            yield running
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def ports() -> Iterator[list[int]]:
    """Two ports for the lanes' managed servers, whose commands name them before they start: locked machine-wide for
    the test (ports.py), not bound and released (another test could be handed one meanwhile)."""
    with reserved_ports(2) as held:
        yield held


def _lanes(
    folder: Path, ports: list[int], *, latency: float = 0.2, slurm: str = "", key_env: str | None = None
) -> Path:
    """Two lanes of the simulator, each with its own managed server on a port of its own."""
    lines = ["[defaults]", 'suite = "demo"', "concurrency = 2", "[defaults.slurm]", "cpus = 1", 'time = "00:10:00"']
    lines += [slurm]
    if key_env is not None:
        lines.insert(1, f'api_key_env = "{key_env}"')
    for name, model, port in (("A", "sim-baseline", ports[0]), ("B", "sim-reasoning", ports[1])):
        command = f"{sys.executable} -m ocllm serve-sim --port {port} --truncation-rate 0 --latency {latency}"
        lines += [f"[lanes.{name}]", f'model = "{model}"', f'base_url = "http://127.0.0.1:{port}/v1"',
                  f"[lanes.{name}.server]", f'command = "{command}"']  # fmt: skip
    path = folder / "lanes.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _ocllm(cluster: LocalSlurm, *args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**cluster.env, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-m", "ocllm", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip


def _queue(cluster: LocalSlurm) -> list[str]:
    return cluster.run("squeue", "-h", "-o", "%i %T").stdout.split("\n")[:-1]


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _tasks(run: Path) -> dict[str, tuple[object, ...]]:
    """What a run decided of each task, and what it was answered."""
    metrics = json.loads((run / "metrics.json").read_text())
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    answered = {s["task_id"]: (s.get("content"), s.get("reasoning")) for s in samples}
    assert len(answered) == len(samples)  # nothing asked twice
    return {t["task_id"]: (t["correct"], t["extracted_final_answer"], answered[t["task_id"]]) for t in metrics["tasks"]}


def _processes_naming(word: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if word in text:
            found.append(text)
    return found


def test_a_killed_element_is_requeued_and_the_merged_runs_equal_a_local_run(
    cluster: LocalSlurm, tmp_path: Path, ports: list[int]
) -> None:
    lanes = _lanes(tmp_path, ports)
    out = tmp_path / "out"
    submitting = _ocllm(cluster, "matrix", str(lanes), "--slurm", "--shards", "2", "--out", str(out), "--wait",
                        cwd=tmp_path)  # fmt: skip
    # Lane A's element 0 killed once it has answered a few tasks, and not all: Slurm requeues it.
    jobs = out / "slurm" / "jobs.json"
    samples = out / "shard-0" / "A" / "samples.jsonl"
    deadline = time.monotonic() + DEADLINE_S
    while not (jobs.exists() and _lines(samples) >= 3):
        assert submitting.poll() is None and time.monotonic() < deadline, submitting.stdout and submitting.stdout.read()
        time.sleep(0.1)
    written = _lines(samples)
    # The node fails under it: set down, every job on it is killed and requeued; back up, they start again.
    cluster.run("scontrol", "update", f"nodename={cluster.node}", "state=down", "reason=ocllm-test")
    cluster.run("scontrol", "update", f"nodename={cluster.node}", "state=resume")
    try:
        said, _ = submitting.communicate(timeout=DEADLINE_S)
    finally:
        submitting.kill()
    assert submitting.returncode == 0, said + cluster.logs()
    assert "requeued" in said and "merged:" in said
    log = (out / "slurm" / "logs" / "A-0.log").read_text()
    assert "restart 0" in log and "restart 1" in log  # two attempts, one log (--open-mode=append)
    assert 3 <= written < 30  # it was killed mid-run: some tasks done, not all
    # The merged runs against one machine's run of the same lanes: the same tasks, answers and decisions.
    local = _ocllm(cluster, "matrix", str(lanes), "--out", str(tmp_path / "local"), cwd=tmp_path)
    said, _ = local.communicate(timeout=DEADLINE_S)
    assert local.returncode == 0, said
    for lane in ("A", "B"):
        merged = _tasks(out / "merged" / lane)
        assert len(merged) == 59 and merged == _tasks(tmp_path / "local" / lane)
    assert (out / "merged" / "report").is_dir()
    # `ocllm watch` of the submitted matrix: its shards read from shared storage, each lane's shards summed.
    watched = _ocllm(cluster, "watch", str(out), "--once", cwd=tmp_path)
    shown, _ = watched.communicate(timeout=120)
    assert watched.returncode == 0, shown
    for lane in ("A", "B"):
        right = sum(1 for correct, _, _ in _tasks(out / "merged" / lane).values() if correct)
        row = next(line for line in shown.splitlines() if line.lstrip("│|┃ ").startswith(f"{lane} "))
        assert "59 of 59 (100%)" in row and f"({right}/59)" in row, shown
    # Nothing left behind: no job, no simulator.
    assert _queue(cluster) == []
    assert not [p for port in ports for p in _processes_naming(f"--port {port}")]


def _element_pid(out: Path, lane: str) -> int | None:
    """The ocllm process an element of `lane` runs (its command names the lane and the output folder)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        element = b"--shard" in words and b"--slurm" not in words  # not the submitting command itself
        if element and lane.encode() in words and any(str(out).encode() in w for w in words):
            return int(cmdline.parent.name)
    return None


def test_an_element_whose_ocllm_is_killed_requeues_itself_and_finishes(
    cluster: LocalSlurm, tmp_path: Path, ports: list[int]
) -> None:
    # As the kernel's OOM killer would: SIGKILL to ocllm itself, not through Slurm (scancel --signal=KILL cancels).
    lanes = _lanes(tmp_path, ports)
    out = tmp_path / "out"
    submitting = _ocllm(cluster, "matrix", str(lanes), "--lane", "A", "--slurm", "--out", str(out), "--wait",
                        cwd=tmp_path)  # fmt: skip
    samples = out / "shard-0" / "A" / "samples.jsonl"
    deadline = time.monotonic() + DEADLINE_S
    while (pid := _element_pid(out, "A")) is None or _lines(samples) < 3:
        assert submitting.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    try:
        said, _ = submitting.communicate(timeout=DEADLINE_S)
    finally:
        submitting.kill()
    assert submitting.returncode == 0, said + cluster.logs()
    log = (out / "slurm" / "logs" / "A-0.log").read_text()
    assert "ocllm was killed (signal 9): the element is requeued" in log and "restart 1" in log
    merged = _tasks(out / "merged" / "A")  # every task once: the requeued element resumed, asked nothing twice
    assert len(merged) == 59
    assert _queue(cluster) == [] and not _processes_naming(f"--port {ports[0]}")


def test_the_cluster_refuses_before_anything_is_submitted(
    cluster: LocalSlurm, tmp_path: Path, ports: list[int]
) -> None:
    lanes = _lanes(tmp_path, ports, slurm='partition = "no-such-partition"')
    done = _ocllm(cluster, "matrix", str(lanes), "--slurm", "--out", str(tmp_path / "out"), cwd=tmp_path)
    said, _ = done.communicate(timeout=60)
    assert done.returncode == 2 and "Traceback" not in said
    assert "the cluster refused lane 'A''s job array" in said and "invalid partition" in said
    assert _queue(cluster) == [] and not (tmp_path / "out" / "slurm" / "jobs.json").exists()


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('mem = "a lot"', "mem 'a lot' is not of Slurm's form"),
        ("gpus = 0", "gpus must be at least 1"),
        ('[lanes.B.slurm]\ntime = "four hours"', "lane 'B': slurm: time 'four hours' is not of Slurm's form"),
        ('gpu = "1"', "gpu"),
        ('extra = ["--output=/tmp/x"]', "ocllm sets --output itself"),
    ],
)
def test_resources_of_the_wrong_form_are_one_line(
    cluster: LocalSlurm, tmp_path: Path, ports: list[int], table: str, said: str
) -> None:
    lanes = _lanes(tmp_path, ports, slurm=table)
    done = _ocllm(cluster, "matrix", str(lanes), "--slurm", "--out", str(tmp_path / "out"), cwd=tmp_path)
    output, _ = done.communicate(timeout=60)
    assert done.returncode == 2 and said in output and "Traceback" not in output
    assert _queue(cluster) == []


def test_the_api_key_reaches_the_jobs_by_its_name_only(cluster: LocalSlurm, tmp_path: Path, ports: list[int]) -> None:
    lanes = _lanes(tmp_path, ports, key_env="OCLLM_SLURM_TEST_KEY")
    out = tmp_path / "out"
    os.environ.pop("OCLLM_SLURM_TEST_KEY", None)
    unset = _ocllm(cluster, "matrix", str(lanes), "--slurm", "--out", str(out), cwd=tmp_path)
    said, _ = unset.communicate(timeout=60)
    assert unset.returncode == 2 and "OCLLM_SLURM_TEST_KEY (api_key_env) is not set" in said
    assert _queue(cluster) == []
    secret = "sk-do-not-write-me-anywhere"
    env = {**cluster.env, "PYTHONPATH": str(SRC), "OCLLM_SLURM_TEST_KEY": secret}
    done = subprocess.run([sys.executable, "-m", "ocllm", "matrix", str(lanes), "--slurm", "--out", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ids = json.loads((out / "slurm" / "jobs.json").read_text())
    cluster.run("scancel", *ids["arrays"].values(), ids["merge"])
    scripts = list((out / "slurm").glob("*.sbatch"))
    assert len(scripts) == 3 and all(secret not in p.read_text() for p in scripts)
    assert all("--export=ALL" in p.read_text() for p in scripts)


def test_ctrl_c_while_waiting_cancels_every_job(cluster: LocalSlurm, tmp_path: Path, ports: list[int]) -> None:
    lanes = _lanes(tmp_path, ports, latency=1.0)
    out = tmp_path / "out"
    waiting = _ocllm(cluster, "matrix", str(lanes), "--slurm", "--out", str(out), "--wait", cwd=tmp_path)
    deadline = time.monotonic() + DEADLINE_S
    while _lines(out / "shard-0" / "A" / "samples.jsonl") < 1:
        assert waiting.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    waiting.send_signal(signal.SIGINT)
    said, _ = waiting.communicate(timeout=60)
    assert waiting.returncode != 0 and "cancelled jobs" in said and "Traceback" not in said
    deadline = time.monotonic() + 60
    while _queue(cluster) or [p for port in ports for p in _processes_naming(f"--port {port}")]:
        assert time.monotonic() < deadline, (_queue(cluster), cluster.logs())
        time.sleep(0.5)
    assert _lines(out / "shard-0" / "A" / "samples.jsonl") >= 1  # what it finished stays
