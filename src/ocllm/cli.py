"""The `ocllm` command line: parse arguments, call one library function, print. No logic here."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ocllm import __version__
from ocllm.errors import OcllmError
from ocllm.models import Policy

out = Console()


def policy_options(func: click.decorators.FC) -> click.decorators.FC:
    """The scoring switches shared by every command that scores."""
    func = click.option(
        "--think-prefilled",
        is_flag=True,
        help="The chat template opens <think> in the prompt: output before </think> is reasoning.",
    )(func)
    func = click.option(
        "--allow-reasoning-fallback",
        is_flag=True,
        help="Score the reasoning's final statement when the visible content has none.",
    )(func)
    func = click.option(
        "--conflict-policy",
        type=click.Choice(["last", "strict"]),
        default="last",
        show_default=True,
        help="When visible final answers of the strongest kind disagree: take the last, or fail the task.",
    )(func)
    return func


def make_policy(conflict_policy: str, allow_reasoning_fallback: bool, think_prefilled: bool) -> Policy:
    return Policy(
        conflict_policy="strict" if conflict_policy == "strict" else "last",
        allow_reasoning_fallback=allow_reasoning_fallback,
        think_prefilled=think_prefilled,
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ocllm")
def app() -> None:
    """Benchmark local LLMs behind OpenAI-compatible endpoints, with an auditable scorer."""


@app.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Re-scored JSON output.")
@click.option("--report", type=click.Path(path_type=Path), help="Also write a Markdown audit here.")
@policy_options
def rescore(
    input_path: Path,
    output: Path,
    report: Path | None,
    conflict_policy: str,
    allow_reasoning_fallback: bool,
    think_prefilled: bool,
) -> None:
    """Re-score a saved run from its raw model output, without calling any model."""
    from ocllm.rescore import rescore_file

    policy = make_policy(conflict_policy, allow_reasoning_fallback, think_prefilled)
    result = rescore_file(input_path, output, policy, report)
    summary = result.document["summary"]
    out.print(summary_table(f"Re-scored {input_path.name}", summary))
    out.print(f"changed decisions: {summary['changed']}   errors: {summary['errors']}")
    out.print(f"wrote {output}")
    if report is not None:
        out.print(f"wrote {report}")


def summary_table(title: str, summary: dict) -> Table:
    table = Table(title=title)
    for column in ("scope", "correct", "total", "accuracy"):
        table.add_column(column, justify="left" if column == "scope" else "right")
    rows = [("all", summary), *summary["by_category"].items()]
    for name, figures in rows:
        table.add_row(name, str(figures["correct"]), str(figures["total"]), f"{100 * figures['accuracy']:.2f}%")
    return table


def main(argv: list[str] | None = None) -> int:
    """Entry point. Every error a user can cause ends in one line on stderr and exit code 2."""
    try:
        result = app.main(args=argv, prog_name="ocllm", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        print(exc.format_message())
        return 0
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        print(f"ocllm: error: {exc.format_message()}{hint}", file=sys.stderr)
        return 2
    except click.ClickException as exc:
        print(f"ocllm: error: {exc.format_message()}", file=sys.stderr)
        return 2
    except OcllmError as exc:
        print(f"ocllm: error: {exc}", file=sys.stderr)
        return 2
    except (click.Abort, KeyboardInterrupt):
        print("ocllm: interrupted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script wrapper: the exit code of `main`."""
    sys.exit(main())
