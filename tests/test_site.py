"""``make site``: executed chapters as static HTML, readable offline (issue 16, item 5).

Builds the start page and chapter 1 (the full ``make site`` builds every chapter the same way) into
a temporary folder, then opens them in headless Chromium with every request outside localhost
refused: the math typesets with the site's own MathJax, and every explorer's figure is there as a
loaded image.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from static_server import StaticServer, offline_context

pytestmark = pytest.mark.slow      # every test reads a site built by executing chapters (a minute or two)

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


def test_each_page_is_titled_by_its_chapter(site):
    """A browser tab or bookmark reads the chapter's own title, not nbconvert's default "Notebook" (issue 31)."""
    import re

    for page in pages(site):
        if page.name == "index.html":
            continue
        title = re.search(r"<title>(.*?)</title>", page.read_text(), flags=re.S).group(1)
        heading = re.search(r"<h1[^>]*>(.*?)<", page.read_text(), flags=re.S).group(1).strip()
        assert title.startswith(heading[:30]) and "The math behind" in title, (page.name, title, heading)


def pages(site):
    return sorted(site.rglob("*.html"))


def test_exercise_pages_are_the_students_version_and_nothing_leads_to_the_solutions(site):
    exercise = site / "exercises" / CHAPTER
    assert exercise.is_file(), "the students' exercise page is part of the site"
    assert not [p for p in site.rglob("*") if "solution" in p.name.lower()], "no solutions page"
    text = exercise.read_text()
    assert "Problem 1.1" in text and "answer = ..." in text
    assert "BEGIN SOLUTION" not in text and "solutions/" not in text
    assert "Level:" in text, "each problem shows its level"
    chapter = (site / CHAPTER).read_text()
    assert f'href="exercises/{CHAPTER}"' in chapter, "the chapter links its exercise page inside the site"
    for page in pages(site):
        for target in re.findall(r'href="([^"]*)"', page.read_text()):
            assert "solutions" not in target, f"{page.name} links {target}"


def test_every_relative_link_stays_inside_the_site(site):
    """Each relative href/src resolves inside site/; a missing target may only be a page of a chapter
    this partial build left out."""
    built = {"00", "01"}
    for page in pages(site):
        for target in re.findall(r'(?:href|src)="([^"]+)"', page.read_text()):
            if re.match(r"^(?:[a-z][a-z0-9+.-]*:|#|//)", target):
                continue
            resolved = (page.parent / target.split("#")[0].split("?")[0]).resolve()
            assert resolved.is_relative_to(site.resolve()), f"{page.name}: {target} points outside site/"
            if not resolved.exists():
                assert resolved.suffix == ".html" and resolved.name[:2] not in built, f"{page.name}: {target}"
                folder = "exercises" if resolved.parent.name == "exercises" else "notebooks"
                assert (REPO / folder / resolved.with_suffix(".ipynb").name).is_file(), f"{page.name}: {target}"


def test_predict_questions_are_a_prompt_and_a_collapsed_answer(site):
    page = (site / CHAPTER).read_text()
    assert page.count('<details class="lecture-predict">') >= 1
    assert "Enter a guess first" not in page and "Show anyway" not in page, "a static page has no guess box"
    assert re.search(r'<details class="lecture-predict"><summary>Reveal: ', page), "the prose's 'Reveal' opens it"
    # issue 29: what would give the answer away (chapter 1's batch explorer) is collapsed until clicked
    cover = re.search(r'<details class="lecture-predict lecture-cover"><summary>Covered until you have made your '
                      r'guess: the batch explorer[^<]*</summary>(.*?)</details>', page, re.S)
    assert cover and "lecture-figure" in cover.group(1), "the covered explorer is inside, one click away"
    assert "Show it anyway" not in page


def test_every_image_has_a_text_alternative(site):
    for page in pages(site):
        text = page.read_text()
        assert "No description has been provided" not in text, page.name
        for tag in re.findall(r"<img\b[^>]*>", text):
            assert re.search(r'alt="[^"]{3,}"', tag), (page.name, tag[:120])


@pytest.mark.browser
def test_offline_math_typesets_and_figures_load(site, browser):
    with StaticServer(site) as server:
        context, blocked = offline_context(browser)
        page = context.new_page()
        errors, failed = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: failed.append(f"{r.url} ({r.failure})")
                if not r.url.startswith("about:") else None)   # not a network request
        page.on("response", lambda r: failed.append(f"{r.url} ({r.status})") if r.status >= 400 else None)
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
            page.wait_for_load_state("networkidle")
            assert not blocked, f"the page asked the network for: {blocked}"
            assert not failed, f"requests failed (MathJax fonts?): {failed}"
            assert not errors, errors
            fonts = page.evaluate("() => MathJax.OutputJax['HTML-CSS'] && MathJax.OutputJax['HTML-CSS'].fontInUse")
            assert fonts == "STIX-Web", f"MathJax uses {fonts!r}, not its bundled web font"
            exercise = context.new_page()
            exercise.on("requestfailed", lambda r: failed.append(f"{r.url} ({r.failure})")
                        if not r.url.startswith("about:") else None)
            exercise.on("response", lambda r: failed.append(f"{r.url} ({r.status})") if r.status >= 400 else None)
            exercise.goto(server.url(f"/exercises/{CHAPTER}"))
            exercise.wait_for_function("() => window.MathJax && MathJax.Hub && document.querySelectorAll('span.MathJax').length > 0",
                                       timeout=60_000)
            exercise.wait_for_load_state("networkidle")
            assert not failed and not blocked, (failed, blocked)
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


def _build_site_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_site_for_tests", REPO / "tools" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_site_predict_prompts_do_not_ask_for_a_box_the_page_lacks():
    import nbformat

    build_site = _build_site_module()
    prompts = 0
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and "Type a number" in cell.source:
                prompts += 1
                text = build_site.site_prompts(cell.source)
                assert "box" not in text and "Type a number" not in text, (path.name, text)
                assert "Write your number down before you open the answer" in text
    assert prompts >= 5


def test_a_folded_derivation_is_a_collapsed_details_on_the_page_and_its_source_is_not_shown():
    """A code cell JupyterLab shows folded (``jupyter.source_hidden``: Ch3's bubble derivations spell the answer
    out) is, on the page, a closed ``<details>`` holding its code above its outputs, not code in plain view."""
    import nbformat

    build_site = _build_site_module()
    notebook = nbformat.v4.new_notebook()
    derivation = nbformat.v4.new_code_cell("idle = (P - 1) * (t_F + t_B)\n\nderived = idle / (useful + idle)")
    derivation.metadata["jupyter"] = {"source_hidden": True}
    derivation.outputs = [nbformat.v4.new_output("stream", text="the formula holds\n")]
    notebook.cells = [nbformat.v4.new_markdown_cell("# Title"), derivation, nbformat.v4.new_code_cell("shown = 1")]
    build_site.fold_hidden_sources(notebook)
    page = build_site.to_html(notebook)
    folded = re.search(r"<details class=.lecture-hidden-source.>(.*?)</details>", page, re.S)
    assert folded and "derived = idle / (useful + idle)" in html_unescape(folded.group(1))
    outside = page.replace(folded.group(0), "")
    assert "derived" not in outside and "(useful + idle)" not in outside          # the source is not shown twice
    assert "the formula holds" in outside and "shown" in outside                 # its outputs and other cells are


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


def test_chapter3_derivations_that_spell_out_the_bubble_are_folded():
    """Ch3's cells that derive (P−1)/(m+P−1) and its interleaved form sit under the second question's unrevealed
    reveal; a learner reading down after Run All could evaluate them at P = m = 4, so their code is folded."""
    import nbformat

    path = next((REPO / "notebooks").glob("03_*.ipynb"))
    derivations = [cell for cell in nbformat.read(path, as_version=4).cells
                   if cell.cell_type == "code" and "idle / (useful +" in cell.source.replace("interleaved_time", "idle")]
    assert len(derivations) == 2
    assert all(cell.metadata.get("jupyter", {}).get("source_hidden") for cell in derivations)
