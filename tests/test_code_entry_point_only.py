"""What `code_runs = "entry_point_only"` keeps of a program (docs/scoring/code.md, C7a): the entry point's def and what
it reads of the top level, followed through what those read, from the longest span that parses; everything else
left out. Pure: nothing runs here (tests/test_code_why.py runs the programs). Also the setting as a lane and the
settings tables take it."""

from __future__ import annotations

import pytest

from ocllm.analysis.run_settings import settings_of
from ocllm.errors import InputError
from ocllm.run.lanes import lane_from_mapping, public_settings
from ocllm.scoring.code.entry_point_only import entry_point_only


def test_keeps_the_def_and_what_it_reads_through_helpers_constants_and_imports() -> None:
    program = (
        "import re\nfrom typing import List\nimport numpy as np\nMOD = 10**9 + 7\n\n"
        "def helper(x):\n    return np.int64(x) % MOD\n\n"
        "def add(a: List[int], b):\n    return helper(a + b)\n\n"
        "print(add(1, 2))\nassert add(1, 2) == 3\n"
    )
    kept = entry_point_only(program, "add")
    assert kept is not None
    assert kept.kept == ["from typing import List", "import numpy as np", "MOD =", "def helper", "def add"]
    assert "print(" not in kept.program and "import re" not in kept.program
    assert kept.left_out_lines == 3  # import re, the print and the assert


def test_a_local_name_never_pulls_in_a_usage_line_of_the_same_name() -> None:
    program = "def add(a, b):\n    result = a + b\n    return result\n\nresult = add(1, 2)\nprint(result)\n"
    kept = entry_point_only(program, "add")
    assert kept is not None and kept.kept == ["def add"]
    # A name the function declares global and reads is the top level's: kept.
    counting = "calls = 0\n\ndef add(a, b):\n    global calls\n    calls += 1\n    return a + b\n\nadd(1, 2)\n"
    kept = entry_point_only(counting, "add")
    assert kept is not None and kept.kept == ["calls =", "def add"]


def test_lines_that_do_not_parse_are_left_out_with_the_longest_span_that_does() -> None:
    program = "import math\n\ndef area(r):\n    return math.pi * r * r\n\n>>> area(1)\n3.14159\n"
    kept = entry_point_only(program, "area")
    assert kept is not None and kept.kept == ["import math", "def area"]
    # A class the function builds, with its decorators; a usage block under __main__ left out.
    program = (
        "from dataclasses import dataclass\n\n@dataclass\nclass Node:\n    value: int\n\n"
        "def make(v):\n    return Node(v)\n\nif __name__ == '__main__':\n    print(make(1))\n"
    )
    kept = entry_point_only(program, "make")
    assert kept is not None and kept.kept == ["from dataclasses import dataclass", "class Node", "def make"]
    assert "@dataclass\nclass Node" in kept.program and "__main__" not in kept.program


def test_no_def_of_the_entry_point_that_parses_is_none() -> None:
    assert entry_point_only("def plus(a, b):\n    return a + b\n", "add") is None
    assert entry_point_only("def add(a, b):\n    return (a +\n", "add") is None
    assert entry_point_only("add = lambda a, b: a + b\n", "add") is None  # only a def binds it, as in evalplus


def test_the_last_def_wins_and_an_earlier_one_stays_before_it() -> None:
    program = "def add(a, b):\n    return a - b\n\ndef add(a, b):\n    return a + b\n"
    kept = entry_point_only(program, "add")
    assert kept is not None and kept.kept == ["def add", "def add"]  # as Python runs them: the last binds the name
    assert kept.program.endswith("return a + b\n")


def test_the_lane_takes_the_setting_refuses_a_wrong_value_and_the_settings_table_shows_it_for_code_runs_only() -> None:
    settings = {"base_url": "http://h/v1", "model": "m", "code_runs": "entry_point_only"}
    lane = lane_from_mapping("evalplus", settings, "t")
    assert lane.room_settings == {"code_runs": "entry_point_only"}
    with pytest.raises(InputError, match="code_runs must be one of 'as_written', 'entry_point_only'"):
        lane_from_mapping("x", {"base_url": "http://h/v1", "model": "m", "code_runs": "sanitized"}, "t")
    record = public_settings(lane)
    assert record["code_runs"] == "entry_point_only"
    assert settings_of(record, types={"code"})["code_runs"] == "entry_point_only"
    default = public_settings(lane_from_mapping("d", {"base_url": "http://h/v1", "model": "m"}, "t"))
    assert settings_of(default, types={"code"})["code_runs"] == "as_written"
    assert "code_runs" not in settings_of(record, types={"math"})  # a math run was not run under it
