"""Other tools' verdicts on the pinned answer corpus, for comparison only (`make scorer-diff`, docs/scoring.md
"The pinned answer corpus"): math-verify as its README shows it, and lm-eval's filters as its task files configure
them (lm_eval/tasks/gsm8k/gsm8k.yaml and gsm8k-cot.yaml, mmlu_pro/_default_template_yaml, minerva_math/utils.py).

Each returns True (credited), False (not credited) or None (the tool does not score this record's kind). These are
written here from those files' settings, not imported: lm-eval's package pulls in torch and datasets.
"""

from __future__ import annotations

import logging
import re
from typing import Any

# lm-eval's gsm8k filters: "strict-match" reads `#### N` (gsm8k) or `The answer is N.` (gsm8k-cot); "flexible-extract"
# the last number-like run anywhere. Both take the first filtered response; the regex filter keeps the match at
# group_select (0: the first, -1: the last) and, for a pattern with alternatives, its first non-empty group.
_GSM8K_STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
_GSM8K_COT_STRICT = re.compile(r"The answer is (\-?[0-9\.\,]+).")
_GSM8K_FLEXIBLE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
# exact_match's settings in gsm8k.yaml: these removed from both sides, then compared ignoring case.
_GSM8K_IGNORED = (re.compile(","), re.compile(r"\$"), re.compile(r"(?s).*#### "), re.compile(r"\.$"))
# mmlu_pro's "custom-extract": the first `answer is (X)`, exact_match ignoring case and punctuation.
_MMLU_PRO = re.compile(r"answer is \(?([ABCDEFGHIJ])\)?")
# minerva_math's reader: the sentence its four-shot prompt teaches.
_MINERVA = re.compile(r"Final Answer: The final answer is(.*?). I hope it is correct.")


def _regex_filter(pattern: re.Pattern[str], text: str, group_select: int) -> str:
    found = pattern.findall(text)
    if not found:
        return "[invalid]"
    match = found[group_select]
    if isinstance(match, tuple):
        match = next((m for m in match if m), "[invalid]")
    return match.strip()


def _gsm8k_exact_match(extracted: str, gold: str) -> bool:
    for pattern in _GSM8K_IGNORED:
        extracted, gold = pattern.sub("", extracted), pattern.sub("", gold)
    return extracted.lower() == gold.lower()


def lm_eval_gsm8k_strict(record: dict[str, Any]) -> bool | None:
    """gsm8k's strict-match (`#### N`), or gsm8k-cot's (`The answer is N.`) where the response has no `####`."""
    if record["dataset"] != "gsm8k":
        return None
    content = record["content"] or ""
    pattern = _GSM8K_STRICT if "####" in content else _GSM8K_COT_STRICT
    return _gsm8k_exact_match(_regex_filter(pattern, content, 0), record["gold"])


def lm_eval_gsm8k_flexible(record: dict[str, Any]) -> bool | None:
    """gsm8k's flexible-extract: the last number-like run of the response."""
    if record["dataset"] != "gsm8k":
        return None
    return _gsm8k_exact_match(_regex_filter(_GSM8K_FLEXIBLE, record["content"] or "", -1), record["gold"])


def lm_eval_minerva(record: dict[str, Any]) -> bool | None:
    """minerva_math's exact_match without its sympy step: the `Final Answer: The final answer is X. I hope it is
    correct.` sentence, normalised as minerva_math/utils.py normalises, equal to the normalised gold. Only for
    responses to lm-eval's own minerva prompt, the one format it reads."""
    if record["dataset"] == "gsm8k" or record.get("harness") != "lm-eval":
        return None
    # Its reader appends the sentence's end, so a response cut off after "The final answer is X" is still read.
    found = _MINERVA.search((record["content"] or "") + "I hope it is correct.")
    if found is None:
        return False
    return _minerva_normalise(found.group(1).strip()) == _minerva_normalise(record["gold"])


def lm_eval_mmlu_pro(record: dict[str, Any]) -> bool | None:
    """mmlu_pro's custom-extract: the first `answer is (X)` of the response, X one of A-J."""
    letter = _regex_filter(_MMLU_PRO, record["content"] or "", 0)
    return letter.lower() == str(record["gold"]).lower()


def math_verify(record: dict[str, Any]) -> bool:
    """math-verify as its README shows it: the gold parsed as math, the whole response parsed with the default
    extraction, then verify (gold first)."""
    from math_verify import parse, verify

    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    gold = parse(f"${record['gold']}$")
    answer = parse(record["content"] or "")
    return bool(gold and answer and verify(gold, answer))


# minerva_math/utils.py's normalize_final_answer, as settings: what it substitutes and what it removes.
_MINERVA_SUBSTITUTIONS = (
    ("an ", ""), ("a ", ""), (".$", "$"), ("\\$", ""), (r"\ ", ""), (" ", ""), ("mbox", "text"),
    (",\\text{and}", ","), ("\\text{and}", ","), ("\\text{m}", "\\text{}"),
)  # fmt: skip
_MINERVA_REMOVED = (
    "square", "ways", "integers", "dollars", "mph", "inches", "ft", "hours", "km", "units", "\\ldots", "sue", "points",
    "feet", "minutes", "digits", "cents", "degrees", "cm", "gm", "pounds", "meters", "meals", "edges", "students",
    "childrentickets", "multiples", "\\text{s}", "\\text{.}", "\\text{\ns}", "\\text{}^2", "\\text{}^3", "\\text{\n}",
    "\\text{}", r"\mathrm{th}", r"^\circ", r"^{\circ}", r"\;", r",\!", "{,}", '"', "\\dots",
)  # fmt: skip


def _minerva_normalise(answer: str) -> str:
    answer = answer.split("=")[-1]
    for before, after in _MINERVA_SUBSTITUTIONS:
        answer = answer.replace(before, after)
    for removed in _MINERVA_REMOVED:
        answer = answer.replace(removed, "")
    answer = re.sub(r"(.*?)(\$)(.*?)(\$)(.*)", "$\\3$", answer)
    answer = re.sub(r"(\\text\{)(.*?)(\})", "\\2", answer)
    answer = re.sub(r"(\\textbf\{)(.*?)(\})", "\\2", answer)
    answer = re.sub(r"(\\overline\{)(.*?)(\})", "\\2", answer)
    answer = re.sub(r"(\\boxed\{)(.*)(\})", "\\2", answer)
    answer = re.sub(r"(frac)([^{])(.)", "frac{\\2}{\\3}", answer)
    answer = re.sub(r"(sqrt)([^{])", "sqrt{\\2}", answer)
    answer = answer.replace("$", "")
    if answer.replace(",", "").isdigit():
        answer = answer.replace(",", "")
    return answer


# Each kind's tools, by the name `make scorer-diff` prints.
MATH_REFERENCES = {
    "math-verify": math_verify,
    "lm-eval gsm8k strict": lm_eval_gsm8k_strict,
    "lm-eval gsm8k flexible": lm_eval_gsm8k_flexible,
    "lm-eval minerva": lm_eval_minerva,
}
MCQ_REFERENCES = {"lm-eval mmlu_pro": lm_eval_mmlu_pro}
