"""Issue 13, checked on every explorer of every chapter (``explorer_classes()``): the learner's point,
the bold bound and the other lines stay on the chart at every slider's extremes; figures are
readable (PIXEL_RATIO pixels shown at 1x, fonts >= 10 pt, tick labels inside the figure, legends outside
the axes, lines told apart without colour); every figure carries alt text, updated on each redraw;
counts are integer sliders; log sliders read as whole numbers where the quantity is a count."""

import ipywidgets as widgets
import numpy as np
import pytest
from matplotlib.lines import Line2D
from matplotlib.text import Text

from matplotlib.backends.backend_agg import FigureCanvasAgg

from lecture_lib.explorers import agg_text, base, sliders, plots
from lecture_lib.explorers.base import explorer_classes
from pristine import pristine

EXPLORERS = explorer_classes()
IDS = lambda c: f"{c.__module__.rpartition('.')[2]}.{c.__name__}"
SLIDERS = (widgets.FloatSlider, widgets.FloatLogSlider, widgets.IntSlider)
TOLERANCE = 1.5   # device pixels: a line drawn exactly on the frame is inside


def _ends(control):
    if isinstance(control, widgets.FloatLogSlider):
        return [control.base ** control.min, control.base ** control.max]
    return [control.min, control.max]


def _outside(explorer) -> list[str]:
    """Lines with data off their axes: a short line (a marker, a vertical or horizontal line) must
    lie wholly inside; a curve must show at least a third of its points (it may leave through the
    top, as the roofline's rising lines do, but never vanish or hang at the edge)."""
    problems = []
    for axis in explorer.view.figure.axes:
        if not axis.get_visible():
            continue
        x0, y0, x1, y1 = axis.bbox.extents
        for line in axis.get_lines():
            if not line.get_visible():
                continue
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            if x.size == 0:
                continue
            with np.errstate(all="ignore"):
                points = line.get_transform().transform(np.column_stack([x, y]))
            finite = np.all(np.isfinite(points), axis=1)
            if not finite.any():
                continue
            px, py = points[finite].T
            inside = ((px >= x0 - TOLERANCE) & (px <= x1 + TOLERANCE) & (py >= y0 - TOLERANCE)
                      & (py <= y1 + TOLERANCE))
            label = line.get_label() if not line.get_label().startswith("_") else repr(line)
            if plots.is_dot(line):
                # a dot (the learner's point) on the frame is seen whole, not cut in half by the axes' clip
                radius = line.get_markersize() / 2 * explorer.view.figure.dpi / 72
                clip = line.get_clip_box().extents if line.get_clip_on() and line.get_clip_box() else None
                shown = px[inside], py[inside]
                if clip is not None and shown[0].size and not (
                        (shown[0] - radius >= clip[0] - TOLERANCE).all() and (shown[0] + radius <= clip[2] + TOLERANCE).all()
                        and (shown[1] - radius >= clip[1] - TOLERANCE).all()
                        and (shown[1] + radius <= clip[3] + TOLERANCE).all()):
                    problems.append(f"{axis.get_title()!r}: the dot {label} is cut by the frame")
            if len(x) <= 2 and not inside.all():
                problems.append(f"{axis.get_title()!r}: {label} outside the view")
            elif len(x) > 2 and inside.mean() < 1 / 3:
                problems.append(f"{axis.get_title()!r}: curve {label} mostly off the chart ({inside.mean():.0%} shown)")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_every_line_stays_on_the_chart_at_each_slider_extreme(cls):
    explorer = cls()
    try:
        assert not _outside(explorer), ("defaults", _outside(explorer))
        for name, control in explorer.controls.items():
            if not isinstance(control, SLIDERS):
                continue
            original = control.value
            for end in _ends(control):
                control.value = end
                problems = _outside(explorer)
                assert not problems, (name, end, problems)
            control.value = original
    finally:
        explorer.view.figure.clear()


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_figure_is_readable(cls):
    explorer = pristine(cls)
    figure = explorer.view.figure
    # 2x pixels, shown at 1x through the image widget's CSS size
    shown = int(explorer.view.widget.layout.width.rstrip("px"))
    assert figure.canvas.get_width_height()[0] == pytest.approx(base.PIXEL_RATIO * shown, abs=2)
    # no text smaller than 10 pt
    small = [(t.get_text(), t.get_fontsize()) for t in figure.findobj(Text)
             if t.get_text() and t.get_fontsize() < plots.MIN_FONT]
    assert not small, small
    renderer = figure.canvas.get_renderer()
    frame = figure.bbox
    # tick labels and titles inside the figure (Ch6's "1000" clipped to "100")
    for axis in figure.axes:
        for text in axis.get_xticklabels() + axis.get_yticklabels() + [axis.title]:
            if not text.get_text() or not text.get_visible():
                continue
            box = text.get_window_extent(renderer)
            if box.x0 < frame.x0 - 1 or box.x1 > frame.x1 + 1:
                continue_ok = False
            else:
                continue_ok = True
            assert continue_ok, (axis.get_title(), text.get_text(), "clipped at the figure's edge")
        legend = axis.get_legend()
        if legend is not None:
            box = legend.get_window_extent(renderer)
            # legends sit outside every axes' data area and do not run into a title
            for other in figure.axes:
                assert not box.overlaps(other.bbox), (axis.get_title(), "legend covers an axes")
                if other.get_title():
                    assert not box.overlaps(other.title.get_window_extent(renderer)), "legend covers a title"
            assert box.x1 <= frame.x1 + 1, "legend cut off at the right"
            # told apart without colour
            handles = [h for h in legend.legend_handles if isinstance(h, Line2D)]
            signatures = [plots.line_signature(h) for h in handles]
            assert len(set(signatures)) == len(signatures), (axis.get_title(), signatures)


def test_tick_labels_made_after_readable_are_readable_and_wide_log_axes_keep_only_2s_and_5s():
    """readable() raises tick labels through the axis, so ticks a later move makes (wider limits, more
    ticks) are 10 pt too; a log axis keeps every minor tick within DENSE_MINOR_DECADES decades and only the
    2s and 5s beyond, as its limits move either way."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context({"xtick.labelsize": 6, "ytick.labelsize": 6, "font.size": 6}):
        figure = Figure(figsize=(6, 3))
        axis = figure.add_subplot()
        axis.set_xscale("log")
        axis.set_xlim(1, 100)
        axis.set_ylim(0, 1)
        plots.readable(figure)
        plots.readable_ticks(figure)
        figure.canvas = FigureCanvasAgg(figure)
        figure.canvas.draw()

        def shown():                              # the locator also returns a decade either side of the view
            low, high = axis.get_xlim()
            return [x for x in axis.xaxis.get_minorticklocs() if low <= x <= high]

        narrow = shown()
        assert np.allclose(narrow, [k * 10.0 ** d for d in (0, 1) for k in range(2, 10)])

        axis.set_xlim(1, 1e8)
        axis.set_ylim(0, 1000)
        figure.canvas.draw()
        wide = shown()
        assert np.allclose(wide, [k * 10.0 ** d for d in range(8) for k in (2, 5)])
        labels = [t for t in axis.get_xticklabels() + axis.get_yticklabels() if t.get_text()]
        assert len(labels) > 10
        assert all(t.get_fontsize() >= plots.MIN_FONT for t in labels), [(t.get_text(), t.get_fontsize()) for t in labels]

        axis.set_xlim(10, 1e4)                   # back within three decades: the full comb again
        figure.canvas.draw()
        assert len(shown()) == 3 * 8


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_alt_text_is_present_and_follows_every_redraw(cls):
    explorer = pristine(cls)
    first = explorer.view.alt_text
    assert first and len(first) > 60
    state = explorer.view.widget.get_state()      # what the front end gets
    if explorer.view.live:                         # the live figure's <img> takes alt and title from it
        assert state["alt"] == first
    else:                                          # the Image's title needs description == ""
        assert state["description"] == "" and state["tooltip"] == first
    assert explorer.title.split(" (")[0] in first
    slider = next((c for c in explorer.controls.values() if isinstance(c, SLIDERS)), None)
    if slider is not None:
        ends, start = _ends(slider), slider.value
        try:
            slider.value = ends[1] if slider.value != ends[1] else ends[0]
            shown = explorer.view.widget.get_state()["alt" if explorer.view.live else "tooltip"]
            assert shown != first, "alt text not updated after a redraw"
            assert shown == explorer.view.alt_text
        finally:
            slider.value = start                   # the shared explorer is rebuilt if this left wider axes


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_labels_fit_and_counts_are_integer_sliders(cls):
    explorer = pristine(cls)
    for name, control in explorer.controls.items():
        width = int(control.style.description_width.rstrip("px"))
        assert width >= len(control.description) * sliders.LABEL_PX_PER_CHAR, (name, control.description)
        lowered = control.description.lower()
        if isinstance(control, (widgets.FloatSlider,)) and any(
                word in lowered for word in ("layers", "stages", "micro-batches", "gpus", "racks", "chips")):
            pytest.fail(f"{name!r} counts whole things but is a float slider")


@pytest.mark.parametrize("setting, expected", [("", 1.0), ("2", 2.0), ("1.5", 1.5), ("9", 3.0), ("x", 1.0)])
def test_pixel_ratio_follows_the_environment(setting, expected, monkeypatch):
    """LECTURE_PIXEL_RATIO picks the figures' device pixels (1 by default, for the slider budget)."""
    monkeypatch.setenv("LECTURE_PIXEL_RATIO", setting)
    assert base.pixel_ratio() == expected


def test_high_dpi_figures_on_request():
    """With LECTURE_PIXEL_RATIO=2 an explorer renders twice the pixels it shows (a fresh process,
    since the ratio is read at import)."""
    import os
    import subprocess
    import sys

    code = ("from lecture_lib.explorers import roofline as rx\n"
            "e = rx.BatchExplorer()\n"
            "shown = int(e.view.widget.layout.width[:-2])\n"
            "print(e.view.canvas.get_width_height()[0] / shown)\n")
    env = {**os.environ, "LECTURE_PIXEL_RATIO": "2", "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip()) == pytest.approx(2.0, abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_no_e_notation_in_any_text_of_a_figure(cls):
    """Titles, axis labels, legend entries and annotations read "2.6 × 10¹⁴", never "2.6e14"
    (a walkthrough found the e-notation in a Chapter 5 legend after the readouts were clean)."""
    import re

    from matplotlib.text import Text

    explorer = cls()
    try:
        explorer.view.canvas.draw()     # tick labels exist once drawn
        texts = [t.get_text() for t in explorer.view.figure.findobj(Text)]
        texts += [t.get_text() for axis in explorer.view.figure.axes if axis.get_legend()
                  for t in axis.get_legend().get_texts()]
        found = [t for t in texts if re.search(r"\d[eE][+-]?\d", t)]
        assert not found, f"{cls.__name__}: e-notation in figure text: {found}"
    finally:
        explorer.view.figure.clear()


def _settings(control) -> list:
    """Positions that move the axes: a slider's two ends, or a dropdown's last and first options."""
    if isinstance(control, widgets.Dropdown):
        return [control._options_values[-1], control._options_values[0]]
    if isinstance(control, sliders.LogSlider):
        return [control.stops[-1], control.stops[0]]
    return _ends(control)


@pytest.mark.slow
@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_pasted_legends_and_pinned_titles_draw_the_pixels_matplotlib_draws(cls, monkeypatch):
    """FigureView's four shortcuts for a full redraw (legends pasted from the last draw, titles not
    lifted where nothing can reach them, text drawn from remembered glyphs, each axis's ticks and their labels'
    boxes computed once per draw) change no pixel: an explorer
    drawn with them and one drawn by plain matplotlib are compared at their defaults, with every control at
    its top end (a dropdown on its last option), then every control at its bottom end (first option): the
    axes, the tick labels and the legends' texts all change between the three."""
    quick = cls()
    monkeypatch.setattr(base, "LEGEND_CACHE", False)
    monkeypatch.setattr(base, "PIN_TITLES", False)
    monkeypatch.setattr(agg_text, "REMEMBER_GLYPHS", False)
    plain = cls()
    monkeypatch.undo()
    assert any(axis._autotitlepos is False for axis in quick.view.figure.axes)
    assert type(plain.view.canvas) is FigureCanvasAgg
    assert type(quick.view.canvas) is agg_text.Canvas or not agg_text.SUPPORTED

    def pixels(explorer, values):        # the state a move would draw, without the move's own redraw
        explorer.update(values)
        explorer.view.render(full=True)
        return np.asarray(explorer.view.canvas.buffer_rgba()).copy()

    try:
        quick.view.render(full=True)
        states = [quick.values] + [{name: _settings(control)[end] for name, control in quick.controls.items()}
                                   for end in (0, 1)]
        for values in states:
            same = np.array_equal(pixels(quick, values), pixels(plain, values))
            assert same, f"{cls.__name__}: {values} draws other pixels with the shortcuts"
        assert quick.view._legend_pixels is not None or not any(a.get_legend() for a in quick.view.figure.axes)
        assert plain.view._legend_pixels is None        # drawn by matplotlib every time: the comparison means something
    finally:
        quick.view.figure.clear()
        plain.view.figure.clear()


@pytest.mark.skipif(not agg_text.SUPPORTED, reason="this matplotlib draws text another way; plain Agg is used")
def test_text_from_remembered_glyphs_is_pixel_for_pixel_agg_text():
    """Strings at every 1/8-pixel phase, turned 0, 90 and 30 degrees, in three sizes, with superscripts,
    signs and math, antialiased or not: drawn twice (the second time from remembered glyphs) by the
    course's canvas and once by plain Agg, the pixels are the same."""
    from matplotlib.figure import Figure

    def draw(canvas_class):
        figure = Figure(figsize=(6, 4), dpi=80)
        canvas = canvas_class(figure)
        strings = ["10³ tokens/s", "2×10⁻⁴", "B* ≈ 300 − 1", "$t_{step}$", "Étude ½"]
        for i in range(48):
            text = figure.text(0.02 + (i % 8) * 0.12 + (i % 8) / 8 / 480, 0.05 + (i // 8) * 0.15 + (i % 3) / 8 / 320,
                               strings[i % len(strings)], rotation=(0, 90, 30)[i % 3], fontsize=(8, 10, 13)[i % 3])
            text.set_antialiased(i % 4 != 0)
        canvas.draw()
        first = np.asarray(canvas.buffer_rgba()).copy()
        canvas.draw()
        return first, np.asarray(canvas.buffer_rgba()).copy()

    first, again = draw(agg_text.Canvas)
    plain, _ = draw(FigureCanvasAgg)
    assert np.array_equal(first, plain) and np.array_equal(again, plain)
    assert (plain[..., :3] < 128).any()          # something was drawn


@pytest.mark.skipif(not agg_text.ONCE_PER_DRAW, reason="this matplotlib places ticks another way")
def test_a_full_redraw_computes_each_axiss_ticks_once(monkeypatch):
    """Matplotlib 3.11 places an axis's ticks three times in one draw (the axis, its label, its spine). The course's
    canvas does it once per axis; a draw after the limits changed computes the new ticks (the memory lasts one draw)."""
    from matplotlib.axis import Axis

    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    figure, calls = explorer.view.figure, []
    original = Axis._update_ticks
    monkeypatch.setattr(Axis, "_update_ticks", lambda self: calls.append(self) or original(self))
    explorer.view.canvas.draw()
    axes = [axis for ax in figure.axes for axis in ax._axis_map.values() if axis.get_visible()]
    assert sorted(map(id, calls)) == sorted(map(id, axes)), f"{len(calls)} tick placements for {len(axes)} axes"
    ax = figure.axes[0]
    before = [t.get_text() for t in ax.xaxis.get_ticklabels()]
    ax.set_xlim(ax.get_xlim()[0], ax.get_xlim()[1] * 1e3)
    explorer.view.canvas.draw()
    assert [t.get_text() for t in ax.xaxis.get_ticklabels()] != before
    assert not any(name in axis.__dict__ for axis in axes for name in agg_text.TICK_METHODS), "left on the axes"
    figure.clear()


def test_a_legend_whose_text_changes_is_laid_out_again():
    """The pasted legend is keyed by what it shows: edit one of its texts and the next full redraw
    draws the new text (the comparison above would fail if the old pixels were pasted)."""
    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    view = explorer.view
    view.render(full=True)
    view.render(full=True)
    assert view._legend_pixels is not None
    before = np.asarray(explorer.view.canvas.buffer_rgba()).copy()
    legend = next(axis.get_legend() for axis in view.figure.axes if axis.get_legend() is not None)
    legend.texts[0].set_text(legend.texts[0].get_text() + " (edited)")
    view.render(full=True)
    assert not np.array_equal(before, np.asarray(explorer.view.canvas.buffer_rgba()))
    view.figure.clear()
