"""The live figure: moving artists recorded as canvas operations (lecture_lib.explorers.live_figure).

The page's drawing of these operations is compared with Agg's pixels in tests/test_browser.py and
tests/chapter_walk.py;
here: that the operations say what matplotlib would draw, and that every fallback works.
"""

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from lecture_lib.explorers import base, sliders, live_figure


def _triples(points: bytes) -> np.ndarray:
    return np.frombuffer(points, dtype="<f4").reshape(-1, 3)


def _figure():
    figure = Figure(figsize=(4, 3), dpi=100)
    FigureCanvasAgg(figure).draw()        # an Agg renderer exists (text is measured with it)
    axes = figure.add_subplot()
    axes.set_xlim(0, 10)
    axes.set_ylim(0, 10)
    return figure, axes


def test_a_line_becomes_one_path_in_canvas_pixels_with_its_style():
    figure, axes = _figure()
    (line,) = axes.plot([1, 5, 9], [2, 8, 2], color="#d62728", lw=2, ls="--", alpha=0.5)
    ops, points = live_figure.record(figure, [line])
    assert len(ops) == 1 and ops[0]["k"] == "p" and ops[0]["n"] == 3
    op, xy = ops[0], _triples(points)
    assert op["s"] == "rgba(214,39,40,0.5)"
    assert op["w"] == pytest.approx(2 * 100 / 72, rel=1e-3)          # points -> px at 100 dpi
    assert op["d"] and all(d > 0 for d in op["d"])                    # dashed, in px
    expected = axes.transData.transform([(1, 2), (5, 8), (9, 2)])
    assert xy[:, 1] == pytest.approx(expected[:, 0], abs=0.01)
    assert xy[:, 2] == pytest.approx(300 - expected[:, 1], abs=0.01)  # y runs down on a canvas
    x0, y0, x1, y1 = axes.bbox.extents
    assert op["clip"] == pytest.approx([x0, 300 - y1, x1 - x0, y1 - y0], abs=0.01)


def test_markers_text_fills_and_hatches_are_recorded():
    figure, axes = _figure()
    (dots,) = axes.plot([2, 4], [3, 3], "o", ms=6, color="C2")
    label = axes.text(5, 5, "B* = 2,500", fontsize=12, color="k", ha="right")
    band = axes.add_patch(Rectangle((6, 0), 2, 10, facecolor="none", edgecolor="#c62828", hatch="//"))
    ops, points = live_figure.record(figure, [dots, label, band])
    kinds = [op["k"] for op in ops]
    assert kinds == ["m", "t", "p"]
    marker, text, hatch = ops
    assert marker["pn"] == 2 and marker["n"] >= 4 and "f" in marker
    assert text["s"] == "B* = 2,500" and "12.00pt" not in text["font"] and "16.67px" in text["font"]
    assert text["tw"] > 0
    # right-aligned at x = 5: matplotlib already moved the anchor left by the text's own width
    assert text["x"] + text["tw"] == pytest.approx(axes.transData.transform((5, 5))[0], abs=1.0)
    assert hatch["h"] == "//" and hatch["hc"].startswith("rgba(") and "f" not in hatch
    assert len(_triples(points)) == hatch["o"] + hatch["n"]


def test_a_label_measured_once_is_not_measured_again_in_later_frames(monkeypatch):
    """Each frame is recorded by a new Recorder, so text widths are remembered across frames
    (live_figure.text_extent); a changed size or string is measured afresh, and the remembered
    width is the one Agg gives."""
    figure, axes = _figure()
    label = axes.text(5, 5, "rack 3", fontsize=11)
    agg = figure.canvas.get_renderer()
    measured = []
    original = type(agg).get_text_width_height_descent
    monkeypatch.setattr(type(agg), "get_text_width_height_descent",
                        lambda self, s, prop, ismath: measured.append(s) or original(self, s, prop, ismath))
    live_figure._text_extents.clear()
    first, _ = live_figure.record(figure, [label])
    assert measured
    count = len(measured)
    again, _ = live_figure.record(figure, [label])
    assert len(measured) == count and again == first
    assert first[0]["tw"] == pytest.approx(original(agg, "rack 3", label.get_fontproperties(), False)[0], abs=0.01)
    label.set_fontsize(14)
    bigger, _ = live_figure.record(figure, [label])
    assert len(measured) > count and bigger[0]["tw"] > first[0]["tw"]


def test_math_text_is_drawn_as_plain_text():
    figure, axes = _figure()
    label = axes.text(1, 1, r"$B^*$ balance")
    (op,), _ = live_figure.record(figure, [label])
    assert "$" not in op["s"] and "balance" in op["s"]


def test_an_image_cannot_be_recorded_and_the_frame_falls_back_to_a_whole_png():
    class ImageExplorer(base.Explorer):
        title = "test image explorer"

        def controls_(self):
            return {"gain": sliders.slider("gain", 1.0, 0.5, 2.0, 0.1)}

        def setup(self):
            view, (axes,) = base.new_view(4, 3)
            self.image = axes.imshow(np.eye(4))
            self.line, = axes.plot([0, 3], [0, 3])
            view.animate(self.image, self.line)
            return view

        def update(self, values):
            self.image.set_data(np.eye(4) * values["gain"])
            self.line.set_ydata([0, 3 * values["gain"] / 2])
            return [("gain", f"{values['gain']:.1f}")], False

    explorer = ImageExplorer()
    view = explorer.view
    if not view.live:
        pytest.skip("anywidget is not installed: every frame is a PNG anyway")
    assert view.widget.frame["ops"] == [] and view.page_png()[:4] == b"\x89PNG"
    before = view.page_png()
    explorer.controls["gain"].value = 1.5
    assert view.page_png() != before and view.widget.frame["ops"] == []
    view._animated.remove(explorer.image)          # now everything moving can be recorded:
    explorer.controls["gain"].value = 1.2           # the page gets the plain background back
    assert view.widget.frame["ops"] and not view._page_background_stale


@pytest.mark.slow
def test_every_explorer_frame_is_small(monkeypatch):
    """What one move sends: a few kilobytes, not a PNG (the reason for live figures)."""
    for cls in base.explorer_classes():
        explorer = cls()
        try:
            if not explorer.view.live:
                pytest.skip("anywidget is not installed")
            size = len(explorer.view.widget.points) + len(json.dumps(explorer.view.widget.frame))
            assert size < 40_000, f"{cls.__name__}: {size} bytes per move"
            assert explorer.view.widget.frame["ops"], f"{cls.__name__}: nothing recorded"
        finally:
            explorer.view.figure.clear()


def test_png_mode_when_asked_or_without_anywidget(monkeypatch):
    from lecture_lib.explorers.roofline import ContextExplorer

    monkeypatch.setenv("LECTURE_FIGURE", "png")
    assert not live_figure.available()
    explorer = ContextExplorer()
    assert not explorer.view.live and bytes(explorer.view.widget.value[:4]) == b"\x89PNG"
    before = explorer.view.shown()
    slider = explorer.controls["batch"]
    slider.index = slider.index + 1
    assert explorer.view.shown() != before
    assert explorer.view.widget.tooltip == explorer.view.alt_text


def test_snapshot_is_the_whole_figure_in_both_modes(monkeypatch):
    from PIL import Image
    import io

    from lecture_lib.explorers.roofline import ContextExplorer

    shots = {}
    for mode in ("", "png"):
        monkeypatch.setenv("LECTURE_FIGURE", mode)
        explorer = ContextExplorer()
        shots[mode] = np.asarray(Image.open(io.BytesIO(explorer.view.snapshot_png())).convert("RGB"), dtype=float)
    assert shots[""].shape == shots["png"].shape
    assert np.abs(shots[""] - shots["png"]).mean() < 1.0


def test_a_log_slider_does_not_echo_its_value_after_the_browser_moved_it():
    control = sliders.log_slider("batch", 1024, 1, 65536)
    sent = []
    control._send = lambda message, buffers=None: sent.append(message)   # what would go to the page
    control.index = control.index + 1                                      # as the browser does
    assert control.value == 2048
    assert not any("value" in m.get("state", {}) for m in sent)
    control.value = 512                                                    # from code: the page is told
    assert any("index" in m.get("state", {}) for m in sent)


@pytest.mark.slow
def test_reusing_unchanged_artists_gives_the_same_frame_as_drawing_them_all():
    """The cache of recorded artists (matplotlib's stale flag) never serves an outdated curve:
    after every control's move, the frame sent equals a fresh recording of every moving artist."""
    import ipywidgets as widgets

    for cls in base.explorer_classes():
        explorer = cls()
        view = explorer.view
        if not view.live:
            pytest.skip("anywidget is not installed")
        try:
            for name, control in explorer.controls.items():
                if isinstance(control, sliders.LogSlider):
                    moves = [min(control.index + 1, len(control.stops) - 1), control.index]
                    setter = lambda i, c=control: setattr(c, "index", i)
                elif isinstance(control, widgets.Dropdown):
                    values = [o[1] if isinstance(o, tuple) else o for o in control.options]
                    moves = [values[-1], control.value]
                    setter = lambda v, c=control: setattr(c, "value", v)
                else:
                    moves = [control.max if control.value != control.max else control.min, control.value]
                    setter = lambda v, c=control: setattr(c, "value", v)
                for target in moves:
                    setter(target)
                    ops, points = live_figure.record(view.figure, view._animated)   # every artist drawn again
                    assert (view.widget.frame["ops"], bytes(view.widget.points)) == (ops, points), (
                        f"{cls.__name__}: moving {name!r} sent an outdated frame")
        finally:
            view.figure.clear()


def test_a_bar_given_its_own_height_again_is_not_drawn_again_but_any_change_is(monkeypatch):
    """Explorers set every bar's height on every move (chapter 4's latency and memory bars: 33 each), which
    marks it stale; a bar whose geometry and style are unchanged reuses its operations, and a new height,
    colour, hatch or edge is recorded afresh, as a recording without the cache gives it."""
    figure, axes = _figure()
    bars = list(axes.bar([1, 3, 5], [2, 4, 6], color="#1f77b4"))
    cache: dict = {}
    live_figure.record(figure, bars, cache)
    drawn = []
    original = Rectangle.draw
    monkeypatch.setattr(Rectangle, "draw", lambda self, renderer: (drawn.append(self), original(self, renderer)))
    for bar, height in zip(bars, [2, 4, 6]):
        bar.set_height(height)                  # the same height: stale, but alike
    assert all(bar.stale for bar in bars)
    cached = live_figure.record(figure, bars, cache)
    assert drawn == [], "a bar alike was drawn again"
    assert cached == live_figure.record(figure, bars)
    changes = [lambda b: b.set_height(3), lambda b: b.set_facecolor("#d62728"), lambda b: b.set_hatch("//"),
               lambda b: b.set_edgecolor("black"), lambda b: b.set_linewidth(3), lambda b: b.set_alpha(0.4),
               lambda b: b.set_y(1), lambda b: b.set_visible(False)]
    for change in changes:
        change(bars[1])
        drawn.clear()
        cached = live_figure.record(figure, bars, cache)
        assert drawn == ([bars[1]] if bars[1].get_visible() else []), "only the changed bar is drawn again"
        assert cached == live_figure.record(figure, bars)

def test_neighbouring_opaque_paths_of_one_style_share_one_operation():
    from matplotlib.collections import PolyCollection

    figure, axes = _figure()
    boxes = [[(i, 0), (i + 0.8, 0), (i + 0.8, 1), (i, 1)] for i in range(5)]
    solid = axes.add_collection(PolyCollection(boxes, facecolors="#1f77b4", edgecolors="white"))
    faint = axes.add_collection(PolyCollection(boxes, facecolors="#1f77b4", alpha=0.5))
    ops, points = live_figure.record(figure, [solid])
    assert len(ops) == 1 and ops[0]["n"] == len(_triples(points))        # five boxes, one canvas path
    ops, _ = live_figure.record(figure, [faint])
    assert len(ops) == 5                   # translucent: overlaps must stay painted twice, as Agg does


def _inert_controls(classes) -> set[str]:
    """Controls whose move (one step; a dropdown: any option) changes neither figure nor readout."""
    import ipywidgets as widgets

    inert = set()
    for cls in classes:
        explorer = cls()
        try:
            for name, control in explorer.controls.items():
                before = (explorer.view.snapshot_png(), explorer.readout.value)
                if isinstance(control, widgets.Dropdown):       # two neighbouring presets may look alike
                    start = control.index
                    for index in range(len(control._options_labels)):
                        control.index = index
                        if (explorer.view.snapshot_png(), explorer.readout.value) != before:
                            break
                    else:
                        inert.add(f"{cls.__name__}.{name}")
                    control.index = start
                    continue
                if isinstance(control, sliders.LogSlider):
                    control.index = control.index + 1 if control.index < len(control.stops) - 1 else control.index - 1
                else:
                    control.value = control.value + control.step if control.value < control.max else control.value - control.step
                if (explorer.view.snapshot_png(), explorer.readout.value) == before:
                    inert.add(f"{cls.__name__}.{name}")
        finally:
            explorer.view.figure.clear()
    return inert


@pytest.mark.slow
def test_without_anywidget_every_control_of_every_explorer_still_moves_its_figure_or_readout(monkeypatch):
    """Issue 28: ``pip install lecture-lib`` without extras has no anywidget. Every explorer then shows one
    PNG per move (an ``ipywidgets.Image``), computes nothing ahead, and every control changes what the
    learner sees just as it does with anywidget (a control that changes nothing in some state, such as a
    chip whose price sheet is fixed, changes nothing in either)."""
    import sys

    import ipywidgets as widgets

    classes = base.explorer_classes()
    with_anywidget = _inert_controls(classes) if live_figure.available() else set()
    monkeypatch.setitem(sys.modules, "anywidget", None)        # import anywidget raises ImportError
    monkeypatch.delenv("LECTURE_FIGURE", raising=False)
    assert not live_figure.available()
    for cls in classes[:3]:
        explorer = cls()
        assert not explorer.view.live and isinstance(explorer.view.widget, widgets.Image)
        assert bytes(explorer.view.widget.value[:4]) == b"\x89PNG"
        explorer.lookahead.schedule(None)
        explorer.view.figure.clear()
    without = _inert_controls(classes)
    assert without <= with_anywidget, f"controls that changed nothing only without anywidget: {without - with_anywidget}"


def test_a_redraw_resends_an_unchanged_readout_the_page_may_have_replaced_with_a_predicted_one():
    """A learner's drag: the Fast Mode table stayed on 43 chips beside a figure drawn for 35. The page had shown a
    readout predicted for a position the drag passed; the kernel's last redraw was for the final position, whose
    readout it had already sent once, so traitlets sent nothing. A live explorer's redraw now always sends it."""
    from lecture_lib.explorers.roofline import FastModeExplorer

    explorer = FastModeExplorer()
    if not explorer.view.live:
        pytest.skip("anywidget is not installed")
    sent = []
    explorer.readout._send = lambda message, buffers=None: sent.append(message)
    explorer.refresh()                                   # same controls, same table as the last redraw
    assert any(m.get("state", {}).get("value") == explorer.readout.value for m in sent)


def test_a_value_typed_where_the_slider_already_is_puts_its_own_readout_back():
    """Typing "2e4" into a readout showing 20,000 changed nothing, so the page kept showing "2e4"; the slider's
    label is now re-sent (with the trailing space the page redraws on), as for text that is not a number."""
    control = sliders.log_slider("batch", 20_000, 1, 65536)
    label = control._options_labels[control.index]
    control.typed.value = "2e4"
    assert control.value == 20_000 and control._options_labels[control.index] == label + " "
    assert control.typed.value == ""
