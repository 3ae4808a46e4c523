"""Chapter 9's explorer: the planner (:func:`lecture_lib.plan.plan`) over its inputs, with the decode curve.

Every number in the readout is the plan's; the curves are :func:`roofline.decode_bound` over a grid of
batches, the reality band :func:`measurements.efficiency_summary` times that bound. The figure is created
once and its artists updated in place (:class:`lecture_lib.explorers.base.FigureView`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lecture_lib import hardware, measurements, models
from lecture_lib import plan as planner

from . import base, sliders
from .plots import COLORS

BATCH_RANGE = (1, 1e6)
STEP_MS_RANGE = (0.01, 2000)
RATE_RANGE = (1, 1e6)
GRID_POINTS = 12        # batches on the curve (each is one decode_bound call, cached per model/system/context)


def _compute_format(system_name: str, weights: str) -> str:
    """The format the matmuls run in: the weights' own when the chip has a peak for it, else FP8, else BF16
    (FP4 weights on an H100 are multiplied at the FP8 peak; a TPU v5e has neither FP8 nor FP4)."""
    available = hardware.get_system(system_name).chip.flops
    return next(fmt for fmt in (weights, "fp8", "bf16") if fmt in available)


@lru_cache(maxsize=64)
def _curve(model_name: str, system_name: str, n_systems: int, len_ctx: float, weights: str):
    """Batches from 1 to the fit limit, and the decode bound's step time and tokens/s per GPU at
    each, computed by the plan's own step (its headline layout, formats and collective latencies),
    so the curve passes through the readout's latency floor and operating point."""
    result = _plan(model_name, system_name, n_systems, len_ctx, 30.0, 3.0, weights)   # target and price: not used here
    fit = result.numbers["decode"]["fit_limit"]
    if fit < 1:
        return fit, np.array([]), np.array([]), np.array([])
    batches = np.unique(np.round(np.geomspace(1, max(1.0, np.floor(fit)), GRID_POINTS)))
    steps = [result.decode_step(b) for b in batches]
    return (fit, batches, np.array([s["t"] for s in steps]),
            np.array([s["tokens_per_s"] for s in steps]) / result.deployment.n_chips)


@lru_cache(maxsize=256)
def _plan(model: str, system: str, n_systems: int, len_ctx: float, target_ms: float, price: float, weights: str):
    return planner.plan(model, system, n_systems=n_systems, price_per_gpu_hour=price, len_ctx=len_ctx,
                        latency_target=target_ms / 1e3, weight_dtype=weights,
                        compute_dtype=_compute_format(system, weights))


class PlanExplorer(base.Explorer):
    """Plan a deployment: model, system, context, latency target and price in; the plan's headline out.

    Left: the step-time bound against the batch, with the latency target; right: tokens/s per GPU, with
    the band Chapter 8's decode rows reached. The dashed line is the largest batch that fits in HBM, the
    marker the operating batch (the largest that meets the target and fits).
    """

    title = "Plan a deployment: the bound, the target, the fit, and what real systems reach"

    def controls_(self):
        return {"model": sliders.dropdown("model", models.names(), "deepseek-v3"),
                "system": sliders.dropdown("system", hardware.system_names(), "HGX H200"),
                "n_systems": sliders.int_slider("systems", 1, 1, 16),
                "weights": sliders.dropdown("weights", ["bf16", "fp8", "fp4"], "fp8"),
                "len_ctx": sliders.log_slider("context (tokens)", 8192, 256, 262_144),
                "target_ms": sliders.log_slider("latency target (ms/token)", 30, 1, 1000),
                "price": sliders.slider("price per GPU-hour ($)", 3.0, 0.5, 15.0, 0.25)}

    def setup(self):
        # Fixed limits wide enough for every preset, so a move only re-blits the moving artists (no full redraw).
        view, (self.ax_t, self.ax_r) = base.new_view(9.6, 3.6, ncols=2)
        self.ax_t.set(xscale="log", yscale="log", xlim=BATCH_RANGE, ylim=STEP_MS_RANGE, xlabel="batch (sequences)",
                      ylabel="step time bound (ms)", title="time per token")
        self.ax_r.set(xscale="log", yscale="log", xlim=BATCH_RANGE, ylim=RATE_RANGE, xlabel="batch (sequences)",
                      ylabel="tokens/s per GPU", title="throughput per GPU")
        self.step_line, = self.ax_t.plot([], [], color=COLORS["total"], lw=2, label="decode bound")
        self.target_line = self.ax_t.axhline(30, color=COLORS["balance"], ls=":", lw=1.5, label="latency target")
        self.rate_line, = self.ax_r.plot([], [], color=COLORS["weights"], lw=2, label="decode bound")
        self.band = self.ax_r.fill_between([1, 2], [1, 1], [1, 1], color=COLORS["kv"], alpha=0.25,
                                           label="measured systems (Ch8)")
        self.fit_lines = [axis.axvline(1, color=COLORS["marker"], ls="--", lw=1.2, label="largest batch that fits")
                          for axis in (self.ax_t, self.ax_r)]
        self.markers = [axis.plot([], [], "o", color="black", ms=7, label="operating batch")[0]
                        for axis in (self.ax_t, self.ax_r)]
        self.ax_t.legend(loc="upper left", framealpha=0.9, frameon=True, fontsize=8)
        self.ax_r.legend(loc="lower right", framealpha=0.9, frameon=True, fontsize=8)
        view.animate(self.step_line, self.rate_line, self.band, self.target_line, *self.fit_lines, *self.markers)
        return view

    def update(self, values):
        key = (values["model"], values["system"], int(values["n_systems"]), float(values["len_ctx"]), values["weights"])
        fit, batches, steps, rates = _curve(*key)
        result = _plan(*key[:4], float(values["target_ms"]), float(values["price"]), values["weights"])
        got = result.numbers
        band = measurements.efficiency_summary(kind="decode")
        self.step_line.set_data(batches, steps * 1e3)
        self.rate_line.set_data(batches, rates)
        if len(batches):
            upper, lower = rates * band["high"], rates * band["low"]
            self.band.set_verts([np.column_stack([np.r_[batches, batches[::-1]], np.r_[upper, lower[::-1]]])])
        self.band.set_visible(bool(len(batches)))
        for line in self.fit_lines:
            line.set_xdata([max(fit, 1)] * 2)
            line.set_visible(fit >= 1)
        target = values["target_ms"]
        self.target_line.set_ydata([target, target])
        batch = got["decode"]["batch"]
        if batch:
            self.markers[0].set_data([batch], [got["decode"]["step_time"] * 1e3])
            self.markers[1].set_data([batch], [got["decode"]["tokens_per_s_per_gpu"]])
        else:
            for marker in self.markers:
                marker.set_data([], [])
        rows = self._rows(result)
        compute = _compute_format(values["system"], values["weights"])
        if compute != values["weights"]:
            rows.insert(0, ("compute format", f"{compute}: this chip has no {values['weights']} peak", "note"))
        return rows, False

    @staticmethod
    def _rows(result):
        by_key = {(row.section, row.key): row for row in result.rows}

        def text(section, key, default="—"):
            row = by_key.get((section, key))
            return row.text if row else default

        layout = result.numbers["inputs"]["layout"] or "pooled"
        if ("capacity", f"{layout}_fits") not in by_key:
            layout = "pooled"
        fits = by_key[("capacity", f"{layout}_fits")].value
        rows = [("headline layout", text("inputs", "layout")),
                (f"weights fit ({by_key[('capacity', f'{layout}_fits')].label.split(':')[0]})",
                 text("capacity", f"{layout}_weights_per_gpu") + " per GPU", "ok" if fits else "bad"),
                ("target", text("inputs", "target")),
                ("largest batch that fits", text("decode", "fit_limit")),
                ("B* weights only / with KV", f"{text('decode', 'balance_batch')} / {text('decode', 'balance_batch_with_kv')}"),
                ("latency floor (batch 1)", text("decode", "latency_floor")),
                ("operating batch", text("decode", "batch")),
                ("tokens/s per GPU (bound)", text("decode", "tokens_per_s_per_gpu")),
                ("tokens/s per user (bound)", text("decode", "tokens_per_s_per_user")),
                ("prefill of the context", text("prefill", "t_prefill")),
                ("$ per M output / input tokens",
                 f"{text('cost', 'usd_per_million_output')} / {text('cost', 'usd_per_million_input')}"),
                ("reality (decode rows)", text("reality", "decode_expected", "no operating batch"), "note")]
        return rows
