"""Quick flicks and dropdown walks, in a real JupyterLab (headless Chromium): issue 48 §1's benchmark.

Every move is a real input event, sent without waiting for the page:

* **flick**: on a slider, the pointer rests on the handle (:data:`HOVER` s, as a hand arriving), presses, makes
  :data:`FLICK_MOVES` pointer moves :data:`FLICK_INTERVAL` s apart, half of them to the far end of the track (a
  little past it) and half back to where it started, and releases (``page.mouse``: real pointer events);
* **walk**: on a dropdown, focused, up to :data:`WALK_KEYS` ArrowDown key presses :data:`WALK_INTERVAL` s apart (or
  ArrowUp where fewer options lie below than above).

A **freeze** is a stretch of time in which the picture stands still while the hand's value has changed. Measured in
the page, per explorer:

* the hand's value changes when a slider handle's ``aria-valuenow`` changes or a ``<select>`` takes an option (a
  ``MutationObserver`` / ``input`` listener's ``performance.now()``);
* the picture changes when the live figure paints a frame (its ``lecture-frame`` event), at the animation frame after
  it (``requestAnimationFrame``'s ``performance.now()``), the way tools/bench_moves.py times paints;
* the picture is *behind* from the first value change after the last paint of the hand's value until the next
  paint (a frame a step behind the hand, ``lecture-frame``'s ``lagging``, moves the picture: the stretch ends there
  and the next one starts); each such stretch is a freeze, and a gesture's freeze is its longest, from its first value change until the paint that shows the
  hand's last value (or, when that never comes, until the page is watched no more: **missed**).

A frame painted for positions the controls have left (``lecture-frame``'s ``stale``), a kernel frame over an older
background than its own (``behind``), or a frame of a position the hand held *earlier* than the position of a frame
already painted in the same gesture (**backward**; the hand's positions come from live_figure's ``lecture-hand``
event) is a stale paint: there must be none.

    python tools/bench_flicks.py [--sample] [--json FILE] [notebook.ipynb ...]

Without arguments every slider and every dropdown of every chapter (``notebooks/NN_*.ipynb``, found by glob) is
flicked or walked; ``--sample`` takes :data:`SAMPLE` only (what tests/test_flicks.py runs). Goals (DESIGN.md,
issue 48): the longest freeze <= 250 ms, p90 <= 150 ms, 0 stale paints.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import browser_support as bs  # noqa: E402

FLICK_MOVES = 12            # pointer moves ...
FLICK_INTERVAL = 0.035      # ... this far apart (s): a quick flick to the far end and back
FLICK_OVERSHOOT = 6         # px past the end of the track: the hand reaches the end
HOVER = 0.3                 # s the pointer rests on the handle before it presses
WALK_KEYS = 8               # ArrowDown presses on a dropdown (fewer where it has fewer options)
WALK_INTERVAL = 0.1         # s between them: a learner scrolling options with the keys
PAUSE = 0.8                 # s between gestures: a learner looks at the result (and the kernel predicts)
SETTLE_SECONDS = 6.0        # at most, after a gesture, for the hand's last value to be painted
QUIET = 0.4                 # s without a paint, the figure fresh: the gesture is over
GOAL_LONGEST, GOAL_P90 = 250.0, 150.0

# (file name prefix, control label starts with): the flicks of the slowest measurements, for `make test`
SAMPLE = (("01_", "batch B"), ("02_", "racks per MoE layer R"), ("04_", "hop latency"), ("08_", "measurement"))

HOOK_JS = r"""
() => {
  if (window.__flk) return;
  const f = window.__flk = {on: null, g: -1, moves: [], paints: [], hands: []};
  const container = (el) => { const box = el && el.closest && el.closest('[data-lt-container]');
                              return box ? box.getAttribute('data-lt-container') : null; };
  const mine = (el) => f.on !== null && container(el) === f.on;
  new MutationObserver((records) => {
    const at = performance.now();
    for (const r of records) if (mine(r.target)) f.moves.push({g: f.g, at, v: r.target.getAttribute('aria-valuenow')});
  }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['aria-valuenow']});
  document.addEventListener('input', (e) => {
    if (e.target.tagName === 'SELECT' && mine(e.target)) f.moves.push({g: f.g, at: performance.now(), v: e.target.value});
  }, true);
  document.addEventListener('lecture-hand', (e) => {
    if (mine(e.target)) f.hands.push({g: f.g, at: performance.now(), control: e.detail.control, position: e.detail.position});
  }, true);
  document.addEventListener('lecture-frame', (e) => {
    if (!mine(e.target)) return;
    const d = e.detail || {};
    const entry = {g: f.g, at: performance.now(), painted: null, ahead: Boolean(d.ahead),
                   stale: Boolean(d.stale || d.behind), lagging: Boolean(d.lagging), state: d.state || null};
    f.paints.push(entry);
    requestAnimationFrame(() => { entry.painted = performance.now(); });
  }, true);
}
"""

# every explorer, also one with dropdowns only, gets a container id (session.sliders() tags those with sliders)
_TAG_EXPLORERS_JS = r"""
() => {
  let n = 0;
  for (const box of document.querySelectorAll('.lecture-explorer')) {
    if (!box.hasAttribute('data-lt-container')) box.setAttribute('data-lt-container', 'x' + (n++));
  }
  return [...document.querySelectorAll('.lecture-explorer')].map((box) => {
    const heading = box.querySelector(':scope > .widget-html');
    return {container: box.getAttribute('data-lt-container'), title: heading ? heading.textContent.trim() : '',
            dropdowns: [...box.querySelectorAll('.widget-dropdown')].map((d) =>
              ((d.querySelector('.widget-label') || {}).textContent || '').trim()),
            live: Boolean(box.querySelector('.lecture-live-figure'))};
  });
}
"""


# --- the arithmetic (tests/test_bench_moves.py checks it on made-up logs) ---------------------------------------
def gesture_figures(moves: list[dict], paints: list[dict], hands: list[dict], end: float) -> dict:
    """One gesture of one explorer: ``moves`` (the hand's value changes, ``at``), ``paints`` (``at`` the frame
    event, ``painted`` the animation frame after it, ``stale``, ``state``: control id -> position), ``hands`` (the
    page's models: ``at``, ``control``, ``position``), watched until ``end``. Returns the longest freeze (ms),
    whether the last value was never painted (missed), the stale and backward paints, and settle: the hand's last
    value change -> the paint after it."""
    moves = sorted(m["at"] for m in moves)
    shown = sorted((p for p in paints if p.get("painted") is not None), key=lambda p: p["at"])
    stale = sum(1 for p in paints if p.get("stale"))
    # backward: a frame of a position the hand held earlier than the position of a frame already painted
    # (a paint's age: the latest moment the hand came to its positions, every control the hand moved agreeing; a
    # dropdown that sets other controls moves several at once)
    timeline, held = [], {}
    for h in sorted(hands, key=lambda h: h["at"]):
        held = dict(held, **{h["control"]: h["position"]})
        timeline.append((h["at"], held))
    backward, newest, wrong = 0, float("-inf"), set()
    for n, paint in enumerate(shown):
        state = paint.get("state") or {}
        ages = [at for at, held in timeline if at <= paint["at"]
                and all(state.get(control, position) == position for control, position in held.items())]
        age = max(ages) if ages else float("-inf")      # none: the positions the gesture started from
        if age < newest and not paint.get("stale"):
            backward += 1
            wrong.add(n)
        newest = max(newest, age)
    longest, behind_since, settle = 0.0, None, None
    events = [(t, 0, None) for t in moves] + [(p["at"], 1, p) for n, p in enumerate(shown)
                                                if not p.get("stale") and n not in wrong]
    for at, kind, paint in sorted(events, key=lambda e: (e[0], e[1])):
        if kind == 0:
            if behind_since is None:
                behind_since = at
        elif behind_since is not None:
            longest = max(longest, paint["painted"] - behind_since)
            # a frame a step behind the hand (live_figure paints it when it is newer than the picture it replaces):
            # the picture moved, and stands still again from there until the next paint
            behind_since = paint["painted"] if paint.get("lagging") else None
    missed = behind_since is not None
    if missed:
        longest = max(longest, end - behind_since)
    if moves and not missed:
        after = [p["painted"] for n, p in enumerate(shown) if p["at"] >= moves[-1] and not p.get("stale")
                 and not p.get("lagging") and n not in wrong]
        settle = after[0] - moves[-1] if after else 0.0
    return {"freeze": longest, "missed": missed, "stale": stale, "backward": backward, "settle": settle,
            "changes": len(moves), "paints": len(shown)}


def summary(rows: list[dict]) -> dict:
    """Over gestures: the longest freeze, its p90, how many are over the goal, the stale and backward paints."""
    freezes = [r["freeze"] for r in rows]
    return {"n": len(rows), "longest": max(freezes, default=0.0),
            "p90": bs.percentile(freezes, 0.9) if freezes else 0.0,
            "median": bs.median(freezes) if freezes else 0.0,
            "over": sum(f > GOAL_LONGEST for f in freezes), "missed": sum(r["missed"] for r in rows),
            "stale": sum(r["stale"] + r["backward"] for r in rows)}


def meets_goals(stats: dict) -> bool:
    return stats["longest"] <= GOAL_LONGEST and stats["p90"] <= GOAL_P90 and stats["stale"] == 0 and not stats["missed"]


# --- driving the page ---------------------------------------------------------------------------------------
def _start(session, container: str, gesture: int) -> None:
    session.page.evaluate("([id, g]) => { window.__flk.on = id; window.__flk.g = g; }", [container, gesture])


def _settle(session, container: str, since: float) -> float:
    """Wait until the explorer's figure shows the controls' positions and no frame came for :data:`QUIET` s (at most
    :data:`SETTLE_SECONDS`); returns the page's clock then."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        now, fresh, last = session.page.evaluate(
            """(id) => { const box = document.querySelector(`[data-lt-container="${id}"] .lecture-live-figure`);
                 const mine = window.__flk.paints.filter((p) => p.g === window.__flk.g);
                 return [performance.now(), !box || !box.__lectureFresh || box.__lectureFresh(),
                         mine.length ? mine[mine.length - 1].at : 0]; }""", container)
        if (fresh and now - max(last, since) >= QUIET * 1000) or time.monotonic() >= deadline:
            return now
        time.sleep(0.05)


def flick(session, slider) -> None:
    """Press on the handle, :data:`FLICK_MOVES` pointer moves to the far end and back, release."""
    handle = session.handle(slider)
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    track = session.page.locator(f'[data-lt-slider="{slider.index}"] .noUi-target').first.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    left, right = track["x"] - FLICK_OVERSHOOT, track["x"] + track["width"] + FLICK_OVERSHOOT
    far = right if x - track["x"] < track["x"] + track["width"] - x else left
    half = FLICK_MOVES // 2
    path = [x + (far - x) * k / half for k in range(1, half + 1)] + \
           [far + (x - far) * k / (FLICK_MOVES - half) for k in range(1, FLICK_MOVES - half + 1)]
    mouse = session.page.mouse
    mouse.move(x, y)
    time.sleep(HOVER)
    mouse.down()
    for target in path:
        time.sleep(FLICK_INTERVAL)
        mouse.move(target, y)
    time.sleep(FLICK_INTERVAL)
    mouse.up()


def walk(session, select) -> str:
    """ArrowDown up to :data:`WALK_KEYS` times on a focused dropdown (ArrowUp where more options lie above)."""
    select.scroll_into_view_if_needed()
    index, count = select.evaluate("el => [el.selectedIndex, el.options.length]")
    below, above = count - 1 - index, index
    key, presses = ("ArrowDown", below) if below >= above else ("ArrowUp", above)
    select.focus()
    time.sleep(HOVER)
    for _ in range(min(WALK_KEYS, presses)):
        session.page.keyboard.press(key)
        time.sleep(WALK_INTERVAL)
    return f"{key} x{min(WALK_KEYS, presses)}"


def drive(session, only: tuple[str, ...] = ()) -> list[dict]:
    """Flick every slider and walk every dropdown of the open notebook's explorers (or those whose label starts
    with one of ``only``); returns one row per gesture."""
    sliders = [s for s in session.sliders() if s.explorer]
    explorers = session.page.evaluate(_TAG_EXPLORERS_JS)
    session.page.evaluate(HOOK_JS)
    gestures = []
    for explorer in explorers:
        if not explorer["live"]:
            continue
        for slider in (s for s in sliders if s.container == explorer["container"]):
            if not only or any(slider.label.startswith(o) for o in only):
                gestures.append(("flick", explorer, slider.label, slider))
        for which, label in enumerate(explorer["dropdowns"]):
            if not only or any(label.startswith(o) for o in only):
                gestures.append(("walk", explorer, label, which))
    rows = []
    for number, (kind, explorer, label, what) in enumerate(gestures):
        container = explorer["container"]
        time.sleep(PAUSE)
        _start(session, container, number)
        began = session.page.evaluate("() => performance.now()")
        if kind == "flick":
            flick(session, what)
            how = f"{FLICK_MOVES} moves"
        else:
            select = session.page.locator(f'[data-lt-container="{container}"] .widget-dropdown select').nth(what)
            how = walk(session, select)
        end = _settle(session, container, session.page.evaluate("() => performance.now()"))
        log = session.page.evaluate("(g) => { const f = window.__flk; const mine = (e) => e.g === g;"
                                    " return {moves: f.moves.filter(mine), paints: f.paints.filter(mine),"
                                    " hands: f.hands.filter(mine)}; }", number)
        _start(session, None, -1)
        figures = gesture_figures(log["moves"], [p for p in log["paints"] if p["at"] >= began], log["hands"], end)
        rows.append({"kind": kind, "explorer": explorer["title"] or f"#{container}", "control": label, "how": how,
                     **figures})
    session.page.evaluate("() => { const f = window.__flk; f.moves = []; f.paints = []; f.hands = []; }")
    return rows


def measure(server, browser, name: str, report, only: tuple[str, ...] = ()) -> dict:
    session = bs.NotebookSession(server, browser, name)
    try:
        session.open()
        seconds = session.run_all()
        errors = session.errors()
        if errors:
            report(f"  {name}: errors after Run All, not measured: {errors[:3]}")
            return {"name": name, "errors": errors, "rows": []}
        session.open_covers()
        session.wait_idle(30, settle=1.0)
        rows = drive(session, only)
        return {"name": name, "run_seconds": seconds, "rows": rows, "errors": session.errors()}
    finally:
        session.close()


def chapters() -> list[str]:
    """Every chapter with explorers: notebooks/NN_*.ipynb, found by glob (chapters are renumbered now and then)."""
    return [n for n in bs.notebook_names() if n[:2].isdigit() and not n.startswith("00_")]


def sampled() -> list[tuple[str, tuple[str, ...]]]:
    """:data:`SAMPLE` as (notebook, labels), for the chapters there are."""
    found: dict[str, tuple[str, ...]] = {}
    names = chapters()
    for prefix, label in SAMPLE:
        for name in names:
            if name.startswith(prefix):
                found[name] = found.get(name, ()) + (label,)
    return list(found.items())


def report_rows(results: list[dict], report) -> dict:
    header = f"{'notebook':<34} {'explorer':<34} {'control':<30} {'gesture':<13}{'freeze':>8}{'chg':>5}{'pnt':>5}" \
             f"{'settle':>8}{'stale':>6}"
    report(header)
    report("-" * len(header))
    every = []
    for result in results:
        for row in result.get("rows", []):
            every.append(row)
            flag = " MISSED" if row["missed"] else " OVER" if row["freeze"] > GOAL_LONGEST else ""
            settle = f"{row['settle']:.0f}" if row["settle"] is not None else "-"
            report(f"{result['name'][:34]:<34} {row['explorer'][:34]:<34} {row['control'][:30]:<30} {row['how']:<13}"
                   f"{row['freeze']:8.0f}{row['changes']:5d}{row['paints']:5d}{settle:>8}"
                   f"{row['stale'] + row['backward']:6d}{flag}")
        if result.get("errors"):
            report(f"{result['name']}: errors {result['errors'][:2]}")
    for kind in ("flick", "walk"):
        stats = summary([r for r in every if r["kind"] == kind])
        if stats["n"]:
            report(f"  {kind}s: {stats['n']}, longest freeze {stats['longest']:.0f} ms, p90 {stats['p90']:.0f} ms, "
                   f"median {stats['median']:.0f} ms, {stats['over']} over {GOAL_LONGEST:.0f} ms, "
                   f"{stats['missed']} missed, {stats['stale']} stale/backward paints")
    stats = summary(every)
    report(f"  all {stats['n']} gestures: longest freeze {stats['longest']:.0f} ms (goal <= {GOAL_LONGEST:.0f}), "
           f"p90 {stats['p90']:.0f} ms (goal <= {GOAL_P90:.0f}), {stats['stale']} stale/backward paints (goal 0), "
           f"{stats['missed']} missed: {'goals met' if meets_goals(stats) else 'GOALS MISSED'}")
    return stats


def run(report=print, *, notebooks: list[str] | None = None, sample: bool = False, json_path: str | None = None):
    reason = bs.browser_unavailable()
    if reason:
        report(f"flicks: not measured ({reason})")
        return None
    from playwright.sync_api import sync_playwright

    plan = sampled() if sample else [(n, ()) for n in (notebooks or chapters())]
    started = time.monotonic()
    results = []
    with bs.LabServer() as server, sync_playwright() as playwright:
        browser = bs.launch_browser(playwright, full=True)
        try:
            for name, only in plan:
                results.append(measure(server, browser, name, report, only))
        finally:
            browser.close()
    report(f"quick flicks ({FLICK_MOVES} pointer moves {FLICK_INTERVAL * 1e3:.0f} ms apart, to the far end and back) "
           f"and dropdowns walked with the keys ({WALK_INTERVAL * 1e3:.0f} ms apart): freeze = longest time the "
           "picture stood still while the hand's value had changed, ms")
    stats = report_rows(results, report)
    report(f"(took {time.monotonic() - started:.0f} s)")
    if json_path:
        Path(json_path).write_text(json.dumps({"results": results, "summary": stats}, indent=1))
    return {"results": results, "summary": stats}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebook file names in notebooks/ (default: every chapter)")
    parser.add_argument("--sample", action="store_true", help="the sampled controls only (tests/test_flicks.py)")
    parser.add_argument("--json", metavar="FILE", help="write every gesture's figures to FILE")
    args = parser.parse_args(argv)
    run(print, notebooks=args.notebooks or None, sample=args.sample, json_path=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
