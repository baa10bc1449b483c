"""`ocllm serve-sim`: the simulator on loopback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ocllm.run.bounds import out_of_range

if TYPE_CHECKING:
    pass

from ocllm.cli.app import app
from ocllm.cli.options import Bounded, Option


@app.command("serve-sim")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback by default).")
@click.option("--port", default=8000, show_default=True, type=Bounded("--port", int), help="Port to listen on.")
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="NAME=ACCURACY",
    help="A simulated model and its accuracy (repeatable). Default: sim-baseline=0.85, sim-reasoning=0.93.",
)
@click.option(
    "--latency",
    "latency_s",
    type=Bounded("--latency", float),
    default=0.0,
    show_default=True,
    help="Seconds per response.",
)
@click.option(
    "--truncation-rate",
    type=Bounded("--truncation-rate", float),
    default=0.03,
    show_default=True,
    help="Share of answers with reasoning on that are cut off (finish_reason: length).",
)
@click.option(
    "--reasoning-field",
    type=click.Choice(["reasoning_content", "reasoning"]),
    default="reasoning_content",
    show_default=True,
    help="The field the reasoning is sent in (vLLM and SGLang: reasoning_content; newer vLLM: reasoning).",
)
@click.option(
    "--seed",
    type=Bounded("--seed", int),
    default=0,
    show_default=True,
    help="Seed of every draw the simulator makes (with the request's own seed when sampling).",
)
@click.option(
    "--suite",
    "suites",
    multiple=True,
    cls=Option,
    help="A suite whose gold answers it knows, shipped or a JSONL file (repeatable; default: every shipped one: "
    "{suites}).",
)
@click.option(
    "--tool-parser",
    type=click.Choice(["structured", "none", "reasoning"]),
    default="structured",
    show_default=True,
    help="Where tool calls go: message.tool_calls, text in the content (no parser), or text in the reasoning.",
)
@click.option(
    "--tool-format",
    type=click.Choice(["mixed", "hermes", "json", "mistral", "llama", "pythonic"]),
    default="mixed",
    show_default=True,
    help="How a tool call written as text is written (mixed: one drawn per answer).",
)
def serve_sim(host: str, port: int, models: tuple[str, ...], suites: tuple[str, ...], **settings: Any) -> None:
    """Serve the built-in SIMULATOR (a fake vLLM-like server; it runs no model) on loopback."""
    from ocllm.sim import SimConfig, serve
    from ocllm.suites import resolve_suite, shipped_suites

    accuracy: dict[str, float] = {}
    for item in models:
        name, _, value = item.partition("=")
        try:
            accuracy[name] = float(value)
        except ValueError:
            raise click.BadParameter(f"{item!r} is not NAME=ACCURACY", param_hint="--model") from None
        if (problem := out_of_range("--model NAME=ACCURACY", accuracy[name])) is not None:
            raise click.BadParameter(f"{item!r}: {problem}", param_hint="--model")
    paths = tuple(resolve_suite(s) for s in suites) or tuple(shipped_suites().values())
    # No --model: SimConfig's own default models.
    config = SimConfig(suites=paths, models=accuracy, **settings) if accuracy else SimConfig(suites=paths, **settings)
    serve(config, host, port)
