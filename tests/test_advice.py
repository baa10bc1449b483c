"""Advice from what the run knows (issue 30, item 1): scripted servers of each kind (tests/scripted_server.py, real
HTTP on 127.0.0.1), started by ocllm from a lane's command (managed: its flags are on record) or already running
(probed: its command is unknown). Each run's notice of calls written as text, or of requests the server refused,
gives the advice that fits the server, and never advises a flag its command already has on."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer, Reply
from helpers import BACKSTOP_S

from ocllm.cli import main
from ocllm.server_facts import command_flags

pytestmark = pytest.mark.slow  # scripted servers in their own processes, managed and not

SCRIPTED = str(Path(__file__).with_name("scripted_server.py"))
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": CITY}}


def command(port: int, kind: str, *flags: str, answer: str = "fenced_json") -> list[str]:
    return [sys.executable, SCRIPTED, "--port", str(port), "--kind", kind, "--answer", answer, *flags]


def suite(tmp: Path) -> Path:
    path = tmp / "tools.jsonl"
    lines = [{"id": f"w{n}", "type": "tool_call", "question": "What is the weather in Paris?", "tools": [WEATHER],
              "expected_calls": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}], "category": "simple"}
             for n in range(2)]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def lanes_file(tmp: Path, lanes: dict[str, dict[str, Any]]) -> Path:
    """Each lane: its port, and its server command when ocllm is to start it (else whatever answers there)."""
    text = f'[defaults]\nmodel = "scripted"\nsuite = {json.dumps(str(suite(tmp)))}\nmax_attempts = 1\n'
    text += "concurrency = 1\nmax_tokens = 64\n"
    for name, lane in lanes.items():
        text += f'[lanes.{name}]\nbase_url = "http://127.0.0.1:{lane["port"]}/v1"\n'
        text += "".join(f"{key} = {json.dumps(value)}\n" for key, value in lane.get("settings", {}).items())
        if "command" in lane:
            text += f"[lanes.{name}.server]\ncommand = {json.dumps(lane['command'])}\n"
            text += f"ready_timeout_s = {BACKSTOP_S:g}\n"
    path = tmp / "lanes.toml"
    path.write_text(text)
    return path


def notices(run: Path) -> list[str]:
    return json.loads((run / "metrics.json").read_text())["notices"]


def advice_of(run: Path) -> str:
    """The one notice of calls written as text, or of what the server refused (the advice sentence in it)."""
    said = [n for n in notices(run) if "wrote their calls as text" in n or "refused" in n]
    assert len(said) == 1, notices(run)
    return said[0]


def assert_no_flag_on_is_advised(notice: str, argv: list[str]) -> None:
    """The rule the done-criterion names: no sentence tells to start a server with a flag its command has on."""
    for flag in argv:
        if flag.startswith("--") and flag not in ("--port", "--kind", "--answer"):
            for verb in ("start it with", "add", "with --enable-auto-tool-choice", "starts it with"):
                assert f"{verb} {flag}" not in notice, (flag, notice)


@pytest.fixture
def running() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Servers a test starts itself, for lanes that run against what is already running; stopped after."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.terminate()
        proc.wait(timeout=BACKSTOP_S)


def start(started: list[subprocess.Popen[bytes]], argv: list[str]) -> int:
    """Start a scripted server the test runs itself (its `argv` asks for port 0): the port it bound, which it
    prints once it listens."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    started.append(proc)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    found = re.search(r" on 127\.0\.0\.1:(\d+)$", line.strip())
    assert found, f"the scripted server did not start: {line!r}"
    return int(found.group(1))


def test_llama_cpp_with_its_tool_parser_says_no_flag_keeps_fenced_json_on_every_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reserve_port: Callable[[], int]
) -> None:
    """The issue's case: llama-server with Jinja on (by --jinja, or by default), the model writing fenced JSON."""
    ports = [reserve_port(), reserve_port()]
    lanes = {"jinja": {"port": ports[0], "command": command(ports[0], "llama.cpp", "--jinja")},
             "default": {"port": ports[1], "command": command(ports[1], "llama.cpp")}}  # fmt: skip
    assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 0
    console = capsys.readouterr().out
    said = {name: advice_of(tmp_path / "m" / name) for name in lanes}
    for name, notice in said.items():
        assert "No server flag keeps these: the model wrote its calls as bare JSON objects" in notice
        assert "llama-server (Jinja on: it accepted the tools) parses only the call format of the model's" in notice
        assert 'tool_choice = "required"' in notice and "another model" in notice
        assert "--jinja" not in notice and "--enable-auto-tool-choice" not in notice  # nothing another kind needs
        assert_no_flag_on_is_advised(notice, lanes[name]["command"])
    # The same sentence on the console and the run page (Markdown and HTML): one place makes it.
    sentence = said["jinja"].split(". ", 1)[1]
    assert " ".join(sentence.split()) in " ".join(console.split())
    assert main(["report", str(tmp_path / "m" / "jinja"), "-o", str(tmp_path / "page")]) == 0
    assert sentence in (tmp_path / "page" / "report.md").read_text().replace("\\", "")
    assert sentence in html.unescape((tmp_path / "page" / "report.html").read_text())


def test_llama_cpp_without_its_tool_parser_names_the_flag_its_command_turned_off(
    tmp_path: Path, running: list[subprocess.Popen[bytes]], reserve_port: Callable[[], int]
) -> None:
    managed = reserve_port()
    probed = start(running, command(0, "llama.cpp", "--no-jinja"))
    lanes = {"managed": {"port": managed, "command": command(managed, "llama.cpp", "--no-jinja")},
             "probed": {"port": probed}}  # fmt: skip
    # Every task failed: the command says so in its exit code.
    assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 1
    mine = advice_of(tmp_path / "m" / "managed")
    assert mine == (
        "llama-server refused the tools because its Jinja chat templates are off (its command has --no-jinja): start "
        "it without --no-jinja"
    )
    # Started elsewhere: its command is unknown, but the server itself said Jinja is off.
    theirs = advice_of(tmp_path / "m" / "probed")
    assert theirs.endswith("start it with --jinja (and without --no-jinja or LLAMA_ARG_NO_JINJA)")
    assert any("tools param requires --jinja flag" in n for n in notices(tmp_path / "m" / "probed"))


def test_vllm_advice_follows_its_flags_and_never_repeats_one_that_is_on(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    ports = [reserve_port() for _ in range(3)]
    lanes = {
        "bare": {"port": ports[0], "command": command(ports[0], "vllm")},
        "hermes": {"port": ports[1], "command": command(ports[1], "vllm", "--enable-auto-tool-choice",
                                                        "--tool-call-parser", "hermes")},
        "json": {"port": ports[2], "command": command(ports[2], "vllm", "--enable-auto-tool-choice",
                                                      "--tool-call-parser=llama3_json")},
    }  # fmt: skip
    assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 1  # "bare" failed
    said = {name: advice_of(tmp_path / "m" / name) for name in lanes}
    # Without --enable-auto-tool-choice vLLM refuses tool_choice "auto": the flags to add, or "required".
    assert said["bare"].startswith('vLLM refused tool_choice "auto": start it with --enable-auto-tool-choice ')
    assert "--tool-call-parser NAME" in said["bare"] and 'tool_choice = "required"' in said["bare"]
    # With hermes on, the JSON the model wrote needs another parser; the switch already on is not named.
    assert (
        "vLLM runs --tool-call-parser hermes, which does not read this format: --tool-call-parser llama3_json does"
    ) in said["hermes"]
    assert "--enable-auto-tool-choice" not in said["hermes"]
    # With llama3_json on, no flag is left to change.
    assert "No server flag keeps these" in said["json"] and "llama3_json (already on)" in said["json"]
    for name, notice in said.items():
        assert_no_flag_on_is_advised(notice, lanes[name]["command"])


def test_servers_ocllm_did_not_start_are_told_what_to_check(
    tmp_path: Path, running: list[subprocess.Popen[bytes]]
) -> None:
    argvs = [command(0, "vllm", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"),
             command(0, "sglang", "--tool-call-parser", "qwen25"),
             command(0, "sglang"),
             command(0, "ollama")]  # fmt: skip
    ports = [start(running, argv) for argv in argvs]
    names = ("vllm", "sglang", "sglang_bare", "ollama")
    lanes = {name: {"port": port} for name, port in zip(names, ports, strict=True)}
    assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 0
    said = {name: advice_of(tmp_path / "m" / name) for name in lanes}
    # vLLM's command is unknown: it served "auto", so one flag is known on; the parser is to be checked.
    assert (
        'Check which --tool-call-parser this vLLM server runs (it served tool_choice "auto", so '
        "--enable-auto-tool-choice is on): --tool-call-parser llama3_json reads this format"
    ) in said["vllm"]
    # SGLang reports its parser itself: known even unmanaged.
    assert "SGLang runs --tool-call-parser qwen25, which does not read this format: --tool-call-parser llama3" in (
        said["sglang"]
    )
    assert "SGLang runs without a tool parser: start it with --tool-call-parser llama3" in said["sglang_bare"]
    # Ollama parses what the model's template writes: no flag, and no tool_choice (its API has none).
    assert "No server flag keeps these" in said["ollama"] and "Modelfile TEMPLATE" in said["ollama"]
    assert "tool_choice" not in said["ollama"]


def test_the_flags_of_a_command_are_read_as_its_server_reads_them() -> None:
    assert command_flags(["llama-server", "--jinja", "-m", "x", "--no-jinja"]) == {"jinja": False,
                                                                                 "enable_auto_tool_choice": False}
    wrapped = command_flags(["sh", "-c", "exec vllm serve m --enable-auto-tool-choice --tool-call-parser hermes"])
    assert wrapped["enable_auto_tool_choice"] is True and wrapped["tool_call_parser"] == "hermes"
    # A setting an env name may set is unknown, whatever the command says (the values are never recorded).
    assert "jinja" not in command_flags(["llama-server", "--jinja"], ["LLAMA_ARG_NO_JINJA"])
    assert "jinja" not in command_flags(["llama-server"])  # the default depends on the build


# The words that advise tool_choice "required" (advice.py's _REQUIRED, and the unknown kind's "a tool_choice of").
ADVISES_REQUIRED = ('tool_choice = "required" for this lane', 'a tool_choice of "required"')
DID_NOT_TAKE = "the server's constraint did not take (the server ignored tool_choice or could not enforce it)"


def test_required_is_never_advised_to_a_lane_that_sends_it_and_one_that_did_not_take_is_told_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reserve_port: Callable[[], int]
) -> None:
    """Issue 41, item 1: llama-server writing each call as a JSON block in the content. With "auto" the advice names
    "required"; with "required" the answers run to max_tokens (the block, then newlines) with no structured call,
    and that lane is told its constraint did not take and what may help, never "required" again."""
    ports = [reserve_port(), reserve_port()]
    lanes = {"auto": {"port": ports[0], "command": command(ports[0], "llama.cpp")},
             "required": {"port": ports[1], "command": command(ports[1], "llama.cpp"),
                          "settings": {"tool_choice": "required"}}}  # fmt: skip
    assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 0
    console = " ".join(capsys.readouterr().out.split())
    auto, required = notices(tmp_path / "m" / "auto"), notices(tmp_path / "m" / "required")
    assert any(ADVISES_REQUIRED[0] in n for n in auto)  # the first lane's advice, followed by the second
    assert not any(DID_NOT_TAKE in n for n in auto)
    for notice in required:
        assert not any(words in notice for words in ADVISES_REQUIRED), notice
    [took] = [n for n in required if DID_NOT_TAKE in n]
    assert took.startswith('The lane sends tool_choice = "required", yet 2 of 2 tool_call answer(s) ran to max_tokens '
                           "(64) with no call in tool_calls")  # fmt: skip
    assert "a chat template with tools" in took and "--chat-template-file" in took and "grammar" in took
    assert 'tool_choice = "auto" again' in took
    # The calls in the content are still said, with what can help that is not "required".
    [dropped] = [n for n in required if "wrote their calls as text" in n]
    assert "What can help: a system prompt or chat template that asks for the format" in dropped
    # Rendered wherever advice is: the console, the run's page (Markdown and HTML), and none of it says "required".
    assert " ".join(took.split()) in console
    assert main(["report", str(tmp_path / "m" / "required"), "-o", str(tmp_path / "page")]) == 0
    markdown = (tmp_path / "page" / "report.md").read_text().replace("\\", "")
    page = html.unescape((tmp_path / "page" / "report.html").read_text())
    for text in (markdown, page):
        assert took in text
        assert not any(words in text for words in ADVISES_REQUIRED)


def test_each_kind_that_did_not_enforce_required_is_told_its_own_way(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    ports = [reserve_port() for _ in range(3)]
    argvs = {"vllm": command(ports[0], "vllm", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"),
             "sglang": command(ports[1], "sglang", "--tool-call-parser", "llama3"),
             "ollama": command(ports[2], "ollama")}  # fmt: skip
    lanes = {name: {"port": port, "command": argv, "settings": {"tool_choice": "required"}}
             for (name, argv), port in zip(argvs.items(), ports, strict=True)}  # fmt: skip
    assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 0
    own = {"vllm": 'What may help: a vLLM of 0.8.3 or later (it constrains "required" itself), a --tool-call-parser',
           "sglang": "What may help: SGLang with a --tool-call-parser for the model's call format",
           "ollama": "What may help: none from Ollama's side: its OpenAI API takes no tool_choice"}  # fmt: skip
    for name in lanes:
        said = notices(tmp_path / "m" / name)
        [took] = [n for n in said if DID_NOT_TAKE in n]
        assert own[name] in took and took.endswith('or tool_choice = "auto" again, which costs fewer tokens')
        for notice in said:
            assert not any(words in notice for words in ADVISES_REQUIRED), notice
        assert_no_flag_on_is_advised(took, lanes[name]["command"])


def test_a_required_lane_whose_answers_stopped_is_not_told_its_constraint_failed(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    """The sentence rests on what happened: a "required" lane whose answers ended on their own (calls as text,
    finish_reason "stop") is not told the constraint did not take, and is not advised "required" either."""
    port = reserve_port()
    lanes = {"vllm": {"port": port, "command": command(port, "vllm", "--enable-auto-tool-choice", "--tool-call-parser",
                                                       "llama3_json", "--on-required", "as_auto"),
                      "settings": {"tool_choice": "required"}}}  # fmt: skip
    assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 0
    said = notices(tmp_path / "m" / "vllm")
    assert not any(DID_NOT_TAKE in n for n in said)
    notice = advice_of(tmp_path / "m" / "vllm")
    assert "No server flag keeps these" in notice and "llama3_json (already on)" in notice
    assert notice.endswith("What can help: a system prompt or chat template that asks for the format the parser "
                           "reads, or another model")  # fmt: skip


def test_a_server_of_no_known_kind_that_ignores_required_is_told_each_way_to_make_it_take(tmp_path: Path) -> None:
    """A server whose kind is unknown (the fault server: no identity route answers), sent "required", answering
    with the JSON call in the content and then newlines to max_tokens, no tool_calls."""
    content = 'I will look it up.\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```' + "\n" * 60
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length"}
    runaway = Reply(json={"id": "x", "object": "chat.completion", "model": "scripted", "choices": [choice],
                          "usage": {"prompt_tokens": 20, "completion_tokens": 64, "total_tokens": 84}})  # fmt: skip
    with FaultServer() as server:
        server.script(Reply(json={"object": "list", "data": [{"id": "scripted", "object": "model"}]}), then=runaway)
        lanes = {"unknown": {"port": server.port, "settings": {"tool_choice": "required"}}}
        assert main(["matrix", str(lanes_file(tmp_path, lanes)), "--out", str(tmp_path / "m")]) == 0
        bodies = [r.json() for r in server.requests if r.path.endswith("/chat/completions")]
    assert bodies and all(body["tool_choice"] == "required" for body in bodies)
    said = notices(tmp_path / "m" / "unknown")
    [took] = [n for n in said if DID_NOT_TAKE in n]
    assert "a tool-call parser flag on the server" in took and "a chat template with tools" in took
    assert "a grammar of the call" in took
    for notice in said:
        assert not any(words in notice for words in ADVISES_REQUIRED), notice
