"""Managed servers (issue 14): lanes whose `[server]` table makes ocllm start the server, wait for it, share it
between consecutive lanes, and stop it. The managed command is the project's own simulator (`ocllm
serve-sim`), a real HTTP server in a real process group; `ocllm` runs in this process or as a child."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import BACKSTOP_S, wait_until
from ports import refused_port

from ocllm.cli import main
from ocllm.run.servers import something_answers

pytestmark = pytest.mark.slow  # managed servers: real processes started, killed and waited for

PYTHON = sys.executable


def sim_command(port: int, *extra: str) -> list[str]:
    return [PYTHON, "-m", "ocllm", "serve-sim", "--port", str(port), "--truncation-rate", "0", *extra]


def lanes_file(tmp: Path, port: int, lanes: dict[str, dict[str, Any]], server: dict[str, Any] | None) -> Path:
    """A lanes file in TOML, written from Python values (JSON's strings and lists are TOML's too)."""

    def value(v: Any) -> str:
        if isinstance(v, dict):  # an inline table
            return "{" + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + "}"
        return json.dumps(v)

    def table(values: dict[str, Any]) -> str:
        return "".join(f"{key} = {value(v)}\n" for key, v in values.items())

    text = f'[defaults]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "sim-baseline"\nsuite = "smoke"\n'
    if server is not None:
        text += "[defaults.server]\n" + table(server)
    for name, settings in lanes.items():
        own = settings.pop("server", None)
        text += f"[lanes.{name}]\n" + table(settings)
        if own is not None:
            text += f"[lanes.{name}.server]\n" + table(own)
    path = tmp / "lanes.toml"
    path.write_text(text)
    return path


def manifest(run: Path) -> dict[str, Any]:
    return json.loads((run / "manifest.json").read_text())


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A child of this process that exited but was not reaped yet is gone too (a zombie holds no port).
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] == "Z"


def test_consecutive_lanes_share_one_start_and_a_different_table_gets_its_own(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    server = {"command": sim_command(port), "ready_timeout_s": BACKSTOP_S}
    own = {"command": " ".join([*sim_command(port), "--seed", "7"]), "env": {"SIM_TOKEN": "do-not-record"}}
    config = lanes_file(tmp_path, port, {"a": {}, "b": {"temperature": 0.5}, "c": {"server": own}}, server)
    assert main(["matrix", str(config), "--out", str(tmp_path / "runs")]) == 0
    runs = {name: manifest(tmp_path / "runs" / name) for name in "abc"}
    assert runs["a"]["server"]["pid"] == runs["b"]["server"]["pid"] != runs["c"]["server"]["pid"]
    for name, m in runs.items():
        assert m["server"]["models"] == ["sim-baseline", "sim-reasoning"] and m["server"]["ready_at"]
        assert (tmp_path / "runs" / name / "server.log").is_file()
        assert gone(m["server"]["pid"])
    assert runs["c"]["server"]["env"] == ["SIM_TOKEN"]  # the names, never the values
    assert "do-not-record" not in (tmp_path / "runs" / "c" / "manifest.json").read_text()
    assert "ocllm simulator" in (tmp_path / "runs" / "a" / "server.log").read_text()
    assert not something_answers("127.0.0.1", port)  # no server outlives ocllm


def test_a_server_that_never_gets_ready_fails_its_lane_and_the_next_lane_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reserve_port: Callable[[], int]
) -> None:
    port, elsewhere = reserve_port(), reserve_port()
    # Serves, but not where the lane looks; and says where at once (a shell's echo, well within the 2 s however
    # loaded the machine: the simulator's own banner may come after the lane has given up).
    said = f"serving on 127.0.0.1:{elsewhere}"
    command = ["sh", "-c", f"echo {said}; exec {' '.join(sim_command(elsewhere))}"]
    never = {"command": command, "ready_timeout_s": 2}
    config = lanes_file(
        tmp_path, port, {"late": {"server": never}, "fine": {"server": {"command": sim_command(port)}}}, None
    )
    assert main(["matrix", str(config), "--out", str(tmp_path / "runs")]) == 1
    out = capsys.readouterr().out
    assert "lane 'late': the server was not ready after 2 s (ready_timeout_s); last lines of server.log:" in out
    assert said in out  # the log's last lines: where it listens
    assert not something_answers("127.0.0.1", elsewhere)  # stopped, not left running
    assert manifest(tmp_path / "runs" / "fine")["status"] == "finished"
    assert said in (tmp_path / "runs" / "late" / "server.log").read_text()


def test_a_server_that_exits_before_it_is_ready_fails_with_its_last_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = refused_port()  # the command never listens: nobody answers here
    crash = {"command": [PYTHON, "-c", "import sys; print('CUDA out of memory', flush=True); sys.exit(3)"]}
    config = lanes_file(tmp_path, port, {"oom": {"server": crash}}, None)
    assert main(["run", "--config", str(config), "--lane", "oom", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the server exited with code 3 before it was ready" in err[0]
    assert "CUDA out of memory" in err[0]


def test_a_taken_port_is_refused_and_its_process_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as someone_elses:
        someone_elses.bind(("127.0.0.1", 0))
        someone_elses.listen()
        port = someone_elses.getsockname()[1]
        config = lanes_file(tmp_path, port, {"a": {}}, {"command": sim_command(port)})
        assert main(["matrix", str(config), "--out", str(tmp_path / "runs")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"something already answers on 127.0.0.1:{port}" in err[0] and "--no-server" in err[0]
        assert something_answers("127.0.0.1", port)  # still there, untouched
    assert not (tmp_path / "runs" / "a" / "samples.jsonl").exists()


def test_no_server_runs_against_what_is_already_running(tmp_path: Path) -> None:
    # Started by the test, not managed: the simulator binds port 0 and says where it listens.
    with subprocess.Popen(sim_command(0), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as sim:
        try:
            port = _port_it_reports(sim)
            config = lanes_file(tmp_path, port, {"a": {}}, {"command": [PYTHON, "-c", "raise SystemExit(9)"]})
            args = ["run", "--config", str(config), "--lane", "a", "--out", str(tmp_path / "r"), "--no-server"]
            assert main(args) == 0
            assert manifest(tmp_path / "r")["server"] is None
        finally:
            sim.terminate()


def _port_it_reports(sim: subprocess.Popen[str]) -> int:
    """The port in the simulator's first line ("... at http://127.0.0.1:PORT/v1; ..."), printed once it is bound."""
    assert sim.stdout is not None
    line = sim.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
    assert found, f"the simulator did not start: {line!r}"
    return int(found.group(1))


def _start_matrix(config: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PYTHON, "-m", "ocllm", "matrix", str(config), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_samples(run: Path, count: int, proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The run's manifest, once `count` samples are on disk."""
    samples = run / "samples.jsonl"

    def written() -> bool:
        return samples.exists() and len(samples.read_text().splitlines()) >= count

    wait_until(lambda: written() or proc.poll() is not None)
    assert proc.poll() is None, proc.communicate()
    assert written(), "no samples"
    return manifest(run)


def test_a_server_killed_mid_lane_turns_the_rest_into_errors_and_the_next_lane_runs(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    slow = {"command": sim_command(port, "--latency", "0.3"), "ready_timeout_s": BACKSTOP_S}
    config = lanes_file(tmp_path, port, {"first": {"concurrency": 1}, "second": {}}, slow)
    out = tmp_path / "runs"
    proc = _start_matrix(config, out)
    started = _wait_for_samples(out / "first", 2, proc)
    os.kill(started["server"]["pid"], signal.SIGKILL)
    stdout, _ = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 1, stdout
    samples = [json.loads(line) for line in (out / "first" / "samples.jsonl").read_text().splitlines()]
    failed = [s for s in samples if s.get("error")]
    assert failed and all("the managed server exited (code -9) during the lane" in s["error"] for s in failed)
    assert len(samples) == 10  # every task has a line: answered before, failed after
    second = manifest(out / "second")
    assert second["status"] == "finished" and second["server"]["pid"] != started["server"]["pid"]
    assert "first" in stdout and "failed" in stdout and "complete" in stdout  # each lane's outcome


def _one_slow_lane_running(tmp: Path, port: int) -> tuple[int, Path, subprocess.Popen[str], dict[str, Any]]:
    """`ocllm matrix` with one lane on a slow managed simulator, once its first answer is on disk: the port,
    the runs folder, the ocllm process and the lane's manifest."""
    slow = {"command": sim_command(port, "--latency", "0.3")}
    config = lanes_file(tmp, port, {"only": {"concurrency": 1}}, slow)
    out = tmp / "runs"
    proc = _start_matrix(config, out)
    return port, out, proc, _wait_for_samples(out / "only", 1, proc)


def test_ctrl_c_during_a_lane_stops_the_server(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    port, out, proc, started = _one_slow_lane_running(tmp_path, reserve_port())
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 130 and "--resume" in err
    assert gone(started["server"]["pid"]) and not something_answers("127.0.0.1", port)
    assert manifest(out / "only")["status"] == "interrupted"


def test_a_server_does_not_outlive_ocllm_killed_outright(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    port, _, proc, started = _one_slow_lane_running(tmp_path, reserve_port())
    proc.kill()  # SIGKILL: ocllm stops nothing itself; the kernel tells the server
    proc.communicate(timeout=BACKSTOP_S)
    assert wait_until(lambda: gone(started["server"]["pid"])), "the server outlived ocllm"
    assert not something_answers("127.0.0.1", port)


def test_a_command_that_is_not_there_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = refused_port()  # the command never listens: nobody answers here
    config = lanes_file(tmp_path, port, {"x": {"server": {"command": "no-such-server --port 1"}}}, None)
    assert main(["run", "--config", str(config), "--lane", "x", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'no-such-server' is not a program on PATH" in err[0]


def test_off_linux_a_managed_lane_is_refused_in_one_line_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    reserve_port: Callable[[], int],
) -> None:
    # Holding a server's tree takes prctl and /proc (Linux): on macOS a managed lane says so, and how to go on.
    port = reserve_port()
    config = lanes_file(tmp_path, port, {"x": {}}, {"command": sim_command(port)})
    monkeypatch.setattr(sys, "platform", "darwin")
    assert main(["run", "--config", str(config), "--lane", "x", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run on Linux only" in err[0] and "not on darwin" in err[0] and "--no-server" in err[0]
    assert not something_answers("127.0.0.1", port)  # nothing was started
    assert not (tmp_path / "r" / "samples.jsonl").exists()


# --- issue 19, item 8: no process of a lane's server outlives ocllm, whatever the command (a wrapper that does
# not exec, a server that ignores SIGTERM, a process that leaves its session) and however ocllm ends. The
# server is tests/stub_server.py, a real HTTP server; what is left is looked for in /proc by the port.

STUB = str(Path(__file__).with_name("stub_server.py"))


def stub_command(port: int, *extra: str) -> list[str]:
    return [PYTHON, STUB, "--port", str(port), *extra]


def wrapped(argv: list[str], before: str = "") -> list[str]:
    """`sh -c "ARGV; echo done"`: the shell forks the server and waits for it (no exec)."""
    return ["sh", "-c", before + " ".join(argv) + "; echo done"]


def processes_of(port: int) -> list[int]:
    """Live processes (zombies hold nothing) whose command line names the port: the server, its wrapper, and
    whatever ocllm put between them."""
    marker = f"--port {port}"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture
def reaped() -> Any:
    """The ports a test's servers use; whatever of them is still alive at the end is killed, so that a failing
    test leaves nothing behind either."""
    ports: list[int] = []
    yield ports
    for port in ports:
        for pid in processes_of(port):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def nothing_left_of(port: int) -> None:
    gone_all = wait_until(lambda: not processes_of(port) and not something_answers("127.0.0.1", port))
    assert gone_all, f"left behind: {processes_of(port)}"


def _stub_lane_running(tmp: Path, ports: list[int], command: list[str], port: int, **server: Any) -> Any:
    """`ocllm matrix` with one slow lane on a managed stub server, once its first answer is on disk."""
    ports.append(port)
    config = lanes_file(tmp, port, {"only": {"concurrency": 1, "model": "stub"}}, {"command": command, **server})
    proc = _start_matrix(config, tmp / "runs")
    started = _wait_for_samples(tmp / "runs" / "only", 1, proc)
    return proc, started


def test_a_wrapper_that_does_not_exec_leaves_nothing_when_ocllm_is_killed(
    tmp_path: Path, reaped: list[int], reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    proc, _ = _stub_lane_running(tmp_path, reaped, wrapped(stub_command(port, "--latency", "0.3")), port)
    assert len(processes_of(port)) >= 2  # the shell and its child, the server
    proc.kill()  # SIGKILL: ocllm stops nothing itself
    proc.communicate(timeout=BACKSTOP_S)
    nothing_left_of(port)


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace_when_ocllm_is_killed(
    tmp_path: Path, reaped: list[int], reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    command = stub_command(port, "--latency", "0.3", "--ignore-sigterm")
    proc, _ = _stub_lane_running(tmp_path, reaped, command, port, stop_timeout_s=1)
    proc.kill()
    proc.communicate(timeout=BACKSTOP_S)
    nothing_left_of(port)


def test_ctrl_c_leaves_nothing_of_a_wrapped_server_that_left_its_session(
    tmp_path: Path, reaped: list[int], reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    command = wrapped(stub_command(port, "--latency", "0.3", "--ignore-sigterm"), before="setsid ")
    proc, _ = _stub_lane_running(tmp_path, reaped, command, port, stop_timeout_s=1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 130, err
    nothing_left_of(port)


def test_the_normal_stop_leaves_nothing_of_a_wrapped_server_that_ignores_sigterm_and_left_its_session(
    tmp_path: Path, reaped: list[int], reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    reaped.append(port)
    command = wrapped(stub_command(port, "--ignore-sigterm"), before="setsid ")
    config = lanes_file(tmp_path, port, {"a": {"model": "stub"}}, {"command": command, "stop_timeout_s": 1})
    assert main(["matrix", str(config), "--out", str(tmp_path / "runs")]) == 0
    nothing_left_of(port)


# --- issue 19, item 1: a managed server that prints its API key puts it nowhere: not in server.log, not in the
# errors quoting the log's last lines when it dies (samples, metrics, manifest, reports, rescored documents),
# not on the console; in no spelling the scrub knows.


def test_a_server_that_prints_its_key_leaks_it_nowhere(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reaped: list[int],
    reserve_port: Callable[[], int],
) -> None:
    from stub_server import key_spellings

    key = "sk-secret/XYZü+1 end"
    monkeypatch.setenv("OCLLM_TEST_KEY", key)  # the server inherits it, as vLLM's --api-key needs
    port = reserve_port()
    reaped.append(port)
    command = stub_command(port, "--print-key", "OCLLM_TEST_KEY", "--die-after", "3")
    lane = {"model": "stub", "concurrency": 1, "api_key_env": "OCLLM_TEST_KEY"}
    config = lanes_file(tmp_path, port, {"a": lane}, {"command": command})
    out = tmp_path / "runs" / "a"
    assert main(["matrix", str(config), "--out", str(tmp_path / "runs")]) == 1  # it died after 3 answers
    assert main(["report", str(out)]) == 0
    assert main(["rescore", str(out), "-o", str(tmp_path / "re.json"), "--report", str(tmp_path / "audit.md")]) == 0
    printed = capsys.readouterr()
    written = {p: p.read_bytes().decode(errors="replace") for p in tmp_path.rglob("*") if p.is_file()}
    log = written[out / "server.log"]
    assert "starting: --api-key [redacted]" in log and "dying: --api-key [redacted]" in log
    errors = [json.loads(line).get("error") for line in (out / "samples.jsonl").read_text().splitlines()]
    assert any(e and "dying: --api-key [redacted]" in e for e in errors)  # the log's last lines, quoted
    everything = printed.out + printed.err + "".join(text for p, text in written.items() if p.name != "lanes.toml")
    for spelling in key_spellings(key):
        assert spelling not in everything, spelling
    assert "XYZ" not in everything.replace("[redacted]", "")


@pytest.mark.parametrize("before", ["", "u", "us", "user:", "Bearer "])
@pytest.mark.parametrize("after", ["", "x", "xy"])
def test_the_key_in_base64_is_taken_out_at_any_offset(before: str, after: str) -> None:
    import base64

    from ocllm.run.scrub import scrub

    key = "sk-secret/XYZü+1 end"
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(f"{before}{key}{after}".encode()).decode()
        clean = scrub(f"auth={encoded};", key)
        assert "[redacted]" in clean and encode(key.encode()).decode()[2:-4] not in clean
        assert len(clean.replace("[redacted]", "")) <= len("auth=;") + 4 + 2 * len(before + after)


def test_the_console_and_the_manifest_say_how_long_the_server_took_to_be_ready(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reaped: list[int], reserve_port: Callable[[], int]
) -> None:
    """Issue 19, item 18: "ready after N s", said once the server answers, whatever the wait's own pace."""
    port = reserve_port()
    reaped.append(port)
    config = lanes_file(tmp_path, port, {"a": {"model": "stub"}}, {"command": stub_command(port)})
    assert main(["matrix", str(config), "--out", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"the server of lane a is ready after \d+ s", out), out
    ready_after = manifest(tmp_path / "runs" / "a")["server"]["ready_after_s"]
    assert isinstance(ready_after, float) and ready_after >= 0
