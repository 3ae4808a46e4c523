"""Shared fixtures. The browser ones start a real JupyterLab and headless Chromium once per session
(helpers in ``browser_support.py``); they skip with an install hint when Chromium or Playwright is
missing, except under CI (``CI`` set to a truthy value), where a missing browser is a failure."""

from __future__ import annotations

import os
import sys
import shutil
import tempfile

import pytest
from hypothesis import settings

import browser_support

# No per-example deadline: on a loaded 2-core machine (CI, a parallel run) a 0.2 s deadline fails sound code.
settings.register_profile("course", deadline=None)
settings.load_profile("course")

# check() records progress (lecture_lib.practice.progress); tests, and every kernel they start, write to a
# throwaway file, never to the learner's ~/.lecture_lib. Set at import so kernels inherit it.
_PROGRESS_DIR = tempfile.mkdtemp(prefix="lecture-progress-")
os.environ["LECTURE_PROGRESS_FILE"] = os.path.join(_PROGRESS_DIR, "progress.json")
# The lab (Chapter 11) saves the machine profile it measured; here, beside that throwaway progress file, never in the
# learner's ~/.lecture_lib/my_machine.json (lecture_lib.measure.profile_path also falls back to a temporary folder
# whenever PYTEST_CURRENT_TEST is set).
os.environ["LECTURE_PROFILE"] = os.path.join(_PROGRESS_DIR, "my_machine.json")
# The derivations the physics modules make on import (lecture_lib.formula.solve/simplify), remembered for every
# worker and kernel of the run, and the next run's, in a folder of this checkout's environment rather than
# ~/.cache: not a fixed place in the shared temp dir, where another user could have made the folder first.
os.environ.setdefault("LECTURE_CACHE_DIR", os.path.join(sys.prefix, "lecture-tests-cache"))


def pytest_configure(config):
    """One folder shared by the whole run, xdist's workers included (they are started after this and inherit
    the environment): notebooks executed once and read by every test that needs them (notebook_runs.py)."""
    if not hasattr(config, "workerinput") and not os.environ.get("LECTURE_TEST_SHARED"):
        os.environ["LECTURE_TEST_SHARED"] = tempfile.mkdtemp(prefix="lecture-tests-")
        config._lecture_shared = os.environ["LECTURE_TEST_SHARED"]


def pytest_unconfigure(config):
    shutil.rmtree(_PROGRESS_DIR, ignore_errors=True)
    if getattr(config, "_lecture_shared", None):
        shutil.rmtree(config._lecture_shared, ignore_errors=True)
        os.environ.pop("LECTURE_TEST_SHARED", None)


def _require_browser() -> None:
    reason = browser_support.browser_unavailable()
    if reason is None:
        return
    if browser_support.in_ci():
        pytest.fail(f"browser tests cannot run under CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


# Test files whose tests are shared out one by one among pytest-xdist's workers: each test stands alone (a
# notebook they read is executed once per run, notebook_runs.py). Every other file goes to one worker whole, so its
# module fixtures (a built site, a JupyterLab and its Chromium) are made once, and the chapters' walks run in two
# files side by side (tests/test_browser.py 00-04, tests/test_browser_later_chapters.py 05-09), each one chapter
# # after another: four browsers at once on two cores made the walks' timing-sensitive checks flaky. The Makefile says
# why `make test` starts one worker more than there are cores.
SHARED_OUT_ONE_BY_ONE = ("tests/test_notebooks.py", "tests/test_exercises.py", "tests/test_reveals_and_readouts.py",
                         "tests/test_every_explorer.py", "tests/test_fuzz.py")


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler for ``make test -n auto``: whole files, but for SHARED_OUT_ONE_BY_ONE."""
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False      # keep pytest_collection_modifyitems' order: longest work first

    class ByFileOrOneByOne(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return nodeid if path.endswith(SHARED_OUT_ONE_BY_ONE) else path

    return ByFileOrOneByOne(config, log)


def pytest_collection_modifyitems(config, items):
    """Longest work first, so that no worker is left with a long file while the others idle at the end: files
    with browser tests, then files with slow tests, then the rest, each file's tests kept together and in order
    (a stable sort on a rank per file; every xdist worker computes the same order)."""
    rank: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        mine = 0 if item.get_closest_marker("browser") else 1 if item.get_closest_marker("slow") else 2
        rank[path] = min(rank.get(path, 2), mine)
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])


@pytest.fixture(scope="session")
def lab_server():
    """``jupyter lab`` on a free localhost port, token auth on, over a temporary copy of notebooks/: one per
    test worker, reused by every browser test."""
    _require_browser()
    server = browser_support.LabServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")      # Playwright's sync API keeps an event loop running: only while its module runs
def browser():
    """Debian's headless Chromium driven by Playwright: its headless shell where installed (browser_support.launch_browser)."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        chromium = browser_support.launch_browser(playwright)
    except Exception:
        playwright.stop()
        raise
    try:
        yield chromium
    finally:
        try:
            chromium.close()
        finally:
            playwright.stop()
