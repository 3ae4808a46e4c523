"""Chapter 4's explorers and figures: per-GPU memory against pipeline depth, and what pipelining
costs in latency.

Every bar and curve is a Formula of :mod:`lecture_lib.pipeline_memory` evaluated over a NumPy array
of pipeline depths or GPU counts; nothing here re-types an equation.
"""

from __future__ import annotations

import math

import numpy as np

from lecture_lib import hardware, models, pipeline, units, validate
from lecture_lib import pipeline_memory as pm

from . import base, sliders
from .plots import COLORS

GB = 1e9
MS = 1e3
STAGES = np.arange(1, 17)                 # the bars: P = 1 ... 16
WEIGHT_FORMATS = ("fp4", "fp8", "bf16")
BATCH_MODES = (("B = P·b: P micro-batches, every stage busy", "pipelined"),
               ("B = b: one micro-batch, P − 1 stages idle", "fixed"))


KV_LABELS = {"pipelined": "KV cache  b·len·bytes_tok / E", "fixed": "KV cache  b·len·bytes_tok / (E·P)"}


def _model_options():
    return [(f"{name} ({units.count(models.get(name).params_total)} params)", name) for name in models.names()]


# GPUs per stage: the scale-up domains (8, 72, 576) and the powers of two between. A slider over every whole number
# (576 one-GPU steps) left a drag to the kernel at every step, the predictions covering only part of the track (a
# learner's slow drag froze the figure for 3 s); these 12 stops are predicted whole.
GPU_STOPS = sliders.count_stops(576, pm.SCALE_UP_SIZES.values())


class MemoryExplorer(base.Explorer):
    """Per-GPU memory (weights + KV) against the number of pipeline stages P (lecture E4.4, P4.2).

    The red weight slab shrinks as 1/P; the green KV slab stays put, because decode needs P
    micro-batches in flight and so P times more sequences. Switch the batch mode to "B = b" to see
    what would happen if the batch did not grow, at the price of P − 1 idle stages.
    """

    title = "Memory per GPU against pipeline stages: the weights shrink, the KV cache does not"

    def controls_(self):
        return {
            "model": sliders.dropdown("model", _model_options(), "deepseek-v3"),
            "weights": sliders.dropdown("weight format", WEIGHT_FORMATS, "fp8"),
            "chip": sliders.dropdown("chip (HBM line)", hardware.chip_names(), "GB200"),
            "batch_mode": sliders.dropdown("global batch", BATCH_MODES, "pipelined"),
            "E": sliders.log_slider("E: GPUs per stage", pm.LECTURE_EXPERT_PARALLEL, 1, 72, whole=True,
                                    stops=GPU_STOPS),
            "P": sliders.int_slider("P: your stages", pm.LECTURE_STAGES, 1, int(STAGES[-1])),
            "b": sliders.log_slider("b: micro-batch (seqs)", pm.LECTURE_MICRO_BATCH, 16, 20_000),
            "len_ctx": sliders.log_slider("context (tokens)", pm.LECTURE_CONTEXT, 1024, 1_048_576),
            "bytes_tok": sliders.log_slider("KV bytes per token", 35_136, 256, 2_097_152, readout_format=".4g"),
        }

    def __init__(self, **overrides):
        if "bytes_tok" not in overrides:
            model = models.get(overrides.get("model", "deepseek-v3"))
            context = validate.scalar("len_ctx", overrides.get("len_ctx", pm.LECTURE_CONTEXT), maximum=1e12)
            overrides["bytes_tok"] = model.kv_bytes_per_token("fp8", context_len=max(1, int(context)))
        super().__init__(**overrides)
        # Picking a model also sets the KV slider to that model's FP8 cache; the slider stays free.
        self.controls["model"].observe(self._model_changed, names="value")

    def _model_changed(self, change):
        model = models.get(change["new"])
        context = max(1, int(self.controls["len_ctx"].value))
        self.controls["bytes_tok"].value = model.kv_bytes_per_token("fp8", context_len=context)

    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.9)
        axis.set(xlabel="pipeline stages P (racks)", ylabel="GB per GPU", xticks=STAGES,
                 xlim=(0.4, STAGES[-1] + 0.6), title="memory per GPU")
        self.highlight = axis.axvspan(pm.LECTURE_STAGES - 0.5, pm.LECTURE_STAGES + 0.5, color=COLORS["marker"],
                                      alpha=0.18, lw=0)
        self.weight_bars = axis.bar(STAGES, np.ones_like(STAGES), width=0.7, color=COLORS["weights"],
                                    hatch="////", edgecolor="white", lw=0,   # hatched: not colour alone
                                    label="weights  N·bytes / (E·P) (hatched)")
        self.kv_bars = axis.bar(STAGES, np.ones_like(STAGES), width=0.7, bottom=1, color=COLORS["kv"],
                                label="KV cache  b·len·bytes_tok / E")
        self.hbm_line = axis.axhline(1, color=COLORS["total"], ls="--", lw=1.4, label="HBM per GPU")
        self.legend = axis.legend(loc="upper right")
        self.axis = axis
        view.animate(self.highlight, *self.weight_bars, *self.kv_bars, self.hbm_line)
        return view

    def resolve(self, values) -> dict:
        model = models.get(values["model"])
        chip = hardware.get(values["chip"])
        return {"model": model, "chip": chip, "bytes_param": hardware.BYTES_PER_VALUE[values["weights"]]}

    def per_gpu(self, values, stages):
        """Weights and KV bytes per GPU at these stage counts, for the current controls."""
        r = self.resolve(values)
        common = dict(n_total=r["model"].params_total, bytes_param=r["bytes_param"], micro_batch=values["b"],
                      len_ctx=values["len_ctx"], bytes_tok=values["bytes_tok"], expert_parallel=values["E"],
                      stages=stages)
        memory = pm.memory_per_gpu(**common)
        if values["batch_mode"] == "fixed":
            kv = pm.KV_PER_GPU_FIXED_BATCH(b=values["b"], len_ctx=values["len_ctx"], bytes_tok=values["bytes_tok"],
                                           n_ep=values["E"], P=stages)
            memory = {"weights": memory["weights"], "kv": kv, "total": memory["weights"] + kv}
        return memory

    @staticmethod
    def idle_stages(batch_mode: str, stages: int) -> str:
        """The decode loop's idle stages: P micro-batches keep P stages busy; with B = b one micro-batch
        visits them in turn, so P − 1 wait at any moment (pipeline.decode_idle_fraction, lecture 01:09:11)."""
        idle = pipeline.decode_idle_fraction(stages=stages, microbatches=stages if batch_mode == "pipelined" else 1)
        return f"{round(idle * stages)} of {stages} ({idle:.0%} of the GPUs)"

    def update(self, values):
        r = self.resolve(values)
        memory = self.per_gpu(values, STAGES.astype(float))
        weights, kv = memory["weights"] / GB, memory["kv"] / GB
        for bar, w, k, kv_bar in zip(self.weight_bars, weights, kv, self.kv_bars):
            bar.set_height(w)
            kv_bar.set_y(w)
            kv_bar.set_height(k)
        hbm = r["chip"].hbm_capacity / GB
        self.hbm_line.set_ydata([hbm, hbm])
        p = values["P"]
        self.highlight.set_x(p - 0.5)
        top = base.steady_ceiling(self.axis.get_ylim()[1], 1.08 * max(weights[0] + kv[0], hbm),
                                     steps=base.FINE_STEPS)
        changed = base.set_limits(self.axis, (0.4, STAGES[-1] + 0.6), (0, top))
        kv_label = KV_LABELS[values["batch_mode"]]
        kv_text = next(text for text in self.legend.get_texts() if text.get_text().startswith("KV cache"))
        if kv_text.get_text() != kv_label:       # only when the batch mode flips: the legend is static
            kv_text.set_text(kv_label)
            changed = True

        i = p - 1
        total = weights[i] + kv[i]
        fits = "fits" if total <= hbm else "does not fit"
        b_max = pm.max_micro_batch(hbm_capacity=r["chip"].hbm_capacity, n_total=r["model"].params_total,
                                   bytes_param=r["bytes_param"], len_ctx=values["len_ctx"],
                                   bytes_tok=values["bytes_tok"], expert_parallel=values["E"], stages=p,
                                   pipelined=values["batch_mode"] == "pipelined")
        batch = p * values["b"] if values["batch_mode"] == "pipelined" else values["b"]
        rows = [
            (f"weights per GPU at P = {p}", units.bytes_(weights[i] * GB)),
            (f"KV per GPU at P = {p}", units.bytes_(kv[i] * GB)),
            ("total vs HBM per GPU", f"{fits}: {units.bytes_(weights[i] * GB)} weights + {units.bytes_(kv[i] * GB)} KV "
                                     f"{'≤' if total <= hbm else '>'} {units.bytes_(hbm * GB)} HBM",
             "ok" if total <= hbm else "bad"),
            ("KV share of the total", f"{kv[i] / total:.1%}"),
            ("global batch B, GPUs E·P", f"{units.counted(batch, 'sequence')} on {units.counted(values['E'] * p, 'GPU')}"),
            ("idle stages you pay for", self.idle_stages(values["batch_mode"], p)),
            ("P = 1 → 16: weights, KV", f"÷{weights[0] / weights[-1]:.0f}, ×{kv[-1] / kv[0]:.3g}"),
            (f"largest b that fits at P = {p}", f"{b_max:,.0f} sequences" if b_max > 0 else "none: weights alone overflow"),
            ("KV bytes per token", units.bytes_(values["bytes_tok"])),
            (f"{r['model'].name} KV per token (fp8 / bf16)",
             f"{units.bytes_(r['model'].kv_bytes_per_token('fp8', context_len=max(1, int(values['len_ctx']))))} / "
             f"{units.bytes_(r['model'].kv_bytes_per_token('bf16', context_len=max(1, int(values['len_ctx']))))}"),
        ]
        return rows, changed


class LatencyExplorer(base.Explorer):
    """What pipelining costs and what it cannot buy (lecture E4.5, E4.6).

    Left: time per token against P, the step plus one hop per stage boundary. Right: the
    weight-fetch floor of a token against the GPUs reading weights at the same moment. Pipeline
    stages take turns, so P racks read no faster than one: only a bigger scale-up domain helps.
    """

    title = "Pipelining costs hops and buys no bandwidth; a bigger scale-up domain does"

    MAX_GPUS = 16_384    # E·P at the sliders' ends (576 × 16 = 9,216) stays on the chart
    GPUS = np.unique(np.round(np.logspace(0, math.log10(MAX_GPUS), 200)))

    def controls_(self):
        return {
            "model": sliders.dropdown("model", _model_options(), "kimi-k2"),
            "weights": sliders.dropdown("weight format", WEIGHT_FORMATS, "fp8"),
            "chip": sliders.dropdown("chip (HBM bandwidth)", hardware.chip_names(), "GB200"),
            "t_step": sliders.slider("step time (ms)", pm.LECTURE_STEP_TIME * MS, 5, 50, 1),
            "t_hop": sliders.log_slider("hop latency (ms)", 2.5, 0.1, 20, readout_format=".2g"),
            "P": sliders.int_slider("P: stages", pm.LECTURE_STAGES, 1, int(STAGES[-1])),
            "E": sliders.log_slider("E: GPUs per stage", 64, 1, 576, whole=True, stops=GPU_STOPS),
        }

    def setup(self):
        view, axes = base.new_view(8.6, 3.6, ncols=2)
        left, right = axes
        left.set(xlabel="pipeline stages P", ylabel="ms per token", xticks=STAGES[::3],
                 xlim=(0.4, STAGES[-1] + 0.6), title="t_token ≈ t_step + P·t_hop (P = 1: no hop)")
        self.highlight = left.axvspan(pm.LECTURE_STAGES - 0.5, pm.LECTURE_STAGES + 0.5, color=COLORS["marker"],
                                      alpha=0.18, lw=0)
        self.step_bars = left.bar(STAGES, np.ones_like(STAGES), width=0.7, color=COLORS["compute"], label="step")
        self.hop_bars = left.bar(STAGES, np.ones_like(STAGES), width=0.7, bottom=1, color=COLORS["memory"],
                                 label="hops")
        left.legend(loc="upper left")
        right.set(xscale="log", yscale="log", xlabel="GPUs reading weights at once", ylabel="ms per token",
                  xlim=(1, self.MAX_GPUS), title="weight-fetch floor")
        for label, n in pm.SCALE_UP_SIZES.items():
            right.axvline(n, color=COLORS["marker"], lw=0.8, ls=":")
            right.text(n * 1.08, 0.98, label.split(" (")[0], rotation=90, va="top", ha="left", fontsize=7.5,
                       transform=right.get_xaxis_transform(), color=COLORS["marker"],
                       bbox=dict(facecolor="white", alpha=0.85, edgecolor="none", pad=0.8))   # over the grid lines
        self.floor_line, = right.plot([], [], color=COLORS["weights"], lw=2, label="N·bytes / (n·bw)")
        self.e_dot, = right.plot([], [], "o", color=COLORS["weights"], ms=8, label="one stage: E GPUs (real)")
        self.ep_dot, = right.plot([], [], "o", mfc="none", mec=COLORS["total"], ms=8,
                                  label="E·P GPUs (if stages added up: they don't)")
        right.legend(loc="lower left", fontsize=7.5)
        view.figure.subplots_adjust(left=0.08, right=0.98, wspace=0.3)
        self.axes = axes
        view.animate(self.highlight, *self.step_bars, *self.hop_bars, self.floor_line, self.e_dot, self.ep_dot)
        return view

    def update(self, values):
        model = models.get(values["model"])
        chip = hardware.get(values["chip"])
        bytes_param = hardware.BYTES_PER_VALUE[values["weights"]]
        t_step, t_hop, p, e = values["t_step"] / MS, values["t_hop"] / MS, values["P"], values["E"]

        fetch = dict(n_total=model.params_total, bytes_param=bytes_param, hbm_bandwidth=chip.hbm_bandwidth)
        floor = pm.weight_fetch_time(gpus_reading=self.GPUS, **fetch) * MS
        self.floor_line.set_data(self.GPUS, floor)
        at_e = pm.weight_fetch_time(gpus_reading=e, **fetch)
        at_ep = pm.weight_fetch_time(gpus_reading=e * p, **fetch)
        # P stages take turns: P × (1/P of the weights over E GPUs), and P cancels (E4.5).
        pipelined = pm.PIPELINED_WEIGHT_FETCH(N_total=model.params_total, bytes_param=bytes_param, n_ep=e,
                                              bw_gpu=chip.hbm_bandwidth)
        self.e_dot.set_data([e], [pipelined * MS])
        # A step cannot beat its own weight fetch: with few GPUs per stage the floor, not the slider, sets it.
        asked_step, t_step = t_step, max(t_step, pipelined)
        totals = pm.token_time(step_time=t_step, stages=STAGES.astype(float), hop_time=t_hop)
        hops = np.where(STAGES > 1, totals - t_step, 0.0)     # one stage: no rack-to-rack hop at all
        for step_bar, hop_bar, h in zip(self.step_bars, self.hop_bars, hops):
            step_bar.set_height(t_step * MS)
            hop_bar.set_y(t_step * MS)
            hop_bar.set_height(h * MS)
        self.highlight.set_x(p - 0.5)

        self.ep_dot.set_data([e * p], [at_ep * MS])

        left_top = base.steady_ceiling(self.axes[0].get_ylim()[1], 1.1 * (t_step + hops[-1]) * MS,
                                          steps=base.FINE_STEPS, headroom=2.0, fill=0.3)
        changed = base.set_limits(self.axes[0], (0.4, STAGES[-1] + 0.6), (0, left_top))
        changed |= base.set_limits(self.axes[1], (1, self.MAX_GPUS),
                                      base.steady_decades(self.axes[1].get_ylim(), floor.min(), floor.max()))
        token = t_step + (hops[p - 1])
        weights_hbm = model.params_total * bytes_param
        stages_needed = math.ceil(weights_hbm / (e * chip.hbm_capacity))
        rows = [
            base.capacity_row(n_total=model.params_total, bytes_param=bytes_param, batch=0, len_ctx=1, bytes_tok=1,
                                 hbm_capacity=e * p * chip.hbm_capacity, where=f"E·P = {e * p:,} × {chip.name}"),
            (f"time per token at P = {p}", units.seconds(token) if p == 1
             else f"{units.seconds(token)}  (+{token / t_step - 1:.0%} over one stage)"),
        ] + base.scale_up_rows("E: GPUs per stage", e, chip) + ([("step time used", f"{units.seconds(t_step)}: the weight-fetch floor of E = {e} GPUs, above the slider's "
                                  f"{units.seconds(asked_step)}", "note")] if t_step > asked_step else []) + [
            ("tokens/s per sequence", f"{units.number(1 / token)} (one stage: {units.number(1 / t_step)})"),
            (f"weight-fetch floor, E = {units.plural(e, 'GPU')}", units.seconds(at_e)),
            (f"… with P = {p} stages taking turns" if p > 1 else "… with P = 1 (one stage, no turns to take)",
             units.seconds(pipelined)),
            (f"if all {e * p:,} GPUs read at once", f"{units.seconds(at_ep)} (not how a pipeline runs)"),
            (f"floor on 8 / 72 / 576 {chip.name} GPUs", " / ".join(units.seconds(pm.weight_fetch_time(gpus_reading=n, **fetch))
                                                     for n in pm.SCALE_UP_SIZES.values())),
            (f"{model.name} weights ({values['weights']})", units.bytes_(weights_hbm)),
            (f"stages needed just to hold them (E = {e})", f"{stages_needed}"),
        ]
        return rows, changed


# --- Static figures ---------------------------------------------------------------------------------
DECODE_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
DECODE_LABEL_PIXELS = 5.5       # px per digit of a micro-batch number (8 pt), plus 4 px: a bar narrower goes unlabelled
DECODE_MAX_LABELS = 400         # numbers written on the bars, at most (a text artist each: ~2 ms to lay out and draw)


def decode_loop_figure(*, stages: int = 4, microbatches: int = 4, tokens: int = 3):
    """The lecture's decode loop on the Gantt chart (01:07:43, P4.1), from the Chapter 3 simulator.

    Each micro-batch passes stages 0 … P−1 and wraps back to stage 0 for its next token. With
    fewer micro-batches than stages, white gaps (idle stages) appear in every loop.

    The work is bounded by what it costs, not only by the simulator's task count: every bar is one polygon of a
    single collection, and a bar carries its micro-batch's number only while the numbers fit on the bars and
    there are at most :data:`DECODE_MAX_LABELS` of them (a bar and a label each were an artist: 1,000
    micro-batches, 12,000 tasks, took over a minute).
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba

    from lecture_lib import pipeline, validate

    from . import plots

    stages = validate.integer("stages", stages, maximum=64)
    timeline = pipeline.simulate(schedule="inference", stages=stages, microbatches=microbatches, tokens=tokens)
    microbatches, tokens = timeline.microbatches, timeline.tokens
    width = 8.6
    figure, (axis,) = plots.new_figure(width, 0.55 * stages + 1.3)
    arrays = timeline.arrays
    starts, ends, rows, batch = arrays["start"], arrays["end"], arrays["stage"], arrays["microbatch"]
    colours = np.array([to_rgba(c) for c in DECODE_PALETTE])[batch % len(DECODE_PALETTE)]
    colours[:, 3] = 0.55 + 0.4 * (np.asarray(arrays["token"]) % 2 == 0)     # every other token darker
    boxes = np.stack([np.column_stack([starts, rows - 0.4]), np.column_stack([starts, rows + 0.4]),
                      np.column_stack([ends, rows + 0.4]), np.column_stack([ends, rows - 0.4])], axis=1)
    axis.add_collection(PolyCollection(boxes, facecolors=colours, edgecolors="white", linewidths=1.0))
    makespan = timeline.makespan
    left, right = 0.1, 0.98          # the axes' share of the figure's width (subplots_adjust below)
    pixels = (ends - starts) / makespan * (right - left) * width * plots.DPI
    digits = len(str(microbatches - 1))
    if len(starts) <= DECODE_MAX_LABELS and float(np.min(pixels)) >= DECODE_LABEL_PIXELS * digits + 4:
        for start, end, row, j in zip(starts, ends, rows, batch):
            axis.text((start + end) / 2, row, f"{j}", ha="center", va="center", fontsize=8)
    steady = 1 - pipeline.decode_idle_fraction(stages=stages, microbatches=microbatches)
    axis.set(yticks=range(stages), yticklabels=[f"stage {s}" for s in range(stages)], xlabel="time (stage steps)",
             xlim=(0, makespan), ylim=(stages - 0.4, -0.6),
             title=f"decode loop: {units.plural(stages, 'stage')}, "
                   f"{units.plural(microbatches, 'micro-batch', 'micro-batches')}, {units.plural(tokens, 'token')} each "
                   f"(steady state: stages busy {steady:.0%})")
    axis.grid(False)
    figure.subplots_adjust(left=left, right=right, bottom=0.5 / (0.55 * stages + 1.3) + 0.12, top=0.86)
    return figure


def hop_path_figure():
    """The path of one pipeline hop (lecture 01:16:09, D4.3): GPU → NIC → top-of-rack switch →
    (data-centre switch) → top-of-rack switch → NIC → GPU. Each box adds latency."""
    from . import plots

    figure, (axis,) = plots.new_figure(8.6, 1.5)
    boxes = ["GPU\nrack k", "NIC", "top-of-rack\nswitch", "data-centre\nswitch", "top-of-rack\nswitch", "NIC",
             "GPU\nrack k+1"]
    for i, label in enumerate(boxes):
        face = "#eef3fb" if "GPU" in label else ("#f7f7f7" if "data" not in label else "#fff5f5")
        axis.text(i, 0, label, ha="center", va="center", fontsize=8.5,
                  bbox=dict(boxstyle="round,pad=0.4", fc=face, ec="#555555", ls="--" if "data" in label else "-"))
        if i:
            axis.annotate("", xy=(i - 0.36, 0), xytext=(i - 0.64, 0), arrowprops=dict(arrowstyle="->", lw=1.4))
    axis.set(xlim=(-0.6, len(boxes) - 0.4), ylim=(-0.8, 0.8))
    axis.axis("off")
    figure.subplots_adjust(left=0.01, right=0.99, bottom=0.05, top=0.8)
    axis.set_title("one pipeline hop: a few ms end to end (the data-centre switch only when the racks are far apart)",
                   fontsize=9)
    return figure
