"""`make bench`: the course's performance figures against DESIGN.md's budgets.

Prints (1) import time, (2) each notebook's headless run time, (3) each explorer's in-process
update time beside a naive update that re-creates the matplotlib figure, and (4) sliders moved the
way people move them in a real JupyterLab + Chromium, beside a label-only floor moved the same way
(tools/bench_moves.py: keys 0.15 s apart, a held key, drags, dropdowns; stale paints). Not part of
`make test`.

(4b) quick flicks and dropdown walks (tools/bench_flicks.py, issue 48: 12 real pointer moves 35 ms apart to the far
end of each slider's track and back, ArrowDown on each dropdown): each gesture's longest freeze, the p90 over them,
stale and backward paints, against the goals (longest <= 250 ms, p90 <= 150 ms, 0 stale).

(5) the lab's goals on this machine (issue 50; ``BENCH_LAB_FULL=1`` adds the full mode, ``BENCH_LAB_ONLY=1`` runs
only this section).

``BENCH_QUICK=1 make bench`` skips (2) and (3), moves the controls of chapters 1, 4 and 5 only and flicks the sampled
controls of tests/test_flicks.py only:
about 5 minutes on the course's 2-core machine. ``BENCH_SLOWEST=N`` lists each notebook's N slowest moves under
its row (which control, which kind, painted ahead or by the kernel). ``BENCH_ONE_AT_A_TIME=1`` adds the older
measurement of tools/bench_browser.py (one key press at a time, each waited for, and the naive
``interact``).
"""

from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tools"))


def report(line: str = "") -> None:
    print(line, flush=True)


def import_times() -> None:
    report("== import time (budget: import lecture_lib <= 1 s) ==")
    for statement in ("import lecture_lib", "from lecture_lib import hardware, models, roofline"):
        code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
        runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
                for _ in range(3)]
        report(f"  {statement:<55} {min(runs) * 1e3:8.1f} ms (best of 3)")


def notebook_times() -> None:
    from test_notebooks import execute

    report("== notebooks, headless (budget: <= 10 s each, <= 60 s together) ==")
    total = 0.0
    for folder in ("notebooks", "solutions", "exercises"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            _, seconds = execute(path)
            total += seconds
            verdict = "ok" if seconds <= 10 else "OVER BUDGET"
            report(f"  {folder}/{path.name:<45} {seconds:6.1f} s  {verdict}")
    report(f"  all together {total:.1f} s  {'ok' if total <= 60 else 'OVER BUDGET'}")


def naive_update(explorer) -> float:
    """What a plain `interact` does per change: a brand-new pyplot figure, drawn and encoded."""
    import matplotlib.pyplot as plt

    started = time.perf_counter()
    figure, axes = plt.subplots(1, len(explorer.view.figure.axes), figsize=explorer.view.figure.get_size_inches())
    axes = axes if hasattr(axes, "__len__") else [axes]
    for source, target in zip(explorer.view.figure.axes, axes):
        for line in source.get_lines():
            x, y = line.get_data()
            target.plot(x, y, color=line.get_color(), lw=line.get_linewidth())
        target.set_xscale(source.get_xscale())
        target.set_yscale(source.get_yscale())
        target.legend([l.get_label() for l in source.get_lines()][:6], loc="upper left")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return time.perf_counter() - started


def explorer_times(moves: int = 15) -> None:
    import ipywidgets as widgets
    import numpy as np

    report("== explorer update in process: ours (blit + in-place) vs naive re-created figure ==")
    from lecture_lib.explorers.base import explorer_classes

    for cls in explorer_classes():
        explorer = cls()
        ours = []
        for name, control in explorer.controls.items():
            if not isinstance(control, (widgets.FloatSlider, widgets.FloatLogSlider, widgets.IntSlider)):
                continue
            low, high = (control.base ** control.min, control.base ** control.max) if isinstance(
                control, widgets.FloatLogSlider) else (control.min, control.max)
            values = np.geomspace(low, high, moves) if isinstance(control, widgets.FloatLogSlider) else \
                np.linspace(low, high, moves)
            for value in values:
                started = time.perf_counter()
                control.value = type(control.value)(value)
                ours.append(time.perf_counter() - started)
        naive = [naive_update(explorer) for _ in range(moves)]
        ours_ms, naive_ms = statistics.median(ours) * 1e3, statistics.median(naive) * 1e3
        report(f"  {cls.__name__:<26} ours median {ours_ms:6.1f} ms (p90 {np.percentile(ours, 90) * 1e3:5.1f})"
               f"   naive {naive_ms:6.1f} ms   ratio {naive_ms / ours_ms:4.1f}×")


def browser_times() -> None:
    if not Path("/usr/bin/chromium").exists():
        report("== browser: skipped (no /usr/bin/chromium; apt-get install -y chromium) ==")
        return
    import bench_moves

    report("== sliders moved as people move them, in a real JupyterLab + Chromium (issue 28 goals: keys median "
           "<= 1.0x and p90 <= 1.5x the floor, drags median <= 1.2x and p90 <= 2x the floor's drag, 0 stale) ==")
    bench_moves.run(report, slowest=int(os.environ.get("BENCH_SLOWEST") or 0))
    if os.environ.get("BENCH_ONE_AT_A_TIME", "") not in ("", "0"):
        import bench_browser

        report("== one key press at a time, each waited for (budget: median <= 1.2x the label-only floor, "
               "p90 <= 45 ms) ==")
        bench_browser.run(report)


def flick_times() -> None:
    if not Path("/usr/bin/chromium").exists():
        report("== flicks: skipped (no /usr/bin/chromium) ==")
        return
    import bench_flicks

    quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    report("== quick flicks and dropdown walks, in a real JupyterLab + Chromium (issue 48 goals: longest freeze "
           f"<= {bench_flicks.GOAL_LONGEST:.0f} ms, p90 <= {bench_flicks.GOAL_P90:.0f} ms, 0 stale paints)"
           + (": the sampled controls (BENCH_QUICK)" if quick else ": every slider and dropdown of every chapter") + " ==")
    bench_flicks.run(report, sample=quick)


def lab_goals() -> None:
    """Issue 50's goals for the lab (Chapter 11), strict: what tests/test_measure.py holds only loosely."""
    from notebook_runs import run

    from lecture_lib import measure

    report("== the lab on this machine (issue 50: batch 1 and batch >= 256 within 15% of the roofline, "
           "knee within 2x of B*, Run All <= 20 s, full mode <= 2 min) ==")
    modes = ["quick"] + (["full"] if os.environ.get("BENCH_LAB_FULL", "") not in ("", "0") else [])
    for mode in modes:
        got = measure.profile(mode)
        s = got.summary()
        checks = [("batch 1 / roofline", s["batch1_ratio"], abs(s["batch1_ratio"] - 1) <= 0.15),
                  ("batch >= 256 / roofline", s["large_batch_ratio"], abs(s["large_batch_ratio"] - 1) <= 0.15),
                  ("knee / predicted B*", s["knee"] / s["balance_batch"], 0.5 <= s["knee"] / s["balance_batch"] <= 2),
                  ("seconds measuring", s["seconds"], s["seconds"] <= (20 if mode == "quick" else 120))]
        report(f"  {mode}: peak {s['peak_fp32'] / 1e9:.1f} GFLOP/s float32, {s['peak_fp64'] / 1e9:.1f} float64, "
               f"read {s['read_bandwidth'] / 1e9:.1f} GB/s, knee {s['knee']:.1f}, B* {s['balance_batch']:.1f}, "
               f"load before {got.machine['load_average']}")
        for label, value, ok in checks:
            report(f"    {label:<26} {value:8.2f}  {'ok' if ok else 'MISSED'}")
        for note in got.notes:
            report(f"    note: {note}")
    _, seconds = run(ROOT / "notebooks" / "11_lab_roofline_on_your_machine.ipynb")
    report(f"  Run All of the lab notebook: {seconds:.1f} s  {'ok' if seconds <= 20 else 'OVER BUDGET'}")


def main() -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    if os.environ.get("BENCH_LAB_ONLY", "") not in ("", "0"):
        lab_goals()
        return
    import_times()
    lab_goals()
    if not quick:
        notebook_times()
        explorer_times()
    browser_times()
    flick_times()


if __name__ == "__main__":
    main()
