"""Bad inputs from a hostile world (issue 11): each ends in one line on stderr and exit code 2, never a
traceback, and is found before any server is asked. Files are real, the CLI is the real entry point."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import legacy_record, write_json
from faultserver import free_port

from ocllm.cli import main

NOBODY = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there: a check that asks the server would say so
TASK = {"id": "t1", "type": "mcq", "question": "q", "options": ["a", "b"], "answer": "A", "category": "c"}


def suite(tmp: Path) -> Path:
    path = tmp / "suite.jsonl"
    path.write_text(json.dumps(TASK) + "\n")
    return path


def run_args(tmp: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--suite", str(suite(tmp)), "--base-url", NOBODY, "--model", "m", "--out", str(out), *extra]


def nested_metrics(tmp: Path) -> list[str]:
    (tmp / "deep.json").write_text('{"tasks": ' + "[" * 1500 + "]" * 1500 + "}")
    return ["rescore", str(tmp / "deep.json"), "-o", str(tmp / "out.json")]


def nested_suite(tmp: Path) -> list[str]:
    (tmp / "deep.jsonl").write_text('{"id": ' + "[" * 1500 + "]" * 1500 + "}\n")
    return ["run", "--suite", str(tmp / "deep.jsonl"), "--base-url", NOBODY, "--model", "m", "--out", str(tmp / "r")]


def nested_lanes(tmp: Path) -> list[str]:
    (tmp / "lanes.toml").write_text("x = " + "[" * 1500 + "]" * 1500 + "\n")
    return ["matrix", str(tmp / "lanes.toml"), "--out", str(tmp / "m")]


def lanes_with(setting: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        lanes = tmp / "lanes.toml"
        lanes.write_text(f'[lanes.L]\nbase_url = "{NOBODY}"\nmodel = "m"\nsuite = "{suite(tmp)}"\n{setting}\n')
        return ["run", "--config", str(lanes), "--lane", "L", "--out", str(tmp / "r")]

    return build


def output_is_a_file(command: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        metrics = write_json(tmp / "m.json", {"tasks": [legacy_record("t1", "FINAL: B")]})
        (tmp / "taken").write_text("mine")
        if command == "report":
            return ["report", str(metrics), "-o", str(tmp / "taken")]
        if command == "compare":
            return ["compare", str(metrics), str(metrics), "-o", str(tmp / "taken")]
        folder = tmp / "runs"
        (folder / "A").mkdir(parents=True)
        (folder / "A" / "suite.jsonl").write_text(json.dumps(TASK) + "\n")
        (folder / "A" / "samples.jsonl").write_text(json.dumps({"task_id": "t1", "content": "FINAL: A"}) + "\n")
        return ["matrix-report", str(folder), "-o", str(tmp / "taken")]

    return build


def out_under_a_file(tmp: Path) -> list[str]:
    (tmp / "file").write_text("mine")
    return run_args(tmp, tmp / "file" / "sub")


def out_is_someone_elses_folder(tmp: Path) -> list[str]:
    folder = tmp / "old_results"
    folder.mkdir()
    for name in ("metrics.json", "manifest.json", "suite.jsonl"):
        (folder / name).write_text('{"theirs": true}\n')
    return run_args(tmp, folder)


def samples_is_a_folder(tmp: Path) -> list[str]:
    out = tmp / "r"
    (out / "samples.jsonl").mkdir(parents=True)
    return run_args(tmp, out, "--resume")


def suite_of(text: str | bytes) -> Callable[[Path], list[str]]:
    """A run whose suite file holds exactly `text`."""

    def build(tmp: Path) -> list[str]:
        path = tmp / "given.jsonl"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return ["run", "--suite", str(path), "--base-url", NOBODY, "--model", "m", "--out", str(tmp / "r")]

    return build


def task_with(**changes: object) -> Callable[[Path], list[str]]:
    return suite_of(json.dumps({**TASK, **changes}) + "\n")


def metrics_of(text: str | bytes) -> Callable[[Path], list[str]]:
    """A rescore of a metrics file holding exactly `text`."""

    def build(tmp: Path) -> list[str]:
        path = tmp / "given.json"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return ["rescore", str(path), "-o", str(tmp / "out.json")]

    return build


def lanes_text(text: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        (tmp / "lanes.toml").write_text(text.replace("SUITE", str(suite(tmp))))
        return ["matrix", str(tmp / "lanes.toml"), "--out", str(tmp / "m")]

    return build


def command(*args: str) -> Callable[[Path], list[str]]:
    """A command line; TMP in an argument is the test's folder."""
    return lambda tmp: [a.replace("TMP", str(tmp)) for a in args]


def rescore_onto_itself(tmp: Path) -> list[str]:
    metrics = write_json(tmp / "m.json", {"tasks": [legacy_record("t1", "FINAL: B")]})
    return ["rescore", str(metrics), "-o", str(metrics)]


LANE = f'[lanes.L]\nbase_url = "{NOBODY}"\nmodel = "m"\nsuite = "SUITE"\n'

CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    # Suites: the file, each line, each field.
    "suite not UTF-8": (suite_of(b'{"id": "t\xff\xfe"}\n'), "not UTF-8"),
    "suite line not JSON": (suite_of('{"id": "t1", \n'), "given.jsonl:1"),
    "suite line a list": (suite_of("[1, 2]\n"), "given.jsonl:1"),
    "suite empty": (suite_of(""), "no tasks"),
    "suite task without id": (suite_of(json.dumps({k: v for k, v in TASK.items() if k != "id"}) + "\n"), "id"),
    "suite duplicate ids": (suite_of((json.dumps(TASK) + "\n") * 2), "t1"),
    "suite gold letter beyond the options": (task_with(answer="E"), "answer"),
    "suite one option": (task_with(options=["only"]), "options"),
    "suite 27 options": (task_with(options=[str(i) for i in range(27)]), "options"),
    "suite options not a list": (task_with(options="a, b"), "options"),
    "suite unknown task type": (task_with(type="essay"), "type"),
    "suite id a number": (task_with(id=7), "id"),
    "suite missing file": (command("run", "--suite", "TMP/none.jsonl", "--base-url", NOBODY, "--model", "m"), "none"),
    # Metrics files given to rescore.
    "metrics not JSON": (metrics_of('{"tasks": [}'), "given.json"),
    "metrics truncated": (metrics_of('{"tasks": [{"task_id": "t1", "raw_content": "FINAL: A"'), "given.json"),
    "metrics not UTF-8": (metrics_of(b'{"tasks": ["\xff"]}'), "given.json"),
    "metrics a number": (metrics_of("42"), "given.json"),
    "metrics tasks not a list": (metrics_of('{"tasks": {"t1": {}}}'), "tasks"),
    "metrics record not an object": (metrics_of('{"tasks": ["FINAL: A"]}'), "given.json"),
    "metrics raw_content a number": (
        metrics_of(json.dumps({"tasks": [{**legacy_record("t1", "x"), "raw_content": 5}]})),
        "raw_content",
    ),
    "metrics missing file": (command("rescore", "TMP/none.json", "-o", "TMP/out.json"), "none.json"),
    "rescore onto its own input": (rescore_onto_itself, "m.json"),
    # Lanes files.
    "lanes not TOML": (lanes_text("[lanes.L\nmodel = 1\n"), "lanes.toml"),
    "lanes without lanes": (lanes_text("[defaults]\nmodel = 'm'\n"), "lanes.toml"),
    "lane without base_url": (lanes_text('[lanes.L]\nmodel = "m"\nsuite = "SUITE"\n'), "base_url"),
    "lane with an unknown setting": (lanes_text(LANE + "temprature = 0.5\n"), "temprature"),
    "lane setting of the wrong type": (lanes_text(LANE + 'max_tokens = "many"\n'), "max_tokens"),
    "lane concurrency 0": (lanes_text(LANE + "concurrency = 0\n"), "concurrency"),
    "lane base_url without a scheme": (lanes_text(LANE.replace("http://", "")), "base_url"),
    "run --lane not in the file": (
        lambda tmp: ["run", "--config", lanes_text(LANE)(tmp)[1], "--lane", "nope", "--out", str(tmp / "r")],
        "nope",
    ),
    # Flags.
    "--concurrency 0": (lambda tmp: [*run_args(tmp, tmp / "r"), "--concurrency", "0"], "concurrency"),
    "--max-tokens 0": (lambda tmp: [*run_args(tmp, tmp / "r"), "--max-tokens", "0"], "max-tokens"),
    "--conflict-policy unknown": (lambda tmp: [*run_args(tmp, tmp / "r"), "--conflict-policy", "first"], "first"),
    "--base-url not a URL": (
        lambda tmp: ["run", "--suite", str(suite(tmp)), "--base-url", "localhost:8000", "--model", "m"],
        "base",
    ),
    "--out under /proc": (lambda tmp: run_args(tmp, Path("/proc/ocllm-run")), "/proc/ocllm-run"),
    "report of a missing run": (command("report", "TMP/nothing", "-o", "TMP/rep"), "nothing"),
    "compare with a missing run": (command("compare", "TMP/a", "TMP/b"), "TMP/a".replace("TMP/", "")),
    "matrix-report of an empty folder": (command("matrix-report", "TMP", "-o", "TMP/rep"), "run director"),
    "nested metrics file": (nested_metrics, "nested too deeply"),
    "nested suite line": (nested_suite, "nested too deeply"),
    "nested lanes file": (nested_lanes, "nested too deeply"),
    "negative max_tokens in a lanes file": (lanes_with("max_tokens = -5"), "max_tokens must be at least 1"),
    "an empty server command": (lanes_with('server = { command = "" }'), "server.command is empty"),
    "an unclosed quote in a server command": (
        lanes_with('server = { command = "vllm serve \'x" }'),
        "server.command cannot be split",
    ),
    "an unknown server setting": (lanes_with('server = { command = "x", ready_in = 5 }'), "ready_in"),
    "a zero ready_timeout_s": (
        lanes_with('server = { command = "x", ready_timeout_s = 0 }'),
        "server.ready_timeout_s must be more than 0",
    ),
    "a bad shard": (lambda tmp: [*run_args(tmp, tmp / "r"), "--shard", "4/4"], "K must be 0 to N-1"),
    "merge of a folder that is no run": (
        lambda tmp: ["merge", str(tmp), "-o", str(tmp / "m")],
        "not a run directory",
    ),
    "negative temperature in a lanes file": (lanes_with("temperature = -1.0"), "temperature must be at least 0"),
    "top_p above 1": (lanes_with("top_p = 1.5"), "top_p must be more than 0 and at most 1"),
    "report into a file": (output_is_a_file("report"), "exists and is not a folder"),
    "compare into a file": (output_is_a_file("compare"), "exists and is not a folder"),
    "matrix-report into a file": (output_is_a_file("matrix-report"), "exists and is not a folder"),
    "--out under a file": (out_under_a_file, "is a file, not a folder"),
    "--out someone else's folder": (out_is_someone_elses_folder, "is not an ocllm run directory"),
    "samples.jsonl a folder on --resume": (samples_is_a_folder, "is not a file"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_bad_input_is_one_line_and_exit_2(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build, message = CASES[case]
    args = build(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], err
    assert "cannot reach" not in err  # found before the server was asked
    assert {p: p.read_bytes() for p in before} == before  # nothing of the user's was changed


def test_an_api_key_with_a_line_break_is_refused_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OCLLM_TEST_KEY", "sk-secret\r\nX-Injected: 1")
    assert main([*run_args(tmp_path, tmp_path / "r"), "--api-key-env", "OCLLM_TEST_KEY"]) == 2
    err = capsys.readouterr().err
    assert "OCLLM_TEST_KEY holds a line break" in err and "sk-secret" not in err


def test_a_suite_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    from ocllm.suites import load_suite

    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(TASK) + "\n").encode())
    assert [t.id for t in load_suite(str(path)).tasks] == ["t1"]


def test_the_audit_shows_markup_in_names_as_text(tmp_path: Path) -> None:
    record = legacy_record("t<1>", "FINAL: B", category="<script>alert(1)</script>", correct=False)
    metrics = write_json(tmp_path / "m.json", {"tasks": [record]})
    assert main(["rescore", str(metrics), "-o", str(tmp_path / "o.json"), "--report", str(tmp_path / "a.md")]) == 0
    audit = (tmp_path / "a.md").read_text()
    assert "<script>" not in audit and "&lt;script&gt;" in audit


def test_sigterm_ends_a_run_as_ctrl_c_does(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from faultserver import FaultServer, Hang, Reply

    out = tmp_path / "r"
    models = Reply(json={"object": "list", "data": [{"id": "m", "object": "model"}]})
    with FaultServer() as server:
        server.script(models, then=Hang(30.0))  # every chat request hangs
        args = [sys.executable, "-m", "ocllm", *run_args(tmp_path, out)]
        args[args.index(NOBODY)] = server.base_url
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not (out / "manifest.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "--resume" in err
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"


def test_the_api_key_is_never_kept_in_any_spelling_a_server_echoes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that echoes the Authorization header JSON-escaped or URL-encoded must not put the key into
    the run's files or the console (issue 11)."""
    from faultserver import FaultServer, Reply

    key = "sk-secret/XYZü+1"
    monkeypatch.setenv("OCLLM_TEST_KEY", key)
    spellings = [
        json.dumps(key)[1:-1],  # sk-secret/XYZ\u00fc+1
        json.dumps(key)[1:-1].replace("/", "\\/"),
        json.dumps(key, ensure_ascii=False)[1:-1].replace("/", "\\/"),
        "sk-secret%2FXYZ%C3%BC%2B1",
        "sk-secret%2fXYZ%c3%bc%2b1",
        "sk-secret%2FXYZ%C3%BC+1",
    ]
    echo = '{"error": {"message": "bad auth: ' + " | ".join(f"Bearer {s}" for s in spellings) + '"}}'
    out = tmp_path / "r"
    models = Reply(json={"object": "list", "data": [{"id": "m", "object": "model"}]})
    with FaultServer() as server:
        server.script(models, then=Reply(status=400, body=echo))
        args = run_args(tmp_path, out, "--api-key-env", "OCLLM_TEST_KEY", "--model", "other")
        args[args.index(NOBODY)] = server.base_url
        assert main(args) == 2  # an unlisted model: the trial request is refused, quoting the server
    printed = capsys.readouterr()
    with FaultServer() as server:
        server.script(models, models, then=Reply(status=400, body=echo))
        args = run_args(tmp_path, out, "--api-key-env", "OCLLM_TEST_KEY", "--model", "m")
        args[args.index(NOBODY)] = server.base_url
        assert main(args) == 1  # every request failed, each quoting the server
    printed2 = capsys.readouterr()
    written = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    everything = printed.out + printed.err + printed2.out + printed2.err + written
    assert "[redacted]" in everything
    for spelling in [key, *spellings]:
        assert spelling not in everything, spelling
    assert "XYZ" not in everything.replace("[redacted]", "")


def test_evidence_stays_bounded_on_any_output() -> None:
    """A megabyte of format examples makes tens of thousands of statements: the decision weighs them all,
    the evidence keeps the first and last of each region and the deciding one, and counts the rest."""
    from conftest import mcq

    from ocllm.scoring.mcq import EVIDENCE_KEPT

    content = "FINAL: A or FINAL: B. " * 3000 + "\nFINAL: C"
    reasoning = "Maybe the answer is A. " * 2000
    d = mcq(content, reasoning, answer="C")
    assert (d.extracted_final_answer, d.ambiguity) == ("C", "conflicting_final_answers")  # all were weighed
    assert len(d.candidates) <= 4 * EVIDENCE_KEPT + 1
    assert d.candidates[d.decided_by].text == "FINAL: C"
    assert d.reasoning_statements == 2000
    assert d.candidates_left_out == 3000 * 2 + 1 + 2000 - len(d.candidates)


def test_markup_in_ids_categories_and_text_is_printed_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[/bold]` in a category or `[red]x` in a task id is text: no command crashes on it or hides it (issue 11)."""
    from faultserver import FaultServer, Reply

    hostile = [
        {**TASK, "id": "[red]x", "category": "[/bold]", "question": "[/bold] q [link=x]"},
        {**TASK, "id": "t2", "category": "[bold]cat"},
    ]
    suite_path = tmp_path / "s.jsonl"
    suite_path.write_text("".join(json.dumps(t) + "\n" for t in hostile))
    models = Reply(json={"object": "list", "data": [{"id": "m", "object": "model"}]})
    answer = {"index": 0, "message": {"role": "assistant", "content": "FINAL: A"}, "finish_reason": "stop"}
    folder = tmp_path / "runs"
    with FaultServer() as server:
        server.script(
            models, then=Reply(json={"id": "x", "object": "chat.completion", "model": "m", "choices": [answer]})
        )
        for lane in ("A_baseline", "B"):
            args = ["run", "--suite", str(suite_path), "--base-url", server.base_url, "--model", "m"]
            assert main([*args, "--lane", lane, "--out", str(folder / lane)]) == 0
    assert main(["rescore", str(folder / "B"), "-o", str(tmp_path / "r.json")]) == 0
    assert main(["report", str(folder / "B")]) == 0
    assert main(["compare", str(folder / "A_baseline"), str(folder / "B"), "-o", str(tmp_path / "c")]) == 0
    assert main(["matrix-report", str(folder)]) == 0
    printed = capsys.readouterr().out
    assert "[/bold]" in printed and "[bold]cat" in printed


# --- issue 19, items 4 and 7 (helper `servers`): what the kernel cannot take in a [server] table, a suite that
# cannot be looked at, and every number outside its documented range (bounds.py, docs/lanes.md).


def suite_in_a_locked_folder(tmp: Path) -> list[str]:
    locked = tmp / "locked"
    locked.mkdir()
    (locked / "s.jsonl").write_text(json.dumps(TASK) + "\n")
    locked.chmod(0)  # not even its files' names can be looked up: Path.exists() raises PermissionError
    return ["run", "--suite", str(locked / "s.jsonl"), "--base-url", NOBODY, "--model", "m", "--out", str(tmp / "r")]


def suite_name_too_long(tmp: Path) -> list[str]:
    # The same path as a locked folder (the look-up itself fails), reached as root too: ENAMETOOLONG.
    name = str(tmp / ("s" * 300 + ".jsonl"))
    return ["run", "--suite", name, "--base-url", NOBODY, "--model", "m", "--out", str(tmp / "r")]


def server_table(setting: str) -> Callable[[Path], list[str]]:
    return lanes_with(f"[lanes.L.server]\n{setting}")


ITEM_19_CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "a server env name with '='": (
        server_table('command = "x"\nenv = { "A=B" = "1" }'),
        "server.env name 'A=B': a name must be non-empty, without '=' or a NUL byte",
    ),
    "an empty server env name": (server_table('command = "x"\nenv = { "" = "1" }'), "server.env name ''"),
    "a server env value with a NUL byte": (
        server_table('command = "x"\nenv = { A = "1\\u0000" }'),
        "server.env A: the value holds a NUL byte",
    ),
    "a server command argument with a NUL byte": (
        server_table('command = ["x", "a\\u0000b"]'),
        "server.command holds a NUL byte",
    ),
    "a server command string with a NUL byte": (
        server_table('command = "x a\\u0000b"'),
        "server.command holds a NUL byte",
    ),
    "a server cwd with a NUL byte": (server_table('command = "x"\ncwd = "a\\u0000"'), "server.cwd holds a NUL byte"),
    "a suite whose name is too long to look up": (suite_name_too_long, "cannot read"),
    "ready_timeout_s inf": (
        server_table('command = "x"\nready_timeout_s = inf'),
        "server.ready_timeout_s must be more than 0 and at most 86400 (got inf)",
    ),
    "ready_timeout_s nan": (server_table('command = "x"\nready_timeout_s = nan'), "server.ready_timeout_s must be"),
    "stop_timeout_s a year": (
        server_table('command = "x"\nstop_timeout_s = 31536000'),
        "server.stop_timeout_s must be more than 0 and at most 3600 (got 31536000",
    ),
    "max_attempts 1e20": (
        lanes_with("max_attempts = 100000000000000000000"),
        "max_attempts must be at least 1 and at most 100 (got 100000000000000000000)",
    ),
    "concurrency a million": (lanes_with("concurrency = 1000000"), "concurrency must be at least 1 and at most 1024"),
    "max_tokens beyond any context": (lanes_with("max_tokens = 99999999999"), "max_tokens must be at least 1"),
    "timeout_s inf": (lanes_with("timeout_s = inf"), "timeout_s must be more than 0 and at most 86400 (got inf)"),
    "retry_budget_s nan": (lanes_with("retry_budget_s = nan"), "retry_budget_s must be at least 0"),
    "temperature inf": (lanes_with("temperature = inf"), "temperature must be at least 0 and at most 10 (got inf)"),
    "a negative seed": (lanes_with("seed = -1"), "seed must be at least 0 and at most 4294967295 (got -1)"),
    "a seed beyond 32 bits": (lanes_with("seed = 4294967296"), "seed must be at least 0 and at most 4294967295"),
    "extra_body with infinity": (
        lanes_with("extra_body = { top_k = 40, penalties = { presence = inf } }"),
        "extra_body.penalties.presence must be a finite number (got inf)",
    ),
    "extra_body with NaN in a list": (lanes_with("extra_body = { x = [1, nan] }"), "extra_body.x[1] must be a finite"),
    "--concurrency beyond its range": (
        lambda tmp: [*run_args(tmp, tmp / "r"), "--concurrency", "5000"],
        "concurrency must be at least 1 and at most 1024 (got 5000)",
    ),
    "--max-tokens beyond its range": (
        lambda tmp: [*run_args(tmp, tmp / "r"), "--max-tokens", "99999999999"],
        "max_tokens must be at least 1 and at most 10000000",
    ),
    "--shard with N beyond its range": (
        lambda tmp: [*run_args(tmp, tmp / "r"), "--shard", "1/99999999999999999999999"],
        "N, the number of shards, must be at least 1 and at most 10000",
    ),
    "--limit beyond its range": (
        lambda tmp: ["import", "mmlu", str(tmp), "-o", str(tmp / "s.jsonl"), "--limit", "100000000000"],
        "--limit must be at least 1 and at most 10000000",
    ),
    "import --seed negative": (
        lambda tmp: ["import", "mmlu", str(tmp), "-o", str(tmp / "s.jsonl"), "--seed", "-3"],
        "--seed must be at least 0",
    ),
    "serve-sim --latency nan": (lambda tmp: ["serve-sim", "--latency", "nan"], "--latency must be at least 0"),
    "serve-sim --latency inf": (lambda tmp: ["serve-sim", "--latency", "inf"], "and at most 3600 (got inf)"),
    "serve-sim --truncation-rate nan": (
        lambda tmp: ["serve-sim", "--truncation-rate", "nan"],
        "--truncation-rate must be at least 0 and at most 1 (got nan)",
    ),
    "serve-sim --model accuracy nan": (
        lambda tmp: ["serve-sim", "--model", "a=nan"],
        "--model NAME=ACCURACY must be at least 0 and at most 1 (got nan)",
    ),
}


@pytest.mark.parametrize("case", list(ITEM_19_CASES), ids=list(ITEM_19_CASES))
def test_item_19_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, message = ITEM_19_CASES[case]
    args = build(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], err
    assert not (tmp_path / "r").exists()  # refused before a run folder was made


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_a_suite_in_a_folder_the_user_may_not_read_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = suite_in_a_locked_folder(tmp_path)
    try:
        assert main(args) == 2
    finally:
        (tmp_path / "locked").chmod(0o755)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "s.jsonl: cannot read (Permission denied)" in err[0], err
