"""What the commands share: the option types and decorators of one grammar (`-o/--out`, `--from`, the scoring
policy, a one-off lane's settings) and the registries' lists their help shows when it is shown."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ocllm.errors import OcllmError
from ocllm.run.bounds import Bound, out_of_range
from ocllm.run.sampling import SAMPLING

if TYPE_CHECKING:
    pass



# Every command with -o: what it writes replaces an existing file only when that file is its own kind of output.
FORCE_HELP = "Replace an existing file that is not an output of this command (never one of its inputs)."


class Bounded(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3; 8.1 cannot subscript it
    """A number in its documented range (bounds.py, the table a lanes file is checked against too; a sampling
    setting's own, `bound`): NaN, infinity and a value outside the range are refused in one line naming the setting
    and the range."""

    def __init__(self, setting: str, kind: type[int] | type[float], bound: Bound | None = None) -> None:
        self.setting, self.kind, self.bound = setting, kind, bound
        self.name = kind.__name__

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | float:
        try:
            number = self.kind(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not {'an integer' if self.kind is int else 'a number'}", param, ctx)
        if (problem := out_of_range(self.setting, number, self.bound)) is not None:
            self.fail(problem, param, ctx)
        return number


# What the help pages list of the registries that ship, written down so that a help page loads no room (issue 45:
# the registries are built by importing every room, numpy and jsonschema with them, half a second of CPU). Each is
# used while its registry is not loaded; once it is (a room OCLLM_TASK_TYPES names, a test's own room), the
# registry itself, which then holds more. tests/test_cli_help.py checks that each equals its registry, and that
# every help page a fresh interpreter prints is the page printed with the registries loaded.
SHIPPED_DATASETS: tuple[tuple[str, str], ...] = (
    ("mmlu", "MMLU"), ("mmlu-pro", "MMLU-Pro"), ("gpqa", "GPQA"), ("arc", "ARC"), ("gsm8k", "GSM8K"),
    ("math", "MATH"), ("aime", "AIME"), ("ifeval", "IFEval"), ("bfcl", "BFCL"), ("humaneval", "HumanEval"),
    ("mbpp", "MBPP"), ("livecodebench", "LiveCodeBench"), ("bfcl-multi-turn", "BFCL multi-turn"),
)  # fmt: skip
TOOL_FORMATS: tuple[str, ...] = ("lm-eval", "mmlu-pro", "inspect", "evalplus")
# The folder of the shipped suites (suites.shipped_suites reads the same one).
SUITES_FOLDER = Path(__file__).parents[1] / "data" / "suites"


def shipped_suite_names() -> tuple[str, ...]:
    """The shipped suites, sorted, by their file names in the data folder, as `suites.shipped_suites` lists them:
    without importing ocllm.suites, which loads every room to check a suite's lines."""
    names = (path.name.removesuffix(".jsonl") for path in SUITES_FOLDER.iterdir() if path.name.endswith(".jsonl"))
    return tuple(sorted(names))


def _rooms_loaded() -> bool:
    return "ocllm.scoring.task_types" in sys.modules


def dataset_names() -> tuple[str, ...]:
    """What `ocllm import` takes as FORMAT: the registry's datasets once the rooms are loaded, else the shipped ones."""
    if not _rooms_loaded():
        return tuple(name for name, _ in SHIPPED_DATASETS)
    from ocllm.importers.datasets import names

    return names()


def _dataset_labels() -> str:
    if not _rooms_loaded():
        return ", ".join(label for _, label in SHIPPED_DATASETS)
    from ocllm.importers.datasets import labels

    return labels()


def _tool_formats() -> tuple[str, ...]:
    if "ocllm.formats.harnesses" not in sys.modules:
        return TOOL_FORMATS
    from ocllm.formats.harnesses import FORMATS

    return tuple(FORMATS)


# What a help text may name by `{key}`, filled when the help is shown (never at import): from the registry when it is
# loaded, else from what ships (above), so that no help page loads a room.
LISTINGS: dict[str, Callable[[], str]] = {
    "suites": lambda: ", ".join(shipped_suite_names()),
    "datasets": lambda: ", ".join(dataset_names()),
    "dataset_labels": _dataset_labels,
}


def _filled(text: str) -> str:
    for key, listing in LISTINGS.items():
        if "{" + key + "}" in text:
            text = text.replace("{" + key + "}", listing())
    return text


class Registered(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2; 8.1 cannot subscript it
    """A choice among a registry's names (the datasets the task types register, the tools `--from` reads), read
    when asked, so that a type registered after this module was loaded (a test's own room) is a choice too, and no
    help page loads a registry (the names that ship are written down above, for when it is not loaded)."""

    def __init__(self, names: Callable[[], tuple[str, ...]]) -> None:
        self._names = names
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return self._names()

    @choices.setter
    def choices(self, _value: Any) -> None:
        pass  # click.Choice sets its choices; these are the registry's


class ListingCommand(click.Command):
    """A command whose help names a registry's entries by `{key}` (LISTINGS), filled in when the help is shown.
    Its one-line summary in `ocllm --help` is its `short_help`, so that the list of commands loads no registry."""

    @property
    def help(self) -> str | None:
        return None if self._help is None else _filled(self._help)

    @help.setter
    def help(self, value: str | None) -> None:
        self._help = value


class Option(click.Option):
    """An option whose help may name a registry's entries by `{key}` (filled when shown), and which may keep
    spellings of before (`before`): they still parse, into the same value, but neither the help nor an error
    shows them. (click shows every name an option has; a hidden second option of the same name would, before
    click 8.5, overwrite the value given to the first with its own default.)"""

    def __init__(self, *args: Any, before: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.before = before

    @contextmanager
    def _shown_names(self) -> Iterator[None]:
        every = self.opts
        self.opts = [name for name in every if name not in self.before]
        try:
            yield
        finally:
            self.opts = every

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        with self._shown_names():
            record = super().get_help_record(ctx)
        return None if record is None else (record[0], _filled(record[1]))

    def get_error_hint(self, ctx: click.Context | None) -> str:
        with self._shown_names():
            return super().get_error_hint(ctx)


def out_option(help: str, *, required: bool = False, before: tuple[str, ...] = ()) -> Callable[[Any], Any]:
    """A command's output, spelled `-o/--out` in every command; `before`: its spellings of before, still read."""
    return click.option(
        "-o", "--out", *before, "out", cls=Option, before=before, type=click.Path(path_type=Path), required=required,
        help=help,
    )  # fmt: skip


def from_option(help: str) -> Callable[[Any], Any]:
    """`--from FORMAT`: another tool's result files, in every command that reads them."""
    return click.option("--from", "from_format", type=Registered(_tool_formats), cls=Option, help=help)


def policy_options(func: click.decorators.FC) -> click.decorators.FC:
    """The scoring switches of every command that scores. Each one given replaces that setting only:
    the rest stay as the run recorded them (a run directory's lane, this project's metrics file), or
    the defaults (conflict policy `last`, no fallback, no prefilled thinking) for other inputs."""
    func = click.option(
        "--think-prefilled/--no-think-prefilled",
        default=None,
        help="The chat template opens <think> in the prompt: output before </think> is reasoning.",
    )(func)
    func = click.option(
        "--allow-reasoning-fallback/--no-reasoning-fallback",
        default=None,
        help="Score the reasoning's final statement when the visible content has none.",
    )(func)
    func = click.option(
        "--conflict-policy",
        type=click.Choice(["last", "strict"]),
        help="When visible final answers of the strongest kind disagree: take the last, or fail.",
    )(func)
    func = click.option(
        "--code-runs",
        type=click.Choice(["as_written", "entry_point_only"]),
        help="Code tasks: run each program as written, or only its entry point and what it uses (evalplus's way).",
    )(func)
    return func


def policy_overrides(
    conflict_policy: str | None,
    allow_reasoning_fallback: bool | None,
    think_prefilled: bool | None,
    code_runs: str | None = None,
) -> dict[str, Any]:
    given = {
        "conflict_policy": conflict_policy,
        "allow_reasoning_fallback": allow_reasoning_fallback,
        "think_prefilled": think_prefilled,
    }
    overrides: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    if code_runs is not None:
        overrides["room_settings"] = {"code_runs": code_runs}
    return overrides



def from_options(func: click.decorators.FC) -> click.decorators.FC:
    """compare and report read another tool's results as `rescore --from` does."""
    func = click.option(
        "--filter",
        "filter_name",
        metavar="NAME",
        help="lm-eval: whose extraction is the tool's own answer (as for rescore --from).",
    )(func)
    func = from_option(
        "Read another tool's result files or folders (as rescore --from takes them), re-scored here, the tool's "
        "own verdicts kept beside this scorer's."
    )(func)
    return func


def check_filter(from_format: str | None, filter_name: str | None) -> None:
    if filter_name is not None and from_format is None:
        raise OcllmError("--filter chooses among lm-eval's filters: it needs --from lm-eval")



def lane_options(func: click.decorators.FC) -> click.decorators.FC:
    """Flags for a one-off run; with --config they override the lane's settings. Each one's name in the command's
    function is the lane setting it sets (`timeout_s` for --timeout), and a number is checked against that setting's
    range (bounds.py), so a flag and a lanes file are refused alike. Every setting the run's notices and advice tell
    a user to change is one of them, or is named there by its lanes-file key (tests/test_cli_help.py). Listed last
    shown first."""
    func = lane_setting_options(func)
    func = click.option("--resume", is_flag=True, help="Finish an interrupted run without repeating finished tasks.")(
        func
    )
    return click.option("--retry-errors", is_flag=True, help="Re-run only the tasks whose request failed.")(func)


def lane_setting_options(func: click.decorators.FC) -> click.decorators.FC:
    """The flags that set a lane's settings (`lane_options` without a run's --resume and --retry-errors)."""
    options = [
        click.option("--stream/--no-stream", default=None, help="Stream responses (records time to first token)."),
        click.option("--api-key-env", help="Name of the environment variable holding the API key."),
        click.option("--concurrency", type=Bounded("concurrency", int), help="Requests in flight at once."),
        click.option(
            "--samples",
            "samples_per_task",
            type=Bounded("--samples", int),
            help="Ask each task K times (sample i sends seed + i); accuracy is then avg@K, with pass@K and maj@K.",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=Bounded("timeout_s", float),
            help="Seconds one request may take, connection to last byte (the lane's timeout_s).",
        ),
        click.option(
            "--system-prompt",
            help="The system message sent first with every task (the lane's system_prompt; default: none, the "
            "chat template's own).",
        ),
        # The sampling settings, one flag each, as declared (run/sampling.py), shown in their order.
        *(
            click.option(s.flag, s.key, type=Bounded(s.key, s.kind, s.bound), help=s.help)
            for s in reversed(SAMPLING.values())
        ),
        click.option("--reasoning", type=click.Choice(["off", "native"]), help="Ask the chat template to think."),
        click.option("--model", help="Model name as the server knows it."),
        click.option("--base-url", help="Endpoint, e.g. http://127.0.0.1:8000/v1"),
        click.option("--suite", cls=Option, help="A shipped suite ({suites}) or a JSONL file."),
    ]
    for option in options:
        func = option(func)
    return func


def preflight_option(func: click.decorators.FC) -> click.decorators.FC:
    """`--preflight`: the probes of each lane's server path before its first task (run/preflight.py)."""
    return click.option(
        "--preflight", type=click.Choice(["on", "off", "strict"]), default="on", envvar="OCLLM_PREFLIGHT",
        show_default=True,
        help="Probe each lane's server path before its first task (a few requests): say what will distort the run "
        "(on), stop the lane on it (strict), or send none (off; also OCLLM_PREFLIGHT=off).",
    )(func)  # fmt: skip


NO_SERVER_HELP = "Ignore the lanes' [server] tables: run against whatever already answers at base_url."
SHARD_HELP = "Run only shard K of N (K from 0): the tasks whose stable hash of the id falls in it. Join with merge."



def file_name(label: str) -> str:
    """A run's label as a folder name: a model's "org/name" or spaces made safe."""
    return re.sub(r"[^\w.+-]+", "_", label).strip("_.") or "run"
