"""Chapter 5's explorers: the lecture's token budget, the equal-costs heuristic, and the
inference-aware optimum.

Every curve comes from the Formulas and functions of :mod:`lecture_lib.scaling`, evaluated over
NumPy arrays; nothing here re-types an equation.
"""

from __future__ import annotations

import functools

import numpy as np

from lecture_lib import scaling, units

from . import base, sliders
from .plots import COLORS

PHASE_COLORS = {"inference": COLORS["kv"], "pretrain": COLORS["compute"], "RL": COLORS["memory"],
                "chinchilla": COLORS["marker"]}
def _factor(ratio: float) -> str:
    """A factor to 3 significant digits at most, never more: "132×", "6.5×"."""
    return f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.3g}×"


LECTURE_D_INFERENCE = float(f"{scaling.lecture_estimate()['D_inference']:.3g}")   # 2.59 × 10¹⁴ = 259 T tokens
LECTURE_OVERTRAINING_SAID = 100   # "a hundred times" (lecture 01:32:13): 200T / 2T


def _no_minor_ticks(*axes) -> None:
    """Log axes without minor ticks: they draw ~2x faster and the decades are what matter here."""
    from matplotlib.ticker import NullLocator

    for axis in axes:
        axis.xaxis.set_minor_locator(NullLocator())
        axis.yaxis.set_minor_locator(NullLocator())


class OvertrainingExplorer(base.Explorer):
    """Traffic, deployment life, family split, RL multiplier, decode MFU and model size -> the
    lecture's D_inference, D_pretrain, D_RL and the ratio to Chinchilla (lecture 01:24:28-01:32:13)."""

    title = "How over-trained? Equal costs from the traffic a model will serve (lecture 01:29:40)"

    N_RANGE = (1e9, 2e12)
    PHASES = ("inference", "pretrain", "RL", "chinchilla")
    LABELS = {"inference": "D_inference", "pretrain": "D_pretrain", "RL": "D_RL", "chinchilla": "D_Chinchilla (20 N)"}

    def controls_(self):
        return {
            "traffic": sliders.log_slider("family traffic (tokens/s)", scaling.LECTURE_TRAFFIC, 1e7, 1e10),
            "months": sliders.slider("deployment (months)", scaling.LECTURE_MONTHS, 0.5, 24, 0.5),
            "family_split": sliders.int_slider("models sharing it", scaling.LECTURE_FAMILY_SPLIT, 1, 20),
            "rl_multiplier": sliders.slider("RL FLOPs per param·token", 3.0, 2.0, 6.0, 0.25),
            # steps of 1/30 from 0.1 (= 3/30) to 1 hold the lecture's 1/3 exactly (10/30): a step of 0.01
            # snapped it to 0.33 in the browser, and the readouts then disagreed with the reveal (131× vs 130×)
            "decode_mfu": sliders.slider("decode MFU ÷ training MFU", 1 / 3, 0.1, 1.0, 1 / 30, readout_format=".3f"),
            "n_active": sliders.log_slider("active parameters", scaling.LECTURE_N_ACTIVE, *self.N_RANGE),
        }

    def setup(self):
        view, (bars_axis, ratio_axis) = base.new_view(10.5, 3.8, ncols=2)
        positions = np.arange(len(self.PHASES))[::-1]
        self.bars = bars_axis.barh(positions, np.ones(len(self.PHASES)), left=1.0,
                                   color=[PHASE_COLORS[p] for p in self.PHASES], height=0.6)
        bars_axis.set(xscale="log", xlim=(1e10, 1e19), ylim=(-0.6, len(self.PHASES) - 0.4),
                      yticks=positions, yticklabels=[self.LABELS[p] for p in self.PHASES],
                      xlabel="tokens", title="token budget of one model")
        self.bar_labels = [bars_axis.text(1.0, y, "", va="center", ha="left", fontsize=9) for y in positions]
        self.lecture_marker = bars_axis.axvline(LECTURE_D_INFERENCE, color=COLORS["total"], ls=":", lw=1,
                                                label=f"lecture: {units.count(LECTURE_D_INFERENCE, 'tokens')}")
        bars_axis.legend(loc="lower right")
        ratio_axis.set(xscale="log", yscale="log", xlim=self.N_RANGE, ylim=(1e-2, 1e7),
                       xlabel="active parameters N", ylabel="D_pretrain / (20 N)",
                       title="over-training vs model size")
        self.curve, = ratio_axis.plot([], [], color=COLORS["total"], lw=2.2, label="equal-cost over-training")
        ratio_axis.axhline(1, color=COLORS["marker"], ls="--", lw=1, label="Chinchilla-optimal (1×)")
        ratio_axis.axhline(LECTURE_OVERTRAINING_SAID, color=COLORS["balance"], ls=":", lw=1.2,
                           label="the lecture's 100×")
        self.marker, = ratio_axis.plot([], [], "o", color=COLORS["weights"], ms=8, label="your model")
        ratio_axis.legend(loc="upper right")
        view.figure.subplots_adjust(left=0.15, wspace=0.35)
        _no_minor_ticks(bars_axis, ratio_axis)
        self.n_grid = np.geomspace(*self.N_RANGE, 200)
        view.animate(*self.bars, *self.bar_labels, self.curve, self.marker)
        return view

    def update(self, values):
        estimate = scaling.lecture_estimate(tokens_per_second=values["traffic"], deployment_months=values["months"],
                                            family_split=values["family_split"],
                                            rl_multiplier=values["rl_multiplier"],
                                            decode_mfu_ratio=values["decode_mfu"], n_active=values["n_active"])
        tokens = {"inference": estimate["D_inference"], "pretrain": estimate["D_pretrain"],
                  "RL": estimate["D_RL"], "chinchilla": estimate["D_chinchilla"]}
        for bar, label, phase in zip(self.bars, self.bar_labels, self.PHASES):
            bar.set_width(tokens[phase] - 1.0)
            label.set_x(tokens[phase] * 1.3)
            label.set_text(units.count(tokens[phase]))
        curve = scaling.OVERTRAINING_FROM_TRAFFIC(
            traffic=values["traffic"], t_deploy=values["months"] * scaling.DAYS_PER_MONTH * scaling.SECONDS_PER_DAY,
            n_family=values["family_split"], ineff=estimate["inefficiency"], N_active=self.n_grid,
            tokens_per_param=scaling.CHINCHILLA_TOKENS_PER_PARAM)
        self.curve.set_data(self.n_grid, curve)
        self.marker.set_data([values["n_active"]], [estimate["overtraining"]])
        total = estimate["C_pretrain"] + estimate["C_RL"] + estimate["C_inference"]
        rows = [
            ("tokens/s per model", units.rate(estimate["tokens_per_second"])),
            ("D_inference (lifetime)", units.count(estimate["D_inference"], "tokens")),
            ("D_pretrain (equal cost)", units.count(estimate["D_pretrain"], "tokens")),
            ("D_RL (equal cost)", units.count(estimate["D_RL"], "tokens")),
            ("D_pretrain : D_RL : D_inference",
             f"{estimate['D_pretrain'] / estimate['D_inference']:.2g} : "
             f"{estimate['D_RL'] / estimate['D_inference']:.2g} : 1"),
            ("inefficiency (training ÷ decode MFU)", f"{estimate['inefficiency']:.2f}"),
            ("Chinchilla tokens (20 N)", units.count(estimate["D_chinchilla"], "tokens")),
            ("over-trained by", f"{_factor(estimate['overtraining'])}  (lecture: ≈100×)"),
            ("total compute (3 equal parts)", f"{units.power_of_ten(total, 'FLOPs')}, training-equivalent"),
        ]
        return rows, False


class HeuristicExplorer(base.Explorer):
    """How far "make the two costs equal" lands from the true minimum of ``a x^-p + b x^q`` (E5.1).

    The axes are scale-free: x is measured in units of the crossing point x_equal and the cost in
    units of either term's value there, so a and b drop out and only the exponents matter.
    """

    title = "Minimise a sum by setting its terms equal? (lecture 01:20:48)"

    U = np.geomspace(0.05, 20, 400)

    def controls_(self):
        return {
            "p": sliders.slider("falling exponent p", 1.0, 0.1, 3.0, 0.05, readout_format=".2f"),
            "q": sliders.slider("rising exponent q", 1.0, 0.1, 3.0, 0.05, readout_format=".2f"),
            "x": sliders.log_slider("your x ÷ x_equal", 1.0, 0.05, 20),
        }

    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.8)
        axis.set(xscale="log", xlim=(self.U[0], self.U[-1]), ylim=(0, 6), xlabel="x ÷ x_equal",
                 ylabel="cost ÷ term value at x_equal", title="falling + rising cost")
        self.falling, = axis.plot([], [], color=COLORS["compute"], label=r"falling  $a\,x^{-p}$")
        self.rising, = axis.plot([], [], color=COLORS["weights"], label=r"rising  $b\,x^{q}$")
        self.total, = axis.plot([], [], color=COLORS["total"], lw=2.6, label="sum")
        axis.axvline(1.0, color=COLORS["marker"], ls="--", lw=1.2, label="costs equal (heuristic)")
        self.optimum = axis.axvline(1.0, color=COLORS["balance"], lw=1.6, label="true minimum")
        self.yours, = axis.plot([], [], "o", color=COLORS["memory"], ms=8, label="your x")
        axis.legend(loc="upper right", fontsize=8)
        self.axis = axis
        _no_minor_ticks(axis)
        view.animate(self.falling, self.rising, self.total, self.optimum, self.yours)
        return view

    def update(self, values):
        p, q, x = values["p"], values["q"], values["x"]
        shape = dict(coef_a=1.0, coef_b=1.0, p_fall=p, q_rise=q)       # x_equal = 1 and both terms = 1 there
        falling = scaling.FALLING_COST(x_alloc=self.U, coef_a=1.0, p_fall=p)
        rising = scaling.RISING_COST(x_alloc=self.U, coef_b=1.0, q_rise=q)
        self.falling.set_data(self.U, falling)
        self.rising.set_data(self.U, rising)
        self.total.set_data(self.U, falling + rising)
        gap = scaling.heuristic_gap(p=p, q=q)
        self.optimum.set_xdata([gap["x_ratio"]] * 2)
        yours = scaling.SUM_POWER(x_alloc=x, **shape)
        best = scaling.SUM_POWER(x_alloc=gap["x_ratio"], **shape)
        self.yours.set_data([x], [yours])
        # Your point stays on the chart: the y-axis grows in 1-2-5 steps when it rises above 6.
        top = 6.0 if yours <= 5.7 else base.nice_ceiling(1.1 * yours)
        changed = base.set_limits(self.axis, (self.U[0], self.U[-1]), (0, top))
        rows = [
            ("true minimum x* ÷ x_equal", units.number(gap['x_ratio'])),
            ("sum at x_equal ÷ minimum", f"{units.number(gap['penalty'], 4)}  (+{gap['penalty'] - 1:.1%})"),
            ("falling ÷ rising at the minimum", f"{units.number(gap['term_ratio'], 4)}  (= q/p, so p·A = q·B)"),
            ("your x: sum ÷ minimum", units.number(yours / best, 4)),
        ]
        return rows, changed


@functools.lru_cache(maxsize=64)
def _demand_free_curves(fit_name: str, target_n: float, inefficiency: float):
    """What the inference-aware explorer draws that does not depend on the demand slider: the target
    loss, the optimum's tokens per parameter across all demands, the Chinchilla baseline, and the
    training cost of every model size that reaches the target. Cached, so moving the demand slider
    only solves for one optimum."""
    fit = scaling.get_fit(fit_name)
    target = scaling.loss(n_params=target_n, tokens=scaling.chinchilla_tokens_for(n_params=target_n, fit=fit), fit=fit)
    sweep = scaling.inference_aware_optimum(target_loss=target, inference_tokens=InferenceAwareExplorer.DEMANDS,
                                            fit=fit, inefficiency=inefficiency)
    sizes = scaling._min_params(target, fit) * np.geomspace(1.02, 1e3, 300)   # smaller models never reach it
    train = scaling.COST_PRETRAIN(N_active=sizes, D_pretrain=scaling.tokens_for_loss(n_params=sizes, target_loss=target,
                                                                                      fit=fit))
    return target, sweep["tokens_per_param"], float(sweep["chinchilla_tokens_per_param"][0]), sizes, train


class InferenceAwareExplorer(base.Explorer):
    """Lifetime inference demand -> the cheapest model that reaches a target loss (Sardana et al.
    2023, arXiv 2401.00448), against the Chinchilla-optimal model of the same loss; the lecture's
    100B-on-259T model is marked."""

    title = "The inference-aware optimum: smaller models, more tokens per parameter (Sardana et al. 2023)"

    DEMANDS = np.geomspace(1e9, 1e17, 90)

    def controls_(self):
        return {
            "fit": sliders.dropdown("loss fit", list(scaling.FITS), scaling.DEFAULT_FIT),
            "target_n": sliders.log_slider("target: loss of a Chinchilla-optimal N", 1e11, 1e9, 1e13),
            # the lecture's D_inference, 500M tokens/s for two months over 10 models (scaling.lecture_estimate),
            # to the 3 digits every other place in the chapter writes it: 259 T
            "demand": sliders.log_slider("lifetime inference tokens", LECTURE_D_INFERENCE, 1e9, 1e17),
            "inefficiency": sliders.slider("inference inefficiency", 3.0, 1.0, 6.0, 0.25),
        }

    def setup(self):
        view, (curve_axis, cost_axis) = base.new_view(10.5, 4.2, ncols=2)
        curve_axis.set(xscale="log", yscale="log", xlim=(self.DEMANDS[0], self.DEMANDS[-1]), ylim=(5, 2e5),
                       xlabel="lifetime inference tokens", ylabel="training tokens per parameter",
                       title="the optimum at a fixed target loss")
        self.curve, = curve_axis.plot([], [], color=COLORS["total"], lw=2.2, label="inference-aware optimum")
        self.chinchilla_line = curve_axis.axhline(20, color=COLORS["marker"], ls="-.", lw=1.2,
                                                  label="Chinchilla-optimal")
        estimate = scaling.lecture_estimate()
        self.lecture_point = (estimate["D_inference"], estimate["D_pretrain"] / scaling.LECTURE_N_ACTIVE)
        curve_axis.plot(*self.lecture_point, "*", color=COLORS["balance"], ms=13,
                        label=f"lecture: 100B, {units.count(estimate['D_inference'], 'tokens')} "
                              f"({_factor(estimate['overtraining'])}; 100× on air)")
        self.your_point, = curve_axis.plot([], [], "o", color=COLORS["weights"], ms=8, label="optimum at your demand")
        curve_axis.legend(loc="upper left")
        cost_axis.set(xscale="log", yscale="log", xlabel="active parameters N (all reach the target loss)",
                      ylabel="compute (training-equivalent FLOPs)", title="training + inference at your demand")
        self.train_line, = cost_axis.plot([], [], color=COLORS["compute"], label="training 6 N D(N)")
        self.serve_line, = cost_axis.plot([], [], color=COLORS["kv"], label="inference 2 N D_inf × ineff")
        self.total_line, = cost_axis.plot([], [], color=COLORS["total"], lw=2.4, label="total")
        self.best_line = cost_axis.axvline(1, color=COLORS["weights"], lw=1.4, label="cheapest model")
        self.chin_line = cost_axis.axvline(1, color=COLORS["marker"], ls="-.", lw=1.2, label="Chinchilla-optimal")
        cost_axis.legend(loc="upper center", ncol=2, fontsize=7.5)
        self.axes = (curve_axis, cost_axis)
        _no_minor_ticks(curve_axis, cost_axis)
        # the bold total first: where inference dominates, its (patterned) line lies on the total and
        # must be drawn over it, not hidden under it (a learner's walkthrough saw only a stub)
        view.animate(self.curve, self.chinchilla_line, self.your_point, self.total_line, self.train_line,
                     self.serve_line, self.best_line, self.chin_line)
        return view

    def update(self, values):
        fit = scaling.get_fit(values["fit"])
        target_n, demand, waste = values["target_n"], values["demand"], values["inefficiency"]
        target, tokens_per_param, chinchilla_tpp, sizes, train = _demand_free_curves(fit.name, target_n, waste)
        self.curve.set_data(self.DEMANDS, tokens_per_param)
        self.chinchilla_line.set_ydata([chinchilla_tpp] * 2)
        best = scaling.inference_aware_optimum(target_loss=target, inference_tokens=demand, fit=fit,
                                               inefficiency=waste)
        self.your_point.set_data([demand], [best["tokens_per_param"]])
        serve = scaling.COST_INFERENCE(N_active=sizes, D_inference=demand, ineff=waste)
        self.train_line.set_data(sizes, train)
        self.serve_line.set_data(sizes, serve)
        self.total_line.set_data(sizes, train + serve)
        self.best_line.set_xdata([best["n_params"]] * 2)
        self.chin_line.set_xdata([best["chinchilla_n_params"]] * 2)
        # Both terms stay on the chart at the demand slider's ends (a tiny demand puts inference far below).
        low_cost = min(best["total_flops"] / 10, float(np.min(train)) / 2, float(serve[sizes.size // 3]))
        high_cost = max(low_cost * 1e5, best["total_flops"] * 1e3)
        # A decade to spare on each side when the limits must move: the target slider shifts every curve by a
        # third of a decade or more per stop, and limits that fit tightly changed on 16 of its 20 stops (each a
        # full redraw, so a held key outran the kernel); with the margin they hold for several stops.
        changed = base.set_limits(self.axes[1], base.steady_decades(self.axes[1].get_xlim(), sizes[0], sizes[-1], margin=1),
                                  base.steady_decades(self.axes[1].get_ylim(), low_cost, high_cost, slack=2, margin=1))
        tpp = np.asarray(tokens_per_param, dtype=float)
        changed |= base.set_limits(self.axes[0], (self.DEMANDS[0], self.DEMANDS[-1]),
                                   base.steady_decades(self.axes[0].get_ylim(), min(5.0, np.nanmin(tpp) / 1.5),
                                                       max(2e5, np.nanmax(tpp) * 1.5), slack=2))
        chin_tpp = best["chinchilla_tokens_per_param"]
        rows = [
            ("target loss", f"{target:.3f} nats/token ({fit.name})"),
            ("cheapest model", f"{units.count(best['n_params'])} params on {units.count(best['tokens'], 'tokens')}"),
            # against the fit's own optimum (18.1 for Hoffmann's), not the rule's 20 the lecture's row uses: say which
            ("its tokens per parameter", f"{best['tokens_per_param']:,.0f}  ({_factor(best['tokens_per_param'] / chin_tpp)} "
                                         f"the fit's Chinchilla {chin_tpp:.1f})"),
            ("its training ÷ inference compute", units.number(best['train_flops'] / best['inference_flops'])
             if demand > 0 else "-"),
            ("Chinchilla-optimal model", f"{units.count(best['chinchilla_n_params'])} params, "
                                         f"{chin_tpp:.1f} tokens/param"),
            ("total compute: cheapest vs Chinchilla", f"{units.power_of_ten(best['total_flops'])} vs {units.power_of_ten(best['chinchilla_total_flops'], 'FLOPs')}"),
            ("saving", f"{best['saving']:.1%}"),
            (f"lecture's model (100B on {units.count(scaling.lecture_estimate()['D_inference'], 'tokens')})", f"{self.lecture_point[1]:,.0f} tokens/param "
                                               f"({self.lecture_point[1] / 20:.0f}× of 20)"),
        ]
        return rows, changed
