"""Quick flicks and dropdown walks in a real JupyterLab (issue 48 §1; DESIGN.md, "Performance budgets"): the picture
never stands still long while the hand's value has changed, it never goes back to a position older than one already
painted, and it ends on the hand's last value. Driven by tools/bench_flicks.py with real pointer and key events.

`make test` samples the controls of the issue's slowest measurements (``bench_flicks.SAMPLE``: Chapter 1's batch B,
Chapter 2's racks R, Chapter 4's hop latency, Chapter 8's measurement dropdown; chapters found by their number's
prefix, so a renumbering of later chapters does not lose them) in about 75 s; `make bench` flicks every slider and
walks every dropdown of every chapter and holds them to the goals (longest freeze <= 250 ms, p90 <= 150 ms).
Here the browsers of other test files run beside this one on the same cores, so the freeze is held to
:data:`FREEZE_LIMIT_MS`, twice the goal: it still fails the freezes the issue measured (up to 728 ms).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_flicks  # noqa: E402

pytestmark = pytest.mark.browser

FREEZE_LIMIT_MS = 2 * bench_flicks.GOAL_LONGEST


def test_the_sample_names_controls_of_chapters_that_exist():
    """Every sampled control's chapter is there (a renumbering that lost one would sample nothing)."""
    found = bench_flicks.sampled()
    assert len(found) == len({prefix for prefix, _ in bench_flicks.SAMPLE}), found


@pytest.mark.parametrize("name, labels", bench_flicks.sampled(), ids=[n for n, _ in bench_flicks.sampled()])
def test_a_quick_flick_or_a_dropdown_walk_never_freezes_the_picture(lab_server, browser, name, labels):
    result = bench_flicks.measure(lab_server, browser, name, print, labels)
    assert not result["errors"], f"{name}: errors on the page: {result['errors'][:3]}"
    rows = result["rows"]
    moved = {row["control"] for row in rows}
    assert all(any(control.startswith(label) for control in moved) for label in labels), \
        f"{name}: controls not found to move: {labels} (moved {sorted(moved)})"
    lines = [f"{row['control']} ({row['explorer']}, {row['how']}): freeze {row['freeze']:.0f} ms, "
             f"{row['changes']} value changes, {row['paints']} paints, {row['stale']} stale, {row['backward']} backward"
             + (", its last value never painted" if row["missed"] else "") for row in rows]
    assert all(row["changes"] > 0 for row in rows), f"{name}: a gesture that changed nothing:\n" + "\n".join(lines)
    assert not any(row["missed"] for row in rows), f"{name}: the hand's last value never painted:\n" + "\n".join(lines)
    assert not any(row["stale"] or row["backward"] for row in rows), \
        f"{name}: stale or backward paints:\n" + "\n".join(lines)
    assert all(row["freeze"] <= FREEZE_LIMIT_MS for row in rows), \
        f"{name}: a freeze over {FREEZE_LIMIT_MS:.0f} ms:\n" + "\n".join(lines)
