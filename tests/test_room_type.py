"""A task type is made from its room's modules by convention (issue 42, item 3; scoring/room.py): the shipped rooms'
registrations are their name, label and what differs, and a room's hook that is misshapen or given twice is refused
when it is registered, not found later in a report that never draws it."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ocllm.scoring import task_types
from ocllm.scoring.room import room_type

SRC = Path(__file__).resolve().parents[1] / "src" / "ocllm" / "scoring"

ROOM = '''
from typing import Any, Literal
from ocllm.models import Decision, Policy, Sample, Task
from ocllm.scoring.task_type import Message, PromptSettings, chat

DEFAULT_TEMPLATE = "{question}"
PLACEHOLDERS = ("question",)
REQUIRED_PLACEHOLDERS = ("question",)


class EchoTask(Task, tag="echo", kw_only=True):
    pass


class EchoDecision(Decision, kw_only=True):
    extraction_method: Literal["whole_answer"]
    ambiguity: Literal["none"]
    rule: Literal["echoed"]


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    pass


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    return {}


def record_fields(task: EchoTask) -> dict[str, Any]:
    return {}


def prompt(task: EchoTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, task.question)


def decide_echo(task: EchoTask, sample: Sample, policy: Policy) -> EchoDecision:
    raise NotImplementedError
'''


@pytest.fixture
def packages(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path for the rooms a test writes; their modules forgotten after it."""
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [n for n in sys.modules if n.split(".")[0].startswith("echo_")]:
        del sys.modules[name]


def _package(root: Path, name: str, modules: dict[str, str]) -> str:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    for module, text in modules.items():
        (root / name / f"{module}.py").write_text(textwrap.dedent(text))
    return name


def test_a_room_in_one_module_is_found_whole(packages: Path) -> None:
    name = _package(packages, "echo_whole", {"room": ROOM})
    made = room_type(name, name="echo", label="echo")
    assert made.task_struct.__name__ == "EchoTask" and made.decision_type.__name__ == "EchoDecision"
    assert made.decide.__name__ == "decide_echo" and made.template_placeholders == ("question",)
    assert made.new_tally is None and made.task_view is None  # what the room does not give keeps TaskType's default


def test_a_hook_that_takes_the_wrong_arguments_is_refused(packages: Path) -> None:
    render = "def evidence_lines(record, extra):\n    return []\n"
    name = _package(packages, "echo_wrong", {"room": ROOM, "render": render})
    with pytest.raises(AssertionError, match=r"evidence_lines is its evidence_lines, which is called with 1"):
        room_type(name, name="echo", label="echo")


def test_a_hook_given_by_two_modules_is_refused(packages: Path) -> None:
    render = "def prompt(task, settings):\n    return []\n"
    name = _package(packages, "echo_twice", {"room": ROOM, "render": render})
    with pytest.raises(AssertionError, match="prompt is given twice"):
        room_type(name, name="echo", label="echo")


def test_a_room_without_its_decide_function_is_refused(packages: Path) -> None:
    name = _package(packages, "echo_mute", {"room": ROOM.replace("def decide_echo", "def judge_echo")})
    with pytest.raises(AssertionError, match=r"decide must define one decide_\* function, not 0"):
        room_type(name, name="echo", label="echo")


def test_each_shipped_registration_is_its_name_its_label_and_what_differs() -> None:
    for task_type in task_types.TASK_TYPES.values():
        package = task_type.decide.__module__.rpartition(".")[0]
        init = SRC / package.rpartition(".")[2] / "__init__.py"
        code = [line for line in init.read_text().split('"""', 2)[2].splitlines() if line.strip()]
        assert len(code) <= 14, (init, len(code))  # 24-34 lines each before; mcq's is now 5
