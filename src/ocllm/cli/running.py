"""Commands that run lanes and plan them: run, matrix, merge, plan."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ocllm.errors import OcllmError

if TYPE_CHECKING:
    from ocllm.documents import Summary
    from ocllm.run.lanes import Lane
    from ocllm.run.preflight import PreflightMode

from ocllm.cli.app import app
from ocllm.cli.options import (
    NO_SERVER_HELP,
    SHARD_HELP,
    Bounded,
    lane_options,
    lane_setting_options,
    out_option,
    policy_options,
    preflight_option,
)  # fmt: skip


@app.command()
@click.option("--config", "config", type=click.Path(path_type=Path), help="A lanes TOML file.")
@click.option(
    "--lane", "lane_name",
    help="Which lane of --config to run (a one-off run's name: by default the --out folder's name, else adhoc).",
)  # fmt: skip
@out_option("Run directory (default: runs/LANE).")
@click.option("--no-server", is_flag=True, help=NO_SERVER_HELP)
@click.option("--shard", "shard_text", metavar="K/N", help=SHARD_HELP)
@click.option(
    "--limit", type=Bounded("--limit", int), metavar="N", help="Run only the suite's first N tasks (a quick try)."
)
@preflight_option
@lane_options
@policy_options
def run(
    config: Path | None,
    lane_name: str | None,
    out: Path | None,
    no_server: bool,
    shard_text: str | None,
    limit: int | None,
    resume: bool,
    retry_errors: bool,
    preflight: str,
    **flags: object,
) -> int:
    """Run one lane of a suite against an OpenAI-compatible server.

    Exit code 0 when every task has an answer, 1 when the run finished with failed requests (they are
    recorded; --retry-errors re-runs them), 2 for a mistake in the command or its files, or when the server refused
    the lane's requests alike (its reason is the last line; the results are written)."""
    from ocllm.analysis.rescore import score_run_dir
    from ocllm.console import ServerWait, all_answered, print_notice, print_run_result
    from ocllm.run.decision_pool import DecisionPool
    from ocllm.run.runner import run_lane
    from ocllm.run.servers import ServerPool
    from ocllm.run.shards import parse_shard

    shard = parse_shard(shard_text) if shard_text is not None else None
    lane = _lane_of(config, lane_name, out, flags)
    with ServerPool(ServerWait()) as servers, DecisionPool() as decisions:
        result = run_lane(
            lane,
            out or Path("runs") / lane.name,
            resume=resume,
            retry_errors=retry_errors,
            announce=print_notice,
            servers=None if no_server else servers,
            shard=shard,
            limit=limit,
            decisions=decisions,
            score=score_run_dir,
            preflight=_mode(preflight),
        )
    print_run_result(result)
    if result.stopped is not None:
        # The server refused the lane's requests alike: the results are written, and the run ends with its reason.
        raise OcllmError(result.stopped)
    return 0 if all_answered(result.summary) else 1


def _lane_of(config: Path | None, lane_name: str | None, out: Path | None, flags: dict[str, object]) -> Lane:
    """The lane a command names: `--config` and `--lane`, its settings replaced by the flags given; or the flags
    alone (a one-off lane, named after --out)."""
    from ocllm.console import print_notice
    from ocllm.run.lanes import lane_from_mapping, one_off_lane_name, pick_lane, with_flags

    given = {k: v for k, v in flags.items() if v is not None}
    if config is not None:
        if lane_name is None:
            raise click.UsageError("--config needs --lane NAME")
        lane = pick_lane(config, lane_name, announce=print_notice)
        return with_flags(lane, given) if given else lane
    for needed in ("base_url", "model"):
        if needed not in given:
            raise click.UsageError(f"--{needed.replace('_', '-')} is needed without --config")
    return lane_from_mapping(lane_name or one_off_lane_name(out), given, "command line")


def _mode(preflight: str) -> PreflightMode:
    return "strict" if preflight == "strict" else "off" if preflight == "off" else "on"


@app.command()
@click.option("--config", "config", type=click.Path(path_type=Path), help="A lanes TOML file.")
@click.option("--lane", "lane_name", help="Which lane of --config to probe.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as one JSON object.")
@click.option("--no-server", is_flag=True, help=NO_SERVER_HELP)
@lane_setting_options
def probe(config: Path | None, lane_name: str | None, as_json: bool, no_server: bool, **flags: object) -> int:
    """Probe a lane's server path, as `run` does before its first task, and say what it finds.

    A few requests, with the lane's own settings: where answers land, whether thinking "off" is off, whether the
    chat template writes a system message, whether the lane's stop strings cut the reasoning, whether a long prompt
    is kept whole, whether calls come back structured (a suite with tools), whether max_tokens cuts the suite's
    first answers. Exit code 0 when nothing found will distort a run, 1 when something will, 2 for a
    mistake in the command or its files."""
    import msgspec

    from ocllm.console import ServerWait, print_notice, print_preflight
    from ocllm.run.runner import probe as probe_lane
    from ocllm.run.servers import ServerPool

    lane = _lane_of(config, lane_name, None, flags)
    with ServerPool(ServerWait()) as servers:
        found = probe_lane(lane, servers=None if no_server else servers, announce=print_notice)
    if as_json:
        click.echo(msgspec.json.encode(found).decode())
    else:
        print_preflight(lane.name, found)
    return 1 if any(f.outcome == "problem" and f.distorts for f in found.findings) else 0


@app.command()
@click.argument("config", type=click.Path(path_type=Path))
@out_option("Folder of run directories (default: runs/CONFIG).")
@click.option("--lane", "only", multiple=True, help="Run only these lanes (repeatable).")
@click.option("--resume", is_flag=True, help="Finish interrupted lanes without repeating finished tasks.")
@click.option("--no-server", is_flag=True, help=NO_SERVER_HELP)
@click.option("--shard", "shard_text", metavar="K/N", help=SHARD_HELP)
@click.option(
    "--samples", "samples_per_task", type=Bounded("--samples", int),
    help="Ask each task of every lane K times (the lanes' samples_per_task).",
)  # fmt: skip
@preflight_option
@click.option("--slurm", is_flag=True, help="Submit the matrix to Slurm: a job array per lane, then a merge job.")
@click.option(
    "--shards", type=click.IntRange(1, 1000), default=1, show_default=True,
    help="With --slurm: the shards of each lane, one array element each.",
)  # fmt: skip
@click.option("--wait", is_flag=True, help="With --slurm: follow the jobs to the end (Ctrl-C cancels them).")
@click.option(
    "--emit", type=click.Choice(["k8s"]),
    help="Write the matrix as Kubernetes Indexed Jobs and a merge Job (OUT/k8s/matrix.yaml), for kubectl apply.",
)  # fmt: skip
@click.option("--image", help="With --emit k8s: the container image with ocllm (and the lanes' servers) installed.")
@click.option(
    "--pvc", default="ocllm-runs", show_default=True,
    help="With --emit k8s: the PersistentVolumeClaim the runs are written to (mounted at /shared).",
)  # fmt: skip
def matrix(
    config: Path,
    out: Path | None,
    only: tuple[str, ...],
    resume: bool,
    no_server: bool,
    shard_text: str | None,
    samples_per_task: int | None,
    preflight: str,
    slurm: bool,
    shards: int,
    wait: bool,
    emit: str | None,
    image: str | None,
    pvc: str,
) -> int:
    """Run every lane of a lanes file in turn, each into its own run directory.

    Lanes with a [server] table run against a server ocllm starts for them (consecutive lanes with the same
    table share one start) and stops after them. A lane whose server never becomes ready, or dies, fails
    and the next lane runs. Exit code 1 when any lane failed or finished with failed requests."""
    from ocllm.analysis.rescore import score_run_dir
    from ocllm.console import ServerWait, all_answered, print_lane_outcomes, print_notice, print_run_result
    from ocllm.run.decision_pool import DecisionPool
    from ocllm.run.lanes import load_lanes, with_flags
    from ocllm.run.preflight import PreflightStopped, preflight_word
    from ocllm.run.runner import run_lane
    from ocllm.run.servers import ServerFailed, ServerPool
    from ocllm.run.shards import check_shards, parse_shard

    shard = parse_shard(shard_text) if shard_text is not None else None
    lanes = load_lanes(config, announce=print_notice)
    if samples_per_task is not None:
        lanes = {name: with_flags(lane, {"samples_per_task": samples_per_task}) for name, lane in lanes.items()}
    unknown = [name for name in only if name not in lanes]
    if unknown:
        raise click.UsageError(f"no lane named {unknown[0]!r} in {config}")
    if shard is not None:
        check_shards((lane.suite for name, lane in lanes.items() if not only or name in only), shard)
    folder = out or Path("runs") / config.stem
    if slurm or emit:
        chosen = {name: lane for name, lane in lanes.items() if not only or name in only}
        flags = ["--preflight", preflight, *(["--no-server"] if no_server else [])]
        if samples_per_task is not None:
            flags += ["--samples", str(samples_per_task)]
        if shard_text is not None:
            raise click.UsageError("a cluster's matrix chooses the shards itself: give --shards N, not --shard K/N")
        if emit:
            if slurm or wait:
                raise click.UsageError("--emit k8s writes the Jobs, and submits nothing: not with --slurm or --wait")
            if not image:
                raise click.UsageError("--emit k8s needs --image: the container image the Jobs run")
            return _emit_k8s(config, chosen, folder, shards, flags, image, pvc)
        return _on_slurm(config, chosen, folder, shards, flags, wait)
    if shards != 1 or wait or image:
        raise click.UsageError("--shards, --wait and --image go with --slurm or --emit k8s (one machine: --shard K/N)")
    outcomes: list[tuple[str, str, Summary | None, str]] = []
    simulated: set[str] = set()  # the lanes the ocllm simulator answered: the closing table says so
    with ServerPool(ServerWait()) as servers, DecisionPool() as decisions:  # one pool of scoring workers for every lane
        for name, lane in lanes.items():
            if only and name not in only:
                continue
            try:
                result = run_lane(
                    lane,
                    folder / name,
                    resume=resume,
                    announce=print_notice,
                    servers=None if no_server else servers,
                    shard=shard,
                    decisions=decisions,
                    command="matrix",
                    score=score_run_dir,
                    preflight=_mode(preflight),
                )
            except (ServerFailed, PreflightStopped) as exc:
                print_notice(str(exc))
                said = "stopped the lane" if isinstance(exc, PreflightStopped) else "-"
                outcomes.append((name, f"failed: {exc}", None, said))
                continue
            print_run_result(result)
            if any(identity.simulated for identity in result.servers):
                simulated.add(name)
            errors = result.summary.errors
            missing = result.summary.missing
            outcome = "complete" if all_answered(result.summary) else f"{errors} failed, {missing} missing"
            if result.stopped is not None:
                print_notice(result.stopped)
                outcome = f"stopped: {result.stopped}"
            outcomes.append((name, outcome, result.summary, preflight_word(result.preflight)))
    print_lane_outcomes(outcomes, simulated)
    return 0 if all(outcome == "complete" for _, outcome, _, _ in outcomes) else 1


def _check_every_shard(lanes: dict[str, Lane], shards: int) -> None:
    """A shard no task falls in is refused here, not on a node (each suite read once)."""
    from ocllm.run.shards import Shard, take_shard
    from ocllm.suites import load_suite

    for name in dict.fromkeys(lane.suite for lane in lanes.values()):
        suite = load_suite(name)
        for k in range(shards):
            take_shard(suite, Shard(k, shards))


def _emit_k8s(config: Path, lanes: dict[str, Lane], out: Path, shards: int, flags: list[str], image: str,
              pvc: str) -> int:  # fmt: skip
    """`matrix --emit k8s`: the Jobs written to OUT/k8s/matrix.yaml, never applied (cluster/k8s.py)."""
    from ocllm.cluster.k8s import SECRET, k8s_objects, matrix_name, write_k8s
    from ocllm.cluster.resources import slurm_tables
    from ocllm.console import print_notice
    from ocllm.files.atomic import atomic_write_text
    from ocllm.files.reading import read_text

    _check_every_shard(lanes, shards)
    name = matrix_name(out.resolve().name)
    objects = k8s_objects(lanes, slurm_tables(config, list(lanes)), read_text(config), name, shards, image, pvc, flags)
    path = out / "k8s" / "matrix.yaml"
    atomic_write_text(path, write_k8s(objects))
    keys = sorted({lane.api_key_env for lane in lanes.values() if lane.api_key_env})
    if keys:
        given = " ".join(f"--from-literal={key}=\"${key}\"" for key in keys)
        print_notice(f"the API keys, by their variables' names: kubectl create secret generic {SECRET} {given}")
    print_notice(f"wrote {path}: kubectl apply -f {path}   (the runs go to /shared/{name} on the claim {pvc})")
    return 0


def _on_slurm(config: Path, lanes: dict[str, Lane], out: Path, shards: int, flags: list[str], wait: bool) -> int:
    """`matrix --slurm`: every lane's shards submitted as a job array, and a merge after them (cluster/)."""
    from ocllm.cluster.resources import slurm_tables
    from ocllm.cluster.slurm_follow import follow
    from ocllm.cluster.slurm_submit import submit_matrix
    from ocllm.console import print_notice

    _check_every_shard(lanes, shards)
    resources = slurm_tables(config, list(lanes))
    submitted = submit_matrix(lanes, resources, config, out, shards, flags, print_notice)
    if not wait:
        ids = ",".join(submitted.job_ids())
        print_notice(f"follow them: squeue -j {ids}   watch the runs: ocllm watch {out}   cancel: scancel {ids}")
        return 0
    return follow(submitted, print_notice)


@app.command()
@click.argument("runs", metavar="RUN_DIR...", nargs=-1, required=True, type=click.Path(path_type=Path))
@out_option("The merged run directory.", required=True)
@click.option("--force", is_flag=True, help="Replace a run in OUT that is not a merge (a merge there is replaced).")
def merge(runs: tuple[Path, ...], out: Path, force: bool) -> int:
    """Join the run directories of a suite's shards (--shard K/N) into one run directory.

    Every shard must be there, of the same suite, lane settings and scorer; no task may be in two. The result
    is an ordinary run: report, compare, rescore and matrix-report read it. A torn or unfinished shard is refused,
    and nothing is written before every shard is checked."""
    from ocllm.analysis.merge import merge_runs
    from ocllm.console import all_answered, console, print_notices, summary_table

    merged = merge_runs(list(runs), out, force=force)
    summary = merged.result.summary
    print_notices(merged.result.notices)
    console.print(summary_table(f"{merged.lane.name}: {merged.shards} shards merged", summary))
    for name in ("manifest.json", "suite.jsonl", "samples.jsonl", "metrics.json"):
        console.print(f"wrote {out / name}")
    return 0 if all_answered(summary) else 1


@app.command()
@click.argument("runs", metavar="[RUN_A RUN_B]", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--difference", type=float, required=True, help="The difference in accuracy to detect, as a share (0.05: 5 points)."
)
@click.option("--discordance", type=float, help="The share of tasks on which the two lanes are expected to disagree.")
@click.option(
    "--from",
    "pilot",
    nargs=2,
    metavar="RUN_A RUN_B",
    type=click.Path(path_type=Path),
    hidden=True,  # the spelling of before: `--from` names another tool's format in every other command
    help="The pilot runs, as the arguments RUN_A RUN_B give them.",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="The level of the two-sided test.")
@click.option("--power", type=float, default=0.8, show_default=True, help="The chance of detecting the difference.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object; its `tasks` is the tasks needed.")
def plan(
    runs: tuple[Path, ...],
    difference: float,
    discordance: float | None,
    pilot: tuple[Path, Path] | None,
    alpha: float,
    power: float,
    as_json: bool,
) -> None:
    """How many tasks (and samples per task) a comparison of two lanes needs to detect a difference.

    With --discordance: the paired (McNemar) design, one sample per task. With two runs RUN_A RUN_B (run
    directories or metrics files of a pilot on the suite): the discordance, or with several samples per task the
    variance of a task's difference, estimated from them. Every figure is a normal approximation
    (docs/statistics.md)."""
    import msgspec

    from ocllm.analysis.planning import plan_from_runs, plan_paired
    from ocllm.analysis.power import McNemarPlan, PilotPlan
    from ocllm.console import print_plan

    if runs and pilot is not None:
        raise click.UsageError("give the pilot runs once: RUN_A RUN_B")
    if runs and len(runs) != 2:
        raise click.UsageError(f"a pilot is two runs, RUN_A RUN_B (got {len(runs)})")
    if runs:
        pilot = (runs[0], runs[1])
    if pilot is not None and discordance is None:
        result: McNemarPlan | PilotPlan = plan_from_runs(pilot[0], pilot[1], difference, alpha, power)
    elif discordance is not None and pilot is None:
        result = plan_paired(difference, discordance, alpha, power)
    else:
        raise click.UsageError("give either --discordance P or two pilot runs RUN_A RUN_B")
    if as_json:
        click.echo(msgspec.json.encode(result).decode())
    else:
        print_plan(result)
