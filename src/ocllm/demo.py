"""`make demo`: two lanes of the demo suite against the built-in SIMULATOR, over real loopback HTTP.

The simulator (a fake vLLM-like server; it runs no model) is started in this process, a lanes file
pointing at it is written beside the results, both lanes are run and scored through the real client,
then compared (Markdown, HTML and comparison.json) and reported, and every path written is printed.
Two math lanes run the `demo-math` suite (free-form answers, boxed and otherwise) apart from them, in
out/demo/math/, so that the comparison and the matrix stay those of the multiple-choice demo; two sampled lanes
ask each of its tasks four times (out/demo/sampled/, compared in out/demo/sampled_comparison/); two format lanes
run the `demo-formats` suite (IFEval-like instructions and JSON answers with a schema) into out/demo/formats/; two
tool lanes run `demo-tools` against a simulator with a tool parser and one without (out/demo/tools/, compared in
out/demo/tools_comparison/: the calls the second server dropped); two agent lanes run `demo-agent`'s conversations
over tools bare and inside an agent's context (out/demo/agent/, compared in out/demo/agent_comparison/).
Pointing the same lanes at a real server is a matter of changing `base_url` and `model` in that file
(see README.md, "Against your server", and docs/running.md).
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import signal
import socket
import sys
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import msgspec
from rich.console import Console
from rich.markup import escape

from ocllm.analysis.compare import compare_runs, load_scored
from ocllm.analysis.report_documents import matrix_doc, run_report_doc
from ocllm.analysis.rescore import score_run_dir
from ocllm.console import ServerWait, console_comparison, print_run_result
from ocllm.documents import Comparison
from ocllm.files.atomic import atomic_write_bytes
from ocllm.importers import Selection, import_tasks
from ocllm.report.write import write_comparison, write_matrix_report, write_run_report
from ocllm.run.decision_pool import DecisionPool
from ocllm.run.lanes import load_lanes
from ocllm.run.runner import run_lane
from ocllm.run.servers import ServerPool, unsupported_here
from ocllm.scoring import guarded, task_types
from ocllm.scoring.guarded import die_with_parent_thread
from ocllm.sim import SimConfig, SimServer
from ocllm.suites import canonical_jsonl, resolve_suite, shipped_suites

LANES = """\
# Written by `make demo`. The base_url points at the ocllm SIMULATOR started by the demo; for a real
# vLLM server use e.g. base_url = "http://127.0.0.1:8000/v1" and your served model name.
[defaults]
base_url = "{base_url}"
suite = "demo"
concurrency = 16
max_tokens = 4096

[lanes.A_baseline]
model = "sim-baseline"
reasoning = "off"

[lanes.B_native_reasoning]
model = "sim-reasoning"
reasoning = "native"
stream = true
"""


# Math lanes: the shipped demo-math suite (GSM8K-like word problems, MATH-like LaTeX answers), reasoning off
# (working in the answer) and on (working in the reasoning field). The prompt is the default math prompt.
MATH_LANES = """\
# Written by `make demo`: math lanes of the demo-math suite, against the same SIMULATOR as lanes.toml.
[defaults]
base_url = "{base_url}"
suite = "demo-math"
concurrency = 16
max_tokens = 4096

[lanes.C_math_baseline]
model = "sim-baseline"
reasoning = "off"

[lanes.D_math_reasoning]
model = "sim-reasoning"
reasoning = "native"
stream = true
"""


# Sampled lanes (issue 21): each math task asked four times at temperature 0.6 (seed + i for sample i), so that
# the reports show avg@4, pass@k, maj@4 and task-clustered intervals, and the comparison pairs per-task shares.
SAMPLED_LANES = """\
# Written by `make demo`: sampled lanes, four samples of each demo-math task, against the same SIMULATOR.
[defaults]
base_url = "{base_url}"
suite = "demo-math"
concurrency = 16
max_tokens = 4096
temperature = 0.6
seed = 0
samples_per_task = 4

[lanes.E_math_sampled]
model = "sim-baseline"
reasoning = "off"

[lanes.F_math_reasoning_sampled]
model = "sim-reasoning"
reasoning = "native"
"""


# Format lanes (issue 22): the shipped demo-formats suite, IFEval-like instructions (each instruction's verdict and
# what it measured) and JSON answers checked against a schema, reasoning off and on.
FORMAT_LANES = """\
# Written by `make demo`: instructions and json lanes of the demo-formats suite, against the same SIMULATOR.
[defaults]
base_url = "{base_url}"
suite = "demo-formats"
concurrency = 16
max_tokens = 4096

[lanes.G_formats_baseline]
model = "sim-baseline"
reasoning = "off"

[lanes.H_formats_reasoning]
model = "sim-reasoning"
reasoning = "native"
stream = true
"""


# Tool lanes (issue 23): the shipped demo-tools suite against a server whose tool parser works and against one
# without it (the simulator's tool_parser = "none": every call arrives as text in the content), the same model:
# the comparison shows the calls the second server dropped.
TOOL_LANES = """\
# Written by `make demo`: tool lanes of the demo-tools suite; two SIMULATORS, with and without a tool parser.
[defaults]
suite = "demo-tools"
concurrency = 16
model = "sim-baseline"

[lanes.I_tools_parsed]
base_url = "{parsed}"

[lanes.J_tools_no_parser]
base_url = "{unparsed}"
"""


# Agent lanes (issue 43): the demo-agent suite's conversations over tools, bare and inside an agent's context (its
# system prompt and its tools, examples/agent-context/, added to every request): the comparison pairs the episodes.
AGENT_LANES = """\
# Written by `make demo`: conversations over tools (demo-agent), bare and inside an agent's context, one SIMULATOR.
[defaults]
base_url = "{base_url}"
suite = "demo-agent"
concurrency = 8
model = "sim-baseline"

[lanes.K_agent_bare]

[lanes.L_agent_in_context]
system_prompt_file = "{context}/system_prompt.md"
extra_tools_file = "{context}/tools.json"
"""
# The agent's context the demo's second agent lane runs in: the repository's example, which `make demo` has beside it.
AGENT_CONTEXT = Path(__file__).resolve().parents[2] / "examples" / "agent-context"


# Lanes whose server ocllm starts itself (the simulator as the managed command, as vLLM would be), shares
# between the two lanes, and stops after them.
MANAGED_LANES = """\
# Written by `make demo`: lanes that start their own server. For vLLM, command = "vllm serve ...".
[defaults]
base_url = "http://127.0.0.1:{port}/v1"
model = "sim-reasoning"
suite = "smoke"
stream = true
[defaults.server]
command = {command}
ready_timeout_s = 60

[lanes.M_reasoning_off]
reasoning = "off"

[lanes.M_reasoning_on]
reasoning = "native"
"""


# Lanes for a task type whose demo suite none of the groups above runs (a room registered with its own `demo_suite`):
# the suite, reasoning off and on, into out/demo/<suite>/.
ROOM_LANES = """\
# Written by `make demo`: lanes of the {suite} suite (a task type's demo suite), against the same SIMULATOR.
[defaults]
base_url = "{base_url}"
suite = "{suite}"
concurrency = 16
max_tokens = 4096

[lanes.{name}_baseline]
model = "sim-baseline"
reasoning = "off"

[lanes.{name}_reasoning]
model = "sim-reasoning"
reasoning = "native"
stream = true
"""
# The guarded services (scoring/guarded.py) the demo's decisions call: math's symbolic check and the check of a json
# task's schema with patterns. Started ahead of the first lane that needs them, in the decision worker and in the report
# process, so that their start (sympy's imports: a second or more of CPU) overlaps with the lanes before (a name that
# no service has would only be slower, never different).
WARM = ("symbolic", "json-schema")
# The suites the lane groups above run.
GROUP_SUITES = ("demo", "demo-math", "demo-formats", "demo-tools", "demo-agent")


def room_suites() -> list[str]:
    """Each registered type's demo suite that none of the lane groups runs, once, in registry order."""
    named = (task_type.demo_suite for task_type in task_types.TASK_TYPES.values())
    return list(dict.fromkeys(suite for suite in named if suite is not None and suite not in GROUP_SUITES))


class Group(NamedTuple):
    """Lanes the demo runs against the simulator: their lanes file (written from `lanes`), the folder their runs go
    to, what the console says of them, and the pair of lanes it compares (into `<compared_into>/`), if any."""

    lanes_file: str
    folder: str
    lanes: str
    heading: str
    compared: tuple[str, str] | None = None
    compared_into: str = ""


GROUPS = (
    Group("math_lanes.toml", "math", MATH_LANES, "[bold]Math lanes[/bold] (free-form answers)"),
    Group("sampled_lanes.toml", "sampled", SAMPLED_LANES, "[bold]Sampled lanes[/bold] (4 samples of each task)",
          ("E_math_sampled", "F_math_reasoning_sampled"), "sampled_comparison"),
    Group("format_lanes.toml", "formats", FORMAT_LANES, "[bold]Format lanes[/bold] (instructions and JSON)"),
)  # fmt: skip
TOOLS = Group(
    "tool_lanes.toml", "tools", TOOL_LANES, "[bold]Tool lanes[/bold] (with and without a tool parser)",
    ("I_tools_parsed", "J_tools_no_parser"), "tools_comparison",
)  # fmt: skip
AGENT = Group(
    "agent_lanes.toml", "agent", AGENT_LANES, "[bold]Agent lanes[/bold] (conversations over tools, bare and in an "
    "agent's context)", ("K_agent_bare", "L_agent_in_context"), "agent_comparison",
)  # fmt: skip


def room_groups() -> list[Group]:
    """A group of two lanes for each registered type's demo suite that no group above runs."""
    return [
        Group(
            f"{Path(suite).stem}_lanes.toml", Path(suite).stem,
            ROOM_LANES.format(base_url="{base_url}", suite=suite, name=Path(suite).stem.replace("-", "_")),
            f"[bold]Lanes of {escape(suite)}[/bold] (a task type's demo suite)",
        )
        for suite in room_suites()
    ]  # fmt: skip


def main(out: Path = Path("out/demo")) -> int:
    console = Console()
    runs = out / "runs"
    rooms = room_groups()
    folders = (out / group.folder for group in (*GROUPS, TOOLS, AGENT, *rooms))
    for earlier in (runs, out / "imported_run", out / "managed", *folders):
        if earlier.exists():
            shutil.rmtree(earlier)  # the demo starts afresh each time
    out.mkdir(parents=True, exist_ok=True)
    imported = _imported_suite(console, out)
    own_files = [resolve_suite(suite) for suite in room_suites() if suite not in shipped_suites()]
    # 20 ms a request, as the managed lanes' server: enough that the serving figures (time to first token, latency)
    # show the spread of a server, not zero; it is slept once a wave of `concurrency` requests, 25 waves in all.
    config = SimConfig(latency_s=0.02, suites=(*shipped_suites().values(), imported, *own_files))
    # The reports are drawn in other processes while this one runs the next lanes (docs/performance.md, "make demo"):
    # drawing them is most of the demo's CPU, and a lane mostly waits (on the server, on its decisions). They are
    # forked here, before this process starts any thread (the simulator's, the guarded children's launcher).
    with _ReportProcesses() as reports:
        console.print("[bold]Starting the ocllm SIMULATOR[/bold] (simulated answers, no real model) on loopback")
        # One pool of decision workers for every lane, as `ocllm matrix` has: a pool's start (a forkserver, workers
        # importing the scorer) and each worker's guarded children (math-verify, langdetect, jsonschema: a second or
        # more of CPU each) are paid once for the demo, not once a lane. One worker: the demo's lanes are small, and a
        # second would start a second set of guarded children for the same few decisions (the decisions do not
        # depend on the workers: scoring is a pure function).
        with DecisionPool(workers=1, warm=WARM) as decisions:
            with SimServer(config) as sim:
                lanes_file = out / "lanes.toml"
                lanes_file.write_text(LANES.format(base_url=sim.base_url), encoding="utf-8")
                console.print(f"simulator at {sim.base_url}; lanes in {escape(str(lanes_file))}")
                lanes = load_lanes(lanes_file)
                for name, lane in lanes.items():
                    print_run_result(run_lane(lane, runs / name, score=score_run_dir, decisions=decisions))
                _draw_runs_reports(reports, out)
                on_import = msgspec.structs.replace(lanes["B_native_reasoning"], name="imported", suite=str(imported))
                print_run_result(run_lane(on_import, out / "imported_run", score=score_run_dir, decisions=decisions))
                for group in GROUPS:
                    _run_group(console, out, group, decisions, base_url=sim.base_url)
                    _draw_group_reports(reports, out, group)
                with SimServer(replace(config, tool_parser="none")) as unparsed:
                    _run_group(console, out, TOOLS, decisions, parsed=sim.base_url, unparsed=unparsed.base_url)
                    _draw_group_reports(reports, out, TOOLS)
                if AGENT_CONTEXT.is_dir():
                    _run_group(console, out, AGENT, decisions, base_url=sim.base_url, context=str(AGENT_CONTEXT))
                    _draw_group_reports(reports, out, AGENT)
                else:  # ocllm installed without its repository: the agent's context is not here
                    console.print(f"Agent lanes: skipped; {escape(str(AGENT_CONTEXT))} is not here")
                for group in rooms:
                    _run_group(console, out, group, decisions, base_url=sim.base_url)
                    _draw_group_reports(reports, out, group)
            console.print("simulator stopped")
            _managed_lanes(console, out, decisions)
        drawn = reports.results()

    # Said in the order the reports were asked for: the comparisons first, then every file written.
    for comparison, _ in drawn:
        if comparison is not None:
            console_comparison(comparison)
    for _, written in drawn:
        for path in written:
            console.print(f"wrote {escape(str(path))}")
    html = out / "comparison" / "comparison.html"
    console.print(f"\n[bold]Open the comparison report:[/bold] {escape(html.resolve().as_uri())}")
    return 0


# Two: once the lanes are done, the reports left are the demo's last seconds, and a machine of two CPUs draws two at
# once; while the lanes run, the two share what the lanes leave of the CPUs.
REPORT_PROCESSES = 2
# What a report job gives back: the comparison it drew, if any (printed by the main process), and the files written.
Drawn = tuple[Comparison | None, list[Path]]


class _ReportProcesses:
    """`REPORT_PROCESSES` processes, forked on entry, that draw reports (`draw(job, *args)`, a module-level function
    returning `Drawn`) while the caller goes on; `results()` waits for them all, in the order asked.

    Forked rather than spawned: each starts with every module this process has imported (scipy, matplotlib, the
    scorer: seconds of CPU to import again), so they are forked before this process starts a thread. Each dies with
    this process (PR_SET_PDEATHSIG: the thread that forked it is this process's main thread); they leave on
    `__exit__`, their pending jobs dropped if the demo is ending on an error."""

    def __init__(self) -> None:
        self._executor = ProcessPoolExecutor(
            max_workers=REPORT_PROCESSES,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_report_process_started,
        )
        self._pending: list[Future[Drawn]] = []

    def __enter__(self) -> _ReportProcesses:
        # With the fork context, the executor forks all its processes at the first submit: now, no thread running.
        self._executor.submit(int).result()
        return self

    def draw(self, job: Callable[..., Drawn], *args: object) -> None:
        self._pending.append(self._executor.submit(job, *args))

    def results(self) -> list[Drawn]:
        return [future.result() for future in self._pending]

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self._executor.shutdown(wait=True, cancel_futures=kind is not None)


def _report_process_started() -> None:
    # Ctrl-C is the main process's to handle (it ends the demo, dropping the reports not started); these go with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent_thread()
    # The reports decide every answer again (the documents are derived from the samples), math and json ones too:
    # their guarded children start now, while the first lanes run.
    guarded.warm(WARM)


def _imported_suite(console: Console, out: Path) -> Path:
    """A dataset file as its publisher lays it out (a tiny MMLU-Pro JSONL the project wrote), imported as
    `ocllm import mmlu-pro FILE -o SUITE --per-category 3` would, to be run as a lane of its own."""
    imported = out / "imported_mmlu_pro.jsonl"
    sample = Path(str(resources.files("ocllm") / "data" / "datasets" / "mmlu_pro_sample.jsonl"))
    tasks = import_tasks("mmlu-pro", [sample], Selection(per_category=3, seed=0)).tasks
    atomic_write_bytes(imported, canonical_jsonl(tasks))
    console.print(
        f"imported {len(tasks)} MMLU-Pro-layout tasks from {escape(str(sample))} into {escape(str(imported))}"
    )
    return imported


def _run_group(console: Console, out: Path, group: Group, decisions: DecisionPool, **urls: str) -> None:
    """Write the group's lanes file (its base URLs filled in) and run each of its lanes into its folder."""
    lanes_file = out / group.lanes_file
    lanes_file.write_text(group.lanes.format(**urls), encoding="utf-8")
    console.print(f"{group.heading}: {escape(str(lanes_file))}")
    for name, lane in load_lanes(lanes_file).items():
        print_run_result(run_lane(lane, out / group.folder / name, score=score_run_dir, decisions=decisions))


def _draw_runs_reports(reports: _ReportProcesses, out: Path) -> None:
    """The two demo lanes' comparison, each one's report, and the matrix of the runs/ folder."""
    runs = out / "runs"
    reports.draw(_comparison, runs / "A_baseline", runs / "B_native_reasoning", out / "comparison")
    for lane_dir in sorted(runs.iterdir()):
        reports.draw(_lane_report, lane_dir)
    reports.draw(_matrix, runs, out / "matrix")


def _draw_group_reports(reports: _ReportProcesses, out: Path, group: Group) -> None:
    """The group's comparison (when it has a pair), then each lane's report."""
    if group.compared is not None:
        first, second = (out / group.folder / name for name in group.compared)
        reports.draw(_comparison, first, second, out / group.compared_into)
    for lane_dir in sorted((out / group.folder).iterdir()):
        reports.draw(_lane_report, lane_dir)


# The report jobs, one file set each, so that the report processes share them out evenly.


def _comparison(first: Path, second: Path, into: Path) -> Drawn:
    comparison = compare_runs(load_scored(first), load_scored(second))
    return comparison, write_comparison(comparison, into)


def _lane_report(lane_dir: Path) -> Drawn:
    return None, write_run_report(run_report_doc(lane_dir), lane_dir / "report")


def _matrix(runs: Path, into: Path) -> Drawn:
    return None, write_matrix_report(matrix_doc(runs), into)


def _managed_lanes(console: Console, out: Path, decisions: DecisionPool) -> None:
    """Two lanes with a [server] table: one start of the server for both, stopped after them."""
    if (problem := unsupported_here("managed")) is not None:  # not Linux: the rest of the demo runs all the same
        console.print(f"Lanes that start their own server: skipped; {escape(problem)}")
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "ocllm", "serve-sim", "--port", str(port), "--latency", "0.02"]
    lanes_file = out / "managed_lanes.toml"
    lanes_file.write_text(MANAGED_LANES.format(port=port, command=json.dumps(command)), encoding="utf-8")
    console.print(f"[bold]Lanes that start their own server[/bold]: {escape(str(lanes_file))}")
    lanes = load_lanes(lanes_file)
    with ServerPool(ServerWait()) as servers:
        for name, lane in lanes.items():
            run = run_lane(lane, out / "managed" / name, servers=servers, score=score_run_dir, decisions=decisions)
            print_run_result(run)
        console.print(f"{len(lanes)} lanes, {servers.starts} server start; its log is in each run's server.log")
    console.print("the managed server was stopped")


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/demo")))
