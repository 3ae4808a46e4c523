"""Frames computed ahead: the figure and readout one slider step either way, sent before they are needed.

Why (issue 19 §9): a slider move that waits for the kernel can never beat the kernel's own round
trip, which on the course's 2-core machine is most of a frame budget before any drawing. So while
the kernel is otherwise idle, each explorer computes what the learner would see one step to the
left and one step to the right of every slider (the slider moved last first), and sends those
frames to the page. When the learner presses an arrow key, the page paints the frame it already
holds at once; the kernel's own frame, identical, follows and is painted over it.

A prediction is only painted where it is exact:

* it was computed with the other controls at the values they still have in the page (``base``);
  the frame at ``base`` itself is sent too (a slider moved and moved back);
* it is painted over the background it was computed with: the page's own, or the PNG it brings when
  its axes change (``base.steady_ceiling`` keeps them put while the data fit);
* the explorer computes it with the same ``update(values)`` as a real move, and the kernel's state
  (limits, artists) is put back afterwards. ``tests/test_ahead.py`` checks every prediction of every
  explorer against the frame a real move then produces.

The control in the learner's hand (the page says so when a control gains focus or the pointer) is
predicted along its whole track, nearest positions first, up to :data:`HAND_REACH` steps either way,
and sent in batches of :data:`BATCH` frames; a real move voids the round (the kernel handles it
first: at most one prediction is under way when it arrives). Its positions may change the axes: such
a frame brings its background PNG. A round draws at most :data:`MAX_BACKGROUNDS` of them, nearest
positions first; every position further along whose axes have the same limits shares one (a drag
across a rescale of the axes stays ahead of the kernel). A dropdown's options are predicted the same
way, unless another control follows it (an observer of its own).

A quick flick (issue 48) must never wait long behind a prediction, so a round gives way: before each step it lets
every message already waiting for the kernel be handled first (a real move voids it then), and within
:data:`GESTURE_SECONDS` of a real move (a drag or a held key under way, whose next move is due any moment) it
predicts only the control moved last and draws no background (a full redraw and a PNG, 40-600 ms on the course's
2-core machine under load, that the next move would wait for and void). The round it plans once the hand has been
still that long draws them.

Only the live figure (``lecture_lib.explorers.live_figure``) takes predictions; ``LECTURE_AHEAD=0`` turns
them off (``tools/bench_browser.py`` measures both ways).
"""

from __future__ import annotations

import os
import time

import ipywidgets as widgets
import traitlets

from .sliders import LogSlider

DELAY_SECONDS = 0.05        # after a redraw, before predicting: the page paints the real frame, a drag sends its next move
REACH = 2                   # steps either way predicted for the slider moved last
HAND_REACH = 60             # ... for the control in the learner's hand: every course slider's whole track
MAX_BACKGROUNDS = 6         # backgrounds drawn per round for the control in hand (new axes), nearest positions first
BATCH = 6                   # frames per message: the page gets the nearest ones first
# A move that arrives while a prediction is computed waits for it (Python runs one thing at a time), so
# the dearer kinds are only predicted where they are cheap, as measured (CPU seconds of the kernel's thread):
TRACK_BUDGET = 0.03         # s per prediction, at most, for predicting the whole track of the control in hand
BACKGROUND_BUDGET = 0.08    # s for a full redraw (axes, text, PNG), at most, for predicting new axes
MAX_REACH = 1000            # no slider has more stops than this; a larger reach predicts nothing more
GESTURE_SECONDS = 0.25      # a real move this recent: a gesture under way (flick moves come 35 ms apart, keys 150 ms)
YIELD_SECONDS = 0.002       # a round that gave way to waiting messages looks again this much later


def enabled() -> bool:
    return os.environ.get("LECTURE_AHEAD", "1") != "0"


def js_number(value: float) -> str | None:
    """``value`` as the page writes a number (JavaScript's ``String(x)``), or None where the two
    languages disagree (exponent notation): such a position is simply not predicted."""
    import math

    value = float(value)
    if not math.isfinite(value):
        return None
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    return None if "e" in text else text


def _rounded(value: float) -> float:
    """A float slider's position as the page keys it: 12 significant digits (the page's sums of
    steps carry rounding noise such as 0.30000000000000004)."""
    return float(f"{float(value):.12g}")


def attribute(control) -> str | None:
    """The state the page changes when this control moves, or None for a control not tracked."""
    if isinstance(control, (LogSlider, widgets.Dropdown)):
        return "index"
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
        return "value"
    return None


def _label(control, index) -> str | None:
    labels = control._options_labels
    return labels[index] if index is not None and 0 <= index < len(labels) else None


def key(control) -> str | None:
    """The control's current position as the page's key: a number as the page writes it, or for a
    control moved by index (a log slider, a dropdown) the label at that index (an index alone would
    mean another value once a typed value adds a stop)."""
    if isinstance(control, (LogSlider, widgets.Dropdown)):
        return _label(control, control.index)
    if isinstance(control, widgets.IntSlider):
        return str(int(control.value))
    if isinstance(control, widgets.FloatSlider):
        return js_number(_rounded(control.value))
    return None


def neighbours(control, reach: int = 1) -> list[tuple[str, float]]:
    """Up to ``reach`` arrow-key steps either way, nearest first: ``(the page's key, the control's
    value there)``; for a dropdown its options around the chosen one. ``reach`` is capped at
    :data:`MAX_REACH` steps."""
    if isinstance(reach, bool) or not isinstance(reach, int) or reach < 0:
        raise ValueError(f"reach must be a whole number of steps >= 0, got {reach!r}")
    reach = min(reach, MAX_REACH)
    steps = [k for distance in range(1, reach + 1) for k in (-distance, distance)]
    if isinstance(control, widgets.Dropdown):
        i, values = control.index, control._options_values
        if i is None:
            return []
        return [(_label(control, i + k), values[i + k]) for k in steps if 0 <= i + k < len(values)]
    if isinstance(control, LogSlider):
        i = control.index
        return [(_label(control, i + k), control.stops[i + k]) for k in steps if 0 <= i + k < len(control.stops)]
    if isinstance(control, widgets.IntSlider):
        values = (control.value + k * control.step for k in steps)
        return [(str(v), v) for v in values if control.min <= v <= control.max]
    if isinstance(control, widgets.FloatSlider):
        found, current = [], _rounded(control.value)
        for k in steps:
            v = _rounded(min(max(control.value + k * control.step, control.min), control.max))
            text = js_number(v)
            if text is not None and v != current and all(v != seen for _, seen in found):
                found.append((text, v))
        return found
    return []


def followed(control, explorer) -> bool:
    """True when moving ``control`` makes the explorer move another one (an observer of its value
    besides the explorer's own and the control's class): such a prediction would miss the link."""
    handlers = control._trait_notifiers.get("value", {}).get("change", [])
    return any(not isinstance(h, traitlets.ObserveHandler) and h != explorer._on_change for h in handlers)


class Lookahead:
    """Computes an explorer's predicted frames in idle moments, one position per event-loop turn
    (a real move arriving meanwhile is handled first, and makes the pending predictions void).

    One round at a time: a real move (:meth:`schedule`, after its redraw) voids the round under way and starts
    the next; a page message (:meth:`request`) never does. It starts a round only when none is pending or under
    way, and otherwise leaves a note: "hold" (the hand on another control) puts that control's track first from
    the round's next step; "please" (a new view holds no frames) sends every frame again, from those kept here
    (not computed again), in a round that starts once the requests have stopped for :data:`DELAY_SECONDS`. So
    whatever a page sends, and however often, a position is computed at most once for the positions of the other
    controls and the axes it assumes (twice where its new axes first had no background to spare)."""

    def __init__(self, explorer):
        self.explorer = explorer
        self.generation = 0
        self._timer = None
        self.last_moved: str | None = None
        self.in_hand: str | None = None          # the control the page says has focus or the pointer
        # control -> (the other controls' positions, {keys}): frames the page holds. A control's frames assume
        # only the others where they are, so they stay good while it moves itself (the page keeps them too)
        self._sent: dict = {}
        # control -> (the other controls' positions, {key: (frame or None, whether it could draw a background)}):
        # the frames computed for them, kept to send again to a view that asks for them all, and the positions that
        # needed a background the round could not draw (tried again only where one can be drawn)
        self._kept: dict = {}
        self._loop = None                       # the event loop of the round pending or under way
        self._round: int | None = None          # the generation of the round under way (its steps are queued)
        self._asked = False                     # a view asked for every frame since the round planned
        self._hand_moved = False                # ... or the hand moved to another control
        self.cost = 0.0                         # s per prediction, a running mean (the first one is tried)
        self.moved_at = float("-inf")           # time.monotonic() of the last real move's redraw (schedule)

    def in_gesture(self) -> bool:
        """Whether a real move came less than :data:`GESTURE_SECONDS` ago: the hand is still moving."""
        return time.monotonic() - self.moved_at < GESTURE_SECONDS

    def plan(self, gesture: bool = False) -> list[tuple[str, str, float, bool]]:
        """(control name, key, value, may bring a background) for every prediction: the control in
        hand along its track (:data:`HAND_REACH`), the slider moved last :data:`REACH` steps either way
        (a key held down, or pressed back and forth), the others one; nearest first. With ``gesture`` (a
        drag or a held key under way) only the control moved last, and without new backgrounds."""
        controls = self.explorer.controls
        names = sorted(controls, key=lambda name: (name != self.in_hand, name != self.last_moved))
        found = []
        for name in names:
            control = controls[name]
            if isinstance(control, widgets.Dropdown) and followed(control, self.explorer):
                continue
            if gesture and name != self.last_moved:
                continue
            held = name == self.in_hand
            reach = (HAND_REACH if self.cost <= TRACK_BUDGET else REACH) if held else REACH if name == self.last_moved else 1
            drawn = held and not gesture and self.background_cost() <= BACKGROUND_BUDGET
            # a position where a link would move another control too is the kernel's (Explorer.moves_others)
            found += [(name, k, v, drawn) for k, v in neighbours(control, reach)
                      if not self.explorer.moves_others(name, v)]
        return found

    def background_cost(self) -> float:
        """Seconds the explorer's last full redraw took (what a prediction with new axes costs)."""
        return getattr(self.explorer.view, "full_render_seconds", float("inf"))

    def state(self) -> tuple[dict, dict] | None:
        """(base, attributes): every control's position and the state the page changes, or None
        when a control cannot be keyed (then nothing is predicted)."""
        base, attributes = {}, {}
        for control in self.explorer.controls.values():
            attr, position = attribute(control), key(control)
            if attr is None or position is None:
                return None
            base[control.model_id], attributes[control.model_id] = position, attr
        return base, attributes

    def request(self, content, loop) -> None:
        """A page message: ``{"ahead": "please"}`` from a view just drawn (it holds no frames yet), or
        ``{"ahead": "hold", "control": model id}`` when a control gains focus or the pointer (then its
        whole track is predicted). Anything else is ignored. Never voids or restarts a round: see the class."""
        if not isinstance(content, dict):
            return
        if content.get("ahead") == "please":
            self._asked = True
            if self._timer is not None and loop is self._loop:      # a burst of requests: one round, once it ends
                self._timer.cancel()
                self._timer = None
        elif content.get("ahead") == "hold":
            name = next((n for n, c in self.explorer.controls.items() if c.model_id == content.get("control")), None)
            if name is None or name == self.in_hand:
                return
            self.in_hand = name
            self._hand_moved = True
        else:
            return
        if not self._busy(loop):
            self._start_later(loop)

    def schedule(self, loop) -> None:
        """After a redraw (a real move): void every pending prediction and start a new round after
        :data:`DELAY_SECONDS`. Moves coalesce: one timer at a time."""
        self.generation += 1
        self.moved_at = time.monotonic()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._start_later(loop)

    def _busy(self, loop) -> bool:
        """Whether a round of the current generation is pending (its timer) or under way on ``loop``."""
        return loop is not None and loop is self._loop and (self._timer is not None or self._round == self.generation)

    def _start_later(self, loop) -> None:
        if loop is None or not enabled() or not self.explorer.view.live:
            return
        self._loop = loop
        self._timer = loop.call_later(DELAY_SECONDS, self._start, loop, self.generation)

    def _start(self, loop, generation: int) -> None:
        self._timer = None
        if generation != self.generation:
            return
        self._round = generation
        self._step(loop, generation, None)

    def _step(self, loop, generation: int, work) -> None:
        if generation != self.generation:       # a real move: its redraw starts the next round
            return
        if shell_messages_waiting():            # a move (or anything else) waits for the kernel: it goes first
            loop.call_later(YIELD_SECONDS, self._step, loop, generation, work)
            return
        work = None if self.explorer._scheduled else self._advance(work)    # a redraw is due: it starts the next
        if work is None:
            self._round = None
        else:
            loop.call_soon(self._step, loop, generation, work)

    def _advance(self, work):
        """One prediction of the round (after planning it again if a page asked since); the work left, or None."""
        if work is None or self._hand_moved:
            if work is not None:
                self._flush(work)           # computed for this generation: the page takes them as they are
            work = self._planned(work)
            if work is None:
                return None
        if not work["plan"]:
            return self._ended(work)
        name, position, value, background = work["plan"].pop(0)
        kept = self._kept[name][1]
        drawn = background and len(work["backgrounds"]) < MAX_BACKGROUNDS
        frame, could_draw = kept.get(position, (None, None))
        if could_draw is None or (frame is None and drawn and not could_draw):
            started = time.thread_time()         # CPU seconds, as the redraws are timed (base.FigureView.render)
            try:
                frame = self.explorer.predict(name, value, backgrounds=work["backgrounds"], background=drawn)
            except Exception:   # a prediction only saves time: the real move still works
                frame = None
            if not (frame is not None and len(frame) == 5):     # a new background costs a full redraw: not counted
                spent = time.thread_time() - started
                self.cost = 0.7 * self.cost + 0.3 * spent if self.cost else spent
            kept[position] = (frame, drawn)
        if frame is not None:
            work["entries"].append((name, position, frame))
        if work["entries"] and (not work["plan"] or work["plan"][0][0] != name or len(work["entries"]) >= BATCH):
            self._flush(work)
        return work if work["plan"] else self._ended(work)

    def _ended(self, work) -> None:
        """The round's plan is done: a view that asked meanwhile gets every frame in a round of its own, once the
        requests have stopped (:data:`DELAY_SECONDS` without one)."""
        self._flush(work)
        if self._asked:
            self._start_later(self._loop)
        elif work.get("gesture") and self._timer is None and self._loop is not None:
            # planned while the hand moved: once it has been still for GESTURE_SECONDS, the whole plan
            quiet = max(0.0, self.moved_at + GESTURE_SECONDS - time.monotonic())
            self._timer = self._loop.call_later(quiet, self._start, self._loop, self.generation)
        return None

    def _planned(self, work):
        """The round's positions still due, nearest first (at a round's start, a view that asked gets every one
        again); None when a control cannot be keyed. A round planned again (the hand moved) keeps the backgrounds
        it drew, so it draws at most MAX_BACKGROUNDS."""
        asked = self._asked and work is None        # at a round's start only (see _ended)
        self._asked, self._hand_moved = self._asked and not asked, False
        state = self.state()
        if state is None:
            return None
        names = {control.model_id: name for name, control in self.explorer.controls.items()}
        # a prediction also depends on the axes it starts from (limits that stay put while the data fit)
        axes = tuple((a.get_xlim(), a.get_ylim()) for a in self.explorer.view.figure.axes)
        for model_id, name in names.items():
            others = (axes, tuple(sorted((k, v) for k, v in state[0].items() if k != model_id)))
            if self._sent.get(name, (None,))[0] != others or asked:
                self._sent[name] = (others, set())
            if self._kept.get(name, (None,))[0] != others:
                self._kept[name] = (others, {})
        gesture = self.in_gesture()
        return {"plan": [p for p in self.plan(gesture) if p[1] not in self._sent[p[0]][1]], "state": state,
                "entries": [], "gesture": gesture,
                "backgrounds": work["backgrounds"] if work is not None else {}}   # with the same axes: one shared

    def _flush(self, work) -> None:
        """Send the round's frames not sent yet, and note that the page holds them."""
        if not work["entries"]:
            return
        self._send(work["state"], work["entries"])
        base = work["state"][0]
        for name_sent, key_sent, _ in work["entries"]:      # the base's own frame travels with them
            self._sent[name_sent][1].update((key_sent, base[self.explorer.controls[name_sent].model_id]))
        work["entries"] = []

    def _send(self, state, entries) -> None:
        """One custom message per batch: the predicted frames, the state they assume, and the points
        (and any background PNG) as binary buffers."""
        base, attributes = state
        explorer = self.explorer
        frames, buffers, pngs = {}, [], {}      # a background shared by several frames travels once
        for name, position, (ops, points, alt, readout, *background) in entries:
            entry = {"ops": ops, "buffer": len(buffers), "alt": alt, "readout": readout}
            buffers.append(points)
            if background:
                if id(background[0]) not in pngs:
                    pngs[id(background[0])] = len(buffers)
                    buffers.append(background[0])
                entry["background"] = pngs[id(background[0])]
            frames.setdefault(explorer.controls[name].model_id, {})[position] = entry
        view = explorer.view      # the frame at the base itself: a slider moved there and back
        current = {"ops": view.widget.frame.get("ops", []), "buffer": len(buffers), "alt": view.alt_text,
                   "readout": explorer.readout.value}
        buffers.append(bytes(view.widget.points))
        explorer.view.widget.send({"ahead": {"base": base, "attrs": attributes, "frames": frames, "current": current,
                                             "readout": explorer.readout.model_id}}, buffers=buffers)


def shell_messages_waiting() -> bool:
    """Whether the kernel has shell messages (control updates, executes) queued behind the one just handled:
    ipykernel 6 keeps them in ``kernel.msg_queue``. Messages that have reached the shell socket but that the event
    loop has not read yet are handed to that queue first (``ZMQStream.flush``, as ipykernel's own
    ``do_one_iteration`` does): a quick flick's next moves are often there, and a redraw for a position the hand has
    already left, or a prediction computed meanwhile, only delays the one that counts (issue 48). False outside a
    kernel or where the queue is not there."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    queue = getattr(kernel, "msg_queue", None)
    try:
        if queue is None:
            return False
        if not queue.qsize():
            stream = getattr(kernel, "shell_stream", None)
            if stream is not None and hasattr(stream, "flush"):
                import zmq

                stream.flush(zmq.POLLIN, limit=64)
        return queue.qsize() > 0
    except Exception:
        return False
