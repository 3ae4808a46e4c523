"""Every chapter in a real JupyterLab, in headless Chromium (DESIGN.md, "Testing layers" 4).

For each notebook in ``notebooks/``, at 1280 x 900 with the file browser open: open it, Run All,
find no error output, no "Error displaying widget" and no exception in an explorer's readout; every
control shows its declared value, every image has a text alternative, no figure is scaled below
0.9, ArrowDown moves every dropdown; then move **every** slider one step with the keyboard and see
its explorer's figure or readout change (Notebook 7: test_browser_notebook7.py). Run with
``pytest -m browser``.
"""

from __future__ import annotations

import time

import pytest

from browser_support import LAYOUT, NotebookSession, default_mismatches, notebook_names

pytestmark = pytest.mark.browser

NOTEBOOKS = notebook_names()
MIN_SCALE = 0.9
MAX_MEAN_DIFFERENCE = 6.0      # per channel, 0-255: anti-aliasing, hatch phase, the browser's own text rendering
MAX_FAR_PIXELS = 0.025         # share of 4x4 blocks off by more than 48: curves or labels missing or misplaced


@pytest.mark.parametrize("name", NOTEBOOKS or [pytest.param("(none)", marks=pytest.mark.skip("no notebooks"))])
def test_notebook_runs_and_every_slider_moves_its_explorer(name, lab_server, browser):
    started = time.monotonic()
    # the default layout of issue 19: a 1280 x 900 window with JupyterLab's file browser open
    session = NotebookSession(lab_server, browser, name, viewport=dict(LAYOUT), file_browser=True)
    try:
        session.open()
        run_seconds = session.run_all()
        errors = session.errors()
        assert not errors, f"{name}: errors on the page after Run All:\n" + "\n".join(errors) + _context(session)
        session.open_covers()       # what a prediction holds back (issue 29 §1) is opened before the controls move

        # every control shows the lesson's declared value, before anything moves (issue 19 §1)
        mismatches = default_mismatches(session.displayed_controls(), session.declared_controls())
        assert not mismatches, f"{name}: controls that do not show their declared value:\n" + "\n".join(mismatches)

        # every figure, explorer or static, has a text alternative (issue 19 §6)
        bare = [img for img in session.output_images() if len((img["alt"] or img["title"]).strip()) < 20]
        assert not bare, f"{name}: images without a text alternative: {bare}"

        # figures are not scaled down by the browser in the default layout (issue 19 §5)
        small = [f for f in session.figure_scales() if f["scale"] < MIN_SCALE]
        assert not small, f"{name}: figures shown below {MIN_SCALE} of their size: {small}"

        # ArrowDown on a dropdown changes its option and keeps the focus (issue 19 §6)
        stuck = [d for d in session.press_dropdowns() if d["after"] == d["before"] or not d["focused"]]
        assert not stuck, f"{name}: dropdowns the arrow keys did not move (or that lost focus): {stuck}"

        # a live figure paints what Agg would have drawn: its canvas over its background
        drift = _drift(session)
        assert not drift, f"{name}: live figures that differ from the kernel's drawing: {drift}"

        names_before = session.figure_names()
        assert all(f["tag"] == "IMG" and len(f["title"]) > 40 for f in names_before), (
            f"{name}: an explorer figure has no text alternative (title) on its <img>: {names_before}")

        unsynced = session.log_slider_valuetexts(unsynced_only=True)
        assert not unsynced, f"{name}: log sliders whose aria-valuetext is not their real value: {unsynced}"

        failures = []
        sliders = session.sliders()
        for slider in sliders:
            move = session.move(slider)
            if move.error and move.error == move.error_before:
                failures.append(f"{slider.describe()}: its explorer already shows an exception: {move.error}")
            elif move.error:
                failures.append(f"{slider.describe()}: {move.key} put an exception in the readout: {move.error}")
            elif not move.changed:
                how = ("the slider's value did not move" if move.value_before == move.value_after
                       else f"value {move.value_before} -> {move.value_after}")
                failures.append(f"{slider.describe()}: {move.key} changed neither the figure nor the "
                                f"readout within the timeout ({how})")
        names_after = session.figure_names()
        unsynced = session.log_slider_valuetexts(unsynced_only=True)
        assert not unsynced, f"{name}: after the moves, log sliders read out their exponent: {unsynced}"
        if sliders:
            assert [f["title"] for f in names_after] != [f["title"] for f in names_before], (
                f"{name}: no figure's text alternative followed the slider moves")
        errors = session.errors()
        assert not failures and not errors, (
            f"{name}: {len(failures)} of {len(sliders)} sliders failed:\n" + "\n".join(failures + errors)
            + _context(session))
        print(f"{name}: Run All {run_seconds:.1f} s, {len(sliders)} sliders moved, "
              f"{session.counts()}, total {time.monotonic() - started:.1f} s")
    finally:
        session.close()


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


def _drift(session: NotebookSession) -> list[dict]:
    """Live figures whose canvas over its background differs from Agg's drawing of the same frame. A figure
    still taking a frame when it is photographed (a background loading on a busy machine) is looked at again
    once the kernel has been idle for a second: a real difference stays, one caught in flight does not."""
    def measure():
        return [d for d in session.live_figure_differences()
                if "error" in d or d["mean"] > MAX_MEAN_DIFFERENCE or d["far"] > MAX_FAR_PIXELS]

    found = measure()
    if found:
        session.wait_idle(30, settle=1.0)
        found = measure()
    return found


def _context(session: NotebookSession) -> str:
    lines = session.console[-10:]
    return ("\nbrowser console errors:\n" + "\n".join(lines)) if lines else ""


def test_markdown_dollars_render_as_dollars(lab_server, browser):
    """Issue 13: JupyterLab typesets \\$30 / \\$150 as math; <span>&#36;</span>30 stays a dollar beside real math."""
    import nbformat

    from markdown_dollars import DOLLAR

    cells = {"escaped": r"Fast costs \$30 / \$150 per million against \$5 / \$25.",
             "span": f"Fast costs {DOLLAR}30 / {DOLLAR}150 per million, and price is $\\propto t/B$; {DOLLAR}5."}
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell(text) for text in cells.values()]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, lab_server.root / "notebooks" / "dollars.ipynb")
    page = browser.new_page()
    try:
        page.goto(lab_server.notebook_url("dollars.ipynb"))
        page.wait_for_selector(".jp-MarkdownCell .jp-RenderedMarkdown mjx-container", timeout=90_000)
        time.sleep(2)
        rendered = page.evaluate("""() => [...document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')].map(
            el => ({math: el.querySelectorAll('mjx-container').length, text: el.innerText}))""")
    finally:
        page.close()
    escaped, span = rendered
    assert escaped["math"] > 0 and "$30" not in escaped["text"]        # the bug this guards against
    assert span["math"] == 1 and "$30 / $150" in span["text"] and "$5" in span["text"]


def test_predict_then_reveal_in_the_browser(lab_server, browser):
    """Issue 13: after Run All the reveal panel waits for a guess; typing one and pressing Reveal shows the verdict."""
    session = NotebookSession(lab_server, browser, "02_moe_across_racks.ipynb")
    try:
        session.open()
        session.run_all()
        page = session.page
        panels = page.locator(".jp-OutputArea-output").filter(has_text="Enter a guess first")
        assert panels.count() >= 2                           # the question's box and the reveal panel, nothing revealed
        assert page.locator("text=Answer, from the lecture").count() == 0
        box = page.locator(".widget-text input:visible").first      # (log sliders keep a hidden one)
        box.fill("3")
        box.press("Tab")
        page.locator("button:has-text('Reveal')").first.click()
        page.wait_for_selector("text=Answer, from the lecture", timeout=20_000)
        assert page.locator("text=You guessed 3").count() >= 1
        assert not session.errors()
    finally:
        session.close()


def test_a_value_typed_into_a_log_slider_readout_is_kept_as_typed(lab_server, browser):
    """Issue 19 §1: a learner types 3,000 into the batch slider's readout; the slider, its readout
    and the explorer take exactly 3000 (not the nearest stop); a value outside the range is refused."""
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
        readout.click()                                   # out of range: refused, the readout shows the value again
        page.keyboard.press("Control+A")
        page.keyboard.type("1e30")
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
        drift = _drift(session)
        assert not drift, drift
        assert not session.errors()
    finally:
        session.close()
