"""Build the course as a static web site (``make site``): every chapter executed and converted to
HTML, readable offline, with no kernel and no network.

* Each chapter runs top to bottom (nbclient, as ``make test`` does) with its widget state stored.
* Every widget output is then replaced by a static HTML copy of what it showed: an explorer
  becomes its title, its figure as an ``<img>`` (the PNG the figure widget held), the values of its
  controls and its readout table. So the site shows each explorer's current figure without any
  widget JavaScript, and the widget state is dropped from the notebook (nbconvert would otherwise
  load the widget renderer from a CDN).
* nbconvert's lab template renders the HTML; MathJax 2 comes from the ``jupyter-server-mathjax``
  package, copied into ``mathjax/`` in the site, and the pages point at that copy.
* MathJax is configured for the STIX-Web fonts the package ships (its default, the TeX fonts, is
  not in the package, so every page would ask for ``fonts/TeX/fontdata.js`` and fail).
* The exercise notebooks (the students' version from ``exercises/``, never ``solutions/``) become
  ``exercises/NN_<topic>.html``: executed, their banner replaced by one for the site, the check
  cells' outputs dropped. Links between notebooks point at the pages; links to anything the site
  does not hold (the solutions) are reduced to their text.
* A predict-then-reveal question (``lecture_lib.explorers.predict``) becomes its prompt and a collapsed
  ``<details>`` answer, and a cover over outputs that would give the answer (``Prediction.cover``) a
  collapsed ``<details>`` holding them; every static figure gets a text alternative (its titles and axis labels).
  A code cell whose source JupyterLab shows collapsed (``jupyter.source_hidden``: a derivation that would give
  an answer away) becomes a collapsed ``<details>`` holding its code, above its outputs.
* ``index.html`` lists the chapters and the exercise pages.

Usage: ``python tools/build_site.py [--output site] [--chapters 00 01 ...]``.
"""

from __future__ import annotations

import argparse
import base64
import html
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
EXERCISES = REPO / "exercises"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# jupyter-server-mathjax ships MathJax 2 with the HTML-CSS output and its STIX web fonts
MATHJAX_URL = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# MathJax 2's HTML-CSS output defaults to the TeX fonts, which jupyter-server-mathjax does not ship
# (fonts/HTML-CSS/TeX/...): point it at the STIX-Web fonts that are in the package, for both outputs.
MATHJAX_FONTS = """<script type="text/x-mathjax-config">
MathJax.Hub.Config({
  "HTML-CSS": {availableFonts: ["STIX-Web"], preferredFont: "STIX-Web", webFont: "STIX-Web", imageFont: null},
  "SVG": {font: "STIX-Web"}
});
</script>
"""
# no widget JavaScript runs on the site, so RequireJS is not needed: an empty script, not a CDN
EMPTY_SCRIPT = "data:text/javascript,"

SITE_CSS = """
<style>
  .lecture-static { border: 1px solid #ddd; border-radius: 4px; padding: 8px 12px; margin: 6px 0; }
  .lecture-static .lecture-static-body { display: flex; flex-flow: row wrap; gap: 16px; align-items: flex-start; }
  .lecture-static img.lecture-figure { max-width: 100%; height: auto; }
  .lecture-static .lecture-static-controls { font-size: 13px; margin: 0 0 6px 0; padding-left: 1.2em; }
  .lecture-static-note { color: #777; font-size: 12px; margin-top: 4px; }
  .lecture-predict { border-left: 4px solid #9467bd; padding: 4px 10px; margin: 6px 0; }
  .lecture-predict summary { cursor: pointer; font-weight: bold; }
</style>
"""


# --- Widget state -> static HTML ----------------------------------------------------------------
class StaticWidgets:
    """Render saved ipywidgets models as plain HTML (enough for the course's explorers)."""

    def __init__(self, state: dict):
        self.state = state

    def model(self, ref) -> dict | None:
        if isinstance(ref, str) and ref.startswith("IPY_MODEL_"):
            ref = ref[len("IPY_MODEL_"):]
        return self.state.get(ref)

    @staticmethod
    def _buffer(entry: dict, name: str) -> bytes | None:
        for buffer in entry.get("buffers", []) or []:
            if buffer.get("path") == [name]:
                data = buffer.get("data", "")
                return base64.b64decode(data) if buffer.get("encoding", "base64") == "base64" else data.encode()
        value = entry.get("state", {}).get(name)
        return value.encode() if isinstance(value, str) else None

    def render(self, ref) -> str:
        entry = self.model(ref)
        if entry is None:
            return ""
        state = entry.get("state", {})
        name = entry.get("model_name", "")
        classes = " ".join(state.get("_dom_classes", []) or [])
        if name in ("VBoxModel", "HBoxModel", "BoxModel", "GridBoxModel"):
            return self._box(state, classes)
        if name == "ImageModel":
            data = self._buffer(entry, "value")
            if not data:
                return ""
            mime = "image/svg+xml" if state.get("format") == "svg+xml" else f"image/{state.get('format', 'png')}"
            uri = f"data:{mime};base64,{base64.b64encode(data).decode()}"
            alt = html.escape(state.get("tooltip") or "figure", quote=True)   # the explorer's text summary
            return f'<img class="{html.escape(classes or "lecture-figure")}" src="{uri}" alt="{alt}">'
        if name in ("HTMLModel", "HTMLMathModel"):
            return f'<div class="{html.escape(classes)}">{state.get("value", "")}</div>'
        if name == "LabelModel":
            return f"<div>{html.escape(str(state.get('value', '')))}</div>"
        if name == "OutputModel":
            return "".join(_output_html(output) for output in state.get("outputs", []))
        return ""   # controls are listed by the box that holds them

    def _controls(self, children: list) -> list[str]:
        rows = []
        for ref in children:
            entry = self.model(ref)
            if entry is None:
                continue
            state, name = entry.get("state", {}), entry.get("model_name", "")
            label = html.escape(str(state.get("description", "")).strip())
            if name.endswith("SliderModel") or name in ("BoundedFloatTextModel", "FloatTextModel", "IntTextModel"):
                value = state.get("value")      # a FloatLogSlider's value is the linear one too
                rows.append(f"<li>{label} <b>{html.escape(_number(value, state.get('readout_format', '.3g')))}</b></li>")
            elif name in ("DropdownModel", "SelectModel", "RadioButtonsModel", "ToggleButtonsModel"):
                labels, index = state.get("_options_labels", []), state.get("index")
                shown = labels[index] if isinstance(index, int) and 0 <= index < len(labels) else ""
                rows.append(f"<li>{label} <b>{html.escape(str(shown))}</b></li>")
            elif name in ("CheckboxModel", "ToggleButtonModel"):
                rows.append(f"<li>{label} <b>{'on' if state.get('value') else 'off'}</b></li>")
        return rows

    def _box(self, state: dict, classes: str) -> str:
        children = state.get("children", [])
        controls = self._controls(children)
        parts = [self.render(ref) for ref in children]
        body = "".join(parts)
        listing = f'<ul class="lecture-static-controls">{"".join(controls)}</ul>' if controls else ""
        if "lecture-cover" in classes.split():
            # a cover over an answer (lecture_lib.explorers.predict): collapsed until clicked, as the answer is
            bar = next((self.model(ref) for ref in children
                        if "lecture-cover-bar" in (self.model(ref) or {}).get("state", {}).get("_dom_classes", [])), None)
            what = next((str((self.model(ref) or {}).get("state", {}).get("tooltip") or "")
                         for ref in (bar or {}).get("state", {}).get("children", [])
                         if (self.model(ref) or {}).get("model_name") == "HTMLModel"), "") or "what follows"
            summary = f"Covered until you have made your guess: {what} would give the answer away. Click to open."
            inside = "".join(self.render(ref) for ref in children if self.model(ref) is not bar)
            return (f"<details class='lecture-predict lecture-cover'><summary>{html.escape(summary)}</summary>"
                    f"{inside}</details>")
        if "lecture-explorer" in classes:
            return (f'<div class="lecture-static {html.escape(classes)}">{body}'
                    '<div class="lecture-static-note">A snapshot at the default settings: run the chapter '
                    "in JupyterLab (<code>make lab</code>) to move the sliders.</div></div>")
        if state.get("_view_name") == "HBoxView" or "HBox" in state.get("_model_name", ""):
            return f'<div class="lecture-static-body">{body}{listing}</div>' if listing else \
                f'<div class="lecture-static-body">{body}</div>'
        return f"<div>{listing}{body}</div>"


def _number(value, spec: str) -> str:
    try:
        if spec and not spec[-1].isalpha() and spec[-1] != "%":   # d3's no-type spec is ~g: Python's g trims too
            spec += "g"
        return format(float(value), spec)
    except (TypeError, ValueError):
        return str(value)


def _output_html(output: dict) -> str:
    data = output.get("data", {})
    if output.get("output_type") == "stream":
        return f"<pre>{html.escape(output.get('text', ''))}</pre>"
    if "text/html" in data:
        value = data["text/html"]
        return "".join(value) if isinstance(value, list) else value
    if "image/png" in data:
        return f'<img src="data:image/png;base64,{data["image/png"]}" alt="figure">'
    if "text/plain" in data:
        value = data["text/plain"]
        return f"<pre>{html.escape(''.join(value) if isinstance(value, list) else value)}</pre>"
    return ""


def freeze_widgets(notebook) -> int:
    """Replace every widget output by its static HTML and drop the widget state; returns how many."""
    saved = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    widgets = StaticWidgets(saved)
    count = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            view = data.get(WIDGET_VIEW)
            if not view:
                continue
            rendered = widgets.render(view.get("model_id", ""))
            output["data"] = {"text/html": rendered or "<p><i>(an interactive widget: run the chapter "
                                                       "in JupyterLab to use it)</i></p>"}
            count += 1
    notebook.metadata.pop("widgets", None)
    return count


# --- What the kernel does differently for the site -----------------------------------------------
# Run first in every page's kernel (and removed from the page): a predict question shows its prompt
# and a collapsed answer instead of a guess box and a Reveal button no static page can press, and
# lecture_lib.explorers.plots.to_image gives each still figure a text alternative.
SITE_SETUP = r'''
import html as _html
from lecture_lib.explorers import plots as _plots, predict as _predict


class _StaticHTML:
    def __init__(self, text):
        self.text = text

    def _repr_html_(self):
        return self.text

    def __repr__(self):
        import re
        return _html.unescape(re.sub(r"<[^>]+>", " ", self.text))


def _static_view(self, kind, label="your guess"):
    if kind == "ask":
        which = "" if label == "your guess" else f" ({_html.escape(label)})"
        return _StaticHTML(f"<div class='lecture-predict'>&#9999;&#65039; <b>Predict first{which}:</b> write down "
                           "your guess before reading on; the answer is further down the page.</div>")
    unit = f" {self.unit}" if self.unit else ""
    rows = [f"Answer, from the lecture's fixed numbers: <b>{_html.escape(_predict._fmt(float(self.answer())) + unit)}</b>"]
    rows += [f"{_html.escape(label)}: <b>{_html.escape(_predict._fmt(float(value())) + unit)}</b>"
             for label, value in self.comparisons]
    if self.note:
        rows.append(_html.escape(self.note))
    return _StaticHTML(f"<details class='lecture-predict'><summary>Reveal: {_html.escape(self.name)} "
                       f"(your guess first)</summary>{'<br>'.join(rows)}</details>")


_predict.Prediction._view = _static_view


def _describe(figure):
    parts = []
    if getattr(figure, "_suptitle", None) is not None and figure._suptitle.get_text():
        parts.append(figure._suptitle.get_text())
    for axes in figure.get_axes():
        bits = [axes.get_title(), axes.get_xlabel() and f"x: {axes.get_xlabel()}",
                axes.get_ylabel() and f"y: {axes.get_ylabel()}"]
        bits = [b for b in bits if b]
        if bits:
            parts.append(", ".join(bits))
    return "Figure: " + ("; ".join(parts) if parts else "a chart")


class _AltImage:
    def __init__(self, figure):
        import base64, io
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=_plots.DPI)
        self.alt = _describe(figure)
        self.data = base64.b64encode(buffer.getvalue()).decode()

    def _repr_html_(self):
        return (f'<img class="lecture-still" src="data:image/png;base64,{self.data}" '
                f'alt="{_html.escape(self.alt, quote=True)}" style="max-width:100%">')


_plots.to_image = _AltImage
'''
SETUP_ID = "site-setup"


def site_target(repo_path: Path) -> str | None:
    """Where a repository notebook is on the site (relative to the site root), or None if the
    site does not hold it (the solutions, anything outside notebooks/ and exercises/)."""
    try:
        relative = repo_path.resolve().relative_to(REPO)
    except ValueError:
        return None
    if relative.suffix != ".ipynb" or len(relative.parts) != 2:
        return None
    folder, name = relative.parts
    if folder == "notebooks":
        return name[:-len(".ipynb")] + ".html"
    if folder == "exercises":
        return "exercises/" + name[:-len(".ipynb")] + ".html"
    return None


_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")


def site_links(source: str, notebook_path: Path, page: str) -> str:
    """Markdown ``source`` of ``notebook_path`` with its relative links pointed at the site's pages
    (``page`` is where this page is, relative to the site root); a link to a notebook the site does
    not have becomes its text."""
    def fix(match):
        text, target = match.group(1), match.group(2)
        if re.match(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|#|/)", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        where = site_target(notebook_path.parent / path)
        if where is None:
            return text
        relative = os.path.relpath(where, os.path.dirname(page) or ".")
        return f"[{text}]({relative}{'#' + anchor if anchor else ''})"

    return _LINK.sub(fix, source)


SITE_EXERCISES_BANNER = (
    "<div style=\"border-left:4px solid #1f77b4;padding:6px 12px;background:#f5f9ff\">\n\n"
    "**Practice problems.** This page shows the problems; to answer them and have each answer checked, open "
    "`exercises/{name}` in JupyterLab (`make lab`): replace `answer = ...` in a work cell with your own work "
    "and run the check cell under it. Hints unfold under each problem.\n\n</div>")


# A chapter's predict prompt asks the reader to type into the prediction box; a site page has no box
# (the question is followed by its collapsed answer), so it asks them to write the number down instead.
_TYPE_IN_THE_BOX = re.compile(r"Type a number in the box(?: below)?(?: and press Reveal)?")


def site_prompts(source: str) -> str:
    """``source`` with JupyterLab's "Type a number in the box below" put the way a static page can take it."""
    return _TYPE_IN_THE_BOX.sub("Write your number down before you open the answer", source)


def prepare(notebook, path: Path, page: str, *, exercise: bool) -> None:
    """Before execution: the site's setup cell first, links to site pages, and for an exercise page
    the site's banner."""
    import nbformat

    from lecture_lib.practice import exercises

    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = site_prompts(site_links(cell.source, path, page))
        if exercise and cell.get("id") == exercises.BANNER_ID:
            cell.source = SITE_EXERCISES_BANNER.format(name=path.name)
    setup = nbformat.v4.new_code_cell(SITE_SETUP)
    setup["id"] = SETUP_ID
    notebook.cells.insert(0, setup)


def finish(notebook, *, exercise: bool) -> None:
    """After execution: drop the setup cell, and an exercise page's check-cell outputs ("not
    answered yet" on every problem says nothing on a page that cannot be edited)."""
    from lecture_lib.practice import exercises

    notebook.cells = [cell for cell in notebook.cells if cell.get("id") != SETUP_ID]
    fold_hidden_sources(notebook)
    if exercise:
        for problem in exercises.problems(notebook):
            notebook.cells[problem.check].outputs = []


HIDDEN_SOURCE_SUMMARY = "The code of the cell below (it derives an answer: open once you have revealed your guess)"


def fold_hidden_sources(notebook) -> None:
    """JupyterLab shows a code cell with ``metadata.jupyter.source_hidden`` collapsed, one click from its code;
    the page does the same with a ``<details>`` holding the code, put above the cell, whose own source is then
    left out (nbconvert's ``transient.remove_source``). Its outputs stay where they are."""
    import nbformat

    folded = []
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("jupyter", {}).get("source_hidden"):
            code = html.escape(cell.source)
            code = code.replace("\n", "&#10;")     # one line: a blank line would end the markdown's HTML block
            folded.append(nbformat.v4.new_markdown_cell(
                f"<details class='lecture-hidden-source'><summary>{HIDDEN_SOURCE_SUMMARY}</summary>"
                f"<pre><code>{code}</code></pre></details>"))
            cell.metadata.setdefault("transient", {})["remove_source"] = True
        folded.append(cell)
    notebook.cells = folded


# --- Build --------------------------------------------------------------------------------------
# Labs are numbered after the lecture's chapters (so those keep their numbers) but read right after the chapter they
# follow: "11_lab_..." comes after Chapter 1, on the site's index as in the README and the start page.
LAB_AFTER = {"11": 1}


def reading_order(path: Path) -> tuple:
    """Sort key: a chapter's number, or a lab's place just after the chapter it follows (:data:`LAB_AFTER`)."""
    prefix = path.name[:2]
    return (LAB_AFTER[prefix] + 0.5, path.name) if prefix in LAB_AFTER else (int(prefix) if prefix.isdigit() else 99,
                                                                             path.name)


def chapters(selected: list[str] | None, folder: Path = NOTEBOOKS) -> list[Path]:
    paths = sorted((p for p in folder.glob("*.ipynb") if not p.name.startswith(".")), key=reading_order)
    if selected:
        paths = [p for p in paths if any(p.name.startswith(prefix) for prefix in selected)]
    return paths


SITE_TITLE = "The math behind how LLMs are trained and served"


def title_of(notebook, fallback: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+)$", cell.source, flags=re.M)
            if match:
                return match.group(1).strip()
    return fallback


def execute(path: Path, page: str, *, exercise: bool = False):
    import nbformat
    from lecture_lib.practice.notebook_client import SlicedPollClient

    notebook = nbformat.read(path, as_version=4)
    prepare(notebook, path, page, exercise=exercise)
    SlicedPollClient(notebook, timeout=600, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    finish(notebook, exercise=exercise)
    return notebook


def to_html(notebook, page: str = "index.html") -> str:
    """The page's HTML; ``page`` (its place in the site) sets the relative path to the site's MathJax."""
    from nbconvert import HTMLExporter

    up = "../" * page.count("/")
    exporter = HTMLExporter(template_name="lab", mathjax_url=up + MATHJAX_URL, require_js_url=EMPTY_SCRIPT)
    body, _ = exporter.from_notebook_node(notebook)
    if "No description has been provided" in body:
        raise RuntimeError("an image on the page has no text alternative")
    if "<!-- Load mathjax -->" not in body:
        raise RuntimeError("nbconvert's template changed: no '<!-- Load mathjax -->' to put the font config before")
    body = body.replace("<!-- Load mathjax -->", MATHJAX_FONTS + "<!-- Load mathjax -->", 1)
    return body.replace("</head>", SITE_CSS + "</head>", 1)


def copy_mathjax(output: Path) -> None:
    import jupyter_server_mathjax

    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    if not (source / "MathJax.js").exists():
        raise RuntimeError(f"MathJax not found in {source}")
    target = output / "mathjax"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.map"))


def write_index(output: Path, entries: list[tuple[str, str]], practice: list[tuple[str, str]] = ()) -> None:
    items = "".join(f'<li><a href="{html.escape(name)}">{html.escape(title)}</a></li>' for name, title in entries)
    problems = "".join(f'<li><a href="{html.escape(name)}">{html.escape(title)}</a></li>' for name, title in practice)
    problems = (f"<h2>Practice problems</h2><p>Each chapter's problems (open them in JupyterLab to have your "
                f"answers checked).</p><ul>{problems}</ul>") if problems else ""
    (output / "index.html").write_text(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(SITE_TITLE)}</title>
<style>body{{font-family:sans-serif;max-width:860px;margin:40px auto;line-height:1.5;padding:0 12px}}</style>
</head><body>
<h1>The math behind how LLMs are trained and served</h1>
<p>Every chapter of the course, executed, with each explorer's figure at its default settings.
This site works offline. To move the sliders, run the course in JupyterLab (<code>make lab</code>).</p>
<ul>{items}</ul>
{problems}
</body></html>
""")


def build(output: Path, selected: list[str] | None = None) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("LECTURE_PIXEL_RATIO", "2")   # still images: sharp on high-DPI screens, no slider to keep fast
    os.environ.setdefault("LECTURE_FIGURE", "png")      # each explorer stored as one whole PNG (no widget JS on the site)
    # the lab saves the profile it measured: into a temporary folder, not the builder's ~/.lecture_lib/my_machine.json
    if not os.environ.get("LECTURE_PROFILE"):
        os.environ["LECTURE_PROFILE"] = os.path.join(tempfile.mkdtemp(prefix="lecture-site-"), "my_machine.json")
    output.mkdir(parents=True, exist_ok=True)
    copy_mathjax(output)
    entries, practice = [], []
    (output / "exercises").mkdir(exist_ok=True)
    for folder, exercise, listing in ((NOTEBOOKS, False, entries), (EXERCISES, True, practice)):
        for path in chapters(selected, folder):
            started = time.monotonic()
            name = site_target(path)
            notebook = execute(path, name, exercise=exercise)
            frozen = freeze_widgets(notebook)
            title = title_of(notebook, path.stem)
            notebook.metadata["title"] = f"{title} · {SITE_TITLE}"     # the tab's title (nbconvert's <title>)
            (output / name).write_text(to_html(notebook, name), encoding="utf-8")
            listing.append((name, title))
            print(f"{name}: {frozen} widget outputs frozen, {time.monotonic() - started:.1f} s", flush=True)
    write_index(output, entries, practice)
    print(f"static site in {output} ({len(entries)} chapters, {len(practice)} exercise pages); "
          f"open {output / 'index.html'}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=REPO / "site")
    parser.add_argument("--chapters", nargs="*", help="chapter number prefixes, e.g. 00 01 (default: all)")
    args = parser.parse_args(argv)
    build(args.output.resolve(), args.chapters)


if __name__ == "__main__":
    main()
