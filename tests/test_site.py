"""``make site``: executed chapters as static HTML, readable offline (issue 16, item 5).

Builds the start page and chapter 1 (the full ``make site`` builds every chapter the same way) into
a temporary folder, then opens them in headless Chromium with every request outside localhost
refused: the math typesets with the site's own MathJax, and every explorer's figure is there as a
loaded image.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from static_server import StaticServer, offline_context

REPO = Path(__file__).resolve().parents[1]
CHAPTER = "01_batch_size_cost_and_speed.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    output = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, str(REPO / "tools" / "build_site.py"), "--output", str(output),
                           "--chapters", "00", "01"], capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, f"tools/build_site.py failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return output


def test_pages_are_self_contained(site):
    assert (site / "mathjax" / "MathJax.js").exists()
    index = (site / "index.html").read_text()
    assert CHAPTER in index and "00_start_here.html" in index
    page = (site / CHAPTER).read_text()
    assert 'src="mathjax/MathJax.js?config=' in page
    assert "application/vnd.jupyter.widget-state+json" not in page, "widget state left for a CDN renderer"
    assert page.count('class="lecture-figure"') >= 1
    for external in ("cdnjs.cloudflare.com", "unpkg.com", "cdn.jsdelivr.net"):
        assert f'src="https://{external}' not in page, f"a script loads from {external}"


@pytest.mark.browser
def test_offline_math_typesets_and_figures_load(site, browser):
    with StaticServer(site) as server:
        context, blocked = offline_context(browser)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(server.url("/index.html"))
            page.click(f'a[href="{CHAPTER}"]')
            page.wait_for_load_state("load")
            # MathJax 2 (HTML-CSS output) puts typeset math in span.MathJax; wait for its queue to drain
            page.wait_for_function("() => window.MathJax && MathJax.Hub && document.querySelectorAll('span.MathJax').length > 5",
                                   timeout=60_000)
            page.evaluate("() => new Promise(done => MathJax.Hub.Queue(done))")
            state = page.evaluate("""() => ({
                math: document.querySelectorAll('span.MathJax').length,
                mathErrors: [...document.querySelectorAll('span.MathJax, .MathJax_Error')]
                    .filter(e => (e.textContent || '').includes('Math Processing Error')).length,
                figures: [...document.querySelectorAll('img.lecture-figure')].map(i => [i.complete, i.naturalWidth]),
                explorers: document.querySelectorAll('.lecture-static.lecture-explorer').length,
            })""")
            assert state["math"] > 5 and state["mathErrors"] == 0, state
            assert state["explorers"] >= 1 and len(state["figures"]) >= state["explorers"], state
            assert all(done and width > 0 for done, width in state["figures"]), state["figures"]
            assert not blocked, f"the page asked the network for: {blocked}"
            assert not errors, errors
            print(f"{CHAPTER}: {state['math']} math elements, {len(state['figures'])} figures, offline")
        finally:
            context.close()


@pytest.mark.browser
def test_chapter_reads_from_disk(site, browser):
    """Opened as a file (file://), the page still finds its MathJax and its figures."""
    context, blocked = offline_context(browser, allowed=("file://", "data:"))
    page = context.new_page()
    try:
        page.goto((site / CHAPTER).as_uri())
        page.wait_for_function("() => window.MathJax && MathJax.Hub && document.querySelectorAll('span.MathJax').length > 5",
                               timeout=60_000)
        figures = page.evaluate("() => [...document.querySelectorAll('img.lecture-figure')].map(i => i.naturalWidth)")
        assert figures and all(width > 0 for width in figures), figures
        assert not blocked, blocked
    finally:
        context.close()
