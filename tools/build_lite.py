"""Build the course as a JupyterLite site (``make lite``): JupyterLab and a Python kernel (Pyodide)
running entirely in the browser tab, served as static files.

What goes in, all from PyPI and the npm registry (no other host):

* the chapters (``notebooks/``) and the exercise notebooks (``exercises/``) as the site's files, each
  starting with a note and a ``%pip install lecture-lib`` cell (the tab's Python has no course library
  until then; the lab, which times the computer it runs on, first says that it measures nothing in the
  browser and shows the course machine's saved measurements instead, and the first link to it elsewhere says so), with links re-pointed to the site's layout (chapters at the top, ``exercises/``) and
  links to what the site does not hold (solutions, docs) reduced to their text;
* ``pypi/``: the wheels piplite installs from with no package index: ``lecture-lib`` itself (its
  runtime needs are only numpy, sympy, matplotlib, pillow and ipywidgets) and the pure-Python
  wheels the widgets need that Pyodide does not ship (ipywidgets, jupyterlab_widgets, comm);
* ``static/pyodide/``: the Pyodide runtime from npm's ``pyodide`` package, at exactly the version
  ``jupyterlite-pyodide-kernel`` was built for. That package holds the interpreter and standard
  library but none of Pyodide's packages, so its ``pyodide-lock.json`` is rewritten: every
  pure-Python package the kernel itself needs at start (micropip, IPython and its dependencies,
  jedi) and the course's pure ones (sympy, mpmath) point at the same wheel from PyPI, copied beside
  the lock; every other package (numpy, matplotlib, pillow and their compiled friends) points at
  the Pyodide distribution's CDN, so those load when the browser is online.

So a kernel starts, and sympy and ipywidgets import, with no network at all; numpy and matplotlib
(hence lecture_lib, whose formulas, checker and explorers import numpy) need the Pyodide
distribution online.

Usage: ``python tools/build_lite.py [--output lite] [--work build/lite-src]``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Pyodide packages (by lock name) localised from PyPI, with their dependencies (closed over the lock).
LOCAL_ROOTS = ["micropip", "packaging", "ipython", "jedi", "sympy", "mpmath", "traitlets", "pygments",
               "typing-extensions"]
# Wheels for piplite's own index that Pyodide's lock does not have at all.
EXTRA_WHEELS = ["comm", "ipywidgets>=8.1,<9"]
PYODIDE_PYTHON = "3.14"


def run(*command, cwd=None) -> None:
    print("+", " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=cwd)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pyodide_version() -> str:
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    return PYODIDE_VERSION


def fetch_pyodide(version: str, cache: Path, dest: Path) -> None:
    """npm's ``pyodide`` package (the runtime only) unpacked into ``dest``."""
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"pyodide-{version}.tgz"
    if not tarball.exists():
        if shutil.which("npm") is None:
            raise SystemExit("make lite needs npm (Node.js) to fetch the Pyodide runtime from the npm registry: "
                             "apt-get install -y npm")
        run("npm", "pack", f"pyodide@{version}", "--silent", "--pack-destination", cache)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as archive:
        for member in archive.getmembers():
            if not member.isfile() or not member.name.startswith("package/"):
                continue
            name = member.name[len("package/"):]
            if name.endswith((".map", ".d.ts", ".html")) or "/" in name:
                continue
            (dest / name).write_bytes(archive.extractfile(member).read())


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(packages: dict, roots: list[str]) -> list[str]:
    """The lock's names of ``roots`` and everything they depend on (names compared PEP 503-style:
    the lock says ``prompt-toolkit`` but ipython's entry depends on ``prompt_toolkit``)."""
    keys = {normalise(key): key for key in packages}
    seen, todo = [], list(roots)
    while todo:
        name = keys.get(normalise(todo.pop()))
        if name is None or name in seen:
            continue
        seen.append(name)
        todo += packages[name].get("depends", [])
    return sorted(seen)


def download(requirement: str, dest: Path, cache: Path) -> Path:
    """One wheel from PyPI (cached in ``cache``), copied into ``dest``; returns its path there."""
    cache.mkdir(parents=True, exist_ok=True)
    before = set(cache.glob("*.whl"))
    run(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
        # as the browser's Python sees it: pure wheels for CPython 3.14, whatever runs this script
        "--python-version", PYODIDE_PYTHON, "--implementation", "py", "--abi", "none", "--platform", "any",
        "--dest", cache, requirement)
    name, _, version = requirement.partition("==")
    name = re.split(r"[<>=!~]", name)[0]
    norm = re.sub(r"[-_.]+", "_", name).lower()
    candidates = [p for p in cache.glob("*.whl")
                  if re.sub(r"[-_.]+", "_", p.name.split("-")[0]).lower() == norm
                  and (not version or p.name.split("-")[1] == version)]
    new = [p for p in candidates if p not in before] or candidates
    if not new:
        raise RuntimeError(f"pip downloaded no wheel for {requirement}")
    wheel = max(new, key=lambda p: p.stat().st_mtime)
    target = dest / wheel.name
    shutil.copyfile(wheel, target)
    return target


def localise_lock(pyodide_dir: Path, version: str, wheel_cache: Path) -> list[str]:
    """Point the pure-Python packages the kernel needs at PyPI's wheels beside the lock, and every
    other package at the Pyodide CDN. Returns the localised package names."""
    lock_path = pyodide_dir / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text())
    packages = lock["packages"]
    from jupyterlite_pyodide_kernel.constants import PYODIDE_CDN_URL   # where the kernel would load it from

    cdn = PYODIDE_CDN_URL.rstrip("/") + "/"
    assert version in cdn, (version, cdn)
    local = []
    for name in closure(packages, LOCAL_ROOTS):
        entry = packages[name]
        if not entry["file_name"].endswith("-none-any.whl"):
            continue
        wheel = download(f"{name}=={entry['version']}", pyodide_dir, wheel_cache)
        entry["file_name"] = wheel.name
        entry["sha256"] = sha256(wheel)
        local.append(name)
    for name, entry in packages.items():
        if name not in local and not re.match(r"^[a-z]+://", entry["file_name"]):
            entry["file_name"] = cdn + entry["file_name"]
    lock_path.write_text(json.dumps(lock, indent=1))
    return local


# JupyterLite takes every lab extension installed beside it; in a venv that also has the test extra
# (nbgrader, voila) those would appear in the site and call a server that is not there.
LITE_EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "@jupyter-widgets/jupyterlab-manager")


def keep_only_lite_extensions(config_path: Path) -> list[str]:
    config = json.loads(config_path.read_text())
    data = config["jupyter-config-data"]
    extensions = data.get("federated_extensions", [])
    data["federated_extensions"] = [e for e in extensions if e["name"] in LITE_EXTENSIONS]
    config_path.write_text(json.dumps(config, indent=2))
    return sorted(e["name"] for e in extensions if e["name"] not in LITE_EXTENSIONS)


# ---------------------------------------------------------------- the notebooks as the site holds them
# The site's files: the chapters at the top, the exercise notebooks in exercises/ (no solutions, no docs).
LITE_FOLDERS = {"notebooks": "", "exercises": "exercises"}
INSTALL_ID = "lite-install"
INSTALL_NOTE_ID = "lite-install-note"
INSTALL_NOTE = (
    "<div style=\"border-left:4px solid #ff7f0e;padding:6px 12px;background:#fff8f0\">\n\n"
    "**In JupyterLite, run the next cell first.** It installs the course's library (`lecture-lib`) into this "
    "tab's Python from the wheels bundled in the site; every notebook needs it, once per kernel. numpy and "
    "matplotlib come from Pyodide's CDN, so keep the browser online.\n\n</div>")
# The import right after the install reports a numpy or matplotlib that Pyodide could not fetch in one plain
# sentence (lecture_lib's warning), before any chapter cell fails on `import numpy` with a traceback.
INSTALL_CELL = "%pip install lecture-lib\nimport lecture_lib"
LITE_EXERCISES_BANNER = (
    "<div style=\"border-left:4px solid #1f77b4;padding:6px 12px;background:#f5f9ff\">\n\n"
    "**Exercises.** Work each problem in its cell: replace `answer = ...` with your own work, then run the "
    "check cell below it. The check says whether you are right and, if not, gives a nudge, never the answer. "
    "Hints unfold under each problem. This copy lives in your browser's storage: download it (File → "
    "Download) to keep your work.\n\n</div>")


# The lab (notebooks/NN_lab_*.ipynb) times the computer it runs on; in the browser that would be Pyodide, not the
# learner's CPU. Its site copy says so under the install cell, and its notebook shows the course machine's saved profile there.
LAB_NAME = re.compile(r"\d+_lab_[\w-]*\.ipynb")
LAB_NOTE_ID = "lite-lab-note"
LAB_NOTE = (
    "<div style=\"border-left:4px solid #d62728;padding:6px 12px;background:#fff5f5\">\n\n"
    "**This lab measures nothing in the browser.** It is made to time *your* computer, and this tab's Python cannot: "
    "Pyodide, the Python JupyterLite runs, has no working threads (Pyodide's documentation, \"Pyodide Python "
    "compatibility\": `threading` imports but does not work) and its NumPy is compiled to WebAssembly, so a timing "
    "here would describe the browser, not your CPU. Run All still works: the cells use the course machine's saved "
    "measurements (`measure.example_profile()`), so you can follow the lab and try its problems. To measure your own "
    "machine, download this notebook (File → Download) and run it in JupyterLab on your computer (`make lab`)."
    "\n\n</div>")
LAB_LINK_NOTE = ("*In this browser copy of the course the lab measures nothing (the browser's Python cannot time "
                 "your CPU); it walks through the course machine's saved measurements instead. Run it in JupyterLab "
                 "to measure your own computer.*")


def lite_path(repo_path: str) -> str | None:
    """Where a repository file sits among the site's files (``notebooks/01_x.ipynb`` -> ``01_x.ipynb``,
    ``exercises/01_x.ipynb`` -> ``exercises/01_x.ipynb``); None for a file the site does not hold."""
    parts = posixpath.normpath(repo_path).split("/")
    if len(parts) < 2 or parts[0] not in LITE_FOLDERS or ".." in parts:
        return None
    return posixpath.join(LITE_FOLDERS[parts[0]], *parts[1:]) if LITE_FOLDERS[parts[0]] else posixpath.join(*parts[1:])


def lite_links(source: str, repo_path: str) -> str:
    """``source`` (markdown of the notebook at ``repo_path``) with each relative link re-pointed to the
    site's layout, or reduced to its text when the site does not hold the target (solutions, docs)."""
    from lecture_lib.practice import exercises

    here = lite_path(repo_path)

    def fix(match):
        text, target = match.group(1), match.group(2)
        if exercises._EXTERNAL.match(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        moved = lite_path(posixpath.join(posixpath.dirname(repo_path), path))
        if moved is None or here is None:
            return text
        relative = posixpath.relpath(moved, posixpath.dirname(here) or ".")
        return f"[{text}]({relative}{'#' + anchor if anchor else ''})"

    return exercises._LINK.sub(fix, source)


def lite_notebook(notebook, repo_path: str):
    """A copy of ``notebook`` as the site serves it: a note and a ``%pip install lecture-lib`` cell first (the
    library is not in the tab's Python until then), its links in the site's layout, outputs cleared."""
    import copy

    import nbformat

    from lecture_lib.practice import exercises

    copied = copy.deepcopy(notebook)
    is_lab = repo_path.startswith("notebooks/") and LAB_NAME.fullmatch(posixpath.basename(repo_path)) is not None
    told = is_lab
    for cell in copied.cells:
        if cell.get("id") == exercises.BANNER_ID:     # the repository's banner points at solutions/
            cell.source = LITE_EXERCISES_BANNER
        elif cell.cell_type == "markdown":
            cell.source = lite_links(cell.source, repo_path)
            if not told and LAB_NAME.search(cell.source):    # the first mention of the lab says what it does here
                cell.source = cell.source.rstrip() + "\n\n" + LAB_LINK_NOTE
                told = True
    note = nbformat.v4.new_markdown_cell(INSTALL_NOTE)
    note["id"] = INSTALL_NOTE_ID
    install = nbformat.v4.new_code_cell(INSTALL_CELL)
    install["id"] = INSTALL_ID
    copied.cells[:0] = [note, install]
    if is_lab:
        lab_note = nbformat.v4.new_markdown_cell(LAB_NOTE)
        lab_note["id"] = LAB_NOTE_ID
        copied.cells.insert(2, lab_note)               # right under the install cell, above the title
    return copied


def write_lite_files(files: Path) -> int:
    """Write every chapter and exercise notebook into ``files`` in the site's layout; the count."""
    import nbformat

    count = 0
    for folder in LITE_FOLDERS:
        for path in sorted((REPO / folder).glob("*.ipynb")):
            repo_path = f"{folder}/{path.name}"
            target = files / lite_path(repo_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(lite_notebook(nbformat.read(path, as_version=4), repo_path), target)
            count += 1
    return count


def build(output: Path, work: Path) -> None:
    if work.exists():
        shutil.rmtree(work)
    (work / "pypi").mkdir(parents=True)
    cache = REPO / "build" / "lite-cache"
    version = pyodide_version()

    # 1. the course library's wheel, and the pure wheels piplite serves beside it
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", work / "pypi", REPO)
    widgets_version = importlib.metadata.version("jupyterlab_widgets")   # matches the labextension
    for requirement in EXTRA_WHEELS + [f"jupyterlab_widgets=={widgets_version}"]:
        download(requirement, work / "pypi", cache / "wheels")

    # 2. the Pyodide runtime from npm, its lock localised
    pyodide_dir = work / "static" / "pyodide"
    fetch_pyodide(version, cache / "npm", pyodide_dir)
    local = localise_lock(pyodide_dir, version, cache / "wheels")
    print(f"Pyodide {version}: {len(local)} packages local: {', '.join(local)}")

    # 3. the site
    (work / "jupyter-lite.json").write_text(json.dumps({
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "LLM math course (JupyterLite)",
            "exposeAppInBrowser": True,     # window.jupyterapp, for the smoke test
            "litePluginSettings": {
                "@jupyterlite/pyodide-kernel-extension:kernel": {"disablePyPIFallback": True},
            },
        },
    }, indent=2))
    # the files (lite_dir/files): the chapters at the top, the exercise notebooks in exercises/
    # each starting with the %pip install cell, links re-pointed to this layout (tools: lite_notebook)
    write_lite_files(work / "files")
    (work / "jupyter_lite_config.json").write_text(json.dumps({"LiteBuildConfig": {"no_sourcemaps": True}}))
    if output.exists():
        shutil.rmtree(output)
    run(sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", work, "--output-dir", output, cwd=work)
    dropped = keep_only_lite_extensions(output / "jupyter-lite.json")
    if dropped:
        print(f"left out lab extensions the site does not need (some call a Jupyter server): {', '.join(dropped)}")
    print(f"JupyterLite site in {output}; serve it with: make lite-serve")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=REPO / "lite")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "lite-src")
    args = parser.parse_args(argv)
    build(args.output.resolve(), args.work.resolve())


if __name__ == "__main__":
    main()
