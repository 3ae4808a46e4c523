"""One chapter in a real JupyterLab, in headless Chromium, the way a learner uses it (DESIGN.md, "Testing layers" 4;
issues 19, 28 and 29): Run All, then read and move every control, then move them the way people do. Shared by
tests/test_browser.py (chapters 00-04) and tests/test_browser_later_chapters.py (05-09), which pytest-xdist runs
side by side: one JupyterLab session per chapter serves both the walk and the replay.
"""

from __future__ import annotations

import time

from browser_support import LAYOUT, NotebookSession, console_context, default_mismatches, drift

MIN_SCALE = 0.9


def walk_and_replay(name: str, lab_server, browser) -> None:
    """At 1280 x 900 with the file browser open (issue 19's default layout): open the chapter, Run All, find no
    error output, no "Error displaying widget" and no exception in an explorer's readout, and open the covers a
    learner who skips the guesses opens. Then :func:`walk` and :func:`replay` on the same page."""
    started = time.monotonic()
    session = NotebookSession(lab_server, browser, name, viewport=dict(LAYOUT), file_browser=True)
    try:
        session.open()
        left = session.page.evaluate("() => Object.keys(window).filter(key => key.startsWith('__lt'))")
        assert not left, f"{name}: the tab still holds the last notebook's logs {left}: they would be counted as this one's"
        run_seconds = session.run_all()
        errors = session.errors()
        assert not errors, f"{name}: errors on the page after Run All:\n" + "\n".join(errors) + console_context(session)
        session.open_covers()       # what a prediction holds back (issue 29 §1) is opened before the controls move
        walk(session, name, run_seconds, started)
        replay(session, name)
    finally:
        session.close()


def walk(session: NotebookSession, name: str, run_seconds: float, started: float) -> None:
    """Every control shows its declared value, every image has a text alternative, no figure is scaled below
    MIN_SCALE, ArrowDown moves every dropdown, live figures match Agg's drawing; then **every** slider moves one
    step with the keyboard and its explorer's figure or readout changes."""
    # every control shows the lesson's declared value, before anything moves (issue 19 §1)
    mismatches = default_mismatches(session.displayed_controls(), session.declared_controls())
    assert not mismatches, f"{name}: controls that do not show their declared value:\n" + "\n".join(mismatches)

    # every figure, explorer or static, has a text alternative (issue 19 §6)
    bare = [img for img in session.output_images() if len((img["alt"] or img["title"]).strip()) < 20]
    assert not bare, f"{name}: images without a text alternative: {bare}"

    # figures are not scaled down by the browser in the default layout (issue 19 §5)
    small = [f for f in session.figure_scales() if f["scale"] < MIN_SCALE]
    assert not small, f"{name}: figures shown below {MIN_SCALE} of their size: {small}"

    # ArrowDown on a dropdown changes its option and keeps the focus (issue 19 §6)
    stuck = [d for d in session.press_dropdowns() if d["after"] == d["before"] or not d["focused"]]
    assert not stuck, f"{name}: dropdowns the arrow keys did not move (or that lost focus): {stuck}"

    # a live figure paints what Agg would have drawn: its canvas over its background
    differences = drift(session)
    assert not differences, f"{name}: live figures that differ from the kernel's drawing: {differences}"

    names_before = session.figure_names()
    assert all(f["tag"] == "IMG" and len(f["title"]) > 40 for f in names_before), (
        f"{name}: an explorer figure has no text alternative (title) on its <img>: {names_before}")

    unsynced = session.log_slider_valuetexts(unsynced_only=True)
    assert not unsynced, f"{name}: log sliders whose aria-valuetext is not their real value: {unsynced}"

    failures = []
    sliders = session.sliders()
    for slider in sliders:
        move = session.move(slider)
        if move.error and move.error == move.error_before:
            failures.append(f"{slider.describe()}: its explorer already shows an exception: {move.error}")
        elif move.error:
            failures.append(f"{slider.describe()}: {move.key} put an exception in the readout: {move.error}")
        elif not move.changed:
            how = ("the slider's value did not move" if move.value_before == move.value_after
                   else f"value {move.value_before} -> {move.value_after}")
            failures.append(f"{slider.describe()}: {move.key} changed neither the figure nor the "
                            f"readout within the timeout ({how})")
    names_after = session.figure_names()
    unsynced = session.log_slider_valuetexts(unsynced_only=True)
    assert not unsynced, f"{name}: after the moves, log sliders read out their exponent: {unsynced}"
    if sliders:
        assert [f["title"] for f in names_after] != [f["title"] for f in names_before], (
            f"{name}: no figure's text alternative followed the slider moves")
    errors = session.errors()
    assert not failures and not errors, (
        f"{name}: {len(failures)} of {len(sliders)} sliders failed:\n" + "\n".join(failures + errors)
        + console_context(session))
    print(f"{name}: Run All {run_seconds:.1f} s, {len(sliders)} sliders moved, "
          f"{session.counts()}, total {time.monotonic() - started:.1f} s")


def replay(session: NotebookSession, name: str) -> None:
    """Issue 28: the learner's sequences, replayed with real key and pointer events in every explorer of the
    chapter: a value typed into a log slider's readout then ← twice quickly and ← held; a key held down
    (autorepeat, 30 Hz) one way and back; two sliders in turn at a tapping rate; a mouse drag of 12% of the
    track right after a dropdown change. Every painted frame is logged: none may be for control positions
    other than the ones the controls hold as it is painted, and once the controls stop, every figure shows
    their state."""
    session.wait_idle(20, settle=1.0)
    session.watch_paints()
    sequences = replay_learner(session)
    session.wait_idle(30, settle=1.0)
    paints = session.paints()
    stale = [p for p in paints if p["stale"]]
    assert not stale, (f"{name}: {len(stale)} of {len(paints)} frames painted for positions left before those on screen "
                       f"({sequences}): {stale[:5]}")
    behind = [p for p in paints if p["behind"]]
    assert not behind, f"{name}: {len(behind)} of {len(paints)} frames painted over an older background: {behind[:5]}"
    unsettled = session.wait_settled(15.0)
    assert not unsettled, (f"{name}: figures not showing their controls' positions 15 s after they stopped: "
                           f"{unsettled}")
    stale_tables = session.wait_readouts_settled(15.0)       # and the table beside each figure is the kernel's own
    assert not stale_tables, f"{name}: readouts that are not the kernel's 15 s after the controls stopped: {stale_tables}"
    if session.counts()["explorers"]:          # the check can fail: a table changed on the page alone is found
        session.page.evaluate("""() => { const el = document.querySelector('.lecture-explorer .lecture-readout');
                                         el.dataset.ltKept = el.innerHTML; el.innerHTML += '<b>1 234</b>'; }""")
        assert session.stale_readouts(), f"{name}: the readout check missed a table changed on the page"
        session.page.evaluate("""() => { const el = document.querySelector('.lecture-explorer .lecture-readout');
                                         el.innerHTML = el.dataset.ltKept; }""")
    assert not session.errors(), session.errors()
    print(f"{name}: {sequences}, {len(paints)} frames painted ({sum(p['ahead'] for p in paints)} ahead), none stale or behind")


def replay_learner(session: NotebookSession) -> dict:
    """Issue 28's sequences on every explorer of the open notebook; returns how many of each ran."""
    done = {"typed": 0, "held": 0, "alternating": 0, "step+drag to the end": 0, "dropdown+drag": 0, "drag": 0}
    by_explorer: dict[str, list] = {}
    for slider in session.sliders():
        if slider.explorer:
            by_explorer.setdefault(slider.container, []).append(slider)
    for group in by_explorer.values():
        first = group[0]
        typed = next((s for s in group if session.is_log_slider(s)), None)
        if typed is not None:           # a value typed between two stops, then ← ← quickly, then ← held
            session.type_value(typed, _between_stops(session, typed))
            time.sleep(0.6)
            session.press_at(typed, ["ArrowLeft"] * 2, 0.06)
            time.sleep(0.5)
            session.press_at(typed, ["ArrowLeft"] * 6, 0.04)
            done["typed"] += 1
        session.hold_key(first, "ArrowLeft", 5)            # held down: autorepeat at 30 Hz, one way and back
        session.hold_key(first, "ArrowRight", 5)
        done["held"] += 1
        if len(group) > 1:
            for _ in range(3):
                session.press_at(group[0], ["ArrowRight"], 0.15)
                session.press_at(group[1], ["ArrowRight"], 0.15)
            done["alternating"] += 1
        # a step the page paints from its predictions, then a drag to the end of the track, where the axes often
        # change (the kernel's frame then waits for its new background; a learner saw the old readout stay)
        session.press_at(first, ["ArrowRight"], 0.15)
        session.drag(first, 1.0)
        done["step+drag to the end"] += 1
        if session.dropdowns(first):          # a drag right after a dropdown change
            session.change_dropdown(first)
            session.drag(group[-1])
            done["dropdown+drag"] += 1
        else:
            session.drag(group[-1])
            done["drag"] += 1
    return done


def _between_stops(session: NotebookSession, slider) -> str:
    """A value a learner might type: 1.3x the slider's (0.8x at its top), as a readout writes it."""
    from lecture_lib.explorers.sliders import parse_typed

    text, now, high = session.slider_value(slider)
    try:
        value = parse_typed(text or "")
    except ValueError:
        return "3,000"
    value *= 0.8 if now is not None and high is not None and now >= high else 1.3
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"
