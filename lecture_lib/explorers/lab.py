"""Chapter 11 (the lab after Chapter 1): what the learner sees while and after their machine is measured.

The measuring is :mod:`lecture_lib.measure`'s; here are its progress bar, the measured decode steps drawn on
the roofline built from the measured peak and bandwidth (knee and predicted B* marked), a table of the gaps,
and the class view (every student's profile on one roofline).
"""

from __future__ import annotations

import html
import math
import time

import numpy as np
from matplotlib.ticker import FuncFormatter

from lecture_lib import hardware, measure, roofline, units

from . import plots
from .plots import COLORS


class ProgressBar:
    """A progress bar for :func:`lecture_lib.measure.profile`: call it with (fraction done, what is running).

    In a notebook it is an ipywidgets bar with a line of text under it; elsewhere (a script, a test) it prints
    one line per stage. Display it by leaving it as a cell's last expression, or through ``.widget``."""

    def __init__(self, description: str = "measuring"):
        import ipywidgets as widgets

        self.bar = widgets.FloatProgress(value=0.0, min=0.0, max=1.0, description=description,
                                         layout=widgets.Layout(width="480px"))
        self.label = widgets.HTML("waiting to start")
        self.widget = widgets.VBox([self.bar, self.label])
        self.started = time.perf_counter()
        self.stages: list[tuple[float, str]] = []

    def __call__(self, fraction: float, what: str) -> None:
        fraction = min(1.0, max(0.0, float(fraction)))
        elapsed = time.perf_counter() - self.started
        self.bar.value = fraction
        self.bar.bar_style = "success" if fraction >= 1 else ""
        self.label.value = f"{html.escape(what)} · {elapsed:.1f} s"
        self.stages.append((fraction, what))

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


def _label_log_axis(which, text) -> None:
    """Label a log axis's decades and its 2x and 5x minor ticks with ``text(value)``: a measured range is often less
    than a decade, where decades alone leave one label or none."""
    def minor(value, _position=None):
        lead = value / 10 ** math.floor(math.log10(value)) if value > 0 else 0
        return text(value) if round(lead, 6) in (2.0, 5.0) else ""

    which.set_major_formatter(FuncFormatter(lambda value, _position=None: text(value)))
    which.set_minor_formatter(FuncFormatter(minor))


def _round_limits(axis, which: str) -> None:
    """Widen a log axis's limits to two significant digits (1.07 to 1,168.85 becomes 1 to 1,200), so the range the
    figure's description reads out is in round numbers."""
    low, high = axis.get_xlim() if which == "x" else axis.get_ylim()

    def rounded(value, up):
        step = 10 ** (math.floor(math.log10(value)) - 1)
        return (math.ceil(value / step - 1e-9) if up else math.floor(value / step + 1e-9)) * step

    limits = (rounded(low, up=False), rounded(high, up=True))
    (axis.set_xlim if which == "x" else axis.set_ylim)(*limits)


def _grid(profile) -> np.ndarray:
    batches = profile.decode["batches"]
    return np.geomspace(min(batches) / 1.5, max(batches) * 1.5, 200)


@plots.styled
def roofline_figure(profile, *, title: str | None = None):
    """The measured step times (median, with the fastest and slowest repeat as a bar) over Chapter 1's roofline
    drawn from the measured peak and bandwidth: the weight-fetch floor, the compute line, their maximum,
    the predicted B* and the measured knee (where the measured floor and the measured compute slope meet)."""
    figure, (axis,) = plots.new_figure(8.4, 3.9)
    grid = _grid(profile)
    predicted = {key: np.broadcast_to(value, grid.shape) for key, value in profile.predicted(grid).items()}
    ms = 1e3
    axis.loglog(grid, predicted["t_weights"] * ms, color=COLORS["weights"], ls="-.", lw=1.2,
                label=f"weight fetch at {units.bandwidth(profile.mem_bw)}")
    axis.loglog(grid, predicted["t_compute"] * ms, color=COLORS["compute"], ls="--", lw=1.2,
                label=f"compute at {units.flops(profile.flops)}")
    axis.loglog(grid, predicted["t"] * ms, color=COLORS["total"], lw=2.2, label="roofline (the maximum)")
    d = profile.decode
    medians, fastest, slowest = (np.asarray(d[key]) * ms for key in ("seconds", "fastest", "slowest"))
    axis.errorbar(d["batches"], medians, yerr=[medians - fastest, slowest - medians], fmt="o", color=COLORS["memory"],
                  ms=5, capsize=2, label="measured (median, fastest-slowest)")
    star = profile.balance_batch()
    axis.axvline(star, color=COLORS["balance"], ls=":", lw=1.5, label=f"predicted B* = {units.number(star)}")
    knee = profile.knee()
    if math.isfinite(knee):
        axis.axvline(knee, color=COLORS["marker"], ls="--", lw=1.5, label=f"measured knee = {units.number(knee)}")
    _label_log_axis(axis.yaxis, lambda value: f"{value:g}")
    _round_limits(axis, "y")
    axis.set(xlabel="batch B (sequences)", ylabel="time per decode step (ms)",
             title=title or f"{profile.name}: {units.count(d['n_params'])} float32 weights, "
                            f"{units.bytes_(d['n_params'] * d['bytes_param'])}")
    axis.legend()
    plots.legends_outside(figure)
    plots.readable_ticks(figure)
    plots.readable(figure)
    return figure


def gap_table(profile) -> str:
    """HTML: each measured batch, its step time, the roofline's, their ratio, and which side of the roofline
    it is on (memory or compute)."""
    d = profile.decode
    predicted = profile.predicted()
    rows = []
    for index, batch in enumerate(d["batches"]):
        side = "memory" if predicted["t_mem"][index] >= predicted["t_compute"][index] else "compute"
        ratio = d["seconds"][index] / predicted["t"][index]
        rows.append(f"<tr><td>{batch:,}</td><td>{units.seconds(d['seconds'][index])}</td>"
                    f"<td>{units.seconds(predicted['t'][index])}</td><td>{ratio:.2f}×</td><td>{side}</td></tr>")
    return ("<table><tr><th>batch</th><th>measured step</th><th>roofline</th><th>measured / roofline</th>"
            "<th>bound by</th></tr>" + "".join(rows) + "</table>")


def _batch_list(batches) -> str:
    batches = [f"{b:,}" for b in batches]
    return batches[0] if len(batches) == 1 else ", ".join(batches[:-1]) + " and " + batches[-1]


def findings(profile, *, over: float = 1.5) -> list[str]:
    """What one profile's measurement says, as sentences computed from it (never typed): batch 1 against the read
    bound and against the rate the BLAS's matrix-vector product reached; the small batches that ran more than ``over``
    times the roofline (batch 2 against batch 1, the range, the worst); the large batches' ratio and how it is
    aggregated; the measured knee (:func:`lecture_lib.measure.measured_knee`) against the predicted B*, and the two
    ends' construction beside them."""
    s = profile.summary()
    ratios = profile.ratios()
    d = profile.decode
    times = dict(zip(d["batches"], d["seconds"]))
    said = []
    one = min(ratios)
    text = (f"Batch {one}: the step took {s['batch1_ratio']:.2f}× the roofline's read of the weights at "
            f"{units.bandwidth(profile.mem_bw)} (the read probe).")
    if s.get("gemv_bandwidth"):
        text += (f" One large matrix-vector product read at {units.bandwidth(s['gemv_bandwidth'])}, "
                 f"{s['gemv_bandwidth'] / profile.mem_bw:.0%} of the probe's rate; against a bound drawn from that "
                 f"rate the batch-1 step took {s['batch1_gemv_ratio']:.2f}×.")
    said.append(text)
    small = [b for b in d["batches"] if b > one]
    if small:
        second = small[0]
        slow = [b for b in d["batches"] if b > one and ratios[b] > over]
        text = f"Batch {second}'s step took {times[second] / times[one]:.2f}× batch {one}'s"
        if slow:
            worst = max(slow, key=ratios.get)
            text += (f"; batches {slow[0]:,} to {slow[-1]:,} ran more than {over:g}× the roofline "
                     f"(the most: {ratios[worst]:.2f}× at batch {worst:,}).")
        else:
            text += f"; no batch above {one} ran more than {over:g}× the roofline."
        said.append(text)
    large = s["large_batches"]
    said.append(f"Large batches: {s['large_batch_ratio']:.2f}× the compute roofline "
                + (f"at batch {large[0]:,}." if len(large) == 1 else
                   f"(the median of the ratios at batches {_batch_list(large)})."))
    knee, star = s["knee"], s["balance_batch"]
    if math.isfinite(knee):
        said.append(f"Measured knee: batch {units.number(knee)}, {units.factor(knee / star)} the predicted B* of "
                    f"{units.number(star)}" + (" (within 2×)." if 0.5 <= knee / star <= 2 else " (more than 2× off).")
                    + f" The two ends' lines alone would meet at {units.number(s['ends_knee'])}.")
    else:
        said.append(f"Measured knee: beyond the batches measured (predicted B* {units.number(star)}).")
    return said


def findings_html(profile) -> str:
    """:func:`findings` as an HTML list."""
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in findings(profile)) + "</ul>"


def _binary(size: float) -> str:
    """Cache sizes as the OS and vendors print them: KiB and MiB (powers of 1024)."""
    return f"{size / 1024**2:g} MiB" if size >= 1024**2 else f"{size / 1024:g} KiB"


def report_html(profile) -> str:
    """HTML: what was measured on which machine (CPU, cores and threads, BLAS and its kernel, caches, RAM),
    each figure with its spread, and any note (busy machine, memory too small)."""
    m = profile.machine
    blas = m.get("blas", {})
    caches = ", ".join(f"L{c['level']}{'' if c['type'] == 'Unified' else ' ' + c['type'].lower()} {_binary(c['bytes'])}"
                       for c in m.get("caches", [])) or "not reported by the OS"
    rows = [("CPU", f"{m.get('cpu', '?')} ({m.get('cores', '?')} cores usable)"),
            ("BLAS", f"{blas.get('library', '?')} {blas.get('version', '')}, kernel {blas.get('kernel') or '?'}, "
                     f"{blas.get('threads') or '?'} threads"),
            ("caches", caches),
            ("RAM", units.bytes_(m["ram_bytes"]) if m.get("ram_bytes") else "not reported"),
            ("load before measuring", "not reported" if m.get("load_average") is None else f"{m['load_average']:.2f}")]
    figures = [(f"peak, {dtype}", stat, units.flops) for dtype, stat in profile.peak.items()]
    extra = [("read bandwidth", profile.bandwidth, units.bandwidth)]
    if profile.gemv is not None:
        extra.append(("matrix-vector read (x @ W)", profile.gemv, units.bandwidth))
    for label, stat, fmt in figures + extra:
        rows.append((label, f"<b>{fmt(stat.median)}</b> (from {fmt(stat.low)} to {fmt(stat.high)}, "
                            f"{len(stat.samples)} repeats)"))
    rows.append(("measuring took", f"{units.number(profile.seconds)} s ({profile.mode} mode)"))
    table = "".join(f"<tr><td>{html.escape(a)}</td><td>{b}</td></tr>" for a, b in rows)
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in profile.notes)
    return f"<table>{table}</table>" + (f"<p><b>Notes</b></p><ul>{notes}</ul>" if notes else "")


@plots.styled
def class_figure(profiles):
    """Every machine of a class on one roofline chart: achieved FLOP/s against arithmetic intensity (FLOPs per
    byte of weights read: B/2 for float32 weights at batch B), each machine's roofline min(peak, bandwidth ×
    intensity) as a line and its measured steps as dots."""
    profiles = list(profiles)
    if not profiles:
        raise ValueError("profiles must hold at least one lab profile (measure.load_profile of each JSON file)")
    figure, (axis,) = plots.new_figure(8.4, 4.0)
    colours = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
    for index, profile in enumerate(profiles):
        colour = colours[index % len(colours)]
        d = profile.decode
        batches = np.asarray(d["batches"], dtype=float)
        intensity = 2 * batches / d["bytes_param"]
        achieved = 2 * d["n_params"] * batches / np.asarray(d["seconds"])
        grid = np.geomspace(intensity.min() / 2, intensity.max() * 2, 100)
        axis.loglog(grid, np.minimum(profile.flops, profile.mem_bw * grid), color=colour, lw=1.6,
                    label=f"{profile.name}: {units.flops(profile.flops)}, {units.bandwidth(profile.mem_bw)}")
        axis.loglog(intensity, achieved, "o", color=colour, ms=4, label="_")
    _label_log_axis(axis.yaxis, units.flops)
    _label_log_axis(axis.xaxis, units.number)
    _round_limits(axis, "x")
    axis.set(xlabel="FLOPs per byte of weights read (B/2 for float32)", ylabel="achieved FLOP/s",
             title=f"the class on one roofline: {units.plural(len(profiles), 'machine')}")
    axis.legend()
    plots.legends_outside(figure)
    plots.readable_ticks(figure)
    plots.readable(figure)
    return figure


def class_table(profiles) -> str:
    """HTML: one row per machine: its peak, bandwidth, predicted B* and measured knee, sorted by B*."""
    rows = []
    for profile in sorted(profiles, key=lambda p: p.balance_batch()):
        knee = profile.knee()
        rows.append(f"<tr><td>{html.escape(profile.name)}</td><td>{units.flops(profile.flops)}</td>"
                    f"<td>{units.bandwidth(profile.mem_bw)}</td><td>{units.number(profile.balance_batch())}</td>"
                    f"<td>{'beyond the batches measured' if not math.isfinite(knee) else units.number(knee)}</td></tr>")
    return ("<table><tr><th>machine</th><th>float32 peak</th><th>read bandwidth</th><th>predicted B*</th>"
            "<th>measured knee</th></tr>" + "".join(rows) + "</table>")


def gpu_report_html(result) -> str:
    """HTML for :func:`lecture_lib.measure.torch_profile`'s result: each format's peak and the read bandwidth with
    their spread, the predicted B* (Chapter 1's :func:`lecture_lib.roofline.balance_batch` on the device as a chip)
    beside the measured knee, then every decode step against the roofline drawn from those figures."""
    bandwidth = result["bandwidth"]
    rows = [(f"peak, {fmt}", stat, units.flops) for fmt, stat in result["flops"].items()]
    rows.append(("read bandwidth", bandwidth, units.bandwidth))
    head = "".join(f"<tr><td>{html.escape(label)}</td><td><b>{fmt(stat.median)}</b> (from {fmt(stat.low)} to "
                   f"{fmt(stat.high)}, {len(stat.samples)} repeats)</td></tr>" for label, stat, fmt in rows)
    chip = hardware.custom_chip(name=f"this {result['device']} device", hbm_capacity=80e9,
                                hbm_bandwidth=bandwidth.median,
                                flops={fmt: stat.median for fmt, stat in result["flops"].items()})
    parts = [f"<table>{head}</table>"]
    for fmt, d in result["decode"].items():
        predicted = measure.torch_predicted(result, fmt)
        star = roofline.balance_batch(chip, weight_bytes=d["bytes_param"], compute_dtype=fmt)
        knee = measure.measured_knee(d["batches"], d["seconds"])
        lines = []
        for index, batch in enumerate(d["batches"]):
            side = "memory" if predicted["t_mem"][index] >= predicted["t_compute"][index] else "compute"
            lines.append(f"<tr><td>{batch:,}</td><td>{units.seconds(d['seconds'][index])}</td>"
                         f"<td>{units.seconds(predicted['t'][index])}</td>"
                         f"<td>{d['seconds'][index] / predicted['t'][index]:.2f}×</td><td>{side}</td></tr>")
        parts.append(f"<p><b>{fmt} decode steps</b>: {d['n_layers']} layers, {units.count(d['n_params'])} weights "
                     f"({units.bytes_(d['n_params'] * d['bytes_param'])}); predicted B* {star:,.0f}, measured knee "
                     f"{'beyond the batches measured' if not math.isfinite(knee) else f'{knee:,.0f}'}</p>"
                     "<table><tr><th>batch</th><th>measured step</th><th>roofline</th><th>measured / roofline</th>"
                     "<th>bound by</th></tr>" + "".join(lines) + "</table>")
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in result.get("notes", []))
    return "".join(parts) + (f"<p><b>Notes</b></p><ul>{notes}</ul>" if notes else "")


def measure_with_bar(mode: str = "quick", **options):
    """:func:`lecture_lib.measure.profile` with a :class:`ProgressBar` shown above the cell's output."""
    from IPython.display import display

    bar = ProgressBar(f"{mode} mode")
    display(bar.widget)
    return measure.profile(mode, progress=bar, **options)
