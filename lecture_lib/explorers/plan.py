"""Chapter 10's explorer: the planner (:func:`lecture_lib.plan.plan`) over its inputs, with the decode curve.

Every number in the readout is the plan's; the curves are :func:`roofline.decode_bound` over a grid of
batches, the reality band the plan's own (:func:`measurements.reality_band`, Chapter 8's rows of the plan's
class) times that bound. The figure is created once and its artists updated in place
(:class:`lecture_lib.explorers.base.FigureView`).

Besides the presets, the explorer plans your own model: ``PlanExplorer(model="path/to/config.json")`` (or the
folder that holds it, the parsed dict, or the pasted JSON text), or :meth:`PlanExplorer.add_model` later. The
hardware is a whole system preset or 1, 2, 4 or 8 GPUs of a chip ("4 × H100"), and the weights any format:
the config's own, BF16, FP8, FP4, NVFP4 or MXFP4 with their scales.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lecture_lib import hardware, measurements, models, units
from lecture_lib import plan as planner

from . import base, sliders
from .plots import COLORS

#: Models planned from a config (label -> models.Model), added by PlanExplorer(model=...) or add_model.
CUSTOM_MODELS: dict = {}
#: GPU counts offered for each chip, besides the whole systems.
CHIP_COUNTS = (1, 2, 4, 8)
#: The weight formats offered: (label, what plan() takes; None: the config's own format, else FP8 or the best).
WEIGHT_FORMATS = (("as the config states (else fp8)", "auto"), ("bf16", "bf16"), ("fp8", "fp8"), ("fp4", "fp4"),
                  ("NVFP4 (4.5 bits)", measurements.NVFP4_BYTES), ("MXFP4 (4.25 bits)", 0.53125),
                  ("int4 (AWQ/GPTQ, groups of 128)", planner.quantized_format("int4")[1]))
_FOUR_BIT = {"fp4", measurements.NVFP4_BYTES, 0.53125}   # int4 runs its matmuls in BF16 or FP8, not FP4
BATCH_RANGE = (1, 1e6)
STEP_MS_RANGE = (0.01, 2000)
RATE_RANGE = (1, 1e6)
GRID_POINTS = 12        # batches on the curve (each is one decode_bound call, cached per model/system/context)


def hardware_choices() -> list[str]:
    """The hardware menu: every system preset, then 1, 2, 4 and 8 GPUs of every chip ("4 × H100")."""
    return list(hardware.system_names()) + [f"{n} × {chip}" for chip in hardware.chip_names() for n in CHIP_COUNTS]


def _unit(system_name: str) -> tuple:
    """(preset name, GPUs or None): "4 × H100" is 4 chips, a system preset None."""
    count, times, chip = system_name.partition(" × ")
    return (chip, int(count)) if times else (system_name, None)


def _weights_option(text: str):
    """The weights menu's value for a format name as plans read it ("MXFP4", "nvfp4", "BF16", "int4"): the option
    holding the same format or bytes; ``text`` itself when none does (the control then names it)."""
    values = [value for _, value in WEIGHT_FORMATS]
    if text in values:
        return text
    quantized = planner.quantized_format(text)
    if quantized is not None:
        return next((value for value in values if value == quantized[1]), text)
    try:
        name = planner.format_name(text, "weights")
    except ValueError:
        return text
    return name if name in values else text


def _check_system(text: str) -> None:
    """``ValueError`` naming ``system`` for "N × CHIP" with a count the menu does not offer, or an unknown chip."""
    count, times, chip = text.partition(" × ")
    if not times or text in hardware_choices():
        return
    if chip not in hardware.chip_names():
        raise ValueError(f"system must be a system preset or 'N × CHIP' with CHIP one of "
                         f"{', '.join(hardware.chip_names())}, got {text!r}")
    raise ValueError(f"system must be a system preset or 'N × {chip}' with N one of "
                     f"{', '.join(map(str, CHIP_COUNTS))} (the GPU counts the menu offers; plan() and the command "
                     f"line take any count), got {text!r}")


def _chip(system_name: str):
    name, n_chips = _unit(system_name)
    return hardware.get(name) if n_chips else hardware.get_system(name).chip


def _model(name: str):
    return CUSTOM_MODELS.get(name, name)


def _compute_format(system_name: str, weights) -> str:
    """The format the matmuls run in: the weights' own when the chip has a peak for it, else FP8, else BF16
    (FP4 weights on an H100 are multiplied at the FP8 peak; a TPU v5e has neither FP8 nor FP4). NVFP4 and
    MXFP4 byte counts count as FP4; other byte counts and "auto" as the plan's default."""
    available = _chip(system_name).flops
    wanted = "fp4" if weights in _FOUR_BIT else weights
    if not isinstance(wanted, str) or wanted == "auto":
        wanted = "fp8"
    return next(fmt for fmt in (wanted, "fp8", "bf16") if fmt in available)


def register_model(model) -> str:
    """Add a model planned from a Hugging Face config (a path, the folder holding it, the parsed dict, its JSON
    text, or a ``models.Model``) to the explorer's menu; returns its label there. Bad input: a ``ValueError``
    naming ``model``."""
    if isinstance(model, str) and model in models.names():
        return model
    resolved = model if isinstance(model, models.Model) else planner.resolve_model(model)
    title = (None if isinstance(model, models.Model) else planner.config_title(model)) or resolved.name
    label = f"{title} (your config)"
    CUSTOM_MODELS[label] = resolved
    return label


@lru_cache(maxsize=64)
def _curve(model_name: str, system_name: str, n_systems: int, len_ctx: float, weights):
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
def _plan(model: str, system: str, n_systems: int, len_ctx: float, target_ms: float, price: float, weights):
    name, n_chips = _unit(system)
    automatic = weights == "auto"
    return planner.plan(_model(model), name, n_chips=n_chips, n_systems=n_systems, price_per_gpu_hour=price,
                        len_ctx=len_ctx, latency_target=target_ms / 1e3, weight_dtype=None if automatic else weights,
                        compute_dtype=_compute_format(system, weights) if weights in _FOUR_BIT else None)


class PlanExplorer(base.Explorer):
    """Plan a deployment: model, system, context, latency target and price in; the plan's headline out.

    Left: the step-time bound against the batch, with the latency target; right: tokens/s per GPU, with
    the band Chapter 8's rows of the same class reached. The dashed line is the largest batch that fits in HBM,
    the marker the operating batch (the largest that meets the target and fits).

    ``model=`` also takes a config path, folder, dict or pasted JSON (:func:`register_model`); ``system=`` a
    system preset or "N × CHIP" for N in 1, 2, 4, 8 (:func:`hardware_choices`).
    """

    def __init__(self, **overrides):
        if "model" in overrides:
            overrides["model"] = register_model(overrides["model"])
        if isinstance(overrides.get("weights"), str):
            overrides["weights"] = _weights_option(overrides["weights"])
        if isinstance(overrides.get("system"), str):
            _check_system(overrides["system"])
        super().__init__(**overrides)

    def add_model(self, model) -> str:
        """Plan another config (as ``model=`` takes it): it joins the menu and is selected."""
        label = register_model(model)
        control = self.controls["model"]
        if label not in control.options:
            control.options = list(models.names()) + list(CUSTOM_MODELS)
        control.value = label
        return label

    title = "Plan a deployment: the bound, the target, the fit, and what real systems reach"

    def controls_(self):
        return {"model": sliders.dropdown("model", list(models.names()) + list(CUSTOM_MODELS), "deepseek-v3"),
                "system": sliders.dropdown("hardware", hardware_choices(), "HGX H200"),
                "n_systems": sliders.int_slider("systems", 1, 1, 16),
                "weights": sliders.dropdown("weights", list(WEIGHT_FORMATS), "fp8"),
                "len_ctx": sliders.log_slider("context (tokens)", 8192, 256, 262_144),
                "target_ms": sliders.log_slider("latency target (ms/token)", 30, 1, 1000),
                "price": sliders.slider("price per GPU-hour ($)", 3.0, 0.5, 15.0, 0.25, readout_format=".2f")}

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
        band = got["reality"].get("decode_band") or {"n": 0}
        self.step_line.set_data(batches, steps * 1e3)
        self.rate_line.set_data(batches, rates)
        if len(batches) and band["n"]:
            upper, lower = rates * band["high"], rates * band["low"]
            self.band.set_verts([np.column_stack([np.r_[batches, batches[::-1]], np.r_[upper, lower[::-1]]])])
        self.band.set_visible(bool(len(batches) and band["n"]))
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
        compute, weights = result.decode_settings["compute_dtype"], values["weights"]
        if weights == "auto" or (weights not in _FOUR_BIT and compute != weights) or (
                weights in _FOUR_BIT and compute != "fp4"):
            rows.insert(0, ("formats", next(row.text for row in result.rows if row.key == "formats_why"), "note"))
        return rows, False

    @staticmethod
    def _rows(result):
        by_key = {(row.section, row.key): row for row in result.rows}

        def text(section, key, default="—"):
            row = by_key.get((section, key))
            return row.text if row else default

        layout = result.numbers["inputs"]["layout"] or "pooled"
        if ("capacity", f"{layout}_fits") not in by_key:   # the headline's own row, else the pooled one
            layout = "headline" if ("capacity", "headline_fits") in by_key else "pooled"
        fits = by_key[("capacity", f"{layout}_fits")].value
        rows = [("headline layout", text("inputs", "layout")),
                (f"weights fit ({by_key[('capacity', f'{layout}_fits')].label.split(':')[0]})",
                 text("capacity", f"{layout}_weights_per_gpu") + " per GPU", "ok" if fits else "bad"),
                ("target", text("inputs", "target")),
                ("largest batch that fits", text("decode", "fit_limit")),
                ("largest batch, layout by layout", " · ".join(
                    f"{row.label.split(':')[0]}: {units.whole(row.value)}" for row in result.rows
                    if row.section == "capacity" and row.key.endswith("_max_batch") and row.value is not None)
                 or "—"),
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
