"""Shared figure style, so every chapter's plots look alike (colours, sizes, fonts).

Figures are built with ``matplotlib.figure.Figure`` on the Agg canvas, never through pyplot's
global state, so explorers can own one figure each and redraw it in place.
"""

from __future__ import annotations

import functools

STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "legend.fontsize": 10,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
}

# One colour per idea, the same in every chapter.
COLORS = {
    "compute": "#1f77b4",   # blue: matrix units
    "weights": "#d62728",   # red: weight fetch
    "kv": "#2ca02c",        # green: KV-cache fetch
    "memory": "#ff7f0e",    # orange: weights + KV
    "total": "#111111",     # black: the bound that wins (the board's bold line)
    "marker": "#7f7f7f",    # grey: the learner's current setting
    "balance": "#9467bd",   # purple: balance points (B*, Goldilocks)
}

def presentation_scale() -> float:
    """How much larger figures are drawn for a projector: ``LECTURE_PRESENT`` unset, empty or 0 -> 1;
    ``1``/``true``/``yes`` -> :data:`PRESENT_SCALE` (`make present` sets it: 10-pt text is then 16.7 px);
    a number such as ``1.8`` -> that scale (1 to 3)."""
    import os

    value = os.environ.get("LECTURE_PRESENT", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return 1.0
    if value in ("1", "true", "yes", "on"):
        return PRESENT_SCALE
    try:
        return min(3.0, max(1.0, float(value)))
    except ValueError:
        return 1.0


# The projector view (`make present`, tools/present/, issue 47 §5) shows a chapter at 1280x800 with every
# explorer at most 720 px tall (beside the browser's own bars) and its figure's text at least 16 px: 10-pt
# text at 80 x 1.5 = 120 dpi is 16.7 px. A figure of one column of axes is drawn at most PRESENT_BESIDE_PX
# wide, so that it stands left of the controls (the template gives them the rest of the 1,240-px page); one
# whose panels sit side by side needs the page's width (PRESENT_WIDTH_PX) and the controls go beneath it.
# Either way the axes are PRESENT_HEIGHT of their notebook height; margins, text and legends keep their
# size in inches.
PRESENT_SCALE = 1.5
PRESENT_WIDTH_PX = 1200
PRESENT_BESIDE_PX = 820
PRESENT_HEIGHT = 0.6


def presenting() -> bool:
    """True when figures are drawn for the projector (:func:`presentation_scale` above 1)."""
    return presentation_scale() > 1.0


# fewer pixels per frame: explorer frames encode, travel and decode faster; more in presentation mode
# (every size is in points or inches, so a higher DPI scales text, lines and figure alike)
DPI = round(80 * presentation_scale())
MIN_FONT = 10     # points: nothing in a figure is set smaller (issue 13)
LEGEND_GAP = 0.12  # inches between an axes' right edge and its legend
# The widest figure, in CSS pixels: JupyterLab's notebook column on a 1280-px screen with the file
# browser open is 848 px wide (measured in Chromium, JupyterLab 4.6), and a wider image is scaled
# down with its text (issue 19: 1,228-px figures shown at 0.69 of their size, text at 7-8 px).
# On a projector the figure shares the page's width with the controls beside it (PRESENT_WIDTH_PX).
MAX_WIDTH_PX = PRESENT_WIDTH_PX if presenting() else 840


def present_width(figure, max_width: float) -> float:
    """The widest ``figure`` may be, in inches, given the page's ``max_width``: on the projector a figure whose
    axes all share one column is held to :data:`PRESENT_BESIDE_PX`, to stand beside the controls; otherwise,
    and outside the projector, ``max_width``."""
    if not presenting():
        return max_width
    columns = {round(axis.get_position().x0, 2) for axis in figure.axes if axis.get_visible()}
    return min(max_width, PRESENT_BESIDE_PX / figure.dpi) if len(columns) <= 1 else max_width


def new_figure(width: float = 9.0, height: float = 3.6, ncols: int = 1, nrows: int = 1):
    """A Figure on the Agg canvas with the course style, and its axes (a list)."""
    import matplotlib
    from matplotlib.figure import Figure

    from . import agg_text

    bottom, top = 0.15, 0.9
    if presenting():       # projector: the axes PRESENT_HEIGHT as tall, the margins (text) as many inches
        axes_height = (top - bottom) * height * PRESENT_HEIGHT
        margins = (1 - top + bottom) * height
        bottom, top = bottom * height / (margins + axes_height), 1 - (1 - top) * height / (margins + axes_height)
        height = margins + axes_height
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(width, height), dpi=DPI)
        agg_text.canvas_class()(figure)
        axes = figure.subplots(nrows, ncols, squeeze=False).ravel().tolist()
        figure.subplots_adjust(left=0.16 / ncols + 0.03, right=0.98, bottom=bottom, top=top, wspace=0.3)
    return figure, axes


def readable(figure) -> None:
    """Raise every text in ``figure`` (labels, ticks, annotations, legends) to at least MIN_FONT.

    Tick labels are raised through their axis's tick parameters, which every tick made later copies:
    an axis makes its ticks when asked for its children, and walking them would make ticks for the
    limits and locators of the moment, before the explorer's own are in place."""
    from matplotlib.axis import Axis
    from matplotlib.text import Text

    def raise_text(text) -> None:
        if text.get_fontsize() < MIN_FONT:
            text.set_fontsize(MIN_FONT)

    def visit(artist) -> None:
        if isinstance(artist, Axis):
            raise_text(artist.label)
            raise_text(artist.offsetText)
            for which, ticks in (("major", artist.majorTicks), ("minor", artist.minorTicks)):
                if ticks[0].label1.get_fontsize() < MIN_FONT:
                    artist.set_tick_params(which=which, labelsize=MIN_FONT)
            return
        if isinstance(artist, Text):
            raise_text(artist)
        for child in artist.get_children():
            visit(child)

    visit(figure)


# Line styles that carry meaning without colour (issue 13): weights dash-dot, KV dotted, as in every chapter.
IDEA_STYLES = {COLORS["weights"]: "-.", COLORS["kv"]: ":"}
SPARE_STYLES = ("--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 1)), (0, (8, 3)))
SPARE_MARKERS = ("s", "^", "D", "v", "P", "X")


def line_signature(line) -> tuple:
    """What tells a line apart in greyscale: its dash pattern, marker and (bucketed) width."""
    offset, pattern = line._unscaled_dash_pattern     # named and custom dash patterns alike
    dashes = "none" if line.get_linestyle() == "None" else tuple(pattern) if pattern else "solid"
    hollow = str(line.get_markerfacecolor()).lower() == "none"
    return dashes, str(line.get_marker()) + (" hollow" if hollow else ""), round(line.get_linewidth() / 1.2)


def _first_unseen(line, seen: set, spares, apply) -> None:
    """Apply the spare styles in turn until the line looks like none in ``seen`` (or they run out)."""
    for spare in spares:
        if line_signature(line) not in seen:
            return
        apply(spare)


def distinguish_lines(figure) -> None:
    """Make the legend's lines in each axes differ by more than colour: solid weight/KV curves get
    the course's dash-dot/dotted styles, and any remaining look-alike gets a spare dash pattern."""
    styles = {}
    for axis in figure.axes:
        legend = axis.get_legend()
        if legend is None:
            continue
        originals = {line.get_label(): line for line in axis.get_lines()}
        seen = set()
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            line = originals.get(text.get_text())
            if line is None or not hasattr(handle, "set_linestyle"):
                continue
            if line.get_linestyle() == "-" and line.get_color() in IDEA_STYLES and len(line.get_xdata()) != 2:
                line.set_linestyle(IDEA_STYLES[line.get_color()])
            if line.get_linestyle() == "None":            # a point: another marker shape
                _first_unseen(line, seen, SPARE_MARKERS, line.set_marker)
                handle.set_marker(line.get_marker())
            else:
                _first_unseen(line, seen, SPARE_STYLES, line.set_linestyle)
            seen.add(line_signature(line))
            handle.set_linestyle(line.get_linestyle())
            handle._unscaled_dash_pattern = line._unscaled_dash_pattern
            handle._dash_pattern = line._dash_pattern
            # the dash pattern itself: get_linestyle() names every custom pattern "--"
            offset, pattern = line._unscaled_dash_pattern
            styles[(line.get_label(), line.get_color())] = (
                (offset, pattern) if pattern else line.get_linestyle(), line.get_marker())
    for axis in figure.axes:          # the same curve in a panel without a legend looks the same
        if axis.get_legend() is not None:
            continue
        for line in axis.get_lines():
            style = styles.get((line.get_label(), line.get_color()))
            if style is not None:
                line.set_linestyle(style[0])
                line.set_marker(style[1])


def is_dot(line) -> bool:
    """A line drawn as markers only (the learner's point, a measured system), no line between them."""
    return line.get_linestyle() == "None" and line.get_marker() not in (None, "", "None", " ")


def whole_dots(figure) -> None:
    """Let every dot (:func:`is_dot`) show whole when its centre sits on the frame, as it does at a slider's
    end: its clip box is the axes' box grown by the dot's radius, read at each draw. A dot whose centre is
    off the chart stays out of sight."""
    for axis in figure.axes:
        for line in axis.get_lines():
            if is_dot(line):
                line.set_clip_box(_grown_box_class()(axis, line))


@functools.cache
def _grown_box_class():
    from matplotlib.transforms import BboxBase

    class GrownBox(BboxBase):
        """The axes' box grown by a dot's radius, computed when it is read (the axes may move or change dpi)."""

        def __init__(self, axes, line):
            super().__init__()
            self._axes, self._line = axes, line

        def get_points(self):
            radius = self._line.get_markersize() / 2 * self._axes.figure.dpi / 72
            return self._axes.bbox.padded(radius).get_points()

    return GrownBox


def keep_labels_inside(figure, pad: float = 0.08) -> None:
    """Widen the figure where tick labels, axis labels or titles run past its left or right edge
    (wider 10 pt tick labels on a log axis), keeping every axes' size in inches."""
    renderer = figure.canvas.get_renderer()
    frame = figure.bbox
    texts = []
    for axis in figure.axes:
        texts += axis.get_xticklabels() + axis.get_yticklabels() + [axis.title, axis.xaxis.label, axis.yaxis.label]
    boxes = [t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text()]
    if not boxes:
        return
    left = max(0.0, (frame.x0 - min(b.x0 for b in boxes)) / figure.dpi)
    right = max(0.0, (max(b.x1 for b in boxes) - frame.x1) / figure.dpi)
    if left == 0 and right == 0:
        return
    left, right = (left + pad if left else 0.0), (right + pad if right else 0.0)
    width, height = figure.get_size_inches()
    positions = {axis: axis.get_position() for axis in figure.axes}
    new_width = width + left + right
    figure.set_size_inches(new_width, height)
    for axis, box in positions.items():
        axis.set_position([(box.x0 * width + left) / new_width, box.y0, box.width * width / new_width, box.height])


def _has_right_neighbour(axis, figure) -> bool:
    box = axis.get_position()
    return any(other is not axis and other.get_position().x0 >= box.x1 - 1e-6
               and other.get_position().y0 < box.y1 and other.get_position().y1 > box.y0 for other in figure.axes)


def _has_neighbour_below(axis, figure) -> bool:
    box = axis.get_position()
    return any(other is not axis and other.get_position().y1 <= box.y0 + 1e-6
               and other.get_position().x0 < box.x1 and other.get_position().x1 > box.x0 for other in figure.axes)


def _legends_below(figure, legends) -> None:
    """Legends of axes with a neighbour to their right go under their axes (two columns), and the
    figure grows taller by the tallest, so the figure does not grow wide."""
    renderer = figure.canvas.get_renderer()
    placed, spans = [], {}
    for axis, legend in legends:
        handles, labels = axis.get_legend_handles_labels()
        legend.remove()
        # room under this axes: up to the next axes to its right (or the figure's edge)
        box = axis.get_position()
        starts = [o.get_position().x0 for o in figure.axes
                  if o is not axis and o.get_position().x0 >= box.x1 - 1e-6
                  and o.get_position().y0 < box.y1 and o.get_position().y1 > box.y0]
        ends = [o.get_position().x1 for o in figure.axes
                if o is not axis and o.get_position().x1 <= box.x0 + 1e-6
                and o.get_position().y0 < box.y1 and o.get_position().y1 > box.y0]
        centre = (box.x0 + box.x1) / 2       # the legend is centred under its axes
        left = (max(ends) + box.x0) / 2 if ends else 0.0             # half of each gap to a neighbour
        right = (min(starts) + box.x1) / 2 if starts else 1.0
        room = 2 * min(centre - left, right - centre) * figure.bbox.width
        # The only legend of its row may use the figure's whole width, in up to 3 columns: a tall one-column
        # legend under a pair of panels made Ch1's explorer taller than a projector (issue 31 §5).
        alone = not any(other is not axis and other.get_position().y0 < box.y1 and other.get_position().y1 > box.y0
                        for other, _ in legends)
        tries = [(n, True) for n in (3, 2) if alone and n <= len(labels)] + [(min(2, len(labels)), False), (1, False)]
        for ncols, wide in tries:
            below = axis.legend(handles, labels, loc="upper center", ncols=ncols, frameon=False, columnspacing=1.2)
            fits = below.get_window_extent(renderer).width <= (0.96 * figure.bbox.width if wide else room)
            if ncols == 1 or fits:
                break
            below.remove()
        if wide and fits and ncols > 1:
            spans[axis] = True
        placed.append((axis, below))
    extra = max(lg.get_window_extent(renderer).height for _, lg in placed) / figure.dpi + 2 * LEGEND_GAP
    width, height = figure.get_size_inches()
    boxes = {axis: axis.get_position() for axis in figure.axes}
    new_height = height + extra
    figure.set_size_inches(width, new_height)
    for axis, box in boxes.items():
        axis.set_position([box.x0, (box.y0 * height + extra) / new_height, box.width, box.height * height / new_height])
    for axis, legend in placed:
        under = axis.xaxis.get_tightbbox(renderer)
        top = (under.y0 - axis.bbox.y0) / axis.bbox.height - LEGEND_GAP * figure.dpi / axis.bbox.height
        middle = (figure.bbox.width / 2 - axis.bbox.x0) / axis.bbox.width if axis in spans else 0.5
        legend.set_bbox_to_anchor((middle, top), transform=axis.transAxes)


def legends_outside(figure, max_width: float | None = None) -> None:
    """Move every axes' legend out of its data area, so no legend covers data: under the axes when
    another axes sits to its right (the figure grows taller), otherwise to its right (the figure
    widens by the legends' widths). Every axes keeps its size in inches. A legend placed to the
    right is kept, not re-created, so explorers holding a reference can still update its texts."""
    legends = [(axis, axis.get_legend()) for axis in figure.axes if axis.get_legend() is not None]
    if not legends:
        return
    if max_width is not None:
        max_width = present_width(figure, max_width)
    below = [(axis, legend) for axis, legend in legends if _has_right_neighbour(axis, figure)]
    if max_width is not None and len(below) < len(legends):
        # legends to the right would make the figure wider than the notebook's column: all go below
        renderer = figure.canvas.get_renderer()
        right = sum(legend.get_window_extent(renderer).width / figure.dpi + 2 * LEGEND_GAP
                    for axis, legend in legends if (axis, legend) not in below)
        if figure.get_size_inches()[0] + right > max_width:      # (not under an axes that has another below it)
            below = [(axis, legend) for axis, legend in legends if not _has_neighbour_below(axis, figure)]
    if below:
        _legends_below(figure, below)
    legends = [(axis, legend) for axis, legend in legends if (axis, legend) not in below]
    if not legends:
        return
    for axis, legend in legends:
        if legend._ncols != 1:      # the box is laid out at creation: re-create it in one column
            handles, labels = axis.get_legend_handles_labels()
            legend.remove()
            legend = axis.legend(handles, labels)
        legend.set_loc("upper left")
        legend.set_bbox_to_anchor((1.0, 1.0), transform=axis.transAxes)
        legend.set_frame_on(False)
    legends = [(axis, axis.get_legend()) for axis, _ in legends]
    renderer = figure.canvas.get_renderer()
    width, height = figure.get_size_inches()
    # Each legend opens a gap at its axes' right edge; axes starting right of that edge move right.
    gaps: dict[float, float] = {}
    for axis, legend in legends:
        edge = round(axis.get_position().x1, 3)
        inches = legend.get_window_extent(renderer).width / figure.dpi + 2 * LEGEND_GAP
        gaps[edge] = max(gaps.get(edge, 0.0), inches)
    boxes = {axis: axis.get_position() for axis in figure.axes}
    new_width = width + sum(gaps.values())
    figure.set_size_inches(new_width, height)
    for axis, box in boxes.items():
        shift = sum(inches for edge, inches in gaps.items() if edge <= box.x0 + 1e-9)
        axis.set_position([(box.x0 * width + shift) / new_width, box.y0, box.width * width / new_width, box.height])
    for axis, legend in legends:
        legend.set_bbox_to_anchor((1.0 + LEGEND_GAP / (axis.get_position().width * new_width), 1.0),
                                  transform=axis.transAxes)
        legend.lecture_right = True      # fit_width keeps its gap


def fit_width(figure, max_width: float) -> None:
    """Narrow the figure to ``max_width`` inches by narrowing its axes (text, legends and margins
    keep their size in inches), so the browser never scales the image (and its text) down."""
    max_width = present_width(figure, max_width)
    width, height = figure.get_size_inches()
    excess = width - max_width
    if excess <= 1e-6:
        return
    boxes = {axis: axis.get_position() for axis in figure.axes}
    inches = {axis: (box.x0 * width, box.width * width) for axis, box in boxes.items()}
    row = max(sum(w for other, (x0, w) in inches.items()
                  if boxes[other].y0 < boxes[axis].y1 and boxes[other].y1 > boxes[axis].y0) for axis in inches)
    factor = max(0.35, (row - excess) / row)
    for axis, (x0, w) in inches.items():
        shrink_left = sum((1 - factor) * ow for other, (ox0, ow) in inches.items()
                          if other is not axis and ox0 + ow <= x0 + 1e-6)
        axis.set_position([(x0 - shrink_left) / max_width, boxes[axis].y0, w * factor / max_width, boxes[axis].height])
    figure.set_size_inches(max_width, height)
    for axis in figure.axes:      # a legend to the right keeps its gap in inches
        legend = axis.get_legend()
        if legend is not None and getattr(legend, "lecture_right", False):
            legend.set_bbox_to_anchor((1.0 + LEGEND_GAP / (axis.get_position().width * max_width), 1.0),
                                      transform=axis.transAxes)


def compact_number(value: float, _position=None) -> str:
    """A tick label that stays short: 100k, 1.5M, 2B (no 100000125000150000 run-together labels)."""
    magnitude = abs(value)
    if magnitude >= 1e15:                   # past "999T": 10¹⁶ or 2.5 × 10¹⁶, not "1e+04T"
        return _no_e_notation(f"{value:.3g}")
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if magnitude >= 10 * scale if suffix == "k" else magnitude >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:,.6g}" if magnitude >= 1000 else _no_e_notation(f"{value:.3g}")   # 1e-16 -> 10⁻¹⁶


#: A log axis spanning more decades than this gets minor ticks at 2 and 5 only.
DENSE_MINOR_DECADES = 3


def sparse_minor_locator(locator):
    """``locator`` (matplotlib's minor ticks of a log axis, 2 to 9 in every decade) thinned to the 2s and
    5s of each decade while the view spans more than DENSE_MINOR_DECADES decades; within fewer, where a
    reader reads values between the decades, every one is kept.

    Across six decades, 2 to 9 draw a comb of eight marks in every 50 pixels that nobody reads, and they
    were a third of a full redraw (each tick is five matplotlib artists, made and drawn one by one): the
    redraw a slider move pays when it changes the axes."""
    return _sparse_minor_locator_class()(locator)


@functools.cache
def _sparse_minor_locator_class():
    import numpy as np
    from matplotlib.ticker import Locator

    class SparseMinorLocator(Locator):
        def __init__(self, inner):
            self.inner = inner

        def set_axis(self, axis):
            self.axis = axis
            self.inner.set_axis(axis)

        def __call__(self):
            low, high = self.axis.get_view_interval()
            return self._thinned(self.inner(), low, high)

        def tick_values(self, vmin, vmax):
            return self._thinned(self.inner.tick_values(vmin, vmax), vmin, vmax)

        @staticmethod
        def _thinned(ticks, low, high):
            ticks = np.asarray(ticks, dtype=float)
            if not len(ticks) or min(low, high) <= 0 or abs(np.log10(high / low)) <= DENSE_MINOR_DECADES:
                return ticks
            ticks = ticks[ticks > 0]
            leading = ticks / 10.0 ** np.floor(np.log10(ticks) + 1e-9)
            return ticks[np.isclose(leading, 2) | np.isclose(leading, 5)]

    return SparseMinorLocator


def plain_log_formatter(formatter):
    """A copy of matplotlib's default log-axis formatter (same ticks labelled, same rules for
    labelling the minor ones) that writes "10³" and "2×10³" in plain text instead of the mathtext
    "$10^{3}$": the same figures, and a full redraw no longer parses TeX for every tick label (a
    third of building a log-axis explorer; matplotlib remembers only its last 50 parses)."""
    import copy

    plain = copy.copy(formatter)
    plain.__class__ = _plain_log_formatter_class()
    return plain


@functools.cache
def _plain_log_formatter_class():
    import re

    from matplotlib.ticker import LogFormatterSciNotation

    from lecture_lib import units

    written = re.compile(r"\$\\mathdefault\{(-?)(?:([0-9.]+)\\times)?10\^\{(-?\d+)\}\}\$")

    class PlainLogFormatter(LogFormatterSciNotation):
        def __call__(self, x, pos=None):
            text = super().__call__(x, pos)
            found = written.fullmatch(text)
            if found is None:
                return text              # a plain number, or a fractional power: matplotlib's own text
            sign, mantissa, exponent = found.groups()
            return f"{'−' if sign else ''}{mantissa + '×' if mantissa else ''}{units.ten_to_the(int(exponent))}"

    return PlainLogFormatter


def readable_ticks(figure) -> None:
    """On every linear axis that still has matplotlib's default ticks: at most about one tick per
    inch and compact labels (100k, 1.5M), so tick labels never run into each other at a slider's
    extreme; on a log axis, matplotlib's labels written as plain text ("10³", see
    :func:`plain_log_formatter`) and, past DENSE_MINOR_DECADES, minor ticks at 2 and 5 only (see
    :func:`sparse_minor_locator`). Explorers' own locators and formatters are left alone."""
    from matplotlib.ticker import (AutoLocator, FuncFormatter, LogFormatterSciNotation, LogLocator, MaxNLocator,
                                   ScalarFormatter)

    for axis in figure.axes:
        width, height = (abs(v) for v in axis.get_position().size * figure.get_size_inches())
        for which, length, wide in ((axis.xaxis, width, True), (axis.yaxis, height, False)):
            if which.get_scale() == "log":
                for formatter, setter in ((which.get_major_formatter(), which.set_major_formatter),
                                          (which.get_minor_formatter(), which.set_minor_formatter)):
                    if type(formatter) is LogFormatterSciNotation:
                        setter(plain_log_formatter(formatter))
                if type(which.get_minor_locator()) is LogLocator:
                    which.set_minor_locator(sparse_minor_locator(which.get_minor_locator()))
            if which.get_scale() != "linear":
                continue
            if type(which.get_major_locator()) is AutoLocator:
                bins = max(2, int(length / (1.0 if wide else 0.45)))
                which.set_major_locator(MaxNLocator(nbins=min(bins, 8), steps=[1, 2, 2.5, 5, 10]))
            if type(which.get_major_formatter()) is ScalarFormatter:
                which.set_major_formatter(FuncFormatter(compact_number))


def pin_titles(figure) -> None:
    """Skip matplotlib's search for room above an axes' title where it can find none.

    Before every draw, matplotlib measures the x axis's tick labels (when they may sit on top) and
    every y tick label (for a "1e6"-style offset text that could reach the title) to lift the title
    clear of them: about a quarter of a full redraw on a log axis with many ticks. Where the x axis
    keeps its ticks and label at the bottom and no y formatter can write an offset (the course's
    FuncFormatter and log formatters), the search always leaves the title where it is, so it is
    pinned there. Tests compare every explorer's pixels with and without (tests/test_explorer_figures.py)."""
    from matplotlib.ticker import Formatter, FuncFormatter

    def roomy(axis) -> bool:
        formatter = axis.yaxis.get_major_formatter()
        return (axis.xaxis.get_ticks_position() == "bottom" and axis.xaxis.get_label_position() == "bottom"
                and type(formatter).get_offset in (Formatter.get_offset, FuncFormatter.get_offset)
                and not formatter.get_offset())

    for axis in figure.axes:
        related = set(axis._twinned_axes.get_siblings(axis)) | set(axis.child_axes)
        if getattr(axis, "_autotitlepos", False) and all(roomy(other) for other in related):
            axis._autotitlepos = False      # matplotlib's own flag for a title placed by hand


def styled(function):
    """Run ``function`` under the course's rc style (artists created inside inherit it)."""
    import matplotlib

    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return function(*args, **kwargs)

    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


@functools.lru_cache(maxsize=4096)
def plain_text(text: str) -> str:
    """Figure text as a screen reader should hear it: TeX escapes and math markup removed
    ("\\$30" -> "$30", "$10^{3}$" -> "10^3", "$\\mathbf{F0}$" -> "F0")."""
    import re

    text = str(text)
    if "$" not in text and "\\" not in text and "{" not in text:
        return " ".join(text.split())
    text = text.replace("\\$", "\x00")                 # an escaped dollar is a dollar
    text = text.replace("$", "")
    text = re.sub(r"\\[,;: ]", " ", text)              # TeX's thin and wider spaces are spaces
    for command, symbol in (("times", "×"), ("cdot", "·"), ("approx", "≈"), ("le", "≤"), ("ge", "≥"),
                            ("to", "→"), ("infty", "∞"), ("propto", "∝")):
        text = re.sub(rf"\\{command}(?![A-Za-z])", symbol, text)
    text = re.sub(r"\\(?:mathbf|mathrm|mathit|text|mathsf|operatorname)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)                # \alpha -> alpha
    text = text.replace("{", "").replace("}", "").replace("\\", "")
    return re.sub(r"\s+", " ", text.replace("\x00", "$")).strip()


def _side_texts(axis, which) -> list:
    """Texts an explorer draws as an axis's tick labels itself (left of the axes for y, below it
    for x), e.g. the Gantt chart's "rack 0" and its time ticks."""
    found = []
    for text in axis.texts:
        if not text.get_visible() or not text.get_text():
            continue
        x, y = text.get_position()
        if (which == "x" and y < 0 and 0 <= x <= 1.0001 * axis.get_xlim()[1]) or (which == "y" and x < 0):
            found.append(text)
    return found


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").replace("−", "-"))
        return True
    except ValueError:
        return False


def _axis_words(axis, which) -> tuple[list[str], bool]:
    """(labels, categorical) for an axis whose ticks carry fixed labels (set_yticklabels), or whose
    tick labels the explorer draws itself as texts; ([], False) for an ordinary numeric axis."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, FuncFormatter, NullFormatter

    side = axis.xaxis if which == "x" else axis.yaxis
    formatter, locator = side.get_major_formatter(), side.get_major_locator()
    no_ticks = isinstance(locator, FixedLocator) and len(locator.locs) == 0
    if no_ticks or isinstance(formatter, NullFormatter) or (isinstance(formatter, FixedFormatter) and not any(formatter.seq)):
        labels = [plain_text(t.get_text()) for t in _side_texts(axis, which)]
    elif isinstance(formatter, (FixedFormatter, FuncFormatter)) and isinstance(locator, FixedLocator):
        labels = [plain_text(formatter(loc, i)) for i, loc in enumerate(locator.locs)]
    else:
        return [], False
    labels = [t for t in labels if t]
    return labels, any(not _is_number(t) for t in labels)


def _no_e_notation(word: str) -> str:
    """A tick label such as "1e-16" as a learner reads it: "10⁻¹⁶" (issue 29 §2)."""
    import re

    from lecture_lib import units

    match = re.fullmatch(r"\s*([-+]?\d+(?:\.\d+)?)e([-+]?\d+)\s*", word or "")
    if not match:
        return word
    mantissa, exponent = float(match.group(1)), int(match.group(2))
    return units.ten_to_the(exponent) if mantissa == 1 else units.power_of_ten(mantissa * 10.0 ** exponent)


def _range_text(axis, which) -> str:
    name = plain_text((axis.get_xlabel() if which == "x" else axis.get_ylabel()) or which)
    words, categorical = _axis_words(axis, which)
    if categorical:
        shown = words if len(words) <= 8 else words[:3] + ["…"] + words[-2:]
        return f"{name}: {', '.join(shown)}"
    if words:
        return f"{name} from {_no_e_notation(words[0])} to {_no_e_notation(words[-1])}"
    low, high = axis.get_xlim() if which == "x" else axis.get_ylim()
    scale = axis.get_xscale() if which == "x" else axis.get_yscale()
    return f"{name} from {compact_number(low)} to {compact_number(high)}" + (" (log scale)" if scale == "log" else "")


def _shows(axis, which) -> bool:
    from matplotlib.ticker import FixedFormatter, NullLocator

    side = axis.xaxis if which == "x" else axis.yaxis
    if not side.get_visible():
        return False
    if (axis.get_xlabel() if which == "x" else axis.get_ylabel()) or _side_texts(axis, which):
        return True
    if isinstance(side.get_major_locator(), NullLocator):
        return False
    formatter = side.get_major_formatter()
    if isinstance(formatter, FixedFormatter):
        return bool(_axis_words(axis, which)[0])
    ticks = side.get_major_locator().locs if hasattr(side.get_major_locator(), "locs") else None
    return ticks is None or len(ticks) > 0


def describe(figure, title: str = "") -> str:
    """A text alternative for a figure: for each chart its title, what each axis shows over which
    range (the real limits, the numbers an explorer writes as ticks, or a categorical axis's
    labels), its named series and its annotations. Cheap enough to rebuild on every redraw."""
    parts = [plain_text(title).rstrip(".") + "." if title else ""]
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(plain_text(suptitle.get_text()) + ".")
    for axis in figure.axes:
        if not axis.get_visible():
            continue
        if not (axis.lines or axis.collections or axis.patches or axis.images or axis.texts):
            continue
        heading = " ".join(plain_text(axis.get_title(loc)) for loc in ("left", "center", "right") if axis.get_title(loc))
        ranges = [_range_text(axis, which) for which in "xy" if axis.axison and _shows(axis, which)]
        legend = axis.get_legend()
        if legend is not None:
            names = [plain_text(t.get_text()) for t in legend.get_texts()]
        else:
            names = [plain_text(a.get_label()) for a in list(axis.lines) + list(axis.collections)
                     if a.get_visible() and a.get_label() and not a.get_label().startswith("_")]
        beside = set(map(id, _side_texts(axis, "x") + _side_texts(axis, "y"))) if axis.axison else set()
        notes = [plain_text(t.get_text()) for t in axis.texts
                 if t.get_visible() and id(t) not in beside and len(t.get_text().strip()) >= 4]
        if len(notes) > 8:
            notes = notes[:8] + [f"and {len(notes) - 8} more labels"]
        sentence = f"Chart '{heading}'" if heading else "Chart"
        sentence += (": " + "; ".join(ranges)) if ranges else ""
        sentence += (f"; series: {', '.join(n for n in names if n)}" if any(names) else "")
        sentence += (f"; labels: {', '.join(notes)}" if notes else "")
        parts.append(sentence + ".")
    return " ".join(p for p in parts if p)


class FigureImage:
    """A static figure for a notebook: a PNG with a text alternative. Shown as an ``<img alt=...>``
    that never grows past the notebook's column (``max-width: 100%``), with the PNG and the text
    alternative beside it for front ends that cannot show HTML."""

    def __init__(self, png: bytes, alt: str, width: int):
        self.data, self.alt, self.width = png, alt, width

    def _repr_mimebundle_(self, include=None, exclude=None):
        import base64
        import html as html_

        encoded = base64.b64encode(self.data).decode("ascii")
        tag = (f'<img class="lecture-static-figure" src="data:image/png;base64,{encoded}" '
               f'alt="{html_.escape(self.alt)}" width="{self.width}" style="max-width:100%;height:auto">')
        return {"text/html": tag, "image/png": encoded, "text/plain": self.alt}, \
            {"image/png": {"width": self.width}}


def to_image(figure, alt: str | None = None) -> FigureImage:
    """A static figure (timetable, routing, Gantt chart, ...) as a PNG with a text alternative:
    ``alt`` if given, else :func:`describe` of the figure (its charts' titles, real axis ranges,
    series and labels). No wider than the notebook's column (:data:`MAX_WIDTH_PX`)."""
    import io

    if alt is not None and not isinstance(alt, str):
        raise ValueError(f"alt must be a text, got {type(alt).__name__}")
    if not hasattr(figure, "savefig") or not hasattr(figure, "axes"):
        raise ValueError(f"figure must be a matplotlib Figure, got {type(figure).__name__}")
    readable(figure)
    fit_width(figure, MAX_WIDTH_PX / DPI)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    width = int(round(figure.get_size_inches()[0] * DPI))
    return FigureImage(buffer.getvalue(), plain_text(alt) if alt else describe(figure), width)


@styled
def train_timetable(t_step: float = 20e-3, arrival: float = 21e-3, n_trains: int = 4):
    """The lecture's "train" (00:21:44): a batch departs every ``t_step``; a request arriving at
    ``arrival`` waits for the next departure, then rides one step. Returns the Figure."""
    from lecture_lib import validate

    validate.number("t_step", t_step)
    validate.number("arrival", arrival, allow_zero=True)
    figure, (axis,) = new_figure(9.0, 2.2)
    ms = 1e3
    for k in range(n_trains):
        axis.broken_barh([(k * t_step * ms, t_step * ms * 0.97)], (0.6, 0.8),
                         color=COLORS["compute"], alpha=0.35 + 0.15 * (k % 2))
        axis.text((k + 0.5) * t_step * ms, 1.0, f"batch {k + 1}", ha="center", va="center", fontsize=9)
    departure = (int(arrival // t_step) + 1) * t_step
    done = departure + t_step
    axis.annotate("", xy=(departure * ms, 1.9), xytext=(arrival * ms, 1.9),
                  arrowprops=dict(arrowstyle="->", color=COLORS["weights"]))
    axis.text((arrival + departure) / 2 * ms, 2.15, f"wait {(departure - arrival) * ms:.0f} ms", ha="center",
              color=COLORS["weights"], fontsize=9)
    axis.annotate("", xy=(done * ms, 1.9), xytext=(departure * ms, 1.9),
                  arrowprops=dict(arrowstyle="->", color=COLORS["total"]))
    axis.text((departure + done) / 2 * ms, 2.15, f"ride {t_step * ms:.0f} ms", ha="center", fontsize=9)
    axis.axvline(arrival * ms, color=COLORS["weights"], ls=":", lw=1)
    axis.set(xlim=(0, n_trains * t_step * ms), ylim=(0.3, 2.6), yticks=[], xlabel="time (ms)",
             title=f"a batch departs every {t_step * ms:.0f} ms: worst case ≈ {2 * t_step * ms:.0f} ms")
    axis.grid(False)
    figure.subplots_adjust(bottom=0.25, top=0.85, left=0.03, right=0.98)
    return figure
