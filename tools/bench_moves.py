"""Sliders moved the way people move them, in a real JupyterLab (headless Chromium): issue 28's benchmark.

Every move is a real input event, sent without waiting for the page to answer the one before:

* **keys**: on every slider of every explorer, arrow keys 0.15 s apart (→ → ← ←);
* **held**: on each explorer's first slider, a key held down (a keydown, then autorepeat keydowns at
  30 Hz; 8 one way, 8 back);
* **drag**: on every slider, a mouse drag of 12% of the track (press, 8 pointer moves 30 ms apart,
  release), one way and then back;
* **dropdown**: every dropdown one option down with the keyboard, then back up.

The page logs, for each explorer, every time a control moved (the input event's timestamp: a slider
handle's ``aria-valuenow`` changed, a ``<select>`` took an option) and every frame painted (the live
figure's ``lecture-frame`` event, then the animation frame after it). A move's latency is the time from
its input event to the first frame painted after it; since a frame for positions already left is
never painted (issue 28), that frame shows this move or a later one. A move painted from a frame
computed ahead counts as **ahead**; a frame painted for positions other than the controls' own at
that moment, or a kernel frame painted over an older background than the one sent with it, counts as
**stale** (there must be none).

The label-only floor (a slider that only rewrites a text label, tools/bench_browser.py) is moved the
same way in the same run; its latency is keydown -> the label painted. Timings on a shared machine
are noisy: compare each notebook with the floor of the same run.

    python tools/bench_moves.py [--quick] [--slowest N] [notebook.ipynb ...]

``--slowest N`` lists each notebook's N slowest moves (which control, which kind, whether a frame computed ahead
or the kernel's answered it): where the p90 comes from.

``BENCH_QUICK=1`` (or ``--quick``) measures chapters 1, 4 and 5 only, in about 4 minutes on the
course's 2-core machine; all chapters take about 10.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_support as bs  # noqa: E402

QUICK = ("01_batch_size_cost_and_speed.ipynb", "04_pipelining_is_not_wise.ipynb",
         "05_rl_overtraining_beyond_chinchilla.ipynb")
KINDS = ("keys", "held", "drag", "dropdown")
TAP_SECONDS = 0.15          # arrow keys a learner taps
HELD_RATE = 30.0            # autorepeat, keydowns per second
HELD_REPEATS = 8
DRAG_FRACTION = 0.12        # of the track
PAUSE = 0.8                 # between sequences: a learner looks at the result (and the kernel predicts)
FLOOR_NAME = "zz_label_only_floor_moves.ipynb"

# Installed once the notebook has run: which moves happened when, and which frames were painted.
HOOK_JS = r"""
() => {
  if (window.__ltm) return;
  const m = window.__ltm = {kind: null, inputs: [], paints: []};
  let last = -1e9;
  const input = (e) => { last = e.timeStamp; };
  document.addEventListener('keydown', input, true);
  document.addEventListener('pointerdown', input, true);
  document.addEventListener('pointermove', (e) => { if (e.buttons) last = e.timeStamp; }, true);
  const container = (el) => { const box = el && el.closest && el.closest('[data-lt-container]');
                              return box ? box.getAttribute('data-lt-container') : null; };
  const moved = (el) => {
    const id = container(el);
    // a change the kernel made (a typed value, a linked slider) is no input of the learner's
    if (id === null || !m.kind || performance.now() - last >= 250) return;
    const box = el.closest('.widget-slider, .widget-dropdown');
    const label = box ? ((box.querySelector('.widget-label') || {}).textContent || '').trim() : '';
    m.inputs.push({id, kind: m.kind, at: last, label});
  };
  new MutationObserver((records) => { for (const r of records) moved(r.target); })
    .observe(document.body, {subtree: true, attributes: true, attributeFilter: ['aria-valuenow']});
  document.addEventListener('input', (e) => { if (e.target.tagName === 'SELECT') moved(e.target); }, true);
  const painted = (id, ahead, stale) => {
    const entry = {id, kind: m.kind, ahead, stale, at: performance.now(), painted: null};
    m.paints.push(entry);
    requestAnimationFrame(() => { entry.painted = performance.now(); });
  };
  document.addEventListener('lecture-frame', (e) => {
    const id = container(e.target);
    // a frame over an older background than its own is as wrong as a stale one: counted with them
    if (id !== null) painted(id, Boolean(e.detail && e.detail.ahead),
                             Boolean(e.detail && (e.detail.stale || e.detail.behind)));
  }, true);
  // the floor has no live figure: its label is its picture
  for (const box of document.querySelectorAll('[data-lt-container]')) {
    if (box.querySelector('.lecture-live-figure')) continue;
    const readout = box.querySelector('.lecture-readout');
    if (readout) new MutationObserver(() => painted(box.getAttribute('data-lt-container'), false, false))
      .observe(readout, {childList: true, subtree: true, characterData: true});
  }
}
"""


def _kind(session: bs.NotebookSession, kind: str | None) -> None:
    session.page.evaluate("(k) => { window.__ltm.kind = k; }", kind)


def drive(session: bs.NotebookSession, kinds=KINDS) -> dict:
    """Move every control of the open notebook's explorers as described above; returns the page's log."""
    sliders = session.sliders()          # tags each control's container, which the hook then watches
    session.page.evaluate(HOOK_JS)
    by_explorer: dict[str, list] = {}
    for slider in sliders:
        by_explorer.setdefault(slider.container, []).append(slider)
    for group in by_explorer.values():
        for slider in group:
            if "keys" in kinds:
                session.handle(slider).focus()
                time.sleep(PAUSE)
                first = session.key_for(slider)
                back = "ArrowLeft" if first == "ArrowRight" else "ArrowRight"
                _kind(session, "keys")
                session.press_at(slider, [first, first, back, back], TAP_SECONDS)
                _kind(session, None)
            if "drag" in kinds:
                for direction in (None, "back"):
                    time.sleep(PAUSE)
                    _kind(session, "drag")
                    if direction is None:
                        side = _drag_side(session, slider)
                        session.drag(slider, DRAG_FRACTION, direction=side)
                    else:
                        session.drag(slider, DRAG_FRACTION, direction=-side)
                    _kind(session, None)
        if "held" in kinds:
            first = group[0]
            session.handle(first).focus()
            time.sleep(PAUSE)
            key = session.key_for(first)
            back = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
            _kind(session, "held")
            session.hold_key(first, key, HELD_REPEATS, HELD_RATE)
            session.hold_key(first, back, HELD_REPEATS, HELD_RATE)
            _kind(session, None)
        if "dropdown" in kinds:
            for which in range(session.dropdowns(group[0])):
                select = session.page.locator(f'[data-lt-container="{group[0].container}"] .widget-dropdown select').nth(which)
                select.focus()
                time.sleep(PAUSE)
                index, count = select.evaluate("el => [el.selectedIndex, el.options.length]")
                key = "ArrowUp" if index == count - 1 else "ArrowDown"
                _kind(session, "dropdown")
                session.page.keyboard.press(key)
                _kind(session, None)
                time.sleep(PAUSE)
                _kind(session, "dropdown")
                session.page.keyboard.press("ArrowDown" if key == "ArrowUp" else "ArrowUp")
                _kind(session, None)
    time.sleep(PAUSE)
    session.wait_idle(30, settle=0.5)
    return session.page.evaluate("() => window.__ltm")


def _drag_side(session: bs.NotebookSession, slider) -> int:
    """+1 (right) unless the handle sits in the track's right half."""
    return -1 if session.key_for(slider) == "ArrowLeft" or session.page.evaluate(
        """(i) => { const el = document.querySelector(`[data-lt-slider="${i}"]`);
             const h = el.querySelector('.noUi-handle').getBoundingClientRect(), t = el.querySelector('.noUi-target').getBoundingClientRect();
             return h.x + h.width / 2 > t.x + t.width / 2; }""", slider.index) else 1


def latencies(log: dict) -> dict[str, list[dict]]:
    """Per kind, one sample per move: {ms, ahead}: the move's input -> the first frame of its explorer
    painted after it (None when none came)."""
    paints: dict[str, list[dict]] = {}
    for paint in log["paints"]:
        paints.setdefault(paint["id"], []).append(paint)
    found: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    seen = set()
    for move in log["inputs"]:
        key = (move["id"], move["at"])
        if key in seen:       # one keydown that moved a slider and, with it, another one
            continue
        seen.add(key)
        after = next((p for p in paints.get(move["id"], []) if p["at"] >= move["at"] and p["painted"]), None)
        found.setdefault(move["kind"], []).append(
            {"ms": after["painted"] - move["at"] if after else None, "ahead": bool(after and after["ahead"]),
             "control": f"#{move['id']} {move.get('label') or '?'}"})
    return found


def summary(samples: list[dict]) -> dict:
    times = [s["ms"] for s in samples if s["ms"] is not None]
    return {"n": len(samples), "missed": len(samples) - len(times),
            "median": bs.median(times) if times else float("nan"),
            "p90": bs.percentile(times, 0.9) if times else float("nan"),
            "ahead": sum(s["ahead"] for s in samples) / len(samples) if samples else float("nan")}


def measure(server, browser, name: str, report) -> dict:
    session = bs.NotebookSession(server, browser, name)
    try:
        session.open()
        seconds = session.run_all()
        errors = session.errors()
        if errors:
            report(f"  {name}: errors after Run All, not measured: {errors[:3]}")
            return {"name": name, "errors": errors}
        session.open_covers()       # explorers held back until a prediction is revealed (issue 29): shown, as skipped
        session.wait_idle(30, settle=1.0)
        log = drive(session, KINDS if name != FLOOR_NAME else ("keys", "held", "drag"))
        stale = sum(1 for p in log["paints"] if p["stale"])
        samples = latencies(log)
        found = {kind: summary(moves) for kind, moves in samples.items()}
        slowest = sorted((m | {"kind": kind} for kind, moves in samples.items() for m in moves if m["ms"] is not None),
                         key=lambda m: -m["ms"])
        return {"name": name, "run_seconds": seconds, "kinds": found, "stale": stale, "slowest": slowest,
                "paints": len(log["paints"]), "errors": session.errors()}
    finally:
        session.close()


def _cell(stats: dict | None, floor: dict | None) -> str:
    """median / p90 ms, each x the floor's, share painted ahead."""
    if not stats or not stats["n"]:
        return f"{'-':>30}"
    ratio = (f" {stats['median'] / floor['median']:.1f}x/{stats['p90'] / floor['p90']:.1f}x"
             if floor and floor["n"] and floor["median"] > 0 and stats["median"] == stats["median"] else "")
    return f"{stats['median']:5.0f} /{stats['p90']:5.0f}{ratio:>11} {stats['ahead']:4.0%}".rjust(30)


def run(report=print, *, notebooks: list[str] | None = None, quick: bool | None = None, slowest: int = 0) -> dict | None:
    reason = bs.browser_unavailable()
    if reason:
        report(f"moves: not measured ({reason})")
        return None
    from playwright.sync_api import sync_playwright

    from bench_browser import FLOOR_CELLS

    if quick is None:
        quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    names = notebooks or [n for n in bs.notebook_names() if not quick or n in QUICK]
    started = time.monotonic()
    results = []
    with bs.LabServer() as server, sync_playwright() as playwright:
        browser = bs.launch_browser(playwright, full=True)
        try:
            server.add_notebook(FLOOR_NAME, FLOOR_CELLS)
            floor = measure(server, browser, FLOOR_NAME, report)
            for name in names:
                results.append(measure(server, browser, name, report))
        finally:
            browser.close()
    report(f"moves as people make them (real input events, not waiting for the page): median / p90 ms, "
           f"each x the floor's for that kind, share painted ahead; {len(names)} notebooks"
           + (" (BENCH_QUICK)" if quick else ""))
    header = f"{'notebook':<44}" + "".join(f"{kind:>30}" for kind in KINDS) + f"{'stale':>7}"
    report(header)
    report("-" * len(header))
    floor_kinds = floor.get("kinds", {})
    for result in [floor] + results:
        if result.get("kinds") is None:
            report(f"{result['name']:<44} errors: {result.get('errors', [])[:2]}")
            continue
        label = "label-only floor" if result is floor else result["name"]
        report(f"{label:<44}" + "".join(_cell(result["kinds"].get(kind), None if result is floor else
                                                floor_kinds.get("keys" if kind == "dropdown" else kind))
                                          for kind in KINDS) + f"{result['stale']:>7}")
        missed = {kind: s["missed"] for kind, s in result["kinds"].items() if s.get("missed")}
        if missed:
            report(f"    moves with no frame painted after them: {missed}")
        for move in result.get("slowest", [])[:slowest] if result is not floor else []:
            report(f"    {move['ms']:6.0f} ms  {move['kind']:<8} {'ahead ' if move['ahead'] else 'kernel'}  "
                   f"explorer {move['control']}")
    report("(dropdowns are compared with the floor's keys; stale: frames painted for positions already left "
           f"or over an older background, must be 0; took {time.monotonic() - started:.0f} s)")
    return {"floor": floor, "notebooks": results}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebook file names in notebooks/ (default: all)")
    parser.add_argument("--quick", action="store_true", help="chapters 1, 4 and 5 only (BENCH_QUICK=1)")
    parser.add_argument("--no-ahead", action="store_true", help="without frames computed ahead (LECTURE_AHEAD=0)")
    parser.add_argument("--slowest", type=int, default=0, metavar="N",
                        help="under each notebook, its N slowest moves: kind, painted ahead or by the kernel, control")
    args = parser.parse_args(argv)
    if args.no_ahead:
        os.environ["LECTURE_AHEAD"] = "0"
    run(print, notebooks=args.notebooks or None, quick=args.quick or None, slowest=args.slowest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
