"""`ocllm matrix LANES --emit k8s`: the matrix as Kubernetes objects for `kubectl apply -f`, written, never applied:
the lanes file as a ConfigMap, one Indexed Job per lane (completion index K runs shard K of the lane with its
managed server, `--resume`, into /shared/NAME/shard-K/LANE on the claim `--pvc` names), and a merge Job whose init
container waits until every shard has finished (Kubernetes has no dependency between Jobs), then merges each lane
and writes the matrix report. The API key of a lane reaches its pods by its variable's name, from the Secret
`ocllm-api-keys` (a key per variable), never written here. A lane's `cpus`, `mem` and `gpus` (or a `gpu:N` gres)
are its container's resources; partition, account, time and extra options are Slurm's and not used here.

The file is JSON documents separated by `---` (JSON is YAML): nothing here needs a YAML writer."""

from __future__ import annotations

import json
import re
from typing import Any

from ocllm.cluster.resources import SlurmResources
from ocllm.errors import OcllmError
from ocllm.run.lanes import Lane

SECRET = "ocllm-api-keys"
MOUNT = "/shared"
CONFIG_MOUNT = "/config"
_GPU_GRES = re.compile(r"gpu(?::[\w.-]+)?:(\d+)")


def k8s_objects(
    lanes: dict[str, Lane],
    resources: dict[str, SlurmResources],
    lanes_text: str,
    name: str,
    shards: int,
    image: str,
    claim: str,
    run_flags: list[str],
) -> list[dict[str, Any]]:
    """The ConfigMap, one Indexed Job per lane, and the merge Job, for a matrix called `name` (a DNS label)."""
    config = f"{name}-lanes"
    root = f"{MOUNT}/{name}"
    objects: list[dict[str, Any]] = [{
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": config}, "data": {"lanes.toml": lanes_text},
    }]  # fmt: skip
    jobs = {lane_name: f"{name}-{_label(lane_name)}"[:63].rstrip("-") for lane_name in lanes}
    if len(set(jobs.values())) < len(jobs):
        raise OcllmError(f"--emit k8s: lanes {', '.join(lanes)} do not make distinct Job names; rename one")
    for lane_name, lane in lanes.items():
        index = "$(JOB_COMPLETION_INDEX)"  # Kubernetes expands it: the pod's completion index
        command = ["ocllm", "matrix", f"{CONFIG_MOUNT}/lanes.toml", "--lane", lane_name, "--resume", *run_flags,
                   "--shard", f"{index}/{shards}", "--out", f"{root}/shard-{index}"]  # fmt: skip
        env = [_secret_env(lane.api_key_env)] if lane.api_key_env else []
        container = _container("ocllm", image, command, env, _resources(resources[lane_name]))
        objects.append(_job(jobs[lane_name], config, claim, container, completions=shards,
                            labels={"ocllm-matrix": name, "ocllm-lane": _label(lane_name)}))  # fmt: skip
    objects.append(_merge_job(name, lanes, shards, image, config, claim, root))
    return objects


def write_k8s(objects: list[dict[str, Any]]) -> str:
    return "".join(f"---\n{json.dumps(obj, indent=2)}\n" for obj in objects)


def _merge_job(name: str, lanes: dict[str, Lane], shards: int, image: str, config: str, claim: str,
               root: str) -> dict[str, Any]:  # fmt: skip
    finished = " ".join(f"{root}/shard-{k}/{lane}/metrics.json" for lane in lanes for k in range(shards))
    wait = ["sh", "-c", f'for f in {finished}; do until [ -f "$f" ]; do sleep 30; done; done']
    merges = [f"ocllm merge {' '.join(f'{root}/shard-{k}/{lane}' for k in range(shards))} -o {root}/merged/{lane}"
              for lane in lanes]  # fmt: skip
    script = " && ".join([*merges, f"ocllm matrix-report {root}/merged"])
    job = _job(f"{name}-merge", config, claim, _container("merge", image, ["sh", "-c", script], [], {}),
               completions=None, labels={"ocllm-matrix": name})  # fmt: skip
    job["spec"]["template"]["spec"]["initContainers"] = [_container("wait-for-shards", image, wait, [], {})]
    return job


def _job(name: str, config: str, claim: str, container: dict[str, Any], completions: int | None,
         labels: dict[str, str]) -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {
        "backoffLimit": 6,  # a pod lost (preempted, evicted) is started again; --resume takes up where it stopped
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "restartPolicy": "Never",
                "containers": [container],
                "volumes": [
                    {"name": "runs", "persistentVolumeClaim": {"claimName": claim}},
                    {"name": "lanes", "configMap": {"name": config}},
                ],
            },
        },
    }
    if completions is not None:
        spec.update(completionMode="Indexed", completions=completions, parallelism=completions)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": labels}, "spec": spec}


def _container(name: str, image: str, command: list[str], env: list[dict[str, Any]],
               resources: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    container: dict[str, Any] = {
        "name": name, "image": image, "command": command,
        "volumeMounts": [{"name": "runs", "mountPath": MOUNT}, {"name": "lanes", "mountPath": CONFIG_MOUNT}],
    }  # fmt: skip
    if env:
        container["env"] = env
    if resources:
        container["resources"] = resources
    return container


def _secret_env(variable: str) -> dict[str, Any]:
    return {"name": variable, "valueFrom": {"secretKeyRef": {"name": SECRET, "key": variable}}}


def _resources(res: SlurmResources) -> dict[str, Any]:
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if res.cpus is not None:
        requests["cpu"] = str(res.cpus)
    if res.mem is not None:
        # Slurm's K, M, G, T (no unit: megabytes) are powers of 1,024: Kubernetes' Ki, Mi, Gi, Ti.
        unit = res.mem[-1] if res.mem[-1].isalpha() else "M"
        requests["memory"] = limits["memory"] = f"{res.mem.rstrip('KMGT')}{unit}i"
    gpus = res.gpus
    if gpus is None and res.gres is not None and (match := _GPU_GRES.fullmatch(res.gres)):
        gpus = int(match.group(1))
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    return {key: value for key, value in (("requests", requests), ("limits", limits)) if value}


def _label(text: str) -> str:
    """A lane's name as a DNS label's part: lowercase letters, digits and dashes."""
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-") or "lane"


def matrix_name(text: str) -> str:
    """The name of the matrix's objects: the output folder's name as a DNS label (at most 40 characters, so that a
    lane's Job name fits in 63)."""
    return _label(text)[:40].strip("-") or "ocllm"
