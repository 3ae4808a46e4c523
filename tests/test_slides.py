"""`make slides` (tools/build_slides.py, issue 47): reveal.js decks built from the chapter notebooks, offline.

Chapters 1 and 4 are built into a temporary folder (as `make slides` builds them all), then:
- each deck holds the chapter's title, a derivation in typeset maths, an explorer's figure and a predict question,
  and its scripts and styles are local files (reveal.js, RequireJS, jQuery, MathJax), never a CDN;
- in Chromium (browser), served from localhost: reveal.js starts, the deck has more than 15 slides, the title,
  a loaded figure image and a predict question are there, MathJax typesets, no page error, and no request
  leaves localhost.
"""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
pytest.importorskip("nbconvert")

LOCAL = ("http://127.0.0.1:", "data:", "blob:", "about:blank")   # about:blank: an empty frame, no request
CHAPTERS = {"01": ("01_batch_size_cost_and_speed.slides.html", "How batch size sets the cost"),
            "04": ("04_pipelining_is_not_wise.slides.html", "pipelining")}


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    import build_slides

    vendor = build_slides.VENDOR
    if not (vendor / "node_modules" / "reveal.js" / "dist" / "reveal.js").exists():
        import shutil
        if shutil.which("npm") is None:
            pytest.skip("make slides needs reveal.js from npm once, and npm is not installed")
    output = tmp_path_factory.mktemp("slides")
    built = build_slides.build(output, sorted(CHAPTERS))
    return output, {name: (title, slides) for name, title, slides in built}


@pytest.mark.slow
def test_each_deck_has_title_maths_figure_and_predict_question(decks):
    output, built = decks
    assert sorted(built) == sorted(name for name, _ in CHAPTERS.values())
    for name, words in CHAPTERS.values():
        text = (output / name).read_text(encoding="utf-8")
        title, slides = built[name]
        assert words.lower() in title.lower() and slides > 15, (name, title, slides)
        assert "<section" in text and "Predict" in text
        assert re.search(r'<img[^>]+src="data:image/png;base64,', text), f"{name}: no figure"
        assert "\\frac" in text or "\\begin" in text or "$$" in text, f"{name}: no typeset derivation"
        assert "import numpy" not in text and "from lecture_lib" not in text, f"{name}: code shown on a slide"
        for tag, attr in (("script", "src"), ("link", "href")):
            for url in re.findall(rf'<{tag}[^>]*\b{attr}="([^"]+)"', text):
                assert not re.match(r"(https?:)?//", url), f"{name}: {tag} from the network: {url}"
    for path in ("reveal.js/dist/reveal.js", "reveal.js/dist/reveal.css", "reveal.js/dist/theme/white.css",
                 "reveal.js/plugin/notes/notes.js", "vendor/require.js", "vendor/jquery.min.js", "mathjax/MathJax.js",
                 "index.html"):
        assert (output / path).exists(), path
    index = (output / "index.html").read_text(encoding="utf-8")
    assert all(name in index for name, _ in CHAPTERS.values())


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_the_deck_runs_in_chromium_with_no_request_leaving_localhost(decks, browser, chapter):
    from static_server import StaticServer, offline_context

    output, _ = decks
    name, words = CHAPTERS[chapter]
    with StaticServer(output) as server:
        context, blocked = offline_context(browser)
        page = context.new_page()
        requests, errors = [], []
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        try:
            page.goto(server.url("/" + name))
            page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=60_000)
            assert page.evaluate("Reveal.getTotalSlides()") > 15
            assert words.lower() in page.evaluate("Reveal.getSlides()[0].textContent").lower()
            page.wait_for_function("Array.from(document.images).some(i => i.complete && i.naturalWidth > 100)",
                                   timeout=30_000)
            assert page.evaluate("Reveal.getSlides().some(s => /Predict/.test(s.textContent))")
            page.wait_for_function("document.querySelectorAll('.MathJax, .MathJax_Display, .MathJax_SVG').length > 0",
                                   timeout=60_000)
            page.keyboard.press("ArrowRight")
            page.wait_for_function("Reveal.getIndices().h >= 1", timeout=10_000)
        finally:
            context.close()
    assert not errors, errors
    assert not blocked, f"requests that would leave localhost: {blocked}"
    assert requests and all(url.startswith(LOCAL) for url in requests), \
        [url for url in requests if not url.startswith(LOCAL)]
