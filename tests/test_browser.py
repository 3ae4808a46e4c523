"""The first half of the chapters in a real JupyterLab, in headless Chromium (DESIGN.md, "Testing layers" 4):
tests/chapter_walk.py walks each chapter (Run All, every control, every slider) and replays a learner's moves on the
same page. Chapters 05-09 are in tests/test_browser_later_chapters.py and the closer looks in
tests/test_browser_details.py, which pytest-xdist runs beside this file. Run with ``pytest -m browser``.
"""

from __future__ import annotations

import pytest

from browser_support import notebook_names
from chapter_walk import walk_and_replay

pytestmark = pytest.mark.browser

FIRST_HALF = [name for name in notebook_names() if name[:2] < "05"]


@pytest.mark.parametrize("name", FIRST_HALF or [pytest.param("(none)", marks=pytest.mark.skip("no notebooks"))])
def test_chapter_runs_every_control_moves_and_no_frame_goes_back_in_time(name, lab_server, browser):
    walk_and_replay(name, lab_server, browser)
