"""Lanes files: every mistake is refused with one line naming the file and lane, before any request."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocllm.errors import InputError
from ocllm.run.lanes import load_lanes
from ocllm.scoring.task_types import TASK_TYPES

HEAD = '[lanes.A]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n'


def load(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "lanes.toml"
    path.write_text(text)
    return load_lanes(path)


def test_defaults_and_extra_body_merge(tmp_path: Path) -> None:
    lanes = load(tmp_path, '[defaults]\nsuite = "smoke"\nextra_body = { a = 1 }\n' + HEAD + "extra_body = { b = 2 }\n")
    assert lanes["A"].suite == "smoke" and lanes["A"].extra_body == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEAD + "temperture = 0.2\n", "temperture"),
        (
            HEAD + 'prompt_template = "{question} {options} reply as {\\"answer\\": X}"\n',
            "prompt_template cannot be filled",
        ),
        (HEAD + 'prompt_template = "{question} {options} {letter}"\n', "prompt_template cannot be filled"),
        (HEAD + 'prompt_template = "{question} only"\n', "prompt_template lacks {options}"),
        (HEAD + 'math_template = "Solve it. Box the answer."\n', "math_template lacks {question}"),
        (HEAD + 'math_template = "{question} in \\\\boxed{}"\n', "may use {question}, and must write literal braces"),
        (HEAD + 'substring_template = "{question} {options}"\n', "substring_template cannot be filled"),
        (HEAD + 'extra_body = "x"\n', "extra_body must be a table"),
        ("defaults = 5\n" + HEAD, "[defaults] must be a table"),
        ('[lanes."a/../../x"]\nbase_url = "http://x/v1"\nmodel = "m"\n', "lane name"),
        ('[lanes.".."]\nbase_url = "http://x/v1"\nmodel = "m"\n', "lane name"),
        (HEAD + "concurrency = 0\n", "concurrency must be at least 1"),
        ("[lanes]\n", "no [lanes.NAME] tables"),
        (HEAD + "model = 3\n[", "invalid TOML"),
    ],
)
def test_bad_lanes_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        load(tmp_path, text)
    assert message in str(err.value) and str(tmp_path / "lanes.toml") in str(err.value)


def test_every_lane_setting_is_documented_with_its_default() -> None:
    """docs/lanes.md is the one table of lane defaults (issue 8): it must name every setting, and the
    simple defaults as the code has them."""
    import msgspec

    from ocllm.run.lanes import Lane

    doc = (Path(__file__).resolve().parent.parent / "docs" / "lanes.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip().strip("`"): line.split("|")[2].strip()
        for line in doc.splitlines()
        if line.startswith("| `")
    }
    from ocllm.run.lanes import ROOM_SETTINGS
    from ocllm.run.sampling import SAMPLING
    from ocllm.scoring import task_types

    # What a lanes file writes: Lane's fields (but the holders of settings written one by one: each type's template,
    # each sampling setting, each setting a room declares of its own, with its room's default).
    holders = ("name", "room_settings", "sampling", "templates")
    settings = {f.name: f.default for f in msgspec.structs.fields(Lane) if f.name not in holders}
    settings |= {key: setting.default for key, setting in SAMPLING.items()}
    for name, task_type in task_types.TASK_TYPES.items():
        assert f"templates.{name}" in rows, f"docs/lanes.md lacks templates.{name}"
        if task_type.template_key_before is not None:
            assert f"| `{task_type.template_key_before}` | `templates.{name}` |" in doc, task_type.template_key_before
    settings |= {key: task_type.lane_settings[key].default for key, task_type in ROOM_SETTINGS.items()}
    assert "tool_choice" in settings
    for name, default in settings.items():
        assert name in rows, f"docs/lanes.md lacks {name}"
        if isinstance(default, bool):
            assert rows[name] == f"`{str(default).lower()}`", name
        elif isinstance(default, int | float):
            assert rows[name].strip("`").replace(",", "") in (str(default), f"{default:g}"), name
        elif isinstance(default, str):
            assert rows[name] == f"`{default}`", name


def test_the_example_lanes_file_is_a_server_settings_matrix() -> None:
    from ocllm.run.lanes import load_lanes

    lanes = load_lanes(Path(__file__).resolve().parent.parent / "examples" / "lanes.toml")
    assert lanes["A_baseline"].server == lanes["B_native_reasoning"].server  # one start for both
    commands = {name: lane.server.argv() for name, lane in lanes.items() if lane.server is not None}
    assert len({tuple(c) for c in commands.values()}) == 4  # A/B's, two quantisations, no reasoning parser
    assert "--quantization" in commands["C_fp8"] and "--reasoning-parser" not in commands["E_no_reasoning_parser"]


def test_the_llama_example_lanes_file_sets_the_server_threads() -> None:
    # On a 2-core shared machine llama-server's default threads decoded 6 times slower than -t 1 (issue 41):
    # the example a llama.cpp user copies says its thread count, in every lane's command.
    from ocllm.run.lanes import load_lanes

    lanes = load_lanes(Path(__file__).resolve().parent.parent / "examples" / "lanes-llama.toml")
    assert lanes["A_greedy"].server == lanes["B_sampled"].server  # one start for both
    commands = {name: lane.server.argv() for name, lane in lanes.items() if lane.server is not None}
    assert set(commands) == set(lanes) == {"A_greedy", "B_sampled", "C_two_threads"}
    for argv in commands.values():
        assert argv[0] == "llama-server" and "--port" in argv and "--alias" in argv
        assert argv[argv.index("-t") + 1] in ("1", "2")
    assert {lane.concurrency for lane in lanes.values()} == {1}


def test_server_false_turns_the_default_server_off(tmp_path: Path) -> None:
    from ocllm.run.lanes import load_lanes

    path = tmp_path / "lanes.toml"
    path.write_text(
        '[defaults]\nmodel = "m"\nbase_url = "http://a:1/v1"\n[defaults.server]\ncommand = "serve"\n'
        '[lanes.managed]\n[lanes.replicas]\nbase_url = ["http://a:1/v1", "http://b:1/v1"]\nserver = false\n'
    )
    lanes = load_lanes(path)
    assert lanes["managed"].server is not None and lanes["replicas"].server is None


def test_every_numeric_range_is_documented_as_it_is_checked() -> None:
    """docs/lanes.md's table of ranges says what bounds.py checks, setting by setting (issue 19, item 7)."""
    from ocllm.run.bounds import BOUNDS
    from ocllm.run.sampling import SAMPLING

    docs = (Path(__file__).parent.parent / "docs" / "lanes.md").read_text()
    for name, bound in [*BOUNDS.items(), *((key, s.bound) for key, s in SAMPLING.items())]:
        assert f"| {name} | {bound.describe()} |" in docs, name


@pytest.mark.parametrize(
    ("setting", "value"),
    [("max_attempts", "100000000000000000000"), ("concurrency", "1025"), ("temperature", "nan"), ("timeout_s", "inf")],
)
def test_a_number_out_of_its_range_is_refused_naming_setting_range_and_value(
    tmp_path: Path, setting: str, value: str
) -> None:
    with pytest.raises(InputError) as err:
        load(tmp_path, HEAD + f"{setting} = {value}\n")
    assert f"lane 'A': {setting} must be at least" in str(err.value) or "must be more than" in str(err.value)
    assert f"(got {value})" in str(err.value) and "at most" in str(err.value)


# --- issue 31: a lane's templates in one table, by type name -----------------------------------------------------

TABLE_HEAD = '[lanes.A]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n[lanes.A.templates]\n'


def test_templates_are_one_table_by_type_name_and_default_per_type(tmp_path: Path) -> None:
    from ocllm.scoring import task_types

    notes: list[str] = []
    path = tmp_path / "lanes.toml"
    path.write_text(
        '[defaults.templates]\nmath = "{question} ####"\njson = "{question} {schema}"\n'
        + TABLE_HEAD + 'mcq = "{question}\\n{options}\\nOne of {letters}."\njson = "{question} as JSON"\n'
        '[lanes.B]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
    )
    lanes = load_lanes(path, notes.append)
    a, b = lanes["A"], lanes["B"]
    # A lane's table replaces the defaults' template of each type it names, and keeps the defaults' others.
    mcq = "{question}\n{options}\nOne of {letters}."
    assert a.templates == {"math": "{question} ####", "json": "{question} as JSON", "mcq": mcq}
    assert b.templates == {"math": "{question} ####", "json": "{question} {schema}"}
    substrings = task_types.of("required_substrings")
    assert b.template_for(substrings) == substrings.default_template  # a type not named: its room's default
    assert notes == []  # nothing to move


def test_an_unknown_type_name_is_refused_in_one_line_naming_the_types(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "lanes.toml"
    path.write_text(TABLE_HEAD + 'maths = "{question}"\n')
    done = subprocess.run(
        [sys.executable, "-m", "ocllm", "run", "--config", str(path), "--lane", "A", "--out", str(tmp_path / "r")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and not (tmp_path / "r").exists()
    assert done.stderr.strip().splitlines() == [
        f"ocllm: error: {path}: lane 'A': templates.maths: no task type 'maths' (the types: mcq, "
        "required_substrings, math, instructions, json, tool_call, code, tool_use)"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TABLE_HEAD + 'math = "Solve it."\n', "lane 'A': templates.math lacks {question}"),
        (TABLE_HEAD + 'mcq = "{question} {options} {letter}"\n', "lane 'A': templates.mcq cannot be filled"),
        (TABLE_HEAD + "math = 3\n", "lane 'A': templates.math must be a string"),
        (HEAD + 'templates = "x"\n', "lane 'A': templates must be a table of task type = template"),
        (HEAD + 'math_template = "{question}"\n[lanes.A.templates]\nmath = "{question}"\n',
         "lane 'A': sets both math_template and templates.math; keep templates.math"),
        ('[defaults.templates]\nmcqs = "x"\n' + HEAD, "[defaults]: templates.mcqs: no task type 'mcqs'"),
        (HEAD + "room_settings = { tool_choice = \"none\" }\n", "lane 'A': unknown setting room_settings"),
    ],
)  # fmt: skip
def test_bad_templates_are_refused_naming_them_as_written(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        load(tmp_path, text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_keys_of_before_are_read_with_one_note_to_move_them(tmp_path: Path) -> None:
    notes: list[str] = []
    path = tmp_path / "lanes.toml"
    path.write_text(
        '[defaults]\nmath_template = "{question} ####"\n' + HEAD + 'prompt_template = "{question} {options} X"\n'
        '[lanes.B]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n[lanes.B.templates]\nmath = "{question} box"\n'
    )
    lanes = load_lanes(path, notes.append)
    assert lanes["A"].templates == {"math": "{question} ####", "mcq": "{question} {options} X"}
    assert lanes["B"].templates == {"math": "{question} box"}  # the lane's table wins over the defaults' old key
    assert notes == [
        f"{path}: math_template and prompt_template are read as before, but templates are one table now: write "
        '[lanes.NAME.templates] (or [defaults.templates]) with math = "..." and mcq = "..."'
    ]


def test_the_manifest_record_keeps_its_layout_and_reads_back(tmp_path: Path) -> None:
    """public_settings writes every type's template in force under `templates` and none under the keys the docs
    ask users to move away from (issue 41, item 4), tool_choice at the top level, and lane_from_mapping (merge,
    resume) reads the record back to the same lane."""
    import json

    from ocllm.run.lanes import lane_from_mapping, public_settings, with_flags

    lane = load(tmp_path, TABLE_HEAD.replace("[lanes.A.templates]\n", 'tool_choice = "none"\n[lanes.A.templates]\n')
                + 'math = "{question} ####"\n')["A"]  # fmt: skip
    record = public_settings(lane)
    # Every type's template in force is under `templates`, the defaults included; no key of before is written.
    defaults = {name: kind.default_template for name, kind in TASK_TYPES.items()}
    assert record["templates"] == {**defaults, "math": "{question} ####"} and "room_settings" not in record
    assert not {"prompt_template", "math_template", "substring_template", "instructions_template", "json_template",
                "tool_template"} & set(record)  # fmt: skip
    assert record["tool_choice"] == "none"
    assert record["templates"]["mcq"].endswith("FINAL: <letter>.")  # the default in force is recorded too
    keys = list(record)
    assert keys.index("api_key_env") < keys.index("templates") < keys.index("system_prompt")
    assert keys[keys.index("reasoning") + 1] == "tool_choice"
    back = lane_from_mapping("A", {k: v for k, v in json.loads(json.dumps(record)).items() if k != "name"}, "m.json")
    assert public_settings(back) == record and back.room_settings_set() == {"tool_choice": "none"}
    assert with_flags(lane, {"concurrency": 2}).room_settings_set() == {"tool_choice": "none"}
