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
