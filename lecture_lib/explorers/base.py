"""The explorer layer every chapter uses: sliders, preset dropdowns, readouts, one live figure.

Design (issue "sliders that feel instant"): each explorer owns **one** matplotlib figure, created
once on the Agg canvas and shown as an ``ipywidgets.Image``. A change of a control

1. evaluates the chapter's lambdified formulas over whole NumPy arrays,
2. moves the existing artists (``set_data``), never re-creating axes or re-running layout,
3. redraws only the moving artists over a cached background (blitting) unless the axes' limits
   had to change, and
4. sends the still background as a PNG only when it changed, and the moving artists as canvas
   operations the page paints over it (:mod:`lecture_lib.explorers.live_figure`, a few kB per move); without
   anywidget (or with ``LECTURE_FIGURE=png``) it ships one PNG per move instead, encoded at the
   fastest zlib level in a 64-colour palette chosen on full redraws and reused by blitted frames.

Every figure is made readable once, after its first update (``FigureView.finish``): fonts of at
least 10 pt, legends outside the axes, look-alike lines told apart by dashes or marker shapes, no
label past the figure's edge. Every redraw updates the figure's text alternative (the ``title`` of
its ``<img>``), and readout rows may carry a status: a red "does not fit" row, a green "fits" row.

Changes that arrive while the kernel is busy are coalesced: the first change schedules one redraw
on the event loop and later ones only mark the state dirty, so a fast drag renders the latest
position instead of replaying stale ones.
"""

from __future__ import annotations

import asyncio
import html
import io
import os
import re
import time

import ipywidgets as widgets
import traitlets

from lecture_lib import units, validate

from . import ahead, plots
from .sliders import ARIA_VALUETEXT_SCRIPT, LABEL_PX_PER_CHAR, TRACK_WIDTH


def pixel_ratio() -> float:
    """How many device pixels each figure pixel gets: ``LECTURE_PIXEL_RATIO`` (1 to 3), else 1.

    2 renders figures at twice their displayed size, sharp on high-DPI ("retina") screens, and
    ``make site`` uses it for its still images. Live explorers default to 1: on the course's 2-core
    reference machine 2x pixels cost 10-20 ms per slider move (55-75 ms median against 40-53 ms at
    1x, tools/bench_browser.py, 2026-12-01), past the 50 ms budget of DESIGN.md. On a fast machine
    with a high-DPI screen, ``LECTURE_PIXEL_RATIO=2 make lab`` trades that time for sharpness."""
    value = os.environ.get("LECTURE_PIXEL_RATIO", "").strip()
    try:
        return min(3.0, max(1.0, float(value))) if value else 1.0
    except ValueError:
        return 1.0


PIXEL_RATIO = pixel_ratio()
LEGEND_CACHE = True         # FigureViews made while True paste unchanged legends (tests make one without to compare)
PIN_TITLES = True           # FigureView.finish skips matplotlib's title placement where it cannot move them
LEGEND_PAD_PX = 2           # a legend's antialiased edges reach this far past its box
STATUS_COLORS = {"bad": "#c62828", "ok": "#2e7d32", "note": "#8a5a00"}
# A mark as well as a colour (never colour alone); glyphs DejaVu Sans has. A note is "⚠" in text presentation
# (U+FE0E): "ℹ" read as a stray letter i beside a value (issue 29 §2).
STATUS_MARKS = {"bad": "✗ ", "ok": "✓ ", "note": "⚠\ufe0e "}



# A readout value longer than this takes the whole width where the readout is laid out as a grid (the projector).
WIDE_VALUE = 60


# A short equation in a readout label ("P = 4", "B = 2,048"): a name, " = ", and a value up to a space, bracket or
# separator (a comma between digits belongs to the number).
_EQUATION = re.compile(r"[^\s(]+ = (?:[^\s),;]|,(?=\d))+")


def _unbroken(pattern: re.Pattern, text: str) -> str:
    """Escaped ``text`` with each match of ``pattern`` in a span the browser does not break across lines; the text
    is unchanged, so the page and its tests read the same words."""
    return pattern.sub(lambda m: f"<span style='white-space:nowrap'>{m.group(0)}</span>", text)


# A number and the unit after it ("186 GB", "259 T tokens", "2.33 × 10¹⁵ tokens"): a narrow readout wrapped
# "186" / "GB HBM3e" (a learner's walk)
_QUANTITY = re.compile(r"(?<![\w.,])[-−]?\d[\d,.]*(?: × 10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)?(?: [kMGTPE](?= [A-Za-z]))?"
                       r" [A-Za-zµ$%][\w/%$-]*")


def readout_table(rows: list[tuple]) -> str:
    """HTML for the readout panel: label/value pairs, values in bold.

    A row may carry a third item, a status: "bad" (red, ✗: e.g. the weights do not fit in HBM),
    "ok" (green, ✓) or "note" (amber, ⚠: a setting the explorer had to interpret).
    """
    body = []
    for label, value, *status in rows:
        status = status[0] if status else None
        style = f";color:{STATUS_COLORS[status]}" if status else ""
        mark = STATUS_MARKS.get(status, "")
        wide = " lecture-row-wide" if len(value) > WIDE_VALUE else ""     # a quote, a source: a line of its own
        body.append(f"<tr class='lecture-row-{status or 'plain'}{wide}' style='{style[1:]}'>"
                    f"<td style='padding:1px 10px 1px 0'>{_unbroken(_EQUATION, html.escape(label))}</td>"
                    f"<td style='padding:1px 0;overflow-wrap:anywhere'><b>{mark}{_unbroken(_QUANTITY, html.escape(value))}"
                    "</b></td></tr>")
    return f"<table style='font-size:13px;line-height:1.35'>{''.join(body)}</table>"


def _reading(control, value):
    """A control's value as an explorer's ``update`` reads it: a count's (a whole-number log slider, whose
    trait is a float) as an int, so readouts write "96 × GB200", not "96.0"."""
    return int(value) if getattr(control, "whole", False) else value


def scale_up_rows(label: str, n_chips: int, chip) -> list[tuple[str, str, str]]:
    """A "bad" row when ``n_chips`` working on one step outnumber the chip's scale-up domain (hardware
    presets' ``scale_up_domain``): the charts treat them as one machine, but past the domain their
    collectives cross the scale-out links, an order of magnitude slower (Chapter 2). Empty otherwise."""
    domain = chip.scale_up_domain
    if n_chips <= domain:
        return []
    return [(label, f"{n_chips:,} exceeds the {chip.name} scale-up domain ({domain:,} chips): their collectives "
                    "would cross the slow scale-out links (Chapter 2), which this chart leaves out", "bad")]


def capacity_row(*, n_total: float, bytes_param: float, batch: float, len_ctx: float, bytes_tok: float,
                 hbm_capacity: float, where: str = "") -> tuple[str, str, str]:
    """The "does it fit?" row every deployment-implying explorer shows: weights + the batch's KV
    cache against the HBM of the chips it runs on, computed by Chapter 4's E4.1
    (:data:`lecture_lib.pipeline_memory.MEMORY_TOTAL`).

    ``batch`` may be 0 (weights only, where an explorer has no batch).
    Returns ``(label, text, status)``: status "bad" with "does not fit: 148 GB weights > 80 GB HBM"
    (or "... weights + 2 TB KV > ...") when it does not fit, "ok" with the share used when it does.
    """
    from lecture_lib import validate
    from lecture_lib.pipeline_memory import MEMORY_TOTAL

    n_total = validate.scalar("n_total", n_total)
    bytes_param = validate.scalar("bytes_param", bytes_param)
    batch = validate.scalar("batch", batch, allow_zero=True)
    len_ctx = validate.scalar("len_ctx", len_ctx)
    bytes_tok = validate.scalar("bytes_tok", bytes_tok, allow_zero=True)
    hbm_capacity = validate.scalar("hbm_capacity", hbm_capacity)     # inf gave "0% of inf B" (issue 20)
    if not isinstance(where, str):
        raise ValueError(f"where must be a text, got {validate._describe(where)}")
    weights = MEMORY_TOTAL(N_total=n_total, bytes_param=bytes_param, B=0, len_ctx=len_ctx, bytes_tok=bytes_tok,
                           allow_zero="B")
    total = MEMORY_TOTAL(N_total=n_total, bytes_param=bytes_param, B=batch, len_ctx=len_ctx, bytes_tok=bytes_tok,
                         allow_zero="B")
    kv = total - weights
    label = f"fits in HBM{' of ' + where if where else ''}?"
    hbm = f"{units.bytes_(hbm_capacity)} HBM"
    if weights > hbm_capacity:
        return label, f"does not fit: {units.bytes_(weights)} weights > {hbm}", "bad"
    if total > hbm_capacity:
        return label, f"does not fit: {units.bytes_(weights)} weights + {units.bytes_(kv)} KV > {hbm}", "bad"
    held = f"{units.bytes_(weights)} weights" + (f" + {units.bytes_(kv)} KV" if kv > 0 else "")
    return label, f"fits: {held} = {units.percent(total / hbm_capacity)} of {hbm}", "ok"


# --- The live figure ----------------------------------------------------------------------------
class AltImage(widgets.Image):
    """An ``ipywidgets.Image`` whose ``tooltip`` becomes the ``title`` of its ``<img>``: the
    image's accessible name (screen readers read it when there is no ``alt``), and a hover text.

    ipywidgets 8's front end sets ``title`` only when the model's ``description`` is empty, and
    reads ``description.length`` to check; Image has no description, so that check throws and the
    image never renders. Syncing an empty ``description`` makes the check pass (verified in
    Chromium: the ``<img class="lecture-figure">`` carries ``title``)."""

    description = traitlets.Unicode("", help="kept empty: see the class docstring").tag(sync=True)


class FigureView:
    """A figure drawn once and then updated in place, shown as an image widget.

    ``animate(*artists)`` marks the artists that move with the controls; they are redrawn over a
    cached background. ``render(full=True)`` redraws everything (after limits or static parts change).
    """

    def __init__(self, figure):
        from . import live_figure

        self.figure = figure
        self.canvas = figure.canvas
        width, height = (int(round(v)) for v in figure.get_size_inches() * figure.dpi)
        layout = widgets.Layout(width=f"{width}px", height=f"{height}px")
        # In JupyterLab, Notebook 7 and Voila the moving artists are painted in the browser
        # (lecture_lib.explorers.live_figure); elsewhere, one PNG per move.
        self.live = live_figure.available()
        if self.live:
            self.widget = live_figure.widget_class()(layout=layout, css_size=[width, height], pixels=[width, height])
            self.widget.add_class("lecture-live")
            self.widget.add_class(f"lecture-figure-{self.widget.model_id}")    # tests pair page and kernel
        else:
            self.widget = AltImage(format="png", layout=layout)
            self.widget.add_class("lecture-figure")
        self._finished = False
        self.alt_text = ""
        self._animated: list = []
        self._background = None
        self._page_background_stale = True     # live: the page's <img> must get the current background
        self._palette = None
        self._frames = 0
        self.stamp: dict = {}            # {"state": positions, "attrs": ...} of the controls the next frame is for
        self._recorded: dict = {}       # live: each moving artist's last canvas operations
        self.last_render_seconds = 0.0
        self._legend_pixels = None       # (what the legends show, their pixels): see draw_canvas
        self.paste_legends = LEGEND_CACHE

    def finish(self) -> None:
        """After the explorer has built its artists: fonts to at least 10 pt, legends outside the
        axes (the figure widens to hold them), then PIXEL_RATIO x the pixels shown at 1x size."""
        if self._finished:
            return
        self._finished = True
        plots.readable(self.figure)
        plots.readable_ticks(self.figure)
        plots.keep_labels_inside(self.figure)       # the width is final before legends are placed
        plots.fit_width(self.figure, plots.MAX_WIDTH_PX / self.figure.dpi)
        plots.legends_outside(self.figure, max_width=plots.MAX_WIDTH_PX / self.figure.dpi)
        plots.distinguish_lines(self.figure)
        plots.whole_dots(self.figure)
        plots.keep_labels_inside(self.figure)
        plots.fit_width(self.figure, plots.MAX_WIDTH_PX / self.figure.dpi)
        if PIN_TITLES:
            plots.pin_titles(self.figure)
        width, height = (int(round(v)) for v in self.figure.get_size_inches() * self.figure.dpi)
        self.widget.layout.width, self.widget.layout.height = f"{width}px", f"{height}px"
        self.figure.set_dpi(self.figure.dpi * PIXEL_RATIO)
        if self.live:
            self.widget.css_size = [width, height]
            self.widget.pixels = [int(v) for v in self.canvas.get_width_height(physical=True)]
        self._background = None

    def animate(self, *artists):
        for artist in artists:
            artist.set_animated(True)
            self._animated.append(artist)

    def render(self, *, full: bool = False) -> None:
        # timed in this thread's CPU seconds: what the drawing costs, whatever else the machine is doing (a
        # redraw timed on a busy machine once turned predicting new axes off, ahead.BACKGROUND_BUDGET)
        started = time.thread_time()
        full = full or self._background is None
        if full:
            self.draw_canvas()          # every artist but the animated ones
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            self._page_background_stale = True
            self._recorded.clear()      # the axes' transforms may have changed
        if self.live:
            self._render_live()
        else:
            self._draw_moving(restore=not full)
            self.widget.value = self.png_bytes(new_palette=full)
        self.last_render_seconds = time.thread_time() - started
        if full:
            self.full_render_seconds = self.last_render_seconds     # what predicting new axes costs (ahead.py)

    def draw_canvas(self) -> None:
        """``canvas.draw()``, with the legends beside or below the axes pasted from the last draw when
        nothing they show has changed: laying out a legend's texts and swatches is about a quarter of a
        full redraw, and a move that changes the axes leaves the legends as they were. A legend is
        cached only where it covers no axes (over the figure's plain background its pixels depend on
        nothing else); ``tests/test_explorer_figures.py`` compares the pasted and the drawn pixels."""
        legends = [axis.get_legend() for axis in self.figure.axes if axis.get_legend() is not None]
        legends += list(self.figure.legends)
        key = _legends_key(self.figure, legends)
        cached = self._legend_pixels
        if cached is not None and cached[0] == key and legends:
            for legend in legends:
                legend.set_animated(True)
            try:
                self.canvas.draw()
            finally:
                for legend in legends:
                    legend.set_animated(False)
            for region in cached[1]:
                self.canvas.restore_region(region)
            return
        self.canvas.draw()
        self._legend_pixels = None
        if not legends or not self.paste_legends:
            return
        renderer = self.canvas.get_renderer()
        boxes = [legend.get_window_extent(renderer).padded(LEGEND_PAD_PX) for legend in legends]
        if any(box.overlaps(axis.bbox) for box in boxes for axis in self.figure.axes):
            return
        self._legend_pixels = (key, [self.canvas.copy_from_bbox(box) for box in boxes])

    def _draw_moving(self, *, restore: bool = True) -> None:
        """Agg draws the moving artists over the cached background (restored first, unless the
        canvas was just drawn)."""
        if restore:
            self.canvas.restore_region(self._background)
        for artist in self._animated:
            self.figure.draw_artist(artist)

    def _render_live(self) -> None:
        """Send the background when it changed, and the moving artists as canvas operations
        (lecture_lib.explorers.live_figure); an artist the canvas cannot draw sends the whole frame as a PNG."""
        from . import live_figure

        self._frames += 1
        stamp = self.stamp
        try:
            ops, points = live_figure.record(self.figure, self._animated, self._recorded)
        except live_figure.Unsupported:
            self._recorded.clear()
            self._draw_moving()
            with self.widget.hold_sync():
                self.widget.background = self.png_bytes(new_palette=True)
                self.widget.points, self.widget.frame = b"", {"ops": [], "n": self._frames, **stamp}
            self._page_background_stale = True        # the page now holds a composite, not the background
            return
        with self.widget.hold_sync():
            if self._page_background_stale:
                self.canvas.restore_region(self._background)
                self.widget.background = self.png_bytes(colours=256)
                self._page_background_stale = False
            self.widget.points = points
            self.widget.frame = {"ops": ops, "n": self._frames, **stamp}

    def moving_frame(self) -> tuple[list[dict], bytes] | None:
        """The moving artists as they stand, recorded for the live figure (operations, points), or
        None where the page would need a new background first (or the canvas cannot draw them)."""
        from . import live_figure

        if not self.live or self._background is None or self._page_background_stale:
            return None
        try:
            return live_figure.record(self.figure, self._animated, self._recorded)
        except live_figure.Unsupported:
            self._recorded.clear()
            return None

    def frame_with_background(self) -> tuple[list[dict], bytes, bytes] | None:
        """A predicted frame whose axes changed: its moving artists and the PNG of its own background
        (the whole figure is drawn; the kernel's background for the current frame is kept)."""
        if not self.live or self._background is None:
            return None
        self.draw_canvas()
        return self.frame_over(self.png_bytes(colours=256))

    def still_artists(self) -> list:
        """Every artist drawn into the background except the axes' own (the Axes, and each axis
        with its ticks, which follow the limits and :meth:`tick_makers`)."""
        import matplotlib.axes
        import matplotlib.axis

        moving, found = set(self._animated), []

        def walk(parent):
            for child in parent.get_children():
                if child in moving or isinstance(child, matplotlib.axis.Axis):
                    continue
                if not isinstance(child, matplotlib.axes.Axes):
                    found.append(child)
                walk(child)
        walk(self.figure)
        return found

    def tick_makers(self) -> tuple:
        """What places and writes each axis's ticks (its locators and formatters): with the limits,
        what an axis draws."""
        return tuple(id(maker) for axes in self.figure.axes for axis in (axes.xaxis, axes.yaxis)
                     for maker in (axis.get_major_locator(), axis.get_major_formatter(),
                                   axis.get_minor_locator(), axis.get_minor_formatter()))

    def frame_over(self, png: bytes) -> tuple[list[dict], bytes, bytes] | None:
        """A predicted frame with new axes whose background ``png`` was drawn for an earlier
        prediction with the same limits: its moving artists recorded under the axes as they
        stand (nothing else is drawn), with that PNG."""
        from . import live_figure

        if not self.live or self._background is None:
            return None
        self._recorded.clear()          # recorded below with other transforms
        try:
            ops, points = live_figure.record(self.figure, self._animated)
        except live_figure.Unsupported:
            return None
        return ops, points, png

    def shown(self) -> tuple:
        """What the page holds now, comparable between moves: the PNG, or a live figure's
        background, points and operations."""
        if not self.live:
            return (bytes(self.widget.value),)
        return bytes(self.widget.background), bytes(self.widget.points), repr(self.widget.frame.get("ops", []))

    def page_png(self) -> bytes:
        """The PNG the page holds: the whole figure, or a live figure's background."""
        return bytes(self.widget.background if self.live else self.widget.value)

    def snapshot_png(self) -> bytes:
        """The PNG of what the learner sees now (background and moving artists), drawn by Agg in
        either mode: what tests compare, and a still copy of a live figure."""
        if self._background is None:
            self.render(full=True)
        self._draw_moving()
        self._recorded.clear()          # drawing lowered the artists' stale flags
        return self.png_bytes(new_palette=True)

    def describe(self, text: str) -> None:
        """Set the figure's text alternative. The Image widget's ``tooltip`` becomes the ``title``
        attribute of its ``<img>`` (ipywidgets 8), which is the image's accessible name for screen
        readers when it has no ``alt``; sighted readers see it on hover."""
        self.alt_text = text
        trait = "alt" if self.live else "tooltip"
        if getattr(self.widget, trait) != text:
            setattr(self.widget, trait, text)

    def png_bytes(self, *, new_palette: bool = True, colours: int | None = None) -> bytes:
        """The canvas as a PNG: 64 colours (a palette reused by blitted frames unless
        ``new_palette``), or its own ``colours``-colour palette chosen from every pixel (a live
        figure's background, sent only when the axes change: its thin legend swatches keep their
        colours, which a 64-colour palette of a half-size copy merged)."""
        from PIL import Image

        width, height = self.canvas.get_width_height()
        image = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
        buffer = io.BytesIO()
        if colours is not None:
            image.quantize(colours, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
                buffer, format="png", compress_level=1)
            return buffer.getvalue()
        # A 64-colour palette keeps line art crisp and makes the PNG ~2.5x smaller and faster to
        # encode, send and decode than full RGB. Choosing the palette (FASTOCTREE) is the slow part
        # at 2x pixels (12 ms of a 2078 x 608 frame), so it is chosen on full redraws only, from a
        # half-size copy, and reused by blitted frames, whose colours are the same artists' (3 ms).
        if new_palette or self._palette is None:   # chosen on a half-size copy: every colour is there, 4x fewer pixels
            self._palette = image.reduce(2).quantize(64, method=Image.Quantize.FASTOCTREE)
        indexed = image.quantize(palette=self._palette, dither=Image.Dither.NONE)
        indexed.save(buffer, format="png", compress_level=1)
        return buffer.getvalue()


def _legends_key(figure, legends) -> tuple:
    """Everything a legend's pixels depend on: the figure's size and resolution, and each legend's
    place, title, texts and swatches (read from the artists the legend draws, so an explorer that
    edits a text or a swatch makes the next full redraw lay the legend out again)."""
    def looks(artist) -> tuple:
        found = [type(artist).__name__]
        for getter in SWATCH_GETTERS:
            if hasattr(artist, getter):
                value = getattr(artist, getter)()
                found.append(repr(value.tolist() if hasattr(value, "tolist") else value))
        return tuple(found)

    parts = [tuple(figure.get_size_inches()), figure.dpi]
    for legend in legends:
        parts.append((id(legend), legend.get_visible(), legend.get_alpha(), legend.get_frame_on(), legend._loc,
                      legend.get_bbox_to_anchor().bounds, looks(legend.get_title()),
                      tuple(looks(text) + (text.get_text(),) for text in legend.texts),
                      tuple(looks(handle) for handle in legend.legend_handles if handle is not None)))
    return tuple(parts)


SWATCH_GETTERS = ("get_visible", "get_alpha", "get_color", "get_facecolor", "get_edgecolor", "get_linestyle",
                  "get_linewidth", "get_marker", "get_markersize", "get_markerfacecolor", "get_hatch",
                  "get_fontsize", "get_fontweight", "get_fontstyle")


# --- The explorer -------------------------------------------------------------------------------
def _check_override(name: str, control, value) -> None:
    """Refuse a starting value a linear slider would clamp or keep silently (NaN, text, out of range);
    log sliders and dropdowns check their own values."""
    if isinstance(control, widgets.FloatLogSlider) or not isinstance(
            control, (widgets.FloatSlider, widgets.IntSlider)):
        return
    if isinstance(control, widgets.IntSlider):
        number = validate.integer(name, value, minimum=int(control.min), maximum=int(control.max))
    else:
        number = validate.number(name, value, positive=False, allow_zero=True)
    if not control.min <= number <= control.max:
        raise ValueError(f"{name} must be between {control.min:g} and {control.max:g} "
                         f"(the range of its slider), got {validate._describe(value)}")


def _describe_value(value) -> str:
    return validate._describe(value)


def _same(value, option) -> bool:
    """Whether ``value`` is the dropdown option ``option`` (itself, or equal to it as one truth value)."""
    if value is option:
        return True
    try:
        return bool(value == option)
    except Exception:       # an array compared with an option: no single answer
        return False


class Explorer:
    """Controls + one live figure + a readout panel.

    Subclasses define ``controls_()`` (name -> widget), ``setup(figure_view)`` (create the figure and
    its artists once) and ``update(values) -> (readout rows, full_redraw)``. Display the explorer
    by leaving it as a cell's last expression, or through ``.widget``.
    """

    title = ""

    def __init__(self, **overrides):
        self.controls: dict[str, widgets.Widget] = self.controls_()
        for name, value in overrides.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; this explorer has {sorted(self.controls)}")
            _check_override(name, self.controls[name], value)
            try:
                self.controls[name].value = value
            except traitlets.TraitError as error:   # a dropdown's unknown choice, a wrong type
                raise ValueError(f"{name} cannot start at {_describe_value(value)}: {error}") from None
            self.controls[name].declared = self.controls[name].value   # what the browser must show first
        self.view = self.setup()
        self.update(self.values)      # data and limits in place, so the layout below measures real labels
        self.view.finish()
        self.readout = widgets.HTML()
        self.readout.add_class("lecture-readout")
        self._scheduled = False
        self._scheduled_at = 0.0
        self.render_count = 0
        self.lookahead = ahead.Lookahead(self)
        self.refresh(full=True)
        if self.view.live:
            self.view.widget.on_msg(self._on_page_message)
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        label_width = self._fit_labels()
        heading = widgets.HTML(f"<b>{html.escape(self.title)}</b>") if self.title else None
        # The figure on top (at most the column's width), and beneath it the controls beside the
        # readout: while a slider moves, the numbers it changes sit next to it and the figure just
        # above, all within one screen (issue 19: readouts had fallen below the fold).
        typed = [c.typed for c in self.controls.values() if getattr(c, "typed", None) is not None]
        panel = widgets.VBox(list(self.controls.values()) + typed,
                             layout=widgets.Layout(min_width=f"{label_width + TRACK_WIDTH + 10}px"))
        self.readout.layout = widgets.Layout(flex="1 1 300px", min_width="280px", max_width="560px")
        body = widgets.HBox([panel, self.readout],
                            layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start", grid_gap="4px 16px"))
        self.widget = widgets.VBox(([heading] if heading else []) + [self.view.widget, body])
        self.widget.add_class("lecture-explorer")

    def _fit_labels(self) -> int:
        """Give every control's label the width of the longest one, so none is cut off and the
        tracks stay aligned; returns that width in px."""
        longest = max((len(c.description) for c in self.controls.values()), default=0)
        width = max(150, int(longest * LABEL_PX_PER_CHAR) + 12)
        for control in self.controls.values():
            control.style.description_width = f"{width}px"
            control.layout.width = f"{width + TRACK_WIDTH}px"
        return width

    # Subclass hooks
    def controls_(self) -> dict[str, widgets.Widget]:
        raise NotImplementedError

    def setup(self) -> FigureView:
        raise NotImplementedError

    def update(self, values: dict) -> tuple[list[tuple[str, str]], bool]:
        raise NotImplementedError

    # Machinery
    @property
    def values(self) -> dict:
        return {name: _reading(control, control.value) for name, control in self.controls.items()}

    def refresh(self, *, full: bool = False) -> None:
        """Recompute from the current control values and redraw (synchronously)."""
        self._scheduled = False
        rows, needs_full = self.update(self.values)
        state = self.lookahead.state()   # the controls' positions this frame is for: the page drops it once they move on
        self.view.stamp = {"state": state[0], "attrs": state[1]} if state else {}
        with self.view.widget.hold_sync():    # pixels and their text alternative in one message (one <img> load)
            self.view.render(full=full or needs_full)
            self.view.describe(self.summary(rows))
        table = readout_table(rows)                  # after the figure: the page paints the curves first
        if table == self.readout.value and self.view.live:
            # Unchanged here, but the page may show a readout it predicted for another position (a drag that
            # passed this one, went on and came back between two redraws): traitlets sends no unchanged value,
            # so send it, or the table beside a right picture stays wrong until the next move.
            self.readout.send_state("value")
        self.readout.value = table
        self.render_count += 1

    def moves_others(self, name: str, value) -> bool:
        """Whether moving control ``name`` to ``value`` would move another control too (a link between
        sliders): such a position is not predicted, since a prediction assumes the others stay put. None
        move others unless an explorer says so (Fast Mode's normal batch)."""
        return False

    def predict(self, name: str, value, *, background: bool = False, backgrounds: dict | None = None) -> tuple | None:
        """What the learner would see with control ``name`` at ``value`` and the others where they
        are: (operations, points, text alternative, readout HTML) for the live figure, or None
        where that needs a new background (with ``background``, that PNG is appended instead).
        Computed by the same ``update`` as a real move; the figure's limits and artists are put
        back afterwards (lecture_lib.explorers.ahead).

        ``backgrounds`` (the caller's, for one round of predictions) keeps every background drawn
        here. Where a move leaves every still artist as it was and changes only the axes' limits, the
        background depends on those limits alone: a later prediction with the same limits reuses its
        PNG, without ``background`` and without drawing the figure again.

        ``value`` must be a position the control can take (within a slider's range, a whole number for a count,
        one of a dropdown's options); anything else (NaN, inf, 1e308, text) is a ``ValueError`` naming the
        control, the value and its range, before the explorer computes anything."""
        value = self._position(name, value)
        view = self.view
        axes = view.figure.axes
        limits = [(axis.get_xlim(), axis.get_ylim()) for axis in axes]
        still = view.still_artists() if backgrounds is not None else []
        for artist in still:        # an artist the update below touches is stale again (even if set to the same)
            artist.stale = False
        try:
            rows, needs_full = self.update(dict(self.values, **{name: _reading(self.controls[name], value)}))
            now = tuple((axis.get_xlim(), axis.get_ylim()) for axis in axes)
            if needs_full or any(here != kept for here, kept in zip(now, limits)):
                key = None
                if backgrounds is not None and view.still_artists() == still and not any(a.stale for a in still):
                    key = ("axes", now, view.tick_makers())
                if key in (backgrounds or {}):
                    frame = view.frame_over(backgrounds[key])
                else:
                    frame = view.frame_with_background() if background else None
                    if frame is not None and backgrounds is not None:
                        backgrounds[key or ("drawn", len(backgrounds))] = frame[2]
            else:
                frame = self.view.moving_frame()
            if frame is None:
                return None
            return (*frame[:2], self.summary(rows), readout_table(rows), *frame[2:])   # a new background last
        finally:
            for axis, (xlim, ylim) in zip(axes, limits):
                if (axis.get_xlim(), axis.get_ylim()) != (xlim, ylim):
                    axis.set_xlim(*xlim)
                    axis.set_ylim(*ylim)
            self.update(self.values)

    def _position(self, name, value):
        """``value`` as control ``name`` holds it, if the control can take it; else a ValueError."""
        if not isinstance(name, str) or name not in self.controls:
            raise ValueError(f"name must be one of this explorer's controls {sorted(self.controls)}, "
                             f"got {_describe_value(name)}")
        control = self.controls[name]
        if isinstance(control, widgets.Dropdown):
            options = control._options_values
            if any(_same(value, option) for option in options):
                return value
            raise ValueError(f"{name} must be one of its options {list(options)}, got {_describe_value(value)}")
        if isinstance(control, widgets.IntSlider):
            return validate.integer(name, value, minimum=int(control.min), maximum=int(control.max))
        if not isinstance(control, (widgets.FloatSlider, widgets.FloatLogSlider)):
            raise ValueError(f"{name} is not a slider or a dropdown: its positions are not predicted")
        number = validate.number(name, value, positive=False, allow_zero=True)
        if not isinstance(number, float):
            raise ValueError(f"{name} must be one number, got {_describe_value(value)}")
        log = isinstance(control, widgets.FloatLogSlider)
        low, high = (control.base ** control.min, control.base ** control.max) if log else (control.min, control.max)
        if not low - 1e-9 * abs(low) <= number <= high + 1e-9 * abs(high):
            raise ValueError(f"{name} must be between {low:g} and {high:g} (the range of its slider), "
                             f"got {_describe_value(value)}")
        if getattr(control, "whole", False) and number != round(number):
            raise ValueError(f"{name} counts whole things, got {_describe_value(value)}")
        return number

    def _on_page_message(self, _widget, content, _buffers) -> None:
        self.lookahead.request(content, _kernel_loop())     # a view just drawn, or a control in the learner's hand

    def summary(self, rows) -> str:
        """The figure's text alternative: what each chart plots over which ranges (the real axis
        limits, or a categorical axis's labels), its series, and the readouts (which state the
        learner's point), without TeX markup. Rebuilt on every redraw."""
        text = plots.describe(self.view.figure, self.title or "Chart")
        # Readout rows are plain text, where "$" is a dollar (plain_text reads it as figure TeX and drops it).
        rows = " ".join(f"{' '.join(str(label).split())}: {' '.join(str(value).split())}." for label, value, *_ in rows)
        return f"{text} {rows}".strip()

    def _on_change(self, change) -> None:
        self.lookahead.last_moved = next((name for name, control in self.controls.items()
                                          if control is change["owner"]), None)
        self.lookahead.generation += 1          # predictions under way assumed the old position
        if self._scheduled:
            return
        loop = _kernel_loop()
        if loop is None:
            self.refresh()
            return
        self._scheduled = True
        self._scheduled_at = time.monotonic()
        loop.call_soon(self._refresh_safely)

    def _refresh_safely(self) -> None:
        # Moves still queued in the kernel (a drag's burst, or a page flooding the controls) are applied first and
        # drawn once: one redraw for the lot, not one per message, within COALESCE_SECONDS of the first.
        if ahead.shell_messages_waiting() and time.monotonic() - self._scheduled_at < COALESCE_SECONDS:
            _kernel_loop().call_soon(self._refresh_safely)
            return
        try:
            self.refresh()
            self.lookahead.schedule(_kernel_loop())
        except Exception as error:  # show it in the explorer instead of losing it in a log
            self._scheduled = False
            self.readout.value = (f"<pre style='color:#b00'>{html.escape(type(error).__name__)}: "
                                  f"{html.escape(str(error))}</pre>")

    def _ipython_display_(self):
        from IPython.display import Javascript, display

        display(self.widget)
        display(Javascript(ARIA_VALUETEXT_SCRIPT))     # every explorer: keyboard and screen-reader fixes


def explorer_classes() -> list[type]:
    """Every public Explorer of every module in :mod:`lecture_lib.explorers`, in module order (tests
    and ``make bench`` walk them all, so a new chapter's explorers are covered without listing them)."""
    import importlib
    import inspect
    import os
    import pkgutil

    here = [os.path.dirname(os.path.abspath(__file__))]
    found = []
    for info in sorted(pkgutil.iter_modules(here), key=lambda info: info.name):
        module = importlib.import_module(f"{__package__}.{info.name}")
        found += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, Explorer) and cls is not Explorer and cls.__module__ == module.__name__
                  and not cls.__name__.startswith("_")]
    return found


COALESCE_SECONDS = 0.5


def _kernel_loop():
    """The running event loop of the IPython kernel we are in, or None (scripts, tests, nbclient
    preprocessing outside a kernel). Only a kernel's loop is sure to run the deferred redraw."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return loop if shell is not None and getattr(shell, "kernel", None) is not None else None


ROUND_STEPS = (1, 2, 5)                              # 1-2-5 x a power of ten
FINE_STEPS = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8)         # where bars should fill the plot


def nice_ceiling(x: float, steps: tuple = ROUND_STEPS) -> float:
    """The smallest round number (``steps`` x a power of ten) at or above ``x``: axis limits
    that change rarely as a slider moves (each change costs a full redraw), yet fit the data."""
    import math

    exponent = math.floor(math.log10(x))
    for step in tuple(steps) + (10,):
        if step * 10 ** exponent >= x:
            return step * 10 ** exponent
    return 10 ** (exponent + 1)


def steady_ceiling(current: float, needed: float, *, fill: float = 0.4, steps: tuple = ROUND_STEPS,
                   headroom: float = 1.0) -> float:
    """A linear axis's top that stays put while a slider moves: the ``current`` top as long as it
    holds ``needed`` and the data still fill at least ``fill`` of it, else :func:`nice_ceiling`
    (of ``headroom`` x ``needed`` when the data outgrew the top: room for the next steps of a slider
    that doubles them). A top re-fitted on every move costs a full redraw per move, 40-100 ms on
    the course's 2-core machine; a learner holding a key would pay it at every step."""
    if current > 0 and fill * current <= needed <= current:
        return current
    return nice_ceiling(needed * (headroom if needed > current else 1.0), steps)


def steady_decades(current: tuple, low: float, high: float, *, slack: int = 1,
                   margin: int = 0) -> tuple[float, float]:
    """Log-axis limits in whole decades that hold ``[low, high]``: the ``current`` ones while they
    hold the data with at most ``slack`` (+ 2 ``margin``) spare decades, else the tightest whole
    decades widened by ``margin`` on each side (for data whose whole range slides as a slider moves)."""
    import math

    tight = (math.floor(math.log10(low)), math.ceil(math.log10(high)))
    if current[0] > 0 and current[1] > 0:
        now = (math.log10(current[0]), math.log10(current[1]))
        spare = (now[1] - now[0]) - (tight[1] - tight[0])
        if now[0] <= math.log10(low) and math.log10(high) <= now[1] and spare <= slack + 2 * margin:
            return float(current[0]), float(current[1])
    return 10.0 ** (tight[0] - margin), 10.0 ** (tight[1] + margin)


def set_limits(axis, xlim, ylim, *, pad: float = 1.0) -> bool:
    """Set limits only when they change (a full redraw is then needed); returns True if changed."""
    changed = tuple(axis.get_xlim()) != tuple(xlim) or tuple(axis.get_ylim()) != tuple(ylim)
    if changed:
        axis.set_xlim(*xlim)
        axis.set_ylim(*ylim)
    return changed


def new_view(width: float = 6.4, height: float = 3.6, ncols: int = 1):
    """A FigureView around a fresh course-styled figure; returns (view, axes)."""
    figure, axes = plots.new_figure(width, height, ncols=ncols)
    return FigureView(figure), axes
