"""tools/bench_moves.py's arithmetic (issue 28's benchmark), on a made-up page log: which frame answers which move,
and the slowest moves named by their control. The benchmark itself drives a real JupyterLab (``make bench``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_moves  # noqa: E402


def test_each_move_is_answered_by_the_first_frame_of_its_explorer_painted_after_it():
    log = {"inputs": [{"id": "1", "kind": "keys", "at": 100.0, "label": "batch B"},
                      {"id": "1", "kind": "keys", "at": 250.0, "label": "batch B"},
                      {"id": "2", "kind": "dropdown", "at": 300.0, "label": "chip"},
                      {"id": "2", "kind": "dropdown", "at": 300.0, "label": "chip"}],     # one keydown, two controls
             "paints": [{"id": "1", "at": 90.0, "painted": 95.0, "ahead": False},          # before the move: not its
                        {"id": "1", "at": 112.0, "painted": 116.0, "ahead": True},
                        {"id": "2", "at": 310.0, "painted": 420.0, "ahead": False},
                        {"id": "1", "at": 260.0, "painted": None, "ahead": True}]}          # never painted
    found = bench_moves.latencies(log)
    assert found["keys"] == [{"ms": 16.0, "ahead": True, "control": "#1 batch B"},
                             {"ms": None, "ahead": False, "control": "#1 batch B"}]
    assert found["dropdown"] == [{"ms": 120.0, "ahead": False, "control": "#2 chip"}]
    stats = bench_moves.summary(found["keys"])
    assert (stats["n"], stats["missed"], stats["median"], stats["ahead"]) == (2, 1, 16.0, 0.5)


def test_a_flick_freezes_from_the_first_value_change_after_a_paint_until_the_next_paint():
    """tools/bench_flicks.py's freeze: value changes at 0, 35, 70 ms; a paint of the value at 100 (painted 110), a
    lagging frame at 200 (painted 205: the picture moved, a step behind), the last value at 300 (painted 310)."""
    import bench_flicks

    moves = [{"at": 0.0}, {"at": 35.0}, {"at": 70.0}, {"at": 150.0}]
    paints = [{"at": 100.0, "painted": 110.0, "state": {"s": "2"}},
              {"at": 200.0, "painted": 205.0, "lagging": True, "state": {"s": "3"}},
              {"at": 300.0, "painted": 310.0, "state": {"s": "4"}}]
    hands = [{"at": 0.0, "control": "s", "position": "1"}, {"at": 35.0, "control": "s", "position": "2"},
             {"at": 70.0, "control": "s", "position": "3"}, {"at": 150.0, "control": "s", "position": "4"}]
    found = bench_flicks.gesture_figures(moves, paints, hands, end=1000.0)
    # 0 -> 110, then 150 -> 205 (lagging), then 205 -> 310: the longest is 110
    assert found["freeze"] == 110.0 and found["settle"] == 160.0 and not found["missed"]
    assert (found["stale"], found["backward"], found["changes"], found["paints"]) == (0, 0, 4, 3)
    # a frame of position 2 painted after 3's is backward; it changes nothing, and a last value never painted is missed until the end
    back = paints[:2] + [{"at": 250.0, "painted": 255.0, "state": {"s": "2"}}]
    found = bench_flicks.gesture_figures(moves, back, hands, end=1000.0)
    assert found["backward"] == 1 and found["missed"] and found["freeze"] == 1000.0 - 205.0
    stats = bench_flicks.summary([{"freeze": 100.0, "missed": False, "stale": 0, "backward": 0},
                                  {"freeze": 300.0, "missed": False, "stale": 1, "backward": 0}])
    assert (stats["longest"], stats["over"], stats["stale"]) == (300.0, 1, 1) and not bench_flicks.meets_goals(stats)
