"""The container-engine fallback (docs/scoring/code.md, C10), against a stand-in `docker` that records the command it
is given and answers as the harness inside would: the command keeps the network off, the root read-only, the user
unprivileged, the capabilities dropped and the limits set; the harness's report comes back on stderr. (The real
engine is not run: it needs a daemon and an image this machine does not have.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# The stand-in: `image inspect` and the version probe succeed; a run records its arguments, reads the nonce the
# harness would read, and writes the report a passing harness writes, after a marker, on stderr.
FAKE = textwrap.dedent(
    """\
    #!{python}
    import json, sys
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        print("Docker version 28.0.0-fake"); sys.exit(0)
    if args[:2] == ["image", "inspect"]:
        print("[{{}}]"); sys.exit(0)
    if args[:1] == ["run"] and "-c" in args:
        print("3.11.9"); sys.exit(0)
    if args[:1] == ["run"]:
        with open({log!r}, "a") as log:
            log.write(json.dumps(args) + "\\n")
        nonce = sys.stdin.readline().strip()
        print("the program's own output")
        sys.stderr.write("\\x00ocllm-report " + json.dumps({{"status": "passed", "nonce": nonce}}) + "\\n")
        sys.exit(0)
    sys.exit(1)
    """
)

PROGRAM = """
import json, sys
from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.fields import CodeTask
task = CodeTask(id="t", question="q", entry_point="f", test="def check(candidate):\\n    assert candidate(1) == 2\\n")
sample = Sample(task_id="t", content="```python\\ndef f(x):\\n    return x + 1\\n```")
d = decide_code(task, sample, Policy())
print(json.dumps({"outcome": d.outcome, "kind": d.sandbox.kind, "version": d.sandbox.version,
                  "python": d.sandbox.python_version, "stdout": d.runs[0].stdout_head if d.runs else None}))
"""


def test_the_container_fallback_runs_locked_down_and_reads_the_report_from_stderr(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "runs.jsonl"
    fake = bin_dir / "docker"
    fake.write_text(FAKE.format(python=sys.executable, log=str(log)))
    fake.chmod(0o755)
    env = {**os.environ, "PATH": str(bin_dir), "OCLLM_SANDBOX": "docker", "OCLLM_CODE_IMAGE": "python:3.11-slim"}
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"outcome": "passed", "kind": "docker", "version": "Docker version 28.0.0-fake",
                     "python": "3.11.9", "stdout": "the program's own output\n"}  # fmt: skip
    (args,) = [json.loads(line) for line in log.read_text().splitlines()]
    joined = " ".join(args)
    for flag in ("--network none", "--read-only", "--user 65534:65534", "--cap-drop ALL", "--pids-limit 64",
                 "--security-opt no-new-privileges", "--memory 2147483648", "--memory-swap 2147483648"):  # fmt: skip
        assert flag in joined, flag
    assert any(a.startswith("/tmp:rw,size=") for a in args) and any(a.endswith(":/job:ro") for a in args)
    assert args[args.index("python:3.11-slim") + 1 :][:2] == ["python3", "-I"]


def test_a_forged_pass_without_the_nonce_is_not_a_pass(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "docker"
    fake.write_text(FAKE.format(python=sys.executable, log=str(tmp_path / "runs.jsonl")).replace(
        '"nonce": nonce', '"nonce": "guessed"'))  # fmt: skip
    fake.chmod(0o755)
    env = {**os.environ, "PATH": str(bin_dir), "OCLLM_SANDBOX": "docker"}
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["outcome"] == "exception"
