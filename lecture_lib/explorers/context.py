"""Chapter 6's explorers: cost against context, prefill against decode, storage tiers, price sheets.

Every curve is a Formula of :mod:`lecture_lib.context` (or Chapter 1's roofline) evaluated over a
NumPy array; the per-context KV bytes of a model are computed once per preset and cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lecture_lib import context, hardware, models, pricing, roofline, units, validate

from . import base, sliders
from .plots import COLORS
from .roofline import NoFitShade, _first_misfit, _fits_in_hbm, compute_format

TIER_COLORS = {"rematerialise": COLORS["compute"], "HBM": COLORS["weights"], "host DRAM": COLORS["memory"],
               "flash": COLORS["kv"], "disk": COLORS["balance"]}
KV_FORMATS = {"fp8": 1.0, "bf16": 2.0}
PRECISIONS = ("fp8", "fp4", "bf16")
BYTES = {"fp4": 0.5, "fp8": 1.0, "bf16": 2.0, "fp32": 4.0}
N_CHIPS = 72   # one NVL72-sized unit; costs per token do not depend on it (every term scales as 1/n)


def _money(value: float) -> str:
    """Dollars with 2 significant digits, never in e-notation: "$0.00004", "$1.2 × 10⁻⁷"."""
    return units.dollars(value, digits=2) if value == 0 or abs(value) >= 1e-6 else "$" + units.power_of_ten(value, digits=2)


@dataclass(frozen=True)
class LongContextWorkload:
    """A model as Chapter 6 needs it: active and total parameters and KV bytes *read* per token."""

    label: str
    n_active: float
    n_total: float
    model: models.Model | None = None
    fixed_kv_bytes_fp8: float = 0.0      # for the lecture's hypothetical model, which has no shapes

    def kv_read(self, kv_bytes: float, contexts) -> np.ndarray:
        """KV bytes read per token of context at each context length (sliding windows, top-k, indexer keys)."""
        kv_bytes = validate.number("kv_bytes", kv_bytes, maximum=64)   # bytes per value; a float, never float16
        contexts = np.atleast_1d(validate.number("contexts", contexts))
        if self.model is None:
            return np.full_like(contexts, self.fixed_kv_bytes_fp8 * kv_bytes)
        return np.array([context.kv_bytes_read(self.model, kv_bytes, context_len=max(1, int(c)))
                         for c in contexts])

    def kv_stored(self, kv_bytes: float, len_ctx: float) -> float:
        """KV bytes *held* per token of context (what HBM must store), at one context length."""
        kv_bytes = validate.number("kv_bytes", kv_bytes, maximum=64)
        len_ctx = validate.number("len_ctx", len_ctx)
        if self.model is None:
            return self.fixed_kv_bytes_fp8 * kv_bytes
        return self.model.kv_bytes_per_token(kv_bytes, context_len=max(1, int(len_ctx)))


def lecture_workload() -> LongContextWorkload:
    """The board's model: 100 B active (01:37:28), sparsity 8 as in Chapter 1, 1,667 B of KV per token."""
    inferred = context.infer_kv_bytes(crossover_context=context.LECTURE_CROSSOVER)
    return LongContextWorkload("Lecture: 100 B active, 1.67 kB/token", context.LECTURE_N_ACTIVE,
                               8 * context.LECTURE_N_ACTIVE, fixed_kv_bytes_fp8=inferred)


def workloads() -> dict[str, LongContextWorkload]:
    """The lecture's hypothetical model, every attention variant of E6.3, then the other presets."""
    items = [lecture_workload()]
    seen = set()
    for label, model in context.variants().items():
        items.append(LongContextWorkload(label, model.params_active, model.params_total, model=model))
        seen.add(model.name)
    for name in models.names():
        model = models.get(name)
        if name not in seen:
            items.append(LongContextWorkload(name, model.params_active, model.params_total, model=model))
    return {item.label: item for item in items}


def _ceiling(x: float) -> float:
    exponent = math.floor(math.log10(x))
    for step in (1, 2, 5, 10):
        if step * 10 ** exponent >= x:
            return step * 10 ** exponent
    return 10 ** (exponent + 1)


def _tiered_sheets() -> list[str]:
    return [name for name in pricing.names() if pricing.get(name).long_context_threshold]


class _Shared(base.Explorer):
    def model_control(self, value=None):
        self._workloads = workloads()
        labels = list(self._workloads)
        return sliders.dropdown("model", labels, value if value in labels else labels[0])

    def deployment_rows(self, values, workload, chip, fmt) -> list[tuple]:
        """Does the batch fit in the HBM of the N_CHIPS chips the costs assume (weights + KV held
        at your context), and a note when the chip multiplies in another format than chosen."""
        kv_bytes = KV_FORMATS[values["kv"]]
        rows = [base.capacity_row(n_total=workload.n_total, bytes_param=BYTES[values["precision"]],
                                     batch=values["batch"], len_ctx=values["len_ctx"],
                                     bytes_tok=workload.kv_stored(kv_bytes, values["len_ctx"]),
                                     hbm_capacity=N_CHIPS * chip.hbm_capacity, where=f"{N_CHIPS} × {chip.name}")]
        if fmt != values["precision"]:
            rows.append(("number format", f"{chip.name} has no {values['precision']} units: weights stored in "
                                          f"{values['precision']}, multiplied in {fmt}", "note"))
        return rows

    def chip_numbers(self, values):
        chip = hardware.get(values["chip"])
        fmt = compute_format(chip, values.get("precision", "fp8"))
        return chip, fmt, chip.flops[fmt] * N_CHIPS, chip.hbm_bandwidth * N_CHIPS


# ------------------------------------------------------------------------------------- P6.1
class ContextCostExplorer(_Shared):
    """Cost per token against context length, with a provider's two-tier price overlaid (P6.1)."""

    title = "Cost per token vs context length, and the two-tier price (lecture 01:34:24)"
    CONTEXTS = np.linspace(1_000, 1_000_000, 200)

    def controls_(self):
        return {
            "model": self.model_control(),
            "chip": sliders.dropdown("chip", hardware.chip_names(), "GB200"),
            "precision": sliders.dropdown("weights and multiplies", list(PRECISIONS), "fp8"),
            "kv": sliders.dropdown("KV-cache format", list(KV_FORMATS), "fp8"),
            "batch": sliders.log_slider("batch B (sequences)", 4096, 16, 1_000_000),
            "sheet": sliders.dropdown("price sheet overlaid", _tiered_sheets(), "gemini-3.1-pro"),
            "len_ctx": sliders.log_slider("your context (tokens)", 100_000, 1_000, 1_000_000),
        }

    def setup(self):
        view, (axis,) = base.new_view(6.6, 3.9)
        axis.set(xlabel="context length (thousand tokens)", ylabel=r"\$ per million tokens (at \$2/GPU-h)",
                 title="compute is flat; memory is an offset plus a slope")
        self.compute, = axis.plot([], [], color=COLORS["compute"], label="compute")
        self.memory, = axis.plot([], [], color=COLORS["memory"], label="memory = weights + KV")
        self.total, = axis.plot([], [], color=COLORS["total"], lw=3.0, alpha=0.8, label="max: the cost")
        self.price_in, = axis.plot([], [], color=COLORS["weights"], ls="--", drawstyle="steps-post",
                                   label="input price (scaled to the floor)")
        self.price_out, = axis.plot([], [], color=COLORS["balance"], ls=":", drawstyle="steps-post",
                                    label="output price (scaled)")
        self.kink = axis.axvline(1, color=COLORS["balance"], ls="--", lw=1.2, label="kink at this batch")
        self.marker = axis.axvline(1, color=COLORS["marker"], lw=1.0, label="your context")
        axis.set_xlim(0, 1000)
        axis.legend(loc="upper left", fontsize=7, ncol=2)
        self.axis = axis
        self._kv_cache = {}
        self.no_fit = NoFitShade(axis, view)
        view.animate(self.compute, self.memory, self.total, self.price_in, self.price_out, self.kink, self.marker)
        return view

    def _stored(self, workload, kv_bytes):
        """KV bytes stored per token at every context of the axis (for the does-it-fit shading)."""
        key = ("stored", workload.label, kv_bytes)
        if key not in self._kv_cache:
            self._kv_cache[key] = np.array([float(workload.kv_stored(kv_bytes, c)) for c in self.CONTEXTS])
        return self._kv_cache[key]

    def _kv(self, workload, kv_bytes):
        key = (workload.label, kv_bytes)
        if key not in self._kv_cache:
            self._kv_cache[key] = workload.kv_read(kv_bytes, self.CONTEXTS)
        return self._kv_cache[key]

    def update(self, values):
        workload = self._workloads[values["model"]]
        chip, fmt, flops, mem_bw = self.chip_numbers(values)
        kv_bytes, batch, bytes_param = KV_FORMATS[values["kv"]], values["batch"], BYTES[values["precision"]]
        bytes_tok = self._kv(workload, kv_bytes)
        per_million = context.PER_MILLION * N_CHIPS * context.LECTURE_GPU_PRICE / context.SECONDS_PER_HOUR / batch
        compute = roofline.T_COMPUTE(B=batch, N_active=workload.n_active, FLOPs=flops) * per_million
        memory = roofline.T_MEM(N_total=workload.n_total, bytes_param=bytes_param, mem_bw=mem_bw, B=batch,
                                len_ctx=self.CONTEXTS, bytes_tok=bytes_tok) * per_million
        total = np.maximum(compute, memory)
        x = self.CONTEXTS / 1e3
        fits = _fits_in_hbm(n_total=workload.n_total, bytes_param=bytes_param, batch=batch, len_ctx=self.CONTEXTS,
                           bytes_tok=self._stored(workload, kv_bytes), hbm_capacity=N_CHIPS * chip.hbm_capacity)
        self.no_fit.update(0.0 if not fits[0] else _first_misfit(x, fits), 1000.0)
        self.compute.set_data(x, np.full_like(x, compute))
        self.memory.set_data(x, memory)
        self.total.set_data(x, total)
        sheet = pricing.get(values["sheet"])
        threshold = sheet.long_context_threshold
        floor = float(total[0])
        steps_x = np.array([0, threshold / 1e3, 1000])
        self.price_in.set_data(steps_x, floor * np.array([1.0, sheet.long_input / sheet.input,
                                                          sheet.long_input / sheet.input]))
        self.price_out.set_data(steps_x, floor * np.array([1.0, sheet.long_output / sheet.output,
                                                           sheet.long_output / sheet.output]))
        here = float(workload.kv_read(kv_bytes, values["len_ctx"])[0])
        kink = context.kink_context(batch=batch, n_active=workload.n_active, n_total=workload.n_total,
                                    flops=flops, mem_bw=mem_bw, bytes_param=bytes_param, bytes_tok=here)
        self.kink.set_xdata([min(kink, 2e6) / 1e3] * 2)
        self.marker.set_xdata([values["len_ctx"] / 1e3] * 2)
        changed = base.set_limits(self.axis, (0, 1000), (0, _ceiling(1.05 * max(total[-1], floor * 2.2))))
        large = context.crossover_context(n_active=workload.n_active, bytes_tok=here, flops=flops, mem_bw=mem_bw)
        step_here = roofline.decode_step(batch=batch, n_active=workload.n_active, n_total=workload.n_total,
                                         flops=flops, mem_bw=mem_bw, bytes_param=bytes_param,
                                         len_ctx=values["len_ctx"], bytes_tok=here)
        implied = context.infer_kv_bytes_on(chip, crossover_context=threshold, n_active=workload.n_active,
                                            compute_dtype=fmt)
        # The chip's own ratio of multiplies to bytes (312 for GB200 in fp8) is not the lecture's round 300: where
        # they differ, each number the lecture also states carries the lecture's value beside it (issue 29 §2).
        per_multiply = hardware.BYTES_PER_VALUE[fmt]
        ratio = roofline.hardware_ratio(chip, fmt, per_multiply)
        lecture_large = large * ratio / context.LECTURE_RATIO
        lecture_implied = context.infer_kv_bytes(crossover_context=threshold, n_active=workload.n_active,
                                                 bytes_per_multiply=per_multiply)
        differs = round(ratio) != context.LECTURE_RATIO
        at_300 = f"; at the lecture's ratio of {context.LECTURE_RATIO}" if differs else ""
        rows = self.deployment_rows(values, workload, chip, fmt) + [
            ("KV bytes read per token at your context", units.bytes_(here)),
            ("kink at this batch", "none: memory-bound at every context" if kink == 0 else units.tokens(kink)),
            ("crossover at a large batch (Goldilocks)",
             units.tokens(large) + (f"  ({chip.name}'s ratio {ratio:.0f}{at_300}: {units.tokens(lecture_large)})"
                                    if differs else "")),
            ("cost at your context / cost at 1K tokens", units.factor(step_here['t'] * per_million / floor)),
            (f"{sheet.model}: price step", f"input ×{sheet.long_input / sheet.input:g}, output "
                                           f"×{sheet.long_output / sheet.output:g} above {threshold:,} tokens"),
            ("KV bytes/token if that step is the crossover",
             f"{units.bytes_(implied)} ({fmt} multiplies{at_300}: {units.bytes_(lecture_implied)})" if differs
             else f"{units.bytes_(implied)} ({fmt} multiplies)"),
            ("$ per M tokens at your context", units.dollars(step_here["t"] * per_million)),
        ]
        return rows, changed


# ------------------------------------------------------------------------------------- P6.2
class PassExplorer(_Shared):
    """Time per token against tokens per pass: prefill is compute-bound, decode memory-bound (P6.2)."""

    title = "Prefill vs decode: time per token against len_pass (lecture 01:45:13)"
    PASSES = np.logspace(0, 5, 200)

    def controls_(self):
        return {
            "model": self.model_control("MLA (DeepSeek-V3)"),
            "chip": sliders.dropdown("chip", hardware.chip_names(), "GB200"),
            "precision": sliders.dropdown("weights and multiplies", list(PRECISIONS), "fp8"),
            "kv": sliders.dropdown("KV-cache format", list(KV_FORMATS), "fp8"),
            # Defaults chosen so decode sits at ≈ 5x prefill's time per token: the lecture's "1 and 5" (01:47:43)
            "batch": sliders.log_slider("batch B (sequences)", 2048, 1, 8192),
            "len_ctx": sliders.log_slider("context already cached", 8192, 1024, 1_048_576),
        }

    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.9)
        axis.set(xscale="log", yscale="log", xlabel="len_pass: new tokens per sequence per pass",
                 ylabel="time per token (µs)", title="compute per token is flat; memory per token falls as 1/len_pass",
                 xlim=(1, 1e5))
        self.compute, = axis.plot([], [], color=COLORS["compute"], label="compute per token")
        self.memory, = axis.plot([], [], color=COLORS["memory"], label="memory per token")
        self.total, = axis.plot([], [], color=COLORS["total"], lw=3.0, alpha=0.8, label="max: time per token")
        self.cross = axis.axvline(1, color=COLORS["balance"], ls="--", lw=1.2, label="crossover")
        self.decode, = axis.plot([], [], "o", color=COLORS["weights"], ms=8, label="decode (len_pass = 1)")
        axis.legend(loc="upper right", fontsize=7.5)
        self.axis = axis
        view.animate(self.compute, self.memory, self.total, self.cross, self.decode)
        return view

    def update(self, values):
        workload = self._workloads[values["model"]]
        chip, fmt, flops, mem_bw = self.chip_numbers(values)
        bytes_tok = float(workload.kv_read(KV_FORMATS[values["kv"]], values["len_ctx"])[0])
        times = context.pass_times(len_pass=self.PASSES, batch=values["batch"], n_active=workload.n_active,
                                   n_total=workload.n_total, flops=flops, mem_bw=mem_bw,
                                   bytes_param=BYTES[values["precision"]], len_ctx=values["len_ctx"],
                                   bytes_tok=bytes_tok)
        us = 1e6
        self.compute.set_data(self.PASSES, times["compute"] * us)
        self.memory.set_data(self.PASSES, times["memory"] * us)
        self.total.set_data(self.PASSES, times["total"] * us)
        self.cross.set_xdata([min(max(times["crossover"], 1), 1e5)] * 2)
        decode_total, decode_compute = times["total"][0], times["compute"][0]
        self.decode.set_data([1], [decode_total * us])
        # Fixed decades (widened only for extreme presets) so slider moves blit instead of re-laying out.
        low = min(1e-3, 10 ** math.floor(math.log10(times["compute"][0] * us / 3)))
        high = max(1e5, 10 ** math.ceil(math.log10(decode_total * us * 1.5)))
        changed = base.set_limits(self.axis, (1, 1e5), (low, high))
        prefill = times["total"][-1]
        rows = self.deployment_rows(values, workload, chip, fmt) + [
            ("KV bytes read per token of context", units.bytes_(bytes_tok)),
            ("decode time per token", units.seconds(decode_total)),
            ("prefill time per token (len_pass = 100,000)", units.seconds(prefill)),
            ("decode / prefill time per token", f"{units.factor(decode_total / prefill)}  (the price ratio it justifies)"),
            ("decode MFU", f"{decode_compute / decode_total:.0%}  (lecture: ≈ 1/5 from 5× output price)"),
            ("crossover len_pass", units.tokens(times['crossover'])),
        ]
        return rows, changed


# ------------------------------------------------------------------------------------- E6.6-E6.7
class TierExplorer(base.Explorer):
    """Cost of keeping one token's KV against how long it is held: the lower envelope picks the tier."""

    title = "Where to keep the KV cache: Cost(T_hold) for each tier (lecture 01:55:39-02:02:49)"
    HOLDS = np.logspace(-3, 8, 300)

    def controls_(self):
        return {
            "bytes_tok": sliders.log_slider("KV bytes per token", 1667, 100, 1_000_000),
            "n_active": sliders.log_slider("active params (recompute)", 100e9, 1e9, 2e12),
            "price": sliders.slider("$ per GPU-hour", 2.0, 0.5, 12.0, 0.25, readout_format=".2f"),
            # 300 s and 3,600 s (Anthropic's 5-minute and 1-hour caches) are stops: Ch6 §8 asks for both
            "hold": sliders.log_slider("your hold time (s)", 300, 1e-3, 1e7, readout_format=".4g",
                                       stops=sliders.nice_stops(300, 1e-3, 1e7) + (3600.0,)),
        }

    def setup(self):
        view, (axis,) = base.new_view(6.6, 4.0)
        axis.set(xscale="log", yscale="log", xlabel="hold time T_hold (s)", ylabel=r"\$ per token of KV",
                 title="Cost(T) = C_retrieve + T · C_hold; bold = cheapest", xlim=(self.HOLDS[0], self.HOLDS[-1]))
        # Tiers differ by dash pattern as well as colour (never colour alone).
        self.lines = {name: axis.plot([], [], color=TIER_COLORS[name], lw=1.6, label=name, ls=style)[0]
                      for name, style in zip(context.TIER_NAMES, ("-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2))))}
        self.envelope, = axis.plot([], [], color=COLORS["total"], lw=3.2, alpha=0.55, label="lower envelope")
        for index, tier in enumerate(context.TIERS):
            axis.axvline(tier.drain_time, color=TIER_COLORS[tier.name], ls=":", lw=1.0,
                         label="drain times Cap/BW (dotted)" if index == 0 else None)
        self.marker = axis.axvline(1, color=COLORS["marker"], lw=1.0, label="your hold time")
        for seconds, text in ((300, "5 min"), (3600, "1 h")):
            axis.text(seconds, 0.02, text, transform=axis.get_xaxis_transform(), fontsize=7.5, ha="center",
                      va="bottom", color=COLORS["marker"], backgroundcolor="white")
        axis.legend(loc="lower right", fontsize=7.5)
        self.axis = axis
        view.animate(*self.lines.values(), self.envelope, self.marker)
        return view

    def update(self, values):
        kw = dict(bytes_tok=values["bytes_tok"], n_active=values["n_active"],
                  flops=hardware.get("GB200").flops["fp8"], price_chip_hour=values["price"])
        costs = context.storage_costs(self.HOLDS, **kw)
        for name, line in self.lines.items():
            line.set_data(self.HOLDS, costs[name])
        envelope = np.minimum.reduce(list(costs.values()))
        self.envelope.set_data(self.HOLDS, envelope)
        self.marker.set_xdata([values["hold"]] * 2)
        changed = base.set_limits(self.axis, (self.HOLDS[0], self.HOLDS[-1]), (1e-16, 1e-4))
        best = context.cheapest_tier(values["hold"], **kw)
        here = context.storage_costs(float(values["hold"]), **kw)
        rows = [("cheapest at your hold time", f"{best}  ({_money(float(here[best]) * 1e6)} per M tokens)"),
                ("drain-time rule picks", context.tier_by_drain_time(values["hold"]))]
        rows.insert(0, ("your hold time", units.duration(values["hold"])))
        rows += [(f"{frm} → {to}", units.duration(when)) for when, frm, to in context.envelope_crossovers(**kw)]
        rows += [("drain times (device / board)", ", ".join(f"{t.name} {units.duration(t.drain_time, 3)} / "
                                                            f"{context.LECTURE_DRAIN_LABELS[t.name]}"
                                                            for t in context.TIERS))]
        return rows, changed


# ------------------------------------------------------------------------------------- price sheet lab
class PriceSheetLab(base.Explorer):
    """Pick a published price sheet: what it implies about KV bytes, decode MFU and storage tiers."""

    title = "Price sheet lab: what a provider's prices say about its serving (lecture 01:33:02-02:04:02)"
    CONTEXTS = np.linspace(0, 1_000_000, 400)

    def controls_(self):
        return {
            "sheet": sliders.dropdown("price sheet", pricing.names(), "gemini-3.1-pro"),
            "n_active": sliders.log_slider("assumed active params", 100e9, 1e9, 2e12),
            "chip": sliders.dropdown("chip", hardware.chip_names(), "GB200"),
            "precision": sliders.dropdown("multiplies in", list(PRECISIONS), "fp8"),
        }

    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.8)
        axis.set(xlabel="prompt length (thousand tokens)", ylabel=r"\$ per million tokens",
                 title="prices (solid) vs a cost with a kink (dashed)", xlim=(0, 1000))
        self.input, = axis.plot([], [], color=COLORS["compute"], drawstyle="steps-post", label="input price")
        self.output, = axis.plot([], [], color=COLORS["weights"], drawstyle="steps-post", label="output price")
        self.cache, = axis.plot([], [], color=COLORS["kv"], drawstyle="steps-post", label="cache hit")
        self.model_cost, = axis.plot([], [], color=COLORS["total"], ls="--", lw=1.4,
                                     label="input cost ∝ max(1, len/len*)")
        axis.legend(loc="upper left", fontsize=7.5)
        self.axis = axis
        view.animate(self.input, self.output, self.cache, self.model_cost)
        return view

    def update(self, values):
        sheet = pricing.get(values["sheet"])
        chip = hardware.get(values["chip"])
        fmt = compute_format(chip, values["precision"])
        lab = context.price_sheet_lab(sheet, n_active=values["n_active"], chip=chip, compute_dtype=fmt)
        threshold = sheet.long_context_threshold
        x = self.CONTEXTS
        long = x > threshold if threshold else np.zeros_like(x, dtype=bool)
        self.input.set_data(x / 1e3, np.where(long, sheet.long_input or sheet.input, sheet.input))
        self.output.set_data(x / 1e3, np.where(long, sheet.long_output or sheet.output, sheet.output))
        cache = sheet.cache_read or 0.0
        self.cache.set_data(x / 1e3, np.where(long, cache * (sheet.long_context_step or (1, 1))[0], cache))
        if threshold:
            self.model_cost.set_data(x / 1e3, sheet.input * context.relative_cost(np.maximum(x, 1),
                                                                                  crossover=threshold))
        else:
            self.model_cost.set_data([], [])
        top = max(sheet.long_output or sheet.output, sheet.output)
        changed = base.set_limits(self.axis, (0, 1000), (0, 5 * math.ceil(1.25 * top / 5)))
        lecture_kv = context.infer_kv_bytes(crossover_context=context.LECTURE_CROSSOVER)
        rows = [("sheet", f"{sheet.provider} {sheet.model}, as of {sheet.as_of}")]
        if threshold:
            step = lab["long_step"]
            rows += [("price step (crossover)", f"{threshold:,} tokens  (lecture: 200,000)"),
                     ("above it", f"input ×{step[0]:g}, output ×{step[1]:g}  (lecture said +50%: that is output)"),
                     ("KV bytes/token implied", f"{units.bytes_(lab['kv_bytes'])} with {fmt} multiplies  "
                                                f"(lecture: {units.bytes_(lecture_kv)})"),
                     ("input step pays for contexts up to", f"{lab['covers']:,.0f} tokens")]
        else:
            rows += [("price step", "none: flat up to the maximum context, so no crossover to read")]
        rows += [("output / input price", f"{units.factor(sheet.output_to_input)}  (lecture: 5×)"),
                 ("decode MFU / prefill MFU", f"{lab['decode_mfu']:.0%}  (lecture: ≈ 20%)")]
        if lab["cache_read_discount"]:
            rows.append(("cache hit vs recompute", f"{lab['cache_read_discount']:.0f}× cheaper  (lecture: ≈ 10×)"))
        for label in ("5m", "1h"):
            if lab[f"hold_cost_{label}"]:
                rows.append((f"{label} cache write premium", f"{units.dollars(lab[f'hold_cost_{label}'] * 1e6 * 3600)}"
                                                             f" per M tokens per hour held"))
        if lab["hold_cost_storage"]:
            rows.append(("explicit cache storage", f"{units.dollars(sheet.cache_storage_per_mtok_hour)} per M tokens "
                                                   "per hour"))
        rows.append(("5 min / 1 h by drain time", f"{lab['tier_5m']} / {lab['tier_1h']}  (board drain times: "
                                                  f"{lab['board_tier_5m']} / {lab['board_tier_1h']})"))
        return rows, changed
