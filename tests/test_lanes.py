"""Lanes files: every mistake is refused with one line naming the file and lane, before any request."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocllm.errors import InputError
from ocllm.run.lanes import load_lanes

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
    for field in msgspec.structs.fields(Lane):
        if field.name == "name":
            continue
        assert field.name in rows, f"docs/lanes.md lacks {field.name}"
        default = field.default
        if isinstance(default, bool):
            assert rows[field.name] == f"`{str(default).lower()}`", field.name
        elif isinstance(default, int | float):
            assert rows[field.name].strip("`").replace(",", "") in (str(default), f"{default:g}"), field.name
        elif isinstance(default, str) and not field.name.endswith("_template"):  # templates are described
            assert rows[field.name] == f"`{default}`", field.name


def test_the_example_lanes_file_is_a_server_settings_matrix() -> None:
    from ocllm.run.lanes import load_lanes

    lanes = load_lanes(Path(__file__).resolve().parent.parent / "examples" / "lanes.toml")
    assert lanes["A_baseline"].server == lanes["B_native_reasoning"].server  # one start for both
    commands = {name: lane.server.argv() for name, lane in lanes.items() if lane.server is not None}
    assert len({tuple(c) for c in commands.values()}) == 4  # A/B's, two quantisations, no reasoning parser
    assert "--quantization" in commands["C_fp8"] and "--reasoning-parser" not in commands["E_no_reasoning_parser"]


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

    docs = (Path(__file__).parent.parent / "docs" / "lanes.md").read_text()
    for name, bound in BOUNDS.items():
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
