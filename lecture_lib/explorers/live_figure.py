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
* :data:`ESM`, an anywidget front end, shows the background as an ``<img class="lecture-figure">``
  (carrying the figure's text alternative) and paints the operations on a ``<canvas>`` over it.

Where anywidget is not installed (a bare ``pip install lecture_lib``, JupyterLite), or with
``LECTURE_FIGURE=png`` (``make site`` stores still images), explorers fall back to one PNG per move.
An artist the recorder cannot express (an image, a Gouraud mesh) makes that frame fall back too:
:class:`Unsupported` is raised and the caller draws it with Agg.
"""

from __future__ import annotations

import os

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


ESM = r"""
// The live figure: the still background as an <img class="lecture-figure"> (its alt text is the
// figure's description) and the moving artists painted on a canvas over it from recorded operations.
const MOVETO = 1, LINETO = 2, CLOSEPOLY = 79;

function buildPath(view, offset, count, dx = 0, dy = 0) {
  const path = new Path2D();
  for (let i = offset; i < offset + count; i++) {
    const code = view.getFloat32(12 * i, true);
    const x = view.getFloat32(12 * i + 4, true) + dx, y = view.getFloat32(12 * i + 8, true) + dy;
    if (code === MOVETO) path.moveTo(x, y);
    else if (code === CLOSEPOLY) path.closePath();
    else path.lineTo(x, y);
  }
  return path;
}

const hatchTiles = new Map();
function hatchPattern(ctx, op, figureHeight) {
  // Agg tiles a hatch over one inch (op.hs px) with 6 lines per repeated character, as matplotlib does.
  const key = [op.h, op.hc, op.hw, op.hs].join('|');
  if (!hatchTiles.has(key)) {
    const size = Math.max(4, Math.round(op.hs));
    const tile = document.createElement('canvas');
    tile.width = tile.height = size;
    const t = tile.getContext('2d');
    t.strokeStyle = t.fillStyle = op.hc;
    t.lineWidth = op.hw || 1;
    const count = (ch) => op.h.split('').filter((c) => c === ch).length;
    const lines = (n, draw) => { for (let k = -n; k <= 2 * n; k++) draw(k * size / n); };
    const n = (ch) => Math.max(1, 6 * count(ch));
    t.beginPath();
    if (count('/') || count('x') || count('X')) lines(n('/') + 6 * (count('x') + count('X')), (o) => { t.moveTo(o, size); t.lineTo(o + size, 0); });
    if (count('\\') || count('x') || count('X')) lines(n('\\') + 6 * (count('x') + count('X')), (o) => { t.moveTo(o, 0); t.lineTo(o + size, size); });
    if (count('|') || count('+')) lines(n('|') + 6 * count('+'), (o) => { t.moveTo(o, 0); t.lineTo(o, size); });
    if (count('-') || count('+')) lines(n('-') + 6 * count('+'), (o) => { t.moveTo(0, o); t.lineTo(size, o); });
    t.stroke();
    const dots = count('.') + count('o') + count('O');
    if (dots) { const k = 3 * dots, r = Math.max(0.8, size / k / 6);
      for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) { t.beginPath(); t.arc((i + 0.5) * size / k, (j + 0.5) * size / k, r, 0, 2 * Math.PI); t.fill(); } }
    hatchTiles.set(key, tile);
  }
  const pattern = ctx.createPattern(hatchTiles.get(key), 'repeat');
  // Agg starts its tiles at the figure's bottom-left corner; the canvas at its top-left
  const size = hatchTiles.get(key).height;
  pattern.setTransform(new DOMMatrix().translate(0, figureHeight % size));
  return pattern;
}

function paint(ctx, op, path, figureHeight) {
  if (op.f) { ctx.fillStyle = op.f; ctx.fill(path); }
  if (op.h) { ctx.fillStyle = hatchPattern(ctx, op, figureHeight); ctx.fill(path); }
  if (op.s) {
    ctx.strokeStyle = op.s; ctx.lineWidth = op.w; ctx.lineCap = op.cap || 'butt'; ctx.lineJoin = op.join || 'miter';
    ctx.setLineDash(op.d || []); ctx.lineDashOffset = op.do || 0;
    ctx.stroke(path);
  }
}

function draw(ctx, canvas, frame, view, scale, figureHeight, backdrop = null) {
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  // operations are in the figure's pixels; the canvas has the screen's (sharp curves on a high-DPI
  // screen even where the background PNG is drawn at 1x)
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  // a frame predicted with new axes brings its own background: drawn under its artists, over the <img>
  if (backdrop) ctx.drawImage(backdrop, 0, 0, backdrop.width, backdrop.height);
  for (const op of frame.ops || []) {
    ctx.save();
    if (op.clip) { ctx.beginPath(); ctx.rect(op.clip[0], op.clip[1], op.clip[2], op.clip[3]); ctx.clip(); }
    if (op.cp) ctx.clip(buildPath(view, op.cp[0], op.cp[1]));
    if (op.k === 'p') paint(ctx, op, buildPath(view, op.o, op.n), figureHeight);
    else if (op.k === 'm') {
      for (let i = op.po; i < op.po + op.pn; i++) {
        const x = view.getFloat32(12 * i + 4, true), y = view.getFloat32(12 * i + 8, true);
        paint(ctx, op, buildPath(view, op.o, op.n, x, y), figureHeight);
      }
    } else if (op.k === 't') {
      ctx.font = op.font; ctx.fillStyle = op.c; ctx.textBaseline = 'alphabetic';
      ctx.translate(op.x, op.y); ctx.rotate(-op.a * Math.PI / 180);
      const measured = ctx.measureText(op.s).width;
      // matplotlib placed the text for its own font's width: keep the browser's font inside it
      if (measured > op.tw && op.tw > 0) ctx.scale(op.tw / measured, 1);
      ctx.fillText(op.s, 0, 0);
    }
    ctx.restore();
  }
}

function render({ model, el }) {
  const box = document.createElement('div');
  box.className = 'lecture-live-figure';
  box.style.position = 'relative';
  box.style.lineHeight = '0';
  const img = document.createElement('img');
  img.className = 'lecture-figure';
  const canvas = document.createElement('canvas');
  canvas.setAttribute('aria-hidden', 'true');
  canvas.style.position = 'absolute';
  canvas.style.left = '0';
  canvas.style.top = '0';
  canvas.style.pointerEvents = 'none';
  box.append(img, canvas);
  el.append(box);
  const ctx = canvas.getContext('2d');
  const unhook = [];
  let url = null, waiting = false, frames = 0, predictedFrames = 0;
  // The canvas paints each frame over its own background (decoded from the PNG), so a picture changes in one
  // step: a background that arrives for a frame already superseded never shows under a newer frame's curves.
  // A kernel frame and its new background come in one message, but their change events fire in the order the
  // kernel listed them (a Python set's, which varies from kernel to kernel): a frame whose background came with
  // it waits for setBackground, which paints it once that background is decoded.
  let backdrop = null, backdropData = null, backgrounds = 0, takenBackground = null;

  let scale = 1, height = 1;
  const size = () => {
    const [w, h] = model.get('pixels'), [cw, ch] = model.get('css_size');
    const dpr = Math.min(3, Math.max(1, window.devicePixelRatio || 1));
    canvas.width = Math.round(cw * dpr); canvas.height = Math.round(ch * dpr);
    scale = canvas.width / w; height = h;
    for (const node of [img, canvas]) { node.style.width = cw + 'px'; node.style.height = ch + 'px'; }
    box.style.width = cw + 'px'; box.style.height = ch + 'px';
  };
  const dataView = (buffer) => buffer instanceof DataView ? buffer
    : new DataView(buffer.buffer || buffer, buffer.byteOffset || 0, buffer.byteLength);

  // Every frame carries the controls' positions it was computed for (lecture_lib.explorers.ahead.key): the
  // page paints it only while the controls are still there, so a kernel frame that arrives after the
  // learner moved on (a drag, a held key) is dropped, never painted over a newer picture.
  const models = new Map();          // control model id -> its model (null while it is fetched)
  // a position as lecture_lib.explorers.ahead.key writes it: a number as JavaScript prints it (12 digits), or
  // for a control moved by index the label there
  const position = (m, attr) => attr === 'index' ? (m.get('_options_labels') || [])[m.get('index')]
    : (typeof m.get(attr) === 'number' ? String(parseFloat(m.get(attr).toPrecision(12))) : String(m.get(attr)));
  const matches = (state) => Object.entries(state.positions).every(([id, key]) => {
    const m = models.get(id);
    return !m || position(m, state.attrs[id]) === key;
  });
  let shownState = null;      // the positions the picture on screen was computed for
  box.__lectureFresh = () => !shownState || matches(shownState);     // read by tests/browser_support.py

  const paint = (frame, view, predicted, state, backdrop = null) => {
    const dpr = Math.min(3, Math.max(1, window.devicePixelRatio || 1));
    if (canvas.width !== Math.round(model.get('css_size')[0] * dpr)) size();     // zoomed or moved screens
    const started = performance.now();
    draw(ctx, canvas, frame, view, scale, height, backdrop);
    box.dataset.paintMs = (performance.now() - started).toFixed(2);      // read by tools/bench_browser.py
    box.dataset.frame = String(++frames);
    if (predicted) box.dataset.ahead = String(++predictedFrames);
    shownState = state;
    // stale: painted for controls that have moved on since (tests/test_browser.py counts these: never);
    // behind: a kernel frame painted while the model holds a newer background than the one under it
    const stale = state ? !matches(state) : false;
    const held = model.get('background');
    const behind = !predicted && Boolean(held && held.byteLength) && held !== backdropData;
    box.dispatchEvent(new CustomEvent('lecture-frame', { bubbles: true,
      detail: { ahead: predicted, stale, behind, state: state ? state.positions : null } }));
  };

  // Frames computed ahead in the kernel (lecture_lib.explorers.ahead): when a control lands on a position
  // predicted with every other control where it still is, its frame and readout are shown at once.
  // The kernel sends each readout right after its frame, so the frame decides what becomes of it (readoutMode):
  // 'accept' it (the frame was painted), 'hold' it until its frame is painted (the frame waits for its
  // background: pendingReadout), or 'drop' it (the frame was superseded, or a predicted frame was painted since).
  let ahead = null, readoutModel = null, shownReadout = null, readoutMode = 'accept', pendingReadout = null;
  const shelf = [], SHELF = 12;         // frames of earlier bases, by control: see learn()
  const jump = (id, control, attr) => {
    if (!ahead || !ahead.frames[id]) return;
    for (const [other, otherAttr] of Object.entries(ahead.attrs)) {     // every other control where it still is
      if (other === id) continue;
      const m = models.get(other);
      if (!m || position(m, otherAttr) !== ahead.base[other]) return;
    }
    const here = position(control, attr);
    const entry = here === ahead.base[id] ? ahead.current : ahead.frames[id][here];
    const under = entry && (entry.backdrop || (entry.background === undefined ? ahead.backdrop : null));
    if (!under) return;                  // its background is still being decoded: the kernel's frame will do
    img.alt = img.title = entry.alt;
    paint(entry, entry.view, true, { positions: { ...ahead.base, [id]: here }, attrs: ahead.attrs }, under);
    readoutMode = 'drop';             // until the kernel's own frame for this position arrives
    pendingReadout = null;
    shownReadout = entry.readout;
    if (readoutModel) readoutModel.set('value', entry.readout);
  };
  const watch = async (id, attr) => {
    if (models.has(id)) return;
    models.set(id, null);
    const control = await model.widget_manager.get_model(id);
    models.set(id, control);
    const listener = () => jump(id, control, attr);
    control.on('change:' + attr, listener);
    unhook.push(() => control.off('change:' + attr, listener));
  };

  const frameState = (frame) => frame && frame.state ? { positions: frame.state, attrs: frame.attrs } : null;
  const paintFrame = () => {
    const frame = model.get('frame'), state = frameState(frame);
    if (state) for (const id of Object.keys(state.positions)) watch(id, state.attrs[id]);
    if (state && !matches(state)) {              // superseded: keep the newer picture, and its readout
      readoutMode = 'drop'; pendingReadout = null; return;
    }
    readoutMode = 'accept';
    if (pendingReadout !== null && readoutModel) {
      shownReadout = pendingReadout;
      pendingReadout = null;
      readoutModel.set('value', shownReadout);
    }
    paint(frame, dataView(model.get('points')), false, state, backdrop);
  };

  const decode = (buffer) => {
    const bytes = ArrayBuffer.isView(buffer) ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) : buffer;
    return createImageBitmap(new Blob([bytes], { type: 'image/png' })).catch(() => null);
  };
  const sameBytes = (a, b) => {
    if (a === b) return true;
    if (!a || !b || a.byteLength !== b.byteLength) return false;
    const x = new Uint8Array(a.buffer || a, a.byteOffset || 0, a.byteLength);
    const y = new Uint8Array(b.buffer || b, b.byteOffset || 0, b.byteLength);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  };
  const learn = async (table, buffers) => {
    const entries = [table.current, ...Object.values(table.frames).flatMap((frames) => Object.values(frames))];
    for (const entry of entries) entry.view = dataView(buffers[entry.buffer]);
    if (ahead && JSON.stringify(ahead.base) === JSON.stringify(table.base)) {
      for (const [id, frames] of Object.entries(table.frames)) ahead.frames[id] = { ...ahead.frames[id], ...frames };
    } else {
      const old = ahead;
      ahead = table;      // the kernel sent it after its frame for the base: the model holds the base's background
      ahead.backgroundData = model.get('background');
      if (ahead.backgroundData === backdropData) ahead.backdrop = backdrop;
      // A control's frames assume only the other controls where they are (and the axes): while it moves
      // itself (a drag, a held key) they stay good, with the old base's frame as one more of its positions
      // (the kernel sends them once). They are shelved, and taken down again whenever the other controls
      // come back to those positions over the same background, pixel for pixel (the same axes: a slider
      // tried, then another, then the first again: its whole track is still there).
      if (old && old.backdrop) {
        for (const [id, frames] of Object.entries(old.frames)) {
          const kept = {};
          for (const [at, entry] of Object.entries({ ...frames, [old.base[id]]: old.current })) {
            if (entry.background === undefined && !entry.backdrop) entry.backdrop = old.backdrop;
            kept[at] = entry;
          }
          const others = JSON.stringify(Object.entries(old.base).filter(([other]) => other !== id).sort());
          const same = shelf.findIndex((item) => item.id === id && item.others === others && sameBytes(item.data, old.backgroundData));
          const earlier = same >= 0 ? shelf.splice(same, 1)[0].frames : {};
          shelf.push({ id, others, data: old.backgroundData, frames: { ...earlier, ...kept } });
        }
        shelf.splice(0, Math.max(0, shelf.length - SHELF));
      }
      for (const item of shelf) {
        if (!sameBytes(item.data, ahead.backgroundData)) continue;
        const others = JSON.stringify(Object.entries(table.base).filter(([other]) => other !== item.id).sort());
        if (others === item.others) ahead.frames[item.id] = { ...item.frames, ...(table.frames[item.id] || {}) };
      }
    }
    for (const [id, attr] of Object.entries(table.attrs)) watch(id, attr);
    const decoded = new Map();          // a predicted background, decoded (once) before it is needed
    for (const entry of entries) {
      if (entry.background === undefined) continue;
      if (!decoded.has(entry.background)) decoded.set(entry.background, decode(buffers[entry.background]));
      decoded.get(entry.background).then((bitmap) => { entry.backdrop = bitmap; });
    }
    if (!readoutModel && table.readout) {
      readoutModel = await model.widget_manager.get_model(table.readout);
      shownReadout = readoutModel.get('value');
      // the kernel's readout follows its frame: taken when that frame was painted, kept for it while it waits
      // for its background, put back (the table on screen stays) when it was dropped
      let restoring = false;
      const guard = () => {
        if (restoring) return;
        const value = readoutModel.get('value');
        if (readoutMode === 'accept') { shownReadout = value; return; }
        if (readoutMode === 'hold') pendingReadout = value;
        if (shownReadout !== null && value !== shownReadout) {
          restoring = true;
          try { readoutModel.set('value', shownReadout); } finally { restoring = false; }
        }
      };
      readoutModel.on('change:value', guard);
      unhook.push(() => readoutModel.off('change:value', guard));
    }
  };
  model.on('msg:custom', (msg, buffers) => { if (msg && msg.ahead) learn(msg.ahead, buffers || []); });

  // The control in the learner's hand (focused, or under the pointer): the kernel predicts its whole track.
  let inHand = null;
  const hold = (event) => {
    const target = event.target && event.target.closest && event.target.closest('[class*="lecture-control-"]');
    if (!target) return;
    const name = [...target.classList].find((c) => c.startsWith('lecture-control-'));
    const id = name && name.slice('lecture-control-'.length);
    if (!id || !models.has(id) || id === inHand) return;
    inHand = id;
    model.send({ ahead: 'hold', control: id });
  };
  for (const type of ['focusin', 'pointerdown', 'pointerover']) {
    document.addEventListener(type, hold, true);
    unhook.push(() => document.removeEventListener(type, hold, true));
  }

  const setBackground = () => {
    const data = takenBackground = model.get('background');
    if (!data || !data.byteLength) return;
    const blob = new Blob([data.buffer ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data], { type: 'image/png' });
    const next = URL.createObjectURL(blob), token = ++backgrounds;
    waiting = true;       // the kernel's frames wait for their background
    decode(data).then((bitmap) => {
      if (token !== backgrounds) { URL.revokeObjectURL(next); return; }      // a newer one came meanwhile
      backdrop = bitmap; backdropData = data;
      if (ahead && ahead.backgroundData === data) ahead.backdrop = bitmap;
      // the <img> under the canvas: the figure's alt text and title, and its picture before the first frame
      img.onload = () => { if (url && url !== next) URL.revokeObjectURL(url); url = next; };
      img.src = next;
      waiting = false;
      paintFrame();
    });
  };
  // the text alternative comes with its frame: a superseded frame's would describe a picture never shown
  const describe = () => {
    const state = frameState(model.get('frame'));
    if (state && !matches(state)) return;
    const text = model.get('alt'); img.alt = text; img.title = text;
  };

  size(); describe(); setBackground();
  model.on('change:pixels', size);
  model.on('change:css_size', size);
  model.on('change:alt', describe);
  model.on('change:background', setBackground);
  model.on('change:frame', () => {
    if (!waiting && model.get('background') === takenBackground) paintFrame();
    else { readoutMode = 'hold'; pendingReadout = null; }       // setBackground paints it once decoded
  });
  model.send({ ahead: 'please' });
  return () => { if (url) URL.revokeObjectURL(url); for (const off of unhook) off(); };
}
export default { render };
"""


def widget_class():
    """The anywidget class (built on first use, so importing this module never needs anywidget)."""
    global _WIDGET_CLASS
    if _WIDGET_CLASS is None:
        import anywidget
        import traitlets

        class LiveFigureWidget(anywidget.AnyWidget):
            """The figure of one explorer: ``background`` PNG bytes, ``frame`` operations and
            ``points`` (float32 triples) for the moving artists, ``alt`` its text alternative."""

            _esm = traitlets.Unicode(ESM).tag(sync=True)
            background = traitlets.Bytes(b"").tag(sync=True)
            points = traitlets.Bytes(b"").tag(sync=True)
            frame = traitlets.Dict().tag(sync=True)
            alt = traitlets.Unicode("").tag(sync=True)
            pixels = traitlets.List([1, 1]).tag(sync=True)      # the canvas's pixel size
            css_size = traitlets.List([1, 1]).tag(sync=True)    # its size on the page, px

        _WIDGET_CLASS = LiveFigureWidget
    return _WIDGET_CLASS


_WIDGET_CLASS = None
