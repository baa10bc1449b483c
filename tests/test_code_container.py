"""The container-engine fallback (docs/scoring/code.md, C10), against a stand-in `docker` that records the command it
is given and then runs the box's own script with this machine's Python, in the box's folder, with the standard
streams the engine would give the container (no sandbox: the stand-in checks the command and the wiring, not the
isolation). The command keeps the network off, the root read-only, the user unprivileged, the capabilities dropped,
the same kernel calls refused and the limits set; a function task's two boxes talk through their standard input and
output, and the tests' report comes back on stderr. (The real engine is not run: it needs a daemon and an image this
machine does not have.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# The stand-in: `image inspect`, `kill` and the version probe succeed; a run records its arguments (and the seccomp
# profile it names), then runs `python3 -I /job/<script> <fds>` from the mounted folder with the host's Python.
FAKE = textwrap.dedent(
    """\
    #!{python}
    import json, os, sys
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        print("Docker version 28.0.0-fake"); sys.exit(0)
    if args[:2] == ["image", "inspect"] or args[:1] == ["kill"]:
        print("[{{}}]"); sys.exit(0)
    if args[:1] == ["run"] and "-c" in args:
        print("3.11.9"); sys.exit(0)
    if args[:1] == ["run"]:
        profile = next(a.split("=", 1)[1] for a in args if a.startswith("seccomp="))
        with open({log!r}, "a") as log:
            seen = {{"args": args, "env": dict(os.environ), "profile": json.load(open(profile))}}
            log.write(json.dumps(seen) + "\\n")
        folder = next(a.split(":")[0] for a in args if a.endswith(":/job:ro"))
        script, fds = args[args.index("-I") + 1 :]
        os.execv({python!r}, [{python!r}, "-I", script.replace("/job", folder), fds])
    sys.exit(1)
    """
)

PROGRAM = """
import json, sys
from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.fields import CodeTask
task = CodeTask(id="t", question="q", entry_point="f", test="def check(candidate):\\n    assert candidate(1) == 2\\n")
sample = Sample(task_id="t", content="```python\\n" + sys.argv[1] + "\\n```")
d = decide_code(task, sample, Policy())
print(json.dumps({"outcome": d.outcome, "reason": d.reason, "kind": d.sandbox.kind, "version": d.sandbox.version,
                  "python": d.sandbox.python_version, "stderr": d.runs[0].stderr_head if d.runs else None}))
"""


def _decide(tmp_path: Path, program: str) -> tuple[dict[str, object], list[dict[str, object]]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "runs.jsonl"
    log.unlink(missing_ok=True)
    fake = bin_dir / "docker"
    fake.write_text(FAKE.format(python=sys.executable, log=str(log)))
    fake.chmod(0o755)
    env = {
        **os.environ, "PATH": str(bin_dir), "OCLLM_SANDBOX": "docker", "OCLLM_CODE_IMAGE": "python:3.11-slim",
        "OPENAI_API_KEY": "sk-canary-container", "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src"),
        "OCLLM_SANDBOX_BUDGET_DIR": str(tmp_path / "budget"),
    }  # fmt: skip
    argv = [sys.executable, "-c", PROGRAM, program]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    return json.loads(done.stdout.strip().splitlines()[-1]), runs


def test_the_container_fallback_runs_two_locked_down_boxes_and_reads_the_report_from_stderr(tmp_path: Path) -> None:
    found, runs = _decide(tmp_path, "def f(x):\n    print('the program says hello')\n    return x + 1")
    assert (found["outcome"], found["kind"], found["version"], found["python"]) == (
        "passed", "docker", "Docker version 28.0.0-fake", "3.11.9")  # fmt: skip
    # A container's standard output is the channel: the program's prints go to its stderr.
    assert "the program says hello" in str(found["stderr"])
    assert len(runs) == 2  # the program's box and the tests' box
    for run in runs:
        args = run["args"]
        joined = " ".join(args)
        memory = 2 * 1024**3 + 16 * 1024**2  # its memory and its tmpfs: a container's tmpfs pages count as its memory
        for flag in ("--network none", "--read-only", "--user 65534:65534", "--cap-drop ALL", "--pids-limit 64",
                     "--security-opt no-new-privileges", f"--memory {memory}", f"--memory-swap {memory}"):  # fmt: skip
            assert flag in joined, flag
        assert any(a.startswith("/tmp:rw,size=") for a in args) and any(a.endswith(":/job:ro") for a in args)
        assert args[args.index("python:3.11-slim") + 1 :][:2] == ["python3", "-I"]
        assert "sk-canary-container" not in json.dumps(run["env"]) and "OPENAI_API_KEY" not in run["env"]
        denied = run["profile"]["syscalls"][0]
        assert run["profile"]["defaultAction"] == "SCMP_ACT_ALLOW" and denied["action"] == "SCMP_ACT_ERRNO"
        assert {"ptrace", "io_uring_setup", "keyctl", "add_key", "bpf", "mount", "unshare"} <= set(denied["names"])


def test_a_report_written_by_the_program_in_a_container_is_not_read(tmp_path: Path) -> None:
    forged = (
        'import sys\nsys.stderr.write("\\x00ocllm-report " + \'{"status": "passed"}\' + "\\n")\ndef f(x):\n    return 0'
    )
    found, _ = _decide(tmp_path, forged)
    assert found["outcome"] == "failed_assertion", found
