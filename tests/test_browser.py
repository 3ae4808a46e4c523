"""Every chapter in a real JupyterLab, in headless Chromium (DESIGN.md, "Testing layers" 4).

For each notebook in ``notebooks/``, at 1280 x 900 with the file browser open: open it, Run All,
find no error output, no "Error displaying widget" and no exception in an explorer's readout; every
control shows its declared value, every image has a text alternative, no figure is scaled below
0.9, ArrowDown moves every dropdown; then move **every** slider one step with the keyboard and see
its explorer's figure or readout change. The keyboard is also tried in Notebook 7. Run with
``pytest -m browser``.
"""

from __future__ import annotations

import time

import pytest

from browser_support import NotebookServer, NotebookSession, default_mismatches, notebook_names

pytestmark = pytest.mark.browser

NOTEBOOKS = notebook_names()
LAYOUT = {"width": 1280, "height": 900}
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
        # As people move them: a key held down one way and back, then two sliders of one explorer in turn
        # at a tapping rate. No frame may be painted for positions the controls have already left.
        session.watch_paints()
        by_explorer: dict[str, list] = {}
        for slider in sliders:
            if slider.explorer:
                by_explorer.setdefault(slider.container, []).append(slider)
        for pair in by_explorer.values():
            session.press_at(pair[0], ["ArrowLeft"] * 5 + ["ArrowRight"] * 5, 0.04)
            if len(pair) > 1:
                for _ in range(3):
                    session.press_at(pair[0], ["ArrowRight"], 0.15)
                    session.press_at(pair[1], ["ArrowRight"], 0.15)
        session.wait_idle()
        paints = session.paints()
        stale = [p for p in paints if p["stale"]]
        assert not stale, f"{name}: {len(stale)} of {len(paints)} frames painted for positions already left: {stale[:5]}"
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


@pytest.fixture(scope="module")
def notebook7_server():
    server = NotebookServer().start()
    try:
        yield server
    finally:
        server.stop()


def every_explorer_notebook(server) -> str:
    """A scratch notebook showing every explorer of every chapter at its defaults, one per cell."""
    from lecture_lib.explorers.base import explorer_classes

    cells = [f"from {cls.__module__} import {cls.__name__}\n{cls.__name__}()" for cls in explorer_classes()]
    return server.add_notebook("every_explorer.ipynb", cells)


def test_keyboard_moves_sliders_and_dropdowns_in_notebook_7(notebook7_server, browser):
    """Issue 19 §6: in Notebook 7 the notebook's shortcuts took the arrow keys (focus jumped to a
    heading cell); every slider and dropdown of every explorer must answer the keyboard there too.
    One notebook holds every explorer (the chapters themselves run in JupyterLab above), so each
    control is tried in Notebook 7 without running every chapter a second time."""
    name = every_explorer_notebook(notebook7_server)
    session = NotebookSession(notebook7_server, browser, name, viewport=dict(LAYOUT))
    try:
        session.open()
        session.run_all()
        assert not session.errors(), session.errors()
        from lecture_lib.explorers.base import explorer_classes

        assert len(session.figure_names()) >= len(explorer_classes()), "not every explorer was shown"
        mismatches = default_mismatches(session.displayed_controls(), session.declared_controls())
        assert not mismatches, mismatches
        stuck = [d for d in session.press_dropdowns() if d["after"] == d["before"] or not d["focused"]]
        assert not stuck, f"Notebook 7: dropdowns the arrow keys did not move: {stuck}"
        failures = []
        for slider in session.sliders():
            move = session.move(slider)
            focused = session.page.evaluate("() => !!(document.activeElement && document.activeElement.closest('.widget-slider'))")
            if not move.changed or move.value_before == move.value_after or not focused:
                failures.append(f"{slider.describe()}: {move.key} {move.value_before} -> {move.value_after}, "
                                f"focus on the slider: {focused}")
        assert session.sliders() and not failures, "Notebook 7:\n" + "\n".join(failures)
    finally:
        session.close()
