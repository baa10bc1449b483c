"""Bad inputs from a hostile world (issue 11): each ends in one line on stderr and exit code 2, never a
traceback, and is found before any server is asked. Files are real, the CLI is the real entry point."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import legacy_record, write_json
from helpers import CPU_HEAVY
from ports import refused_port

from ocllm.cli import main

NOBODY = f"http://127.0.0.1:{refused_port()}/v1"  # nothing listens there: a check that asks the server would say so
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


def writing_to(command: str, tmp: Path, metrics: Path, out: Path) -> list[str]:
    """`report` or `compare` of a metrics file, or `matrix-report` of a folder of one run, with `-o out`."""
    if command == "report":
        return ["report", str(metrics), "-o", str(out)]
    if command == "compare":
        return ["compare", str(metrics), str(metrics), "-o", str(out)]
    folder = tmp / "runs"
    (folder / "A").mkdir(parents=True)
    (folder / "A" / "suite.jsonl").write_text(json.dumps(TASK) + "\n")
    (folder / "A" / "samples.jsonl").write_text(json.dumps({"task_id": "t1", "content": "FINAL: A"}) + "\n")
    return ["matrix-report", str(folder), "-o", str(out)]


def output_is_a_file(command: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        metrics = write_json(tmp / "m.json", {"tasks": [legacy_record("t1", "FINAL: B")]})
        (tmp / "taken").write_text("mine")
        return writing_to(command, tmp, metrics, tmp / "taken")

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


@pytest.mark.slow  # ocllm in a process, signalled
def test_sigterm_ends_a_run_as_ctrl_c_does(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from faultserver import FaultServer, Hang, Reply
    from helpers import BACKSTOP_S, wait_until

    out = tmp_path / "r"
    models = Reply(json={"object": "list", "data": [{"id": "m", "object": "model"}]})
    with FaultServer() as server:
        server.script(models, then=Hang(600))  # every chat request hangs, until the server closes
        args = [sys.executable, "-m", "ocllm", *run_args(tmp_path, out)]
        args[args.index(NOBODY)] = server.base_url
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert wait_until(lambda: (out / "manifest.json").exists() or proc.poll() is not None)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=BACKSTOP_S)
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

    from ocllm.scoring.evidence import EVIDENCE_KEPT

    content = "FINAL: A or FINAL: B. " * 3000 + "\nFINAL: C"
    reasoning = "Maybe the answer is A. " * 2000
    d = mcq(content, reasoning, answer="C")
    # All were weighed: three letters over 6,001 statements are no answer (rule 3, conflict_many).
    assert (d.extracted_final_answer, d.ambiguity, d.rule) == (None, "conflicting_final_answers", "conflict_many")
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


# --- Issue 19, items 2, 5 and 6 (outputs): an output never replaces an input, nor a file ocllm did not write
# (without --force); merge refuses torn, short and foreign shards; nothing is written before every input is
# checked. Each case leaves every file as it was: no byte changed, no file added or removed.

PRO_ROW = {"question_id": 1, "question": "Pick.", "options": ["x", "y", "z"], "answer": "B", "answer_index": 1,
           "cot_content": "", "category": "math", "src": "s"}  # fmt: skip


def dataset(tmp: Path) -> Path:
    """An MMLU-Pro JSONL file inside a folder data/, as `import mmlu-pro data` reads it."""
    (tmp / "data").mkdir(exist_ok=True)
    path = tmp / "data" / "test.jsonl"
    path.write_text(json.dumps(PRO_ROW) + "\n" + json.dumps({**PRO_ROW, "question_id": 2}) + "\n")
    return path


def import_onto(spelling: str, *extra: str) -> Callable[[Path], list[str]]:
    """`import mmlu-pro data -o X`, X reaching the dataset file data/test.jsonl by `spelling`."""

    def build(tmp: Path) -> list[str]:
        source = dataset(tmp)
        if spelling == "symlink":
            (tmp / "link.jsonl").symlink_to(source)
            target = tmp / "link.jsonl"
        elif spelling == "hard link":
            (tmp / "hard.jsonl").hardlink_to(source)
            target = tmp / "hard.jsonl"
        else:
            target = Path(str(tmp) + "/" + spelling)
        return ["import", "mmlu-pro", str(tmp / "data"), "-o", str(target), *extra]

    return build


def users_file(tmp: Path, name: str) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("my own notes, not ocllm's\n")
    return path


def old_metrics(tmp: Path) -> Path:
    return write_json(tmp / "m.json", {"tasks": [legacy_record("t1", "FINAL: B")]})


def mmlu_pro_results(tmp: Path) -> Path:
    record = {**PRO_ROW, "pred": "B", "response": "The answer is (B)."}
    (tmp / "results").mkdir(exist_ok=True)
    return write_json(tmp / "results" / "math_result.json", [record])


def rescore_args(tmp: Path) -> list[str]:
    return ["rescore", str(old_metrics(tmp)), "-o", str(tmp / "o.json")]


def a_run(tmp: Path) -> Path:
    """A run directory that ocllm wrote (its suite copy canonical, its metrics a metrics document)."""
    run = tmp / "runs" / "x"
    run.mkdir(parents=True)
    (run / "suite.jsonl").write_text(json.dumps(TASK, sort_keys=True, separators=(",", ":")) + "\n")
    (run / "samples.jsonl").write_text(json.dumps({"task_id": "t1", "content": "FINAL: A"}) + "\n")
    (run / "metrics.json").write_text('{\n  "format": "ocllm-metrics/1",\n  "tasks": []\n}\n')
    return run


def rescore_hard_link_onto_input(tmp: Path) -> list[str]:
    (tmp / "alias.json").hardlink_to(old_metrics(tmp))
    return ["rescore", str(tmp / "m.json"), "-o", str(tmp / "alias.json"), "--force"]


def rescore_from_onto_a_file_it_reads(tmp: Path) -> list[str]:
    results = mmlu_pro_results(tmp)
    (tmp / "link.json").symlink_to(results)
    return ["rescore", "--from", "mmlu-pro", str(tmp / "results"), "-o", str(tmp / "link.json"), "--force"]


def into_a_folder_holding(command_name: str, file_name: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        metrics = old_metrics(tmp)
        users_file(tmp, f"out/{file_name}")
        return writing_to(command_name, tmp, metrics, tmp / "out")

    return build


OUTPUT_CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "import -o its own input": (import_onto("data/test.jsonl"), "over its own input"),
    "import -o its input spelled data/../data": (import_onto("data/../data/test.jsonl"), "over its own input"),
    "import -o its input spelled ./data": (import_onto("./data/test.jsonl"), "over its own input"),
    "import -o a symlink to its input": (import_onto("symlink"), "over its own input"),
    "import -o a hard link to its input": (import_onto("hard link"), "over its own input"),
    "import -o its own input with --force": (import_onto("data/test.jsonl", "--force"), "over its own input"),
    "import -o a file of the user's": (
        lambda tmp: ["import", "mmlu-pro", str(dataset(tmp)), "-o", str(users_file(tmp, "notes.jsonl"))],
        "notes.jsonl exists and was not written by ocllm import; use --force to replace it",
    ),
    "rescore -o a file of the user's": (
        lambda tmp: ["rescore", str(old_metrics(tmp)), "-o", str(users_file(tmp, "notes.json"))],
        "notes.json exists and was not written by ocllm rescore; use --force",
    ),
    "rescore --from -o a file of the user's": (
        lambda tmp: ["rescore", "--from", "mmlu-pro", str(mmlu_pro_results(tmp)), "-o", str(users_file(tmp, "n.json"))],
        "n.json exists and was not written by ocllm rescore; use --force",
    ),
    "rescore --report over a file of the user's": (
        lambda tmp: [*rescore_args(tmp), "--report", str(users_file(tmp, "a.md"))],
        "a.md exists and was not written by ocllm rescore --report; use --force",
    ),
    "import -o the suite.jsonl of a run": (
        lambda tmp: ["import", "mmlu-pro", str(dataset(tmp)), "-o", str(a_run(tmp) / "suite.jsonl")],
        "suite.jsonl is part of the run directory",
    ),
    "rescore -o the metrics.json of another run": (
        lambda tmp: [*rescore_args(tmp)[:-1], str(a_run(tmp) / "metrics.json")],
        "metrics.json is part of the run directory",
    ),
    "rescore -o its input through a folder not yet made, with --force": (
        lambda tmp: [*rescore_args(tmp)[:-1], str(tmp / "nowhere" / ".." / "m.json"), "--force"],
        "over its own input",
    ),
    "rescore -o a hard link to its input with --force": (rescore_hard_link_onto_input, "over its own input"),
    "rescore --from -o a symlink to a file it reads, with --force": (
        rescore_from_onto_a_file_it_reads,
        "over its own input",
    ),
    "report into a folder holding the user's report.md": (
        into_a_folder_holding("report", "report.md"),
        "report.md exists and was not written by ocllm report; use --force",
    ),
    "compare into a folder holding the user's comparison.json": (
        into_a_folder_holding("compare", "comparison.json"),
        "comparison.json exists and was not written by ocllm compare; use --force",
    ),
    "matrix-report into a folder holding the user's matrix.html": (
        into_a_folder_holding("matrix-report", "matrix.html"),
        "matrix.html exists and was not written by ocllm matrix-report; use --force",
    ),
    "run --shard with no task in it": (
        lambda tmp: [*run_args(tmp, tmp / "r"), "--shard", "1/9999"],
        "no task of the suite falls in shard 1/9999",
    ),
    "run --shard with an N of 23 digits": (
        lambda tmp: [*run_args(tmp, tmp / "r"), "--shard", "1/99999999999999999999999"],
        "--shard",
    ),
    "matrix --shard with no task in it": (
        lambda tmp: [*lanes_text(LANE)(tmp), "--shard", "1/9999"],
        "no task of the suite falls in shard 1/9999",
    ),
}


@pytest.mark.parametrize("case", list(OUTPUT_CASES), ids=list(OUTPUT_CASES))
def test_an_output_never_replaces_what_it_must_not(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, message = OUTPUT_CASES[case]
    args = build(tmp_path)
    expect_refused(args, message, tmp_path, capsys)


def expect_refused(args: list[str], message: str, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One line, exit 2, and every file under `tmp` as it was: none changed, none added, none removed."""
    before = {p: p.read_bytes() for p in tmp.rglob("*") if p.is_file()}
    folders = {p for p in tmp.rglob("*") if p.is_dir()}
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], err
    assert "cannot reach" not in err
    assert {p: p.read_bytes() for p in tmp.rglob("*") if p.is_file()} == before
    assert {p for p in tmp.rglob("*") if p.is_dir()} == folders


@pytest.fixture(scope="module")
def shard_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both shards of the smoke suite, run against the simulator: s0 (6 tasks) and s1 (4 tasks)."""
    from ocllm.sim import SimConfig, SimServer

    folder = tmp_path_factory.mktemp("shards")
    with SimServer(SimConfig()) as sim:
        for k in range(2):
            args = ["run", "--suite", "smoke", "--base-url", sim.base_url, "--model", "sim-baseline"]
            assert main([*args, "--out", str(folder / f"s{k}"), "--shard", f"{k}/2"]) in (0, 1)
    return folder


def copied_shards(shard_runs: Path, tmp: Path) -> tuple[Path, Path]:
    import shutil

    for k in range(2):
        shutil.copytree(shard_runs / f"s{k}", tmp / f"s{k}")
    return tmp / "s0", tmp / "s1"


def edit_samples(path: Path, edit: Callable[[list[bytes]], list[bytes]]) -> None:
    samples = path / "samples.jsonl"
    samples.write_bytes(b"".join(edit(samples.read_bytes().splitlines(keepends=True))))


def edit_manifest(path: Path, edit: Callable[[dict[str, object]], None]) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    edit(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def foreign_line(lines: list[bytes]) -> list[bytes]:
    stranger = json.loads(lines[0])
    stranger["task_id"] = "not-in-this-shard"
    return [*lines, json.dumps(stranger).encode() + b"\n"]


def shard_of_count(count: int, index: int | None = None) -> Callable[[dict[str, object]], None]:
    def edit(manifest: dict[str, object]) -> None:
        shard = manifest["shard"]
        assert isinstance(shard, dict)
        shard["count"] = count
        if index is not None:
            shard["index"] = index

    return edit


def with_lane(**settings: object) -> Callable[[dict[str, object]], None]:
    def edit(manifest: dict[str, object]) -> None:
        lane = manifest["lane"]
        assert isinstance(lane, dict)
        lane.update(settings)

    return edit


def positions_beyond_the_suite(manifest: dict[str, object]) -> None:
    shard = manifest["shard"]
    assert isinstance(shard, dict)
    shard["positions"] = [p + 100 for p in shard["positions"]]


MergeDamage = tuple[Callable[[Path, Path], None], str]
MERGE_CASES: dict[str, MergeDamage] = {
    "merge of a shard with an empty samples.jsonl": (
        lambda s0, s1: (s1 / "samples.jsonl").write_bytes(b""),
        "s1: 4 of its 4 tasks have no sample",
    ),
    "merge of a shard whose samples.jsonl ends in a torn line": (
        lambda s0, s1: edit_samples(s1, lambda lines: [*lines[:-1], lines[-1][:40]]),
        "s1/samples.jsonl:4: not a whole sample line",
    ),
    "merge of a shard with a line of a task not its own": (
        lambda s0, s1: edit_samples(s0, foreign_line),
        "s0/samples.jsonl:7: task 'not-in-this-shard' is not one of the shard's tasks",
    ),
    "merge of a shard with a duplicated line": (
        lambda s0, s1: edit_samples(s0, lambda lines: [*lines, lines[2]]),
        "s0/samples.jsonl:7: a second sample of task",
    ),
    "merge of a short shard": (
        lambda s0, s1: edit_samples(s0, lambda lines: lines[:-2]),
        "s0: 2 of its 6 tasks have no sample",
    ),
    "merge of shards whose recorded lane settings are invalid": (
        lambda s0, s1: [edit_manifest(s, with_lane(max_tokens=-5)) for s in (s0, s1)] and None,
        "max_tokens must be at least 1",
    ),
    "merge of shards recording count 0": (
        lambda s0, s1: [edit_manifest(s, shard_of_count(0)) for s in (s0, s1)] and None,
        "shard 0/0",
    ),
    "merge of a shard whose index is its count": (
        lambda s0, s1: edit_manifest(s1, shard_of_count(2, 2)),
        "shard 2/2",
    ),
    "merge of a shard whose index is negative": (
        lambda s0, s1: edit_manifest(s1, shard_of_count(2, -1)),
        "shard -1/2",
    ),
    "merge of a shard whose tasks stand beyond the suite": (
        lambda s0, s1: edit_manifest(s1, positions_beyond_the_suite),
        "s1: its manifest places tasks at positions beyond the suite's 10",
    ),
    "merge of a shard holding tasks of another shard": (
        lambda s0, s1: edit_manifest(s1, shard_of_count(2, 0)) or edit_manifest(s0, shard_of_count(2, 1)),
        "does not fall in shard",
    ),
}


@pytest.mark.parametrize("case", list(MERGE_CASES), ids=list(MERGE_CASES))
def test_a_bad_shard_is_refused_before_merge_writes_anything(
    case: str, shard_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage, message = MERGE_CASES[case]
    s0, s1 = copied_shards(shard_runs, tmp_path)
    damage(s0, s1)
    capsys.readouterr()
    expect_refused(["merge", str(s0), str(s1), "-o", str(tmp_path / "merged")], message, tmp_path, capsys)
    assert not (tmp_path / "merged").exists()


def test_merge_refuses_to_replace_a_run_or_a_shard(
    shard_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s0, s1 = copied_shards(shard_runs, tmp_path)
    capsys.readouterr()
    # An ordinary run (not a merge) in -o: its samples are work that cannot be had again without --force.
    import shutil

    shutil.copytree(shard_runs / "s0", tmp_path / "run")
    edit_manifest(tmp_path / "run", lambda m: m.update(shard=None))
    args = ["merge", str(s0), str(s1), "-o"]
    not_a_merge = "holds a run that is not a merge; use --force to replace it"
    expect_refused([*args, str(tmp_path / "run")], not_a_merge, tmp_path, capsys)
    (tmp_path / "link").symlink_to(s1)
    for out in (str(tmp_path / "link"), str(tmp_path / "s1" / ".." / "s0")):
        expect_refused([*args, out, "--force"], "one of the shards it merges", tmp_path, capsys)

# --- Zip bombs in inspect_ai logs (issue 19, item 3) ---------------------------------------------------------
# A .eval of a megabyte or two whose header.json or one sample inflates to 1 GiB (tests/zip_bombs.py): refused
# in one line naming the file, the member and the bound, as soon as the bytes inflated pass the bound (never
# trusting the size the zip declares), with the memory of the bound, not of the member: measured in a child.

_MEASURED = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kilobytes on Linux
print(json.dumps({"code": done.returncode, "stderr": done.stderr, "peak_mb": peak_mb}))
"""
MEMORY_BOUND_MB = 300  # generous: the bounds are 32 MB (header) and 128 MB (a sample)


@pytest.mark.parametrize("method", [8, 93], ids=["deflate", "zstd"])
@pytest.mark.parametrize(
    ("member", "declared"),
    [("header.json", None), ("samples/q2_epoch_1.json", None), ("samples/q2_epoch_1.json", 1000)],
    ids=["header", "sample", "sample declaring 1000 bytes"],
)
@pytest.mark.slow  # ocllm in a process, memory measured
@CPU_HEAVY  # a gibibyte inflated, in part
def test_an_inspect_zip_bomb_is_refused_in_one_line_within_bounded_memory(
    member: str, declared: int | None, method: int, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from zip_bombs import bomb_log

    bomb = bomb_log(tmp_path / "bomb.eval", member, method, 1 << 30, declared)
    assert bomb.stat().st_size < 2 << 20  # a megabyte or two on disk
    out = tmp_path / "out.json"
    command = [sys.executable, "-m", "ocllm", "rescore", "--from", "inspect", str(bomb), "-o", str(out)]
    child = subprocess.run([sys.executable, "-c", _MEASURED, *command], capture_output=True, text=True, check=True)
    measured = json.loads(child.stdout)
    lines = [line for line in measured["stderr"].splitlines() if line.strip()]
    assert measured["code"] == 2 and len(lines) == 1, measured["stderr"][-2000:]
    assert lines[0].startswith("ocllm: error: ") and str(bomb) in lines[0] and member in lines[0], lines[0]
    if declared is None:
        assert ("32 MB" if member == "header.json" else "128 MB") in lines[0], lines[0]
    elif method == 93:  # zipfile itself stops a deflated member at its declared size (then its CRC fails)
        assert "more than the 1000 bytes the zip declares" in lines[0], lines[0]
    assert measured["peak_mb"] < MEMORY_BOUND_MB, measured
    assert not out.exists()


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
    "serve-sim --port of 400 digits": (
        lambda tmp: ["serve-sim", "--port", "9" * 400],
        "--port must be at least",
    ),
    "max_tokens of 400 digits in a lanes file": (lanes_with("max_tokens = " + "9" * 400), "max_tokens"),
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


# --- issue 20: math tasks, in a suite, an old-harness record and a lane ----------------------------------------

MATH_TASK = {"id": "m", "type": "math", "question": "q", "answer": "3", "category": "c"}
MATH_RECORD = {"task_id": "m", "task_type": "math", "raw_content": "\\boxed{3}", "expected_answer": "3"}
ISSUE_20_CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "math task without a gold": (
        suite_of(json.dumps({k: v for k, v in MATH_TASK.items() if k != "answer"}) + "\n"),
        "field 'answer': a math task needs its gold answer as text",
    ),
    "math task with an empty gold": (
        suite_of(json.dumps({**MATH_TASK, "answer": "  "}) + "\n"),
        "field 'answer': a math task needs its gold answer",
    ),
    "math task with a list as gold": (
        suite_of(json.dumps({**MATH_TASK, "answer": [3]}) + "\n"),
        "field 'answer': a math task needs its gold answer",
    ),
    "math tolerance of 5": (
        suite_of(json.dumps({**MATH_TASK, "tolerance": 5}) + "\n"),
        "field 'tolerance': 5 is not a relative tolerance between 0 and 1",
    ),
    "math tolerance as text": (
        suite_of(json.dumps({**MATH_TASK, "tolerance": "1%"}) + "\n"),
        "field 'tolerance': '1%' is not a number",
    ),
    "a task type nobody registered": (
        suite_of(json.dumps({**MATH_TASK, "type": "essay"}) + "\n"),
        "field 'type': 'essay' is not one of mcq, required_substrings, math",
    ),
    "a task type that is not text": (suite_of(json.dumps({**MATH_TASK, "type": ["math"]}) + "\n"), "field 'type'"),
    "old-harness math record without expected_answer": (
        metrics_of(json.dumps({"tasks": [{k: v for k, v in MATH_RECORD.items() if k != "expected_answer"}]})),
        "task 'm' is a math task without an expected_answer",
    ),
    "old-harness math record with a negative tolerance": (
        metrics_of(json.dumps({"tasks": [{**MATH_RECORD, "tolerance": -0.1}]})),
        "task 'm' has a tolerance that is not a relative tolerance between 0 and 1",
    ),
    "old-harness record of an unknown task type": (
        metrics_of(json.dumps({"tasks": [{**MATH_RECORD, "task_type": "essay"}]})),
        "has task_type 'essay'; expected one of mcq, required_substrings, math",
    ),
    "math_template without the question": (lanes_with('math_template = "Box it."'), "math_template lacks {question}"),
}


@pytest.mark.parametrize("case", list(ISSUE_20_CASES), ids=list(ISSUE_20_CASES))
def test_issue_20_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, message = ISSUE_20_CASES[case]
    assert main(build(tmp_path)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], lines
    assert not (tmp_path / "r").exists() and not (tmp_path / "out.json").exists()


# --- issue 21, repeats (other tools' repeated samples; a record's `sample` read back) ----------------------


def inspect_json_of(epoch: object) -> Callable[[Path], list[str]]:
    """A rescore --from inspect of a .json log whose one sample has epoch `epoch`."""

    def build(tmp: Path) -> list[str]:
        sample = {"id": "q1", "epoch": epoch, "input": "Which?", "choices": ["a", "b"], "target": "A",
                  "output": {"choices": [{"message": {"content": "ANSWER: A"}}]}}  # fmt: skip
        path = tmp / "log.json"
        path.write_text(json.dumps({"eval": {"task": "t", "config": {"epochs": 2}}, "samples": [sample]}))
        return ["rescore", "--from", "inspect", str(path), "-o", str(tmp / "out.json")]

    return build


REPEATS_RECORD = {"task_id": "q", "task_type": "mcq", "options": ["a", "b"], "expected_answer": "A",
                  "raw_content": "ANSWER: A"}  # fmt: skip
ISSUE_21_REPEATS_CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "a record whose sample is negative": (
        metrics_of(json.dumps({"tasks": [{**REPEATS_RECORD, "sample": -1}]})),
        "task 'q' has a sample that is not a whole number from 0",
    ),
    "a record whose sample is text": (
        metrics_of(json.dumps({"tasks": [{**REPEATS_RECORD, "sample": "1"}]})),
        "task 'q' has a sample that is not a whole number from 0",
    ),
    "one sample of a task given twice": (
        metrics_of(json.dumps({"tasks": [{**REPEATS_RECORD, "sample": 1}, {**REPEATS_RECORD, "sample": 1}]})),
        "task 'q' sample 1 appears twice",
    ),
    "an inspect epoch of 0": (inspect_json_of(0), "epoch 0 is not an inspect_ai epoch (a whole number from 1)"),
    "an inspect epoch as text": (inspect_json_of("2"), "epoch '2' is not an inspect_ai epoch"),
}


@pytest.mark.parametrize("case", list(ISSUE_21_REPEATS_CASES), ids=list(ISSUE_21_REPEATS_CASES))
def test_issue_21_repeats_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, message = ISSUE_21_REPEATS_CASES[case]
    assert main(build(tmp_path)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], lines
    assert not (tmp_path / "out.json").exists()


# --- issue 21: samples per task -------------------------------------------------------------------------------


def matrix_with_samples(k: str) -> Callable[[Path], list[str]]:
    lanes = lanes_text(f'[lanes.L]\nbase_url = "{NOBODY}"\nmodel = "m"\nsuite = "SUITE"\n')
    return lambda tmp: [*lanes(tmp), "--samples", k]


ISSUE_21_SAMPLES_CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "--samples 0": (lambda tmp: run_args(tmp, tmp / "r", "--samples", "0"), "--samples must be at least 1"),
    "--samples past the range": (
        lambda tmp: run_args(tmp, tmp / "r", "--samples", "1001"), "--samples must be at least 1 and at most 1000"
    ),
    "--samples that is no number": (lambda tmp: run_args(tmp, tmp / "r", "--samples", "many"), "is not an integer"),
    "samples_per_task 0 in a lanes file": (lanes_with("samples_per_task = 0"), "samples_per_task must be at least 1"),
    "a last sample's seed past 32 bits": (
        lanes_with("seed = 4294967295\nsamples_per_task = 2"), "seed + samples_per_task - 1 must be at most 4294967295"
    ),
    "matrix --samples 0": (matrix_with_samples("0"), "--samples must be at least 1"),
}


@pytest.mark.parametrize("case", list(ISSUE_21_SAMPLES_CASES), ids=list(ISSUE_21_SAMPLES_CASES))
def test_issue_21_samples_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, message = ISSUE_21_SAMPLES_CASES[case]
    assert main(build(tmp_path)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], lines
    assert not (tmp_path / "r").exists() and not (tmp_path / "m").exists()


# --- issue 23: ocllm import bfcl (its --answers files) ---------------------------------------------------------


def bfcl_import(tmp: Path, *flags: str) -> list[str]:
    question = {"id": "simple_0", "question": [[{"role": "user", "content": "Hi"}]],
                "function": [{"name": "f", "parameters": {"type": "dict", "properties": {}}}]}  # fmt: skip
    source = tmp / "BFCL_v3_simple.json"
    source.write_text(json.dumps(question) + "\n", encoding="utf-8")
    return ["import", "bfcl", str(source), "-o", str(tmp / "out.jsonl"), *flags]


ISSUE_23_BFCL_CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "--answers that does not exist": (
        lambda tmp: bfcl_import(tmp, "--answers", str(tmp / "nowhere")), "nowhere: no such file or folder"
    ),
    "--answers a folder without answers": (
        lambda tmp: bfcl_import(tmp, "--answers", str(tmp)), "BFCL_v3_simple.json: row 1: not a BFCL possible answer"
    ),
    "a question without --answers": (lambda tmp: bfcl_import(tmp), "needs its possible answer: give --answers"),
}


@pytest.mark.parametrize("case", list(ISSUE_23_BFCL_CASES), ids=list(ISSUE_23_BFCL_CASES))
def test_issue_23_bfcl_import_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, message = ISSUE_23_BFCL_CASES[case]
    assert main(build(tmp_path)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ocllm: error: ") and message in lines[0], lines
    assert not (tmp_path / "out.jsonl").exists()
