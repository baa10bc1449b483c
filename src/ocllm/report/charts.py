"""Charts for the HTML reports: matplotlib figures rendered to inline SVG strings.

Every chart is drawn on a bare `Figure` with an Agg canvas (no pyplot, so no global figure registry
and no GUI backend), under a fixed rc context, and written as SVG with text kept as `<text>` elements.
Matplotlib escapes that text, which matters: lane labels and category names come from files and may
hold anything. The SVG is then trimmed for inlining (no XML prolog, no metadata, no global `<style>`)
and its ids are prefixed so that several charts can share one page.

matplotlib is an extra (`ocllm[charts]`): a runtime that scores and runs does not need 35 MB to draw. It is
imported when a chart is drawn, not with this module (whose palette and lane colours the pages use whatever is
installed); without it, drawing raises `MissingExtra`, and the chart views put one line in the chart's place.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ocllm.errors import MissingExtra
from ocllm.report.wording import chance_text
from ocllm.visible_text import visible

if TYPE_CHECKING:
    from types import ModuleType

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType  # the rc keys matplotlib knows: a misspelt one is a type error


def missing() -> MissingExtra:
    """What is said where a chart would be when matplotlib is not installed (one line, with the install command)."""
    return MissingExtra("drawing charts", "matplotlib", "charts")


# One palette for every report, so a lane keeps its colour from chart to chart.
PALETTE = ("#4263eb", "#f76707", "#0ca678", "#d6336c", "#7048e8", "#f59f00", "#1098ad", "#74b816", "#868e96")
INK = "#212529"
MUTED = "#6c757d"
GRID = "#e9ecef"
GOOD = "#2f9e44"
BAD = "#e03131"

_RC: dict[RcKeyType, object] = {
    "svg.fonttype": "none",  # real <text>: selectable, small, and escaped by matplotlib
    "svg.hashsalt": "ocllm-report",  # stable clip-path ids, so the same document gives the same file
    "text.usetex": False,  # a user's matplotlibrc must not turn labels into LaTeX input
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
    "font.size": 12,
    "axes.edgecolor": "#ced4da",
    "axes.labelcolor": INK,
    "axes.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": GRID,
    "grid.linewidth": 0.8,
    "xtick.color": MUTED,
    "ytick.color": INK,
    "xtick.major.size": 0,
    "ytick.major.size": 0,
    "legend.frameon": False,
    "legend.fontsize": 10.5,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11.5,
}

_MAX_LABEL = 34
# Charts are drawn at the width they are shown (a half-width card of the page), so that their text
# comes out at the same size as the page's small print rather than being scaled down.
WIDTH = 6.4
WIDE = 9.6


class Estimate(NamedTuple):
    """One accuracy (or difference) with its 95% interval, as fractions."""

    value: float
    low: float
    high: float


class LaneAccuracy(NamedTuple):
    label: str
    estimate: Estimate
    colour: str | None = None  # the lane's colour (lane_colours); None: by its place in the chart


class Difference(NamedTuple):
    label: str
    estimate: Estimate  # difference in accuracy (fraction), with its interval
    significant: bool


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def lane_colours(labels: Iterable[str]) -> dict[str, str]:
    """Each lane's colour, from its name rather than its rank, so that a lane keeps its colour on the run,
    comparison and matrix pages. Two names that fall on one colour: the later in name order takes the next
    free one (so the same set of lanes always gets the same colours; with more lanes than colours, they repeat)."""
    taken: set[int] = set()
    out: dict[str, str] = {}
    for label in sorted(set(labels)):
        # The grey, last, looks like "not drawn": a name lands on it only when every other colour is taken.
        index = int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:4], "big") % (len(PALETTE) - 1)
        for step in range(len(PALETTE)):
            if (index + step) % len(PALETTE) not in taken:
                index = (index + step) % len(PALETTE)
                break
        taken.add(index)
        if len(taken) == len(PALETTE):
            taken.clear()
        out[label] = PALETTE[index]
    return out


def plain_label(text: object) -> str:
    """A file-supplied label as matplotlib should draw it: one line, bounded length, its control characters as
    visible text (visible_text: a font has no glyph for ESC), and `$` escaped so that it is never parsed as mathtext
    (which would mangle it, or raise on bad input)."""
    flat = " ".join(visible(str(text)).split())
    if len(flat) > _MAX_LABEL:
        flat = flat[: _MAX_LABEL - 1] + "…"
    return flat.replace("$", r"\$")


def _ticker() -> ModuleType:
    """matplotlib's tick locators and formatters, imported when a chart is drawn (an extra, see the module's doc)."""
    try:
        from matplotlib import ticker
    except ImportError:
        raise missing() from None
    return ticker


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    # Every chart starts here: matplotlib is imported on the first one (it is an extra, see the module's doc).
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise missing() from None
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def _to_svg(fig: Figure, key: str) -> str:
    import matplotlib  # imported by _figure already, which made `fig`

    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(
            buf, format="svg", transparent=True, metadata={"Date": None, "Creator": None, "Format": None, "Type": None}
        )
    return inline_svg(buf.getvalue(), key)


_ID = re.compile(r'\bid="([^"]+)"')
_HREF = re.compile(r'(xlink:href|href)="#([^"]+)"')
_URL = re.compile(r"url\(#([^)]+)\)")
_SIZE = re.compile(r'\b(width|height)="([0-9.]+)pt"')


def inline_svg(svg: str, key: str) -> str:
    """Matplotlib's SVG file made fit to sit inside an HTML page.

    - The XML prolog and DOCTYPE go (they are not allowed mid-document).
    - The SVG's own `<style>` goes: inside HTML it would apply to the whole page.
    - Comments go (matplotlib escapes them, but they are dead weight).
    - Ids get a per-chart prefix: matplotlib numbers them from 1 in every file, and duplicate ids on one
      page would make one chart's clip paths and markers resolve into another's.
    - Sizes in pt become CSS pixels, so a chart drawn 6.4 in wide shows at 461 px and text keeps its size.
    """
    start = svg.find("<svg")
    if start < 0:
        raise ValueError("not an SVG document")
    svg = svg[start:]
    svg = re.sub(r"<style[^>]*>.*?</style>", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    prefix = re.sub(r"[^a-z0-9-]", "-", key.lower())
    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = _HREF.sub(lambda m: f'{m.group(1)}="#{prefix}-{m.group(2)}"', svg)
    svg = _URL.sub(lambda m: f"url(#{prefix}-{m.group(1)})", svg)
    svg = _SIZE.sub(lambda m: f'{m.group(1)}="{float(m.group(2)):g}"', svg, count=2)
    svg = svg.replace("<svg ", '<svg role="img" ', 1)
    return svg.strip()


def _percent_axis(ax: Axes, *, axis: str = "x") -> None:
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(_ticker().PercentFormatter(xmax=1.0, decimals=0))


def _errors(estimates: Sequence[Estimate]) -> np.ndarray:
    """Asymmetric error bar lengths; never negative, even if an interval is reported oddly."""
    low = [max(0.0, e.value - e.low) for e in estimates]
    high = [max(0.0, e.high - e.value) for e in estimates]
    return np.array([low, high])


def _chance_line(ax: Axes, chance: float | None) -> None:
    """The accuracy of answering at random (the suite's mean of 1/options), as a labelled dotted line: an
    accuracy at or under it says the model did no better than guessing."""
    if chance is None:
        return
    ax.axvline(chance, color=INK, linestyle=":", linewidth=1.3, zorder=4)
    ax.annotate(
        chance_text(chance),
        xy=(chance, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(3, 1),
        textcoords="offset points",
        ha="left",
        va="bottom",
        color=MUTED,
        fontsize=9.5,
    )


def accuracy_chart(
    lanes: Sequence[LaneAccuracy], key: str = "accuracy", width: float = WIDTH, chance: float | None = None
) -> str:
    """Horizontal bars, one per lane (first at the top), each with its 95% interval; `chance`, the suite's
    chance level, as a dotted line."""
    n = len(lanes)
    with _figure(width, max(1.7, 0.7 + 0.48 * n)) as fig:
        ax = fig.subplots()
        ys = np.arange(n)
        values = [lane.estimate.value for lane in lanes]
        fills = [lane.colour or colour(i) for i, lane in enumerate(lanes)]
        ax.barh(ys, values, height=0.62, color=fills, zorder=2)
        ax.errorbar(
            values,
            ys,
            xerr=_errors([lane.estimate for lane in lanes]),
            fmt="none",
            ecolor=INK,
            elinewidth=1.2,
            capsize=4,
            zorder=3,
        )
        # The figure sits at the bar's start, clear of the interval's whiskers; the interval and the counts
        # are in the caption and the tables beside the chart.
        for y, lane in zip(ys, lanes, strict=True):
            est = lane.estimate
            if est.value >= 0.16:
                ax.text(
                    0.012,
                    float(y),  # a numpy integer, which matplotlib's annotations do not count as a float
                    f"{est.value:.1%}",
                    va="center",
                    ha="left",
                    color="white",
                    fontsize=11,
                    fontweight="bold",
                    zorder=4,
                )
            else:
                ax.text(
                    min(est.high, 1.0) + 0.015,
                    float(y),
                    f"{est.value:.1%}",
                    va="center",
                    ha="left",
                    color=INK,
                    fontsize=11,
                    zorder=4,
                )
        ax.set_yticks(ys, labels=[plain_label(lane.label) for lane in lanes])
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_xlim(0, 1.0)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
        _percent_axis(ax)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("accuracy (bars: 95% interval)", color=MUTED, fontsize=10.5)
        _chance_line(ax, chance)
        return _to_svg(fig, key)


def category_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, dict[str, Estimate]]],
    key: str = "category-accuracy",
    width: float = WIDTH,
    chance: float | None = None,
    colours: Mapping[str, str] | None = None,
) -> str:
    """Accuracy per category: one group per category (top to bottom), one bar per lane, with intervals.
    A lane with no task in a category simply has no bar there. `chance`: the suite's chance level;
    `colours`: each lane's colour by its label (by its place in `series` otherwise)."""
    n_cat, n_lanes = len(categories), max(1, len(series))
    band = 0.8 / n_lanes
    legend_rows = math.ceil(n_lanes / 3) if n_lanes > 1 else 0
    height = 0.75 + 0.3 * legend_rows + n_cat * (0.26 * n_lanes + 0.22)
    with _figure(width, max(1.9, height)) as fig:
        ax = fig.subplots()
        for j, (label, by_cat) in enumerate(series):
            rows = [(i, by_cat[c]) for i, c in enumerate(categories) if c in by_cat]
            if not rows:
                continue
            ys = np.array([i for i, _ in rows]) - 0.4 + band * (j + 0.5)
            ests = [e for _, e in rows]
            fill = (colours or {}).get(label) or colour(j)
            ax.barh(ys, [e.value for e in ests], height=band * 0.86, color=fill, zorder=2, label=plain_label(label))
            ax.errorbar(
                [e.value for e in ests],
                ys,
                xerr=_errors(ests),
                fmt="none",
                ecolor=INK,
                elinewidth=1,
                capsize=2.5 if n_lanes > 2 else 3.5,
                zorder=3,
            )
            if n_lanes <= 3:
                for y, e in zip(ys, ests, strict=True):
                    ax.text(
                        min(e.high, 1.0) + 0.012,
                        y,
                        f"{e.value:.0%}",
                        va="center",
                        ha="left",
                        color=MUTED,
                        fontsize=9.5 if n_lanes > 1 else 10.5,
                        zorder=4,
                    )
        ax.set_yticks(np.arange(n_cat), labels=[plain_label(c) for c in categories])
        ax.set_ylim(n_cat - 0.5, -0.5)
        ax.set_xlim(0, 1.1)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
        _percent_axis(ax)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("accuracy per category (bars: 95% interval)", color=MUTED, fontsize=10.5)
        _chance_line(ax, chance)
        if n_lanes > 1:
            fig.legend(loc="outside upper left", ncols=min(n_lanes, 3))
        return _to_svg(fig, key)


def distribution_chart(
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    xlabel: str,
    integer: bool,
    key: str,
    width: float = WIDTH,
    colours: Mapping[str, str] | None = None,
) -> str | None:
    """The spread of one per-task figure (latency, tokens). One lane: a histogram with its median and 95th
    percentile marked. Several lanes: box plots side by side on one axis. None when no lane has values."""
    present = [(label, np.asarray(values, dtype=float)) for label, values in series if len(values)]
    if not present:
        return None
    ticker = _ticker()
    fmt = ticker.FuncFormatter(lambda v, _pos: f"{v:,.0f}") if integer else None
    if len(present) == 1:
        values = present[0][1]
        with _figure(width, 2.9) as fig:
            ax = fig.subplots()
            bins = int(min(40, max(6, round(math.sqrt(len(values)) * 1.6))))
            lo, hi = float(values.min()), float(values.max())
            if lo == hi:  # a single repeated value: give the histogram a visible width
                lo, hi = lo - 0.5 if integer else lo * 0.95, hi + 0.5 if integer else hi * 1.05 + 1e-9
            ax.hist(
                values,
                bins=bins,
                range=(lo, hi),
                color=(colours or {}).get(present[0][0]) or colour(0),
                alpha=0.85,
                edgecolor="white",
                linewidth=0.6,
                zorder=2,
            )
            p50, p95 = float(np.percentile(values, 50)), float(np.percentile(values, 95))
            ax.axvline(p50, color=INK, linewidth=1.4, linestyle="-", zorder=3, label=f"median {_num(p50, integer)}")
            ax.axvline(p95, color=BAD, linewidth=1.4, linestyle="--", zorder=3, label=f"95th pct {_num(p95, integer)}")
            ax.legend(loc="upper right")
            ax.set_ylabel("tasks", color=MUTED, fontsize=10.5)
            ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
            ax.grid(axis="x", visible=False)
            ax.set_xlabel(xlabel, color=MUTED, fontsize=10.5)
            ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=6))
            if fmt:
                ax.xaxis.set_major_formatter(fmt)
            return _to_svg(fig, key)
    n = len(present)
    with _figure(width, max(1.9, 0.8 + 0.55 * n)) as fig:
        ax = fig.subplots()
        box = ax.boxplot(
            [v for _, v in present],
            orientation="horizontal",
            patch_artist=True,
            widths=0.55,
            showmeans=True,
            whis=(5, 95),
            medianprops={"color": INK, "linewidth": 1.6},
            meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": INK, "markersize": 5},
            flierprops={
                "marker": "o",
                "markersize": 3,
                "markerfacecolor": MUTED,
                "markeredgecolor": "none",
                "alpha": 0.6,
            },
            whiskerprops={"color": MUTED},
            capprops={"color": MUTED},
        )
        for i, patch in enumerate(box["boxes"]):
            index = [lab for lab, _ in series].index(present[i][0])
            patch.set_facecolor((colours or {}).get(present[i][0]) or colour(index))
            patch.set_alpha(0.8)
            patch.set_edgecolor(INK)
        ax.set_yticks(np.arange(1, n + 1), labels=[plain_label(lab) for lab, _ in present])
        ax.set_ylim(n + 0.5, 0.5)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(xlabel, color=MUTED, fontsize=10.5)
        ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=6))
        if fmt:
            ax.xaxis.set_major_formatter(fmt)
        return _to_svg(fig, key)


def difference_chart(rows: Sequence[Difference], *, xlabel: str, key: str = "difference", width: float = WIDTH) -> str:
    """A forest plot: each difference in accuracy as a point with its 95% interval, against zero."""
    ticker = _ticker()
    n = len(rows)
    with _figure(width, max(1.7, 0.75 + 0.42 * n)) as fig:
        ax = fig.subplots()
        ys = np.arange(n)
        for y, row in zip(ys, rows, strict=True):
            est = row.estimate
            shade = (GOOD if est.value > 0 else BAD) if row.significant else MUTED
            ax.errorbar(
                [est.value * 100],
                [y],
                xerr=_errors([est]) * 100,
                fmt="o",
                color=shade,
                ecolor=shade,
                elinewidth=2,
                capsize=4,
                markersize=6.5,
                zorder=3,
            )
        ax.axvline(0, color=INK, linewidth=1, zorder=2)
        ax.set_yticks(ys, labels=[plain_label(r.label) for r in rows])
        ax.set_ylim(n - 0.5, -0.5)
        span = max([abs(r.estimate.low) for r in rows] + [abs(r.estimate.high) for r in rows] + [0.05]) * 100
        ax.set_xlim(-span * 1.15, span * 1.15)
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:+.0f}" if v else "0"))
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(xlabel, color=MUTED, fontsize=10.5)
        return _to_svg(fig, key)


def _num(value: float, integer: bool) -> str:
    if integer:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def pass_at_k_chart(
    curve: Sequence[tuple[int, float]],
    majority: float | None,
    k: int,
    *,
    key: str = "pass-at-k",
    width: float = WIDTH,
    fill: str | None = None,
) -> str:
    """pass@j against j = 1..k (a line through its points, each labelled), and maj@k as a point of its own at
    x = k: how much more often one of j samples is right than one sample, and what a vote of the k gives."""
    ticker = _ticker()
    line = fill or colour(0)
    with _figure(width, 2.9) as fig:
        ax = fig.subplots()
        xs = [j for j, _ in curve]
        ys = [v for _, v in curve]
        ax.plot(xs, ys, color=line, linewidth=2, marker="o", markersize=6, zorder=3, label="pass@k")
        for x, y in zip(xs, ys, strict=True):
            ax.annotate(f"{y:.0%}", (x, y), xytext=(0, 7), textcoords="offset points", ha="center", color=MUTED,
                        fontsize=9.5)  # fmt: skip
        if majority is not None:
            ax.plot([k], [majority], linestyle="none", marker="D", markersize=7, color=INK, zorder=4,
                    label=f"maj@{k} {majority:.1%}")  # fmt: skip
        ax.set_xlim(0.6, max(k, 1) + 0.4)
        ax.set_ylim(0, 1.08)
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        _percent_axis(ax, axis="y")
        ax.grid(axis="x", visible=False)
        ax.set_xlabel("k (samples of a task)", color=MUTED, fontsize=10.5)
        ax.set_ylabel("share of tasks", color=MUTED, fontsize=10.5)
        ax.legend(loc="lower right")
        return _to_svg(fig, key)


def share_histogram(
    values: Sequence[float],
    *,
    steps: int,
    low: float,
    xlabel: str,
    key: str,
    width: float = WIDTH,
    fill: str | None = None,
    mean: float | None = None,
) -> str:
    """A histogram of per-task figures on a grid of `steps` per unit from `low` to 1 (a task's share of correct
    samples: 0, 1/k, ..., 1; a difference of shares: -1 to 1), one bar per grid point, in percentage points on the
    x axis; `mean`, the mean of the values, as a line."""
    ticker = _ticker()
    steps = max(1, steps)
    points = np.arange(round(low * steps), steps + 1) / steps
    edges = np.append(points - 0.5 / steps, points[-1] + 0.5 / steps)
    with _figure(width, 2.9) as fig:
        ax = fig.subplots()
        # matplotlib's stub types bins as Sequence[float]; hist hands them to numpy.histogram, which takes an array.
        ax.hist(np.asarray(values, dtype=float) * 100, bins=edges * 100,  # type: ignore[arg-type]
                color=fill or colour(0), alpha=0.85, edgecolor="white", linewidth=0.6, zorder=2)  # fmt: skip
        if low < 0:
            ax.axvline(0, color=INK, linewidth=1, zorder=3)
        if mean is not None:
            ax.axvline(mean * 100, color=BAD, linewidth=1.4, linestyle="--", zorder=3,
                       label=f"mean {mean * 100:+.1f}" if low < 0 else f"mean {mean:.1%}")  # fmt: skip
            ax.legend(loc="upper left")
        ax.set_xlim(edges[0] * 100, edges[-1] * 100)
        if len(points) <= 13:  # a tick under every bar: the values a task can take
            ax.set_xticks(points * 100)
        else:
            ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=8))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:+.0f}" if low < 0 and v else f"{v:.0f}"))
        ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.set_ylabel("tasks", color=MUTED, fontsize=10.5)
        ax.grid(axis="x", visible=False)
        ax.set_xlabel(xlabel, color=MUTED, fontsize=10.5)
        return _to_svg(fig, key)
