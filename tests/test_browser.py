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

from browser_support import LAYOUT, NotebookSession, console_context, default_mismatches, drift, notebook_names

pytestmark = pytest.mark.browser

NOTEBOOKS = notebook_names()
MIN_SCALE = 0.9


@pytest.mark.parametrize("name", NOTEBOOKS or [pytest.param("(none)", marks=pytest.mark.skip("no notebooks"))])
def test_notebook_runs_and_every_slider_moves_its_explorer(name, lab_server, browser):
    started = time.monotonic()
    # the default layout of issue 19: a 1280 x 900 window with JupyterLab's file browser open
    session = NotebookSession(lab_server, browser, name, viewport=dict(LAYOUT), file_browser=True)
    try:
        session.open()
        run_seconds = session.run_all()
        errors = session.errors()
        assert not errors, f"{name}: errors on the page after Run All:\n" + "\n".join(errors) + console_context(session)
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
        differences = drift(session)
        assert not differences, f"{name}: live figures that differ from the kernel's drawing: {differences}"

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
            + console_context(session))
        print(f"{name}: Run All {run_seconds:.1f} s, {len(sliders)} sliders moved, "
              f"{session.counts()}, total {time.monotonic() - started:.1f} s")
    finally:
        session.close()


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
