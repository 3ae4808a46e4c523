"""The first half of the chapters in a real JupyterLab, in headless Chromium (DESIGN.md, "Testing layers" 4), plus
the page's markdown and the predict widgets: tests/chapter_walk.py walks each chapter (Run All, every control,
every slider) and replays a learner's moves on the same page. Chapters 05-09 are in
tests/test_browser_later_chapters.py, which pytest-xdist runs beside this file. Run with ``pytest -m browser``.
"""

from __future__ import annotations

import time

import pytest

from browser_support import NotebookSession, notebook_names
from chapter_walk import walk_and_replay

pytestmark = pytest.mark.browser

FIRST_HALF = [name for name in notebook_names() if name[:2] < "05"]


@pytest.mark.parametrize("name", FIRST_HALF or [pytest.param("(none)", marks=pytest.mark.skip("no notebooks"))])
def test_chapter_runs_every_control_moves_and_no_frame_goes_back_in_time(name, lab_server, browser):
    walk_and_replay(name, lab_server, browser)


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
