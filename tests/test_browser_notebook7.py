"""Issue 19 §6, in Notebook 7 rather than JupyterLab: every slider and dropdown of every explorer answers the
keyboard (the notebook's own shortcuts once took the arrow keys). A file of its own so that pytest-xdist can run it
beside the chapters' walks in tests/test_browser.py."""

from __future__ import annotations

import pytest

from browser_support import LAYOUT, NotebookServer, NotebookSession, default_mismatches

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def notebook7_server():
    server = NotebookServer().start()
    try:
        yield server
    finally:
        server.stop()


def every_explorer_notebook(server) -> str:
    """A scratch notebook showing every explorer of every chapter at its defaults, one per cell."""
    from lecture_lib.explorers.base import explorer_classes

    cells = [f"from {cls.__module__} import {cls.__name__}\n{cls.__name__}()" for cls in explorer_classes()]
    return server.add_notebook("every_explorer.ipynb", cells)


def test_keyboard_moves_sliders_and_dropdowns_in_notebook_7(notebook7_server, browser):
    """Issue 19 §6: in Notebook 7 the notebook's shortcuts took the arrow keys (focus jumped to a
    heading cell); the sliders and dropdowns of every explorer must answer the keyboard there too.
    One notebook holds every explorer (the chapters themselves run in JupyterLab, where the walks in
    tests/chapter_walk.py move every slider), so here every dropdown and the first slider of each
    explorer are tried, without running every chapter a second time."""
    name = every_explorer_notebook(notebook7_server)
    session = NotebookSession(notebook7_server, browser, name, viewport=dict(LAYOUT))
    try:
        session.open()
        session.run_all(timeout=300)   # all 21 explorers in one notebook; 120 s ran out on a loaded machine
        assert not session.errors(), session.errors()
        from lecture_lib.explorers.base import explorer_classes

        assert len(session.figure_names()) >= len(explorer_classes()), "not every explorer was shown"
        mismatches = default_mismatches(session.displayed_controls(), session.declared_controls())
        assert not mismatches, mismatches
        stuck = [d for d in session.press_dropdowns(restore=False) if d["after"] == d["before"] or not d["focused"]]
        assert not stuck, f"Notebook 7: dropdowns the arrow keys did not move: {stuck}"
        failures = []
        first_of_each = list({slider.container: slider for slider in reversed(session.sliders())}.values())
        for slider in first_of_each:
            move = session.move(slider)
            focused = session.page.evaluate("() => !!(document.activeElement && document.activeElement.closest('.widget-slider'))")
            if not move.changed or move.value_before == move.value_after or not focused:
                failures.append(f"{slider.describe()}: {move.key} {move.value_before} -> {move.value_after}, "
                                f"focus on the slider: {focused}")
        assert session.sliders() and not failures, "Notebook 7:\n" + "\n".join(failures)
    finally:
        session.close()
