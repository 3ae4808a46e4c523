"""Chapter 7's explorers: the avalanche curve, and activation memory per training strategy.

The cipher and network curves are measured by :mod:`lecture_lib.reversible` (vectorised over many
random inputs, cached per setting); the memory curves are its Formulas evaluated over arrays.
"""

from __future__ import annotations

import math

import numpy as np

from lecture_lib import hardware, models, reversible, units

from . import base, plots, sliders
from .plots import COLORS

MAX_ROUNDS = 16
HALF_BITS = 16
BLOCK_BITS = 2 * HALF_BITS
SAMPLES = 512          # random blocks per measurement: ±0.02 on a fraction near 1/2
NET_SAMPLES = 128
CIPHER_LABELS = [("toy cipher: S-box round function", "sbox"), ("random MLP as round function", "mlp")]


class AvalancheExplorer(base.Explorer):
    """Flip one input bit; how many output bits flip after r rounds? (lecture 02:07:56)

    Left: the fraction of flipped output bits against rounds for the toy Feistel cipher, and the same
    experiment on two random networks of equal width (inputs ±1, outputs read as signs): a residual
    stream and a plain deep net. Right: for the chosen rounds, each output bit's flip probability
    (the strict avalanche criterion wants all of them at 1/2).
    """

    title = "The avalanche property: ciphers vs networks (lecture 02:07:56)"

    def controls_(self):
        return {
            "cipher": sliders.dropdown("round function", CIPHER_LABELS, "sbox"),
            "rounds": sliders.int_slider("rounds / layers", 3, 1, MAX_ROUNDS),
            "bit": sliders.int_slider("input bit flipped", 0, 0, BLOCK_BITS - 1),
            "scale": sliders.log_slider("network weight scale", 0.3, 0.05, 8.0, steps_per_decade=10),
        }

    def setup(self):
        self._ciphers = {key: reversible.toy_cipher(rounds=MAX_ROUNDS, half_bits=HALF_BITS, round_function=key,
                                                    seed=7) for _, key in CIPHER_LABELS}
        self._profiles: dict = {}
        self._nets: dict = {}
        view, (curve_axis, bits_axis) = base.new_view(10.5, 3.8, ncols=2)
        rounds = np.arange(MAX_ROUNDS + 1)
        curve_axis.set(xlabel="rounds (cipher) or layers (networks)", ylabel="fraction of output bits flipped",
                       title="one input bit flipped", xlim=(0, MAX_ROUNDS), ylim=(0, 0.8))
        curve_axis.axhline(0.5, color=COLORS["balance"], ls=":", lw=1.2, label="1/2: looks random")
        self.cipher_line, = curve_axis.plot(rounds, rounds * 0.0, "o-", ms=3, color=COLORS["total"],
                                            label="Feistel cipher")
        self.residual_line, = curve_axis.plot(rounds, rounds * 0.0, color=COLORS["compute"],
                                              label="residual net (x + f(LN x))")
        self.plain_line, = curve_axis.plot(rounds, rounds * 0.0, color=COLORS["memory"], label="plain net tanh(Wx)")
        self.marker = curve_axis.axvline(1, color=COLORS["marker"], lw=1.0)
        curve_axis.legend(loc="upper center", ncol=2, fontsize=8, framealpha=0.9, frameon=True)
        bits_axis.set(xlabel="output bit", ylabel="P(this bit flips)", title="each output bit after r rounds",
                      xlim=(-0.7, BLOCK_BITS - 0.3), ylim=(0, 1.02))
        bits_axis.axhline(0.5, color=COLORS["balance"], ls=":", lw=1.2)
        self.bars = bits_axis.stairs(np.zeros(BLOCK_BITS), np.arange(BLOCK_BITS + 1) - 0.5, fill=True,
                                     color=COLORS["total"], alpha=0.6)
        self.bits_title = bits_axis.text(0.02, 0.96, "", transform=bits_axis.transAxes, va="top", fontsize=9)
        view.animate(self.cipher_line, self.residual_line, self.plain_line, self.marker, self.bits_title, self.bars)
        return view

    def profile(self, cipher_key: str, bit: int) -> np.ndarray:
        """The cached avalanche profile (rounds + 1, block bits) of one cipher and input bit."""
        key = (cipher_key, bit)
        if key not in self._profiles:
            self._profiles[key] = reversible.avalanche_profile(self._ciphers[cipher_key], bit=bit,
                                                               n_samples=SAMPLES, seed=1)
        return self._profiles[key]

    def networks(self, scale: float, bit: int) -> dict:
        """The two networks' avalanche measurements at one weight scale and input bit (cached)."""
        key = (round(scale, 9), bit)
        if key not in self._nets:
            self._nets[key] = {kind: reversible.network_avalanche(kind=kind, depth=MAX_ROUNDS, width=BLOCK_BITS,
                                                                  weight_scale=scale, bit=bit, n_samples=NET_SAMPLES,
                                                                  seed=3)
                               for kind in reversible.NETWORK_KINDS}
        return self._nets[key]

    def update(self, values):
        rounds, bit = values["rounds"], values["bit"]
        profile = self.profile(values["cipher"], bit)
        curve = profile.mean(axis=1)
        self.cipher_line.set_ydata(curve)
        nets = self.networks(values["scale"], bit)
        self.residual_line.set_ydata(nets["residual"]["flip_fraction"])
        self.plain_line.set_ydata(nets["plain"]["flip_fraction"])
        self.marker.set_xdata([rounds, rounds])
        self.bars.set_data(profile[rounds])
        self.bits_title.set_text(f"input bit {bit}, {rounds} round{'s' if rounds > 1 else ''}")
        reached = reversible.rounds_to_avalanche(curve, threshold=0.45)
        rows = [
            (f"cipher: bits flipped after {units.plural(rounds, 'round')}", f"{curve[rounds]:.3f}  (ideal 0.500; {SAMPLES} random blocks, ±0.02)"),
            ("cipher: rounds until ≥ 0.45", "not within 16" if reached is None else f"{reached}"),
            ("cipher: worst output bit |P − 1/2|", f"{np.max(np.abs(profile[rounds] - 0.5)):.3f}"),
            (f"residual net: signs flipped at depth {rounds}", f"{nets['residual']['flip_fraction'][rounds]:.3f}"),
            (f"plain net: signs flipped at depth {rounds}", f"{nets['plain']['flip_fraction'][rounds]:.3f}"),
            ("|Δ out| / |Δ in|: residual, plain", f"{units.power_of_ten(nets['residual']['amplification'][rounds])}, "
                                                 f"{units.power_of_ten(nets['plain']['amplification'][rounds])}"),
        ]
        return rows, False


def _decade_limits(low: float, high: float) -> tuple[float, float]:
    return 10 ** math.floor(math.log10(low)), 10 ** math.ceil(math.log10(high))


class ActivationMemoryExplorer(base.Explorer):
    """Activation memory against depth for three training strategies, and what each costs in FLOPs.

    Log-log axes make the exponents visible: standard training has slope 1 (∝ L), checkpointing at
    its best segment length slope 1/2 (∝ √L), reversible layers slope 0 (lecture 02:12:21).
    """

    title = "Activation memory vs depth: standard, checkpointing, reversible (lecture 02:12:21)"
    DEPTHS = np.unique(np.geomspace(1, 256, 200).round())
    # Depth stops: the whole numbers of the finest round-number series (1-8 layer by layer but 7, then 10 a decade),
    # the spacing of the figure's log axis. A slider over every depth (256 one-layer steps) left a learner's slow
    # drag to the kernel at each step after a sequence-length change (the figure froze for 2 s); these 22 stops are
    # predicted whole, and a typed depth between them is kept.
    DEPTH_STOPS = tuple(s for s in sliders.nice_stops(80, 1, 256, steps_per_decade=10) if s == round(s))
    STYLE = {"standard": (COLORS["weights"], "standard: store every layer"),
             "checkpoint": (COLORS["memory"], "checkpoint every √(L/c) layers"),
             "reversible": (COLORS["compute"], "reversible layers")}

    def controls_(self):
        names = models.names()
        return {
            "model": sliders.dropdown("model (sets d_model)", names, "llama-3-70b"),
            "n_layers": sliders.log_slider("depth L (layers)", 80, 1, 256, whole=True, stops=self.DEPTH_STOPS),
            "len_seq": sliders.log_slider("sequence length (tokens)", 8192, 512, 1_048_576, steps_per_decade=10),
            "precision": sliders.dropdown("activation format", list(reversible.BYTES_PER_ACTIVATION), "bf16"),
            "chip": sliders.dropdown("chip (HBM line)", hardware.chip_names(), "H100"),
        }

    def setup(self):
        view, (memory_axis, trade_axis) = base.new_view(10.5, 3.8, ncols=2)
        memory_axis.set(xscale="log", yscale="log", xlabel="depth L (layers)", ylabel="activation memory (bytes)",
                        title="one sequence, one training step", xlim=(1, 256))
        self.lines = {}
        self.points = {}
        for strategy, (color, label) in self.STYLE.items():
            self.lines[strategy], = memory_axis.plot([], [], color=color, label=label)
            self.points[strategy], = memory_axis.plot([], [], "o", color=color, ms=6)
        self.hbm = memory_axis.axhline(1, color=COLORS["total"], ls="--", lw=1.0, label="HBM of one chip")
        self.marker = memory_axis.axvline(1, color=COLORS["marker"], lw=1.0)
        memory_axis.legend(loc="upper left", fontsize=8, framealpha=0.9, frameon=True)
        trade_axis.set(yscale="log", xlabel="training FLOPs per token (× the standard 6·N)",
                       ylabel="activation memory (bytes)", title="the trade at your depth", xlim=(0.9, 1.5))
        self.trade = {}
        for strategy, (color, label) in self.STYLE.items():
            self.trade[strategy], = trade_axis.plot([], [], "o", color=color, ms=10, label=label.split(":")[0])
        trade_axis.legend(loc="upper right", fontsize=8)
        self.axes = (memory_axis, trade_axis)
        view.animate(*self.lines.values(), *self.points.values(), self.hbm, self.marker, *self.trade.values())
        return view

    def update(self, values):
        model = models.get(values["model"])
        chip = hardware.get(values["chip"])
        depth = values["n_layers"]
        common = dict(d_model=model.d_model, len_seq=values["len_seq"],
                      bytes_per_value=reversible.BYTES_PER_ACTIVATION[values["precision"]])
        at_depth, curves = {}, {}
        for strategy in reversible.STRATEGIES:
            curves[strategy] = reversible.activation_memory(strategy=strategy, n_layers=self.DEPTHS, **common)
            at_depth[strategy] = reversible.activation_memory(strategy=strategy, n_layers=depth, **common)
            self.lines[strategy].set_data(self.DEPTHS, np.broadcast_to(curves[strategy], self.DEPTHS.shape))
            self.points[strategy].set_data([depth], [at_depth[strategy]])
        n_active = model.params_active * depth / model.n_layers     # parameters scale with depth
        flops = {s: reversible.training_flops_per_token(strategy=s, n_active=n_active) for s in reversible.STRATEGIES}
        for strategy in reversible.STRATEGIES:
            self.trade[strategy].set_data([flops[strategy] / flops["standard"]], [at_depth[strategy]])
        self.hbm.set_ydata([chip.hbm_capacity] * 2)
        self.marker.set_xdata([depth, depth])
        # Every preset chip's HBM lies inside [1e10, 1e12], so switching chips never moves the axes; and the
        # limits only move when the curves leave them or shrink far inside (fewer full redraws).
        low = min(float(np.min(curves["reversible"])), float(np.min(curves["checkpoint"])), 1e10)
        high = max(float(np.max(curves["standard"])), 1e12)
        current = self.axes[0].get_ylim()
        if current[0] <= low and high <= current[1] and current[1] / current[0] <= 1e3 * high / low:
            limits = current
        else:
            limits = _decade_limits(low / 3, high * 3)
        changed = base.set_limits(self.axes[0], (1, 256), limits)
        changed |= base.set_limits(self.axes[1], (0.9, 1.5), limits)
        k_best = reversible.K_SEGMENT_BEST(n_layers=depth, act_values=reversible.ACTIVATION_VALUES_PER_LAYER)
        rows = [(f"{strategy} at L = {depth}",
                 f"{units.bytes_(at_depth[strategy])}  ·  {flops[strategy] / 1e12:.3g} TFLOP/token "
                 f"(+{flops[strategy] / flops['standard'] - 1:.0%})") for strategy in reversible.STRATEGIES]
        rows += [
            ("best checkpoint segment √(L/c)", f"{k_best:.2f} layers"),
            ("standard / reversible memory", units.factor(at_depth['standard'] / at_depth['reversible'])),
            (f"{chip.name} HBM", f"{units.bytes_(chip.hbm_capacity)}: standard "
                                 f"{'fits' if at_depth['standard'] <= chip.hbm_capacity else 'does not fit'}",
             "ok" if at_depth["standard"] <= chip.hbm_capacity else "bad"),
            ("N_active at this depth (scaled)", units.count(n_active, "params")),
        ]
        return rows, changed


PHASE_COLORS = {"forward": COLORS["compute"], "recompute": COLORS["memory"], "backward": COLORS["weights"]}


def memory_timeline_figure(*, n_layers: int = 16, k_seg: int = 4):
    """The lecture's activation-memory drawing (02:12:21), for three strategies side by side.

    Bars are the steps of one training step (forward, recompute, backward through one layer each);
    their height is the activation memory held, in units of one layer's activations. Returns the Figure.
    """
    from lecture_lib import validate

    n_layers = validate.integer("n_layers", n_layers, maximum=reversible.MAX_DEPTH)
    k_seg = validate.integer("k_seg", k_seg, maximum=reversible.MAX_DEPTH)
    figure, axes = plots.new_figure(10.5, 3.0, ncols=3)
    timelines = {strategy: reversible.memory_timeline(strategy=strategy, n_layers=n_layers,
                                                      k_seg=k_seg if strategy == "checkpoint" else None)
                 for strategy in reversible.STRATEGIES}
    top = max(float(t["held"].max()) for t in timelines.values()) * 1.1
    width = max(len(t["held"]) for t in timelines.values())
    titles = {"standard": "standard", "checkpoint": f"checkpoint every {k_seg} layers", "reversible": "reversible"}
    for axis, (strategy, timeline) in zip(axes, timelines.items()):
        steps = np.arange(len(timeline["held"]))
        axis.bar(steps, timeline["held"], width=0.9, color=[PHASE_COLORS[p] for p in timeline["phase"]])
        axis.set(xlim=(-1, width), ylim=(0, top), xlabel="step (one layer each)",
                 title=f"{titles[strategy]} (peak {units.number(timeline['held'].max())})")
        axis.grid(False)
    axes[0].set_ylabel("memory held (layers' worth)")
    from matplotlib.patches import Patch

    axes[2].legend(handles=[Patch(color=c, label=p) for p, c in PHASE_COLORS.items()], loc="upper right")
    figure.subplots_adjust(bottom=0.18, top=0.88, left=0.07, right=0.99, wspace=0.25)
    return figure
