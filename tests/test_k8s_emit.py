"""`ocllm matrix LANES --emit k8s`: the lanes as a ConfigMap, an Indexed Job per lane and a merge Job, each valid
against Kubernetes' own OpenAPI schema (kubernetes-validate ships them per version; strict: no field Kubernetes does
not know), the API key named by its variable only, the lanes' resources as the containers'."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
KUBERNETES = "1.29"  # the oldest release whose Indexed Jobs every field here is in


def _emit(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    environment = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    command = [sys.executable, "-m", "ocllm", "matrix", *args]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=environment)


def _lanes(tmp_path: Path) -> Path:
    path = tmp_path / "lanes.toml"
    lines = [
        "[defaults]", 'base_url = "http://127.0.0.1:8000/v1"', 'suite = "demo"', 'api_key_env = "VLLM_KEY"',
        "[defaults.server]", 'command = "vllm serve Qwen/Qwen3-8B --port 8000"',
        "[defaults.slurm]", "cpus = 4", 'mem = "64G"', 'partition = "gpu"',
        "[lanes.A_baseline]", 'model = "qwen3-8b"',
        "[lanes.B_fp8]", 'model = "qwen3-8b"', 'reasoning = "native"',
        "[lanes.B_fp8.slurm]", 'gres = "gpu:a100:2"', "",
    ]  # fmt: skip
    path.write_text("\n".join(lines))
    return path


def _objects(path: Path) -> list[dict[str, Any]]:
    return [json.loads(part) for part in path.read_text().split("---\n") if part.strip()]


def test_the_jobs_are_valid_kubernetes_and_say_what_the_lanes_ask(tmp_path: Path) -> None:
    lanes = _lanes(tmp_path)
    done = _emit(tmp_path, str(lanes), "--emit", "k8s", "--image", "ghcr.io/me/ocllm:1", "--shards", "3",
                 "--out", str(tmp_path / "qwen3"), env={"VLLM_KEY": "sk-secret-never-written"})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    written = tmp_path / "qwen3" / "k8s" / "matrix.yaml"
    assert "sk-secret-never-written" not in written.read_text()
    objects = _objects(written)
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)  # raises on anything Kubernetes would refuse
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert kinds == [("ConfigMap", "qwen3-lanes"), ("Job", "qwen3-a-baseline"), ("Job", "qwen3-b-fp8"),
                     ("Job", "qwen3-merge")]  # fmt: skip
    assert objects[0]["data"]["lanes.toml"] == lanes.read_text()
    for job, lane, gpus in ((objects[1], "A_baseline", None), (objects[2], "B_fp8", "2")):
        spec = job["spec"]
        assert spec["completionMode"] == "Indexed" and spec["completions"] == 3
        container = spec["template"]["spec"]["containers"][0]
        command = container["command"]
        assert command[command.index("--lane") + 1] == lane and "--resume" in command
        assert command[command.index("--shard") + 1] == "$(JOB_COMPLETION_INDEX)/3"
        assert command[command.index("--out") + 1] == "/shared/qwen3/shard-$(JOB_COMPLETION_INDEX)"
        assert container["env"] == [
            {"name": "VLLM_KEY", "valueFrom": {"secretKeyRef": {"name": "ocllm-api-keys", "key": "VLLM_KEY"}}}
        ]
        assert container["resources"]["requests"] == {"cpu": "4", "memory": "64Gi"}
        assert container["resources"]["limits"].get("nvidia.com/gpu") == gpus
    merge = objects[3]["spec"]["template"]["spec"]
    waited = merge["initContainers"][0]["command"][2]
    assert all(f"/shared/qwen3/shard-{k}/{lane}/metrics.json" in waited for k in range(3) for lane in ("A_baseline",
               "B_fp8"))  # fmt: skip
    assert "ocllm merge /shared/qwen3/shard-0/B_fp8 /shared/qwen3/shard-1/B_fp8 /shared/qwen3/shard-2/B_fp8 -o " \
        "/shared/qwen3/merged/B_fp8" in merge["containers"][0]["command"][2]
    assert "kubectl create secret generic ocllm-api-keys --from-literal=VLLM_KEY=" in done.stdout


def test_the_schema_check_refuses_what_kubernetes_would(tmp_path: Path) -> None:
    done = _emit(tmp_path, str(_lanes(tmp_path)), "--emit", "k8s", "--image", "x", "--out", str(tmp_path / "m"))
    assert done.returncode == 0, done.stderr
    job = _objects(tmp_path / "m" / "k8s" / "matrix.yaml")[1]
    job["spec"]["completionsMode"] = job["spec"].pop("completionMode")  # a misspelt field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, KUBERNETES, strict=True)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--emit", "k8s"], "--emit k8s needs --image"),
        (["--emit", "k8s", "--image", "x", "--slurm"], "not with --slurm or --wait"),
        (["--shards", "2"], "--shards, --wait and --image go with --slurm or --emit k8s"),
        (["--emit", "k8s", "--image", "x", "--shard", "0/2"], "give --shards N, not --shard K/N"),
    ],
)
def test_flags_that_do_not_go_together_are_one_line(tmp_path: Path, args: list[str], said: str) -> None:
    done = _emit(tmp_path, str(_lanes(tmp_path)), *args, "--out", str(tmp_path / "m"))
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
