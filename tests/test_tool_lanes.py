"""Tool lanes end to end (issue 23): the shipped demo-tools suite run with `ocllm run` against a simulator with a tool
parser and one without; the comparison and the matrix count the calls the second server dropped."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import samples_of

from ocllm.cli import main
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites


def test_a_lane_that_changes_only_the_server_s_tool_parser_shows_its_calls_dropped(tmp_path: Path) -> None:
    suites = tuple(shipped_suites().values())
    runs = {"parsed": tmp_path / "m" / "parsed", "unparsed": tmp_path / "m" / "unparsed"}
    with SimServer(SimConfig(suites=suites)) as parsed, SimServer(SimConfig(suites=suites, tool_parser="none")) as bare:
        for name, server in (("parsed", parsed), ("unparsed", bare)):
            assert main(["run", "--suite", "demo-tools", "--base-url", server.base_url, "--model", "sim-baseline",
                         "--lane", name, "--out", str(runs[name])]) == 0  # fmt: skip
    made = [s for s in samples_of(runs["parsed"]) if s.get("tool_calls")]
    assert made and all(s["request"]["tools"] and s["request"]["tool_choice"] == "auto" for s in made)
    assert not any(s.get("tool_calls") for s in samples_of(runs["unparsed"]))
    out = tmp_path / "cmp"
    assert main(["compare", str(runs["parsed"]), str(runs["unparsed"]), "-o", str(out)]) == 0
    doc = json.loads((out / "comparison.json").read_text())
    a, b = doc["a"]["type_details"]["tool_call"], doc["b"]["type_details"]["tool_call"]
    # The same calls drawn on both servers: those the first parsed are the ones the second left as text.
    assert a["answers_with_structured_calls"] == len(made) and a["answers_with_calls_only_as_text"] == 0
    assert b["answers_with_structured_calls"] == 0 and b["answers_with_calls_only_as_text"] == len(made)
    markdown = (out / "comparison.md").read_text()
    assert f"{len(made)} wrote their calls only as text (dropped by the server's parser" in markdown
    assert "Each task type's own figures" in (out / "comparison.html").read_text()
    assert main(["matrix-report", str(tmp_path / "m"), "-o", str(tmp_path / "mr")]) == 0
    lanes = {lane["label"]: lane for lane in json.loads((tmp_path / "mr" / "matrix.json").read_text())["lanes"]}
    assert lanes["unparsed"]["type_details"]["tool_call"]["answers_with_calls_only_as_text"] == len(made)
    assert "Each task type's own figures" in (tmp_path / "mr" / "matrix.md").read_text()
