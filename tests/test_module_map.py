"""docs/modules.md stays true: it is what scripts/module_map.py writes from the modules' docstrings now, so a module
added, moved, renamed or given a new docstring fails here until the list is written again. And the map beside it,
docs/architecture.md, stays a map: short, its hook table naming every field of TaskType (issue 42)."""

from __future__ import annotations

import importlib.util
from dataclasses import fields
from pathlib import Path
from types import ModuleType

import pytest

from ocllm.scoring.task_type import TaskType

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "module_map.py"


def _script() -> ModuleType:
    # scripts/ is no package: the script is loaded from its file, as `python scripts/module_map.py` runs it.
    spec = importlib.util.spec_from_file_location("module_map", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


module_map = _script()


def test_docs_modules_md_is_what_the_script_writes_now() -> None:
    written = (REPO / "docs" / "modules.md").read_text(encoding="utf-8")
    assert written == module_map.render(), (
        f"docs/modules.md is out of date with the modules' docstrings: run `{module_map.COMMAND}` and commit it"
    )


def test_every_module_has_its_line() -> None:
    listed = (REPO / "docs" / "modules.md").read_text(encoding="utf-8")
    source = REPO / "src" / "ocllm"
    missing = [
        path.relative_to(source).as_posix()
        for path in source.rglob("*.py")
        if "__pycache__" not in path.parts and f"- `{path.relative_to(source).as_posix()}`: " not in listed
    ]
    assert not missing, f"not in docs/modules.md: {missing}; run `{module_map.COMMAND}`"


@pytest.mark.parametrize(
    ("docstring", "sentence"),
    [
        ("One line.", "One line."),
        ("First. Second.", "First."),
        ("No full stop at all", "No full stop at all"),
        ("Joined\nacross lines. Then more.", "Joined across lines."),
        ("The paragraph only.\n\nNot this one.", "The paragraph only."),
        # A full stop that does not end the sentence: in parentheses, a code span, a quotation, before lower case.
        ("Reads (see a.md. Then b) files. Next.", "Reads (see a.md. Then b) files."),
        ("Calls `x. Y` here. Next.", "Calls `x. Y` here."),
        (
            'Statements ("The answer is 26. So", "\\boxed{") found. Next.',
            'Statements ("The answer is 26. So", "\\boxed{") found.',
        ),
        ("Python 3.11, e.g. this one. Next.", "Python 3.11, e.g. this one."),
        # A next sentence may open with a path.
        ("Evidence kept. docs/scoring/math.md names it.", "Evidence kept."),
    ],
)
def test_first_sentence(docstring: str, sentence: str) -> None:
    assert module_map.first_sentence(docstring) == sentence


def test_a_less_than_sign_outside_code_is_no_html_tag() -> None:
    assert module_map.markdown_text("a <<title>> and `a < b`") == "a &lt;&lt;title>> and `a < b`"


def test_a_module_without_a_docstring_is_said(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""A package."""\n', encoding="utf-8")
    (tmp_path / "pkg" / "bare.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "top.py").write_text('"""Top. More."""\n', encoding="utf-8")
    text = module_map.render(tmp_path)
    assert "## top level\n\n- `top.py`: Top.\n" in text
    assert "## `pkg/`\n\n- `pkg/__init__.py`: A package.\n- `pkg/bare.py`: (no docstring)\n" in text
    assert module_map.undocumented(tmp_path) == ["pkg/bare.py"]


# docs/architecture.md is the map beside this index: kept short, and its hook table names every field of TaskType, so
# that a field added, renamed or regrouped fails here until the table says it.
ARCHITECTURE = REPO / "docs" / "architecture.md"


def test_the_architecture_map_stays_under_25_kb() -> None:
    size = len(ARCHITECTURE.read_bytes())
    assert size < 25_000, f"docs/architecture.md is {size:,} bytes: a map, not a module list (that is docs/modules.md)"


def test_the_hook_table_names_every_field_of_task_type() -> None:
    table = ARCHITECTURE.read_text(encoding="utf-8").split("### The hook table", 1)[1].split("\n#", 1)[0]
    missing = [f.name for f in fields(TaskType) if f"`{f.name}`" not in table]
    assert not missing, f"docs/architecture.md's hook table lacks these fields of TaskType: {missing}"
