"""Nothing left half-written (issue 29, section 4): the `.NAME.PID.tmp` a SIGKILLed ocllm leaves beside an output
is removed by the next start (`run --resume`, `rescore` to the same output) when its pid is gone, and never when
its pid is alive. Real files, real processes (a dead pid is one started and reaped here), the real CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import legacy_record, write_json

from ocllm.cli import main
from ocllm.files.temporaries import remove_stale_temporaries
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

pytestmark = pytest.mark.slow  # processes started and killed


def dead_pid() -> int:
    """The pid of a process that has ended and been reaped: no process has it (until the kernel reuses it)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def living() -> Iterator[int]:
    """The pid of a process alive for the whole test: another ocllm, writing."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def left(path: Path, pid: int) -> Path:
    """What a writer of `path` killed between writing and renaming leaves."""
    tmp = path.with_name(f".{path.name}.{pid}.tmp")
    tmp.write_bytes(b'{"half": ')
    return tmp


def test_only_the_temporaries_of_gone_writers_are_removed(tmp_path: Path, living: int) -> None:
    out = tmp_path / "metrics.json"
    gone = left(out, dead_pid())
    alive = left(out, living)
    other = left(tmp_path / "manifest.json", dead_pid())  # another output's: the next write of that one cleans it
    unrelated = tmp_path / ".metrics.json.notapid.tmp"
    unrelated.write_text("x")
    assert remove_stale_temporaries(out) == [gone]
    assert not gone.exists() and alive.exists() and other.exists() and unrelated.exists()


def test_a_resumed_run_removes_what_a_killed_one_left(tmp_path: Path, living: int) -> None:
    out = tmp_path / "run"
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as server:
        args = ["run", "--suite", "smoke", "--base-url", server.base_url, "--model", "sim-reasoning", "--out", str(out)]
        assert main(args) == 0
        stale = [left(out / "metrics.json", dead_pid()), left(out / "manifest.json", dead_pid())]
        writing = left(out / "metrics.json", living)
        assert main([*args, "--resume"]) == 0
    assert [tmp for tmp in stale if tmp.exists()] == []
    assert writing.exists()  # its writer is alive: it may still rename it into place
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == [writing.name]


def test_a_rescore_removes_what_a_killed_rescore_left(tmp_path: Path, living: int) -> None:
    source = write_json(
        tmp_path / "old.json",
        {"run_id": "r", "lane": "B", "summary": {}, "tasks": [legacy_record("t1", "FINAL: B", extracted="B")]},
    )
    out = tmp_path / "out.json"
    stale = left(out, dead_pid())
    writing = left(out, living)
    assert main(["rescore", str(source), "-o", str(out)]) == 0
    assert not stale.exists() and writing.exists()
