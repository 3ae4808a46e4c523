"""Build reveal.js slides for each chapter from the chapter notebooks (``make slides``), readable offline.

Each chapter is executed the way ``make site`` executes it (``tools/build_site.py``: its ``execute`` runs the
notebook with the site's setup, so every explorer leaves a still PNG of its figure, each predict question its
prompt and a collapsed answer, and ``freeze_widgets`` turns the widgets into plain HTML). Then the cells that
make a lecture's slides are chosen and marked with nbconvert's ``slideshow`` metadata, the rest skipped:

* the chapter's title (its first ``#`` heading and the paragraph under it) and each section's ``##`` heading;
* the derivations: every code cell whose output is typeset maths (SymPy's LaTeX), shown without its code;
* the key figures: every explorer's still figure, with its controls' values and readout;
* the predict questions: the chapter's "**Predict first.**" quote, and its reveal on the slide after.

nbconvert's ``SlidesExporter`` (its ``reveal`` template) writes ``slides/NN_<topic>.slides.html``. Nothing is
fetched from a CDN: ``SlidesExporter.reveal_url_prefix`` points at a copy of reveal.js in ``slides/reveal.js/``
(the template loads ``<prefix>/dist/reveal.js``, ``dist/reveal.css``, ``dist/theme/<theme>.css`` and
``plugin/notes/notes.js``), RequireJS and jQuery sit in ``slides/vendor/``, MathJax is the site's copy
(``jupyter-server-mathjax``), and the template's Mermaid and Font Awesome links point at local stubs. reveal.js,
RequireJS and jQuery come from npm, pinned (:data:`NPM_PACKAGES`), installed once into ``build/slides-vendor/``
(``--vendor DIR`` to use a copy you already have, laid out as ``DIR/node_modules/<package>``).

Usage: ``python tools/build_slides.py [--output slides] [--chapters 01 02 ...] [--vendor DIR]``.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_site

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
VENDOR = REPO / "build" / "slides-vendor"
NPM_PACKAGES = ("reveal.js@4.6.1", "requirejs@2.3.7", "jquery@3.7.1")
REVEAL = "reveal.js"                 # SlidesExporter.reveal_url_prefix, relative to each deck
MERMAID_STUB = "./vendor/mermaid-stub.mjs"   # an ES module import: relative specifiers need ./
EMPTY_CSS = "vendor/empty.css"
SLIDE_CSS = """<style>
  .reveal .slides section { text-align: left; font-size: 0.62em; }
  .reveal .slides section h1 { font-size: 1.9em; }
  .reveal .slides section h2 { font-size: 1.45em; }
  .reveal img { max-height: 440px; width: auto; }
  .reveal .lecture-static { border: 1px solid #ddd; border-radius: 4px; padding: 6px 10px; }
  .reveal .lecture-static .lecture-static-body { display: flex; flex-flow: row wrap; gap: 12px; }
  .reveal .lecture-static table { font-size: 0.7em; }
  .reveal .lecture-static-note { display: none; }
  .reveal .lecture-predict { border-left: 4px solid #9467bd; padding: 4px 10px; }
  .reveal blockquote { width: 92%; text-align: left; font-style: normal; }
</style>
"""


# --- Vendored JavaScript ---------------------------------------------------------------------------
def ensure_vendor(vendor: Path = VENDOR) -> Path:
    """``vendor/node_modules`` holding reveal.js, requirejs and jquery: installed with npm when missing."""
    modules = vendor / "node_modules"
    needed = [modules / "reveal.js" / "dist" / "reveal.js", modules / "requirejs" / "require.js",
              modules / "jquery" / "dist" / "jquery.min.js"]
    if all(path.exists() for path in needed):
        return modules
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("make slides needs reveal.js from npm once (then it is kept in build/slides-vendor/): "
                         "install npm (apt-get install -y npm), or pass --vendor DIR holding "
                         "node_modules/reveal.js, node_modules/requirejs and node_modules/jquery")
    vendor.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--no-save", "--no-audit", "--no-fund", "--no-package-lock", "--prefix",
                    str(vendor), *NPM_PACKAGES], check=True)
    missing = [str(path) for path in needed if not path.exists()]
    if missing:
        raise SystemExit(f"npm did not install {missing}")
    return modules


def copy_vendor(modules: Path, output: Path) -> None:
    """reveal.js (dist and the notes plugin), RequireJS, jQuery, MathJax and two stubs into ``output``."""
    reveal = output / REVEAL
    if reveal.exists():
        shutil.rmtree(reveal)
    shutil.copytree(modules / "reveal.js" / "dist", reveal / "dist", ignore=shutil.ignore_patterns("*.map", "*.esm.js"))
    shutil.copytree(modules / "reveal.js" / "plugin" / "notes", reveal / "plugin" / "notes",
                    ignore=shutil.ignore_patterns("*.esm.js"))
    for name in ("LICENSE",):
        if (modules / "reveal.js" / name).exists():
            shutil.copy(modules / "reveal.js" / name, reveal / name)
    vendor = output / "vendor"
    vendor.mkdir(parents=True, exist_ok=True)
    shutil.copy(modules / "requirejs" / "require.js", vendor / "require.js")
    shutil.copy(modules / "jquery" / "dist" / "jquery.min.js", vendor / "jquery.min.js")
    # the reveal template imports Mermaid as an ES module and links Font Awesome; the slides use neither
    (output / MERMAID_STUB.removeprefix("./")).write_text("export default { initialize() {} };\n")
    (output / EMPTY_CSS).write_text("/* the slides use no icon font */\n")
    build_site.copy_mathjax(output)


# --- Choosing the slides -------------------------------------------------------------------------
def _mark(cell, kind: str) -> None:
    cell.metadata["slideshow"] = {"slide_type": kind}


def _is_maths(output) -> bool:
    data = output.get("data", {})
    return "text/latex" in data or ("text/markdown" in data and "$" in str(data["text/markdown"]))


def _figure(cell) -> bool:
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/png" in data or "<img" in str(data.get("text/html", "")):
            return True
    return False


_TYPE_IN_A_BOX = re.compile(r"(?:Type|Guess)(?:[^.;]|e\.g\.|\d\.\d)*\bbox(?:es)?\b[^.]*\.")


def _on_a_slide(question: str) -> str:
    """A question as a slide can ask it: a slide has no box to type into, and its answer is on the next slide."""
    return _TYPE_IN_A_BOX.sub("Write your guess down: the answer is on the next slide.", question)


def _question(source: str) -> str:
    """The question a predict (or open-question) cell answers: the last block quote of the markdown above it
    (``> **Predict.** ...``), or else its last paragraph."""
    blocks = [block.strip() for block in source.strip().split("\n\n") if block.strip()]
    quotes = [block for block in blocks if block.startswith(">")]
    if quotes:
        # a quote may span several blocks separated by "> " lines: take the whole last run of quoted blocks
        run = []
        for block in reversed(blocks):
            if not block.startswith(">"):
                if run:
                    break
                continue
            run.insert(0, block)
        return "\n\n".join(run)
    return blocks[-1] if blocks else ""


def select_slides(notebook) -> dict:
    """Mark ``notebook``'s cells for reveal.js (new cells for the title and the questions); returns counts."""
    import nbformat

    counts = {"title": 0, "sections": 0, "derivations": 0, "figures": 0, "predict": 0}
    cells = []
    titled, previous = False, None
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            lines = cell.source.strip().split("\n")
            if not titled and lines and lines[0].startswith("# "):
                first_paragraph = cell.source.strip().split("\n\n")[:2]
                title = nbformat.v4.new_markdown_cell("\n\n".join(first_paragraph))
                _mark(title, "slide")
                cells.append(title)
                titled = True
                counts["title"] += 1
            elif lines and lines[0].startswith("## "):
                heading = nbformat.v4.new_markdown_cell(lines[0])
                _mark(heading, "slide")
                cells.append(heading)
                counts["sections"] += 1
            previous = cell
            continue
        if cell.cell_type != "code":
            continue
        asks = ".ask(" in cell.source or re.search(r"^my_answers\s*=", cell.source, re.MULTILINE)
        if asks and previous is not None and _question(previous.source):
            heading = "### Predict first" if ".ask(" in cell.source else "### Before the chapter: three questions"
            question = nbformat.v4.new_markdown_cell(f"{heading}\n\n{_on_a_slide(_question(previous.source))}")
            _mark(question, "slide")
            cells.append(question)
            counts["predict"] += 1
            previous = None
        elif ".reveal()" in cell.source and cell.get("outputs"):
            _mark(cell, "subslide")          # the collapsed answer, after the question
            cells.append(cell)
        elif _figure(cell):
            for output in cell.outputs:   # a figure covered until a guess (predict.cover) stands open on its slide
                data = output.get("data", {})
                if "text/html" in data:
                    data["text/html"] = re.sub(r"<details(?![^>]*\bopen\b)", "<details open", str(data["text/html"]))
            _mark(cell, "slide")
            cells.append(cell)
            counts["figures"] += 1
        elif any(_is_maths(output) for output in cell.get("outputs", [])):
            cell.outputs = [output for output in cell.outputs if _is_maths(output)]
            _mark(cell, "subslide")
            cells.append(cell)
            counts["derivations"] += 1
    notebook.cells = cells
    return counts


# --- Export --------------------------------------------------------------------------------------
_REVEAL_CALLBACK = "function(Reveal, RevealNotes){"


def to_slides(notebook) -> str:
    from nbconvert import SlidesExporter

    exporter = SlidesExporter(
        reveal_url_prefix=REVEAL, reveal_theme="white", reveal_scroll=True, reveal_transition="none", reveal_number="c/t",
        mathjax_url=build_site.MATHJAX_URL, require_js_url="vendor/require.js", jquery_url="vendor/jquery.min.js",
        mermaid_js_url=MERMAID_STUB, mermaid_layout_elk_js_url=MERMAID_STUB, font_awesome_url=EMPTY_CSS,
        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(notebook)
    if "<!-- Load mathjax -->" not in body or _REVEAL_CALLBACK not in body:
        raise RuntimeError("nbconvert's reveal template changed: no MathJax marker or Reveal callback to extend")
    body = body.replace("<!-- Load mathjax -->", build_site.MATHJAX_FONTS + "<!-- Load mathjax -->", 1)
    # RequireJS hands Reveal to the template's callback only; keep it reachable (tests, the browser console)
    body = body.replace(_REVEAL_CALLBACK, _REVEAL_CALLBACK + " window.Reveal = Reveal;", 1)
    return body.replace("</head>", SLIDE_CSS + "</head>", 1)


def write_index(output: Path, decks: list[tuple[str, str, int]]) -> None:
    items = "".join(f'<li><a href="{html.escape(name)}">{html.escape(title)}</a> ({slides} slides)</li>'
                    for name, title, slides in decks)
    (output / "index.html").write_text(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Slides · {html.escape(build_site.SITE_TITLE)}</title>
<style>body{{font-family:sans-serif;max-width:860px;margin:40px auto;line-height:1.5;padding:0 12px}}</style>
</head><body>
<h1>Slides: the math behind how LLMs are trained and served</h1>
<p>One reveal.js deck per chapter, built from the chapter notebooks (<code>make slides</code>): the title, each
section, the derivations, each explorer's figure at its default settings and the predict questions (the answer on
the slide after each question). Arrow keys move; <kbd>S</kbd> opens the speaker view. Everything here works offline.
To move the sliders live in class, use <code>make present CH=01</code>.</p>
<ol>{items}</ol>
</body></html>
""", encoding="utf-8")


def build(output: Path, selected: list[str] | None = None, *, vendor: Path = VENDOR) -> list[tuple[str, str, int]]:
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("LECTURE_PIXEL_RATIO", "2")
    os.environ.setdefault("LECTURE_FIGURE", "png")      # each explorer leaves one whole PNG (build_site does the same)
    modules = ensure_vendor(vendor)
    output.mkdir(parents=True, exist_ok=True)
    copy_vendor(modules, output)
    paths = [p for p in build_site.chapters(selected, NOTEBOOKS) if not p.name.startswith("00")]
    if not paths:
        raise SystemExit(f"no chapter matches {selected}")
    decks = []
    for path in paths:
        started = time.monotonic()
        name = path.stem + ".slides.html"
        notebook = build_site.execute(path, name)
        build_site.freeze_widgets(notebook)
        title = build_site.title_of(notebook, path.stem)
        counts = select_slides(notebook)
        notebook.metadata["title"] = title
        (output / name).write_text(to_slides(notebook), encoding="utf-8")
        slides = sum(1 for c in notebook.cells if c.metadata.get("slideshow", {}).get("slide_type") in ("slide", "subslide"))
        decks.append((name, title, slides))
        print(f"{name}: {slides} slides ({', '.join(f'{v} {k}' for k, v in counts.items())}), "
              f"{time.monotonic() - started:.1f} s", flush=True)
    write_index(output, decks)
    print(f"slides in {output}: open {output / 'index.html'} (or serve the folder: python -m http.server -d {output})")
    return decks


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=REPO / "slides")
    parser.add_argument("--chapters", nargs="*", help="chapter number prefixes, e.g. 01 02 (default: every chapter and the lab, 01-11)")
    parser.add_argument("--vendor", type=Path, default=VENDOR,
                        help="folder with node_modules/{reveal.js,requirejs,jquery} (default build/slides-vendor, "
                             "filled by npm on first use)")
    args = parser.parse_args(argv)
    build(args.output.resolve(), args.chapters, vendor=args.vendor.resolve())


if __name__ == "__main__":
    main()
