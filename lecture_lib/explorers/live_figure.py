"""The explorers' figure drawn in the browser: a still background plus the moving artists as vectors.

Why (issue 19 §9, measured with ``tools/bench_browser.py`` on the course's 2-core machine): sending
a new PNG on every slider move costs more than all the kernel's arithmetic. A pre-encoded 22 kB
PNG in an ``ipywidgets.Image``, with no computing at all, took 57 ms from key press to painted
frame against 37 ms for a slider that only rewrites a text label; encoding it in the kernel and
decoding it in the page added another 20-60 ms under load. A canvas drawn from a few kilobytes of
coordinates reached the label's own time (31-41 ms against 33-38 ms).

So the figure is split the way blitting already splits it:

* the **background** (axes, ticks, labels, legends, every artist that does not move) is drawn by
  matplotlib's Agg once, and again only when the axes' limits change, and sent as a PNG;
* the **moving artists** (``FigureView.animate``) are drawn with :class:`Recorder`, a matplotlib
  renderer that writes drawing operations instead of pixels: paths (already transformed to pixels,
  simplified and clipped as Agg would), markers and text, with their colours, widths, dashes,
  hatches and clip boxes. Their coordinates travel as one binary buffer of float32 triples
  ``(code, x, y)``, their styles as a short JSON list;
* ``live_figure.js`` (:data:`ESM_PATH`), an anywidget front end, shows the background as an
  ``<img class="lecture-figure">`` (carrying the figure's text alternative) and paints the operations
  on a ``<canvas>`` over it.

Where anywidget is not installed (a bare ``pip install lecture_lib``, JupyterLite), or with
``LECTURE_FIGURE=png`` (``make site`` stores still images), explorers fall back to one PNG per move.
An artist the recorder cannot express (an image, a Gouraud mesh) makes that frame fall back too:
:class:`Unsupported` is raised and the caller draws it with Agg.
"""

from __future__ import annotations

import os
import pathlib

import numpy as np
from matplotlib.backend_bases import GraphicsContextBase, RendererBase
from matplotlib.path import Path

MOVETO, LINETO, CLOSEPOLY = Path.MOVETO, Path.LINETO, Path.CLOSEPOLY
COORDINATE_LIMIT = 1e5      # px; a filled path far outside the canvas is clamped, not sent as 1e30
FONT_FAMILIES = '"DejaVu Sans", "Bitstream Vera Sans", "Helvetica Neue", Arial, sans-serif'
TEXT_EXTENTS_KEPT = 4096    # measured strings remembered (tick and stage labels recur from frame to frame)
_text_extents: dict = {}


def text_extent(agg, s: str, prop, ismath) -> tuple[float, float, float]:
    """Agg's (width, height, descent) of a string, remembered across frames. matplotlib keeps its own
    such cache per renderer, but each frame is recorded by a new :class:`Recorder`, so that cache never
    hit: measuring the same labels again was half the cost of a Gantt chart's frame."""
    key = (s, prop.copy(), ismath, agg.dpi)     # FontProperties compare by every property (hash)
    found = _text_extents.get(key)
    if found is None:
        if len(_text_extents) >= TEXT_EXTENTS_KEPT:
            _text_extents.clear()
        found = _text_extents[key] = agg.get_text_width_height_descent(s, prop, ismath)
    return found


def available() -> bool:
    """True when explorers draw their moving artists in the browser (anywidget importable and
    ``LECTURE_FIGURE`` not set to ``png``)."""
    if os.environ.get("LECTURE_FIGURE", "").strip().lower() == "png":
        return False
    try:
        import anywidget  # noqa: F401
    except ImportError:
        return False
    return True


class Unsupported(Exception):
    """An artist needs something the canvas operations do not cover; draw this frame with Agg."""


def _css(rgba, alpha: float | None = None) -> str | None:
    """A matplotlib colour (0-1 floats) as CSS ``rgba(...)``; None when fully transparent."""
    if rgba is None:
        return None
    r, g, b, *rest = (float(v) for v in rgba)
    a = rest[0] if rest else 1.0
    if alpha is not None:
        a = alpha
    if a <= 0:
        return None
    return f"rgba({round(r * 255)},{round(g * 255)},{round(b * 255)},{a:.3g})"


def _opaque(style: dict) -> bool:
    """True when a path's fill and stroke are fully opaque: then drawing it in one path with its
    neighbours of the same style paints the same pixels (overlaps are not painted twice over)."""
    return all(style[key].endswith(",1)") for key in ("s", "f") if key in style)


class Recorder(RendererBase):
    """A matplotlib renderer that records what the moving artists draw, in canvas pixels (y down).

    Text is measured by ``agg`` (the figure's own Agg renderer), so artists lay themselves out
    exactly as they would on the PNG. ``ops`` holds one dict per drawing operation; ``points``
    the float32 ``(code, x, y)`` triples they index into.
    """

    def __init__(self, agg, width: float, height: float, dpi: float):
        super().__init__()
        self.agg = agg
        self.width, self.height, self.dpi = width, height, dpi
        self.ops: list[dict] = []
        self._chunks: list[np.ndarray] = []
        self._count = 0

    # --- what matplotlib asks of a renderer ----------------------------------------------------
    def get_canvas_width_height(self):
        return self.width, self.height

    def points_to_pixels(self, points):
        return points * self.dpi / 72.0

    def get_text_width_height_descent(self, s, prop, ismath):
        return text_extent(self.agg, s, prop, ismath)

    def new_gc(self):
        return GraphicsContextBase()

    def flipy(self):
        return False

    def draw_image(self, gc, x, y, im, transform=None):
        raise Unsupported("an image")

    def draw_gouraud_triangles(self, gc, triangles_array, colors_array, transform):
        raise Unsupported("a Gouraud-shaded mesh")

    # --- operations ----------------------------------------------------------------------------
    def _add(self, codes: np.ndarray, xy: np.ndarray) -> tuple[int, int]:
        """Append vertices (display coordinates, y up) and return (offset, count) in triples."""
        xy = np.clip(np.asarray(xy, dtype=float), -COORDINATE_LIMIT, COORDINATE_LIMIT)
        block = np.empty((len(xy), 3), dtype=np.float32)
        block[:, 0] = codes
        block[:, 1] = xy[:, 0]
        block[:, 2] = self.height - xy[:, 1]
        offset = self._count
        self._chunks.append(block)
        self._count += len(block)
        return offset, len(block)

    def _style(self, gc, rgb_face) -> dict:
        style: dict = {}
        forced = gc.get_forced_alpha()
        width = self.points_to_pixels(gc.get_linewidth())
        stroke = _css(gc.get_rgb(), gc.get_alpha() if forced else None)
        if stroke and width > 0:
            style["s"], style["w"] = stroke, round(width, 3)
            offset, dashes = gc.get_dashes()
            if dashes is not None and len(dashes):
                style["d"] = [round(self.points_to_pixels(v), 3) for v in dashes]
                style["do"] = round(self.points_to_pixels(offset or 0), 3)
            style["cap"] = {"butt": "butt", "round": "round", "projecting": "square"}.get(gc.get_capstyle(), "butt")
            style["join"] = {"miter": "miter", "round": "round", "bevel": "bevel"}.get(gc.get_joinstyle(), "miter")
        if rgb_face is not None:
            fill = _css(rgb_face, gc.get_alpha() if forced else None)
            if fill:
                style["f"] = fill
        hatch = gc.get_hatch()
        if hatch:
            style["h"] = hatch
            style["hc"] = _css(gc.get_hatch_color()) or "rgba(0,0,0,1)"
            style["hw"] = round(self.points_to_pixels(gc.get_hatch_linewidth()), 3)
            style["hs"] = round(self.dpi, 3)        # the hatch unit: one inch, as Agg tiles it
        box = gc.get_clip_rectangle()
        if box is not None:
            x0, y0, x1, y1 = box.extents
            style["clip"] = [round(x0, 2), round(self.height - y1, 2), round(x1 - x0, 2), round(y1 - y0, 2)]
        clip_path, clip_transform = gc.get_clip_path()
        if clip_path is not None:
            cleaned = clip_path.cleaned(transform=clip_transform, remove_nans=True, curves=False)
            style["cp"] = self._add(cleaned.codes, cleaned.vertices)
        return style

    def draw_path(self, gc, path, transform, rgbFace=None):
        filled = rgbFace is not None or bool(gc.get_hatch())
        clip = None
        if not filled and gc.get_clip_rectangle() is not None:
            clip = gc.get_clip_rectangle().extents      # unfilled lines may be cut at the box, as Agg does
        cleaned = path.cleaned(transform=transform, remove_nans=True, clip=clip,
                               simplify=path.should_simplify and not filled, curves=False)
        codes, vertices = cleaned.codes, cleaned.vertices
        keep = codes != Path.STOP
        codes, vertices = codes[keep], vertices[keep]
        if not len(codes):
            return
        style = self._style(gc, rgbFace)
        if "s" not in style and "f" not in style and "h" not in style:
            return
        offset, count = self._add(codes, vertices)
        last = self.ops[-1] if self.ops else None
        if (last is not None and last["k"] == "p" and last["o"] + last["n"] == offset and "cp" not in style
                and _opaque(style) and "d" not in style and {k: v for k, v in last.items() if k not in ("k", "o", "n")} == style):
            last["n"] += count      # one more bar of the same colours: the same canvas path (a Gantt's boxes)
            return
        self.ops.append({"k": "p", "o": offset, "n": count, **style})

    def draw_markers(self, gc, marker_path, marker_trans, path, trans, rgbFace=None):
        marker = marker_path.cleaned(transform=marker_trans, curves=False)
        codes = marker.codes[marker.codes != Path.STOP]
        shape = marker.vertices[marker.codes != Path.STOP]
        places = trans.transform(path.vertices) if len(path.vertices) else np.empty((0, 2))
        places = places[np.isfinite(places).all(axis=1)]
        if not len(codes) or not len(places):
            return
        style = self._style(gc, rgbFace)
        if "s" not in style and "f" not in style:
            return
        # the marker's own vertices are relative to its centre: y flips about 0, not the canvas height
        m_offset, m_count = self._add(codes, np.column_stack([shape[:, 0], self.height + shape[:, 1]]))
        p_offset, p_count = self._add(np.full(len(places), MOVETO), places)
        self.ops.append({"k": "m", "o": m_offset, "n": m_count, "po": p_offset, "pn": p_count, **style})

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if not s.strip():
            return
        if ismath:
            from . import plots

            s = plots.plain_text(s)
        color = _css(gc.get_rgb(), gc.get_alpha() if gc.get_forced_alpha() else None)
        if color is None:
            return
        size = self.points_to_pixels(prop.get_size_in_points())
        weight = prop.get_weight()
        weight = 700 if weight in ("bold", "heavy", "extra bold", "black", "semibold", "demibold") or (
            isinstance(weight, (int, float)) and weight >= 600) else 400
        style = "italic " if prop.get_style() in ("italic", "oblique") else ""
        width, _, _ = text_extent(self.agg, s, prop, False)
        op = {"k": "t", "s": s, "x": round(x, 2), "y": round(self.height - y, 2), "a": round(angle, 2),
              "font": f"{style}{weight} {size:.2f}px {FONT_FAMILIES}", "c": color, "tw": round(width, 2)}
        box = gc.get_clip_rectangle()
        if box is not None:
            x0, y0, x1, y1 = box.extents
            op["clip"] = [round(x0, 2), round(self.height - y1, 2), round(x1 - x0, 2), round(y1 - y0, 2)]
        self.ops.append(op)

    # --- result --------------------------------------------------------------------------------
    def block(self) -> np.ndarray:
        """Every recorded ``(code, x, y)`` triple, one float32 row each."""
        return np.concatenate(self._chunks) if self._chunks else np.empty((0, 3), np.float32)


class _Signature:
    """What a plain line or rectangle looks like, compared by value: explorers set every curve's data
    and every bar's height on every move, which marks them stale even when they are the same (a batch
    slider moves one marker line, not the curves; a stage slider moves a highlight, not the bars)."""

    __slots__ = ("x", "y", "style")

    def __init__(self, x, y, style):
        self.x, self.y, self.style = x, y, style

    def __eq__(self, other):
        return (isinstance(other, _Signature) and self.style == other.style
                and np.array_equal(self.x, other.x) and np.array_equal(self.y, other.y))


def _signature(artist):
    """A :class:`_Signature` of a Line2D (its data and every property that changes its pixels), or
    of a Rectangle (:func:`_rectangle_signature`), or None for any other artist (those are redrawn
    whenever they are stale)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    if type(artist) is Rectangle:
        return _rectangle_signature(artist)
    if type(artist) is not Line2D:
        return None
    try:
        x = np.array(artist.get_xdata(orig=True), dtype=float, copy=True)
        y = np.array(artist.get_ydata(orig=True), dtype=float, copy=True)
    except (TypeError, ValueError):
        return None         # units or dates: always redraw
    style = _drawn_alike(artist) + (
        str(artist.get_color()), artist.get_linewidth(), str(artist.get_linestyle()), repr(artist._dash_pattern),
        str(artist.get_marker()), artist.get_markersize(), str(artist.get_markerfacecolor()),
        str(artist.get_markeredgecolor()), artist.get_markeredgewidth(), artist.get_drawstyle(),
        str(artist.get_solid_capstyle()), str(artist.get_dash_capstyle()), str(artist.get_solid_joinstyle()),
        str(artist.get_dash_joinstyle()), repr(artist.get_markevery()), id(artist.get_transform()),
        str(artist.get_fillstyle()))
    return _Signature(x, y, style)


def _drawn_alike(artist) -> tuple:
    """What any artist's pixels depend on besides its own geometry and colours."""
    return (artist.get_visible(), artist.get_alpha(), artist.get_zorder(), artist.get_clip_on(),
            id(artist.get_clip_box()), repr(artist.get_clip_path()), repr(artist.get_path_effects()),
            repr(artist.get_sketch_params()), artist.get_snap(), artist.get_antialiased())


def _rectangle_signature(artist):
    """A bar's :class:`_Signature`: its corner, size and angle (plain numbers only: units or dates
    always redraw) and every property of its fill, edge and hatch."""
    from matplotlib.artist import Artist

    try:
        box = np.array([artist.get_x(), artist.get_y(), artist.get_width(), artist.get_height(),
                        artist.get_angle()], dtype=float)
    except (TypeError, ValueError):
        return None
    style = _drawn_alike(artist) + (
        repr(artist.rotation_point), id(Artist.get_transform(artist)),
        tuple(artist.get_facecolor()), tuple(artist.get_edgecolor()), artist.get_linewidth(),
        repr(artist._dash_pattern), artist.get_fill(), artist.get_hatch(), repr(artist._hatch_color),
        repr(getattr(artist, "_hatch_linewidth", None)), str(artist.get_capstyle()),
        str(artist.get_joinstyle()))
    return _Signature(box, np.empty(0), style)


def _shifted(op: dict, by: int) -> dict:
    """An operation whose point offsets move ``by`` triples (a cached artist placed later)."""
    op = dict(op)
    for key in ("o", "po"):
        if key in op:
            op[key] += by
    if "cp" in op:
        op["cp"] = (op["cp"][0] + by, op["cp"][1])
    return op


def record(figure, artists, cache: dict | None = None) -> tuple[list[dict], bytes]:
    """Draw ``artists`` of ``figure`` with a :class:`Recorder`; returns (operations, points).
    Raises :class:`Unsupported` when one of them cannot be expressed as canvas operations.

    With a ``cache`` (a dict kept by the caller between frames of the same axes), an artist that
    has not changed since it was last recorded (matplotlib's ``stale`` flag is False: every setter
    raises it, drawing lowers it) reuses its operations instead of being drawn again. The caller
    empties the cache whenever the axes' transforms change, or after drawing the artists by other
    means (which also lowers the flag)."""
    agg = figure.canvas.get_renderer()
    width, height = figure.canvas.get_width_height(physical=True)
    ops: list[dict] = []
    chunks: list[np.ndarray] = []
    count = 0
    for artist in artists:
        if not artist.get_visible():
            continue
        kept = cache.get(id(artist)) if cache is not None else None
        fresh = kept is None or kept[0] is not artist
        if fresh or artist.stale:       # an artist that is not stale is not even looked at
            signature = _signature(artist) if cache is not None else None
            fresh = fresh or signature is None or signature != kept[3]
        if fresh:
            recorder = Recorder(agg, width, height, figure.dpi)
            artist.draw(recorder)
            kept = (artist, recorder.ops, recorder.block(), signature)
            if cache is not None:
                cache[id(artist)] = kept
        _, artist_ops, block, _ = kept
        ops.extend(_shifted(op, count) for op in artist_ops)
        chunks.append(block)
        count += len(block)
    points = np.concatenate(chunks).astype("<f4").tobytes() if count else b""
    return ops, points


# The page script, an ES module that anywidget loads from its file (package data beside this module; linted by
# `make lint`). The path is resolved through links: an editable install's link tree holds the modules it was
# installed with, so a script added since is found where it really is.
ESM_PATH = pathlib.Path(__file__).resolve().with_name("live_figure.js")


def widget_class():
    """The anywidget class (built on first use, so importing this module never needs anywidget)."""
    global _WIDGET_CLASS
    if _WIDGET_CLASS is None:
        import anywidget
        import traitlets

        class LiveFigureWidget(anywidget.AnyWidget):
            """The figure of one explorer: ``background`` PNG bytes, ``frame`` operations and
            ``points`` (float32 triples) for the moving artists, ``alt`` its text alternative."""

            _esm = ESM_PATH
            background = traitlets.Bytes(b"").tag(sync=True)
            points = traitlets.Bytes(b"").tag(sync=True)
            frame = traitlets.Dict().tag(sync=True)
            alt = traitlets.Unicode("").tag(sync=True)
            pixels = traitlets.List([1, 1]).tag(sync=True)      # the canvas's pixel size
            css_size = traitlets.List([1, 1]).tag(sync=True)    # its size on the page, px

        _WIDGET_CLASS = LiveFigureWidget
    return _WIDGET_CLASS


_WIDGET_CLASS = None
