"""Chapters 05-09 in a real JupyterLab, in headless Chromium, walked and replayed by tests/chapter_walk.py: a file
of its own so that pytest-xdist runs it beside tests/test_browser.py's chapters 00-04.
"""

from __future__ import annotations

import pytest

from browser_support import notebook_names
from chapter_walk import walk_and_replay

pytestmark = pytest.mark.browser

SECOND_HALF = [name for name in notebook_names() if name[:2] >= "05"]


@pytest.mark.parametrize("name", SECOND_HALF or [pytest.param("(none)", marks=pytest.mark.skip("no notebooks"))])
def test_chapter_runs_every_control_moves_and_no_frame_goes_back_in_time(name, lab_server, browser):
    walk_and_replay(name, lab_server, browser)
