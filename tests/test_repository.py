"""The repository as a newcomer meets it: what `make test` shows while it runs, and no stray files at the root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CPU_HEAVY

REPO = Path(__file__).resolve().parent.parent


def test_pytest_shows_its_progress_as_counts(tmp_path: Path) -> None:
    # A run of a few thousand tests printed dots and a percentage: after a silent install nothing said how many
    # tests there were or how far it had got (issue 41). The project's own settings, on three tests of a folder apart.
    (tmp_path / "test_three.py").write_text("".join(f"def test_{name}():\n    pass\n\n\n" for name in "abc"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", "-n", "0", str(tmp_path / "test_three.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[3/3]" in done.stdout, done.stdout


def test_the_root_holds_no_file_named_like_an_option() -> None:
    # A 341 KB cProfile dump named `--model` sat at the root: a profiler's `-o` given a flag for its file name.
    assert sorted(path.name for path in REPO.iterdir() if path.name.startswith("-")) == []


@CPU_HEAVY
def test_a_cpu_heavy_test_reaches_the_workers_in_its_group(request: pytest.FixtureRequest) -> None:
    # pytest-xdist's `--dist loadgroup` (pyproject's addopts) keeps a group on one worker by the group's name at the
    # end of each node id; with pytest 9.2 its way of writing it silently stopped working (pytest-dev/pytest-xdist
    # #1386) and the CPU-heavy tests ran side by side again. tests/conftest.py writes it; this says when it is lost.
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("run by a pytest-xdist worker under --dist loadgroup only (make test: pytest -n auto)")
    assert request.node.nodeid.endswith("@cpu_heavy"), request.node.nodeid
