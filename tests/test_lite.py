"""``make lite``: the course as a JupyterLite site, smoke-tested offline (issue 16, item 6).

The site is built once (``tools/build_lite.py``) into a temporary folder, served on localhost, and
opened in headless Chromium with every request outside localhost refused. Then: JupyterLab's UI
loads, the chapters are listed, a Pyodide kernel starts from the site's own copy of the runtime, and
sympy and ipywidgets import (ipywidgets and the course's own wheel through piplite, from the wheels
bundled in the site, with no package index). numpy and matplotlib come from the Pyodide
distribution's CDN, which this test cannot reach, so the explorers themselves are not run here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser_support import NOTEBOOKS, notebook_names
from static_server import StaticServer, offline_context

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lite_site(tmp_path_factory):
    base = tmp_path_factory.mktemp("lite")
    output = base / "site"
    log = base / "build.log"
    with open(log, "wb") as out:
        done = subprocess.run([sys.executable, str(REPO / "tools" / "build_lite.py"), "--output", str(output),
                               "--work", str(base / "src")], stdout=out, stderr=subprocess.STDOUT, timeout=600)
    assert done.returncode == 0, "tools/build_lite.py failed:\n" + log.read_text()[-4000:]
    return output


def test_site_has_chapters_wheels_and_a_local_pyodide(lite_site):
    files = sorted(p.name for p in (lite_site / "files").glob("*.ipynb"))
    assert files == notebook_names(NOTEBOOKS)
    assert sorted(p.name for p in (lite_site / "files" / "exercises").glob("*.ipynb"))

    index = json.loads((lite_site / "pypi" / "all.json").read_text())
    for name in ("lecture-lib", "ipywidgets", "jupyterlab-widgets", "comm"):
        assert name in index, f"{name} missing from piplite's index: {sorted(index)}"

    config = json.loads((lite_site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"].startswith("./static/pyodide/")
    assert kernel["disablePyPIFallback"] is True
    extensions = sorted(e["name"] for e in config["federated_extensions"])
    assert extensions == ["@jupyter-widgets/jupyterlab-manager", "@jupyterlite/pyodide-kernel-extension"]
    pyodide = lite_site / "static" / "pyodide"
    assert (pyodide / "pyodide.asm.wasm").exists() and (pyodide / "python_stdlib.zip").exists()
    lock = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]
    for name in ("micropip", "ipython", "sympy", "mpmath", "jedi"):
        assert (pyodide / lock[name]["file_name"]).exists(), f"{name} is not local: {lock[name]['file_name']}"
    assert lock["numpy"]["file_name"].startswith("https://"), "numpy should load from the Pyodide CDN"


KERNEL_CODE = """
import piplite
await piplite.install(["ipywidgets"])
await piplite.install("lecture-lib", deps=False)
import sympy, ipywidgets
import lecture_lib.symbols
x = sympy.Symbol("x")
print("OK", sympy.__version__, ipywidgets.__version__, sympy.integrate(x**2, x), ipywidgets.IntSlider(3).value)
"""

_START_KERNEL_JS = """
(code) => {
  window.__lite = {out: [], done: null};
  (async () => {
    const sm = window.jupyterapp.serviceManager;
    const kernel = await sm.kernels.startNew({name: 'python'});
    const future = kernel.requestExecute({code});
    future.onIOPub = (m) => {
      const c = m.content;
      if (m.header.msg_type === 'stream') window.__lite.out.push(c.text);
      if (m.header.msg_type === 'error') window.__lite.out.push(c.ename + ': ' + c.evalue);
    };
    const reply = await future.done;
    window.__lite.done = reply.content.status;
  })().catch(e => { window.__lite.done = 'exception: ' + e; });
}
"""


def test_offline_lab_lists_chapters_and_a_kernel_imports_sympy_and_ipywidgets(lite_site, browser):
    with StaticServer(lite_site) as server:
        context, blocked = offline_context(browser)
        page = context.new_page()
        console = []
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
        try:
            page.goto(server.url("/lab/index.html"), wait_until="domcontentloaded")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.serviceManager",
                                   timeout=90_000)
            # the file browser lists the chapters
            page.wait_for_selector(".jp-DirListing-item", timeout=60_000)
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-DirListing-itemText')]"
                ".some(e => e.textContent.includes('01_'))", timeout=30_000)
            listed = page.evaluate("() => [...document.querySelectorAll('.jp-DirListing-itemText')]"
                                   ".map(e => e.textContent.trim())")
            for name in notebook_names(NOTEBOOKS):
                assert name in listed, f"{name} not in the file browser: {listed}"

            page.wait_for_function(
                "() => { const s = window.jupyterapp.serviceManager.kernelspecs.specs;"
                " return !!(s && s.kernelspecs && s.kernelspecs.python); }", timeout=60_000)
            started = time.monotonic()
            page.evaluate(_START_KERNEL_JS, KERNEL_CODE)
            page.wait_for_function("() => window.__lite.done !== null", timeout=240_000, polling=500)
            state = page.evaluate("() => window.__lite")
            output = "".join(state["out"])
            assert state["done"] == "ok" and "OK" in output, (
                f"kernel run: {state['done']}\n{output}\nblocked: {blocked[:10]}\nconsole:\n"
                + "\n".join(console[-20:]))
            assert not blocked, f"the site asked the network for: {blocked[:10]}"
            print(f"Pyodide kernel start + imports offline: {time.monotonic() - started:.1f} s; {output.strip()}")
        finally:
            context.close()


# ---- issue 31 §5: the site's notebooks start by installing the library, and their links follow its layout
def _build_lite_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_lite_for_tests", REPO / "tools" / "build_lite.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lite_notebooks_install_the_library_first_and_every_link_resolves_in_the_site(tmp_path):
    import posixpath
    import re

    import nbformat

    from lecture_lib.practice import exercises

    build_lite = _build_lite_module()
    count = build_lite.write_lite_files(tmp_path)
    files = {path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*.ipynb")}
    assert count == len(files) >= 19 and any(name.startswith("exercises/") for name in files)
    links = 0
    for name in sorted(files):
        notebook = nbformat.read(tmp_path / name, as_version=4)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        # piplite turns the %pip line into an awaited install, so the import after it finds the library, and it
        # names a numpy or matplotlib Pyodide could not fetch before a chapter's `import numpy` fails
        assert code[0].source.splitlines() == ["%pip install lecture-lib", "import lecture_lib"], name
        assert "run the next cell first" in notebook.cells[0].source
        for cell in notebook.cells:
            assert not cell.get("outputs"), name
            if cell.cell_type != "markdown":
                continue
            assert not re.search(r"\]\([^)]*solutions/", cell.source), (name, "the site holds no solutions")
            if name.startswith("exercises/"):
                assert not re.search(r"\bsolutions\b", cell.source), (name, "the banner names no solutions")
            for target in exercises.relative_links(cell.source):
                links += 1
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target.split("#")[0]))
                assert resolved in files, (name, target)
    assert links >= 10, "the chapters and exercises link to each other"


def test_the_lab_says_in_the_site_that_it_measures_nothing_in_the_browser(tmp_path):
    """Issue 50: Pyodide cannot time the learner's CPU (no working threads, NumPy compiled to WebAssembly). The site's
    copy of the lab says so right under the install cell and shows the course machine's saved profile there; the
    first link to the lab in another notebook (the start page's chapter table) says it too."""
    import nbformat

    build_lite = _build_lite_module()
    build_lite.write_lite_files(tmp_path)
    labs = sorted(tmp_path.glob("*_lab_*.ipynb"))
    assert labs, "the lab is on the site"
    for path in labs:
        cells = nbformat.read(path, as_version=4).cells
        assert cells[2].get("id") == build_lite.LAB_NOTE_ID and "measures nothing in the browser" in cells[2].source
        code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
        # the measuring cell falls back to the saved profile under Pyodide instead of timing the browser
        assert 'sys.platform == "emscripten"' in code and "measure.example_profile()" in code
    start = nbformat.read(tmp_path / "00_start_here.ipynb", as_version=4)
    mentions = [cell.source for cell in start.cells if cell.cell_type == "markdown" and "_lab_" in cell.source]
    assert build_lite.LAB_LINK_NOTE in mentions[0] and sum(build_lite.LAB_LINK_NOTE in m for m in mentions) == 1
    exercise = nbformat.read(next((tmp_path / "exercises").glob("*_lab_*.ipynb")), as_version=4)
    assert not any(cell.get("id") == build_lite.LAB_NOTE_ID for cell in exercise.cells)
