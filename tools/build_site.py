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
* ``index.html`` lists the chapters; links between chapters point at the HTML pages.

Usage: ``python tools/build_site.py [--output site] [--chapters 00 01 ...]``.
"""

from __future__ import annotations

import argparse
import base64
import html
import os
import re
import shutil
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# jupyter-server-mathjax ships MathJax 2 with the HTML-CSS output and its STIX web fonts
MATHJAX_URL = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# no widget JavaScript runs on the site, so RequireJS is not needed: an empty script, not a CDN
EMPTY_SCRIPT = "data:text/javascript,"

SITE_CSS = """
<style>
  .lecture-static { border: 1px solid #ddd; border-radius: 4px; padding: 8px 12px; margin: 6px 0; }
  .lecture-static .lecture-static-body { display: flex; flex-flow: row wrap; gap: 16px; align-items: flex-start; }
  .lecture-static img.lecture-figure { max-width: 100%; height: auto; }
  .lecture-static .lecture-static-controls { font-size: 13px; margin: 0 0 6px 0; padding-left: 1.2em; }
  .lecture-static-note { color: #777; font-size: 12px; margin-top: 4px; }
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


# --- Build --------------------------------------------------------------------------------------
def chapters(selected: list[str] | None) -> list[Path]:
    paths = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if not p.name.startswith("."))
    if selected:
        paths = [p for p in paths if any(p.name.startswith(prefix) for prefix in selected)]
    return paths


def title_of(notebook, fallback: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+)$", cell.source, flags=re.M)
            if match:
                return match.group(1).strip()
    return fallback


def execute(path: Path):
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return notebook


def to_html(notebook) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", mathjax_url=MATHJAX_URL, require_js_url=EMPTY_SCRIPT)
    body, _ = exporter.from_notebook_node(notebook)
    body = re.sub(r'href="((?:\./)?\d\d_[\w\-]+)\.ipynb', r'href="\1.html', body)   # chapter links
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


def write_index(output: Path, entries: list[tuple[str, str]]) -> None:
    items = "".join(f'<li><a href="{html.escape(name)}">{html.escape(title)}</a></li>' for name, title in entries)
    (output / "index.html").write_text(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>The math behind how LLMs are trained and served</title>
<style>body{{font-family:sans-serif;max-width:860px;margin:40px auto;line-height:1.5;padding:0 12px}}</style>
</head><body>
<h1>The math behind how LLMs are trained and served</h1>
<p>Every chapter of the course, executed, with each explorer's figure at its default settings.
This site works offline. To move the sliders, run the course in JupyterLab (<code>make lab</code>).</p>
<ol start="0">{items}</ol>
</body></html>
""")


def build(output: Path, selected: list[str] | None = None) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("LECTURE_PIXEL_RATIO", "2")   # still images: sharp on high-DPI screens, no slider to keep fast
    output.mkdir(parents=True, exist_ok=True)
    copy_mathjax(output)
    entries = []
    for path in chapters(selected):
        started = time.monotonic()
        notebook = execute(path)
        frozen = freeze_widgets(notebook)
        name = path.with_suffix(".html").name
        (output / name).write_text(to_html(notebook), encoding="utf-8")
        entries.append((name, title_of(notebook, path.stem)))
        print(f"{name}: {frozen} widget outputs frozen, {time.monotonic() - started:.1f} s", flush=True)
    write_index(output, entries)
    print(f"static site in {output} ({len(entries)} chapters); open {output / 'index.html'}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=REPO / "site")
    parser.add_argument("--chapters", nargs="*", help="chapter number prefixes, e.g. 00 01 (default: all)")
    args = parser.parse_args(argv)
    build(args.output.resolve(), args.chapters)


if __name__ == "__main__":
    main()
