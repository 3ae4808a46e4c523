"""The slider path in a real JupyterLab, in headless Chromium, moved the way people move sliders (issues 19 and
28): the learner's sequences replayed in every chapter with real key and pointer events, none of whose frames may
be painted for positions the controls have left; a value typed into a log slider's readout; a frame computed ahead
painted at once and then the kernel's identical one. A file of its own so that pytest-xdist runs it beside the
chapters' walks in tests/test_browser.py.
"""

from __future__ import annotations

import time

import pytest

from browser_support import LAYOUT, NotebookSession, drift, notebook_names

NOTEBOOKS = notebook_names()

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("name", NOTEBOOKS or [pytest.param("(none)", marks=pytest.mark.skip("no notebooks"))])
def test_no_frame_is_painted_for_positions_the_controls_have_left(name, lab_server, browser):
    """Issue 28: the learner's sequences, replayed with real key and pointer events in every explorer of
    the chapter: a value typed into a log slider's readout then ← twice quickly and ← held; a key held
    down (autorepeat, 30 Hz) one way and back; two sliders in turn at a tapping rate; a mouse drag of
    12% of the track right after a dropdown change. Every painted frame is logged: none may be for
    control positions other than the ones the controls hold as it is painted, and once the controls
    stop, every figure shows their state."""
    session = NotebookSession(lab_server, browser, name, viewport=dict(LAYOUT))
    try:
        session.open()
        session.run_all()
        assert not session.errors(), session.errors()
        session.open_covers()       # what a prediction holds back (issue 29 §1) is opened before the controls move
        session.wait_idle(20, settle=1.0)
        session.watch_paints()
        sequences = replay_learner(session)
        session.wait_idle(30, settle=1.0)
        paints = session.paints()
        stale = [p for p in paints if p["stale"]]
        assert not stale, (f"{name}: {len(stale)} of {len(paints)} frames painted for positions already left "
                           f"({sequences}): {stale[:5]}")
        unsettled = session.unsettled_figures()
        assert not unsettled, f"{name}: figures not showing their controls' positions once they stopped: {unsettled}"
        assert not session.errors(), session.errors()
        print(f"{name}: {sequences}, {len(paints)} frames painted ({sum(p['ahead'] for p in paints)} ahead), none stale")
    finally:
        session.close()


def replay_learner(session: NotebookSession) -> dict:
    """Issue 28's sequences on every explorer of the open notebook; returns how many of each ran."""
    done = {"typed": 0, "held": 0, "alternating": 0, "dropdown+drag": 0, "drag": 0}
    by_explorer: dict[str, list] = {}
    for slider in session.sliders():
        if slider.explorer:
            by_explorer.setdefault(slider.container, []).append(slider)
    for group in by_explorer.values():
        first = group[0]
        typed = next((s for s in group if session.is_log_slider(s)), None)
        if typed is not None:           # a value typed between two stops, then ← ← quickly, then ← held
            session.type_value(typed, _between_stops(session, typed))
            time.sleep(0.6)
            session.press_at(typed, ["ArrowLeft"] * 2, 0.06)
            time.sleep(0.5)
            session.press_at(typed, ["ArrowLeft"] * 6, 0.04)
            done["typed"] += 1
        session.hold_key(first, "ArrowLeft", 5)            # held down: autorepeat at 30 Hz, one way and back
        session.hold_key(first, "ArrowRight", 5)
        done["held"] += 1
        if len(group) > 1:
            for _ in range(3):
                session.press_at(group[0], ["ArrowRight"], 0.15)
                session.press_at(group[1], ["ArrowRight"], 0.15)
            done["alternating"] += 1
        if session.dropdowns(first):          # a drag right after a dropdown change
            session.change_dropdown(first)
            session.drag(group[-1])
            done["dropdown+drag"] += 1
        else:
            session.drag(group[-1])
            done["drag"] += 1
    return done


def _between_stops(session: NotebookSession, slider) -> str:
    """A value a learner might type: 1.3x the slider's (0.8x at its top), as a readout writes it."""
    from lecture_lib.explorers.sliders import parse_typed

    text, now, high = session.slider_value(slider)
    try:
        value = parse_typed(text or "")
    except ValueError:
        return "3,000"
    value *= 0.8 if now is not None and high is not None and now >= high else 1.3
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def test_a_value_typed_into_a_log_slider_readout_is_kept_as_typed(lab_server, browser):
    """Issue 19 §1: a learner types 3,000 into the batch slider's readout; the slider, its readout
    and the explorer take exactly 3000 (not the nearest stop); a value past the top goes to the top."""
    session = NotebookSession(lab_server, browser, "01_batch_size_cost_and_speed.ipynb")
    try:
        session.open()
        session.run_all()
        session.open_covers()                      # the batch explorer waits for the B* reveal
        page = session.page
        slider = page.locator(".lecture-log-slider").filter(has_text="batch B").first
        readout = slider.locator(".widget-readout")
        assert readout.get_attribute("contenteditable") == "true"
        table = slider.locator("xpath=ancestor::*[contains(@class,'lecture-explorer')]").locator(".lecture-readout")
        before = table.inner_text()
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("3,000")
        page.keyboard.press("Enter")
        page.wait_for_function("""(el) => el.textContent.trim() === '3,000'""", arg=readout.element_handle(), timeout=15_000)
        session.wait_idle(20, settle=0.5)
        assert table.inner_text() != before
        value = session.execute_in_kernel(
            "import gc as _g; from lecture_lib.explorers.sliders import LogSlider as _LS",
            "[c.value for c in _g.get_objects() if isinstance(c, _LS) and c.description.startswith('batch B')]")
        assert "3000.0" in value["value"], value
        readout.click()                                   # not a number: nothing moves, the readout shows the value again
        page.keyboard.press("Control+A")
        page.keyboard.type("lots")
        page.keyboard.press("Enter")
        page.wait_for_function("""(el) => el.textContent.trim() === '3,000'""", arg=readout.element_handle(), timeout=30_000)
        readout.click()                                   # past the top: the top, as a bounded number box does
        page.keyboard.press("Control+A")
        page.keyboard.type("1e30")
        page.keyboard.press("Enter")
        top = slider.locator(".noUi-handle").first.get_attribute("aria-valuemax")
        page.wait_for_function("""(el) => el.getAttribute('aria-valuenow') === el.getAttribute('aria-valuemax')""",
                               arg=slider.locator(".noUi-handle").first.element_handle(), timeout=15_000)
        assert top is not None
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("3,000")
        page.keyboard.press("Enter")
        page.wait_for_function("""(el) => el.textContent.trim() === '3,000'""", arg=readout.element_handle(), timeout=15_000)
        assert not session.errors()

        # Issue 28's repro: a typed value, a pause, then ← twice quickly (and a held ←): the picture and the
        # readout never show a position the slider has already left, and they end on the slider's own.
        session.wait_idle(20, settle=1.0)
        session.watch_paints()
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        for key in ["ArrowLeft"] * 2:
            page.keyboard.press(key)
            time.sleep(0.06)
        time.sleep(0.5)
        for key in ["ArrowLeft"] * 6:
            page.keyboard.press(key)
            time.sleep(0.04)
        session.wait_idle(20, settle=1.0)
        stale = [p for p in session.paints() if p["stale"]]
        assert not stale, f"frames painted for positions the batch slider had left: {stale}"
        shown = readout.inner_text().strip()
        step = table.inner_text()
        assert f"step time at B = {shown}" in step, f"the slider reads {shown} but the readout says {step!r}"
    finally:
        session.close()


def test_a_slider_step_paints_the_frame_computed_ahead_then_the_kernels_identical_one(lab_server, browser):
    """Issue 19 §9 (lecture_lib.explorers.ahead): after Run All each explorer sends the frames one arrow-key
    step away; a key press paints one at once, before the kernel answers, and the kernel's own frame
    for the move, painted after it, has exactly the same pixels; the readout is the kernel's."""
    session = NotebookSession(lab_server, browser, "01_batch_size_cost_and_speed.ipynb")
    try:
        session.open()
        session.run_all()
        session.open_covers()                      # the batch explorer waits for the B* reveal
        session.wait_idle(20, settle=1.5)          # the predictions are computed in idle moments
        page = session.page
        page.evaluate("""() => { window.__ltShots = [];
            document.addEventListener('lecture-frame', (e) => {
              const canvas = e.target.querySelector('canvas');
              const readout = e.target.closest('.lecture-explorer').querySelector('.lecture-readout');
              window.__ltShots.push({ahead: Boolean(e.detail && e.detail.ahead), pixels: canvas.toDataURL(),
                                     readout: readout.innerText});
            }, true); }""")
        slider = session.sliders()[0]
        kind, samples = session.measure_latency(slider, 4, pause=1.0)     # time for the next predictions
        assert kind == "figure"
        assert sum(1 for s in samples if s["ahead"]) >= 3, f"key presses not painted ahead: {samples}"
        assert all(s["kernel_ms"] is not None and s["kernel_ms"] >= s["ms"] for s in samples), samples
        session.wait_idle(20, settle=0.5)
        shots = page.evaluate("() => window.__ltShots")
        pairs = [(a, b) for a, b in zip(shots, shots[1:]) if a["ahead"] and not b["ahead"]]
        assert len(pairs) >= 3, [s["ahead"] for s in shots]
        for predicted, real in pairs:
            assert predicted["pixels"] == real["pixels"], "a predicted frame differs from the kernel's frame"
        final = session.page.evaluate(
            "() => document.querySelector('.lecture-explorer .lecture-readout').innerText")
        assert final == shots[-1]["readout"]
        differences = drift(session)
        assert not differences, differences
        assert not session.errors()
    finally:
        session.close()
