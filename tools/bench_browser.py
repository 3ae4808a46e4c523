"""Slider-to-pixels latency in a real JupyterLab (headless Chromium), beside a naive ``interact``.

For every slider of every notebook in ``notebooks/`` the page records the keydown's timestamp and,
for the slider's explorer, the moment its new ``<img>`` has loaded and the animation frame after it
(when the new pixels are painted). Each slider is pressed ``presses`` times, alternating direction,
waiting for each frame and for the kernel to go idle before the next press, so what is measured is
one change's latency, not a queue.

Beside it, in the same JupyterLab and browser, a generated scratch notebook measures the naive
approach: ``%matplotlib inline`` and ``ipywidgets.interact`` over a FloatSlider whose callback
creates a new figure with a few lines over 300 points and calls ``plt.show()``.

Beside both, a label-only floor notebook: a slider whose only effect is a text label (the kernel
round trip at the page's frame resolution). A key press whose frame the page already holds
(computed ahead by the kernel, lecture_lib.explorers.ahead) is painted without waiting for the kernel: the
table says what share of presses were, and times the kernel's own frame for each move too
(``--no-ahead`` measures without predictions). Budget (issue 19 §9, replacing DESIGN.md's ">= 3x naive",
which the floor bounds): every notebook's median <= 1.2x the floor measured in the same run, and
p90 <= 45 ms. The naive ratio is still printed. The floor's cells are also appended to each measured
notebook, and its slider is timed there too: the same round trip in that notebook's own (longer)
page and kernel, printed beside the verdict as a diagnostic.

    python tools/bench_browser.py [--presses N] [notebook.ipynb ...]

``run(report)`` is what ``tools/bench.py`` calls; ``report`` prints one line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import browser_support as bs  # noqa: E402

BUDGET_MS = 50.0
BUDGET_RATIO = 3.0            # against the naive interact (kept as a reference)
FLOOR_RATIO = 1.2             # issue 19 §9: median <= 1.2 x the label-only floor, measured in the same run
BUDGET_P90_MS = 45.0
NAIVE_NAME = "zz_naive_interact_reference.ipynb"
FLOOR_NAME = "zz_label_only_floor.ipynb"

# The floor: a slider whose only effect is a text label. Its keydown -> painted readout time is the
# kernel round trip at the page's frame resolution, which no explorer can beat.
FLOOR_CELLS = [
    "import ipywidgets as widgets\n"
    "floor_label = widgets.HTML('value 1.00')\n"
    "floor_label.add_class('lecture-readout')\n"
    "floor_slider = widgets.FloatSlider(value=1.0, min=0.5, max=2.0, step=0.05, description='floor')\n"
    "floor_slider.observe(lambda change: setattr(floor_label, 'value', f'value {change.new:.2f}'), names='value')\n"
    "floor_box = widgets.VBox([floor_slider, floor_label])\n"
    "floor_box.add_class('lecture-explorer')\n"
    "floor_box",
]

# The naive reference, sized like the course's explorer figures (about 1008 x 365 px at 96 dpi),
# on plain linear axes (log axes would make the naive one slower and flatter our ratio).
NAIVE_CELLS = [
    "%matplotlib inline\n"
    "import time\n"
    "import numpy as np\n"
    "import matplotlib.pyplot as plt\n"
    "import ipywidgets as widgets\n"
    "plt.rcParams['figure.dpi'] = 96\n"
    "batch = np.linspace(1, 20000, 300)\n"
    "naive_seconds = []",
    "def naive(scale=1.0):\n"
    "    started = time.perf_counter()\n"
    "    fig, ax = plt.subplots(figsize=(10.5, 3.8))\n"
    "    compute = 2e-6 * batch * scale\n"
    "    weights = np.full_like(batch, 0.02)\n"
    "    kv = 1e-6 * batch\n"
    "    ax.plot(batch, compute, label='compute')\n"
    "    ax.plot(batch, weights, label='weight fetch')\n"
    "    ax.plot(batch, kv, label='KV fetch')\n"
    "    ax.plot(batch, np.maximum(compute, weights + kv), 'k', lw=3, label='step time')\n"
    "    ax.set_xlabel('batch B (sequences)')\n"
    "    ax.set_ylabel('time per step (s)')\n"
    "    ax.legend()\n"
    "    plt.show()\n"
    "    naive_seconds.append(time.perf_counter() - started)\n"
    "\n"
    "widgets.interact(naive, scale=widgets.FloatSlider(value=1.0, min=0.5, max=2.0, step=0.05,\n"
    "                                                  description='naive scale'));",
]

# Kernel-side timing of the course's explorers (wraps lecture_lib.explorers.base in the kernel only; the
# library's files are untouched): where a change's time goes before it leaves the kernel.
INSTRUMENT = r"""
import time as _lt_time
import lecture_lib.explorers.base as _lt_explore
import lecture_lib.explorers.live_figure as _lt_live
_lt_times = {"refresh": [], "render": [], "png": [], "record": []}
def _lt_wrap(cls, name, key):
    original = getattr(cls, name)
    if getattr(original, "_lt_wrapped", False):
        return
    def wrapper(self, *args, **kwargs):
        started = _lt_time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            _lt_times[key].append(_lt_time.perf_counter() - started)
    wrapper._lt_wrapped = True
    setattr(cls, name, wrapper)
_lt_wrap(_lt_explore.Explorer, "refresh", "refresh")
_lt_wrap(_lt_explore.FigureView, "render", "render")
_lt_wrap(_lt_explore.FigureView, "png_bytes", "png")
_lt_wrap(_lt_live, "record", "record")      # a module function: its first argument stands in for self
"""


def _kernel_times(session: bs.NotebookSession, expression: str) -> dict[str, list[float]]:
    result = session.execute_in_kernel("import json", expression)
    if not result or "value" not in result or result["value"] is None:
        return {}
    text = result["value"]
    # user_expressions come back as repr() of a str
    import ast

    return json.loads(ast.literal_eval(text))


def _ms(values) -> str:
    return f"{values:.1f}" if values == values else "n/a"


# Page-side costs of one frame, timed in the page on the notebook's own first explorer: decoding its
# current PNG (a fresh Image from the same data URL) and re-laying-out its readout table.
_PAGE_COSTS_JS = """
async () => {
  const img = document.querySelector('img.lecture-figure');
  const readout = document.querySelector('.lecture-readout');
  if (!img || !readout) return null;
  const decode = [], layout = [];
  for (let i = 0; i < 7; i++) {
    const copy = new Image();
    const t0 = performance.now();
    copy.src = img.src + (img.src.startsWith('blob:') ? '' : '');
    await copy.decode();
    decode.push(performance.now() - t0);
    const html = readout.innerHTML;
    const t1 = performance.now();
    readout.innerHTML = html;
    void readout.offsetHeight;           // force style and layout
    layout.push(performance.now() - t1);
  }
  const mid = (a) => a.sort((x, y) => x - y)[a.length >> 1];
  const live = document.querySelector('.lecture-live-figure');
  return {decode_ms: mid(decode), layout_ms: mid(layout), bytes: (img.src || '').length,
          paint_ms: live && live.dataset.paintMs ? parseFloat(live.dataset.paintMs) : null};
}
"""


def _append_floor(server, name: str) -> None:
    """Add the label-only floor's cells at the end of the server's copy of a notebook: the same
    round trip measured in that notebook's own page and kernel (a long page makes every DOM change
    dearer than in the one-cell floor notebook)."""
    import nbformat

    path = server.root / "notebooks" / name
    notebook = nbformat.read(path, as_version=4)
    notebook.cells += [nbformat.v4.new_code_cell(source) for source in FLOOR_CELLS]
    nbformat.write(notebook, path)


def measure_notebook(server, browser, name: str, presses: int, report, *, instrument: bool) -> dict:
    _append_floor(server, name)
    session = bs.NotebookSession(server, browser, name)
    try:
        session.open()
        if instrument:
            result = session.execute_in_kernel(INSTRUMENT)
            if result.get("error"):
                report(f"  ({name}: kernel instrumentation unavailable: {result['error']})")
                instrument = False
        run_seconds = session.run_all()
        errors = session.errors()
        if errors:
            report(f"  {name}: errors after Run All, not measured: {errors[:3]}")
            return {"name": name, "sliders": 0, "samples": [], "run_seconds": run_seconds, "errors": errors}
        if instrument:
            session.execute_in_kernel("for _v in _lt_times.values(): _v.clear()")
        sliders = session.sliders()
        floor_slider = next((s for s in reversed(sliders) if s.label == "floor"), None)
        sliders = [s for s in sliders if s is not floor_slider]
        page_floor = []
        if floor_slider is not None:
            kind, page_floor = session.measure_latency(floor_slider, max(presses, 6))
        samples, readout_samples, per_slider, readout_only, inert = [], [], {}, [], []
        for slider in sliders:
            kind, got = session.measure_latency(slider, presses)
            if kind == "figure":
                per_slider[slider.describe()] = got
                samples.extend(got)
            elif kind == "readout":
                readout_only.append(slider.describe())
                readout_samples.extend(got)
            else:
                inert.append(slider.describe())
        kernel = {}
        if instrument:
            kernel = _kernel_times(session, "json.dumps(_lt_times)")
        try:
            page_costs = session.page.evaluate(_PAGE_COSTS_JS)
        except Exception:
            page_costs = None
        return {"name": name, "sliders": len(sliders), "samples": samples, "per_slider": per_slider,
                "readout_only": readout_only, "readout_samples": readout_samples, "inert": inert,
                "run_seconds": run_seconds, "kernel": kernel, "errors": [], "page": page_costs,
                "page_floor": page_floor}
    finally:
        session.close()


def measure_naive(server, browser, presses: int) -> dict:
    server.add_notebook(NAIVE_NAME, NAIVE_CELLS)
    session = bs.NotebookSession(server, browser, NAIVE_NAME)
    try:
        session.open()
        session.run_all()
        errors = session.errors()
        if errors:
            raise RuntimeError(f"the naive reference notebook failed: {errors}")
        sliders = session.sliders()
        session.execute_in_kernel("naive_seconds.clear()")
        kind, samples = session.measure_latency(sliders[0], presses)
        if kind != "figure":
            raise RuntimeError(f"the naive reference's slider did not redraw its figure ({kind})")
        kernel = _kernel_times(session, "json.dumps({'callback': naive_seconds})")
        return {"name": "naive interact", "sliders": len(sliders), "samples": samples, "kernel": kernel}
    finally:
        session.close()


def measure_floor(server, browser, presses: int) -> dict:
    """The label-only slider, pressed like the course's: keydown -> readout painted."""
    server.add_notebook(FLOOR_NAME, FLOOR_CELLS)
    session = bs.NotebookSession(server, browser, FLOOR_NAME)
    try:
        session.open()
        session.run_all()
        errors = session.errors()
        if errors:
            raise RuntimeError(f"the floor notebook failed: {errors}")
        sliders = session.sliders()
        kind, samples = session.measure_latency(sliders[0], presses)
        if kind != "readout":
            raise RuntimeError(f"the floor notebook's slider did not change its label ({kind})")
        return {"name": "label-only floor", "sliders": len(sliders), "samples": samples}
    finally:
        session.close()


def _stats(samples: list[dict], key: str = "ms") -> tuple[float, float, int, int]:
    values = [s[key] for s in samples if s.get(key) is not None]
    missed = sum(1 for s in samples if s.get(key) is None)
    return bs.median(values), bs.percentile(values, 0.9), len(values), missed


def run(report=print, *, presses: int = 12, notebooks: list[str] | None = None,
        naive_presses: int = 20, instrument: bool = True) -> dict | None:
    """Measure and print; returns the figures (None when no browser is available)."""
    reason = bs.browser_unavailable()
    if reason:
        report(f"browser latency: not measured ({reason})")
        return None
    from playwright.sync_api import sync_playwright

    names = notebooks or bs.notebook_names()
    report(f"slider -> pixels in JupyterLab + headless Chromium ({bs.CHROMIUM}); "
           f"{presses} key presses per slider, naive reference {naive_presses} presses")
    started = time.monotonic()
    results = []
    with bs.LabServer() as server, sync_playwright() as playwright:
        browser = bs.launch_browser(playwright, full=True)
        try:
            floor = measure_floor(server, browser, naive_presses)
            naive = measure_naive(server, browser, naive_presses)
            for name in names:
                results.append(measure_notebook(server, browser, name, presses, report, instrument=instrument))
        finally:
            browser.close()

    naive_median, naive_p90, naive_n, naive_missed = _stats(naive["samples"])
    naive_cb = naive.get("kernel", {}).get("callback", [])
    report(f"naive interact (re-create the figure, %matplotlib inline): median {_ms(naive_median)} ms, "
           f"p90 {_ms(naive_p90)} ms over {naive_n} presses"
           + (f" ({naive_missed} without a new image)" if naive_missed else "")
           + (f"; its callback in the kernel: median {_ms(1e3 * bs.median(naive_cb))} ms" if naive_cb else ""))
    floor_median, floor_p90, floor_n, _ = _stats(floor["samples"])
    report(f"label-only floor (a slider that only rewrites a text label): median {_ms(floor_median)} ms, "
           f"p90 {_ms(floor_p90)} ms over {floor_n} presses")
    header = (f"{'notebook':<40} {'sliders':>7} {'median ms':>10} {'p90 ms':>8} {'floor ms':>9} {'÷ floor':>8} "
              f"{'naive/ours':>11} {'ahead':>6} {'kernel ms':>10}  verdict")
    report(header)
    report("-" * len(header))
    all_ok = True
    for result in results:
        median, p90, n, missed = _stats(result["samples"])
        ratio = naive_median / median if median == median and median > 0 else float("nan")
        over_floor = median / floor_median if floor_median == floor_median and floor_median > 0 else float("nan")
        result.update(median_ms=median, p90_ms=p90, presses=n, missed=missed, ratio=ratio,
                      naive_median_ms=naive_median, floor_median_ms=floor_median, over_floor=over_floor)
        if not result["samples"]:
            verdict = ("errors (see above)" if result["errors"] else
                       "no sliders" if not result["sliders"] else "no slider redraws a figure")
            ok = not result["errors"] and not result.get("inert")
        else:
            ok = (over_floor <= FLOOR_RATIO and p90 <= BUDGET_P90_MS and missed == 0 and not result["inert"])
            problems = []
            if result["inert"]:
                problems.append(f"{len(result['inert'])} sliders change nothing")
            if not over_floor <= FLOOR_RATIO:
                problems.append(f"median > {FLOOR_RATIO}x floor")
            if not p90 <= BUDGET_P90_MS:
                problems.append(f"p90 > {BUDGET_P90_MS:.0f} ms")
            if missed:
                problems.append(f"{missed} presses without a new image")
            verdict = "within budget" if ok else "MISSES: " + ", ".join(problems)
        result["ok"] = ok
        all_ok &= ok
        hits = sum(1 for sample in result["samples"] if sample.get("ahead"))
        kernel_median, kernel_p90, _, _ = _stats(result["samples"], "kernel_ms")
        result.update(ahead_share=hits / n if n else float("nan"), kernel_median_ms=kernel_median,
                      kernel_p90_ms=kernel_p90)
        report(f"{result['name']:<40} {result['sliders']:>7} {_ms(median):>10} {_ms(p90):>8} "
               f"{_ms(floor_median):>9} {(f'{over_floor:.2f}x' if over_floor == over_floor else 'n/a'):>8} "
               f"{(f'{ratio:.1f}x' if ratio == ratio else 'n/a'):>11} {(f'{hits / n:.0%}' if n else 'n/a'):>6} "
               f"{_ms(kernel_median):>10}  {verdict}")
    report("(ahead: the share of key presses whose first frame the page already held, computed ahead by the "
           "kernel (lecture_lib.explorers.ahead; LECTURE_AHEAD=0 or --no-ahead turns it off); kernel ms: median key press -> "
           "the kernel's own frame for that move, painted)")
    report(f"budget: median <= {FLOOR_RATIO}x the label-only floor (same run) and p90 <= {BUDGET_P90_MS:.0f} ms -> "
           + ("every notebook within budget" if all_ok else "NOT MET (details below)")
           + f"; naive interact median {_ms(naive_median)} ms for reference")

    # where the time goes
    for result in results:
        if result.get("readout_only"):
            r_median, r_p90, r_n, _ = _stats(result["readout_samples"])
            report(f"  {result['name']}: {len(result['readout_only'])} sliders change only the readout "
                   f"(not in the table; keydown -> readout painted median {_ms(r_median)} ms, p90 {_ms(r_p90)} ms): "
                   + "; ".join(result["readout_only"]))
        if result.get("inert"):
            report(f"  {result['name']}: sliders that changed neither figure nor readout: " + "; ".join(result["inert"]))
        if not result["samples"]:
            continue
        if result.get("page_floor"):
            pf_median, pf_p90, _, _ = _stats(result["page_floor"])
            report(f"  {result['name']}: the floor's own slider in this notebook's page: median {_ms(pf_median)} ms, "
                   f"p90 {_ms(pf_p90)} ms; the notebook's median is {result['median_ms'] / pf_median:.2f}x that")
        load_median, _, _, _ = _stats(result["samples"], "load_ms")
        kernel_frame = result["kernel_median_ms"]       # the breakdown below is of the kernel's frame
        line = (f"  {result['name']}: Run All in the browser {result['run_seconds']:.1f} s; "
                f"keydown -> first frame painted median {_ms(result['median_ms'])} ms "
                f"({result['ahead_share']:.0%} painted ahead, image/canvas at {_ms(load_median)} ms), "
                f"-> the kernel's frame painted {_ms(kernel_frame)} ms")
        kernel = result.get("kernel") or {}
        refresh, render, png, recorded = (kernel.get(k, []) for k in ("refresh", "render", "png", "record"))
        if refresh:
            r, d = (1e3 * bs.median(v) for v in (refresh, render))
            if recorded:        # live figures: the moving artists recorded as canvas operations
                c = 1e3 * bs.median(recorded)
                drawn = f"moving artists recorded {c:.1f}, background PNGs {len(png)} of {len(render)} frames"
            else:
                p = 1e3 * bs.median(png) if png else 0.0
                drawn = f"draw/blit {d - p:.1f}, PNG encode {p:.1f}"
            line += (f"; in the kernel per change: {r:.1f} ms (formulas + readout {r - d:.1f}, {drawn}); "
                     f"outside the kernel (widget messages, drawing in the page, paint) ~{kernel_frame - r:.1f} ms")
        if result.get("page"):
            page = result["page"]
            live_paint = page.get("paint_ms")
            drawing = (f"canvas repaint {live_paint:.1f} ms (a background PNG decodes in {page['decode_ms']:.1f} ms, "
                       "only when the axes change)" if live_paint is not None else f"PNG decode {page['decode_ms']:.1f} ms")
            line += f"; in the page: {drawing}, readout table layout {page['layout_ms']:.1f} ms"
            if refresh:
                page_ms = live_paint if live_paint is not None else page["decode_ms"]
                rest = kernel_frame - r - page_ms - page["layout_ms"]
                line += f", leaving ~{rest:.1f} ms for the comm round trip and the frame"
        report(line)
        slow = sorted(((bs.median([s['ms'] for s in got if s.get('ms') is not None]), label)
                       for label, got in result.get("per_slider", {}).items()), reverse=True)[:3]
        if slow and slow[0][0] == slow[0][0]:
            report("    slowest sliders (median ms): " + "; ".join(f"{label} {value:.1f}" for value, label in slow))
    report(f"(browser benchmark took {time.monotonic() - started:.0f} s)")
    return {"naive": naive, "floor": floor, "notebooks": results, "ok": all_ok, "naive_median_ms": naive_median,
            "naive_p90_ms": naive_p90, "floor_median_ms": floor_median, "floor_p90_ms": floor_p90}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebook file names in notebooks/ (default: all)")
    parser.add_argument("--presses", type=int, default=12, help="key presses per slider (default 12)")
    parser.add_argument("--naive-presses", type=int, default=20)
    parser.add_argument("--no-ahead", action="store_true",
                        help="explorers do not compute frames ahead (LECTURE_AHEAD=0): every frame waits for the kernel")
    parser.add_argument("--no-instrument", action="store_true",
                        help="do not time the explorers' refresh/render/PNG steps inside the kernel")
    args = parser.parse_args(argv)
    if args.no_ahead:
        import os

        os.environ["LECTURE_AHEAD"] = "0"       # the Jupyter server, and so its kernels, inherit it
    run(print, presses=args.presses, notebooks=args.notebooks or None, naive_presses=args.naive_presses,
        instrument=not args.no_instrument)
    return 0


if __name__ == "__main__":
    sys.exit(main())
