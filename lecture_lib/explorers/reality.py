"""Chapter 8's explorers: the weights an MoE step really reads, and the dataset against its bounds.

Curves come from :mod:`lecture_lib.roofline`'s Formulas over NumPy arrays; dataset bounds from
:mod:`lecture_lib.measurements`, which computes them through the public API. Figures are created once
and their artists updated in place (:class:`lecture_lib.explorers.base.FigureView`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lecture_lib import measurements, models, roofline, units

from . import base, sliders
from .plots import COLORS

MAX_TAU = 5.0       # the tokens-per-step slider's top (speculative decoding rarely keeps more)
SECOND_LOOK = 1.3   # "a figure within ~1.3x of its bound deserves a second look" (Chapter 8)


def moe_names() -> list[str]:
    """The MoE model presets (the only ones whose weight reads depend on the batch)."""
    return [name for name in models.names() if models.get(name).is_moe]


class ExpectedExpertsExplorer(base.Explorer):
    """Parameters one decode step reads against the tokens routed in it, for an MoE preset.

    The curve is :data:`roofline.PARAMS_READ` (expected experts touched, Chapter 8); the lecture's
    "read every weight" is its ceiling, N_total, and batch 1 reads N_fixed + k experts per layer.
    """

    title = "How much of an MoE does one step read? (expected experts touched)"

    def controls_(self):
        names = moe_names()
        return {"model": sliders.dropdown("model", names, "deepseek-v3" if "deepseek-v3" in names else names[0]),
                "tokens": sliders.log_slider("tokens routed per step", 8, 1, 100_000)}

    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.8)
        axis.set(xscale="log", xlabel="tokens routed per step (B · n_verify)",
                 ylabel="share of N_total read", title="weights read per decode step", ylim=(0, 1.05),
                 xlim=(1, 100_000))
        self.grid = np.logspace(0, 5, 300)
        self.curve, = axis.plot([], [], color=COLORS["weights"], lw=2.2, label="E(1 − (1 − k/E)^B) experts")
        self.ceiling = axis.axhline(1.0, color=COLORS["total"], ls="--", lw=1.2, label="lecture: all of N_total")
        self.floor = axis.axhline(0.0, color=COLORS["compute"], ls=":", lw=1.2, label="B = 1: k experts")
        self.marker, = axis.plot([], [], "o", color=COLORS["marker"], ms=8, label="your tokens")
        axis.legend(loc="lower right", framealpha=0.9, frameon=True)
        view.animate(self.curve, self.floor, self.marker)
        return view

    def update(self, values):
        model = models.get(values["model"])
        tokens = values["tokens"]
        share = roofline.params_read(model, tokens=self.grid) / model.params_total
        here = roofline.params_read(model, tokens=tokens)
        touched = roofline.expected_experts(n_experts=model.n_routed_experts, k=model.experts_per_token,
                                            tokens=tokens)
        self.curve.set_data(self.grid, share)
        self.floor.set_ydata([share[0], share[0]])
        self.marker.set_data([tokens], [here / model.params_total])
        rows = [("model", f"{model.name}: {model.n_routed_experts} experts, {model.experts_per_token} active per token"),
                ("experts touched per MoE layer", f"{units.number(touched)} of {model.n_routed_experts}"),
                ("parameters read", f"{units.count(here)} of {units.count(model.params_total)} "
                                    f"({_share(here / model.params_total)})"),
                ("not read this step", _unread(model, tokens, here)),
                ("at batch 1", f"{units.count(roofline.params_read(model, tokens=1))}"),
                ("tokens for 90% of the experts",
                 f"{np.log(0.1) / np.log(1 - model.experts_per_token / model.n_routed_experts):,.0f}")]
        return rows, False


def _share(fraction: float) -> str:
    """A share as a percentage that never rounds a part up to the whole: 99.9%, not 100%, when something is left."""
    return f"{fraction:.1%}" if 0.995 <= fraction < 1 else f"{fraction:.0%}"


def _unread(model, tokens: float, read: float) -> str:
    """What a step leaves in HBM, in two parts: experts no token picked, and input-embedding rows no token looked up
    (the step reads one row of the table per distinct token, next in the chapter), so the two readouts above agree."""
    whole_table = roofline.params_read(model, tokens=tokens, embedding_rows=False)
    experts, rows = model.params_total - whole_table, whole_table - read
    return (f"{units.count(max(experts, 0.0))} in experts no token picked, {units.count(max(rows, 0.0))} in "
            "embedding-table rows no token looked up (a lookup reads one row per token)")


class RealityExplorer(base.Explorer):
    """The dataset: measured tokens/s against the course's bound, one point per published figure.

    Points on the diagonal would reach the bound; the dotted line is 1/1.3 of it, the zone where a
    figure deserves a second look. The τ slider re-computes the selected row's bound with τ tokens
    accepted per step (speculative decoding, MTP); it changes only decode, serving and latency rows.
    """

    title = "Roofline versus reality: published serving figures against their bounds"

    def controls_(self):
        keys = [row.key for row in measurements.MEASUREMENTS]
        return {"row": sliders.dropdown("measurement", keys, keys[0]),
                "tau": sliders.slider("tokens per step τ", 1.0, 1.0, MAX_TAU, 0.1),   # 0.1: the 2.6 section 8 derives is a stop
                "second_look": sliders.slider("second look within (×)", SECOND_LOOK, 1.05, 3.0, 0.05)}

    def setup(self):
        view, (axis,) = base.new_view(6.4, 4.4)
        rows = measurements.MEASUREMENTS
        bounds = np.array([row.bound for row in rows])
        measured = np.array([row.measured for row in rows])
        # τ up to MAX_TAU lifts a decode bound up to MAX_TAU times: keep the moved point on the chart too
        low, high = 10 ** np.floor(np.log10(min(bounds.min(), measured.min()))), \
            10 ** np.ceil(np.log10(max(MAX_TAU * bounds.max(), measured.max())))
        self.span = np.array([low, high])
        axis.set(xscale="log", yscale="log", xlim=(low, high), ylim=(low, high),
                 xlabel="bound the course computes (tokens/s)", ylabel="published (tokens/s)",
                 title="each point is one published figure")
        colors = {"decode": COLORS["weights"], "prefill": COLORS["compute"], "serving": COLORS["kv"],
                  "latency": COLORS["marker"]}
        for kind, color in colors.items():
            mask = np.array([row.kind == kind for row in rows])
            if mask.any():
                axis.plot(bounds[mask], measured[mask], "o", color=color, ms=6, alpha=0.75, label=kind)
        axis.plot(self.span, self.span, color=COLORS["total"], lw=1.5, label="measured = bound")
        self.look, = axis.plot([], [], color=COLORS["balance"], ls=":", lw=1.5, label="bound ÷ second-look factor")
        self.selected, = axis.plot([], [], "s", mfc="none", mec="black", ms=14, mew=2, label="selected")
        self.with_tau, = axis.plot([], [], "x", color="black", ms=10, mew=2, label="selected, bound with τ")
        axis.legend(loc="upper left", framealpha=0.9, frameon=True, fontsize=8)
        view.animate(self.look, self.selected, self.with_tau)
        return view

    def update(self, values):
        row = measurements.get(values["row"])
        tau, look = values["tau"], values["second_look"]
        moved = dataclasses.replace(row, tokens_per_step=tau) if row.kind != "prefill" else row
        bound_tau = moved.bound
        low, high = self.span      # the dotted line y = x / look, drawn where both ends are on the chart
        self.look.set_data([low * look, high], [low, high / look])
        self.selected.set_data([row.bound], [row.measured])
        self.with_tau.set_data([bound_tau], [row.measured])
        efficiency = row.measured / row.bound
        verdict = ("beats its bound: " + row.beats_bound_because if efficiency > 1
                   else "within the second-look zone: check the setup and the bound's assumptions"
                   if efficiency * look >= 1 else "well below its bound")
        # readout_table escapes every value: plain text here, never markup
        rows = [("figure", f"{row.model} on {row.deployment.name}, {row.kind}, per {row.per}"),
                ("published", f"{units.rate(row.measured)} ({row.date})"),
                (f"bound with τ = {round(tau, 2):g}", f"{units.rate(bound_tau)} → "
                 f"{row.measured / bound_tau:.0%} of it" + ("" if row.kind != "prefill"
                                                            else " (τ does not apply to prefill)")),
                ("verdict (τ = 1)", f"{efficiency:.0%} of the bound: {verdict}"
                 + (" (a lower limit: the bound leaves out a cost the publisher did not state)"
                    if row.lower_limit else "")),
                ("quote", f"“{row.quote[:160]}”"),
                ("source", row.source),
                ("assumed", row.assumed or "nothing beyond the quote")]
        return rows, False
