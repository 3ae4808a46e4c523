"""Opening a notebook leaves it unmodified (issue 48 §5): every chapter, solutions and exercises notebook opened in a
real JupyterLab shows no unsaved dot on its tab once its kernel has started.

What JupyterLab writes on open: the kernel's ``language_info`` (from its kernel_info reply: name, version,
mimetype, file extension, CodeMirror mode, Pygments lexer, nbconvert exporter) into the notebook's metadata. A
notebook committed with less (``{"name": "python"}``) was marked modified the moment its kernel answered, and
closing it asked "Save your work?". So the notebooks are committed with the whole ``language_info`` of the course's
kernel; its ``version`` is Python's own, so on another Python JupyterLab rewrites it (and the dot is back): the
first test says so without a browser.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import browser_support

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("notebooks", "solutions", "exercises")
NOTEBOOKS = [f"{folder}/{path.name}" for folder in FOLDERS
             for path in sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb"))]


def _kernel_language_info() -> dict:
    """Asked of a separate Python: importing ipykernel here would switch this process's widgets to ipykernel's comms,
    which need a running kernel, and the widget tests sharing this worker would then send nothing."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import json; from ipykernel.ipkernel import IPythonKernel; "
                           "print(json.dumps(IPythonKernel.language_info))"], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout)


def test_every_notebook_carries_the_kernels_language_info():
    """What the kernel will report is what the notebook already holds, so JupyterLab has nothing to write."""
    expected = _kernel_language_info()
    differ = [name for name in NOTEBOOKS
              if json.loads((ROOT / name).read_text(encoding="utf-8"))["metadata"].get("language_info") != expected]
    assert not differ, (f"these notebooks' metadata.language_info is not this kernel's {expected}: JupyterLab "
                        f"writes it on open and marks them modified: {differ}")


@pytest.fixture(scope="module")
def course_server(tmp_path_factory):
    """JupyterLab over copies of notebooks/, solutions/ and exercises/ (each in its own folder, as in the checkout)."""
    source = tmp_path_factory.mktemp("course")
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    with browser_support.LabServer(source) as server:
        yield server


@pytest.mark.browser
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_opening_a_notebook_leaves_it_unmodified(browser, course_server, name):      # no server without a browser
    session = browser_support.NotebookSession(course_server, browser, name).open()
    try:
        state = session.page.evaluate(
            """async (name) => {
                 const panel = (%s)(name);
                 const kernel = panel.sessionContext.session.kernel;
                 await kernel.info;            // the reply whose language_info JupyterLab writes into the metadata
                 await new Promise((done) => setTimeout(done, 500));
                 const tab = [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab')]
                   .find((t) => (t.textContent || '').trim() === name.split('/').pop());
                 return {dirty: panel.context.model.dirty, dot: Boolean(tab && tab.classList.contains('jp-mod-dirty')),
                         tab: Boolean(tab), language_info: panel.context.model.getMetadata('language_info')};
               }""" % browser_support._PANEL_JS, name)
    finally:
        session.close()
    on_disk = json.loads((ROOT / name).read_text(encoding="utf-8"))["metadata"].get("language_info")
    assert state["tab"], f"{name}: no tab found for it"
    assert not state["dirty"] and not state["dot"], (
        f"{name} is marked modified on open (language_info on disk {on_disk}, in JupyterLab {state['language_info']})")
