"""Lean installs: pyarrow and matplotlib are extras (`ocllm[parquet]`, `ocllm[charts]`), a feature whose extra is
missing says so in one line with the install command, and the two hashed locks agree with pyproject.toml."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from test_report_render import charts_in, comparison_doc, matrix_doc, run_doc

import ocllm
from ocllm.report.html import comparison_html, matrix_html, run_report_html

REPO = Path(__file__).resolve().parent.parent
EXTRAS = {"parquet": "pyarrow", "charts": "matplotlib"}


def without(module: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`ocllm ARGV...` in a fresh interpreter where `module` cannot be imported, as where it is not installed (a
    None in sys.modules makes every import of it, and of its submodules, raise ImportError)."""
    shim = f"import sys; sys.modules[{module!r}] = None; from ocllm.cli import main; sys.exit(main(sys.argv[1:]))"
    # The ocllm these tests import, whatever the working directory (a relative PYTHONPATH would not follow it).
    here = str(Path(ocllm.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-c", shim, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_importing_parquet_without_pyarrow_is_one_line_with_the_install_command(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"question": "2 + 2?", "subject": "math", "choices": ["3", "4", "5", "6"], "answer": 1}]
    source = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)  # a real file: the refusal is pyarrow's absence, not the file
    out = tmp_path / "suite.jsonl"
    done = without("pyarrow", "import", "mmlu", str(source), "-o", str(out), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "ocllm: error: reading Parquet needs pyarrow: pip install 'ocllm[parquet]'\n"
    assert not out.exists()


@pytest.mark.parametrize(
    ("render", "doc"),
    [(run_report_html, run_doc()), (comparison_html, comparison_doc()), (matrix_html, matrix_doc())],
    ids=["run", "comparison", "matrix"],
)
def test_a_report_without_matplotlib_says_in_each_charts_place_how_to_install_it(
    render: object, doc: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert callable(render)
    drawn = set(charts_in(render(doc)))
    assert drawn  # with matplotlib, these charts are drawn
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    page = render(doc)
    assert charts_in(page) == {} and "<svg" not in page
    missing = set(re.findall(r'data-chart-missing="([^"]+)"', page))
    assert missing == drawn
    note = "Not drawn: drawing charts needs matplotlib: pip install &#39;ocllm[charts]&#39;"
    assert page.count(note) == len(drawn)


def _pins(lock: Path) -> dict[str, str]:
    """name -> version of every requirement in a lock, each checked to carry at least one hash."""
    text = lock.read_text()
    pins = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        head = block.split("\\", 1)[0].strip()
        if not head or head.startswith("#"):
            continue
        name, version = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)(?:\s*;.*)?", head).groups()  # type: ignore[union-attr]
        assert "--hash=sha256:" in block, f"{lock.name}: {name} has no hash"
        pins[name.lower()] = version
    return pins


def test_the_runtime_lock_has_no_extra_and_agrees_with_the_dev_lock() -> None:
    runtime, dev = _pins(REPO / "requirements" / "runtime.lock"), _pins(REPO / "requirements" / "dev.lock")
    assert set(EXTRAS.values()).isdisjoint(runtime)
    assert set(EXTRAS.values()) <= set(dev)  # the tests import Parquet and draw charts
    assert {name: dev.get(name) for name in runtime} == runtime  # one version of a package in both
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~; \[]", spec, maxsplit=1)[0].lower() for spec in project["dependencies"]}
    assert set(EXTRAS.values()).isdisjoint(declared)
    for extra, module in EXTRAS.items():
        assert any(spec.startswith(module) for spec in project["optional-dependencies"][extra])
    assert "ocllm[parquet,charts]" in project["optional-dependencies"]["dev"]
