"""The typed documents every output shares, produced once and read through these types everywhere.

A document read back from a file (an earlier metrics.json, a report's data) is converted to its type at
the boundary (`msgspec.convert`), so a consumer never re-states its shape with keys and defaults.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class Figures(msgspec.Struct, kw_only=True):
    """Counts of one scope (a run, a category): failed requests are counted apart and never scored."""

    total: int
    correct: int
    errors: int = 0
    # Answers decided without a verdict (`correct` None beside no error: a code task no sandbox could run), neither
    # right nor wrong: left out of `scored` as failed requests are, and said in a notice by the type's tally.
    unscored: int = 0
    scored: int  # total - errors - unscored: what the accuracy is measured on
    accuracy: float | None  # correct / scored; None where nothing was scored (0 of 0 is no accuracy, not 0%)
    # Scored tasks the scorer found no answer in (a response with nothing extracted, not a failed request):
    # counted among the wrong in `accuracy`, and shown apart, since a model that answers nothing is not one
    # that answers badly. Wrong answers: scored - correct - no_answer.
    no_answer: int = 0
    # Repeated samples (docs/statistics.md). `total`, `scored` and `accuracy` count samples: with k per task the
    # accuracy is avg@k. k = 1 gives the same figures as before (avg@1 = pass@1 = the accuracy).
    samples_per_task: int = 1  # the most samples any task of the scope has
    tasks_scored: int = 0  # tasks with at least one scored sample: the clusters of the standard error
    accuracy_stderr: float | None = None  # the accuracy's standard error, clustered on tasks (None: under 2 tasks)
    pass_at_k: dict[str, float] = msgspec.field(default_factory=dict)  # "1".."k": Chen et al.'s unbiased estimate
    # "1".."k": pass^j, all j samples right (tau-bench's estimate): how reliably, beside pass@k's whether at all.
    pass_hat_k: dict[str, float] = msgspec.field(default_factory=dict)
    majority_at_k: float | None = None  # share of tasks whose gold answer is strictly the most frequent


class TypeFigures(Figures, kw_only=True):
    """The figures of one task type in a summary, with the ones only that type has (its room's tally: a math
    run's killed symbolic checks, say)."""

    details: dict[str, Any] = msgspec.field(default_factory=dict)


class Serving(msgspec.Struct, kw_only=True):
    """How fast the lane was served, over its wall time (the time its requests were in flight, summed over
    every invocation of the run): throughput beside accuracy, for a matrix of server settings."""

    wall_s: float
    requests: int  # HTTP requests sent, retries included
    # None where no rate was measured: no request was answered, or the wall time rounds to 0 (summary_words)
    requests_per_s: float | None
    answers: int  # tasks that got a response
    output_tokens: int | None = None  # completion tokens the server reported (None: it reported none)
    output_tokens_per_s: float | None = None
    ttft_p50_s: float | None = None  # time to first token: streamed lanes only
    ttft_p95_s: float | None = None
    ttft_samples: int = 0
    endpoints: list[dict[str, Any]] = msgspec.field(default_factory=list)  # per replica, when several
    # Seconds the scorer went on after the last response (the decisions still waiting then): outside the wall time,
    # so that the figures above are the server's. None: not recorded (a run of before, another tool's).
    scoring_tail_s: float | None = None


class PromptTokens(msgspec.Struct, kw_only=True):
    """The prompt tokens of a run's requests, as the server's `usage.prompt_tokens` said them: each request of a
    conversation counted as one. What an agent's context (a long system prompt, many tools) costs of the server's
    context, beside the same tasks run bare."""

    mean: float
    max: int
    requests: int  # the requests whose usage said their prompt tokens


class UnscorableRecord(msgspec.Struct, kw_only=True):
    """A record of another tool's file this scorer cannot score (a question with one option, an answer not
    among its options, no response text): left out of the tasks and of every figure, both sides', and listed
    with why, so that the rest of the file is audited."""

    task_id: str  # the id it would have had (`record #N` when it has none)
    file: str
    where: str  # its place in the file: `question 6921`, `line 12 (doc 3)`, `samples/7_epoch_1.json`
    reason: str


class TaskAgreement(msgspec.Struct, kw_only=True):
    """One task's samples: how many were scored, how many right, and whether they agree."""

    samples: int  # scored samples (failed requests are not samples of the task)
    correct: int
    share: float  # correct / samples
    agree: bool  # every scored sample gave the same answer (all right, or all the same wrong answer)
    majority: bool  # maj@k credits it: the gold answer is strictly the most frequent


class Summary(Figures, kw_only=True):
    """A scored run's summary (the `summary` of metrics.json and of every rescore): its figures, then these."""

    by_category: dict[str, Figures] = msgspec.field(default_factory=dict)
    by_type: dict[str, TypeFigures] = msgspec.field(default_factory=dict)  # per task type, in name order
    by_ambiguity: dict[str, int] = msgspec.field(default_factory=dict)
    by_method: dict[str, int] = msgspec.field(default_factory=dict)
    by_source: dict[str, int] = msgspec.field(default_factory=dict)
    # Answers cut off at max_tokens (finish_reason "length"), counted among the answers that recorded a finish
    # reason. None: no answer recorded one (lm-eval's samples, the MMLU-Pro scripts' results), so whether any was
    # cut off is not recorded, which 0 would misstate.
    truncated: int | None = 0
    # The scored answers that finished (not cut off at max_tokens), and the correct among them: the accuracy a
    # lane has where its budget did not decide (summary_words.censoring_words). None where truncation is not known.
    finished_scored: int | None = None
    finished_correct: int | None = None
    # Answered samples (not failed requests) whose finish_reason was recorded; None in documents written before it
    # was counted. Fewer than the answered: truncation is known only for these.
    finish_reasons: int | None = None
    # The prompt tokens of the requests (mean, max, how many said); absent when no request's usage said them.
    prompt_tokens: PromptTokens | msgspec.UnsetType = msgspec.UNSET
    # Failed requests the server refused because the prompt and max_tokens do not fit its context (counted in
    # `errors` too): what an agent's context costs when it leaves no room for the answer.
    refused_context: int = 0
    changed: int = 0  # decisions whose verdict differs from the input's own
    tasks_in_suite: int = 0
    missing: int = 0  # tasks of the suite that never ran
    complete: bool = True  # every task of the suite ran (failed requests are counted in `errors`)
    scorer: dict[str, Any] = msgspec.field(default_factory=dict)  # the scorer version and the policy
    serving: Serving | None = None  # a run's throughput (None for inputs that did not record their time)
    unscorable: int = 0  # records of the input this scorer cannot score: in neither `total` nor `missing`
    unscorable_records: list[UnscorableRecord] = msgspec.field(default_factory=list)  # each, with why
    # The accuracy's standard error clustered on category (tasks of one category share more than their tasks do):
    # a second cluster level, shown where it is larger than the task-clustered one. None: under two categories.
    categories: int = 0
    accuracy_stderr_category: float | None = None
    # Each task's samples, with samples_per_task > 1: how many were right and whether they agree.
    by_task: dict[str, TaskAgreement] = msgspec.field(default_factory=dict)
    # The input's own verdicts against this scorer's, per task type and per the tool's task (rescore only; None
    # when the input recorded no verdict, and in a run's metrics.json).
    input_verdicts: InputVerdicts | None = None

    @property
    def all_answered(self) -> bool:
        """Every task of the suite ran and has an answer: what exit code 0 means."""
        return self.complete and not self.errors


def as_summary(value: Summary | dict[str, Any]) -> Summary:
    """A summary, whether made here or read back from a document (extra keys, such as intervals, ignored)."""
    return value if isinstance(value, Summary) else msgspec.convert(value, Summary)


class Paired(msgspec.Struct, kw_only=True):
    """Two lanes on the same tasks: each side's accuracy and interval, the discordant pairs, the test of the
    difference (B - A) and its interval, and the sentence saying it (docs/statistics.md).

    With one sample per task on both sides: the exact McNemar test and the interval that matches it
    (stats.exact_paired_interval). With more,
    each task's share of correct samples is paired: `diff` is the mean of the per-task differences, its interval
    and test Student's t (tasks - 1 degrees of freedom) on their task-clustered standard error; `a_wins` and
    `b_wins` count the tasks whose share is higher on that side, `both_correct` and `both_wrong` those all right
    or all wrong on both.

    A figure that was not measured is None (null in every document), never a placeholder: with no paired task the
    accuracies, intervals, difference and test; with repeated samples and one paired task the intervals and the test
    (a spread needs two tasks); the standard errors and the detectable difference under two tasks."""

    n_paired: int
    a_correct: int
    b_correct: int
    a_accuracy: float | None
    b_accuracy: float | None
    a_ci_low: float | None
    a_ci_high: float | None
    b_ci_low: float | None
    b_ci_high: float | None
    a_wins: int
    b_wins: int
    both_correct: int
    both_wrong: int
    mcnemar_p: float | None  # the exact McNemar p (one sample per task on both sides); None with more or none paired
    diff: float | None
    diff_ci_low: float | None
    diff_ci_high: float | None
    significant: bool
    verdict: str
    a_no_answer: int = 0  # paired tasks each side gave no answer to (among its wrong ones)
    b_no_answer: int = 0
    test: str = "exact McNemar"  # the test `p_value` is of ("exact McNemar", or "paired t" with samples)
    # None where no test was made; and in documents written before `p_value`, whose test is `mcnemar_p` (a default of
    # 1.0 here would read as a test that found nothing).
    p_value: float | None = None
    samples_per_task_a: int = 1
    samples_per_task_b: int = 1
    # With repeated samples: each side's scored samples on the paired tasks (what a_correct and b_correct are of);
    # 0 with one sample per task, where they are of n_paired.
    a_samples: int = 0
    b_samples: int = 0
    diff_stderr: float | None = None  # of the mean per-task difference, clustered on tasks (None: under 2 tasks)
    # The same clustered on category, a second level of clustering (None: under 2 categories); `verdict` says so
    # where it is larger and its interval holds no difference while the task-level one does.
    categories: int = 0
    diff_stderr_category: float | None = None
    # The smallest difference a comparison of this size detects with 80% power at the 5% level (two-sided):
    # (z_0.975 + z_0.8) * diff_stderr. None where the standard error is 0 (the sides never disagree).
    minimum_detectable_effect: float | None = None


class ScopeVerdicts(msgspec.Struct, kw_only=True):
    """The input's verdicts (side A) against this scorer's (side B) on one scope of a rescore: a task type, or one
    of the other tool's own tasks within a type (lm-eval's gsm8k and minerva_math500 are both math)."""

    paired: Paired | None = None  # None when no sample of the scope was paired: no statistic is drawn on nothing
    unpaired: int = 0  # samples of the scope left out: the request failed, or the input recorded no verdict


class TypeVerdicts(ScopeVerdicts, kw_only=True):
    """A task type's verdicts, and each of the tool's own tasks of that type apart."""

    by_task: dict[str, ScopeVerdicts] = msgspec.field(default_factory=dict)  # in name order; {}: the tool names none


class InputVerdicts(msgspec.Struct, kw_only=True):
    """Another tool's (or a saved run's) own verdicts against this scorer's, per task type and per the tool's task
    within a type: each is a headline of its own, since a letter, a number and an instruction are scored by rules
    of different kinds. `pooled` is over every type; with several types it is labelled as pooled, never a headline."""

    label: str  # whose verdicts side A is: the tool ("lm-eval"), or "the input"
    by_type: dict[str, TypeVerdicts] = msgspec.field(default_factory=dict)  # in name order
    pooled: Paired | None = None  # every paired sample of every type (None: none was paired)
    unpaired: int = 0


class Side(msgspec.Struct, kw_only=True):
    label: str
    path: str
    missing: int = 0  # tasks of its suite it never ran
    tasks_in_suite: int | None = None
    serving: Serving | None = None  # how fast it was served (None: the input did not record its wall time)
    # The prompt tokens of its requests (None: no request's usage said them): what an agent's context adds.
    prompt_tokens: PromptTokens | None = None
    # The other harness whose results the side is (rescore --from, compare --from): written as `tool`, the key
    # documents have always had (in the code, "tool" is function calling and another harness is a "harness").
    tool: str | None = None
    settings: dict[str, str] = msgspec.field(default_factory=dict)  # what it ran with (run_settings); {}: unknown
    # Each task type's own figures of this side (its summary's by_type details: a tool lane's dropped calls); {}
    # when the side was not re-scored.
    type_details: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    simulated: bool = False  # the ocllm simulator answered it (its manifest says so): its pages say so


class FlipSide(msgspec.Struct, kw_only=True):
    """What one side answered on a flipped task: its visible answer and reasoning (each cut at FLIP_TEXT_LIMIT
    characters) and the decision's evidence."""

    content: str | None = None
    reasoning: str | None = None
    rule: str | None = None
    reason: str | None = None
    method: str | None = None


FLIP_TEXT_LIMIT = 20_000  # characters of a flipped task's answer or reasoning kept in comparison.json


class Flip(msgspec.Struct, kw_only=True):
    task_id: str
    category: str
    expected: str | None
    a_extracted: str | None
    b_extracted: str | None
    winner: Literal["a", "b"]
    a_side: FlipSide | None = None  # None in comparisons written before the sides were kept
    b_side: FlipSide | None = None
    # With repeated samples: each side's share of correct samples (the sides show their first sample).
    a_share: float | None = None
    b_share: float | None = None


class TypeTable(msgspec.Struct, kw_only=True):
    """A table a task type draws of its own in a comparison (`TaskType.pair_tables`: a code run's outcomes on A
    against those on B), with the type it is of."""

    task_type: str
    title: str
    header: list[str]
    rows: list[list[str]]


class ServerPaths(msgspec.Struct, kw_only=True):
    """Two lanes served by different server software (analysis/server_paths.py): how often they agree task by task,
    and where their answers differ, each such task under the first cause that tells them apart."""

    kinds: list[str]  # side A's server kind, then side B's
    paired: int  # tasks both sides answered (their first samples)
    same_verdict: int
    same_answer: int  # the same extracted answer (the same verdict, too)
    # Cause -> the tasks whose answers differ by it, in task order: "truncation" (one side cut off at max_tokens),
    # "channel" (one side's answer only in the reasoning field), "call format" (one side's calls structured, the
    # other's left as text), "answer" (none of these: the answers themselves differ).
    differ: dict[str, list[str]] = msgspec.field(default_factory=dict)
    said: str = ""


class Comparison(Paired, kw_only=True):
    """comparison.json: two runs paired by task id, overall (the inherited figures) and per category."""

    format: str = "ocllm-comparison/1"
    chance: float | None = None  # accuracy at random on A's suite (mean of 1/options; None: no MCQ task)
    scorer_version: str | None = None  # when both sides were re-scored
    rescored: bool = True
    a: Side
    b: Side
    notices: list[str] = msgspec.field(default_factory=list)
    only_in_a: list[str] = msgspec.field(default_factory=list)
    only_in_b: list[str] = msgspec.field(default_factory=list)
    unpaired_errors: list[str] = msgspec.field(default_factory=list)  # failed on either side
    by_category: dict[str, Paired] = msgspec.field(default_factory=dict)
    by_type: dict[str, Paired] = msgspec.field(default_factory=dict)  # per task type, when the suite mixes them
    flips: list[Flip] = msgspec.field(default_factory=list)
    resources: dict[str, Any] = msgspec.field(default_factory=dict)  # tokens and latency per side
    # With repeated samples: each paired task's difference of shares (B - A), in task order, for its histogram.
    task_differences: list[float] = msgspec.field(default_factory=list)
    # Each task type's own tables of the two sides paired (TaskType.pair_tables), in type name order.
    pair_tables: list[TypeTable] = msgspec.field(default_factory=list)
    # The scores beside their censoring (compare.censoring_of): each side's accuracy on the paired answers that
    # finished and its share cut off, the difference on the tasks both finished, and whether the difference is mostly
    # truncation. None where a side recorded no finish_reason.
    censoring: dict[str, Any] | None = None
    # Lanes whose server kinds differ (the same weights behind vLLM and llama-server, say): agreement task by task and
    # what tells their answers apart. None where the kinds are the same or not known.
    server_paths: ServerPaths | None = None


class Estimate(Figures, kw_only=True):
    """A scope's figures with the 95% interval of its accuracy, and which interval that is (`ci_method`:
    sampled.interval_method; None where nothing was scored, and in documents written before it was said)."""

    ci_low: float | None  # None where there is no interval: nothing scored, or one task (with repeated samples)
    ci_high: float | None
    ci_method: str | None = None


class MatrixLane(Estimate, kw_only=True):
    """One lane of a matrix: its figures and interval, per category, its tokens and latency, and how fast
    it was served."""

    label: str
    path: str
    truncated: int = 0
    # Its scored answers that finished (not cut off) and the correct among them; None: truncation not recorded.
    finished_scored: int | None = None
    finished_correct: int | None = None
    missing: int = 0
    complete: bool = True
    by_category: dict[str, Estimate] = msgspec.field(default_factory=dict)
    by_type: dict[str, Estimate] = msgspec.field(default_factory=dict)  # per task type, when the suite mixes them
    resources: dict[str, Any] = msgspec.field(default_factory=dict)
    serving: Serving | None = None  # None: the run did not record its wall time
    chance: float | None = None  # accuracy at random on its tasks (mean of 1/options; None: no MCQ task)
    settings: dict[str, str] = msgspec.field(default_factory=dict)  # what it ran with (run_settings); {}: unknown
    type_details: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)  # as Side.type_details
    # Its place on the leaderboard, 1 the best; None: not ranked, for the reason `not_ranked` gives (nothing scored,
    # or a suite other than the baseline's, whose accuracy is over other tasks). Documents written before: None.
    rank: int | None = None
    not_ranked: str | None = None
    suite: str | None = None  # the suite's name, where the run says
    simulated: bool = False  # as Side.simulated


class Matrix(msgspec.Struct, kw_only=True):
    """matrix.json: the lanes of a folder, best first (the lanes not ranked last), and each compared with the
    baseline lane on the tasks both ran."""

    format: str = "ocllm-matrix/1"
    folder: str
    baseline: str
    notices: list[str] = msgspec.field(default_factory=list)
    lanes: list[MatrixLane] = msgspec.field(default_factory=list)
    comparisons: list[Comparison] = msgspec.field(default_factory=list)


class MetricsDocument(msgspec.Struct, kw_only=True):
    """metrics.json and every rescore's output: where the run came from, its summary and notices, and one
    record per task (the decision with its evidence, the raw output, the input's own decision)."""

    format: str = "ocllm-metrics/1"
    harness_version: str
    source: dict[str, Any]
    summary: Summary
    notices: list[str] = msgspec.field(default_factory=list)
    tasks: list[dict[str, Any]] = msgspec.field(default_factory=list)


class AuditChange(msgspec.Struct, kw_only=True):
    """One decision the rescore changed: the task, its gold, the input's answer and this scorer's (each in its type's
    words, with how it was read and the verdict), the rule that decided and its reason."""

    task_id: str
    expected: str
    old: str
    new: str
    rule: str
    reason: str


class AuditTotal(msgspec.Struct, kw_only=True):
    """One scope's totals (all, or a category): the input's correct (None: it recorded no verdict), this scorer's,
    of the tasks scored."""

    scope: str
    old: int | None
    new: int
    tasks: int


class Audit(msgspec.Struct, kw_only=True):
    """A rescore's audit: what changed and why, what the input got wrong, the evidence by class. analysis/audit.py
    builds it as the rescore reads the input; report/audit.py draws it as Markdown (`rescore --report`)."""

    source_name: str
    scorer: dict[str, Any]  # the scorer block: version and the policy it decided under
    input_label: str  # what the input's own verdicts are called ("the input", or the other tool)
    verdicts: InputVerdicts | None  # the input's verdicts against this scorer's; None: the input recorded none
    unpaired: int  # samples one side left undecided
    unscorable: list[UnscorableRecord]
    totals: list[AuditTotal]  # all, then each category
    failed: int  # tasks whose request failed: in no total
    has_old: bool  # the input recorded a verdict on some task
    changed: list[AuditChange]
    inconsistent: list[str]  # marked wrong although the input's extraction equals the gold
    extraction_differs: list[str]
    differs_by_type: dict[str, int]
    with_reasoning: int  # tasks holding final-answer statements in their reasoning
    reasoning_statements: int
    truncated: int
    finish_reasons: int  # answered samples that recorded a finish_reason
    answered: int
    counts: dict[str, list[tuple[str, int]]]  # per evidence class (ambiguity, method, source, rule): most common first


class RunReport(msgspec.Struct, kw_only=True):
    """The run report's data: a run re-scored, its summary with intervals, tokens and latency, every task."""

    format: str = "ocllm-run-report/1"
    harness_version: str
    label: str
    source: dict[str, Any]
    summary: dict[str, Any]  # the Summary with a Wilson interval on it and on every category
    notices: list[str] = msgspec.field(default_factory=list)
    resources: dict[str, Any] = msgspec.field(default_factory=dict)
    tasks: list[dict[str, Any]] = msgspec.field(default_factory=list)
    tool: str | None = None  # the other tool whose results were re-scored (their verdicts are `previous`)
    tool_verdicts: Paired | None = None  # that tool's verdicts (A) against this scorer's (B), on tasks both decided
    settings: dict[str, str] = msgspec.field(default_factory=dict)  # what it ran with (run_settings); {}: unknown
    simulated: bool = False  # the ocllm simulator answered the run (source.server says so): the pages say so
