"""Agg's text drawn from glyphs rendered once, and each axis's ticks placed once per draw: the same pixels,
without FreeType's work on every redraw, and without matplotlib placing and measuring the same ticks three times.

A full redraw of an explorer draws some 70 texts (tick labels, axis labels, titles, legend entries), almost all
of them the same strings as in the last redraw. Matplotlib (3.11's Agg) shapes each string again
(``FT2Font._layout``, about 0.6 ms) and renders each glyph again (``FT2Font._render_glyph``) every time: about a
third of a full redraw. :class:`Canvas` draws text with a renderer that remembers both.

- A string's layout (the glyphs and their offsets) depends on the font, its size, the DPI, the hinting flags
  and the font features and language: that is its key.
- A glyph's bitmap depends on the same and on where the glyph's origin falls within a pixel. FreeType positions
  glyphs in 1/64 pixel; shifting an outline by whole pixels shifts its bitmap by whole pixels and changes none
  of its values. So a glyph is rendered once per 1/64-pixel phase and moved to its place.

Ticks: see :func:`_ticks_once` (a full redraw about a third cheaper: 132 → 78 ms for ScaleUpExplorer on the 2-core
machine). Math text (``$...$``) is drawn by matplotlib as before. Where matplotlib lacks the private calls used here
(releases before 3.11 draw text differently), :class:`Canvas` is plain Agg. ``tests/test_explorer_figures.py``
compares every explorer drawn with and without this canvas, pixel for pixel.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

try:
    from matplotlib.backends.backend_agg import get_hinting_flag
    from matplotlib.ft2font import FT2Font, RenderMode

    SUPPORTED = all(hasattr(FT2Font, name) for name in ("_layout", "_set_transform", "_render_glyph"))
except ImportError:           # matplotlib < 3.11
    SUPPORTED = False

REMEMBER_GLYPHS = True        # canvases made while True draw text from remembered glyphs (tests make one without)
LIMIT = 20_000                # entries per cache; a full cache starts again (a figure needs a few hundred)

_layouts: dict = {}
_glyphs: dict = {}


def _hashable(value):
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    return value


def _remember(cache: dict, key, value):
    if len(cache) >= LIMIT:
        cache.clear()
    cache[key] = value
    return value


class Renderer(RendererAgg):
    """RendererAgg whose plain text comes from remembered layouts and glyph bitmaps."""

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        font = self._prepare_font(prop)
        flags = get_hinting_flag()
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        size = prop.get_size_in_points()
        key = (font, size, self.dpi, s, flags, _hashable(features), _hashable(language))
        glyphs = _layouts.get(key)
        if glyphs is None:
            items = font._layout(s, flags=flags, features=features, language=language)
            glyphs = _remember(_layouts, key, tuple((item.ft_object, item.glyph_index, item.x, item.y)
                                                    for item in items))
        self._draw_glyphs(gc, x, y, angle, size, flags, glyphs)

    def _draw_glyphs(self, gc, x, y, angle, size, flags, glyphs) -> None:
        """Each glyph's bitmap at its place, as ``RendererAgg._draw_text_glyphs_and_boxes`` draws it (y is
        downwards; the glyphs' own offsets are upwards)."""
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        turn = (round(0x10000 * cos), round(-0x10000 * sin), round(0x10000 * sin), round(0x10000 * cos))   # 16.16
        antialiased = bool(gc.get_antialiased())
        mode = RenderMode.NORMAL if antialiased else RenderMode.MONO
        top_edge = int(self.height)
        for font, index, dx, dy in glyphs:
            origin_x = round(0x40 * (x + dx * cos - dy * sin))            # 26.6 fixed point, as FreeType takes it
            origin_y = round(0x40 * (self.height - y + dx * sin + dy * cos))
            key = (font, size, self.dpi, index, turn, origin_x & 63, origin_y & 63, flags, antialiased)
            glyph = _glyphs.get(key)
            if glyph is None:
                font.set_size(size, self.dpi)
                font._set_transform(np.array(turn).reshape(2, 2), [origin_x & 63, origin_y & 63])   # the phase only
                bitmap = font._render_glyph(index, flags, mode)
                buffer = np.array(bitmap.buffer, copy=True)
                if not antialiased:
                    buffer *= 0xff
                glyph = _remember(_glyphs, key, (buffer, bitmap.left, bitmap.top))
            buffer, left, top = glyph
            self._renderer.draw_text_image(buffer, left + (origin_x >> 6),
                                           top_edge - (top + (origin_y >> 6)) + buffer.shape[0], 0, gc)


# What one draw of an axis asks for three times over (matplotlib 3.11): ``Axis.draw`` places its ticks and measures
# their labels; placing the axis label does both again (``_get_tick_boxes_siblings``), and so does the spine beside
# it (``Spine.get_window_extent``). Nothing changes in between, so within one draw each is computed once.
TICK_METHODS = ("_update_ticks", "_get_ticklabel_bboxes")
ONCE_PER_DRAW = all(hasattr(Axis, name) for name in TICK_METHODS)


def _once(axis, name):
    """``axis.<name>`` remembering its result for the axis's limits and place, and the arguments' identities."""
    original, results = getattr(axis, name), {}

    def remembered(*args):
        key = (tuple(axis.get_view_interval()), axis.axes.bbox.bounds, tuple(map(id, args[0])) if args else (),
               tuple(map(id, args[1:])))
        if key not in results:
            results[key] = original(*args)
        return results[key]
    return remembered


@contextmanager
def _ticks_once(figure):
    """Within the block, each axis of ``figure`` computes its ticks and their labels' boxes once per limits."""
    axes = [axis for ax in figure.axes for axis in ax._axis_map.values()] if ONCE_PER_DRAW else []
    for axis in axes:
        for name in TICK_METHODS:
            setattr(axis, name, _once(axis, name))
    try:
        yield
    finally:
        for axis in axes:
            for name in TICK_METHODS:
                axis.__dict__.pop(name, None)


class Canvas(FigureCanvasAgg):
    """FigureCanvasAgg drawing with :class:`Renderer` (plain Agg where matplotlib lacks what it needs), each
    axis's ticks computed once per draw (:func:`_ticks_once`)."""

    def draw(self):
        with _ticks_once(self.figure):
            super().draw()

    def get_renderer(self):
        renderer = super().get_renderer()
        if SUPPORTED and type(renderer) is RendererAgg:
            renderer.__class__ = Renderer
        return renderer


def canvas_class():
    """The canvas a new explorer figure gets: :class:`Canvas`, or plain Agg with ``REMEMBER_GLYPHS`` off."""
    return Canvas if REMEMBER_GLYPHS and SUPPORTED else FigureCanvasAgg
