"""Frames computed ahead (lecture_lib.explorers.ahead): every prediction of every explorer is exactly the frame
and readout a real move to that position then shows, and predicting leaves the explorer as it was.

The page's side (a predicted frame painted on the key press, before the kernel answers) is tested
in tests/chapter_walk.py.
"""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets
import pytest

from lecture_lib.explorers import ahead, base, sliders, live_figure
from pristine import pristine


def _real_move(control, value) -> None:
    """Move a control the way the page does (a log slider by its index)."""
    if isinstance(control, sliders.LogSlider):
        control.index = control.stops.index(value)
    else:
        control.value = value


def _what_the_page_holds(explorer) -> tuple:
    view = explorer.view
    return (view.widget.frame["ops"], bytes(view.widget.points), view.alt_text, explorer.readout.value)


def _fresh(explorer) -> tuple:
    view = explorer.view
    ops, points = live_figure.record(view.figure, view._animated)
    limits = [(a.get_xlim(), a.get_ylim()) for a in view.figure.axes]
    return ops, points, limits


@pytest.mark.slow
@pytest.mark.parametrize("cls", base.explorer_classes(), ids=lambda cls: cls.__name__)
def test_every_prediction_is_the_frame_a_real_move_shows(cls):
    explorer = cls()
    view = explorer.view
    if not view.live:
        pytest.skip("anywidget is not installed")
    try:
        predicted = 0
        for name, control in explorer.controls.items():
            if ahead.followed(control, explorer):
                continue
            for _key, value in ahead.neighbours(control, ahead.REACH):
                if explorer.moves_others(name, value):       # a link moves another control: the kernel's
                    continue
                before = _fresh(explorer)
                page_before = _what_the_page_holds(explorer)
                frame = explorer.predict(name, value)
                assert _fresh(explorer) == before, f"{cls.__name__}: predicting {name}={value} changed the figure"
                assert _what_the_page_holds(explorer) == page_before
                start = control.value
                _real_move(control, value)
                if frame is not None:
                    predicted += 1
                    ops, points, alt, readout = frame
                    assert not view._page_background_stale, (
                        f"{cls.__name__}: {name}={value} was predicted but needed a new background")
                    assert (ops, points) == (view.widget.frame["ops"], bytes(view.widget.points)), (
                        f"{cls.__name__}: the predicted frame for {name}={value} differs from the real one")
                    assert alt == view.alt_text and readout == explorer.readout.value, (
                        f"{cls.__name__}: the predicted text for {name}={value} differs from the real one")
                _real_move(control, start)
        sliders = [n for n, c in explorer.controls.items()
                   if not isinstance(c, widgets.Dropdown)]
        assert predicted or not sliders, f"{cls.__name__}: no position of any slider could be predicted"
    finally:
        view.figure.clear()


def test_keys_are_what_the_page_writes():
    assert ahead.js_number(3.0) == "3" and ahead.js_number(0.35) == "0.35"
    assert ahead.js_number(1e-7) is None        # JavaScript writes 1e-7, Python 1e-07: not predicted
    slider = sliders.slider("efficiency", 0.3, 0.1, 0.9, 0.1)
    assert [k for k, _ in ahead.neighbours(slider)] == ["0.2", "0.4"]
    log = sliders.log_slider("batch", 1024, 1, 65536)
    assert ahead.attribute(log) == "index" and ahead.key(log) == "1,024"     # the label: an index shifts
    assert ahead.neighbours(log) == [("512", 512), ("2,048", 2048)]
    assert [v for _, v in ahead.neighbours(log, 2)] == [512, 2048, 256, 4096]
    log.value = 3000                                                          # typed: a new stop
    assert ahead.key(log) == "3,000" and [k for k, _ in ahead.neighbours(log)] == ["2,048", "4,096"]
    whole = sliders.int_slider("stages", 1, 1, 8)
    assert ahead.neighbours(whole) == [("2", 2)] and ahead.neighbours(whole, 2) == [("2", 2), ("3", 3)]
    assert [k for k, _ in ahead.neighbours(slider, 2)] == ["0.2", "0.4", "0.1", "0.5"]
    assert ahead.neighbours(sliders.dropdown("model", ["a", "b", "c"], "b"), 2) == [("a", "a"), ("c", "c")]
    pair = sliders.dropdown("weights", [("fp8 (1 byte)", 1), ("bf16 (2 bytes)", 2)])
    assert ahead.attribute(pair) == "index" and ahead.neighbours(pair) == [("bf16 (2 bytes)", 2)]


def test_a_round_of_predictions_sends_one_message_per_control_and_stops_when_a_move_comes():
    import asyncio

    from lecture_lib.explorers.roofline import ContextExplorer

    explorer = ContextExplorer()
    if not explorer.view.live:
        pytest.skip("anywidget is not installed")
    sent = []
    explorer.view.widget.send = lambda content, buffers=None: sent.append((content, buffers))

    async def main():
        loop = asyncio.get_running_loop()
        explorer.lookahead.schedule(loop)
        await asyncio.sleep(ahead.DELAY_SECONDS + 2.0)

    asyncio.run(main())
    sliders = [c for c in explorer.controls.values() if ahead.neighbours(c) and not isinstance(c, widgets.Dropdown)]
    assert {c.model_id for c in sliders} <= {i for content, _ in sent for i in content["ahead"]["frames"]}
    assert len(sent) <= len(explorer.controls)        # one message per control (two steps, then one each)
    for content, buffers in sent:
        table = content["ahead"]
        assert table["readout"] == explorer.readout.model_id
        assert set(table["base"]) == {c.model_id for c in explorer.controls.values()}
        (frames,) = table["frames"].values()
        assert 0 < len(frames) <= ahead.BATCH
        assert all(0 <= entry["buffer"] < len(buffers) for entry in frames.values())
        current = table["current"]       # the frame at the base itself, as the page holds it
        assert bytes(buffers[current["buffer"]]) == bytes(explorer.view.widget.points)
        assert current["ops"] == explorer.view.widget.frame["ops"] and current["readout"] == explorer.readout.value

    sent.clear()

    async def interrupted():
        loop = asyncio.get_running_loop()
        explorer.lookahead.schedule(loop)
        explorer.lookahead.generation += 1        # a move arrived: the round is void
        await asyncio.sleep(ahead.DELAY_SECONDS + 0.5)

    asyncio.run(interrupted())
    assert sent == []


@pytest.mark.slow
@pytest.mark.parametrize("cls", base.explorer_classes(), ids=lambda cls: cls.__name__)
def test_a_predicted_control_never_moves_another_control(cls):
    """A prediction assumes every other control stays where it is. Where moving a slider drags another one with
    it (Fast Mode's normal batch bounds the fast batch), the explorer's ``moves_others`` must say so, and only
    there: checked from each end of every slider's range and from its default, both ways (a position it marks
    does move another control). Which controls move is decided by the explorer's ``update`` and the controls'
    own observers, never by drawing, so the moves here are not drawn (the frames themselves are compared in the
    test above)."""
    explorer = cls()
    explorer.view.render = lambda **_: None
    try:
        for name, control in explorer.controls.items():
            if not ahead.neighbours(control):
                continue
            if isinstance(control, widgets.Dropdown):       # an option that moves another control is not predicted
                continue
            start = control.value
            ends = [control.stops[0], control.stops[-1]] if isinstance(control, sliders.LogSlider) else [control.min, control.max]
            for origin in [start, *ends]:
                _real_move(control, origin)
                for _key, value in ahead.neighbours(control, ahead.REACH):
                    others = {n: c.value for n, c in explorer.controls.items() if n != name}
                    said = explorer.moves_others(name, value)
                    _real_move(control, value)
                    moved = {n for n, c in explorer.controls.items() if n != name and c.value != others[n]}
                    assert bool(moved) == said, (f"{cls.__name__}: moving {name!r} to {value} moved {moved or 'nothing'}, "
                                                 f"but moves_others says {said}")
                    _real_move(control, origin)
            _real_move(control, start)
    finally:
        explorer.view.figure.clear()


def test_fast_mode_predicts_its_normal_batch_where_the_link_leaves_the_fast_batch_alone():
    """Issue 28 (predict linked sliders, with the link applied): the normal batch's positions where the fast batch
    stays put are predicted; those where the link pushes it down (or gives it back) are the kernel's."""
    from lecture_lib.explorers.roofline import FastModeExplorer

    explorer = FastModeExplorer()
    normal, fast = explorer.controls["batch_normal"], explorer.controls["batch_fast"]
    explorer.lookahead.in_hand = "batch_normal"
    planned = {value for name, _key, value, _drawn in explorer.lookahead.plan() if name == "batch_normal"}
    assert planned == {v for v in normal.stops if v != normal.value and v > fast.value}, planned
    normal.value = 2
    assert fast.value == 1                   # pushed below the normal batch
    normal.value = 960
    assert fast.value == 64                  # back to the learner's own choice (a walkthrough saw it stuck at 1)


def test_a_flood_of_prediction_requests_starts_one_round(monkeypatch):
    """Issue 31 §2: 20,000 ``{"ahead": "please"}`` messages from a page once left the kernel 21 s behind (one
    timer each). Requests coalesce into one pending round, and the event loop is free again at once."""
    import asyncio
    import time

    from lecture_lib.explorers import base
    from lecture_lib.explorers.roofline import ContextExplorer

    explorer = ContextExplorer()
    if not explorer.view.live:
        pytest.skip("anywidget is not installed")
    sent = []
    explorer.view.widget.send = lambda content, buffers=None: sent.append(content)
    monkeypatch.setattr(base, "_kernel_loop", lambda: asyncio.get_running_loop())    # as inside a kernel

    async def flood():
        started = time.process_time()      # the kernel's own work: a loaded machine (CI) stretches the wall clock
        for _ in range(20_000):
            explorer._on_page_message(None, {"ahead": "please"}, [])
        for junk in ({"ahead": "nonsense"}, {"index": None}, "please", None, [1, 2], {"ahead": ["please"]}):
            explorer._on_page_message(None, junk, [])
        await asyncio.sleep(0)                         # what an execute request would wait for
        answered = time.process_time() - started
        pending = [t for t in asyncio.get_running_loop()._scheduled if not t.cancelled()]   # CPython's timer heap
        assert len(pending) <= 1, f"{len(pending)} prediction rounds pending for one explorer"
        await asyncio.sleep(ahead.DELAY_SECONDS + 2.0)
        return answered

    assert asyncio.run(flood()) < 1.0
    assert len(sent) <= len(explorer.controls), "one round of predictions, not one per request"
    assert len({i for content in sent for i in content["ahead"]["frames"]}) == len(sent)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_position_that_is_not_finite_is_not_predicted(value):
    assert ahead.js_number(value) is None


def test_a_huge_reach_is_capped_and_a_bad_one_named():
    from lecture_lib.explorers.roofline import ContextExplorer

    explorer = ContextExplorer()
    slider = next(c for c in explorer.controls.values() if hasattr(c, "stops"))
    assert len(ahead.neighbours(slider, 2**63)) == len(slider.stops) - 1
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(ValueError, match="reach"):
            ahead.neighbours(slider, bad)


def _run_round(explorer, before=None, seconds: float = 3.0) -> list:
    import asyncio

    sent = []
    explorer.view.widget.send = lambda content, buffers=None: sent.append((content, buffers))

    async def main():
        loop = asyncio.get_running_loop()
        if before is not None:
            before(loop)
        await asyncio.sleep(ahead.DELAY_SECONDS + seconds)

    asyncio.run(main())
    return sent


def test_the_control_in_hand_is_predicted_along_its_whole_track_nearest_first_in_batches():
    from lecture_lib.explorers.roofline import ContextExplorer

    explorer = ContextExplorer()
    if not explorer.view.live:
        pytest.skip("anywidget is not installed")
    name, held = next((n, c) for n, c in explorer.controls.items() if isinstance(c, sliders.LogSlider))
    sent = _run_round(explorer, lambda loop: explorer.lookahead.request({"ahead": "hold", "control": held.model_id}, loop))
    assert explorer.lookahead.in_hand == name
    first = sent[0][0]["ahead"]["frames"]
    assert list(first) == [held.model_id] and len(first[held.model_id]) <= ahead.BATCH
    keys = [k for content, _ in sent for k in content["ahead"]["frames"].get(held.model_id, {})]
    expected = [k for k, _ in ahead.neighbours(held, ahead.HAND_REACH)]
    assert keys == [k for k in expected if k in keys], "not nearest first"
    # a position is missing only where its new axes would have needed a background beyond the round's draws
    missing = [value for k, value in ahead.neighbours(held, ahead.HAND_REACH) if k not in keys]
    assert all(explorer.predict(name, value) is None for value in missing), missing
    assert len(missing) <= ahead.MAX_BACKGROUNDS or not missing
    # the same hold again predicts nothing twice; a real move (a new generation) stops a round at once
    assert _run_round(explorer, lambda loop: explorer.lookahead.request({"ahead": "hold", "control": held.model_id},
                                                                        loop)) == []

    def interrupted(loop):
        explorer.lookahead.in_hand = None
        explorer.lookahead.request({"ahead": "hold", "control": held.model_id}, loop)
        loop.call_later(ahead.DELAY_SECONDS + 0.001, lambda: setattr(explorer.lookahead, "generation",
                                                                     explorer.lookahead.generation + 1))
    explorer.lookahead._sent, explorer.lookahead._kept = {}, {}     # nothing sent or kept: the round has work to void
    assert len(_run_round(explorer, interrupted)) <= 1


@pytest.mark.slow
@pytest.mark.parametrize("cls", base.explorer_classes(), ids=lambda cls: cls.__name__)
def test_a_frame_predicted_with_new_axes_brings_the_background_the_real_move_sends(cls):
    explorer = cls()
    view = explorer.view
    if not view.live:
        pytest.skip("anywidget is not installed")
    try:
        for name, control in explorer.controls.items():
            if ahead.followed(control, explorer):
                continue
            backgrounds = {}        # one round's: positions with the same new axes share a background
            for _key, value in ahead.neighbours(control, NEAREST):
                if explorer.moves_others(name, value):
                    continue
                before = _fresh(explorer)
                frame = explorer.predict(name, value, background=True, backgrounds=backgrounds)
                assert _fresh(explorer) == before, f"{cls.__name__}: predicting {name}={value} changed the figure"
                start = control.value
                _real_move(control, value)
                if frame is not None and len(frame) == 5:
                    ops, points, alt, readout, png = frame
                    assert png == bytes(view.widget.background), f"{cls.__name__}: {name}={value}: another background"
                    assert (ops, points) == (view.widget.frame["ops"], bytes(view.widget.points))
                    assert alt == view.alt_text and readout == explorer.readout.value
                _real_move(control, start)
    finally:
        view.figure.clear()


def _positions(control) -> int:
    if isinstance(control, sliders.LogSlider):
        return len(control.stops)
    return int(round((control.max - control.min) / control.step)) + 1


@pytest.mark.parametrize("cls", base.explorer_classes(), ids=lambda cls: cls.__name__)
def test_every_control_s_whole_track_is_within_the_reach_of_the_hand(cls):
    """A slow drag over a slider with more positions than the predictions reach waits for the kernel at every step
    past them, every kernel frame dropped as the slider moves on (learners' walks: 144 chips froze the figure for
    1.8 s, 256 layers for 2 s, 576 GPUs for 3.4 s). From either end, the whole track of every slider is predicted
    (a dropdown is not dragged: chapter 9's 75 systems are predicted around the one chosen)."""
    explorer = pristine(cls)
    too_long = {name: _positions(c) for name, c in explorer.controls.items()
                if isinstance(c, (widgets.FloatSlider, widgets.IntSlider, widgets.FloatLogSlider))
                and _positions(c) > ahead.HAND_REACH + 1}
    assert not too_long, f"more positions than ahead.HAND_REACH + 1 = {ahead.HAND_REACH + 1}: {too_long}"


NEAREST = 3     # positions either way of each control whose frame with new axes is compared with the real move's


def test_a_drag_across_a_rescale_of_the_axes_stays_ahead():
    """Issue 28 (drags): chapter 1's "$ per GPU-hour" rescales the cost axis at 1-2-5 steps, so a drag
    across one went to the kernel for every position after it. Now its whole track is predicted, a few
    backgrounds drawn for its 46 positions: each position with the same new axes shares one. Every frame
    is the real move's, walked along the track from where it started, either way."""
    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    view = explorer.view
    if not view.live:
        pytest.skip("anywidget is not installed")
    control = explorer.controls["price"]
    start = control.value
    backgrounds, frames = {}, {}
    try:
        for _key, value in ahead.neighbours(control, ahead.HAND_REACH):
            frames[value] = explorer.predict("price", value, backgrounds=backgrounds,
                                             background=len(backgrounds) < ahead.MAX_BACKGROUNDS)
        assert all(frame is not None for frame in frames.values()), [v for v, f in frames.items() if f is None]
        shared = [v for v, f in frames.items() if len(f) == 5 and sum(f[4] is png for png in backgrounds.values())]
        assert 2 <= len(backgrounds) <= ahead.MAX_BACKGROUNDS and len(shared) > 3 * len(backgrounds), (
            len(backgrounds), len(shared))
        for side in (sorted(v for v in frames if v > start), sorted((v for v in frames if v < start), reverse=True)):
            for value in side:          # the way a drag goes: the real figure keeps its axes between rescales
                _real_move(control, value)
                ops, points, alt, readout, *png = frames[value]
                assert (ops, points) == (view.widget.frame["ops"], bytes(view.widget.points)), value
                assert alt == view.alt_text and readout == explorer.readout.value, value
                if png:
                    assert png[0] == bytes(view.widget.background), f"price={value}: another background"
            _real_move(control, start)
    finally:
        view.figure.clear()


def test_frames_of_the_control_in_hand_are_not_computed_again_when_it_moves_itself():
    """A control's predicted frames assume only the other controls where they are: after the learner moves
    it along its track (the page keeps its frames), the next round predicts only what it has not sent, and
    a move of another control makes them all due again."""
    from lecture_lib.explorers.roofline import ContextExplorer

    explorer = ContextExplorer()
    if not explorer.view.live:
        pytest.skip("anywidget is not installed")
    name, held = next((n, c) for n, c in explorer.controls.items() if isinstance(c, sliders.LogSlider))
    hold = {"ahead": "hold", "control": held.model_id}
    first = _run_round(explorer, lambda loop: explorer.lookahead.request(hold, loop))
    assert first
    _real_move(held, held.stops[held.index + 1])
    again = _run_round(explorer, lambda loop: explorer.lookahead.schedule(loop))
    assert not any(held.model_id in content["ahead"]["frames"] for content, _ in again)
    other = next(c for n, c in explorer.controls.items() if n != name and isinstance(c, sliders.LogSlider))
    _real_move(other, other.stops[other.index + 1 if other.index + 1 < len(other.stops) else other.index - 1])
    after = _run_round(explorer, lambda loop: explorer.lookahead.schedule(loop))
    assert any(held.model_id in content["ahead"]["frames"] for content, _ in after)


def test_a_flood_of_control_updates_is_drawn_once_when_the_queue_is_empty(monkeypatch):
    """Issue 31 §2 (a page flooding a slider with state updates): each update costs only the trait change while
    more shell messages wait in the kernel's queue; the explorer draws once, after the last, and the kernel's CPU
    per update stays far below a redraw's."""
    import asyncio
    import time

    from lecture_lib.explorers import base
    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    control = explorer.controls["batch"]
    stops = list(control.stops)[:40]
    queued = {"n": 0}
    monkeypatch.setattr(base, "_kernel_loop", lambda: asyncio.get_running_loop())     # as inside a kernel
    monkeypatch.setattr(ahead, "shell_messages_waiting", lambda: queued["n"] > 0)

    async def flood():
        drawn = explorer.render_count
        started = time.process_time()
        for i in range(2_000):              # one message per loop turn, the rest still queued, as ipykernel runs them
            queued["n"] = 2_000 - i - 1
            control.value = stops[i % len(stops)]
            await asyncio.sleep(0)
        for _ in range(5):
            await asyncio.sleep(0)
        return explorer.render_count - drawn, time.process_time() - started

    redraws, cpu = asyncio.run(flood())
    assert redraws <= 3, f"{redraws} redraws for 2,000 queued updates (one per 0.5 s at most on a loaded machine)"
    assert cpu < 10.0, f"{cpu:.2f} s of CPU for 2,000 updates (2,000 redraws took 38 s)"


def test_a_redraw_slowed_by_a_busy_machine_does_not_turn_off_predicting_new_axes(monkeypatch):
    """Redraws are timed in the kernel thread's CPU seconds: on a machine busy with other work (here, a
    redraw that waits 0.2 s without computing) the explorer still predicts frames with new axes for the
    control in hand, as it does when the machine is idle."""
    import time as _time

    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    draw = explorer.view.draw_canvas
    monkeypatch.setattr(explorer.view, "draw_canvas", lambda: (_time.sleep(0.2), draw())[1])
    explorer.view.render(full=True)
    assert explorer.view.full_render_seconds < ahead.BACKGROUND_BUDGET, explorer.view.full_render_seconds
    explorer.lookahead.in_hand = "n_chips"
    assert all(drawn for name, _key, _value, drawn in explorer.lookahead.plan() if name == "n_chips")
    explorer.view.figure.clear()
