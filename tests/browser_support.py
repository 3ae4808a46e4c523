"""Drive a real JupyterLab in headless Chromium: shared by the browser tests (``tests/chapter_walk.py`` and the
``tests/test_browser*.py`` files) and ``tools/bench_browser.py``.

* :class:`LabServer` starts ``jupyter lab`` from this Python environment on a free localhost port,
  token auth on, in a temporary copy of the course's notebooks, with its own (empty) Jupyter
  config, settings, workspaces and runtime directories so nothing on the machine leaks in, and no
  news or update pop-ups.
* :func:`launch_browser` starts Debian's Chromium through Playwright (``playwright install`` cannot download
  browsers here): its headless shell for the tests, the full browser for the benchmarks.
* :class:`NotebookSession` opens one notebook (in the JupyterLab tab the last one left open), runs all cells, lists the
  errors on the page, finds every slider, moves one with the keyboard and tells whether its
  explorer's figure or readout changed, and measures slider-to-pixels latency.

JupyterLab is started with ``--LabApp.expose_app_in_browser=True`` so the page exposes
``window.jupyterapp``; the notebook is driven through its command registry and session context,
which is far less brittle than clicking menus.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
CHROMIUM = "/usr/bin/chromium"
# Chromium's headless shell (Debian's chromium-headless-shell; what Playwright runs when told headless) has the same
# Blink and V8 as the browser without its window machinery: a chapter's walk costs Chromium a fifth less CPU
# (ch02 on the 2-core machine: 23 against 29 CPU-s). The tests use it when it is installed; the benchmarks
# (tools/bench_moves.py) time the full browser a learner has.
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
INSTALL_HINT = "install it with: apt-get install -y chromium chromium-headless-shell"
VIEWPORT = {"width": 1500, "height": 1000}

# Selectors of what the course's explorers render (lecture_lib/explorers/base.py).
EXPLORER = ".lecture-explorer"
FIGURE_IMG = ".lecture-figure"          # ipywidgets.Image renders the <img> itself
READOUT = ".lecture-readout"
SLIDER = ".widget-slider"               # ipywidgets 8: Int/Float/FloatLog sliders (noUiSlider)
HANDLE = ".noUi-handle"

# The default window of the browser tests (issue 19): a 1280 x 900 laptop screen
LAYOUT = {"width": 1280, "height": 900}


# --- Environment checks -------------------------------------------------------------------------
def in_ci() -> bool:
    """True when the environment variable CI holds a truthy value (CI=true, CI=1, ...)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def browser_unavailable() -> str | None:
    """Why the browser tests cannot run here, or ``None`` when they can."""
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM}; {INSTALL_HINT}"
    try:
        import playwright.sync_api  # noqa: F401
    except Exception as error:  # pragma: no cover - depends on the machine
        return (f"Playwright for Python cannot be imported ({error}); install the test extra "
                f"(pip install -e '.[test]') and Chromium ({INSTALL_HINT})")
    return None


def notebook_names(folder: Path = NOTEBOOKS) -> list[str]:
    """The course notebooks present now, by file name, in chapter order."""
    return sorted(p.name for p in folder.glob("*.ipynb") if not p.name.startswith("."))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- The JupyterLab server ----------------------------------------------------------------------
_LAB_SETTINGS = {
    # no toasts over the sliders: no news, no update check, no notifications
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
    # attach every cell to the DOM, so every explorer is rendered and findable
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


class LabServer:
    """``jupyter lab`` on a free localhost port over a temporary copy of the course's notebooks.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. ``root / "notebooks"`` holds
    the copies; :meth:`add_notebook` writes extra (scratch) notebooks there.
    """

    front_end = "lab"

    def __init__(self, notebooks: Path = NOTEBOOKS, *, startup_timeout: float = 90.0):
        self.source = Path(notebooks)
        self.startup_timeout = startup_timeout
        self.base = Path(tempfile.mkdtemp(prefix="lecture-lab-"))
        self.root = self.base / "root"
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.process: subprocess.Popen | None = None
        self.log_path = self.base / "jupyter-lab.log"

    # layout
    def _prepare(self) -> None:
        ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
        shutil.copytree(self.source, self.root / "notebooks", ignore=ignore)
        settings = self.base / "lab-settings"
        for relative, values in _LAB_SETTINGS.items():
            path = settings / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        for name in ("config", "data", "runtime", "workspaces", "ipython"):
            (self.base / name).mkdir(exist_ok=True)

    def _env(self) -> dict:
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)      # the notebooks pick their own canvas; force nothing
        env.pop("JUPYTER_PATH", None)
        env.update({
            "JUPYTER_CONFIG_DIR": str(self.base / "config"),
            "JUPYTER_DATA_DIR": str(self.base / "data"),
            "JUPYTER_RUNTIME_DIR": str(self.base / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(self.base / "lab-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.base / "workspaces"),
            "IPYTHONDIR": str(self.base / "ipython"),
            "PYTHONUNBUFFERED": "1",
        })
        return env

    def command(self) -> list[str]:
        extra = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        return [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True",
        ] + extra

    def start(self) -> "LabServer":
        self._prepare()
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen(self.command(), cwd=self.root, env=self._env(), stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                message = f"jupyter lab exited with {self.process.returncode}:\n{self.log_tail()}"
                self.stop()
                raise RuntimeError(message)
            try:
                self.api("GET", "/api/status", timeout=2)
                return self
            except (OSError, urllib.error.URLError):
                time.sleep(0.25)
        message = f"jupyter lab did not answer /api/status within {self.startup_timeout:.0f} s:\n{self.log_tail()}"
        self.stop()
        raise RuntimeError(message)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> "LabServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # REST
    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def api(self, method: str, path: str, *, timeout: float = 10):
        request = urllib.request.Request(self.url(path), method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self) -> None:
        """End every session and kernel (each test leaves the 2-core machine quiet for the next)."""
        try:
            for session in self.api("GET", "/api/sessions"):
                self.api("DELETE", f"/api/sessions/{session['id']}", timeout=30)
            for kernel in self.api("GET", "/api/kernels"):
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)
        except (OSError, urllib.error.URLError):
            pass

    def add_notebook(self, name: str, cells: list[str]) -> str:
        """Write a scratch notebook of code cells next to the course's copies; returns its name."""
        import nbformat

        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                           "language": "python"}
        nbformat.write(notebook, self.root / "notebooks" / name)
        return name

    def notebook_url(self, name: str) -> str:
        # a workspace of its own, reset: no other tab is restored beside this notebook
        workspace = "t" + secrets.token_hex(4)
        return self.url(f"/lab/workspaces/{workspace}/tree/notebooks/{name}?reset&token={self.token}")


# --- The browser --------------------------------------------------------------------------------
class NotebookServer(LabServer):
    """``jupyter notebook`` (Notebook 7, the other front end learners open) over the same copies."""

    front_end = "notebook"

    def command(self) -> list[str]:
        command = super().command()
        command[2] = "notebook"
        return [c.replace("--LabApp.expose_app_in_browser", "--JupyterNotebookApp.expose_app_in_browser")
                for c in command if not c.startswith(("--LabApp.news_url", "--LabApp.check_for_updates_class"))]

    def notebook_url(self, name: str) -> str:
        return self.url(f"/notebooks/notebooks/{name}?token={self.token}")


def browser_path(*, full: bool = False) -> str:
    """The headless shell where it is installed, else (or with ``full``) the browser a learner runs."""
    return CHROMIUM if full or not Path(HEADLESS_SHELL).exists() else HEADLESS_SHELL


def launch_browser(playwright, *, full: bool = False):
    """Headless Debian Chromium through Playwright (each launch gets a fresh temporary profile): see
    :func:`browser_path`."""
    return playwright.chromium.launch(executable_path=browser_path(full=full), headless=True, args=CHROMIUM_ARGS)


def _blocks(image, size: int = 4):
    """The mean colour of each ``size`` x ``size`` block of an (h, w, 3) array."""
    h, w = (image.shape[0] // size) * size, (image.shape[1] // size) * size
    return image[:h, :w].reshape(h // size, size, w // size, size, 3).mean(axis=(1, 3))


# --- One notebook in the browser ----------------------------------------------------------------
_PANEL_JS = """
(name) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path && w.context.path.endsWith(name) && w.content && w.sessionContext) return w;
  }
  return null;
}
"""

_ERRORS_JS = """
(name) => {
  const found = [];
  const text = (el) => (el.innerText || el.textContent || '').trim();
  for (const el of document.querySelectorAll('.jp-OutputArea-output[data-mime-type*="error"]'))
    found.push('error output: ' + text(el).slice(0, 800));
  for (const el of document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')) {
    const t = text(el);
    if (/Traceback/.test(t)) found.push('stderr: ' + t.slice(0, 800));
  }
  if ((document.body.textContent || '').includes('Error displaying widget')) {
    for (const el of document.querySelectorAll('.jp-OutputArea-output'))
      if ((el.textContent || '').includes('Error displaying widget')) found.push(text(el).slice(0, 300));
    if (!found.some(s => s.includes('Error displaying widget'))) found.push('Error displaying widget (somewhere on the page)');
  }
  for (const el of document.querySelectorAll('.lecture-readout pre'))
    found.push('explorer readout: ' + text(el).slice(0, 500));
  // the notebook model too: an error output is an error even if it rendered oddly
  const panel = (%s)(name);
  if (panel) {
    const cells = panel.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
      const cell = cells.get(i).toJSON();
      for (const out of (cell.outputs || []))
        if (out.output_type === 'error') found.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
    }
  }
  return found;
}
""" % _PANEL_JS

# Tag every slider (and the explorer, or failing that the cell output, that it drives) with ids,
# and return what Python needs to move it and name it.
_TAG_SLIDERS_JS = """
() => {
  const sliders = [];
  let containers = 0;
  const containerOf = (el) => el.closest('.lecture-explorer') || el.closest('.widget-interact')
                              || el.closest('.jp-OutputArea') || document.body;
  for (const el of document.querySelectorAll('.widget-slider')) {
    const handle = el.querySelector('.noUi-handle');
    if (!handle) continue;
    const box = containerOf(el);
    if (!box.hasAttribute('data-lt-container')) box.setAttribute('data-lt-container', String(containers++));
    const index = sliders.length;
    el.setAttribute('data-lt-slider', String(index));
    const label = el.querySelector('.widget-label');
    const explorer = box.classList.contains('lecture-explorer');
    const heading = explorer ? box.querySelector(':scope > .widget-html') : null;
    sliders.push({index, container: box.getAttribute('data-lt-container'), explorer,
                  title: heading ? (heading.textContent || '').trim() : '',
                  label: label ? (label.textContent || '').trim() : `(slider ${index}, no label)`});
  }
  return sliders;
}
"""

# What the learner sees of a container: every image's source plus the readouts' text (for an
# explorer) or the container's text without the controls (for anything else).
_SNAPSHOT_JS = """
(id) => {
  const box = document.querySelector(`[data-lt-container="${id}"]`);
  if (!box) return null;
  const images = [...box.querySelectorAll('img')].map(img => img.currentSrc || img.src).join('|')
                 + [...box.querySelectorAll('.lecture-live-figure')].map(f => '#' + (f.dataset.frame || '')).join('');
  let text;
  if (box.classList.contains('lecture-explorer')) {
    text = [...box.querySelectorAll('.lecture-readout')].map(e => e.textContent).join('|');
  } else {
    const copy = box.cloneNode(true);
    for (const c of copy.querySelectorAll('.widget-slider, .widget-dropdown, .widget-readout')) c.remove();
    text = copy.textContent;
  }
  return images + '\\n' + text;
}
"""

# Latency probes: keydown time (the event's timestamp) and, per container, each image load and each
# readout change, with the animation frame after it (the frame in which the new pixels are painted).
_PROBE_JS = """
() => {
  if (window.__lt) return;
  const lt = window.__lt = {key: null, images: {}, readouts: {}};
  const painted = (store, id, at, ahead = false) =>
    requestAnimationFrame(() => { (store[id] = store[id] || []).push({at, painted: performance.now(), ahead}); });
  document.addEventListener('keydown', (e) => { lt.key = e.timeStamp; }, true);
  // a new figure: an <img> loaded (a PNG figure) or a live figure's canvas repainted (which,
  // after a new background, happens once that background's <img> has loaded)
  document.addEventListener('load', (e) => {
    const img = e.target;
    if (!img || img.tagName !== 'IMG' || img.closest('.lecture-live-figure')) return;
    const box = img.closest('[data-lt-container]');
    if (box) painted(lt.images, box.getAttribute('data-lt-container'), performance.now());
  }, true);
  document.addEventListener('lecture-frame', (e) => {
    const box = e.target && e.target.closest && e.target.closest('[data-lt-container]');
    if (box) painted(lt.images, box.getAttribute('data-lt-container'), performance.now(),
                     Boolean(e.detail && e.detail.ahead));     // a frame predicted ahead (lecture_lib.explorers.ahead)
  }, true);
  for (const readout of document.querySelectorAll('[data-lt-container] .lecture-readout')) {
    const id = readout.closest('[data-lt-container]').getAttribute('data-lt-container');
    new MutationObserver(() => painted(lt.readouts, id, performance.now()))
      .observe(readout, {childList: true, subtree: true, characterData: true});
  }
}
"""


@dataclass
class Slider:
    index: int
    container: str
    label: str
    explorer: bool
    title: str = ""

    def describe(self) -> str:
        where = f"explorer {self.title!r}" if self.title else (
            f"explorer #{self.container}" if self.explorer else f"output #{self.container}")
        return f"slider {self.label!r} ({where})"


@dataclass
class Move:
    """The outcome of one keyboard move of a slider."""
    slider: Slider
    key: str
    changed: bool
    value_before: str | None = None
    value_after: str | None = None
    error: str | None = None            # exception text in the explorer's readout after the move
    error_before: str | None = None     # ... and before it (an explorer already broken)


def press_covers(page, *, timeout: float = 30.0) -> int:
    """Press every visible "Show it anyway" of a page's covers (JupyterLab's or the projector's), as a learner who
    skips the guesses would; a button that vanishes between the count and the click is counted again, not waited
    for. Returns how many were pressed."""
    pressed = 0
    deadline = time.monotonic() + timeout
    buttons = page.locator(".lecture-cover-bar button:visible")
    while buttons.count() and time.monotonic() < deadline:
        try:
            buttons.first.click(timeout=10_000)
        except Exception:       # a button still being laid out on a busy machine: the DOM's own click
            try:
                buttons.first.evaluate("button => button.click()", timeout=2_000)
            except Exception:   # the cover opened meanwhile (the page removed its bar): count again
                continue
        pressed += 1
        page.wait_for_timeout(200)
    return pressed


@dataclass
class NotebookSession:
    """One notebook open in JupyterLab (or Notebook 7) in headless Chromium; close it to end its kernel too."""

    server: LabServer
    browser: object
    name: str
    context: object = None
    page: object = None
    console: list = field(default_factory=list)
    run_seconds: float = float("nan")
    viewport: dict = field(default_factory=lambda: dict(VIEWPORT))
    file_browser: bool = False          # open JupyterLab's file browser beside the notebook (the default layout)

    def open(self, *, timeout: float = 90.0) -> "NotebookSession":
        """Open the notebook in JupyterLab: in the tab the last session left open on this server (as a learner opens
        one chapter after another), or in a new one (a fresh browser context) when there is none."""
        server, page = _OPEN_TABS.pop(self._tab_key(), (None, None))
        if page is not None and (server is not self.server or page.is_closed() or page.context.browser is not self.browser):
            page = None
        if page is None:
            self.context = self.browser.new_context(viewport=self.viewport)
            self.page = self.context.new_page()
        else:
            self.context, self.page = page.context, page
        self.page.set_default_timeout(timeout * 1000)
        self.page.on("console", self._console_message)
        self.page.on("pageerror", self._page_error)
        if page is None:
            self.page.goto(self.server.notebook_url(self.name), wait_until="domcontentloaded")
            self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started !== undefined",
                                        timeout=timeout * 1000)
        else:
            self.page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }",
                               f"notebooks/{self.name}")
        self.page.wait_for_function(f"() => ({_PANEL_JS})({json.dumps(self.name)}) !== null",
                                    timeout=timeout * 1000, polling=200)
        # the document and the kernel: ready, then idle
        self.page.evaluate(
            """async (name) => {
                 const panel = (%s)(name);
                 await panel.context.ready;
                 await panel.sessionContext.ready;
                 window.jupyterapp.shell.activateById(panel.id);
               }""" % _PANEL_JS, self.name)
        if self.file_browser:
            self.page.evaluate("""async () => { const app = window.jupyterapp;
                 if (app.commands.hasCommand('filebrowser:activate')) await app.commands.execute('filebrowser:activate'); }""")
        self.wait_idle(timeout)
        return self

    def kernel_status(self) -> str:
        return self.page.evaluate(
            """(name) => { const p = (%s)(name);
                 const k = p && p.sessionContext.session && p.sessionContext.session.kernel;
                 return k ? k.status : 'none'; }""" % _PANEL_JS, self.name)

    def wait_idle(self, timeout: float = 60.0, settle: float = 0.3) -> None:
        """Wait until the kernel has been idle for ``settle`` seconds."""
        deadline = time.monotonic() + timeout
        idle_since = None
        while time.monotonic() < deadline:
            if self.kernel_status() == "idle":
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= settle:
                    return
            else:
                idle_since = None
            time.sleep(0.1)
        raise TimeoutError(f"{self.name}: kernel not idle after {timeout:.0f} s (status {self.kernel_status()!r})")

    def execute_in_kernel(self, code: str, expression: str | None = None):
        """Run code in this notebook's kernel, silently; return ``eval(expression)`` as text."""
        return self.page.evaluate(
            """async ([name, code, expr]) => {
                 const kernel = (%s)(name).sessionContext.session.kernel;
                 const future = kernel.requestExecute({code, silent: false, store_history: false,
                                                       user_expressions: expr ? {r: expr} : {}});
                 const reply = await future.done;
                 const c = reply.content;
                 if (c.status !== 'ok') return {error: c.ename + ': ' + c.evalue};
                 if (!expr) return {value: null};
                 const r = c.user_expressions.r;
                 if (r.status !== 'ok') return {error: r.ename + ': ' + r.evalue};
                 return {value: r.data['text/plain']};
               }""" % _PANEL_JS, [self.name, code, expression])

    def run_all(self, *, timeout: float = 120.0) -> float:
        """Clear outputs, Run All, wait until every code cell ran, the kernel is idle and every
        widget output has rendered (or shown its error). Returns the seconds it took."""
        started = time.monotonic()
        self.page.evaluate(
            """async (name) => {
                 const panel = (%s)(name);
                 window.jupyterapp.shell.activateById(panel.id);
                 await window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs');
                 window.__ltRun = window.jupyterapp.commands.execute('notebook:run-all-cells')
                   .then(ok => { window.__ltRunDone = {ok}; },
                         err => { window.__ltRunDone = {ok: false, err: String(err)}; });
               }""" % _PANEL_JS, self.name)
        deadline = started + timeout
        state = None
        while time.monotonic() < deadline:
            state = self.page.evaluate(
                """(name) => {
                     const panel = (%s)(name);
                     const cells = panel.content.model.cells;
                     let pending = 0, errors = 0, views = 0;
                     for (let i = 0; i < cells.length; i++) {
                       const cell = cells.get(i);
                       if (cell.type !== 'code') continue;
                       const json = cell.toJSON();
                       if (json.execution_count === null || json.execution_count === undefined) pending++;
                       for (const out of json.outputs || []) {
                         if (out.output_type === 'error') errors++;
                         if (out.data && out.data['application/vnd.jupyter.widget-view+json']) views++;
                       }
                     }
                     // a widget view renders as .jp-OutputArea-output > .jupyter-widgets (no data-mime-type)
                     let rendered = 0;
                     for (const o of document.querySelectorAll('.jp-OutputArea-output'))
                       if (o.querySelector(':scope > .jupyter-widgets')
                           || (o.textContent || '').includes('Error displaying widget')) rendered++;
                     const k = panel.sessionContext.session && panel.sessionContext.session.kernel;
                     return {pending, errors, views, rendered, done: window.__ltRunDone || null,
                             status: k ? k.status : 'none'};
                   }""" % _PANEL_JS, self.name)
            if state["errors"]:
                break       # a cell failed: later cells will never run; report the error
            if (state["done"] and state["pending"] == 0 and state["status"] == "idle"
                    and state["rendered"] >= state["views"]):
                break
            time.sleep(0.2)
        else:
            raise TimeoutError(f"{self.name}: Run All did not finish within {timeout:.0f} s: {state}")
        if not state["errors"]:
            self.wait_idle(30)
            self.wait_images()
        self.run_seconds = time.monotonic() - started
        return self.run_seconds

    def wait_images(self, timeout: float = 20.0) -> None:
        """Wait until every explorer figure has a loaded image."""
        self.page.wait_for_function(
            """() => [...document.querySelectorAll('.lecture-figure')].every(img =>
                 (img.src || '').length > 0 && img.complete && img.naturalWidth > 0)""",
            timeout=timeout * 1000, polling=100)

    def errors(self) -> list[str]:
        return self.page.evaluate(_ERRORS_JS, self.name)

    def open_covers(self, *, timeout: float = 30.0) -> int:
        """Press "Show it anyway" on every cover (lecture_lib.explorers.predict), as a learner who skips the
        guesses would, so the explorers held back until a reveal are on the page. Returns how many were pressed."""
        return press_covers(self.page, timeout=timeout)

    def figure_names(self) -> list[dict]:
        """What a screen reader gets for each explorer figure: the element's tag and its ``title``
        (the image widget's tooltip, set by the explorer to a text summary on every redraw)."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.lecture-figure')].map(el =>
                 ({tag: el.tagName, title: el.getAttribute('title') || '', alt: el.getAttribute('alt')}))""")

    def log_slider_valuetexts(self, *, unsynced_only: bool = False, settle: float = 5.0) -> list[dict]:
        """What a screen reader hears for each log slider (its handle's aria-valuetext) beside the
        real value in its readout; with ``unsynced_only`` just those where the two disagree, after giving the
        page's script up to ``settle`` seconds to catch up (a slider a cover has just shown is synced by a
        mutation observer, on a busy machine a moment later; one that never syncs is still reported)."""
        deadline = time.monotonic() + settle
        while True:
            rows = self._log_slider_valuetexts()
            if unsynced_only:
                rows = [row for row in rows if not row["readout"] or not row["valuetext"].startswith(row["readout"])]
            if not rows or not unsynced_only or time.monotonic() >= deadline:
                return rows
            self.page.wait_for_timeout(250)

    def _log_slider_valuetexts(self) -> list[dict]:
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.lecture-log-slider')].map(box => {
                 const h = box.querySelector('.noUi-handle'), r = box.querySelector('.widget-readout');
                 return {readout: r ? (r.textContent || r.value || '').trim() : '',
                         valuetext: h ? (h.getAttribute('aria-valuetext') || '') : ''};
               })""")

    def displayed_controls(self) -> list[dict]:
        """Every explorer control's label and what the page shows for it (a slider's readout, a
        dropdown's selected option), in page order."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.lecture-explorer .widget-slider, .lecture-explorer .widget-dropdown')]
                 .map(box => {
                   const label = ((box.querySelector('.widget-label') || {}).textContent || '').trim();
                   const select = box.querySelector('select');
                   const readout = box.querySelector('.widget-readout');
                   const tag = [...box.classList].find(c => c.startsWith('lecture-control-'));
                   return {label, model: tag ? tag.slice('lecture-control-'.length) : null,
                           kind: select ? 'dropdown' : 'slider',
                           shown: select ? (select.options[select.selectedIndex] || {}).text || ''
                                         : readout ? (readout.textContent || readout.value || '').trim() : null};
                 })""")

    def declared_controls(self) -> list[dict]:
        """From the kernel: every control made by lecture_lib.explorers.base's helpers (they record the
        value the lesson declared, and Explorer(**overrides) updates it), with its label, the
        declared value and the kernel's current value."""
        code = (
            "import json as _j, ipywidgets as _w\n"
            "from ipywidgets.widgets.widget import _instances as _inst\n"
            "from lecture_lib.explorers import sliders as _e\n"
            "def _lt_declared():\n"
            "    rows = []\n"
            "    for _x in list(_inst.values()):\n"
            "        if not hasattr(_x, 'declared') or getattr(_x, 'comm', None) is None:\n"
            "            continue\n"
            "        kind = ('log' if isinstance(_x, _e.LogSlider) else 'int' if isinstance(_x, _w.IntSlider)\n"
            "                else 'float' if isinstance(_x, _w.FloatSlider) else 'dropdown')\n"
            "        label = _x.label if kind == 'dropdown' else None\n"
            "        if kind == 'dropdown':\n"
            "            labels = [o[0] if isinstance(o, tuple) else str(o) for o in _x.options]\n"
            "            values = [o[1] if isinstance(o, tuple) else o for o in _x.options]\n"
            "            label = labels[values.index(_x.declared)] if _x.declared in values else None\n"
            "        rows.append({'label': _x.description, 'kind': kind, 'model': _x.model_id,\n"
            "                     'declared': _x.declared if kind != 'dropdown' else None,\n"
            "                     'value': _x.value if kind != 'dropdown' else None,\n"
            "                     'expected': _e.value_label(_x.declared) if kind == 'log' else\n"
            "                                 str(int(_x.declared)) if kind == 'int' else label,\n"
            "                     'step': getattr(_x, 'step', None)})\n"
            "    return _j.dumps(rows)\n")
        result = self.execute_in_kernel(code, "_lt_declared()")
        if not result or result.get("error"):
            raise RuntimeError(f"{self.name}: could not list the declared controls: {result}")
        import ast

        return json.loads(ast.literal_eval(result["value"]))

    def live_figure_differences(self) -> list[dict]:
        """Each live figure as the page painted it (background <img> + canvas, a screenshot)
        against the kernel's own Agg drawing of the same figure (``FigureView.snapshot_png``):
        the mean difference per channel (0-255) and the share of pixels that differ by more than
        48 in 4 x 4-pixel blocks (a missing or misplaced curve, marker or label shows there;
        anti-aliasing, hatch phase and the browser's own text rendering do not)."""
        import base64
        import io

        import numpy as np
        from PIL import Image

        boxes = self.page.evaluate(
            """() => [...document.querySelectorAll('.lecture-live')].map(el => {
                 const cls = [...el.classList].find(c => c.startsWith('lecture-figure-'));
                 return cls ? cls.slice('lecture-figure-'.length) : null; }).filter(Boolean)""")
        if not boxes:
            return []
        code = ("import gc as _lt_gc, base64 as _lt_b64, json as _lt_json\n"
                "from lecture_lib.explorers.base import FigureView as _lt_FV\n"
                "_lt_views = {v.widget.model_id: v for v in _lt_gc.get_objects() if isinstance(v, _lt_FV)}\n")
        result = self.execute_in_kernel(
            code, "_lt_json.dumps({k: _lt_b64.b64encode(_lt_views[k].snapshot_png()).decode() "
                  f"for k in {boxes!r} if k in _lt_views}})")
        import ast

        snapshots = json.loads(ast.literal_eval(result["value"])) if result.get("value") else {}
        found = []
        for model_id in boxes:
            element = self.page.query_selector(f".lecture-figure-{model_id} .lecture-live-figure")
            if element is None or model_id not in snapshots:
                found.append({"model": model_id, "error": "no figure on the page or no view in the kernel"})
                continue
            element.scroll_into_view_if_needed()
            self.page.wait_for_function(     # the background <img> loaded (a new one may still be on its way)
                "(el) => { const img = el.querySelector('img'); return img && img.complete && img.naturalWidth > 0; }",
                arg=element, timeout=15_000)
            self.page.wait_for_timeout(100)
            page = np.asarray(Image.open(io.BytesIO(element.screenshot())).convert("RGB"), dtype=float)
            kernel = np.asarray(Image.open(io.BytesIO(base64.b64decode(snapshots[model_id]))).convert("RGB"),
                                dtype=float)
            (h, w), (ph, pw) = kernel.shape[:2], page.shape[:2]
            if not (0 <= ph - h <= 2 and 0 <= pw - w <= 2):
                found.append({"model": model_id, "error": f"page {page.shape} != kernel {kernel.shape}"})
                continue
            # a box at a fractional position is captured with an extra row or column: best alignment (by the mean)
            offsets = [(dy, dx) for dy in range(ph - h + 1) for dx in range(pw - w + 1)]
            means = [float(np.abs(page[dy:dy + h, dx:dx + w] - kernel).mean()) for dy, dx in offsets]
            dy, dx = offsets[means.index(min(means))]
            blocks = np.abs(_blocks(page[dy:dy + h, dx:dx + w]) - _blocks(kernel)).max(axis=2)
            found.append({"model": model_id, "mean": min(means), "far": float((blocks > 48).mean())})
        return found

    def figure_scales(self) -> list[dict]:
        """Each explorer figure's on-screen width over the width it was drawn for (1.0: not scaled
        down by the browser), with the column width it sits in."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('img.lecture-figure, img.lecture-static-figure')].map(img => {
                 const drawn = parseFloat(img.style.width) || parseFloat(img.getAttribute('width')) || img.naturalWidth;
                 const shown = img.getBoundingClientRect().width;
                 const column = (img.closest('.jp-OutputArea-output') || img.parentElement).clientWidth;
                 return {drawn, shown, scale: shown / drawn, column, alt: (img.getAttribute('alt') || img.getAttribute('title') || '').slice(0, 60)};
               })""")

    def output_images(self) -> list[dict]:
        """Every image in the notebook's outputs with its text alternative (alt, else title)."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.jp-OutputArea-output img')].map(img => ({
                 cls: img.className, alt: img.getAttribute('alt') || '', title: img.getAttribute('title') || ''}))""")

    def press_dropdowns(self, *, restore: bool = True) -> list[dict]:
        """Focus each explorer dropdown and press ArrowDown (ArrowUp on the last option): did the
        option change, and did focus stay on the control (not jump to another cell)? With ``restore`` each
        is moved back before the next (a chapter's walk goes on from its declared state)."""
        results = []
        count = self.page.locator(".lecture-explorer .widget-dropdown select").count()
        for i in range(count):
            select = self.page.locator(".lecture-explorer .widget-dropdown select").nth(i)
            select.scroll_into_view_if_needed()
            before = select.evaluate("el => [el.selectedIndex, el.options.length]")
            key = "ArrowUp" if before[0] == before[1] - 1 else "ArrowDown"
            select.focus()
            self.page.keyboard.press(key)
            time.sleep(0.15)
            after = select.evaluate("el => [el.selectedIndex, document.activeElement === el]")
            results.append({"index": i, "key": key, "before": before[0], "after": after[0], "focused": after[1]})
            if restore and after[0] != before[0]:            # put it back, and let the explorer settle
                select.focus()
                self.page.keyboard.press("ArrowUp" if key == "ArrowDown" else "ArrowDown")
            self.wait_idle(20, settle=0.2)
        return results

    def counts(self) -> dict:
        return self.page.evaluate(
            """() => ({explorers: document.querySelectorAll('.lecture-explorer').length,
                       figures: document.querySelectorAll('.lecture-figure').length,
                       sliders: document.querySelectorAll('.widget-slider').length,
                       dropdowns: document.querySelectorAll('.widget-dropdown').length})""")

    def sliders(self) -> list[Slider]:
        return [Slider(**s) for s in self.page.evaluate(_TAG_SLIDERS_JS)]

    def handle(self, slider: Slider):
        return self.page.locator(f'[data-lt-slider="{slider.index}"] {HANDLE}').first

    def snapshot(self, slider: Slider) -> str | None:
        return self.page.evaluate(_SNAPSHOT_JS, slider.container)

    def slider_value(self, slider: Slider) -> tuple[str | None, float | None, float | None]:
        """(readout text, aria value, aria max) of a slider's handle."""
        return self.page.evaluate(
            """(i) => {
                 const el = document.querySelector(`[data-lt-slider="${i}"]`);
                 const h = el.querySelector('.noUi-handle');
                 const r = el.querySelector('.widget-readout');
                 const num = (a) => { const v = h.getAttribute(a); return v === null ? null : parseFloat(v); };
                 return [r ? (r.textContent || r.value || '').trim() : null, num('aria-valuenow'), num('aria-valuemax')];
               }""", slider.index)

    def key_for(self, slider: Slider) -> str:
        """ArrowRight, unless the slider sits at its maximum (then ArrowLeft)."""
        _, now, high = self.slider_value(slider)
        if now is not None and high is not None and now >= high - 1e-9 * max(1.0, abs(high)):
            return "ArrowLeft"
        return "ArrowRight"

    def move(self, slider: Slider, *, timeout: float = 8.0) -> Move:
        """Move a slider one step with the keyboard; report whether its figure or readout changed."""
        handle = self.handle(slider)
        handle.scroll_into_view_if_needed()
        error_before = self.readout_error(slider)
        before = self.snapshot(slider)
        value_before, _, _ = self.slider_value(slider)
        key = self.key_for(slider)
        handle.focus()
        handle.press(key)
        changed = True
        try:
            self.page.wait_for_function(
                """([id, before]) => (%s)(id) !== before""" % _SNAPSHOT_JS.strip(),
                arg=[slider.container, before], timeout=timeout * 1000, polling=50)
        except Exception:
            changed = False
        value_after, _, _ = self.slider_value(slider)
        return Move(slider, key, changed, value_before, value_after, self.readout_error(slider), error_before)

    # the order of frames: a frame painted for controls that have moved on is a stale paint ---------
    def watch_paints(self) -> None:
        """Log every painted frame of every live figure from now on, with whether it was stale: computed
        for control positions other than the ones the controls hold as it is painted, and whether it was
        behind: a kernel frame painted over an older background than the one sent with it (live_figure's
        ``lecture-frame`` event). Idempotent."""
        self.page.evaluate(
            """() => { if (window.__ltPaints) return; window.__ltPaints = [];
                 document.addEventListener('lecture-frame', (e) => {
                   const box = e.target && e.target.closest && e.target.closest('[data-lt-container]');
                   window.__ltPaints.push({container: box ? box.getAttribute('data-lt-container') : null,
                                           stale: Boolean(e.detail && e.detail.stale),
                                           behind: Boolean(e.detail && e.detail.behind),
                                           ahead: Boolean(e.detail && e.detail.ahead), at: performance.now()});
                 }, true); }""")

    def paints(self) -> list[dict]:
        return self.page.evaluate("() => window.__ltPaints || []")

    def unsettled_figures(self) -> list[dict]:
        """Live figures whose picture is not for the positions their controls hold now (once the
        controls have stopped, each must show their state: ``lecture-live-figure``'s ``__lectureFresh``)."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.lecture-live-figure')].filter(
                 (box) => box.__lectureFresh && !box.__lectureFresh()).map((box) => {
                   const c = box.closest('[data-lt-container]');
                   return {container: c ? c.getAttribute('data-lt-container') : null, frame: box.dataset.frame}; })""")

    def wait_settled(self, timeout: float = 15.0) -> list[dict]:
        """Poll :meth:`unsettled_figures` until none is left or ``timeout`` seconds pass; return what is left.
        The kernel reports idle while a redraw it queued with ``call_soon`` still runs (explorers.base), so on a
        loaded machine the last frame can reach the page a second or more after the kernel goes idle; a figure
        that never catches up is still returned."""
        deadline = time.monotonic() + timeout
        while True:
            unsettled = self.unsettled_figures()
            if not unsettled or time.monotonic() >= deadline:
                return unsettled
            time.sleep(0.2)

    def stale_readouts(self) -> list[str]:
        """Explorer readouts on the page whose text is none of the kernel's readouts: the page once kept a table it
        had predicted for a position a drag passed, beside a figure drawn for where the drag ended. Compared as text
        with every space removed (the page's table cells against the kernel's HTML)."""
        import ast
        import html as _html
        import json
        import re

        kernel = self.execute_in_kernel(
            "import json as _j\nfrom ipywidgets.widgets.widget import _instances as _inst\n",
            "_j.dumps([_x.value for _x in list(_inst.values()) if 'lecture-readout' in getattr(_x, '_dom_classes', ())"
            " and getattr(_x, 'comm', None) is not None])")
        if "error" in kernel:
            raise AssertionError(f"{self.name}: could not read the kernel's readouts: {kernel['error']}")

        def squeeze(text: str) -> str:
            return re.sub(r"\s+", "", text)

        known = {squeeze(_html.unescape(re.sub(r"<[^>]+>", "", value))) for value in json.loads(ast.literal_eval(kernel["value"]))}
        shown = self.page.evaluate("() => [...document.querySelectorAll('.lecture-explorer .lecture-readout')]"
                                   ".map((el) => el.textContent || '')")
        return [text.strip()[:200] for text in shown if squeeze(text) not in known]

    def wait_readouts_settled(self, timeout: float = 15.0) -> list[str]:
        """Poll :meth:`stale_readouts` until none is left or ``timeout`` seconds pass; return what is left."""
        deadline = time.monotonic() + timeout
        while True:
            stale = self.stale_readouts()
            if not stale or time.monotonic() >= deadline:
                return stale
            time.sleep(0.3)

    def hold_key(self, slider: Slider, key: str, repeats: int, rate: float = 30.0) -> None:
        """Hold ``key`` down on a slider's handle: one keydown, then ``repeats - 1`` autorepeat keydowns
        (``repeat: true``) at ``rate`` per second, then the keyup, as a keyboard does."""
        handle = self.handle(slider)
        handle.scroll_into_view_if_needed()
        handle.focus()
        keyboard = self.page.keyboard
        keyboard.down(key)
        for _ in range(repeats - 1):
            time.sleep(1 / rate)
            keyboard.down(key)          # Playwright marks a second keydown without keyup as a repeat
        time.sleep(1 / rate)
        keyboard.up(key)

    def is_log_slider(self, slider: Slider) -> bool:
        return self.page.evaluate(
            "(i) => !!document.querySelector(`[data-lt-slider=\"${i}\"]`).closest('.lecture-log-slider')", slider.index)

    def type_value(self, slider: Slider, text: str) -> None:
        """Type ``text`` into a log slider's readout and press Enter, as a learner does."""
        readout = self.page.locator(f'[data-lt-slider="{slider.index}"] .widget-readout').first
        readout.scroll_into_view_if_needed()
        readout.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.type(text)
        self.page.keyboard.press("Enter")

    def dropdowns(self, slider: Slider) -> int:
        """How many dropdowns the slider's explorer has."""
        return self.page.evaluate(
            """(id) => document.querySelectorAll(`[data-lt-container="${id}"] .widget-dropdown select`).length""",
            slider.container)

    def change_dropdown(self, slider: Slider, which: int = 0) -> None:
        """Move a dropdown of the slider's explorer one option with the keyboard (ArrowDown, ArrowUp
        on the last option): a real key event on the focused ``<select>``."""
        select = self.page.locator(f'[data-lt-container="{slider.container}"] .widget-dropdown select').nth(which)
        select.scroll_into_view_if_needed()
        index, count = select.evaluate("el => [el.selectedIndex, el.options.length]")
        select.focus()
        self.page.keyboard.press("ArrowUp" if index == count - 1 else "ArrowDown")

    def drag(self, slider: Slider, fraction: float = 0.12, *, steps: int = 8, interval: float = 0.03,
             direction: int | None = None) -> None:
        """Drag a slider's handle with the mouse, as a hand does: press on the handle, move ``fraction``
        of the track in ``steps`` pointer moves ``interval`` seconds apart, release. The direction is
        towards the longer side of the track unless given (+1 right, -1 left)."""
        handle = self.handle(slider)
        handle.scroll_into_view_if_needed()
        box = handle.bounding_box()
        track = self.page.locator(f'[data-lt-slider="{slider.index}"] .noUi-target').first.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        if direction is None:
            direction = 1 if x - track["x"] < track["x"] + track["width"] - x else -1
        distance = direction * fraction * track["width"]
        mouse = self.page.mouse
        mouse.move(x, y)
        mouse.down()
        for step in range(1, steps + 1):
            time.sleep(interval)
            mouse.move(x + distance * step / steps, y)
        time.sleep(interval)
        mouse.up()

    def press_at(self, slider: Slider, keys: list[str], interval: float) -> None:
        """Press ``keys`` on a slider's handle one after another, ``interval`` seconds apart (0.04 s is a
        key held down: autorepeat at about 25 Hz; 0.15 s a learner tapping)."""
        handle = self.handle(slider)
        handle.scroll_into_view_if_needed()
        handle.focus()
        for key in keys:
            self.page.keyboard.press(key)
            time.sleep(interval)

    def readout_error(self, slider: Slider) -> str | None:
        """The exception an explorer printed into its readout (``<pre style='color:#b00'>``), if any."""
        return self.page.evaluate(
            """(id) => { const box = document.querySelector(`[data-lt-container="${id}"]`);
                 const pre = box && box.querySelector('.lecture-readout pre');
                 return pre ? pre.textContent : null; }""", slider.container)

    # latency ------------------------------------------------------------------------------------
    def install_probes(self) -> None:
        self.page.evaluate(_PROBE_JS)

    def _probe_counts(self, slider: Slider) -> list[int]:
        return self.page.evaluate(
            "(id) => [(window.__lt.images[id] || []).length, (window.__lt.readouts[id] || []).length]",
            slider.container)

    def _wait_probe(self, slider: Slider, seen: list[int], streams: tuple[str, ...], timeout: float) -> bool:
        try:
            self.page.wait_for_function(
                """([id, seen, streams]) => streams.some((s, i) =>
                     (window.__lt[s][id] || []).length > seen[s === 'images' ? 0 : 1])""",
                arg=[slider.container, seen, list(streams)], timeout=timeout * 1000, polling="raf")
            return True
        except Exception:
            return False

    def _kernel_frame_ms(self, slider: Slider, after: int, timeout: float) -> float | None:
        """Key press -> the first frame from the kernel (not predicted) after frame ``after``, painted."""
        try:
            handle = self.page.wait_for_function(
                """([id, after]) => { const frames = window.__lt.images[id] || [];
                     for (let i = after + 1; i < frames.length; i++)
                       if (!frames[i].ahead) return frames[i].painted - window.__lt.key;
                     return false; }""",
                arg=[slider.container, after], timeout=timeout * 1000, polling="raf")
            return handle.json_value()
        except Exception:
            return None

    def measure_latency(self, slider: Slider, presses: int = 12, *, timeout: float = 10.0,
                        pause: float = 0.08) -> tuple[str, list[dict]]:
        """Press the slider's keys ``presses`` times (one way, then back, ...) and time each from the
        keydown to the animation frame after the explorer's new image loaded.

        Returns ``(kind, samples)``: kind ``"figure"`` when the slider redraws the figure,
        ``"readout"`` when it only changes the readout (then the readout's change is timed), or
        ``"none"`` when the first press changed nothing. Each sample has ``ms`` (to the painted
        frame), ``load_ms`` (to the image load or readout mutation) and ``key``; for a figure also
        ``ahead`` (that first frame was one the page held ahead, lecture_lib.explorers.ahead) and
        ``kernel_ms`` (to the frame the kernel then sent for the move, painted).
        """
        self.install_probes()
        handle = self.handle(slider)
        handle.scroll_into_view_if_needed()
        handle.focus()
        first = self.key_for(slider)
        other = "ArrowLeft" if first == "ArrowRight" else "ArrowRight"
        kind = None
        samples = []
        for i in range(presses):
            key = first if i % 2 == 0 else other
            seen = self._probe_counts(slider)
            handle.press(key)
            if kind is None:
                if not self._wait_probe(slider, seen, ("images", "readouts"), timeout):
                    return "none", [{"key": key, "ms": None, "load_ms": None}]
                self.wait_idle(10, settle=0.3)      # the image follows the readout within one refresh
                kind = "figure" if self._probe_counts(slider)[0] > seen[0] else "readout"
            elif not self._wait_probe(slider, seen, ("images",) if kind == "figure" else ("readouts",), timeout):
                samples.append({"key": key, "ms": None, "load_ms": None})
                continue
            stream, n = ("images", seen[0]) if kind == "figure" else ("readouts", seen[1])
            sample = self.page.evaluate(
                """([stream, id, n]) => { const f = window.__lt[stream][id][n];
                     return {ms: f.painted - window.__lt.key, load_ms: f.at - window.__lt.key,
                             ahead: Boolean(f.ahead)}; }""",
                [stream, slider.container, n])
            sample["key"] = key
            if kind == "figure":
                sample["kernel_ms"] = self._kernel_frame_ms(slider, n, timeout) if sample["ahead"] else sample["ms"]
            samples.append(sample)
            time.sleep(pause)   # let the readout and any trailing messages land
            self.wait_idle(10, settle=0.05)
        return kind, samples

    def _tab_key(self) -> tuple:
        return (id(self.server), json.dumps(self.viewport, sort_keys=True), self.file_browser)

    def _console_message(self, message) -> None:
        if message.type == "error":
            self.console.append(f"{message.type}: {message.text}")

    def _page_error(self, error) -> None:
        self.console.append(f"pageerror: {error}")

    def close(self) -> None:
        """End the notebook's kernel and close it. The JupyterLab tab stays open for the next session on the same
        server and window, unless this one ends in an exception (then the next starts from a fresh page)."""
        failed = sys.exc_info()[0] is not None
        closed = False
        try:
            if self.page is not None:
                closed = self.page.evaluate(
                    """async (name) => { const p = (%s)(name);
                         if (!p) return false;
                         p.context.model.dirty = false;
                         await p.sessionContext.shutdown();
                         p.dispose();
                         // every log the tests and the benchmark keep in the page (__lt, __ltPaints, __ltm, ...): the
                         // next notebook in this tab starts its own (the benchmark's once counted two chapters' moves as one)
                         for (const key of Object.keys(window)) if (key.startsWith('__lt')) delete window[key];
                         return true; }""" % _PANEL_JS, self.name)
        except Exception:
            pass
        if self.page is not None:
            self.page.remove_listener("console", self._console_message)
            self.page.remove_listener("pageerror", self._page_error)
            if closed and not failed and self.server.front_end == "lab":
                _OPEN_TABS[self._tab_key()] = (self.server, self.page)
            else:
                self.context.close()
        self.context = self.page = None
        self.server.shutdown_sessions()


# The JupyterLab tab each server's last session left open, with that server, by server and window (see
# NotebookSession.open): booting JupyterLab in a fresh page costs Chromium about 8 CPU-s on the 2-core machine,
# opening a notebook in a booted tab about 2.5.
_OPEN_TABS: dict[tuple, tuple] = {}


def default_mismatches(displayed: list[dict], declared: list[dict]) -> list[str]:
    """Controls whose page shows something other than the lesson's declared value: a log or integer
    slider must show exactly its label, a linear slider a number within half a unit of its last
    shown digit of the declared value, a dropdown the declared option. Controls are paired by the
    model id each carries as a class; a control on the page that the kernel does not know is an error."""
    by_model = {row["model"]: row for row in declared}
    problems = []
    for shown in displayed:
        row = by_model.get(shown["model"])
        if row is None:
            problems.append(f"{shown['label']!r}: not made by lecture_lib.explorers.base's helpers (no declared value)")
            continue
        text = (shown["shown"] or "").replace("\u00a0", " ").strip()
        if row["kind"] == "float":
            try:
                number = float(text.replace(",", ""))
            except ValueError:
                problems.append(f"{shown['label']!r}: shows {text!r}, not a number (declared {row['declared']})")
                continue
            decimals = len(text.split(".")[1]) if "." in text else 0
            if abs(number - row["declared"]) > 0.5 * 10 ** -decimals + 1e-12:
                problems.append(f"{shown['label']!r}: shows {text!r}, declared {row['declared']}")
        elif text != (row["expected"] or "").replace("\u00a0", " ").strip():
            problems.append(f"{shown['label']!r}: shows {text!r}, declared {row['expected']!r}")
    return problems


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation; NaN for no values."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    position = q * (len(values) - 1)
    low = int(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def median(values: list[float]) -> float:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


# How far a live figure (background + canvas) may differ from the kernel's Agg drawing of the same frame
# per channel, 0-255: anti-aliasing, hatch phase, the browser's own text rendering (Ch6 once measured 6.3, with
# 0.4% of blocks far off: a missing curve or label shows in MAX_FAR_PIXELS)
MAX_MEAN_DIFFERENCE = 7.0
MAX_FAR_PIXELS = 0.025         # share of 4x4 blocks off by more than 48: curves or labels missing or misplaced


def drift(session: "NotebookSession") -> list[dict]:
    """Live figures whose canvas over its background differs from Agg's drawing of the same frame. A figure
    still taking a frame when it is photographed (a background loading on a busy machine) is looked at again
    once the kernel has been idle for a second, then for three: a real difference stays, one caught in flight
    does not."""
    def measure():
        return [d for d in session.live_figure_differences()
                if "error" in d or d["mean"] > MAX_MEAN_DIFFERENCE or d["far"] > MAX_FAR_PIXELS]

    found = measure()
    for settle in (1.0, 3.0):
        if not found:
            break
        session.wait_idle(30, settle=settle)
        found = measure()
    return found


def console_context(session: "NotebookSession") -> str:
    lines = session.console[-10:]
    return ("\nbrowser console errors:\n" + "\n".join(lines)) if lines else ""
