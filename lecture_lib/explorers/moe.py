"""Chapter 2's explorers and figures: an MoE layer across racks, and scale-up domain size.

Every curve comes from the Formulas of :mod:`lecture_lib.moe` evaluated over NumPy arrays.

- :class:`CrossRackExplorer`: racks per MoE layer -> cross-rack share (formula and measured on the
  NumPy MoE's random routing) and the all-to-all time per layer, against the experts' compute.
- :class:`ScaleUpExplorer`: scale-up domain and model -> fits or not, weight-fetch floor, experts
  per GPU (lecture 00:41:16-00:47:08).
- :func:`routing_figure`: token -> expert -> GPU -> rack for a few tokens of a :class:`moe.Routing`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lecture_lib import hardware, models, moe, roofline, units, validate

from . import base, sliders
from .plots import COLORS, new_figure, styled

RACK_SYSTEMS = ("HGX H100", "HGX B200", "GB200 NVL72", "GB300 NVL72", "Vera Rubin NVL144", "Rubin Ultra NVL576")
"""NVIDIA scale-up domains, smallest to largest: the 'racks' an MoE layer can live in."""

DIES_PER_PACKAGE = {"A100": 1, "H100": 1, "H200": 1, "B200": 2, "GB200": 2, "GB300": 2, "Rubin": 2, "Rubin Ultra": 4}
"""GPU dies per package: NVIDIA's NVL144/NVL576 names count dies (GTC 2025), the presets count packages."""

RACKS = np.arange(1, 17)
MAX_RACKS = int(RACKS[-1])
WEIGHT_FORMATS = {"fp4": 0.5, "fp8": 1.0, "bf16": 2.0}


@dataclass(frozen=True)
class MoEWorkload:
    """An MoE model and how many routed experts each token visits (the board said 32 for DeepSeek)."""

    label: str
    model: models.Model
    k: int

    def bytes_per_token(self, bytes_per_value: float) -> float:
        return moe.a2a_bytes_per_token(self.model, bytes_per_value=bytes_per_value, k=self.k)


def moe_workloads() -> dict[str, MoEWorkload]:
    """The board's DeepSeek (32 of 256 experts) and every MoE preset with its real top-k."""
    deepseek = models.get("deepseek-v3")
    items = [MoEWorkload("Board: DeepSeek, 32 of 256 experts", deepseek, 32)]
    for name in models.names():
        model = models.get(name)
        if model.is_moe:
            items.append(MoEWorkload(f"{model.name}: {model.experts_per_token} of {model.n_routed_experts} experts",
                                     model, model.experts_per_token))
    return {item.label: item for item in items}


@dataclass(frozen=True)
class Sized:
    """What the scale-up explorer needs of a model: total and active parameters, routed experts, and
    the parameters a batch-1 step reads (``roofline.params_read``: an MoE reads only its k experts)."""

    label: str
    params_total: float
    params_active: float
    n_experts: int = 0
    params_read_batch1: float | None = None    # None: reads every parameter (dense, or unknown layout)
    sparse: bool = False                       # an MoE whose experts are not given (the hypothetical 5 T model)


def sized_models() -> dict[str, Sized]:
    """Every model preset plus Dwarkesh's hypothetical 5 T-parameter model (lecture 00:45:48)."""
    items = []
    for name in models.names():
        m = models.get(name)
        items.append(Sized(f"{m.name} ({units.count(m.params_total)} total)", m.params_total, m.params_active,
                           m.n_routed_experts, roofline.params_read(m, tokens=1) if m.is_moe else None))
    items.append(Sized("a 5 T-parameter model (Dwarkesh, 00:45:48)", 5e12, 5e12 / 18, 0, sparse=True))
    return {item.label: item for item in items}


def _simulated_fractions() -> np.ndarray:
    """Cross-rack share measured on random routing for R = 1..16 (the NumPy MoE, not the formula)."""
    return np.array([moe.measure_cross_rack_fraction(n_racks=int(r), gpus_per_rack=8, experts_per_gpu=2,
                                                     k=8, n_tokens=2048, seed=int(r))["measured"] for r in RACKS])


WEIGHT_BYTES = 1.0   # the cross-rack explorer holds the weights in FP8, DeepSeek-V3's native format (arXiv 2412.19437 §3.3)


class CrossRackExplorer(base.Explorer):
    """Spread one MoE layer over R racks: how much traffic leaves, and what the all-to-all then costs."""

    title = "One MoE layer over R racks: cross-rack share and all-to-all time (lecture 00:36:11-00:40:00)"

    def controls_(self):
        self._workloads = moe_workloads()
        return {
            "model": sliders.dropdown("model", list(self._workloads), "deepseek-v3: 8 of 256 experts"),
            "system": sliders.dropdown("rack (scale-up domain)", list(RACK_SYSTEMS), "GB200 NVL72"),
            "racks": sliders.int_slider("racks per MoE layer R", 2, 1, MAX_RACKS),
            "tokens": sliders.log_slider("tokens per GPU per step", 64, 1, 8192, steps_per_decade=10),
            "activations": sliders.dropdown("activations sent as", ["fp8", "bf16"], "fp8"),
        }

    def setup(self):
        view, (share, time) = base.new_view(10.5, 3.7, ncols=2)
        share.set(xlabel="racks per MoE layer R", ylabel="share of traffic leaving its rack",
                  title="cross-rack share (R - 1)/R", xlim=(0.5, MAX_RACKS + 0.5), ylim=(0, 1.02))
        share.plot(RACKS, moe.CROSS_RACK_FRACTION(n_racks=RACKS), "-", color=COLORS["total"], lw=1.5,
                   label="formula (R - 1)/R")
        share.plot(RACKS, _simulated_fractions(), "x", color=COLORS["weights"], ms=7, mew=2,
                   label="measured: NumPy MoE, random routing")
        share.legend(loc="lower right")
        time.set(xlabel="racks per MoE layer R", ylabel="time per MoE layer (µs)", yscale="log",
                 title="dispatch + combine vs expert compute", xlim=(0.5, MAX_RACKS + 0.5), ylim=(1e-3, 1e6))
        lines = {
            "total": time.plot([], [], color=COLORS["total"], lw=3, alpha=0.8, label="all-to-all (the max)")[0],
            "inside": time.plot([], [], color=COLORS["kv"], ls="--", label="in-rack share (NVLink)")[0],
            "cross": time.plot([], [], color=COLORS["weights"], ls="--", label="cross-rack share (scale-out)")[0],
            "compute": time.axhline(1, color=COLORS["compute"], lw=1.5, label="expert compute (peak FLOP/s)"),
            "marker_time": time.axvline(2, color=COLORS["marker"], lw=1.0, ls=":", label="your R"),
            "marker_share": share.axvline(2, color=COLORS["marker"], lw=1.0, ls=":", label="your R"),
            "dot": share.plot([], [], "o", color=COLORS["balance"], ms=9)[0],
        }
        time.legend(loc="upper left", fontsize=7.5)
        self.lines = lines
        self._measured = share.lines[1].get_ydata()
        view.animate(*lines.values())
        return view

    def resolve(self, values: dict) -> dict:
        workload = self._workloads[values["model"]]
        system = hardware.get_system(values["system"])
        bytes_value = moe.ACTIVATION_BYTES[values["activations"]]
        flops = system.chip.flops["fp8"] if "fp8" in system.chip.flops else max(system.chip.flops.values())
        return {"workload": workload, "system": system, "bytes_token": workload.bytes_per_token(bytes_value),
                "bw_up": system.chip.scale_up_bandwidth, "bw_out": system.scale_out_bandwidth, "flops": flops}

    def update(self, values):
        r = self.resolve(values)
        racks, tokens = values["racks"], values["tokens"]
        times = moe.a2a_layer_time(tokens_per_gpu=tokens, bytes_per_token=r["bytes_token"], racks=RACKS,
                                   scale_up_bw=r["bw_up"], scale_out_bw=r["bw_out"])
        us = 1e6
        self.lines["total"].set_data(RACKS, times["total"] * us)
        self.lines["inside"].set_data(RACKS, times["inside"] * us)
        self.lines["cross"].set_data(RACKS[1:], times["cross"][1:] * us)
        workload = r["workload"]
        compute = moe.EXPERT_COMPUTE_TIME(tokens_gpu=tokens, k_active=workload.k,
                                          N_expert=workload.model.expert_params(), FLOPs=r["flops"])
        self.lines["compute"].set_ydata([compute * us] * 2)
        self.lines["marker_time"].set_xdata([racks] * 2)
        self.lines["marker_share"].set_xdata([racks] * 2)
        fraction = moe.CROSS_RACK_FRACTION(n_racks=racks)
        self.lines["dot"].set_data([racks], [fraction])
        here = float(times["total"][racks - 1])
        one_rack = float(times["total"][0])
        shown = np.concatenate([times["total"], times["inside"], times["cross"][1:], [compute]]) * us
        shown = shown[np.isfinite(shown) & (shown > 0)]
        axis = self.lines["total"].axes       # the time axis fits its curves, in whole decades that stay put
        changed = base.set_limits(axis, axis.get_xlim(),
                                     base.steady_decades(axis.get_ylim(), shown.min(), shown.max(), margin=1))
        n_layers = workload.model.n_moe_layers
        system = r["system"]
        rows = [
            # Every expert layer spread over R racks: do all of the model's weights fit in their HBM?
            base.capacity_row(n_total=workload.model.params_total, bytes_param=WEIGHT_BYTES, batch=0, len_ctx=1,
                                 bytes_tok=1, hbm_capacity=racks * system.hbm_capacity,
                                 where=f"{racks} × {system.name}, FP8 weights"),
            ("layer spans", self._spread(workload.model.n_routed_experts, racks, r["system"].n_chips)),
            ("cross-rack share (R-1)/R", f"{fraction:.3f}  (measured on random routing: "
                                         f"{self._measured[racks - 1]:.3f})"),
            ("scale-up / scale-out per GPU", f"{units.factor(moe.link_ratio_of(r['system']))}  (board: about 8×)"),
            ("bytes per token per MoE layer", f"{units.bytes_(r['bytes_token'])}  ({units.counted(workload.k, 'expert')}, "
                                              "dispatch + combine)"),
            ("all-to-all per layer at your R", units.seconds(here)),
            ("the same inside one rack", units.seconds(one_rack)),
            ("slowdown vs one rack", units.factor(here / one_rack)),
            ("expert compute per layer (peak)", units.seconds(compute)),
            ("all-to-all / compute", units.factor(here / compute)),
            (f"all-to-all per step ({n_layers} MoE layers)", units.seconds(here * n_layers)),
        ]
        return rows, changed

    @staticmethod
    def _spread(n_experts: int, racks: int, gpus_per_rack: int) -> str:
        """The layout the (R-1)/R formula assumes: the experts split evenly over the R racks."""
        if n_experts < racks:
            return f"{racks} racks, but only {n_experts} experts: at most {n_experts} racks can hold one"
        if n_experts % racks:
            return (f"{racks} racks: {n_experts} experts do not split evenly ({n_experts / racks:.1f} per rack); "
                    "the formula assumes an even spread")
        placed = moe.layout(n_experts=n_experts // racks, n_gpus=gpus_per_rack)
        return (f"{racks} × {placed['gpus_used']} GPUs hold experts, {placed['experts_per_gpu']} each "
                f"({n_experts // racks} per rack)")


class ScaleUpExplorer(base.Explorer):
    """Scale-up domain size against the largest model that fits and its weight-fetch floor (E2.4)."""

    title = "Scale-up domain size: does the model fit, and how fast can a step be? (lecture 00:41:16-00:47:08)"

    X_LIMITS = (1, 20000)

    def controls_(self):
        self._models = sized_models()
        labels = list(self._models)
        default = next(label for label in labels if label.startswith("kimi-k2"))
        return {
            "system": sliders.dropdown("scale-up domain", hardware.system_names(), "GB200 NVL72"),
            "model": sliders.dropdown("model", labels, default),
            "weights": sliders.dropdown("weight format", list(WEIGHT_FORMATS), "fp8"),
            "share": sliders.slider("share of HBM for weights", 0.5, 0.1, 1.0, 0.05, readout_format=".2f"),
        }

    def setup(self):
        view, (fit, floor) = base.new_view(10.5, 3.7, ncols=2)
        fit.set(xscale="log", yscale="log", xlabel="chips in the scale-up domain", ylabel="parameters",
                title="largest total parameters that fit", xlim=self.X_LIMITS, ylim=(1e9, 1e16))
        floor.set(xscale="log", yscale="log", xlabel="chips in the scale-up domain", ylabel="ms per step",
                  title="weight-fetch floor per step", xlim=self.X_LIMITS, ylim=(1e-3, 1e4))
        self._systems = [hardware.get_system(name) for name in hardware.system_names()]
        self._sizes = np.array([s.n_chips for s in self._systems], dtype=float)
        self._chips = np.logspace(0, np.log10(self.X_LIMITS[1]), 120)
        lines = {
            "fit": fit.plot([], [], color=COLORS["memory"], label="this chip: s × n × HBM / bytes")[0],
            "presets": fit.plot([], [], "o", color=COLORS["marker"], ms=5, label="every preset system")[0],
            "total": fit.axhline(1e9, color=COLORS["weights"], lw=1.5, label="model: total params"),
            "active": fit.axhline(1e9, color=COLORS["compute"], ls="--", lw=1.2, label="model: active params"),
            "here": fit.plot([], [], "o", color=COLORS["balance"], ms=10, label="your system")[0],
            "floor": floor.plot([], [], color=COLORS["weights"], label="every expert read: total bytes / (n × HBM bw)")[0],
            # At batch 1 an MoE step reads only the k experts its token routes to (Chapter 8 measures it). Divided by the
            # whole domain's bandwidth it is a lower bound: those k experts sit on at most k of the GPUs.
            "floor_batch1": floor.plot([], [], color=COLORS["weights"], ls=(0, (4, 1.5, 1, 1.5, 1, 1.5)), lw=1.2,
                                       label="batch 1: only the k experts touched (lower bound)")[0],
            "floor_here": floor.plot([], [], "o", color=COLORS["balance"], ms=10)[0],
            "label": fit.text(1.5, 2e15, "", fontsize=9),
        }
        floor.axhline(20, color=COLORS["marker"], ls=":", lw=1.0, label="the ~20 ms step (Chapter 1)")
        fit.legend(loc="lower right", fontsize=7.5)
        floor.legend(loc="upper right", fontsize=7.5)
        self.lines = lines
        view.animate(*lines.values())
        return view

    def update(self, values):
        system = hardware.get_system(values["system"])
        model = self._models[values["model"]]
        bytes_param = WEIGHT_FORMATS[values["weights"]]
        share = values["share"]
        chip = system.chip
        fit_curve = moe.MAX_PARAMS_THAT_FIT(weight_share=share, hbm_capacity=self._chips * chip.hbm_capacity,
                                            bytes_param=bytes_param)
        self.lines["fit"].set_data(self._chips, fit_curve)
        capacities = np.array([s.hbm_capacity for s in self._systems])
        self.lines["presets"].set_data(self._sizes, moe.MAX_PARAMS_THAT_FIT(
            weight_share=share, hbm_capacity=capacities, bytes_param=bytes_param))
        n_fit = moe.MAX_PARAMS_THAT_FIT(weight_share=share, hbm_capacity=system.hbm_capacity, bytes_param=bytes_param)
        self.lines["here"].set_data([system.n_chips], [n_fit])
        self.lines["total"].set_ydata([model.params_total] * 2)
        self.lines["active"].set_ydata([model.params_active] * 2)
        floors = moe.WEIGHT_FETCH_FLOOR(N_total=model.params_total, bytes_param=bytes_param,
                                        mem_bw=self._chips * chip.hbm_bandwidth)
        self.lines["floor"].set_data(self._chips, floors * 1e3)
        floor_here = moe.WEIGHT_FETCH_FLOOR(N_total=model.params_total, bytes_param=bytes_param,
                                            mem_bw=system.hbm_bandwidth)
        self.lines["floor_here"].set_data([system.n_chips], [floor_here * 1e3])
        read_batch1 = model.params_read_batch1
        floor_batch1 = (moe.WEIGHT_FETCH_FLOOR(N_total=read_batch1, bytes_param=bytes_param,
                                               mem_bw=self._chips * chip.hbm_bandwidth) if read_batch1 else None)
        self.lines["floor_batch1"].set_data(self._chips, floor_batch1 * 1e3 if read_batch1 else np.full_like(self._chips, np.nan))
        dies = DIES_PER_PACKAGE.get(chip.name)
        count = f"{system.n_chips} packages" + (f" = {system.n_chips * dies} dies" if dies and dies > 1 else "")
        self.lines["label"].set_text(f"{system.name}: {count}")
        weight_bytes = model.params_total * bytes_param
        fits = model.params_total <= n_fit
        verdict = (f"fits: weights use {units.percent(weight_bytes / system.hbm_capacity)} of HBM" if fits
                   else f"does not fit: {units.bytes_(weight_bytes)} weights > {units.bytes_(share * system.hbm_capacity)}"
                        f" ({share:.0%} of {units.bytes_(system.hbm_capacity)} HBM), {units.factor(model.params_total / n_fit)}"
                        " more than there is room for")
        # a floor for weights that do not fit is what it would be if they fitted (a learner's walk read it
        # as a real floor beside "does not fit")
        unless = "" if fits else " (if the weights fitted)"
        if model.n_experts:
            placed = moe.layout(n_experts=model.n_experts, n_gpus=system.n_chips)
            experts = (f"{placed['experts_per_gpu']} per GPU on {placed['gpus_used']} GPUs"
                       + (f" ({placed['gpus_idle']} hold none)" if placed["gpus_idle"] else ""))
        elif model.sparse:          # the 5 T model: an MoE (5 T total, 5 T / 18 active) whose experts nobody specified
            experts = (f"an MoE with no expert layout given (sparsity {units.number(model.params_total / model.params_active)}"
                       ", as DeepSeek-V3)")
        else:
            experts = "dense model: no experts"
        rows = [
            ("scale-up domain", count),
            ("HBM in the domain", units.bytes_(system.hbm_capacity)),
            ("weights", f"{units.bytes_(weight_bytes)} ({units.count(model.params_total)} × {bytes_param:g} B)"),
            (f"fits in {share:.0%} of HBM?", verdict, "ok" if fits else "bad"),
            ("largest model that fits", f"{units.count(n_fit)} params"),
            ("weight-fetch floor per step (every expert read)", units.seconds(floor_here) + unless),
            ("… at batch 1 (a token reads only its k experts)",
             units.seconds(moe.WEIGHT_FETCH_FLOOR(N_total=read_batch1, bytes_param=bytes_param,
                                                  mem_bw=system.hbm_bandwidth))
             + f" ({units.count(read_batch1)} params read; a lower bound, as the k experts sit on at most k GPUs)"
             + unless if read_batch1 else "the same: every parameter is read"
             if not model.sparse else "not computed: without an expert layout, every "
             "parameter is counted"),
            ("experts (expert parallelism)", experts),
            ("active params (set by compute)", units.count(model.params_active)),
        ]
        return rows, False


ROUTING_MAX_LINES = 1500     # token -> expert lines drawn, at most (a line artist each, ~1 ms): the first tokens
ROUTING_MAX_BOXES = 64       # racks shaded and GPUs boxed one by one, at most; more are too thin to see apart
ROUTING_ROW_PIXELS = 9       # a row of 7-pt text needs this much height: rows closer together go unlabelled


@styled
def routing_figure(routing: moe.Routing, n_tokens: int = 12, *, show_share: bool = True):
    """Lines from the first tokens (left, by home rack) to their experts (right, boxed by GPU and rack).

    A red line leaves its rack: that copy, and its combine on the way back, crosses the slow link.
    ``show_share=False`` leaves the measured share out of the title. Returns a Figure (show it with
    ``plots.to_image``).

    What it draws is bounded by what that costs, whatever the routing's size: at most
    :data:`ROUTING_MAX_LINES` lines (fewer tokens where each has many copies; the title says how many), racks
    and GPUs one by one only up to :data:`ROUTING_MAX_BOXES` (beyond, each is too thin to see), and the
    labels of tokens, experts, GPUs and racks only where their rows are far enough apart to be read.
    """
    from . import plots

    if not isinstance(routing, moe.Routing):
        raise ValueError(f"routing must be a moe.Routing, got {type(routing).__name__}")
    n_tokens = validate.integer("n_tokens", n_tokens, maximum=1000)
    show_share = validate.boolean("show_share", show_share)
    placement = routing.placement
    k = routing.experts.shape[1]
    n = max(1, min(n_tokens, routing.n_tokens, ROUTING_MAX_LINES // k))
    height, top, bottom = 3.8, 0.9, 0.03
    figure, (axis,) = new_figure(9.0, height)
    row_pixels = (top - bottom) * height * plots.DPI / 1.12       # pixels per unit of y (ylim below)
    n_exp = placement.n_experts
    span = 1 / (n_exp - 1) if n_exp > 1 else 1.0                  # expert e sits at y = e * span
    tok_y = np.linspace(0.05, 0.95, n)
    fits = lambda gap: gap * row_pixels >= ROUTING_ROW_PIXELS       # noqa: E731 (rows far enough apart to label)
    rack_colors = ["#e8f0fb", "#fdf0e6", "#eaf6ea", "#f4ecf8", "#fbeaea", "#eef7f7", "#f7f3e6", "#ececec"]
    per_rack = placement.gpus_per_rack * placement.experts_per_gpu
    if placement.n_racks <= ROUTING_MAX_BOXES:
        for rack in range(placement.n_racks):
            low, high = rack * per_rack * span - span / 2, ((rack + 1) * per_rack - 1) * span + span / 2
            axis.axhspan(low, high, xmin=0.7, xmax=1.0, color=rack_colors[rack % len(rack_colors)], zorder=0)
            if fits(per_rack * span):
                axis.text(1.12, (low + high) / 2, f"rack {rack}", va="center", fontsize=9)
    if placement.n_gpus <= ROUTING_MAX_BOXES:
        for gpu in range(placement.n_gpus):
            first, last = gpu * placement.experts_per_gpu, (gpu + 1) * placement.experts_per_gpu - 1
            low, high = first * span - span * 0.45, last * span + span * 0.45
            axis.plot([0.8, 1.02, 1.02, 0.8, 0.8], [low, low, high, high, low], color="#777", lw=0.8)
            if fits(placement.experts_per_gpu * span):
                axis.text(1.035, (low + high) / 2, f"GPU {gpu}", va="center", fontsize=7)
    if fits(span):
        for e in range(n_exp):
            axis.text(0.91, e * span, f"expert {e}", ha="center", va="center", fontsize=7)
    label_tokens = n == 1 or fits(0.9 / (n - 1))
    for token in range(n):
        home_rack = int(routing.home_rack[token])
        if label_tokens:
            axis.text(-0.02, tok_y[token], f"token {token} (GPU {int(routing.home_gpu[token])}, rack {home_rack})",
                      ha="right", va="center", fontsize=7)
        for slot in range(k):
            crosses = bool(routing.crosses[token, slot])
            axis.plot([0, 0.8], [tok_y[token], routing.experts[token, slot] * span if n_exp > 1 else 0.0],
                      color=COLORS["weights"] if crosses else COLORS["kv"], lw=0.6 + 2 * routing.gates[token, slot],
                      alpha=0.8, ls=(0, (4, 2)) if crosses else "-", marker="x" if crosses else "o", markevery=[1], ms=4)
    title = f"dispatch of {n} tokens: solid green (o) stays in its rack, dashed red (x) crosses"
    if show_share:
        title += f" ({routing.crosses[:n].mean():.0%} of these copies)"
    axis.set(xlim=(-0.65, 1.3), ylim=(-0.06, 1.06), xticks=[], yticks=[], title=title)
    axis.grid(False)
    for side in ("left", "bottom"):
        axis.spines[side].set_visible(False)
    figure.subplots_adjust(left=0.02, right=0.98, top=top, bottom=bottom)
    return figure


# ================================================================================ tables for the notebook

def _html(header: list[str], rows: list[list[str]], caption: str = ""):
    import html

    from IPython.display import HTML

    head = "".join(f"<th style='text-align:left;padding:2px 8px'>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left;padding:2px 8px'>{html.escape(c)}</td>"
                                    for c in row) + "</tr>" for row in rows)
    cap = (f"<caption style='caption-side:bottom;text-align:left;font-size:90%'>{html.escape(caption)}</caption>"
           if caption else "")
    return HTML(f"<table style='font-size:13px;border-collapse:collapse'>{cap}<thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")


def expert_layout_table(system: str = "GB200 NVL72"):
    """Every MoE preset laid out on one scale-up domain: experts per GPU and bytes per token (FP8)."""
    n_gpus = hardware.resolve_system(system).n_chips
    rows = []
    for workload in moe_workloads().values():
        m = workload.model
        placed = moe.layout(n_experts=m.n_routed_experts, n_gpus=n_gpus)
        rows.append([workload.label, f"{m.n_routed_experts} + {m.n_shared_experts} shared", str(workload.k),
                     f"{placed['gpus_used']} of {n_gpus}", str(placed["experts_per_gpu"]), f"{m.d_model:,}",
                     units.bytes_(workload.bytes_per_token(1.0))])
    return _html(["model", "experts", "k per token", "GPUs used", "experts per GPU", "d_model",
                  "a2a bytes / token / layer (FP8)"], rows,
                 caption=f"Expert parallelism on one {system}: E = largest divisor of the expert count <= {n_gpus}.")


def link_table(names=RACK_SYSTEMS):
    """Scale-up and scale-out bandwidth per GPU of each system, one direction, and their ratio."""
    rows = []
    for name in validate.names("names", names):
        system = hardware.get_system(name)
        rows.append([system.name, units.bandwidth(system.chip.scale_up_bandwidth),
                     units.bandwidth(system.scale_out_bandwidth), units.factor(moe.link_ratio_of(system))])
    return _html(["system", "scale-up per GPU", "scale-out per GPU", "ratio"], rows,
                 caption="One direction per GPU, from the hardware presets (sources in hardware.py). Board: about 8×.")


def scale_up_table(*, bytes_per_param: float = 1.0, weight_share: float = 0.5,
                   model_names=("deepseek-v3", "kimi-k2")):
    """Hopper -> Blackwell -> Rubin -> Rubin Ultra: domain size, HBM, largest model, weight-fetch floors."""
    bytes_per_param = validate.scalar("bytes_per_param", bytes_per_param, maximum=64)
    if bytes_per_param < 1 / 64:
        raise ValueError(f"bytes_per_param must be >= 1/64, got {bytes_per_param!r}")
    weight_share = validate.scalar("weight_share", weight_share, maximum=1.0)
    model_names = validate.names("model_names", model_names)
    rows = []
    for name in RACK_SYSTEMS:
        system = hardware.get_system(name)
        dies = DIES_PER_PACKAGE.get(system.chip.name, 1)
        n_fit = moe.MAX_PARAMS_THAT_FIT(weight_share=weight_share, hbm_capacity=system.hbm_capacity,
                                        bytes_param=bytes_per_param)
        floors = []
        for m in model_names:   # a floor only where the weights fit in the domain's HBM at all
            fit = moe.scale_up_fit(m, system, bytes_per_param=bytes_per_param)
            floors.append(units.seconds(fit["weight_fetch_floor"]) if fit["fits"] else
                          f"does not fit ({units.bytes_(fit['weight_bytes'])} > {units.bytes_(fit['capacity'])})")
        rows.append([system.name, str(system.n_chips), str(system.n_chips * dies), units.bytes_(system.hbm_capacity),
                     units.count(n_fit)] + floors)
    return _html(["system", "packages", "dies", "HBM", f"largest model ({weight_share:.0%} of HBM)"]
                 + [f"floor: {m}" for m in model_names], rows,
                 caption=f"Weights at {bytes_per_param:g} byte per parameter. Floor = total weight bytes / HBM "
                         "bandwidth of the whole domain (Chapter 1's latency floor), shown only where the weights fit in the "
                         "domain's HBM at all.")
