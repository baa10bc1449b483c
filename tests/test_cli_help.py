"""One grammar for the command line (issue 32): every command's help page, walked in-process through click's command
tree, spells its output `-o, --out` and gives every option a help text; what a help page lists (shipped suites, the
datasets `import` reads, the tools `--from` reads) is what the registries hold; the spellings of before still read;
every lane setting a notice or advice sentence tells a user to change is a flag of `run`, or a setting the sentence
names by its lanes-file key; and no command's `--help` loads a room or a heavy library (which modules, never how
long), its page the same as with every registry loaded."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from conftest import legacy_record, write_json

from ocllm.cli import app, main
from ocllm.cli.options import SHIPPED_DATASETS, TOOL_FORMATS, shipped_suite_names
from ocllm.formats.harnesses import FORMATS
from ocllm.importers.datasets import labels, names
from ocllm.run.lanes import ROOM_SETTINGS, Lane
from ocllm.run.sampling import SAMPLING
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

SOURCE = Path(__file__).resolve().parents[1] / "src" / "ocllm"
# They print, or serve: no output to name (watch's page, --html, is a view of the runs it reads, not their output).
WRITES_NOTHING = {"plan", "serve-sim", "probe", "watch"}


def _root() -> click.Context:
    """`ocllm`'s context with the group's settings (`-h` among the help options), as `ocllm ... --help` makes it: a
    bare click.Context would have each command cache a help option spelled `--help` alone, for the whole process."""
    return click.Context(app, info_name="ocllm", **app.context_settings)


def _pages() -> dict[str, tuple[click.Command, click.Context]]:
    root = _root()
    return {
        name: (command, click.Context(command, info_name=name, parent=root)) for name, command in app.commands.items()
    }


def _record(command: click.Command, ctx: click.Context, name: str) -> tuple[str, str]:
    """An option's line of the help page, unwrapped: (its spellings and metavar, its help)."""
    param = next(p for p in command.params if p.name == name)
    record = param.get_help_record(ctx)
    assert record is not None, f"{ctx.info_name}: {name} is not shown"
    return record


def test_every_help_page_spells_the_output_and_helps_every_option() -> None:
    pages = _pages()
    assert set(pages) == {
        "run", "matrix", "rescore", "compare", "report", "matrix-report", "import", "merge", "plan", "serve-sim",
        "probe", "watch",
    }  # fmt: skip
    for name, (command, ctx) in pages.items():
        page = command.get_help(ctx)  # the page as `ocllm NAME --help` prints it
        assert "--output" not in page, name
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and not param.hidden:
                assert (param.help or "").strip(), f"{name} {param.opts[0]} has no help"
        outputs = [p for p in command.params if p.name == "out"]
        if name in WRITES_NOTHING:
            assert not outputs and not re.search(r"^\s+-o\b", page, re.MULTILINE), name
            continue
        assert outputs, f"{name} has no -o/--out"
        spelled, _ = _record(command, ctx, "out")
        assert spelled == "-o, --out PATH", (name, spelled)
        assert re.search(r"^\s+-o, --out PATH\s", page, re.MULTILINE), name


def test_help_lists_what_the_registries_hold() -> None:
    pages = _pages()
    shipped = sorted(shipped_suites())
    run_suite = _record(*pages["run"], "suite")[1]
    listed = re.search(r"A shipped suite \(([^)]*)\)", run_suite)
    assert listed is not None and listed[1].split(", ") == shipped
    sim_suite = _record(*pages["serve-sim"], "suites")[1]
    listed = re.search(r"every shipped one: ([^)]*)\)", sim_suite)
    assert listed is not None and listed[1].split(", ") == shipped
    # import: FORMAT's choices, and the datasets its page names, by name and by label.
    command, ctx = pages["import"]
    fmt = next(p for p in command.params if p.name == "fmt")
    assert isinstance(fmt.type, click.Choice) and list(fmt.type.choices) == list(names())
    page = command.get_help(ctx)
    text = " ".join(command.help.split()) if command.help else ""
    listed = re.search(r"FORMAT, the dataset: ([^.]*)\.", text)
    assert listed is not None and listed[1].split(", ") == list(names())
    assert f"({labels()}; CSV, Parquet, JSONL)" in text
    assert "{" not in page
    # --from: the tools whose result files are read, in every command that takes it.
    for name in ("rescore", "compare", "report"):
        spelled, _ = _record(*pages[name], "from_format")
        assert spelled == f"--from [{'|'.join(FORMATS)}]", (name, spelled)
    # `ocllm --help` lists the commands without loading a registry (import's one line is its own).
    top = app.get_help(_root())
    assert "import         Turn dataset files on disk into a suite." in top


# What no help page may load: a room (all of ocllm.scoring: its package loads every room), the console and rich,
# the heavy libraries, and the modules that load the rooms to say what they hold (suites, formats, importers).
HEAVY = (
    "ocllm.scoring", "ocllm.console", "ocllm.suites", "ocllm.formats", "ocllm.importers", "rich", "numpy", "scipy",
    "jsonschema", "sympy", "math_verify", "langdetect", "matplotlib", "pyarrow", "aiohttp", "jinja2",
)  # fmt: skip
# Run in a fresh interpreter: every command click knows, walked from the group object (subcommands of a group
# included), its `--help` printed as `ocllm WORDS --help` prints it; then the pages, their exit codes, and for each
# page that loaded any of HEAVY (itself or a module inside it), which.
EVERY_PAGE = """
import contextlib, io, json, sys
import click
from ocllm.cli import app, main

def walk(command, words):
    yield words
    if isinstance(command, click.Group):
        ctx = click.Context(command, **command.context_settings)
        for name in command.list_commands(ctx):
            yield from walk(command.get_command(ctx, name), [*words, name])

heavy = sys.argv[1].split(",")
def loaded():
    return {h for h in heavy for m in list(sys.modules) if m == h or m.startswith(h + ".")}

pages, codes, by = {}, {}, {}
for words in walk(app, []):
    out, before = io.StringIO(), loaded()
    with contextlib.redirect_stdout(out):
        codes[" ".join(words)] = main([*words, "--help"])
    pages[" ".join(words)] = out.getvalue()
    if loaded() - before:
        by[" ".join(words)] = sorted(loaded() - before)
print(json.dumps({"pages": pages, "codes": codes, "loaded": by}))
"""


def _every_page(env: dict[str, str] | None = None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "OCLLM_TASK_TYPES"} | (env or {})
    done = subprocess.run(
        [sys.executable, "-c", EVERY_PAGE, ",".join(HEAVY)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_no_help_page_loads_a_room_or_a_heavy_library() -> None:
    """Which modules every command's `--help` leaves unloaded (issue 45: `ocllm run --help` listed the shipped
    suites by importing the scorer), in a fresh interpreter: a fact of the import graph, the same on a loaded machine
    as on an idle one (bench/bench_cli_help.py --command run measures the time). And each page is the one printed
    here, where every registry is loaded: what a page lists without them is what they hold."""
    found = _every_page()
    assert found["loaded"] == {}
    assert set(found["codes"].values()) == {0}
    # Walked from the group: the list of commands, and every command of it (whatever is added later).
    assert "" in found["pages"] and {words.split()[0] for words in found["pages"] if words} == set(app.commands)
    assert "--suite" in found["pages"]["run"]
    for words, page in found["pages"].items():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main([*words.split(), "--help"]) == 0
        assert page == out.getvalue(), words


def test_what_a_help_page_lists_unloaded_is_what_the_registries_hold() -> None:
    """The listings written down for a help page that loads no registry (cli/options.py) are the registries'."""
    # A dataset or a tool added to its registry is added there too (these messages say where).
    registered = tuple(zip(names(), labels().split(", "), strict=True))
    assert registered == SHIPPED_DATASETS, "cli/options.py: SHIPPED_DATASETS"
    assert tuple(FORMATS) == TOOL_FORMATS, "cli/options.py: TOOL_FORMATS"
    assert shipped_suite_names() == tuple(sorted(shipped_suites()))


def test_a_room_named_by_ocllm_task_types_is_listed(tmp_path: Path) -> None:
    """With a room outside ocllm (OCLLM_TASK_TYPES) the help lists the registry, which then holds its datasets."""
    (tmp_path / "loud_data.py").write_text(
        "from dataclasses import replace\n"
        "from ocllm.scoring import task_types\n"
        "from ocllm.scoring.dataset_rows import Dataset\n"
        "mcq = task_types.of('mcq')\n"
        "task_types.unregister('mcq')\n"
        "loud = Dataset(name='loud', label='LOUD', files=('jsonl',), task=lambda row, seed, seen: None)\n"
        "task_types.register(replace(mcq, datasets=(*mcq.datasets, loud)))\n",
        encoding="utf-8",
    )
    pythonpath = os.pathsep.join([str(SOURCE.parent), str(tmp_path)])
    page = _every_page({"OCLLM_TASK_TYPES": "loud_data", "PYTHONPATH": pythonpath})["pages"]["import"]
    text = " ".join(page.split())
    shown = re.search(r"Turn dataset files on disk \(([^;]*);", text)
    listed = re.search(r"FORMAT, the dataset: ([^.]*)\.", text)
    assert shown is not None and listed is not None
    assert "LOUD" in shown[1].split(", ") and "loud" in listed[1].split(", ") and "mmlu" in listed[1].split(", ")


def test_spellings_of_before_still_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # rescore and import wrote to `-o/--output`.
    src = write_json(tmp_path / "old.json", {"run_id": "r1", "summary": {}, "tasks": [legacy_record("t1", "FINAL: B")]})
    assert main(["rescore", str(src), "--output", str(tmp_path / "a.json")]) == 0
    assert main(["rescore", str(src), "--out", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    rows = tmp_path / "test.jsonl"
    rows.write_text(json.dumps({"question": "1 + 1?", "answer": "One and one.\n#### 2"}) + "\n", encoding="utf-8")
    assert main(["import", "gsm8k", str(rows), "--output", str(tmp_path / "suite.jsonl")]) == 0
    assert main(["import", "gsm8k", str(rows), "-o", str(tmp_path / "again.jsonl")]) == 0
    assert (tmp_path / "suite.jsonl").read_bytes() == (tmp_path / "again.jsonl").read_bytes()
    capsys.readouterr()
    # A missing output is named by its shown spellings only.
    assert main(["rescore", str(src)]) == 2
    assert "Missing option '-o' / '--out'" in capsys.readouterr().err


# Lane settings a sentence may name that `run` has no flag for, each with why: the sentence names the lanes-file key.
LANES_FILE_ONLY = {
    "server": "a table: the managed server's command and its settings",
    "templates": "a table of one template per task type",
    "extra_body": "a table of request fields",
    "omit_fields": "a list of request fields",
    "repeatable": "said as the lane's own setting when it is off (no run changes it by accident)",
    "reasoning_switch": "for servers that refuse unknown fields, set once per server in a lanes file",
    "max_attempts": "retries: set once per server in a lanes file",
    "retry_budget_s": "retries: set once per server in a lanes file",
    "system_prompt_file": "an agent's system prompt, read from a file a lanes file names",
    "extra_tools_file": "an agent's tools, read from a JSON file a lanes file names",
}
# Rooms' own settings (tool_call's tool_choice) are named by their key too: a room declares them, and a flag per room
# would load every room for `ocllm --help`.
# Settings a sentence names in words rather than by key.
IN_WORDS = {"system prompt": "system_prompt", "a seed": "seed", "temperature": "temperature"}
# Where the sentences that tell a user what to change are made.
SENTENCE_MODULES = (
    "advice.py", "analysis/notices.py", "run/runner.py", "run/refusals.py", "run/progress.py", "run/http_engine.py",
    "run/server_kind.py", "run/servers.py",
)  # fmt: skip


def _sentences(module: str) -> list[tuple[str, str]]:
    """Each top-level statement's sentences (string constants with a space, f-strings' text included; docstrings
    left out), joined, with the statement's name."""
    tree = ast.parse((SOURCE / module).read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for statement in tree.body:
        texts = [
            node.value
            for node in ast.walk(statement)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value
            and id(node) not in docstrings
        ]  # fmt: skip
        if texts:
            found.append((f"{module}:{getattr(statement, 'name', statement.lineno)}", " ".join(texts)))
    return found


def test_every_setting_a_sentence_advises_is_a_flag_or_named_by_its_key() -> None:
    flags = {p.name for p in app.commands["run"].params if isinstance(p, click.Option)}
    keys = [k for k in Lane.__struct_fields__ if k not in ("name", "room_settings", "sampling")]
    keys += [*ROOM_SETTINGS, *SAMPLING]
    unsettable = []
    named = set()
    for module in SENTENCE_MODULES:
        for where, text in _sentences(module):
            for key in keys:
                if re.search(rf"\b{key}\b", text):
                    named.add(key)
                    if key not in flags and key not in LANES_FILE_ONLY and key not in ROOM_SETTINGS:
                        unsettable.append(f"{where}: {key}")
            for words, key in IN_WORDS.items():
                if words in text and key not in flags:  # not named by its key: a flag must set it
                    unsettable.append(f"{where}: {words!r} ({key})")
    assert unsettable == []
    # The sentences do advise these (so the scan reads them), and each is a flag of run now.
    assert {"temperature", "seed", "max_tokens", "timeout_s", "think_prefilled"} <= named
    assert {"temperature", "top_p", "seed", "max_tokens", "system_prompt", "timeout_s"} <= flags


def test_the_sampling_notice_names_a_flag_that_exists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After `--samples 3` at temperature 0 the run advises 0.6; `--temperature 0.6` is then taken."""
    from ocllm.run.lanes import lane_from_mapping
    from ocllm.run.runner import sampling_notices

    lane = lane_from_mapping("A", {"base_url": "http://x/v1", "model": "m", "samples_per_task": 3}, "test")
    (notice,) = sampling_notices(lane)
    flag = re.search(r"`ocllm run (--[a-z-]+) ([\d.]+)`", notice)
    assert flag is not None and flag[1] == "--temperature"
    # Out of range: one line naming the setting and its range, before any server is asked.
    assert main(["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--temperature", "11"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "temperature must be at least 0 and at most 10 (got 11.0)" in err[0], err
    assert main(["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--timeout", "0"]) == 2
    assert "timeout_s must be more than 0" in capsys.readouterr().err


def test_run_flags_override_the_lane(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each new flag replaces the lane's setting: recorded in the manifest, and sent with every request."""
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as sim:
        lanes = tmp_path / "lanes.toml"
        lanes.write_text(
            f'[lanes.A]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nsuite = "smoke"\n'
            'temperature = 0.0\nseed = 1\nsystem_prompt = "Be long."\ntimeout_s = 600\nmax_tokens = 4096\n',
            encoding="utf-8",
        )
        flags = [
            "--temperature", "0.6", "--top-p", "0.9", "--seed", "7", "--system-prompt", "Be brief.", "--timeout", "30",
            "--max-tokens", "512", "--samples", "2",
        ]  # fmt: skip
        out = tmp_path / "run"
        assert main(["run", "--config", str(lanes), "--lane", "A", *flags, "-o", str(out)]) in (0, 1)
    capsys.readouterr()
    lane = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["lane"]
    assert (lane["temperature"], lane["top_p"], lane["seed"], lane["system_prompt"]) == (0.6, 0.9, 7, "Be brief.")
    assert (lane["timeout_s"], lane["max_tokens"], lane["samples_per_task"], lane["suite"]) == (30, 512, 2, "smoke")
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(samples) == 20
    for sample in samples:
        body = sample["request"]
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.6, 0.9, 512)
        assert body["seed"] == 7 + sample.get("sample", 0)  # (sample 0 is left out of the line)
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
