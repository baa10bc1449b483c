"""An agent's context as a lane setting (issue 43, item 4): `system_prompt_file` and `extra_tools_file` read when the
lane is read, sent with every request of any task type, recorded by hash, refused in one line when wrong; the prompt
tokens of the requests in the summary; a prompt past the server's context counted apart and advised on. Real files,
the real CLI, the simulator and scripted servers on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import mcq
from faultserver import FaultServer, Reply, answer, models
from helpers import read_jsonl, samples_of, sums, write_suite
from ports import refused_port

from ocllm.analysis.metrics import Tally
from ocllm.cli import main
from ocllm.models import Sample, Turn
from ocllm.run.lanes import load_lanes, pick_lane, public_settings, with_flags
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "agent-context"
NOBODY = f"http://127.0.0.1:{refused_port()}/v1"  # nothing listens: a check that asked the server would say so
PROMPT = "You are Harbor, an agent on the owner's workstation.\nUse the tools with care.\n"
NOTE = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS = [
    {"type": "function", "function": {"name": "save_note", "description": "Save a note.", "parameters": NOTE}},
    {"type": "function", "function": {"name": "run_shell", "description": "Run a command.",
                                      "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
]  # fmt: skip
LLAMA_TOO_LONG = {
    "error": {
        "code": 400,
        "message": "request (17250 tokens) exceeds the available context size (16384 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 17250,
        "n_ctx": 16384,
    }
}
VLLM_TOO_LONG = {
    "object": "error",
    "message": "This model's maximum context length is 16384 tokens. However, you requested 17250 tokens (15226 in "
    "the messages, 2024 in the completion). Please reduce the length of the messages or completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
LLAMA_BATCH = {
    "error": {
        "code": 500,
        "message": "input (9000 tokens) is too large to process. increase the physical batch size (current batch "
        "size: 512)",
        "type": "server_error",
    }
}


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as server:
        yield server


def agent_files(tmp: Path, tools: Any = TOOLS) -> tuple[Path, Path]:
    prompt, tools_file = tmp / "prompt.md", tmp / "tools.json"
    prompt.write_text(PROMPT, encoding="utf-8")
    tools_file.write_text(tools if isinstance(tools, str) else json.dumps(tools), encoding="utf-8")
    return prompt, tools_file


def lanes_file(
    tmp: Path, base_url: str, suite: str | Path, lane: str, head: str = "", model: str = "m", more: str = ""
) -> Path:
    """A lanes file of a lane `agent` (its settings `lane`) and `more` lanes, under [defaults] with `head` added."""
    path = tmp / "lanes.toml"
    path.write_text(
        f'[defaults]\nbase_url = "{base_url}"\nmodel = "{model}"\nsuite = {json.dumps(str(suite))}\n'
        f"concurrency = 1\n{head}\n[lanes.agent]\n{lane}\n{more}",
        encoding="utf-8",
    )
    return path


def agent_lane(prompt: Path, tools: Path) -> str:
    return f"system_prompt_file = {json.dumps(str(prompt))}\nextra_tools_file = {json.dumps(str(tools))}\n"


def run_args(lanes: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--config", str(lanes), "--lane", "agent", "--out", str(out), *extra]


def summary_of(run: Path) -> dict[str, Any]:
    return json.loads((run / "metrics.json").read_text(encoding="utf-8"))["summary"]


# --- Read when the lane is read ---------------------------------------------------------------------------------


def test_a_lane_reads_both_files_and_records_their_hash_not_their_text(tmp_path: Path) -> None:
    prompt, tools = agent_files(tmp_path)
    lane = pick_lane(lanes_file(tmp_path, NOBODY, "demo", agent_lane(prompt, tools)), "agent")
    assert lane.system_text() == PROMPT and lane.extra_tools() == TOOLS
    record = public_settings(lane)
    assert record["system_prompt_file"] == {
        "path": str(prompt), "sha256": _sha256(prompt), "bytes": len(PROMPT.encode()),
    }  # fmt: skip
    names = ["save_note", "run_shell"]
    assert record["extra_tools_file"] == {"path": str(tools), "sha256": _sha256(tools), "tools": names}
    assert PROMPT not in json.dumps(record)  # the text is in every request, never in the manifest
    # A flag replaces the lane's setting for the run: --system-prompt the file's prompt; the tools stay.
    flagged = with_flags(lane, {"system_prompt": "Be brief."})
    assert (flagged.system_text(), flagged.system_prompt_file, flagged.extra_tools()) == ("Be brief.", None, TOOLS)


def test_paths_are_read_as_suite_paths_are_and_agents_export_their_tools_as_an_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_files(tmp_path, {"tools": TOOLS})
    (tmp_path / "conf").mkdir()
    relative = 'system_prompt_file = "prompt.md"\nextra_tools_file = "tools.json"'
    lanes = lanes_file(tmp_path / "conf", NOBODY, "demo", relative)
    monkeypatch.chdir(tmp_path)  # relative to where ocllm runs, as `suite` is: not to the lanes file's folder
    lane = pick_lane(lanes, "agent")
    assert lane.system_text() == PROMPT and lane.extra_tools() == TOOLS


def test_a_lanes_own_system_prompt_replaces_the_other_one_its_defaults_set(tmp_path: Path) -> None:
    prompt, _ = agent_files(tmp_path)
    in_defaults = f"system_prompt_file = {json.dumps(str(prompt))}"
    lanes = lanes_file(tmp_path, NOBODY, "demo", 'system_prompt = "Be brief."', in_defaults)
    lanes.write_text(lanes.read_text() + f"\n[lanes.with_file]\nsystem_prompt_file = {json.dumps(str(prompt))}\n")
    read = load_lanes(lanes)
    assert read["agent"].system_text() == "Be brief." and read["agent"].system_prompt_file is None
    assert read["with_file"].system_text() == PROMPT


def test_the_shipped_example_is_a_realistic_agent_context() -> None:
    lanes = {"system_prompt_file": str(EXAMPLE / "system_prompt.md"), "extra_tools_file": str(EXAMPLE / "tools.json")}
    from ocllm.run.lanes import lane_from_mapping

    lane = lane_from_mapping("agent", {"base_url": NOBODY, "model": "m", **lanes}, "test")
    assert 1000 <= len((lane.system_text() or "").split()) <= 2000
    names = lane.extra_tools_file.tools if lane.extra_tools_file else []
    assert 12 <= len(names) <= 20
    assert {"read", "write", "run_shell", "web_search", "send_message"} <= set(names)
    demo_tools = {t["function"]["name"] for line in read_jsonl(shipped_suites()["demo-tools"]) for t in line["tools"]}
    assert not demo_tools & set(names)  # the shipped tool suite runs inside the example's context


# --- Refused in one line, exit code 2, before any server is asked ------------------------------------------------


def _missing(tmp: Path) -> str:
    return f"system_prompt_file = {json.dumps(str(tmp / 'nowhere.md'))}"


def _bad_json(tmp: Path) -> str:
    _, tools = agent_files(tmp, '[{"type": "function", "function": {"name": "x"}},]')
    return f"extra_tools_file = {json.dumps(str(tools))}"


def _no_name(tmp: Path) -> str:
    _, tools = agent_files(tmp, [{"type": "function", "function": {"description": "no name", "parameters": NOTE}}])
    return f"extra_tools_file = {json.dumps(str(tools))}"


def _bad_schema(tmp: Path) -> str:
    bad = {"type": "object", "properties": {"text": {"type": "strng"}}}
    _, tools = agent_files(tmp, [{"type": "function", "function": {"name": "save_note", "parameters": bad}}])
    return f"extra_tools_file = {json.dumps(str(tools))}"


def _twice(tmp: Path) -> str:
    _, tools = agent_files(tmp, [TOOLS[0], TOOLS[0]])
    return f"extra_tools_file = {json.dumps(str(tools))}"


def _both(tmp: Path) -> str:
    prompt, _ = agent_files(tmp)
    return f'system_prompt = "Be brief."\nsystem_prompt_file = {json.dumps(str(prompt))}'


def _not_utf8(tmp: Path) -> str:
    (tmp / "latin1.md").write_bytes("Réponds en français.".encode("latin-1"))
    return f"system_prompt_file = {json.dumps(str(tmp / 'latin1.md'))}"


def _empty_list(tmp: Path) -> str:
    _, tools = agent_files(tmp, {"tools": []})
    return f"extra_tools_file = {json.dumps(str(tools))}"


def _a_table(tmp: Path) -> str:
    return 'system_prompt_file = {path = "prompt.md", sha256 = "0", bytes = 1}'


REFUSED = {
    "a missing file": (_missing, "lane 'agent': system_prompt_file: ", "nowhere.md: no such file"),
    "bad JSON": (_bad_json, "lane 'agent': extra_tools_file: ", "invalid JSON"),
    "a tool without a name": (_no_name, "lane 'agent': extra_tools_file: ", "tool 1 has no function name"),
    "parameters that are no JSON Schema": (_bad_schema, "extra_tools_file: ", "tool 1 (save_note): parameters: "),
    "a name used twice": (_twice, "extra_tools_file: ", "tool 2: the name 'save_note' is used twice"),
    "system_prompt and system_prompt_file": (
        _both, "lane 'agent': sets both system_prompt and system_prompt_file; keep system_prompt_file",
        "or system_prompt to send the lane's own text",
    ),
    "a prompt that is not UTF-8": (_not_utf8, "system_prompt_file: ", "not UTF-8 text (byte 0xe9"),
    "no tools": (_empty_list, "extra_tools_file: ", "must hold a non-empty list"),
    "a table where a path goes": (_a_table, "system_prompt_file must be the path of a file", ""),
}


@pytest.mark.parametrize("case", list(REFUSED), ids=list(REFUSED))
def test_a_wrong_agent_file_is_refused_in_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setting, *said = REFUSED[case]
    lanes = lanes_file(tmp_path, NOBODY, "demo", setting(tmp_path))
    assert main(run_args(lanes, tmp_path / "run")) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"ocllm: error: {lanes}: "), err
    assert all(words in lines[0] for words in said), lines[0]
    assert "cannot reach" not in err and not (tmp_path / "run").exists()


def test_an_agent_tool_named_as_a_tasks_tool_is_refused_when_the_run_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": NOTE}}
    prompt, tools = agent_files(tmp_path, [TOOLS[0], weather])
    lanes = lanes_file(tmp_path, NOBODY, "demo-tools", agent_lane(prompt, tools))
    assert pick_lane(lanes, "agent").extra_tools_file is not None  # the file itself is sound: the suite makes the clash
    assert main(run_args(lanes, tmp_path / "run")) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [
        f"ocllm: error: lane 'agent': extra_tools_file {tools}: the tool 'get_weather' is also a tool of task "
        "'tool_weather_paris'; rename it in the file, or leave it out"
    ]
    assert not (tmp_path / "run").exists()


# --- A real run inside the agent's context --------------------------------------------------------------------


def test_every_request_carries_the_agents_prompt_and_tools_and_the_summary_its_prompt_tokens(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt, tools = agent_files(tmp_path)
    more = '[lanes.bare]\n\n[lanes.tools]\nsuite = "demo-tools"\n' + agent_lane(prompt, tools)
    lanes = lanes_file(tmp_path, sim.base_url, "demo", agent_lane(prompt, tools), model="sim-baseline", more=more)
    assert main(["matrix", str(lanes), "--out", str(tmp_path / "m")]) == 0
    printed = capsys.readouterr().out
    agent, bare, tool_lane = (tmp_path / "m" / name for name in ("agent", "bare", "tools"))
    requests = [line["request"] for line in samples_of(agent)]
    assert len(requests) == 59
    for request in requests:  # any task type: the demo suite's are MCQ and required substrings
        assert request["messages"][0] == {"role": "system", "content": PROMPT}
        assert request["tools"] == TOOLS and "tool_choice" not in request  # the server's default, "auto"
    for line in samples_of(tool_lane):  # a task's tools first, the agent's after, with the task's tool_choice
        request = line["request"]
        task = next(t for t in read_jsonl(tool_lane / "suite.jsonl") if t["id"] == line["task_id"])
        assert request["tools"] == [*task["tools"], *TOOLS] and request["tool_choice"] == "auto"
    assert all("tools" not in line["request"] and line["request"]["messages"][0]["role"] == "user"
               for line in samples_of(bare))  # fmt: skip
    # The prompt tokens of every request, as the server counted them: the agent's context in each.
    ours, theirs = summary_of(agent)["prompt_tokens"], summary_of(bare)["prompt_tokens"]
    assert ours["requests"] == theirs["requests"] == 59
    assert ours["mean"] > theirs["mean"] + 50 and ours["max"] >= ours["mean"]
    usage = [line["usage"]["prompt_tokens"] for line in samples_of(agent)]
    assert (ours["max"], ours["mean"]) == (max(usage), round(sum(usage) / len(usage), 1))
    assert summary_of(agent)["refused_context"] == 0
    assert f"prompt tokens a request: mean {ours['mean']:,.1f}, largest {ours['max']:,} (over 59 requests" in printed
    manifest = json.loads((agent / "manifest.json").read_text())
    assert manifest["lane"]["system_prompt_file"]["sha256"] == _sha256(prompt)
    assert manifest["lane"]["extra_tools_file"]["tools"] == ["save_note", "run_shell"]
    # The run report draws the prompt tokens, in Markdown and HTML, and the settings name the files.
    assert main(["report", str(agent), "-o", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert f"| prompt tokens a request, mean | {ours['mean']:,.1f} |" in markdown
    assert f"| prompt tokens a request, largest | {ours['max']:,} |" in markdown
    assert f"system prompt file | {prompt} ({len(PROMPT.encode())} bytes; sha256 {_sha256(prompt)[:12]})" in markdown
    html = (tmp_path / "report" / "report.html").read_text()
    assert "<table data-prompt-tokens>" in html and f'<td class="num">{ours["max"]:,}</td>' in html
    # `ocllm compare` of the two lanes: the files set one apart, and the prompt tokens side by side.
    assert main(["compare", str(bare), str(agent), "-o", str(tmp_path / "compare")]) == 0
    compared = (tmp_path / "compare" / "comparison.md").read_text()
    assert f"| **system prompt file** (differs) | not set | {prompt} (" in compared
    assert f"| prompt tokens a request, mean | {theirs['mean']:,.1f} | {ours['mean']:,.1f} |" in compared
    assert "<table data-prompt-tokens>" in (tmp_path / "compare" / "comparison.html").read_text()


def test_resume_refuses_a_lane_whose_agent_file_changed(
    sim: SimServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt, tools = agent_files(tmp_path)
    lanes = lanes_file(tmp_path, sim.base_url, "smoke", agent_lane(prompt, tools), model="sim-baseline")
    out = tmp_path / "run"
    assert main(run_args(lanes, out, "--limit", "4")) == 0
    assert main(run_args(lanes, out, "--limit", "4", "--resume")) == 0  # the same files: the run resumes
    prompt.write_text(PROMPT + "Answer in French.\n", encoding="utf-8")
    capsys.readouterr()
    assert main(run_args(lanes, out, "--limit", "4", "--resume")) == 2
    assert (
        f"lane settings differ from the interrupted run (system_prompt_file: {prompt} changed since (its sha256 "
        "differs))" in capsys.readouterr().err
    )
    prompt.write_text(PROMPT, encoding="utf-8")
    tools.write_text(json.dumps(TOOLS[:1]), encoding="utf-8")
    assert main(run_args(lanes, out, "--limit", "4", "--resume")) == 2
    assert "(extra_tools_file: " in capsys.readouterr().err


def test_shards_run_inside_an_agents_context_merge(sim: SimServer, tmp_path: Path) -> None:
    """merge reads the lane back from a shard's manifest, which holds the files' records and no text."""
    prompt, tools = agent_files(tmp_path)
    lanes = lanes_file(tmp_path, sim.base_url, "smoke", agent_lane(prompt, tools), model="sim-baseline")
    for k in (0, 1):
        assert main(run_args(lanes, tmp_path / f"shard{k}", "--shard", f"{k}/2")) == 0
    merged = tmp_path / "merged"
    assert main(["merge", str(tmp_path / "shard0"), str(tmp_path / "shard1"), "-o", str(merged)]) == 0
    assert json.loads((merged / "manifest.json").read_text())["lane"]["system_prompt_file"]["sha256"] == _sha256(prompt)
    assert summary_of(merged)["prompt_tokens"]["requests"] == 10


# --- A prompt past the server's context ---------------------------------------------------------------------------


@pytest.mark.parametrize("body", [LLAMA_TOO_LONG, VLLM_TOO_LONG], ids=["llama.cpp", "vLLM"])
def test_a_prompt_past_the_servers_context_is_counted_apart_and_advised_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: dict[str, Any]
) -> None:
    prompt, tools = agent_files(tmp_path)
    suite = write_suite(tmp_path / "suite.jsonl", sums(3))
    usage = {"prompt_tokens": 15000, "completion_tokens": 3, "total_tokens": 15003}
    with FaultServer() as server:
        # The second task's prompt does not fit; a batch refusal after it is a refusal of another kind.
        too_long, batch = Reply(status=400, json=body), Reply(status=500, json=LLAMA_BATCH)
        server.script(models("m"), answer(usage=usage), too_long, batch)
        lanes = lanes_file(tmp_path, server.base_url, suite, agent_lane(prompt, tools), "max_tokens = 2024")
        assert main(run_args(lanes, tmp_path / "run")) == 1
    printed = " ".join(capsys.readouterr().out.split())
    summary = summary_of(tmp_path / "run")
    assert (summary["errors"], summary["refused_context"]) == (2, 1)
    assert summary["prompt_tokens"] == {"mean": 15000.0, "max": 15000, "requests": 1}
    kinds = sorted(line.get("error_kind") or "answered" for line in samples_of(tmp_path / "run"))
    assert kinds == ["answered", "refused", "refused"]
    advice = (
        "1 task(s) failed because the prompt and max_tokens do not fit the server's context (refused, not counted as "
        "wrong): give the server a larger context (--max-model-len on vLLM, -c/--ctx-size on llama-server, "
        "--context-length on SGLang, num_ctx on Ollama), lower max_tokens (now 2024), or send a shorter system "
        "prompt (system_prompt_file) or fewer tools (extra_tools_file)"
    )
    assert advice in printed
    assert advice in json.loads((tmp_path / "run" / "metrics.json").read_text())["notices"]


def test_a_bare_lane_is_not_told_of_files_it_does_not_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path / "suite.jsonl", sums(2))
    with FaultServer() as server:
        server.script(models("m"), Reply(status=400, json=LLAMA_TOO_LONG), then=answer())
        lanes = lanes_file(tmp_path, server.base_url, suite, "")
        assert main(run_args(lanes, tmp_path / "run")) == 1
    printed = " ".join(capsys.readouterr().out.split())
    said = "do not fit the server's context (refused, not counted as wrong): give the server a larger context"
    assert said in printed
    assert "lower max_tokens (now 4096)" in printed and "system_prompt_file" not in printed
    assert summary_of(tmp_path / "run")["refused_context"] == 1


# --- Each request of a conversation counts ------------------------------------------------------------------------


def test_each_request_of_a_conversation_counts_in_the_prompt_tokens() -> None:
    def reply(prompt_tokens: int | None) -> Sample:
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 5} if prompt_tokens is not None else None
        return Sample(task_id="t", usage=usage)

    turns = [Turn(reply=reply(1000)), Turn(reply=reply(1400)), Turn(reply=reply(None))]
    episode = Sample(task_id="t", usage={"prompt_tokens": 2400, "completion_tokens": 10}, turns=turns)
    tally = Tally()
    decision = mcq("FINAL: D")
    tally.add(decision, episode)
    tally.add(decision, Sample(task_id="u", usage={"prompt_tokens": 600}))
    tally.add(decision)  # a decision without its sample: nothing to count
    figures = tally.summary().prompt_tokens
    assert (figures.mean, figures.max, figures.requests) == (1000.0, 1400, 3)  # type: ignore[union-attr]
    assert "prompt_tokens" not in json.dumps(_summary_without_requests())


def _summary_without_requests() -> dict[str, Any]:
    """A summary no request's usage said prompt tokens in: the key is absent."""
    import msgspec

    tally = Tally()
    tally.add(mcq("FINAL: D"), Sample(task_id="t1"))
    return msgspec.to_builtins(tally.summary())  # type: ignore[no-any-return]


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
