"""One slider move, end to end: where its time goes between the key press and the painted frame.

Opens a notebook in JupyterLab + headless Chromium, runs it, and presses one slider's arrow keys.
For each press it prints a timeline, in ms after the keydown, of:

* the page: ``send`` (the slider's comm message leaves), every kernel message received (``busy``,
  ``echo_update``, ``update`` with its size, ``idle``, ``custom`` = frames computed ahead), the
  live figure's ``frame`` (``AHEAD`` when painted from a prediction, lecture_lib.explorers.ahead) and the
  animation frame after it (``painted``);
* the kernel (same clock): the comm message handled (``comm_in``) and the explorer's redraw
  (``refresh>`` .. ``refresh<``).

    python tools/profile_move.py [notebook.ipynb] [--slider N] [--presses N] [--no-ahead]
    python tools/profile_move.py NOTEBOOK --flick "hop latency"     # one quick flick (tools/bench_flicks.py)
    python tools/profile_move.py NOTEBOOK --walk "measurement"      # one dropdown walked with the keys

With ``--flick LABEL`` or ``--walk LABEL`` it times one gesture of tools/bench_flicks.py on the control whose label
starts with LABEL instead: the page's pointer moves, hand changes (``hand``), messages, frames and long tasks
(``LONGTASK``: the page's main thread busy over 50 ms, PerformanceObserver), and the kernel's comm messages, redraws
(``refresh>`` .. ``refresh<``, with ``full`` when the axes changed) and predictions (``predict>`` .. ``predict<``),
in ms after the first pointer press or key; ``--cprofile`` adds cProfile's top functions of the kernel over the
gesture (its comm handlers, redraws and predictions).

The default is chapter 1's first slider. ``make bench`` gives the summary figures; this gives the
anatomy of one move (issue 19 §9).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_support as bs  # noqa: E402

# Installed before the page loads: every kernel websocket message, sent or received, with its type.
PAGE_HOOK = r"""
(() => {
  const log = window.__moveLog = [];
  const text = new TextDecoder();
  const kind = (data) => {
    const s = typeof data === 'string' ? data : text.decode(new Uint8Array(data).slice(0, 4000));
    const type = s.match(/"msg_type":\s*"(\w+)"/), state = s.match(/"execution_state":\s*"(\w+)"/);
    const method = s.match(/"method":\s*"(\w+)"/);
    return (state ? state[1] : method ? method[1] : type ? type[1] : '?');
  };
  const Native = window.WebSocket;
  window.WebSocket = function (...args) {
    const socket = new Native(...args);
    const send = socket.send.bind(socket);
    socket.send = (data) => { log.push({t: performance.now(), what: 'send ' + kind(data)}); return send(data); };
    socket.addEventListener('message', (e) => log.push({t: performance.now(),
      what: kind(e.data) + ' ' + (e.data.byteLength || e.data.length) + 'B'}));
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  document.addEventListener('keydown', (e) => log.push({t: e.timeStamp, what: 'KEY ' + e.key}), true);
  document.addEventListener('pointerdown', (e) => log.push({t: e.timeStamp, what: 'DOWN'}), true);
  document.addEventListener('pointermove', (e) => { if (e.buttons) log.push({t: e.timeStamp, what: 'move'}); }, true);
  document.addEventListener('lecture-hand', (e) => log.push({t: performance.now(), what: 'hand ' + e.detail.position}), true);
  try {
    new PerformanceObserver((list) => { for (const entry of list.getEntries())
      log.push({t: entry.startTime, what: `LONGTASK ${entry.duration.toFixed(0)}ms`}); }).observe({type: 'longtask', buffered: true});
  } catch (e) { /* no long task timing */ }
  document.addEventListener('lecture-frame', (e) => {
    log.push({t: performance.now(), what: e.detail && e.detail.ahead ? 'frame AHEAD' : 'frame'});
    requestAnimationFrame(() => log.push({t: performance.now(), what: 'painted'}));
  }, true);
})();
"""

# In the kernel: when each comm message is handled and each explorer redraw starts and ends.
KERNEL_HOOK = r"""
import time as _pm_time, comm as _pm_comm, lecture_lib.explorers.base as _pm_explore
_pm_log = []
_pm_manager = _pm_comm.get_comm_manager()
def _pm_comm_msg(stream, ident, msg, _original=_pm_manager.comm_msg):
    _pm_log.append((_pm_time.time(), 'kernel: comm_in'))
    return _original(stream, ident, msg)
get_ipython().kernel.shell_handlers['comm_msg'] = _pm_comm_msg
def _pm_refresh(self, *args, _original=_pm_explore.Explorer.refresh, **kwargs):
    _pm_log.append((_pm_time.time(), 'kernel: refresh>'))
    try:
        return _original(self, *args, **kwargs)
    finally:
        _pm_log.append((_pm_time.time(), 'kernel: refresh<'))
_pm_explore.Explorer.refresh = _pm_refresh
def _pm_render(self, *args, _original=_pm_explore.FigureView.render, **kwargs):
    _pm_log.append((_pm_time.time(), 'kernel: render>' + (' full' if kwargs.get('full') or self._background is None else '')))
    try:
        return _original(self, *args, **kwargs)
    finally:
        _pm_log.append((_pm_time.time(), 'kernel: render<'))
_pm_explore.FigureView.render = _pm_render
def _pm_predict(self, name, value, *args, _original=_pm_explore.Explorer.predict, **kwargs):
    _pm_log.append((_pm_time.time(), f'kernel: predict> {name}={value:.4g}' if isinstance(value, (int, float)) else f'kernel: predict> {name}'))
    frame = None
    try:
        frame = _original(self, name, value, *args, **kwargs)
        return frame
    finally:
        _pm_log.append((_pm_time.time(), 'kernel: predict<' + (' +background' if frame is not None and len(frame) == 5 else ' none' if frame is None else '')))
_pm_explore.Explorer.predict = _pm_predict
"""

# cProfile over one gesture, in the kernel
PROFILE_ON = "import cProfile as _pm_cp; _pm_prof = _pm_cp.Profile(); _pm_prof.enable()"
PROFILE_OFF = ("_pm_prof.disable(); import pstats as _pm_ps, io as _pm_io; _pm_out = _pm_io.StringIO(); "
               "_pm_ps.Stats(_pm_prof, stream=_pm_out).sort_stats('cumulative').print_stats(30)")


class _HookedBrowser:
    """Hands NotebookSession a context that has the page hook installed."""

    def __init__(self, browser):
        self.browser = browser
        self.context = None

    def new_context(self, **kwargs):
        self.context = self.browser.new_context(**kwargs)
        self.context.add_init_script(PAGE_HOOK)
        return self.context


def profile(name: str, slider_index: int, presses: int, report=print) -> None:
    from playwright.sync_api import sync_playwright

    with bs.LabServer() as server, sync_playwright() as playwright:
        browser = bs.launch_browser(playwright, full=True)
        try:
            session = bs.NotebookSession(server, _HookedBrowser(browser), name)
            session.open()
            session.run_all()
            session.wait_idle(30, settle=1.0)
            session.execute_in_kernel(KERNEL_HOOK)
            slider = session.sliders()[slider_index]
            report(f"{name}: {slider.describe()}")
            session.page.evaluate("() => { window.__moveLog.length = 0; }")
            kind, samples = session.measure_latency(slider, presses, pause=0.3)
            events = session.page.evaluate("() => window.__moveLog")
            origin = session.page.evaluate("() => performance.timeOrigin")
            kernel = json.loads(ast.literal_eval(session.execute_in_kernel("import json", "json.dumps(_pm_log)")["value"]))
            events += [{"t": 1000 * t - origin, "what": what} for t, what in kernel]
            events.sort(key=lambda e: e["t"])
            keys = [i for i, e in enumerate(events) if e["what"].startswith("KEY")]
            for n, start in enumerate(keys):
                end = keys[n + 1] if n + 1 < len(keys) else len(events)
                t0 = events[start]["t"]
                report(f"  press {n + 1}: " + " | ".join(f"{e['what']} {e['t'] - t0:.1f}" for e in events[start + 1:end]))
            firsts = [s["ms"] for s in samples if s.get("ms") is not None]
            kernels = [s["kernel_ms"] for s in samples if s.get("kernel_ms") is not None]
            report(f"  ({kind}) first frame painted: median {bs.median(firsts):.1f} ms; "
                   f"the kernel's frame painted: median {bs.median(kernels):.1f} ms")
            session.close()
        finally:
            browser.close()


def profile_gesture(name: str, label: str, kind: str, *, cprofile: bool = False, nth: int = 0, report=print) -> None:
    """One flick (or one dropdown walk) of tools/bench_flicks.py, its timeline in the page and the kernel."""
    import bench_flicks
    from playwright.sync_api import sync_playwright

    with bs.LabServer() as server, sync_playwright() as playwright:
        browser = bs.launch_browser(playwright, full=True)
        try:
            session = bs.NotebookSession(server, _HookedBrowser(browser), name)
            session.open()
            session.run_all()
            session.open_covers()
            session.wait_idle(30, settle=1.0)
            session.execute_in_kernel(KERNEL_HOOK)
            sliders = [s for s in session.sliders() if s.explorer]
            session.page.evaluate(bench_flicks._TAG_EXPLORERS_JS)
            time.sleep(bench_flicks.PAUSE)
            session.page.evaluate("() => { window.__moveLog.length = 0; }")
            session.execute_in_kernel("_pm_log.clear()" + ("; " + PROFILE_ON if cprofile else ""))
            if kind == "flick":
                slider = [s for s in sliders if s.label.startswith(label)][nth]
                report(f"{name}: flick of {slider.describe()}")
                bench_flicks.flick(session, slider)
            else:
                select = session.page.locator(".lecture-explorer .widget-dropdown").filter(has_text=label).locator("select").nth(nth)
                report(f"{name}: dropdown {label!r}: " + bench_flicks.walk(session, select))
            time.sleep(2.0)
            if cprofile:
                session.execute_in_kernel(PROFILE_OFF)
            events = session.page.evaluate("() => window.__moveLog")
            origin = session.page.evaluate("() => performance.timeOrigin")
            kernel = json.loads(ast.literal_eval(session.execute_in_kernel("import json", "json.dumps(_pm_log)")["value"]))
            events += [{"t": 1000 * t - origin, "what": what} for t, what in kernel]
            events.sort(key=lambda e: e["t"])
            start = next((e["t"] for e in events if e["what"] in ("DOWN",) or e["what"].startswith("KEY")), events[0]["t"])
            for e in events:
                if e["t"] >= start - 400 and not e["what"].startswith(("send comm_msg", "status", "kernel: comm_in")) \
                        or e["what"].startswith(("kernel: comm_in", "send comm_msg")) and e["t"] >= start:
                    report(f"  {e['t'] - start:8.1f}  {e['what']}")
            if cprofile:
                text = ast.literal_eval(session.execute_in_kernel("", "_pm_out.getvalue()[:6000]")["value"])
                report(text)
            session.close()
        finally:
            browser.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", nargs="?", default="01_batch_size_cost_and_speed.ipynb")
    parser.add_argument("--slider", type=int, default=0, help="which slider of the notebook (0 = the first)")
    parser.add_argument("--presses", type=int, default=6)
    parser.add_argument("--no-ahead", action="store_true", help="without frames computed ahead (LECTURE_AHEAD=0)")
    parser.add_argument("--flick", metavar="LABEL", help="one quick flick of the slider whose label starts with LABEL")
    parser.add_argument("--walk", metavar="LABEL", help="one dropdown walk of the dropdown labelled LABEL")
    parser.add_argument("--cprofile", action="store_true", help="with --flick or --walk: cProfile in the kernel")
    parser.add_argument("--nth", type=int, default=0, help="with --flick or --walk: which of the controls so labelled")
    args = parser.parse_args(argv)
    if args.no_ahead:
        os.environ["LECTURE_AHEAD"] = "0"
    reason = bs.browser_unavailable()
    if reason:
        print(f"not profiled: {reason}")
        return 1
    if args.flick or args.walk:
        profile_gesture(args.notebook, args.flick or args.walk, "flick" if args.flick else "walk", cprofile=args.cprofile,
                        nth=args.nth)
    else:
        profile(args.notebook, args.slider, args.presses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
