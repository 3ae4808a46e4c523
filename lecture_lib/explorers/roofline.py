"""Chapter 1's explorers: the lecture's two plots, Fast Mode, and the Goldilocks context.

Every curve comes from the Formulas of :mod:`lecture_lib.roofline` evaluated over NumPy arrays;
nothing here re-types an equation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lecture_lib import hardware, models, roofline, units, validate
from lecture_lib import pipeline_memory as pm
from lecture_lib.roofline import BALANCE_BATCH, GOLDILOCKS_CONTEXT, HARDWARE_RATIO, MFU, T_COMPUTE, T_KV, T_WEIGHTS

from . import base, sliders
from .plots import COLORS

#: fp32 for a chip that multiplies nothing narrower (a CPU measured in the lab, Chapter 11)
WEIGHT_FORMATS = ("fp4", "fp8", "bf16", "fp32")
BYTES = {fmt: hardware.BYTES_PER_VALUE[fmt] for fmt in WEIGHT_FORMATS}
PER_MILLION = 1e6
DEFAULT_CHIPS = 72   # one Blackwell NVL72 rack, the lecture's unit (00:02:40)
MAX_CHIPS = 144
# Chips working together: the powers of two and every chip's scale-up domain up to 144 (8 for an HGX box, 72 for
# an NVL72 rack, 144 for Rubin Ultra; hardware presets). A slider over every whole number (144 one-chip steps) left a
# learner's slow drag to the kernel at each step, every frame superseded before it arrived (the figure froze for up
# to 1.8 s); these 10 stops are predicted whole, and a typed count between them is kept.
CHIP_STOPS = sliders.count_stops(MAX_CHIPS, (hardware.get(name).scale_up_domain for name in hardware.chip_names()))


@dataclass(frozen=True)
class Workload:
    """What the roofline needs of a model: active and total parameters and its KV cache."""

    label: str
    n_active: float
    n_total: float
    model: object | None = None   # a models.Model, for the KV cache; None uses kv_values_per_token
    kv_values_per_token: float = 0.0

    def kv_bytes_per_token(self, bytes_per_value: float, context_len: float) -> float:
        context_len = validate.number("context_len", context_len)   # text such as "3" is refused, not read
        if self.model is None:
            return self.kv_values_per_token * validate.number("bytes_per_value", bytes_per_value, maximum=64)
        return self.model.kv_bytes_per_token(bytes_per_value, context_len=max(1, int(context_len)))

    @property
    def sparsity(self) -> float:
        return self.n_total / self.n_active


def board_example() -> Workload:
    """The lecture's board example: DeepSeek with 37 B active and sparsity 8 ("32 of 256 experts").

    Source: lecture 00:06:11 and 00:19:36. The board's 8 implies 8 x 37 B = 296 B total; the real
    DeepSeek-V3 is 671 B total, sparsity about 18 (see the DeepSeek-V3 preset). KV as DeepSeek-V3's
    MLA cache: (512 + 64) values per layer x 61 layers.
    """
    deepseek = models.get("deepseek-v3")
    return Workload("Board: 37 B active, sparsity 8", 37e9, 8 * 37e9, model=deepseek)


def workloads() -> dict[str, Workload]:
    """The board example plus every model preset, by label."""
    items = [board_example()]
    for name in models.names():
        model = models.get(name)
        items.append(Workload(f"{model.name} ({units.count(model.params_active)} / "
                              f"{units.count(model.params_total)})", model.params_active, model.params_total,
                              model=model))
    return {item.label: item for item in items}


PRECISION_ORDER = ("fp4", "fp8", "bf16", "fp32")


def compute_format(chip, weight_format: str) -> str:
    """Multiply in the weights' format when the chip has units for it; otherwise in the narrowest
    format it has that still holds the weights exactly (fp8 weights on an A100 multiply in bf16),
    or failing that its widest format (bf16 weights on Rubin, whose presets list fp8 and fp4 only)."""
    chip = hardware.resolve_chip(chip)
    validate.choice("weight_format", weight_format, list(BYTES))
    if weight_format in chip.flops:
        return weight_format
    available = [fmt for fmt in PRECISION_ORDER if fmt in chip.flops]
    wider = [fmt for fmt in available if BYTES[fmt] >= BYTES[weight_format]]
    return wider[0] if wider else available[-1]


def _hardware_controls(chip: str = "GB200", n_chips: int = 72, weights: str = "fp4", kv: str = "fp8") -> dict:
    return {
        "chip": sliders.dropdown("chip", hardware.chip_names(), chip),
        "n_chips": sliders.log_slider("chips working together", n_chips, 1, MAX_CHIPS, whole=True, stops=CHIP_STOPS),
        "weights": sliders.dropdown("weight format", list(WEIGHT_FORMATS), weights),
        "kv": sliders.dropdown("KV-cache format", ["fp8", "bf16"], kv),
    }



NO_FIT_COLOR = "#c62828"   # base.STATUS_COLORS["bad"]: the red of the "does not fit" readout row


class NoFitShade:
    """A hatched, labelled band over the part of an x-axis where the deployment does not fit in HBM
    (weights + the KV cache of the batch, :data:`lecture_lib.pipeline_memory.MEMORY_TOTAL`), so the
    curves drawn there are visibly not a configuration anyone can run (issue 19 §4)."""

    LABEL = "does not fit in HBM"

    def __init__(self, axis, view):
        self.axis = axis
        self.span = axis.axvspan(1, 1, facecolor=NO_FIT_COLOR, alpha=0.12, hatch="///", edgecolor=NO_FIT_COLOR,
                                 lw=0, label="_" + self.LABEL)
        self.text = axis.text(1, 0.5, " " + self.LABEL, transform=axis.get_xaxis_transform(), color=NO_FIT_COLOR,
                              fontsize=10, rotation=90, va="center", ha="left", zorder=4,
                              bbox=dict(facecolor="white", alpha=0.85, edgecolor="none", pad=1.0))
        view.animate(self.span, self.text)

    def update(self, start: float, end: float) -> None:
        """Shade x from ``start`` to ``end`` (nothing when start >= end)."""
        visible = bool(start < end)
        self.span.set_visible(visible)
        self.text.set_visible(visible)
        if visible:
            self.span.set_x(start)
            self.span.set_width(end - start)
            self.text.set_x(start)


def _fits_in_hbm(*, n_total, bytes_param, batch, len_ctx, bytes_tok, hbm_capacity):
    """True where weights + the batch's KV cache fit in ``hbm_capacity`` (arrays broadcast)."""
    from lecture_lib.pipeline_memory import MEMORY_TOTAL

    return MEMORY_TOTAL(N_total=n_total, bytes_param=bytes_param, B=batch, len_ctx=len_ctx, bytes_tok=bytes_tok,
                        allow_zero="B") <= hbm_capacity


def _first_misfit(x, fits) -> float:
    """The first x (of an increasing grid) from which nothing fits; +inf when all of it fits."""
    fits = np.broadcast_to(fits, np.shape(x))
    if fits.all():
        return math.inf
    bad = np.flatnonzero(~fits)
    return float(x[bad[0]])


class _RooflineExplorer(base.Explorer):
    """Shared set-up: resolve the controls into the numbers every Chapter 1 formula needs."""

    def deployment_rows(self, r: dict, values: dict, *, batch: float, bytes_tok: float) -> list[tuple]:
        """Does the deployment fit (weights + the batch's KV against the chips' HBM), and a note
        when the chip has no units for the weight format (it then multiplies in another one)."""
        n = values.get("n_chips", DEFAULT_CHIPS)
        rows = [base.capacity_row(n_total=r["workload"].n_total, bytes_param=r["bytes_param"], batch=batch,
                                     len_ctx=values["len_ctx"], bytes_tok=bytes_tok,
                                     hbm_capacity=r["hbm_capacity"], where=f"{n} × {r['chip'].name}")]
        rows += base.scale_up_rows("chips working together", n, r["chip"])
        if r["compute_format"] != values["weights"]:
            rows.append(("number format", f"{r['chip'].name} has no {values['weights']} units: weights stored in "
                                          f"{values['weights']}, multiplied in {r['compute_format']}", "note"))
        return rows

    def resolve(self, values: dict) -> dict:
        chip = hardware.get(values["chip"])
        workload = self._workloads[values["model"]]
        fmt = compute_format(chip, values["weights"])
        n = values.get("n_chips", DEFAULT_CHIPS)
        return {
            "chip": chip, "workload": workload, "compute_format": fmt,
            "flops": chip.flops[fmt] * n, "mem_bw": chip.hbm_bandwidth * n,
            "hbm_capacity": chip.hbm_capacity * n,
            "bytes_param": BYTES[values["weights"]], "kv_bytes": BYTES[values["kv"]],
        }

    def model_control(self, value: str | None = None):
        self._workloads = workloads()
        labels = list(self._workloads)
        return sliders.dropdown("model", labels, value if value in labels else labels[0])


class BatchExplorer(_RooflineExplorer):
    """Latency and cost per token against batch size: the lecture's plots P1.1 and P1.2."""

    title = "Latency and cost per token vs batch size (lecture 00:09:27 and 00:14:31)"

    def controls_(self):
        controls = {"model": self.model_control()}
        controls.update(_hardware_controls())
        controls["len_ctx"] = sliders.log_slider("context length (tokens)", 1024, 128, 1_048_576)
        controls["batch"] = sliders.log_slider("batch B (sequences)", 1024, 1, 100_000)
        controls["price"] = sliders.slider("$ per GPU-hour", 2.0, 0.5, 12.0, 0.25, readout_format=".2f")
        return controls

    def setup(self):
        view, (latency, cost) = base.new_view(10.5, 3.8, ncols=2)
        latency.set(xlabel="batch B (sequences)", ylabel="time per step (ms)", title="latency per step")
        cost.set(xlabel="batch B (sequences)", ylabel="$ per million tokens", title="cost per token")
        lines = {}
        for axis, suffix in ((latency, ""), (cost, "_cost")):
            lines["compute" + suffix], = axis.plot([], [], color=COLORS["compute"], label="compute")
            lines["weights" + suffix], = axis.plot([], [], color=COLORS["weights"], label="weight fetch")
            lines["kv" + suffix], = axis.plot([], [], color=COLORS["kv"], label="KV fetch")
            lines["memory" + suffix], = axis.plot([], [], color=COLORS["memory"], ls="--", label="memory = weights + KV")
            lines["total" + suffix], = axis.plot([], [], color=COLORS["total"], lw=3.2, alpha=0.8, label="max (the bound)")
            # B* lines get dash patterns of their own (sparse dots, long dashes), so that the legend's
            # look-alike pass (plots.distinguish_lines) leaves them as drawn in both panels and the text
            # can name them: they would otherwise share a pattern with the KV or memory curve.
            lines["balance_weights" + suffix] = axis.axvline(1, color=COLORS["balance"], ls=(0, (1, 2)), lw=2.0,
                                                             label="B* (weights only)")
            lines["balance" + suffix] = axis.axvline(1, color=COLORS["balance"], ls=(0, (8, 3)), lw=1.5,
                                                     label="B* with KV")
            lines["marker" + suffix] = axis.axvline(1, color=COLORS["marker"], lw=1.0, label="your B")
        # An MoE step reads only the experts its tokens touch (Chapter 8 measures it) (roofline.PARAMS_READ)
        # On a linear axis to 10k its drop (below ~100 sequences) is a few pixels wide, so a triangle marks
        # its value at B = 1; it is hidden, legend entry too, where there are no experts (dense, the board's).
        lines["weights_read"], = latency.plot([], [], color=COLORS["weights"], ls=(0, (1, 1.5)), lw=2.2, clip_on=False,
                                              marker="v", markevery=[0], ms=8,
                                              label="weight fetch, only the experts touched (▼: at B = 1)")
        latency.legend(loc="upper left", framealpha=0.9, frameon=True)
        self.no_fit = [NoFitShade(axis, view) for axis in (latency, cost)]
        self.lines = lines
        self.axes = (latency, cost)
        view.animate(*lines.values())
        return view

    def update(self, values):
        r = self.resolve(values)
        workload, n_chips = r["workload"], values["n_chips"]
        len_ctx, batch, price = values["len_ctx"], values["batch"], values["price"]
        bytes_tok = workload.kv_bytes_per_token(r["kv_bytes"], len_ctx)
        b_star = BALANCE_BATCH(FLOPs=r["flops"], N_total=workload.n_total, N_active=workload.n_active,
                               bytes_param=r["bytes_param"], mem_bw=r["mem_bw"])
        with_kv = roofline.balance_batch_with_kv(n_active=workload.n_active, n_total=workload.n_total,
                                                 flops=r["flops"], mem_bw=r["mem_bw"], bytes_param=r["bytes_param"],
                                                 len_ctx=len_ctx, bytes_tok=bytes_tok)
        # The x-axis follows the learner: it holds 3 B*, your batch and B* with KV (unless that is
        # beyond 30 B*, where the readout says so and the line is hidden).
        shown_kv = math.isfinite(with_kv) and with_kv <= 30 * b_star
        x_max = base.nice_ceiling(max(3 * b_star, 1.15 * batch, 1.15 * with_kv if shown_kv else 0))
        b = np.linspace(1, x_max, 300)
        compute = T_COMPUTE(B=b, N_active=workload.n_active, FLOPs=r["flops"])
        weights = np.full_like(b, T_WEIGHTS(N_total=workload.n_total, bytes_param=r["bytes_param"], mem_bw=r["mem_bw"]))
        kv = T_KV(B=b, len_ctx=len_ctx, bytes_tok=bytes_tok, mem_bw=r["mem_bw"])
        memory = weights + kv
        total = np.maximum(compute, memory)
        ms = 1e3
        times = {"compute": compute, "weights": weights, "kv": kv, "memory": memory, "total": total}
        for name, seconds in times.items():
            self.lines[name].set_data(b, seconds * ms)
            per_million = PER_MILLION * roofline.cost_per_token(step_time=seconds, batch=b, n_chips=n_chips,
                                                                price_chip_hour=price)
            self.lines[name + "_cost"].set_data(b, per_million)
        model = workload.model
        moe = model is not None and model.is_moe and workload.n_total == model.params_total
        read = (T_WEIGHTS(N_total=roofline.params_read(model, tokens=b), bytes_param=r["bytes_param"],
                          mem_bw=r["mem_bw"]) if moe else np.full_like(b, np.nan))
        self.lines["weights_read"].set_data(b, read * ms)
        changed_legend = self.lines["weights_read"].get_visible() != moe
        self.lines["weights_read"].set_visible(moe)
        legend = self.axes[0].get_legend() if hasattr(self, "axes") else None
        if legend is not None:
            for handle, text in zip(legend.legend_handles, legend.get_texts()):
                if text.get_text().startswith("weight fetch, only the experts touched"):
                    handle.set_visible(moe)
                    text.set_visible(moe)
        for suffix in ("", "_cost"):
            self.lines["balance" + suffix].set_visible(shown_kv)
            self.lines["balance" + suffix].set_xdata([with_kv if shown_kv else 1.0] * 2)
            self.lines["balance_weights" + suffix].set_xdata([b_star] * 2)
            self.lines["marker" + suffix].set_xdata([batch] * 2)
        step = roofline.decode_step(batch=batch, n_active=workload.n_active, n_total=workload.n_total,
                                    flops=r["flops"], mem_bw=r["mem_bw"], bytes_param=r["bytes_param"],
                                    len_ctx=len_ctx, bytes_tok=bytes_tok)
        cost_at_b = PER_MILLION * roofline.cost_per_token(step_time=step["t"], batch=batch, n_chips=n_chips,
                                                          price_chip_hour=price)
        per_token_floor = max(T_COMPUTE(B=1, N_active=workload.n_active, FLOPs=r["flops"]),
                              T_KV(B=1, len_ctx=len_ctx, bytes_tok=bytes_tok, mem_bw=r["mem_bw"]))
        cost_floor = PER_MILLION * roofline.cost_per_token(step_time=per_token_floor, batch=1, n_chips=n_chips,
                                                           price_chip_hour=price)
        y_latency = base.nice_ceiling(1.1 * total[-1] * ms)   # the bold bound (and every term under it) stays on
        y_cost = base.nice_ceiling(6 * cost_floor)
        changed = base.set_limits(self.axes[0], (0, x_max), (0, y_latency)) | changed_legend
        changed |= base.set_limits(self.axes[1], (0, x_max), (0, y_cost))
        # The largest batch that fits: Chapter 4's E4.4 solved for the batch, on one stage of n chips.
        start = pm.max_micro_batch(hbm_capacity=r["hbm_capacity"], n_total=workload.n_total,
                                   bytes_param=r["bytes_param"], len_ctx=len_ctx, bytes_tok=bytes_tok,
                                   expert_parallel=1, stages=1)
        for shade in self.no_fit:
            shade.update(start, x_max)
        ratio = HARDWARE_RATIO(FLOPs=r["flops"], bytes_param=r["bytes_param"], mem_bw=r["mem_bw"])
        bound = "compute-bound" if step["t_compute"] >= step["t_mem"] else "memory-bound"
        rows = self.deployment_rows(r, values, batch=batch, bytes_tok=bytes_tok) + [
            (f"hardware ratio for {values['weights']} weights (the board's ≈300 is a GPU's)",
             f"{units.number(ratio)}  ({r['compute_format']} multiplies)"),
            ("sparsity N_total/N_active", units.number(workload.sparsity)),
            ("balance batch B* (weights only)", units.number(b_star)),
            ("B* including KV at this context", "none: KV alone outruns compute" if math.isinf(with_kv)
             else units.number(with_kv)),
            ("KV bytes per token", units.bytes_(bytes_tok)),
            ("latency floor (weight fetch)", units.seconds(weights[0])),
            ("weight fetch at B = 1, only the k experts touched", units.seconds(read[0]) if moe else "n/a (dense model or board example)"),
            (f"step time at B = {batch:,.0f}", f"{units.seconds(step['t'])}  ({bound})"),
            ("MFU at your B", units.percent(step['t_compute'] / step['t'])),
            ("tokens/s at your B", units.rate(batch / step["t"])),
            ("$ / M tokens at your B", units.dollars(cost_at_b)),
            ("$ / M tokens floor (B → ∞)", units.dollars(cost_floor)),
        ]
        return rows, changed


class FastModeExplorer(_RooflineExplorer):
    """Speed per sequence against price per token as the batch changes (lecture 00:01:35, 00:16:16).

    Every point of the curve is one batch size on the same hardware: small batches are fast and
    dear, large ones slow and cheap, and the curve flattens onto the cost floor, which is why a
    "Slow Mode" saves little.
    """

    title = "Fast Mode and Slow Mode: speed vs price as the batch changes"

    def controls_(self):
        controls = {"model": self.model_control()}
        controls.update(_hardware_controls())
        controls["len_ctx"] = sliders.log_slider("context length (tokens)", 8192, 128, 1_048_576)
        # The text's 15× batch ratio (6× price for 2.5× speed): at 8,192 tokens on the board's model a fast
        # batch of 64 has KV reads ≈ 0.12 of the weight fetch, as the text derives, so the readouts start
        # at ≈2.5× speed and ≈6× price.
        controls["batch_normal"] = sliders.log_slider("normal batch", 960, 2, 100_000)
        controls["batch_fast"] = sliders.log_slider("fast batch", 64, 1, 100_000)
        controls["price"] = sliders.slider("$ per GPU-hour", 2.0, 0.5, 12.0, 0.25, readout_format=".2f")
        # Fast Mode is the smaller batch: the fast slider ends one step below the normal batch. A fast
        # batch pushed down by a smaller normal batch returns to the learner's choice when there is room.
        normal, fast = controls["batch_normal"], controls["batch_fast"]
        self._fast_choice, self._linking = fast.value, False

        def remember(change):
            if not self._linking:
                self._fast_choice = change["new"]

        def keep_fast_below(change=None):
            self._linking = True
            try:
                fast.max, value = self.fast_batch_after(normal.value, fast)
                fast.value = value
            finally:
                self._linking = False

        fast.observe(remember, names="value")
        normal.observe(keep_fast_below, names="value")
        keep_fast_below()
        return controls

    def fast_batch_after(self, normal_batch: float, fast=None) -> tuple[float, float]:
        """The link: (the fast slider's top exponent, the fast batch) once the normal batch is ``normal_batch``.
        The fast slider ends one stop below the normal batch; the fast batch is the learner's choice, or the
        largest stop below it that the slider still has."""
        fast = fast or self.controls["batch_fast"]
        top = max(fast.min, math.log10(normal_batch) - fast.step)
        room = [stop for stop in fast._visible(top) if stop <= self._fast_choice]
        return top, room[-1] if room else fast._visible(top)[0]

    def moves_others(self, name: str, value) -> bool:
        """Moving the normal batch to ``value`` moves the fast batch too where the link pushes it down or
        gives it back: those positions are left to the kernel (lecture_lib.explorers.ahead)."""
        return name == "batch_normal" and self.fast_batch_after(value)[1] != self.controls["batch_fast"].value

    def setup(self):
        view, (axis,) = base.new_view(6.4, 4.0)
        axis.set(xscale="log", yscale="log", xlabel="speed per sequence (tokens/s)",
                 ylabel="$ per million tokens", title="each point is one batch size")
        self.curve, = axis.plot([], [], color=COLORS["total"], lw=2.2, label="B from 1 to 100,000")
        self.floor = axis.axhline(1, color=COLORS["compute"], ls=":", lw=1.2, label="cost floor (B → ∞)")
        self.normal, = axis.plot([], [], "o", color=COLORS["compute"], ms=9, label="normal batch")
        self.fast, = axis.plot([], [], "o", color=COLORS["weights"], ms=9, label="fast batch")
        self.no_fit, = axis.plot([], [], color=NO_FIT_COLOR, lw=7, alpha=0.3, solid_capstyle="butt",
                                 label="batches that do not fit in HBM")
        axis.legend(loc="upper right")
        self.axis = axis
        view.animate(self.no_fit, self.curve, self.floor, self.normal, self.fast)
        return view

    def _speed_and_price(self, r, values, batch):
        workload = r["workload"]
        bytes_tok = workload.kv_bytes_per_token(r["kv_bytes"], values["len_ctx"])
        step = roofline.decode_step(batch=batch, n_active=workload.n_active, n_total=workload.n_total,
                                    flops=r["flops"], mem_bw=r["mem_bw"], bytes_param=r["bytes_param"],
                                    len_ctx=values["len_ctx"], bytes_tok=bytes_tok)
        price = PER_MILLION * roofline.cost_per_token(step_time=step["t"], batch=batch, n_chips=values["n_chips"],
                                                      price_chip_hour=values["price"])
        return 1.0 / step["t"], price, step

    def update(self, values):
        r = self.resolve(values)
        batches = np.logspace(0, 5, 300)
        speed, price, steps = self._speed_and_price(r, values, batches)
        self.curve.set_data(speed, price)
        workload = r["workload"]
        misfit = ~_fits_in_hbm(n_total=workload.n_total, bytes_param=r["bytes_param"], batch=batches,
                              len_ctx=values["len_ctx"], bytes_tok=workload.kv_bytes_per_token(r["kv_bytes"], values["len_ctx"]),
                              hbm_capacity=r["hbm_capacity"])
        self.no_fit.set_data(speed[misfit], price[misfit])
        s_normal, p_normal, _ = self._speed_and_price(r, values, values["batch_normal"])
        s_fast, p_fast, _ = self._speed_and_price(r, values, values["batch_fast"])
        self.normal.set_data([s_normal], [p_normal])
        self.fast.set_data([s_fast], [p_fast])
        floor = float(np.min(price))
        self.floor.set_ydata([floor] * 2)
        x_lim = base.steady_decades(self.axis.get_xlim(), speed.min(), speed.max())
        y_lim = base.steady_decades(self.axis.get_ylim(), price.min(), price.max())
        changed = base.set_limits(self.axis, x_lim, y_lim)
        s_slow, p_slow, _ = self._speed_and_price(r, values, values["batch_normal"] * 4)
        bytes_tok = r["workload"].kv_bytes_per_token(r["kv_bytes"], values["len_ctx"])
        slow_fits = bool(_fits_in_hbm(n_total=workload.n_total, bytes_param=r["bytes_param"],
                                      batch=values["batch_normal"] * 4, len_ctx=values["len_ctx"],
                                      bytes_tok=bytes_tok, hbm_capacity=r["hbm_capacity"]))
        slow = f"{p_slow / p_normal:.0%} of the price, {s_slow / s_normal:.0%} of the speed"
        rows = self.deployment_rows(r, values, batch=values["batch_normal"], bytes_tok=bytes_tok) + [
            ("normal: speed, price", f"{units.rate(s_normal)}, {units.dollars(p_normal)}/M"),
            ("fast: speed, price", f"{units.rate(s_fast)}, {units.dollars(p_fast)}/M"),
            ("fast / normal speed", f"{units.power_of_ten(s_fast / s_normal)}×"),
            ("fast / normal price", f"{units.power_of_ten(p_fast / p_normal)}×"),
            ("batch ratio normal / fast", f"{units.power_of_ten(values['batch_normal'] / values['batch_fast'])}"),
            ("ratio 6× price, 2.5× speed needs",
             f"{roofline.FAST_MODE_BATCH_RATIO(price_ratio=6, speed_ratio=2.5):.0f}"),
            ("'Slow Mode' (4× the normal batch)", slow) if slow_fits else
            ("'Slow Mode' (4× the normal batch)", f"{slow}, but {units.counted(values['batch_normal'] * 4, 'sequence')} "
                                                  "do not fit in HBM", "bad"),
            ("fastest possible (B = 1)", units.rate(speed.max())),
        ]
        fast = self.controls.get("batch_fast")
        if fast is not None and len(fast._visible(self.fast_batch_after(values["batch_normal"], fast)[0])) < 2:
            # the fast slider is disabled here (sliders.LogSlider._place): say why, where the learner reads
            rows.append(("fast batch", f"{units.whole(values['batch_fast'])}, the only batch below the normal one: "
                                       "raise the normal batch to move it", "note"))
        return rows, changed


class ContextExplorer(_RooflineExplorer):
    """MFU against context length: the Goldilocks context and the fall past it (lecture 00:13:06)."""

    title = "The Goldilocks context: where KV traffic starts to cost compute utilisation"

    CONTEXTS = np.logspace(np.log10(128), np.log10(4_194_304), 240)

    def controls_(self):
        controls = {"model": self.model_control()}
        controls.update(_hardware_controls())
        # Every term of the step time scales as 1/chips, so MFU does not depend on the chip count:
        # a slider for it would move nothing. The explorer uses one NVL72 rack.
        del controls["n_chips"]
        controls["batch"] = sliders.log_slider("batch B (sequences)", 8192, 64, 100_000)
        controls["len_ctx"] = sliders.log_slider("your context (tokens)", 32768, 128, 4_194_304)
        return controls

    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.8)
        axis.set(xscale="log", xlabel="context length (tokens)", ylabel="MFU (t_compute / t)",
                 title="compute utilisation at a fixed batch", ylim=(0, 1.05),
                 xlim=(self.CONTEXTS[0], self.CONTEXTS[-1]))
        self.mfu_line, = axis.plot([], [], color=COLORS["total"], lw=2.2, label="MFU at your batch")
        self.goldilocks = axis.axvline(1, color=COLORS["balance"], ls=":", lw=1.5, label="Goldilocks context")
        self.marker = axis.axvline(1, color=COLORS["marker"], lw=1.0, label="your context")
        axis.legend(loc="lower left")
        self._kv_cache = {}
        view.animate(self.mfu_line, self.goldilocks, self.marker)
        self.no_fit = NoFitShade(axis, view)
        return view

    def _kv_curve(self, workload, kv_bytes):
        key = (workload.label, kv_bytes)
        if key not in self._kv_cache:   # depends only on the preset, so computed once per preset
            self._kv_cache[key] = np.array([workload.kv_bytes_per_token(kv_bytes, c) for c in self.CONTEXTS])
        return self._kv_cache[key]

    def update(self, values):
        r = self.resolve(values)
        workload = r["workload"]
        bytes_tok = self._kv_curve(workload, r["kv_bytes"])
        common = dict(B=values["batch"], N_active=workload.n_active, N_total=workload.n_total, FLOPs=r["flops"],
                      mem_bw=r["mem_bw"], bytes_param=r["bytes_param"])
        mfu = MFU(len_ctx=self.CONTEXTS, bytes_tok=bytes_tok, **common)
        self.mfu_line.set_data(self.CONTEXTS, mfu)
        fits = _fits_in_hbm(n_total=workload.n_total, bytes_param=r["bytes_param"], batch=values["batch"],
                           len_ctx=self.CONTEXTS, bytes_tok=bytes_tok, hbm_capacity=r["hbm_capacity"])
        self.no_fit.update(self.CONTEXTS[0] if not fits[0] else _first_misfit(self.CONTEXTS, fits), self.CONTEXTS[-1])
        here_bytes = workload.kv_bytes_per_token(r["kv_bytes"], values["len_ctx"])
        golden = GOLDILOCKS_CONTEXT(N_active=workload.n_active, FLOPs=r["flops"], mem_bw=r["mem_bw"],
                                    bytes_tok=here_bytes)
        self.goldilocks.set_xdata([golden] * 2)
        self.marker.set_xdata([values["len_ctx"]] * 2)
        mfu_here = MFU(len_ctx=values["len_ctx"], bytes_tok=here_bytes, **common)
        rows = self.deployment_rows(r, values, batch=values["batch"], bytes_tok=here_bytes) + [
            ("KV bytes per token", units.bytes_(here_bytes)),
            ("Goldilocks context", units.tokens(golden)),
            ("MFU at your context", units.percent(mfu_here)),
            ("your context / Goldilocks", units.factor(values['len_ctx'] / golden)),
        ]
        return rows, False


def balance_table(weight_formats=("bf16", "fp8", "fp4")) -> list[dict]:
    """The hardware ratio (B* at sparsity 1) of every preset chip in every format it multiplies in."""
    for fmt in validate.names("weight_formats", weight_formats):
        validate.choice("weight_formats", fmt, list(BYTES))
    table = []
    for name in hardware.chip_names():
        chip = hardware.get(name)
        row = {"chip": chip.name}
        for fmt in weight_formats:
            row[fmt] = (roofline.balance_batch(chip, weight_bytes=BYTES[fmt], compute_dtype=fmt)
                        if fmt in chip.flops else None)
        table.append(row)
    return table
