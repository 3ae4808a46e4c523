"""Shared fixtures. The browser ones start a real JupyterLab and headless Chromium once per session
(helpers in ``browser_support.py``); they skip with an install hint when Chromium or Playwright is
missing, except under CI (``CI`` set to a truthy value), where a missing browser is a failure."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

import browser_support

# check() records progress (lecture_lib.progress); tests, and every kernel they start, write to a
# throwaway file, never to the learner's ~/.lecture_lib. Set at import so kernels inherit it.
_PROGRESS_DIR = tempfile.mkdtemp(prefix="lecture-progress-")
os.environ["LECTURE_PROGRESS_FILE"] = os.path.join(_PROGRESS_DIR, "progress.json")


def pytest_unconfigure(config):
    shutil.rmtree(_PROGRESS_DIR, ignore_errors=True)


def _require_browser() -> None:
    reason = browser_support.browser_unavailable()
    if reason is None:
        return
    if browser_support.in_ci():
        pytest.fail(f"browser tests cannot run under CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


@pytest.fixture(scope="module")
def lab_server():
    """``jupyter lab`` on a free localhost port, token auth on, over a temporary copy of notebooks/."""
    _require_browser()
    server = browser_support.LabServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium driven by Playwright (``executable_path=/usr/bin/chromium``)."""
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
