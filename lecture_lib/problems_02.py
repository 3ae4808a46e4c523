"""Chapter 2's practice problems (solutions/02_moe_across_racks.ipynb).

Every expected value is computed from the library's presets, Formulas and the NumPy MoE, with the
inputs the problem statement names; see :mod:`lecture_lib.checks` for how answers are judged.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from . import hardware, models, moe
from .checks import Mistake, Problem, _register
from .symbols import bw_out


def _kimi_experts_per_gpu() -> float:
    kimi = models.get("kimi-k2")
    return float(moe.layout(n_experts=kimi.n_routed_experts, n_gpus=hardware.get_system("GB200 NVL72").n_chips)
                 ["experts_per_gpu"])


def _deepseek_bytes(*, k: int | None = None, shared: bool = False, directions: int = 2) -> float:
    deepseek = models.get("deepseek-v3")
    both = moe.a2a_bytes_per_token(deepseek, bytes_per_value=1, k=k, shared_travels=shared)
    return both * directions / 2


def _gb300_link_ratio() -> float:
    return moe.link_ratio_of("GB300 NVL72")


TOKENS_PER_GPU = 128   # problem 2.5


def _two_rack_time(part: str = "total", racks: int = 2) -> float:
    rack = hardware.get_system("GB200 NVL72")
    times = moe.a2a_layer_time(tokens_per_gpu=TOKENS_PER_GPU, bytes_per_token=_deepseek_bytes(), racks=racks,
                               scale_up_bw=rack.chip.scale_up_bandwidth, scale_out_bw=rack.scale_out_bandwidth)
    if part == "sum":
        return float(times["inside"] + times["cross"])
    if part == "all_out":
        return TOKENS_PER_GPU * _deepseek_bytes() / rack.scale_out_bandwidth
    return float(times[part])


FIT_CANDIDATES = ("HGX H100", "HGX H200", "HGX B200", "GB200 NVL72")


def _smallest_that_fits() -> str:
    fitting = [name for name in FIT_CANDIDATES
               if moe.scale_up_fit("kimi-k2", name, bytes_per_param=1, weight_share=0.5)["fits"]]
    if not fitting:
        raise RuntimeError("problem 2.6 needs at least one system that fits")
    return min(fitting, key=lambda name: hardware.get_system(name).hbm_capacity)


def _slowdown(ratio: float | None = None, racks: int = 4) -> float:
    ratio = moe.link_ratio_of("GB200 NVL72") if ratio is None else ratio
    return moe.A2A_SLOWDOWN(n_racks=racks, link_ratio=ratio)


def _kv_share(bytes_param: float = 1.0, weights: bool = False) -> float:
    rack = hardware.get_system("GB200 NVL72")
    weight_share = 5e12 * bytes_param / rack.hbm_capacity
    return weight_share if weights else 1 - weight_share


def tiny_router_layer() -> tuple[moe.TinyMoE, np.ndarray]:
    """Problem 2.9's layer and tokens: 16 experts, 2 per GPU, 2 GPUs per rack, top-2; 4,000 tokens."""
    layer = moe.TinyMoE.random(d_model=16, d_ff=32, n_experts=16, k=2, experts_per_gpu=2, gpus_per_rack=2, seed=7)
    tokens = np.random.default_rng(2026).normal(size=(4000, 16))
    return layer, tokens


def _busiest_gpu() -> float:
    layer, tokens = tiny_router_layer()
    loads = layer.route(tokens).gpu_loads()
    return float(loads.max() / loads.mean())


def _busiest_expert() -> float:
    layer, tokens = tiny_router_layer()
    counts = np.bincount(layer.route(tokens).experts.ravel(), minlength=layer.n_experts)
    return float(counts.max() / counts.mean())


def figure_routing() -> moe.Routing:
    """Problem 2.10's routing: the default TinyMoE (seed 1) on 64 random tokens (seed 5)."""
    layer = moe.TinyMoE.random(seed=1)
    _, routing = layer.forward(np.random.default_rng(5).normal(size=(64, layer.d_model)))
    return routing


FIGURE_TOKENS = 12


def _red_lines() -> float:
    return float(figure_routing().crosses[:FIGURE_TOKENS].sum())


def _bandwidth_needed() -> sp.Expr:
    return sp.solve(sp.Eq(moe.T_A2A_CROSS.rhs, moe.EXPERT_COMPUTE_TIME.rhs), bw_out)[0]


_register("2.1", Problem(
    "Experts per GPU for Kimi K2", "number", _kimi_experts_per_gpu, rtol=0.02, unit="experts",
    mistakes=(Mistake(lambda: models.get("kimi-k2").n_routed_experts / 72,
                      "That spreads the experts over all 72 GPUs, which does not divide evenly. Use only as "
                      "many GPUs as give every GPU the same whole number of experts."),)))
_register("2.2", Problem(
    "Bytes a DeepSeek-V3 token moves per MoE layer", "number", _deepseek_bytes, rtol=0.02, unit="bytes",
    mistakes=(Mistake(lambda: _deepseek_bytes(k=32),
                      "That uses the lecture's 32 experts per token. DeepSeek-V3's config routes each token to "
                      "fewer: read it from the model preset."),
              Mistake(lambda: _deepseek_bytes(shared=True),
                      "That counts the shared expert too. This problem asks for the routed experts only."),
              Mistake(lambda: _deepseek_bytes(directions=1),
                      "That is the dispatch alone. The experts' results come back the same way (combine)."))))
_register("2.3", Problem(
    "Derive the cross-rack share", "expression", lambda: moe.CROSS_RACK_FRACTION.rhs,
    wrong_hint="A destination GPU is any of the R·G GPUs with equal probability; G of them share the "
               "sender's rack. One minus that probability leaves."))
_register("2.4", Problem(
    "How much slower is scale-out on a GB300 NVL72?", "number", _gb300_link_ratio, rtol=0.02,
    mistakes=(Mistake(lambda: 2 * _gb300_link_ratio(),
                      "NVIDIA's NVLink figure counts both directions; the NIC figure is one direction. Compare "
                      "like with like (the presets store one direction for both)."),)))
_register("2.5", Problem(
    "All-to-all time of one layer over two racks", "number", _two_rack_time, rtol=0.03, unit="seconds",
    mistakes=(Mistake(lambda: _two_rack_time(racks=1),
                      "That is the time inside a single rack. Over two racks, half the traffic crosses."),
              Mistake(lambda: _two_rack_time("all_out"),
                      "That sends every byte over scale-out. Only the copies bound for the other rack cross."),
              Mistake(lambda: _two_rack_time("sum"),
                      "Close, but NVLink and the NIC work at the same time: the layer waits for the slower "
                      "share, not for the sum."))))
_register("2.6", Problem(
    "The smallest box that holds Kimi K2", "choice", _smallest_that_fits, options=FIT_CANDIDATES,
    alternates={"HGX H100": ("h100", "dgx h100", "8 h100"), "HGX H200": ("h200", "dgx h200", "8 h200"),
                "HGX B200": ("b200", "dgx b200", "8 b200"), "GB200 NVL72": ("nvl72", "gb200", "gb200nvl72")},
    wrong_hint="Compare total parameters × 1 byte with half of each system's HBM."))
_register("2.7", Problem(
    "Four racks against one", "number", _slowdown, rtol=0.02,
    mistakes=(Mistake(lambda: _slowdown(ratio=8),
                      "That uses the board's 8×. Take the link figures of the GB200 NVL72 preset."),
              Mistake(lambda: moe.link_ratio_of("GB200 NVL72"),
                      "That would be true if every byte left its rack. With four racks, what share stays?"))))
_register("2.8", Problem(
    "Room for KV cache next to a 5 T model", "number", _kv_share, rtol=0.02, unit="(a fraction of HBM)",
    mistakes=(Mistake(lambda: _kv_share(weights=True),
                      "That is the share the weights take. The question asks what is left."),
              Mistake(lambda: _kv_share(bytes_param=2),
                      "That stores the weights in BF16; the problem says FP8."))))
_register("2.9", Problem(
    "A real router is not uniform", "number", _busiest_gpu, rtol=0.01,
    mistakes=(Mistake(lambda: 1.0,
                      "That is what uniform routing would give. Measure what this router actually does."),
              Mistake(_busiest_expert,
                      "That is the busiest expert. The question asks about GPUs, which hold two experts each."))))
_register("2.10", Problem(
    "Read the routing figure", "number", _red_lines, rtol=0.02, unit="copies",
    wrong_hint="Count the red lines, or let the Routing object count them for you."))
_register("2.11", Problem(
    "How fast must scale-out be?", "expression", _bandwidth_needed,
    wrong_hint="Set the cross-rack time T_A2A_CROSS equal to the expert compute time and solve for bw_out."))
