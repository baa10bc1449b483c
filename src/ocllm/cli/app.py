"""The `ocllm` command group; each command module adds its commands to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ocllm import __version__

if TYPE_CHECKING:
    pass



@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ocllm")
def app() -> None:
    """Benchmark local LLMs behind OpenAI-compatible endpoints, with an auditable scorer."""
