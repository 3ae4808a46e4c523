"""Chapter 9's explorer: when data-parallel training turns communication-bound.

One device's gradient all-reduce (:data:`lecture_lib.collectives.DP_COMM`) against its backward pass
(:data:`lecture_lib.collectives.DP_COMPUTE`), over the tokens each device processes per step; the crossing is
:data:`lecture_lib.collectives.DP_CRITICAL_BATCH`. All three are the library's Formulas, evaluated over NumPy
arrays. The figure is created once and its artists updated in place (:class:`lecture_lib.explorers.base.FigureView`).
"""

from __future__ import annotations

import numpy as np

from lecture_lib import collectives, hardware, models, units

from . import base, sliders
from .plots import COLORS

MODELS = ("llama-3.1-8b", "llama-3-70b", "llama-3-405b")
"""Dense models whose gradients the all-reduce carries (the parameter count moves both lines, not their crossing)."""
CHIPS = ("A100", "H100", "H200", "B200", "GB200")
LINKS = ("scale-up (NVLink, inside a node)", "scale-out (the node's NICs, across nodes)")
GPUS_PER_NODE = 8
"""An HGX node's GPUs share a reduce-scatter inside the node, then each sends its 1/8 over its own NIC: the
across-node level carries the node's 8 NICs at once (scaling book gpus.md; Chapter 9 section 2)."""
TOKENS = (256, 512, 1024, 2048, 4096, 8192, 16384)
REPLICAS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def _link_bandwidth(chip, link: str) -> float:
    """One device's one-way bandwidth on the level the all-reduce is judged at (bytes/s)."""
    if link == LINKS[0]:
        return chip.scale_up_bandwidth
    return GPUS_PER_NODE * chip.scale_out_bandwidth


class CriticalBatchExplorer(base.Explorer):
    """Gradient all-reduce time and backward-pass time per training step, against the tokens per device.

    The all-reduce does not depend on the tokens (a flat line); the backward pass grows with them. Where
    they cross is the critical batch b*: above it the all-reduce hides behind the backward pass.
    """

    title = "Data parallelism: does the gradient all-reduce hide behind the backward pass?"

    def controls_(self):
        return {"model": sliders.dropdown("model (dense, BF16 gradients)", list(MODELS), "llama-3-70b"),
                "chip": sliders.dropdown("GPU", list(CHIPS), "H100"),
                "link": sliders.dropdown("link", list(LINKS), LINKS[0]),
                "dp": sliders.dropdown("ring of DP (GPUs on NVLink; nodes across nodes)", list(REPLICAS), 8),
                "tokens": sliders.log_slider("tokens per GPU per step b_dev", 1024, 64, 65536,
                                             stops=(64, 128) + TOKENS + (32768, 65536), whole=True)}

    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.8)
        axis.set(xscale="log", yscale="log", xlabel="tokens per GPU per step (b_dev)", ylabel="time per step (s)",
                 title="gradient all-reduce against the backward pass", xlim=(64, 65536))
        self.grid = np.logspace(np.log10(64), np.log10(65536), 200)
        self.compute, = axis.plot([], [], color=COLORS["compute"], lw=2.2, label="backward pass 4·b·N / FLOPs")
        self.comm, = axis.plot([], [], color=COLORS["memory"], lw=2.2, label="gradient all-reduce")
        self.star = axis.axvline(1.0, color=COLORS["balance"], ls="--", lw=1.2, label="critical b*")
        self.marker, = axis.plot([], [], "o", color=COLORS["marker"], ms=8, label="your tokens per GPU")
        axis.legend(loc="upper left", framealpha=0.9, frameon=True)
        self.axis = axis
        view.animate(self.compute, self.comm, self.star, self.marker)
        return view

    def update(self, values):
        model = models.get(values["model"])
        chip = hardware.get(values["chip"])
        dp, tokens = int(values["dp"]), float(values["tokens"])
        bandwidth = _link_bandwidth(chip, values["link"])
        flops = chip.flops["bf16"]
        n = float(model.params_total)
        compute = collectives.DP_COMPUTE(b_dev=self.grid, N_total=n, FLOPs=flops)
        comm = float(collectives.DP_COMM(N_total=n, bytes_grad=2, n_dp=dp, bw_link=bandwidth))
        star = collectives.dp_critical_batch(dp=dp, flops=flops, link_bandwidth=bandwidth)
        here = float(collectives.DP_COMPUTE(b_dev=tokens, N_total=n, FLOPs=flops))
        self.compute.set_data(self.grid, compute)
        self.comm.set_data([self.grid[0], self.grid[-1]], [comm, comm])
        self.star.set_xdata([star, star])
        self.marker.set_data([tokens], [max(here, comm)])
        low = min(float(compute[0]), comm) / 2
        high = max(float(compute[-1]), comm) * 2
        changed = base.set_limits(self.axis, (64, 65536), (10 ** np.floor(np.log10(low)), 10 ** np.ceil(np.log10(high))))
        verdict = ("compute-bound: the all-reduce hides behind the backward pass" if here >= comm
                   else "communication-bound: the GPUs wait on the all-reduce")
        across = values["link"] != LINKS[0]
        gpus = dp * (GPUS_PER_NODE if across else 1)
        # Across nodes the ring's members are nodes: each GPU all-reduces its 1/8 of the gradients over its own NIC,
        # so the node's 8 NICs at once carry the array (the bandwidth is the node's, the critical batch per GPU).
        link_row = ((f"link per node (one way, {GPUS_PER_NODE} GPUs' NICs)",
                     f"{units.bandwidth(bandwidth)} = {GPUS_PER_NODE} × {units.bandwidth(chip.scale_out_bandwidth)}")
                    if across else ("link per GPU (one way)", units.bandwidth(bandwidth)))
        ring_row = ("the ring", f"{dp:,} nodes of {GPUS_PER_NODE} GPUs: {gpus:,} replicas, one per GPU" if across
                    else f"{units.plural(dp, 'GPU')}, one replica each")
        rows = [link_row, ring_row,
                ("gradient all-reduce", units.seconds(comm)),
                ("backward pass at your b_dev", units.seconds(here)),
                ("critical tokens per GPU b*", f"{units.number(star)} tokens"),
                ("global batch", f"{units.count(gpus * tokens)} tokens ({gpus:,} GPUs × {units.number(tokens)})"),
                ("verdict", verdict)]
        return rows, changed
