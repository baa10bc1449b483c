"""The symbolic step of math equivalence (docs/scoring/math.md, rule M6): math-verify in a guarded child process
(`scoring/guarded.py`) with a limit on the CPU time each check uses, never on the wall clock.

math-verify's own timeouts use signal.alarm, which works only in a main thread, and some inputs hang it
regardless. So the check runs in one long-lived child per process, which the guarded service starts (from any
thread, in a worker of a process pool, in a daemonic process) and kills with its process group. A check that has
used SYMBOLIC_LIMIT_S of CPU time is stopped; its outcome is "killed", which is never "equal", and the next check
starts a fresh child. Values too large to evaluate at all are screened before they get here
(`scoring/math/screen.py`).

Results are kept in a bounded cache in this process, keyed by the normalised gold and answer, the tolerance and the
limit: a check that always gives the same verdict (same inputs, same CPU limit) need not be run twice, so 5,000
copies of one costly answer cost one check. Only a check that could not run at all is not kept.

Whatever math-verify says "equal" is confirmed in the child by an exact check of our own (`_confirm`), because
math-verify's numeric comparison rounds: it calls 1/2004! and 1/2006! equal, and 0.333333 equal to 1/3.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, OrderedDict
from typing import Any, Literal, NamedTuple

from ocllm.scoring.guarded import Limits, Result, Service

# The CPU-time limit of one symbolic check, in seconds (docs/scoring/math.md). Starting the child, importing
# math-verify and warming it up is not counted: that has its own limit.
SYMBOLIC_LIMIT_S = 5.0
STARTUP_LIMIT_S = 60.0
# How many checks the cache keeps (the least recently used go first); a key longer than this is not kept.
CACHE_SIZE = 8192
_CACHE_KEY_CHARS = 20_000

Outcome = Literal["equal", "different", "undecided", "killed"]


class SymbolicResult(NamedTuple):
    outcome: Outcome
    detail: str  # a sentence saying why
    verifier: str | None  # "math-verify 0.9.0", or None when it never answered


_service = Service(
    "symbolic", startup=f"{__name__}:_start", startup_limits=Limits(cpu_s=STARTUP_LIMIT_S, stall_s=STARTUP_LIMIT_S)
)
_cache: OrderedDict[tuple[str, str, float | None, float], SymbolicResult] = OrderedDict()
_cache_lock = threading.Lock()
# What this process asked of the child: checks sent, and checks answered from the cache (for tests and profiles).
counts: Counter[str] = Counter()


def check(gold: str, answer: str, tolerance: float | None = None, limit_s: float = SYMBOLIC_LIMIT_S) -> SymbolicResult:
    """Whether math-verify, confirmed by the exact check, finds `answer` equal to `gold` (both normalised)."""
    key = (gold, answer, tolerance, limit_s)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            counts["cache_hits"] += 1
            return _cache[key]
    counts["checks"] += 1
    result = _service.call(f"{__name__}:_check_in_child", (gold, answer, tolerance), Limits(cpu_s=limit_s))
    symbolic = _symbolic_result(result, _service.startup_value if result.status != "lost" else None)
    if result.status != "lost" and len(gold) + len(answer) <= _CACHE_KEY_CHARS:
        with _cache_lock:
            _cache[key] = symbolic
            if len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return symbolic


def clear_cache() -> None:
    """Forget every cached check (tests that count checks start from here)."""
    with _cache_lock:
        _cache.clear()


def _symbolic_result(result: Result, verifier: str | None) -> SymbolicResult:
    if result.status == "done":
        outcome, detail = result.value
        return SymbolicResult(outcome, detail, verifier)
    if result.status == "limit":
        return SymbolicResult("killed", f"the symbolic check {result.detail} and was killed", verifier)
    if result.status == "raised":
        return SymbolicResult("undecided", f"the symbolic check failed: {result.detail}", verifier)
    return SymbolicResult("undecided", f"the symbolic check could not run: {result.detail}", verifier)


# ---- in the child --------------------------------------------------------------------------------------------

# Checks run once in each new child, outside any check's limit: sympy imports much of itself on first use, and
# that CPU time belongs to the child's start, not to whichever check happens to come first.
_WARM_UP = (
    ("x^2+2x+1", "(x+1)^2"),
    ("\\{1,2,3\\}", "\\{3,2,1\\}"),
    ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"),
    ("(1,2)", "(2,1)"),
    ("[1,2)", "[1,2)"),
    ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\begin{bmatrix}1\\\\2\\end{bmatrix}"),
    ("x=5", "5"),
    ("0.5", "\\frac{1}{2}"),
)


def _start() -> str:
    """Import math-verify and warm it up; the verifier's name and version."""
    import logging
    from importlib.metadata import version

    import math_verify  # noqa: F401  (slow to import: done here, once, in the child only)

    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    for gold, answer in _WARM_UP:
        _compare(gold, answer, None)
    return f"math-verify {version('math-verify')}"


def _check_in_child(gold: str, answer: str, tolerance: float | None) -> tuple[Outcome, str]:
    from sympy.core.cache import clear_cache as clear_sympy_cache

    # sympy caches what it computed: cleared first, the CPU a check uses does not depend on the checks before it.
    clear_sympy_cache()
    try:
        return _compare(gold, answer, tolerance)
    except MemoryError:
        raise  # the memory limit: the guarded child reports it as such
    except Exception as exc:
        return "undecided", f"the symbolic check failed: {type(exc).__name__}: {exc}"


def _compare(gold: str, answer: str, tolerance: float | None) -> tuple[Outcome, str]:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    config = [LatexExtractionConfig(), ExprExtractionConfig()]
    # Our limit is the CPU time of the child; math-verify's signal-based ones are turned off so that a slow step
    # is killed as a whole rather than read as "not equal".
    parsed_gold = parse(f"${gold}$", extraction_config=config, parsing_timeout=None)
    parsed_answer = parse(f"${answer}$", extraction_config=config, parsing_timeout=None)
    if not parsed_gold or not parsed_answer:
        which = "the gold" if not parsed_gold else "the answer"
        return "different", f"math-verify cannot read {which} as math; the strings differ"
    if not verify(parsed_gold, parsed_answer, timeout_seconds=None):
        return "different", f"math-verify finds {_show(parsed_answer[0])} and {_show(parsed_gold[0])} different"
    sides = (("gold", gold), ("answer", answer))
    unfinished = [f"the {side} {why}" for side, text in sides if (why := _unfinished(text))]
    if unfinished:
        # math-verify reads "5+" as 5, "6)" as 6, "6 \dots 9" as 6, and calls that whole: not to be believed.
        return "undecided", f"math-verify says equal, but {' and '.join(unfinished)}"
    partial = [
        side for side, text, parsed in (("gold", gold, parsed_gold), ("answer", answer, parsed_answer))
        if len(parsed) < 2 or _squash(str(parsed[1])) != _squash(text)
    ]  # fmt: skip
    if partial:
        return "undecided", (
            f"math-verify says equal, but it read only part of the {' and the '.join(partial)} "
            f"({', '.join(repr(str(p[1])) for p in (parsed_gold, parsed_answer) if len(p) > 1)})"
        )
    untrusted = sorted(set(_untrusted(gold)) | set(_untrusted(answer)))
    if untrusted:
        # latex2sympy drops what it does not know without a word: 1+\frac{1}{\operatorname{e}} reads as 1.
        return "undecided", f"math-verify says equal, but its reader is not trusted with {', '.join(untrusted)}"
    verdict, why = _confirm(parsed_gold[0], parsed_answer[0], tolerance)
    if verdict is True:
        return "equal", f"math-verify says equal, and the exact check agrees ({why})"
    if verdict is False:
        return "different", f"math-verify says equal, but the exact check finds them apart: {why}"
    return "undecided", f"math-verify says equal, and the exact check cannot confirm it: {why}"


# The LaTeX commands the reader is trusted with: its equal verdict on anything else is not believed.
_TRUSTED_COMMANDS = frozenset(
    {
        "frac", "sqrt", "cdot", "times", "div", "pi", "infty", "pm", "mp", "le", "ge", "leq", "geq", "lt", "gt", "ne",
        "neq", "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
        "log", "ln", "exp", "begin", "end", "pmatrix", "bmatrix", "matrix", "cup", "cap", "setminus", "in", "notin",
        "emptyset", "varnothing", "binom", "lfloor", "rfloor", "lceil", "rceil", "mathbb", "ldots", "cdots", "dots",
        "prime", "circ", "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
        "iota", "kappa", "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi",
        "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega",
    }
)  # fmt: skip
# √ is not: math-verify reads 2√3 as 2 (normalisation's sqrt_sign step rewrites the sign it can).
_NON_ASCII_TRUSTED = frozenset("π∞±≤≥≠")
# An expression that ends in an operator or relation waits for its other operand: "5+", "6^", "5\times".
_ENDS_IN_OPERATOR = re.compile(
    r"(?:[-+*/^_=<>,.&]|\\(?:times|cdot|div|pm|mp|le|ge|leq|geq|lt|gt|ne|neq|in|cup|cap|setminus|frac|sqrt|to"
    r"|approx|equiv|wedge|vee|circ|mod|pmod|bmod))\s*$"
)
# "5^{}", "5\sqrt{}", "\frac{5}{}": an argument left empty, which the reader skips.
_EMPTY_ARGUMENT = re.compile(r"(?:[\^_]|\\sqrt|\\frac|\\binom|\}|\])\s*\{\s*\}")
_ELLIPSIS = re.compile(r"\\(?:dots|ldots|cdots|vdots|ddots|dotsc|dotsb)(?![a-zA-Z])|\.\.\.|…")


def _unfinished(text: str) -> str | None:
    """Why the text is no complete expression, if it is not: an operator at its end, brackets that do not
    balance, or an ellipsis (what it leaves out is not read)."""
    if _ENDS_IN_OPERATOR.search(text):
        return "ends in an operator"
    if _ELLIPSIS.search(text):
        return "holds an ellipsis"
    if _EMPTY_ARGUMENT.search(text):
        return "has an empty argument"
    # ( and [ open, ) and ] close in either kind: intervals mix them ("[1,2)"). Braces, escaped or not, pair.
    round_depth = brace_depth = 0
    for ch in text:
        round_depth += (ch in "([") - (ch in ")]")
        brace_depth += (ch == "{") - (ch == "}")
        if round_depth < 0 or brace_depth < 0:
            return "closes a bracket it never opened"
    if round_depth or brace_depth:
        return "leaves a bracket open"
    return None


def _untrusted(text: str) -> list[str]:
    commands = {f"\\{name}" for name in re.findall(r"\\([a-zA-Z]+)", text) if name not in _TRUSTED_COMMANDS}
    others = {ch for ch in text if ord(ch) > 127 and ch not in _NON_ASCII_TRUSTED}
    return sorted(commands | others)


def _squash(text: str) -> str:
    return "".join(text.split())


def _show(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:59] + "…"


# Precision of the numeric confirmation, in decimal digits, and the relative difference below which two
# evaluated values are one. Far below any rounding a model does, far above the evaluation's own error.
_DIGITS = 60
_SAME = 10.0 ** -(_DIGITS - 15)
# Values the free symbols take when an expression identity is probed numerically: unlike signs, not integers.
_PROBES = ((7, 3), (-11, 5), (13, 17))


def _confirm(gold: Any, answer: Any, tolerance: float | None) -> tuple[bool | None, str]:
    """True: the same object, exactly; False: certainly different; None: this check cannot tell."""
    import sympy
    from sympy.matrices import MatrixBase

    if any(isinstance(side, sympy.Basic) and side.has(sympy.zoo, sympy.nan) for side in (gold, answer)):
        return None, "a side is no number (math-verify read it as undefined)"  # "12:00" reads as zoo
    if not isinstance(gold, str) and not isinstance(answer, str) and gold == answer:
        return True, "the same expression"  # sympy's structural equality: also for oo and -oo
    if isinstance(gold, str) or isinstance(answer, str):
        same = isinstance(gold, str) and isinstance(answer, str) and _squash(gold) == _squash(answer)
        return (True, "the same text") if same else (None, "one side is text, not math")
    if isinstance(gold, MatrixBase) or isinstance(answer, MatrixBase):
        if not (isinstance(gold, MatrixBase) and isinstance(answer, MatrixBase)):
            return False, "a matrix and something else"
        if gold.shape != answer.shape:
            return False, f"matrices of shapes {gold.shape} and {answer.shape}"
        return _all(list(gold), list(answer), tolerance, "entry")
    if isinstance(gold, sympy.Tuple) or isinstance(answer, sympy.Tuple):
        if not (isinstance(gold, sympy.Tuple) and isinstance(answer, sympy.Tuple)):
            return False, "a tuple and something else (an ordered pair is not a set nor an interval)"
        if len(gold) != len(answer):
            return False, f"tuples of {len(gold)} and {len(answer)} entries"
        return _all(list(gold.args), list(answer.args), tolerance, "entry in order")
    if isinstance(gold, sympy.Interval) or isinstance(answer, sympy.Interval):
        if not (isinstance(gold, sympy.Interval) and isinstance(answer, sympy.Interval)):
            return False, "an interval and something else"
        if (gold.left_open, gold.right_open) != (answer.left_open, answer.right_open):
            return False, "the intervals' ends differ in being open or closed"
        return _all([gold.start, gold.end], [answer.start, answer.end], tolerance, "end")
    if isinstance(gold, sympy.FiniteSet | sympy.Union) or isinstance(answer, sympy.FiniteSet | sympy.Union):
        if type(gold) is not type(answer):
            return False, "a set and something else"
        return _same_members(list(gold.args), list(answer.args), tolerance)
    if isinstance(gold, sympy.core.relational.Relational) or isinstance(answer, sympy.core.relational.Relational):
        return _relations(gold, answer, tolerance)
    if isinstance(gold, sympy.Basic) and isinstance(answer, sympy.Basic):
        return _expressions(gold, answer, tolerance)
    return None, f"values of kinds {type(gold).__name__} and {type(answer).__name__}"


def _all(golds: list[Any], answers: list[Any], tolerance: float | None, what: str) -> tuple[bool | None, str]:
    unsure = None
    for i, (g, a) in enumerate(zip(golds, answers, strict=True)):
        verdict, why = _confirm(g, a, tolerance)
        if verdict is False:
            return False, f"{what} {i + 1}: {why}"
        if verdict is None:
            unsure = f"{what} {i + 1}: {why}"
    return (None, unsure) if unsure else (True, f"every {what} equal")


def _same_members(golds: list[Any], answers: list[Any], tolerance: float | None) -> tuple[bool | None, str]:
    if len(golds) != len(answers):
        return False, f"sets of {len(golds)} and {len(answers)} members"
    left = list(answers)
    for g in golds:
        match = next((i for i, a in enumerate(left) if _confirm(g, a, tolerance)[0] is True), None)
        if match is None:
            return None if any(_confirm(g, a, tolerance)[0] is None for a in left) else False, f"{g} has no match"
        left.pop(match)
    return True, "the same members"


def _relations(gold: Any, answer: Any, tolerance: float | None) -> tuple[bool | None, str]:
    import sympy

    if type(gold) is type(answer):
        same = _expressions(gold.lhs - gold.rhs, answer.lhs - answer.rhs, tolerance)
        if same[0] is True or not isinstance(gold, sympy.Eq):
            return same
        # An equation with its sides swapped is the same equation.
        return _expressions(gold.lhs - gold.rhs, answer.rhs - answer.lhs, tolerance)
    # "x = 5" against 5: the assignment's value, whichever side states the name, when its left side names one
    # thing. "2x = 5", "x + 1 = 5", "x - 5 = 0" are equations: their right side is no value of anything asked.
    for equation, value, which in ((gold, answer, "gold"), (answer, gold, "answer")):
        if isinstance(equation, sympy.Eq) and not isinstance(value, sympy.core.relational.Relational):
            if not _names_one(equation.lhs):
                return False, f"the {which} is an equation whose left side {equation.lhs} names no one thing"
            pair = (equation.rhs, value) if which == "gold" else (value, equation.rhs)
            return _confirm(*pair, tolerance)
    return None, "relations of different kinds"


def _names_one(side: Any) -> bool:
    """A symbol, a function applied to arguments (f(100)), its inverse as read (h^{-1}(x) reads 1/h(x)), or
    a limit of one."""
    import sympy
    from sympy.core.function import AppliedUndef

    if isinstance(side, sympy.Pow) and side.exp == -1:
        side = side.base
    return isinstance(side, sympy.Symbol | AppliedUndef | sympy.Limit)


def _expressions(gold: Any, answer: Any, tolerance: float | None) -> tuple[bool | None, str]:
    import sympy

    gold, answer = _exact(gold), _exact(answer)
    names = {s.name for s in gold.free_symbols}, {s.name for s in answer.free_symbols}
    if names[0] != names[1]:
        said = [", ".join(sorted(n)) or "none" for n in names]
        return False, f"different variables ({said[1]} for {said[0]})"
    if not names[0]:
        return _numbers(gold, answer, tolerance)
    # The same names may be different Symbol objects (assumptions differ): compare by name.
    by_name = {s: sympy.Symbol(s.name) for s in gold.free_symbols | answer.free_symbols}
    difference = sympy.simplify(gold.xreplace(by_name) - answer.xreplace(by_name))
    if difference == 0:
        return True, "their difference simplifies to 0"
    symbols = sorted(difference.free_symbols, key=lambda s: s.name)
    for p in _PROBES:
        point = {s: sympy.Rational(p[0] + 2 * k, p[1]) for k, s in enumerate(symbols)}
        value = difference.xreplace(point).evalf(_DIGITS)
        if value.is_number and value.is_finite and abs(value) > _SAME:
            return False, f"they differ at {', '.join(f'{s}={v}' for s, v in point.items())}"
    return None, "their difference does not simplify to 0, yet vanishes where probed"


def _numbers(gold: Any, answer: Any, tolerance: float | None) -> tuple[bool | None, str]:
    difference = gold - answer
    if difference.is_zero is True:
        return True, "their difference is exactly 0"
    g, a = gold.evalf(_DIGITS), answer.evalf(_DIGITS)
    if not (g.is_number and a.is_number) or not (g.is_finite and a.is_finite):
        return None, "not finite numbers"
    scale = max(abs(g), abs(a))
    relative = abs(g - a) / scale if scale else 0
    if tolerance is not None:
        within = bool(relative <= tolerance)
        return within, f"relative difference {float(relative):.3g} {'within' if within else 'beyond'} {tolerance:g}"
    if relative < _SAME:
        return True, f"equal to {_DIGITS} digits"
    return False, f"relative difference {float(relative):.3g}"


def _exact(value: Any) -> Any:
    """Decimals read as the exact numbers they are written as: 0.333333 is 333333/1000000, never 1/3."""
    import sympy

    floats = value.atoms(sympy.Float)
    return value.xreplace({f: sympy.Rational(str(f)) for f in floats}) if floats else value
