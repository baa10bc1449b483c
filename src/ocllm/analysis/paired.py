"""Two verdicts on the same tasks, side by side: each side's accuracy and interval, the discordant pairs, the
exact McNemar test and the paired bootstrap interval of the difference. What `compare` reports for two lanes,
and what a rescore's audit reports for the input's own verdicts against this scorer's."""

from __future__ import annotations

from collections.abc import Sequence

from ocllm.analysis.stats import describe_difference, mcnemar_exact, paired_bootstrap_diff, wilson
from ocllm.documents import Paired


def paired_figures(ca: Sequence[bool], cb: Sequence[bool], label_a: str, label_b: str, sides: str = "lane") -> Paired:
    """`ca[i]` and `cb[i]`: whether side A and side B got task i right; `sides` is what the two are (the
    verdict says "no evidence that either lane is better")."""
    n = len(ca)
    a_correct, b_correct = sum(ca), sum(cb)
    a_wins = sum(x and not y for x, y in zip(ca, cb, strict=True))
    b_wins = sum(y and not x for x, y in zip(ca, cb, strict=True))
    p = mcnemar_exact(a_wins, b_wins)
    diff = (b_correct - a_correct) / n if n else 0.0
    ci = paired_bootstrap_diff(ca, cb)
    a_ci, b_ci = wilson(a_correct, n), wilson(b_correct, n)
    return Paired(
        n_paired=n,
        a_correct=a_correct,
        b_correct=b_correct,
        a_accuracy=a_correct / n if n else 0.0,
        b_accuracy=b_correct / n if n else 0.0,
        a_ci_low=a_ci.low,
        a_ci_high=a_ci.high,
        b_ci_low=b_ci.low,
        b_ci_high=b_ci.high,
        a_wins=a_wins,
        b_wins=b_wins,
        both_correct=sum(x and y for x, y in zip(ca, cb, strict=True)),
        both_wrong=sum(not x and not y for x, y in zip(ca, cb, strict=True)),
        mcnemar_p=p,
        diff=diff,
        diff_ci_low=ci.low,
        diff_ci_high=ci.high,
        significant=p < 0.05 and (ci.low > 0 or ci.high < 0),
        verdict=describe_difference(diff, ci, p, label_a, label_b, sides) if n else "No paired tasks to compare.",
    )
