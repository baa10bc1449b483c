"""What a task type is to the rest of the system: one room (docs/architecture.md, "Task types").

A type owns its task fields and their checks (a suite line, a saved record of the old harness's format), its
prompt as chat messages and its default template, any lane settings of its own and what its request sends besides
the messages, `decide`, the figures it adds to a summary and the words reports draw its evidence with. Suites,
prompting, the runner, rescoring, metrics and reports ask the type (`ocllm.scoring.task_types.of`) and never
branch on its name; adding a type is writing its room and registering it in task_types.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NamedTuple, NotRequired, Protocol, TypedDict, TypeVar

from ocllm.models import Decision, NextTurn, Policy, Sample, Task
from ocllm.scoring.dataset_rows import Dataset
from ocllm.scoring.other_harnesses import HarnessMapping, LmEvalMapping
from ocllm.scoring.scored import DecisionT, TaskT
from ocllm.scoring.scored import Record as Record  # a task's record in a document, as its JSON says it
from ocllm.scoring.scored import Scored as Scored  # a room's hooks take it: a room may name it from here
from ocllm.scoring.simulated import SimulatedAnswerer
from ocllm.scoring.task_view import TaskView
from ocllm.scoring.text_calls import FORMAT_WORDS

# A room's task struct and its decision struct (scoring/scored.py declares them). A room's functions take its own
# structs (`TaskType[McqTask, McqDecision]`'s gold takes an McqTask, its task_view a `Scored[McqTask, McqDecision]`),
# and the checker holds its `TaskType(...)` to that. Covariant and by default the base structs: the registry and
# everything that asks it hold any room as `TaskType` (a `TaskType[Task, Decision]`) and hand a task or a record only
# to its own room's functions (`of(task.type)` by its tag, `task_types.scored` decoding a record into the room's
# structs), which the checker cannot see: that contract, not the types, keeps an mcq room from a math task.

# What a tally takes: its room's decision struct (contravariant: a tally of any Decision would take a room's).
_DecisionIn = TypeVar("_DecisionIn", bound=Decision, contravariant=True)


class TypeTally(Protocol[_DecisionIn]):
    """Figures a type adds to a summary, counted as its decisions arrive (math: checks that were killed). A tally
    is handed its room's decisions alone (`task_types.TypeTallies`: a failed request's base Decision is counted
    with the common figures), and reads their fields as the struct declares them. A tally may also have
    `text_calls() -> TextCalls | None` (tool_call's does): calls its answers wrote as text, which the advice about
    the server is made from (`advice.py`)."""

    def add(self, decision: _DecisionIn) -> None: ...

    def figures(self) -> dict[str, Any]: ...

    def notices(self) -> list[str]: ...  # what a user must be told of these figures (none: [])


class TextCalls(NamedTuple):
    """Calls the answers wrote as text that the server's tool parser did not take: what the room says of them,
    and what advice about the server needs (which formats, where). The advice is not the room's: which flag of
    which server reads a format is knowledge of servers, kept in one place for every kind of advice."""

    said: str  # the room's sentence of the facts ("3 of 10 ... answers wrote their calls as text ...")
    by_format: dict[str, int]  # answers per format found ("hermes", "mistral", "llama_python_tag", "json", ...)
    by_where: dict[str, int]  # answers per field the calls stood in ("content", "reasoning")
    format_words: dict[str, str]  # each format found, in words ("<tool_call> tags (Hermes, Qwen)")


def text_calls_of(
    counted: int, of: str, by_format: Mapping[str, int], by_where: Mapping[str, int], after: str
) -> TextCalls:
    """The calls `counted` answers of `of` ("10 tool_call answer(s)") wrote as text, by format and by where, with the
    room's `after` (what became of them), in the one sentence the advice about the server starts from."""
    formats = ", ".join(f"{fmt} ({n})" for fmt, n in sorted(by_format.items()))
    where = " and ".join(f"{n} in the {w}" for w, n in sorted(by_where.items()))
    said = (
        f"{counted} of {of} wrote their calls as text, not in tool_calls ({where}; format {formats}): the server's "
        f"tool parser did not take them, so {after}"
    )
    words = {fmt: FORMAT_WORDS.get(fmt, fmt) for fmt in by_format}
    return TextCalls(said, dict(sorted(by_format.items())), dict(sorted(by_where.items())), words)


def _no_option_count(_task: Task) -> int | None:
    return None


def _gold_as_given(task: Task) -> str | None:
    return task.answer


def _as_given(record: Record, key: str) -> str:
    value = record.get(key)
    return "—" if value is None else str(value)


# The gold and the answer as every record gives them (a failed request's and an input's `previous` too).
def _gold_as_written(scored: Scored) -> str:
    return _as_given(scored.record, "expected_answer")


def _answer_as_stated(scored: Scored) -> str:
    return _as_given(scored.record, "extracted_final_answer")


def _no_evidence(_scored: Scored) -> list[tuple[str, str]]:
    return []


class Compared(Protocol):
    """One side of a task in a comparison, as the comparison holds it (analysis/compare.py's ScoredTask): its verdict
    and how it was reached, never a room's evidence (a comparison of runs read as recorded has none to give)."""

    @property
    def task_id(self) -> str: ...

    @property
    def sample(self) -> int: ...  # which of the task's samples (samples are paired by it)

    @property
    def correct(self) -> bool | None: ...

    @property
    def error(self) -> str | None: ...  # a failed request's

    @property
    def rule(self) -> str | None: ...  # the rule that decided (a code decision's is its outcome); None: not recorded

    @property
    def method(self) -> str | None: ...

    @property
    def extracted(self) -> str | None: ...

    @property
    def truncated(self) -> bool: ...


class DetailTable(NamedTuple):
    """A table a type draws of its own summary figures (instructions: IFEval's figures per instruction kind)."""

    title: str
    header: list[str]
    rows: list[list[str]]


def _no_tables(_details: Mapping[str, Any]) -> list[DetailTable]:
    return []


class Message(TypedDict):
    """One chat message in OpenAI's shape, sent as it stands in the request's `messages`. A room that asks in
    several turns (few-shot examples as assistant turns, a tool's result) writes them as such; `tool_calls` and
    `tool_call_id` are for a room that replays earlier calls and their results."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: NotRequired[list[dict[str, Any]]]
    tool_call_id: NotRequired[str]


@dataclass(frozen=True)
class PromptSettings:
    """What a lane says of a type's prompt: its template for the type (the room's default unless the lane sets one)
    and the lane's system prompt (None: no system message)."""

    template: str
    system_prompt: str | None = None


def chat(settings: PromptSettings, user: str) -> list[Message]:
    """The usual prompt: the lane's system prompt, if it has one, then one user message. The messages every room
    sent before prompts were messages, so its requests stay the same bytes."""
    messages: list[Message] = []
    if settings.system_prompt:
        messages.append({"role": "system", "content": settings.system_prompt})
    messages.append({"role": "user", "content": user})
    return messages


@dataclass(frozen=True, kw_only=True)
class LaneSetting:
    """A lane setting a room declares of its own (tool_call's `tool_choice`): written at the lane's top level (or in
    [defaults]) under its name, checked by the room, and handed to the room's `request_fields`."""

    default: Any
    problem: Callable[[object], str | None]  # what is wrong with a value, in words ("must be one of ..."), or None


def _claims_no_record(_record: Mapping[str, Any]) -> bool:
    return False


def _no_request_fields(_task: Task, _settings: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True, kw_only=True)
class TaskType(Generic[TaskT, DecisionT]):
    """A room, generic in its task struct and its decision struct (`task_struct`, `decision_type`; `TaskT` above
    says why)."""

    name: str  # the suite line's `type`, a decision's `task_type`
    label: str  # what reports call it ("multiple choice")
    # Its task struct: a subclass of Task holding the type's own fields, tagged with `name` (a suite line, a saved
    # record decodes into it; scoring/task_types.py checks the tag).
    task_struct: type[TaskT]
    # Its decision struct: a subclass of Decision holding its evidence and the closed sets of its rule, method and
    # ambiguity (a failed request's decision is the base Decision). A record read back decodes into it
    # (`task_types.scored`), and the room's tally is handed these alone.
    decision_type: type[DecisionT]
    decide: Callable[[TaskT, Sample, Policy], Decision]  # pure, given its task struct: docs/scoring/<type>.md
    # A conversation: after each reply, what is sent next (the calls' results, the next user message) or that the
    # episode has ended, from the task and the episode so far (a Sample whose `turns` hold every request and reply),
    # under the lane's policy (its room settings hold the episode's bounds). Pure, as `decide` is; run in a decision
    # worker, never in the event loop (run/conversation.py sends what it says). None: one request is the task.
    next_turn: Callable[[TaskT, Sample, Policy], NextTurn] | None = None
    gold: Callable[[TaskT], str | None] = _gold_as_given  # a decision's expected_answer (a failed request's too)
    # A suite line's own fields checked (raises InputError naming the line and the field), before it becomes a Task.
    check_suite_line: Callable[[str, dict[str, Any]], None]
    # A record of the old harness's metrics format (and of every rescore) -> the Task fields that are the type's
    # (e.g. options and the gold letter), checked; raises InputError naming the record.
    saved_task_fields: Callable[[str, dict[str, Any]], dict[str, Any]]
    # The task's fields in its output record, between `subset` and `prompt` (what a later rescore reads back).
    record_fields: Callable[[TaskT], dict[str, Any]]
    # Its prompt template: a lane's `templates.<name>` replaces the default (run/lanes.py checks it).
    default_template: str
    template_placeholders: tuple[str, ...]  # what its template may use; the first ones listed must appear
    required_placeholders: tuple[str, ...]
    # The chat messages of a task's request: the task through the lane's template, with the lane's system prompt
    # (`chat` for a system prompt and one user message; a room may add few-shot turns or a system message of its
    # own). The last user message is the prompt a scorer reads a format instruction from (`Sample.sent_prompt`).
    prompt: Callable[[TaskT, PromptSettings], list[Message]]
    # The lane key lanes files (and every manifest's lane record) wrote its template under before templates were one
    # table ("prompt_template", "math_template", ...): still read, and still the key the record keeps it under, so
    # that manifests read as they did. None for a type that came later: its template is recorded under `templates`.
    template_key_before: str | None = None
    # Lane settings of its own (tool_call: `tool_choice`), by their key: no two rooms declare one key, and none is a
    # key of the lane's own (run/lanes.py checks both when it is imported).
    lane_settings: Mapping[str, LaneSetting] = field(default_factory=dict)
    # What its request carries besides the messages (a tool_call task's `tools` and `tool_choice`), from the task and
    # the values of its own lane settings; the lane's extra_body still wins.
    request_fields: Callable[[TaskT, Mapping[str, Any]], dict[str, Any]] = _no_request_fields
    # Reports: the gold and the answer as words, and any evidence of the type's own as (label, text) lines. Each
    # takes the record read as the room's (scoring/scored.py): its decision None for a failed request and for a
    # record that is no decision of the room (an input's `previous`, which the audit puts in the room's words too).
    expected_text: Callable[[Scored[TaskT, DecisionT]], str] = _gold_as_written
    extracted_text: Callable[[Scored[TaskT, DecisionT]], str] = _answer_as_stated
    evidence_lines: Callable[[Scored[TaskT, DecisionT]], list[tuple[str, str]]] = _no_evidence
    # Reports: the run report's view of one task, in blocks the templates draw for any type (facts, options with
    # their marks, the statements found, tables: scoring/task_view.py). None: its evidence_lines as facts, no more.
    task_view: Callable[[Scored[TaskT, DecisionT]], TaskView] | None = None
    # Reports: the type's own summary figures (`by_type[type].details`) in one line of words (None: each figure as
    # "name value"), and any tables of them.
    detail_words: Callable[[Mapping[str, Any]], str] | None = None
    detail_tables: Callable[[Mapping[str, Any]], list[DetailTable]] = _no_tables
    # Comparisons: tables of its tasks' two sides paired, task by task (code: how many tasks went from each outcome on
    # A to each on B), from each pair of sides as the comparison holds them (`Compared`: the verdict, the rule, the
    # error), and the two sides' labels. Every task of the type that both sides ran is given, failed requests and
    # unscored ones too; samples are paired by their index. None: no tables of its own.
    pair_tables: Callable[[Sequence[tuple[Compared, Compared]], str, str], list[DetailTable]] | None = None
    option_count: Callable[[TaskT], int | None] = _no_option_count  # for the chance level; None: no chance level
    # True: an answer is extracted from the text (no answer = nothing extracted). False: the whole visible text
    # is the answer (no answer = no visible text), and a pass is judged on the text as it stands (a cut text too).
    extracts_answer: bool = True
    # A type whose text is the answer (extracts_answer False): what its passes are called, and what a pass on a
    # cut text held, for the notice of passes that came from truncated output.
    passes_word: str = "passes"
    cut_pass_held: str = "the text passed, but the answer was not finished"
    new_tally: Callable[[], TypeTally[DecisionT]] | None = None
    # The suite `make demo` shows the type with: a shipped suite's name or a suite file. A type whose suite none of
    # the demo's lane groups runs gets two lanes of its own (reasoning off and on, demo.py); None: not in the demo.
    demo_suite: str | None = None
    # The simulator's answer to its tasks, and to a prompt the simulator does not know that it claims (tools offered,
    # lettered options), or None to leave the plain sentence (`ocllm.scoring.simulated` says who is asked when).
    # None: the simulator answers its tasks with the plain sentence.
    simulated_answer: SimulatedAnswerer | None = None
    # The datasets `ocllm import` reads into tasks of this type: each one's name, files and row -> Task mapping
    # (scoring/dataset_rows.py); the importers read the files and list the names.
    datasets: tuple[Dataset, ...] = ()
    # Other tools' files (scoring/other_harnesses.py says the split): the lm-eval docs it reads, and the tools whose
    # files' records are all its tasks, by the tool's name ("mmlu-pro", "inspect").
    lm_eval: LmEvalMapping | None = None
    harness_records: Mapping[str, HarnessMapping] = field(default_factory=dict)
    # An old-harness record that names no task_type is the first type's (in the registry's order) that claims it.
    claims_untyped: Callable[[Mapping[str, Any]], bool] = _claims_no_record
