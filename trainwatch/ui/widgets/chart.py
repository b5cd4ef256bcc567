"""One metric, every rank overlaid: plotext 6 drawn into a Text, redrawn only on change.

The data is reduced to min/max per terminal column before plotext sees it (plotext costs
~9 µs per point), so a redraw costs the same for 1 000 or 1 000 000 points.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from trainwatch.gcpause import gc_paused
from trainwatch.lines.sanitize import printable
from trainwatch.store.store import Store
from trainwatch.ui.data import (
    MAX_RANK_LINES,
    Buckets,
    Trace,
    band_outliers,
    chart_traces,
    chart_version,
    downsample,
    drawn_envelope,
    ema,
    rank_band,
    title_for,
)
from trainwatch.ui.data.labels import fit_labels
from trainwatch.ui.data.rank_points import RankPoints
from trainwatch.ui.data.runs import SEEN, STEP, WALL, RunTrace, run_traces, runs_version
from trainwatch.ui.data.yrange import Outlier, robust_range
from trainwatch.ui.format import fmt_num
from trainwatch.ui.redraw import CHARTS
from trainwatch.ui.sgr import sgr_text

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

# ANSI palette indices: the terminal's (and Textual theme's) own colours, not fixed RGB.
PALETTE = (12, 10, 11, 13, 14, 9, 4, 2, 3, 5, 6, 1)
ENVELOPE = 8
MARK = 9
SMOOTHED = ("loss", "eval_loss", "grad_norm")
MAX_LEGEND = 8
BAND_NOTE = "band: min/max over ranks"


@dataclass(frozen=True)
class ChartOptions:
    smoothing: float = 0.9  # EMA weight, 0 = raw
    log_y: bool = False
    wall_time: bool = False
    last_n: int | None = None  # zoom: last N points per rank, None = all


def colour(i: int) -> int:
    return PALETTE[i % len(PALETTE)]


def warm_up_charts(host: Widget) -> threading.Event:
    """Import plotext in a thread worker of `host` (the dashboard, once its numbers are on screen):
    the import takes ~0.3-0.4 s, which the first chart redraw would otherwise spend on the UI
    thread. The event is set when the import is over (done or failed: a redraw then imports it)."""
    done = threading.Event()

    def work() -> None:
        try:
            import plotext  # noqa: F401
        finally:
            done.set()

    host.run_worker(work, thread=True, group="warm-up", exit_on_error=False)
    return done


@gc_paused()  # (a redraw is thousands of plotext objects: a collection in it cost a third of its time)
def render_chart(
    traces: list[Trace],
    width: int,
    height: int,
    *,
    name: str,
    options: ChartOptions,
    marks: list[float] | None = None,
    x_label: str = "",
    off_scale: list[Outlier] | None = None,
    points: RankPoints | None = None,
) -> Text:
    """The plot (without legend) as Text, `height` lines of `width` cells. The y scale is
    `robust_range`'s: points it leaves out are drawn as ▲/▼ at the edge and, with `off_scale`
    given, appended to it (real values, for the legend). `points`: the chart's ranks folded
    per point, kept between redraws (`rank_band`)."""
    import plotext as plt  # (on the first draw: importing plotext takes ~0.4 s, not spent before the header shows)

    width, height = max(width, 20), max(height, 4)
    plot_columns = max(8, width - 10)  # y tick labels and frame take ~10 columns
    # The widget's size is the plot's: plotext would clamp it to the size of the terminal its
    # process reports (80x24 when stdout is not one: a browser session, a test, a pipe).
    plt.terminal.limit(False, False)
    fig = plt.figure
    fig.clear()
    fig.theme("simple")
    fig.plot_size(width, height)
    add = _adder(fig)
    signal = _signal_maker(fig)
    # Reduce every series first, then scale (`robust_range`), then draw clamped to the scale.
    jobs = chart_lines(traces, plot_columns, name=name, options=options, points=points)

    def draw(job: Line) -> None:
        """One reduced series: its line (or its EMA over a grey min/max envelope); a band's edge
        in its own pixel; along: the mean line (a band's), not the min/max zigzag."""
        b, pixel = job.buckets, plt.pixel(foreground=colour(job.colour))
        if len(b.env_x) == 1:  # one point (a single memory report): a marker, not an invisible dot
            add(signal(b.env_x, b.env_y, plt.marker("●", pixel)))
        elif job.edge is not None:
            add(signal(b.env_x, b.env_y, plt.marker("braille", _edge_pixel(job))).lines())
        elif job.smooth or job.envelope or job.along:
            if job.envelope:
                xs, ys = drawn_envelope(b)
                add(signal(xs, ys, plt.marker("braille", plt.pixel(foreground=ENVELOPE))).lines())
            line = ema(b.mean_y, options.smoothing, b.counts) if job.smooth else b.mean_y
            add(signal(b.mean_x, line, plt.marker("braille", pixel)).lines())
        else:
            xs, ys = drawn_envelope(b)
            add(signal(xs, ys, plt.marker("braille", pixel)).lines())

    scale = robust_range([(job.buckets.env_x, job.buckets.env_y) for job in jobs])
    if scale is None:
        return Text("no data yet", style="dim", justify="center")
    y_lo, y_hi = scale.lo, scale.hi
    for job in jobs:
        b = job.buckets
        if scale.outliers:  # off-scale points drawn at the edge, where their markers sit
            b.env_y = [min(y_hi, max(y_lo, v)) for v in b.env_y]
            b.mean_y = [min(y_hi, max(y_lo, v)) for v in b.mean_y]
        draw(job)
    if scale.outliers:
        for above, at, arrow in ((True, y_hi, "▲"), (False, y_lo, "▼")):
            off_xs = [o.x for o in scale.outliers if o.above is above]
            if off_xs:
                add(signal(off_xs, [at] * len(off_xs), plt.marker(arrow, plt.pixel(foreground=MARK))))
        if off_scale is not None:
            real = (lambda v: 10**v) if options.log_y else (lambda v: v)
            off_scale.extend(Outlier(o.x, real(o.y), o.above) for o in scale.outliers)
    if marks:
        add(signal(marks, [y_lo] * len(marks), plt.marker("×", plt.pixel(foreground=MARK))))
    if y_hi - y_lo <= abs(y_lo) * 1e-9:  # a constant series (to rounding): centre it, one tick at its value
        pad = 0.5 if options.log_y else (abs(y_lo) * 0.1 or 1.0)
        fig.ruler(1).lim(y_lo - pad, y_hi + pad)
        fig.ruler(1).ticks([y_lo], [short_num(10**y_lo) if options.log_y else fmt_num(y_lo)])
    else:
        if scale.outliers:
            fig.ruler(1).lim(y_lo, y_hi)
        if options.log_y:
            ys = nice_ticks(y_lo, y_hi, 4)
            if ys:
                fig.ruler(1).ticks(ys, [short_num(10**t) for t in ys])
    lo, hi = x_bounds(traces, jobs, marks)
    if hi <= lo:  # a single step: plotext would invent a 0..1 range with odd labels
        pad = max(1.0, abs(lo) * 0.05)
        fig.ruler(0).lim(lo - pad, hi + pad)
        fig.ruler(0).ticks([lo], [fmt_num(lo)])
    else:
        ticks = nice_ticks(lo, hi, max(2, plot_columns // 9))
        if ticks:
            fig.ruler(0).ticks(ticks, [short_num(t) for t in ticks])
    if x_label:
        fig.label(x_label)
    return sgr_text(fig.build().string().rstrip("\n"))


def x_bounds(
    traces: Sequence[Trace], jobs: Sequence[Line], marks: Sequence[float] | None = None
) -> tuple[float, float]:
    """The lowest and highest x of the traces, from each trace's ends and the reduced points
    drawn (each column's min/max and mean): no pass over a million steps per redraw. Exact for
    the usual trace (steps that only grow, as each attempt's do) and for one that fits the
    columns (every point drawn); else the span of what is drawn, which is the axis plotext lays."""
    ends = _ends(traces)
    lo, hi = min(ends, default=math.inf), max(ends, default=-math.inf)
    for job in jobs:
        b = job.buckets
        for xs in (b.env_x, b.mean_x):
            if xs:
                lo, hi = min(lo, min(xs)), max(hi, max(xs))
    if marks:
        lo, hi = min(lo, min(marks)), max(hi, max(marks))
    return lo, hi


def _ends(traces: Sequence[Trace]) -> list[float]:
    """Each trace's first and last x (steps only grow within an attempt: its span)."""
    return [x for t in traces if len(t.xs) for x in (t.xs[0], t.xs[-1]) if not math.isnan(x)]


def _adder(fig: Any) -> Callable[[Any], None]:
    """How a signal joins the figure. `fig.draw` also walks the signal's points in Python for
    the colour cycler (a tenth of a redraw), which only serves signals drawn without a colour:
    every signal here has one, so it is added to the figure's signals directly when plotext
    still keeps them there (`test_chart` checks both ways draw the same)."""
    signals = getattr(fig, "_signals", None)
    direct = getattr(signals, "_add", None)
    if direct is None:
        return fig.draw  # type: ignore[no-any-return]
    return direct  # type: ignore[no-any-return]


def _signal_maker(fig: Any) -> Callable[[Sequence[float], Sequence[float], Any], Any]:
    """How a signal is made. `fig.signal` copies its marker once per point in Python (a tenth of a
    redraw) and hands each copy to plotext's kernel, which copies it again (`Point`'s copy of its
    marker): one marker, corrected as `fig.signal` corrects it, serves every point when plotext
    still has that kernel call (`test_chart_reduce` checks both ways draw the same)."""
    try:
        from plotext._correct.marker import marker as corrected
        from plotext._kernel.clink import clink
        from plotext._signal.signal import signal_class

        append = clink.signal_append_point
        fig._next_marker  # noqa: B018  (the colour cycler's step `fig.signal` takes)
    except (ImportError, AttributeError):
        return lambda xs, ys, marker: fig.signal(xs, ys, marker=marker)

    def make(xs: Sequence[float], ys: Sequence[float], marker: Any) -> Any:
        m = corrected(marker, fig._next_marker())
        n = min(len(xs), len(ys))
        if n == 0:  # (`fig.signal` takes a second step of the cycler then)
            fig._next_marker()
        sig = signal_class(n)
        at, mp = sig._pointer, m._pointer
        for x, y in zip(xs, ys, strict=False):
            append(at, x, y, mp)
        return sig._set_marker(m)._set_xside(0)._set_yside(0)

    return make


@dataclass
class Line:
    """One reduced series to draw, and how: `colour` is a palette index (`colour(i)`); smooth:
    its EMA; envelope: over a grey min/max envelope; edge: a band's low or high edge ("grey" for
    the dashboard's band of all ranks, "dim" for a compare run's band in its own colour);
    along: a band's mean line."""

    buckets: Buckets
    colour: int
    smooth: bool = False
    envelope: bool = False
    edge: str | None = None
    along: bool = False


def chart_lines(
    traces: Sequence[Trace], columns: int, *, name: str, options: ChartOptions, points: RankPoints | None = None
) -> list[Line]:
    """Every series of a chart reduced to `columns` (log10 on a log scale), in drawing order.

    Ranks beyond `MAX_RANK_LINES` are one grey band plus the outermost ranks; a compare run
    (`RunTrace`) with several ranks is its own band, dimmed, in its colour, around its mean."""
    smooth = name in SMOOTHED and options.smoothing > 0
    out: list[Line] = []

    def add(line: Line) -> None:
        b = line.buckets
        if not b.env_x:
            return
        if options.log_y:  # plotted as log10, labelled with the real values
            b.env_y = [math.log10(v) for v in b.env_y]
            b.mean_y = [math.log10(v) for v in b.mean_y]
        out.append(line)

    def add_band(ranks: Sequence[Trace], i: int, edge: str, folded: RankPoints | None = None) -> None:
        band = rank_band(ranks, columns, positive_only=options.log_y, points=folded)
        if band.xs:
            for low_high in (band.low, band.high):
                add(Line(Buckets(band.xs, low_high, band.xs, low_high, band.counts), i, edge=edge))
            add(Line(Buckets(band.xs, band.mean, band.xs, band.mean, band.counts), i, smooth, along=True))

    def reduced(trace: Trace) -> Buckets:
        return downsample(trace.xs, trace.ys, columns, positive_only=options.log_y, means=smooth, blocks=trace.blocks)

    if len(traces) > MAX_RANK_LINES and not _runs(traces):  # every rank in one band, the outermost on their own
        add_band(traces, 0, "grey", points)
        for i, (_why, trace) in enumerate(band_outliers(traces), 1):
            add(Line(reduced(trace), i, smooth))
        return out
    for i, trace in enumerate(traces):
        ranks = trace.ranks if isinstance(trace, RunTrace) else []
        if len(ranks) > 1:
            add_band(ranks, _slot(trace, i), "dim")
        else:
            add(Line(reduced(trace), _slot(trace, i), smooth, envelope=smooth))
    return out


def _slot(trace: Trace, i: int) -> int:
    """The colour index of the i-th trace drawn: a compare run keeps its run's colour on every
    chart (also on a chart some earlier run has no data for)."""
    return trace.slot if isinstance(trace, RunTrace) else i


def _runs(traces: Sequence[Trace]) -> bool:
    """Whether these are compare runs (each its own colour, however many), not one run's ranks."""
    return any(isinstance(t, RunTrace) for t in traces)


def _edge_pixel(line: Line) -> object:
    import plotext as plt

    if line.edge == "dim":
        return plt.pixel(foreground=colour(line.colour), style="dim")
    return plt.pixel(foreground=ENVELOPE)


def nice_ticks(lo: float, hi: float, count: int) -> list[float]:
    """Round tick positions (1, 2, 5 x 10^k steps) inside [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out = []
    x = first
    while x <= hi + 1e-9 * step:
        out.append(x)
        x += step
    return out


def short_num(x: float) -> str:
    """Tick label: 500, 1.5k, 23k, 1.2M."""
    a = abs(x)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}"


def legend(
    traces: list[Trace], name: str, smoothing: float, width: int | None = None, off_scale: Sequence[Outlier] = ()
) -> Text:
    """One line: colour key per rank, latest value, points off the scale, and the smoothing in
    use. With `width`, labels are shortened (`fit_labels`) so that no value is cut."""
    out = Text(no_wrap=True, overflow="ellipsis")
    shown = [t for t in traces if len(t.ys)]
    entries: list[tuple[int, str, str]] = []  # (colour, label, value)
    extra = ""
    runs = _runs(traces)
    banded = runs and any(len(t.ranks) > 1 for t in shown if isinstance(t, RunTrace))
    if len(traces) > MAX_RANK_LINES and not runs:
        latest = [t.ys[-1] for t in shown if math.isfinite(t.ys[-1])]
        mean = f"{fmt_num(sum(latest) / len(latest))}" if latest else ""
        band = [
            (colour(i), f"{trace.label} ({why})", fmt_num(trace.ys[-1]))
            for i, (why, trace) in enumerate(band_outliers(traces), 1)
        ]
        head = f"mean of {len(shown)} ranks"
    else:
        band = []
        head = ""
        entries = [(colour(_slot(t, i)), t.label, fmt_num(t.ys[-1])) for i, t in enumerate(shown[:MAX_LEGEND])]
        if len(shown) > MAX_LEGEND:
            extra = f"+{len(shown) - MAX_LEGEND} {'runs' if runs else 'ranks'}  "
    entries = entries or band
    off = off_scale_note(off_scale)
    notes = "" if head else _notes(shown, name, smoothing, banded)
    fixed = sum(5 + len(v) for _c, _l, v in entries) - 2 + len(extra) + len(off)  # - the last gap
    if head:
        fixed += 5 + len(head) + len(mean)
    if banded:  # the band note is the key to the band: labels shorten so that it shows (the rest may be cut)
        fixed += 2 + len(BAND_NOTE)
    labels = fit_labels([label for _c, label, _v in entries], fixed, width) if width else [e[1] for e in entries]
    if head:
        out.append("■ ", style=f"color({colour(0)})")
        out.append(head)
        if mean:
            out.append(f" {mean}  ", style="bold")
    for (c, _label, value), label in zip(entries, labels, strict=True):
        out.append("■ ", style=f"color({c})")
        out.append(label)
        out.append(f" {value}  ", style="bold")
    if extra:
        out.append(extra, style="dim")
    if off:
        out.append(off, style=f"color({MARK})")
    restarts = [t.restart_step for t in shown if t.restart_step is not None]
    if restarts:  # earlier attempts are not drawn: say so, so nothing looks lost
        out.append(f"since restart at step {fmt_num(min(restarts))}  ", style="yellow")
    if head:
        smoothed = f"EMA {smoothing:g}, " if name in SMOOTHED and smoothing > 0 else ""
        out.append(f"{smoothed}grey: min/max over ranks; each rank: tab 2", style="dim")
    elif notes:
        out.append(notes, style="dim")
    return out


def _notes(shown: Sequence[Trace], name: str, smoothing: float, banded: bool) -> str:
    """What the legend says of the drawing: the smoothing (over a grey envelope) and, in
    compare, that a run's band is its ranks' min/max."""
    notes = [BAND_NOTE] if banded else []
    if name in SMOOTHED and smoothing > 0:
        lone = any(not isinstance(t, RunTrace) or len(t.ranks) < 2 for t in shown)  # drawn over an envelope
        notes.append(f"EMA {smoothing:g}" + (" (grey: min/max)" if lone else ""))
    return "  ".join(notes)


def off_scale_note(points: Sequence[Outlier]) -> str:
    """`▲ 38.2 @1  `: the highest (and lowest) point left off the scale, and how many more."""
    parts = []
    for above, arrow in ((True, "▲"), (False, "▼")):
        side = [o for o in points if o.above is above]
        if side:
            worst = max(side, key=lambda o: o.y) if above else min(side, key=lambda o: o.y)
            more = f" +{len(side) - 1}" if len(side) > 1 else ""
            parts.append(f"{arrow} {fmt_num(worst.y)} @{short_num(worst.x)}{more}  ")
    return "".join(parts)


class Chart(Widget):
    """A bordered chart of one metric, redrawn at the charts' pace when its data, size or
    options changed."""

    pace: ClassVar[str] = CHARTS

    DEFAULT_CSS = """
    Chart { border: round $panel; height: 1fr; min-height: 6; padding: 0 0; }
    """

    def __init__(self, metric: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.metric = metric
        self._key: tuple[object, ...] | None = None
        self._plot: Text = Text("no data yet", style="dim")
        self._legend: Text = Text()
        self._inputs: _Inputs | None = None
        self._drawn_size: tuple[int, int] = (0, 0)
        self._points = RankPoints()  # its ranks folded per point, between redraws (256 per-rank files)
        self.border_title = title_for(metric)
        self.renders = 0  # how many times the plot was rebuilt (tests: no redraw when idle)
        self._content: tuple[int, Content] | None = None  # (renders, what `render` returns)
        self._painted = 0.0  # CPU seconds the compositor spent rendering it since `take_paint_cost`
        self._refit = 0.0  # ...of which a plot drawn again at a new size (not a paint)

    def set_metric(self, metric: str) -> None:
        self.metric = metric
        self.border_title = title_for(metric)
        self._key = None
        self._inputs = None

    def redraw(self, view: View) -> bool:
        """The loss-scale chart marks the fp16 overflows."""
        marks = overflow_steps(view.store) if self.metric == "loss_scale" else None
        return self.update_from(view.store, view.options, marks)

    def update_from(self, store: Store, options: ChartOptions, marks: list[float] | None = None) -> bool:
        """Rebuild the plot if its data, size or options changed. True if it did."""
        w, h = self.content_size.width, self.content_size.height
        if w <= 0 or h <= 0 or not self.display:
            return False
        version = chart_version(store, self.metric)
        key = (self.metric, version, options, tuple(marks or ()))
        if key == self._key:
            if (w, h) == self._drawn_size:
                return False
            self._draw(w, h)  # same data, new size: no store access
            self.refresh()
            return True
        self._key = key
        traces, used_time = chart_traces(store, self.metric, last_n=options.last_n, wall_time=options.wall_time)
        x_label = ""
        if used_time:
            x_label = wall_axis(traces)
            marks = None
        elif options.wall_time:
            x_label = "step (no timestamps in log)"
        self._show(traces, options, marks_in_view(marks, traces), x_label)
        return True

    def update_from_runs(self, runs: Sequence[tuple[str, Store]], options: ChartOptions, x_axis: str) -> bool:
        """Compare: one trace per run (`run_traces`), drawn as the ranks of one run are. True if redrawn."""
        w, h = self.content_size.width, self.content_size.height
        if w <= 0 or h <= 0 or not self.display:
            return False
        key = (self.metric, runs_version(runs, self.metric), options, x_axis)
        if key == self._key:
            if (w, h) == self._drawn_size:
                return False
            self._draw(w, h)
            self.refresh()
            return True
        self._key = key
        runs_drawn, used = run_traces(runs, self.metric, last_n=options.last_n, x_axis=x_axis)
        traces: list[Trace] = list(runs_drawn)
        if used == WALL:
            x_label = wall_axis(traces) + " since each run's start"
        elif used == SEEN:
            x_label = "tokens / samples seen"
        else:
            x_label = "step" if x_axis == STEP else f"step (not every run has {AXIS_NAMES[x_axis]})"
        self._show(traces, options, None, x_label)
        return True

    def _show(self, traces: list[Trace], options: ChartOptions, marks: list[float] | None, x_label: str) -> None:
        self._inputs = _Inputs(traces, options, marks, x_label)
        self._draw(*self._size_now())
        self.refresh()

    def _size_now(self) -> tuple[int, int]:
        return self.content_size.width, self.content_size.height

    def _draw(self, w: int, h: int) -> None:
        """Plot the cached traces at w x h cells (the legend takes the last line)."""
        inputs = self._inputs
        if inputs is None:
            return
        self._drawn_size = (w, h)
        off: list[Outlier] = []
        try:
            self._plot = render_chart(
                inputs.traces,
                w,
                h - 1,
                name=self.metric,
                options=inputs.options,
                marks=inputs.marks,
                x_label=inputs.x_label,
                off_scale=off,
                points=self._points,
            )
        except Exception as exc:  # a plotting corner case must not take the dashboard down
            self._plot = Text(printable(f"cannot draw this chart: {exc.__class__.__name__}: {exc}"), style="dim")
        self._legend = legend(inputs.traces, self.metric, inputs.options.smoothing, w, off)
        self.renders += 1

    def _fit(self) -> bool:
        """After a resize the plot is redrawn at the new size at once: the app's next chart
        tick may run before the layout settles (a plot built for the old size wraps or leaves
        the panel mostly empty until some other action redraws it)."""
        w, h = self.content_size.width, self.content_size.height
        if w > 0 and h > 0 and self._inputs is not None and (w, h) != self._drawn_size:
            start = time.thread_time()
            self._draw(w, h)
            self._refit += time.thread_time() - start
            return True
        return False

    def on_resize(self) -> None:
        if self._fit():
            self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        """The compositor's rendering of the plot (its conversion to styled lines, a third of what
        a redraw costs at 256 ranks) is counted for the charts' pacing (`take_paint_cost`); a
        plot drawn again at a new size on the way (`_fit`, once per resize) is not."""
        start = time.thread_time()
        self._refit = 0.0
        try:
            return super().render_lines(crop)
        finally:
            self._painted += time.thread_time() - start - self._refit

    def take_paint_cost(self) -> float:
        """CPU seconds of rendering since the last call."""
        cost, self._painted = self._painted, 0.0
        return cost

    def render(self) -> Content:
        """The plot and its legend, converted to Textual's `Content` once per plot built: the
        compositor renders a widget again on partial updates of the screen (256 ranks: a
        chart's thousand styled spans converted several times a second)."""
        self._fit()
        if self._content is None or self._content[0] != self.renders:
            out = self._plot.copy()
            out.append("\n")
            out.append_text(self._legend)
            self._content = (self.renders, Content.from_rich_text(out, console=self.app.console))
        return self._content[1]


@dataclass
class _Inputs:
    """What the last plot was drawn from, to draw it again at another size."""

    traces: list[Trace]
    options: ChartOptions
    marks: list[float] | None
    x_label: str


AXIS_NAMES = {STEP: "steps", WALL: "timestamps", SEEN: "tokens or samples seen"}


def wall_axis(traces: list[Trace]) -> str:
    """Log times made minutes (or hours) since the earliest point, in place (a compare run's
    ranks too); the axis label."""
    t0 = min((t.xs[0] for t in traces if len(t.xs)), default=0.0)
    span = max((t.xs[-1] for t in traces if len(t.xs)), default=t0) - t0
    unit, div = ("hours", 3600.0) if span > 7200 else ("minutes", 60.0)
    for t in [*traces, *(r for run in traces if isinstance(run, RunTrace) for r in run.ranks)]:
        t.xs = [(x - t0) / div for x in t.xs]  # type: ignore[assignment]
    return f"wall time ({unit})"


def marks_in_view(marks: list[float] | None, traces: Sequence[Trace]) -> list[float] | None:
    """The marks within the steps the traces span: an overflow of the zoomed-out part (`z`) or of
    an earlier attempt that ran further is not drawn, and does not stretch the x axis to itself."""
    ends = _ends(traces)
    if not marks or not ends:
        return marks
    lo, hi = min(ends), max(ends)
    return [m for m in marks if lo <= m <= hi]


def overflow_steps(store: Store) -> list[float]:
    """Steps of fp16 overflow events (marked on the loss-scale chart)."""
    with store.lock:
        return [
            float(e.step)
            for e in store.events
            if e.kind == "overflow" and e.step is not None and not math.isnan(e.step)
        ]
