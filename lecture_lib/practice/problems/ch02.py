"""Chapter 2's practice problems (solutions/02_moe_across_racks.ipynb).

Every expected value is computed from the library's presets, Formulas and the NumPy MoE, with the
inputs the problem statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from lecture_lib import hardware, models, moe, pipeline
from lecture_lib.symbols import bw_out

from ..problem_data import figure_routing, tiny_router_layer
from ..registry import Mistake, Problem, register


def _kimi_experts_per_gpu() -> float:
    kimi = models.get("kimi-k2")
    return float(moe.layout(n_experts=kimi.n_routed_experts, n_gpus=hardware.get_system("GB200 NVL72").n_chips)
                 ["experts_per_gpu"])


def _deepseek_bytes(*, k: int | None = None, shared: bool = False, directions: int = 2,
                    bytes_per_value: float = 1) -> float:
    deepseek = models.get("deepseek-v3")
    both = moe.a2a_bytes_per_token(deepseek, bytes_per_value=bytes_per_value, k=k, shared_travels=shared)
    return both * directions / 2


def _gb300_link_ratio() -> float:
    return moe.link_ratio_of("GB300 NVL72")


TOKENS_PER_GPU = 128   # problem 2.5


def _two_rack_time(part: str = "total", racks: int = 2, **bytes_options) -> float:
    """Problem 2.5's time; ``bytes_options`` go to :func:`_deepseek_bytes` (for the known slips)."""
    rack = hardware.get_system("GB200 NVL72")
    per_token = _deepseek_bytes(**bytes_options)
    times = moe.a2a_layer_time(tokens_per_gpu=TOKENS_PER_GPU, bytes_per_token=per_token, racks=racks,
                               scale_up_bw=rack.chip.scale_up_bandwidth, scale_out_bw=rack.scale_out_bandwidth)
    if part == "sum":
        return float(times["inside"] + times["cross"])
    if part == "all_out":
        return TOKENS_PER_GPU * per_token / rack.scale_out_bandwidth
    return float(times[part])


FIT_CANDIDATES = ("HGX H100", "HGX H200", "HGX B200", "GB200 NVL72")


def _smallest_that_fits() -> str:
    fitting = [name for name in FIT_CANDIDATES
               if moe.scale_up_fit("kimi-k2", name, bytes_per_param=1, weight_share=0.5)["fits"]]
    if not fitting:
        raise RuntimeError("problem 2.6 needs at least one system that fits")
    return min(fitting, key=lambda name: hardware.get_system(name).hbm_capacity)


def _slowdown(ratio: float | None = None, racks: int = 4) -> float:   # problem 2.7
    ratio = moe.link_ratio_of("GB200 NVL72") if ratio is None else ratio
    return moe.A2A_SLOWDOWN(n_racks=racks, link_ratio=ratio)


def _kv_share(bytes_param: float = 1.0, weights: bool = False, system: str = "GB200 NVL72") -> float:
    rack = hardware.get_system(system)
    weight_share = 5e12 * bytes_param / rack.hbm_capacity
    return weight_share if weights else 1 - weight_share


def _busiest_gpu() -> float:
    layer, tokens = tiny_router_layer()
    loads = layer.route(tokens).gpu_loads()
    return float(loads.max() / loads.mean())


def _busiest_over_sum() -> float:
    """2.9's common slip: the busiest GPU's load over the sum of all loads, not their mean (1/n_gpus of the answer)."""
    layer, tokens = tiny_router_layer()
    loads = layer.route(tokens).gpu_loads()
    return float(loads.max() / loads.sum())


def _busiest_expert() -> float:
    layer, tokens = tiny_router_layer()
    counts = np.bincount(layer.route(tokens).experts.ravel(), minlength=layer.n_experts)
    return float(counts.max() / counts.mean())


def _busiest_rack() -> float:
    layer, tokens = tiny_router_layer()
    routing = layer.route(tokens)
    counts = np.bincount(routing.racks.ravel())
    return float(counts.max() / counts.mean())


def _busiest_gpu_in_tokens() -> float:
    """Tokens (not copies) per GPU: a token whose two experts share a GPU counted once."""
    layer, tokens = tiny_router_layer()
    routing = layer.route(tokens)
    n_gpus = routing.placement.n_gpus
    hit = np.zeros((routing.gpus.shape[0], n_gpus), dtype=bool)
    hit[np.arange(routing.gpus.shape[0])[:, None], routing.gpus] = True
    counts = hit.sum(axis=0)
    return float(counts.max() / counts.mean())


FIGURE_TOKENS = 12


def _red_lines(part: str = "cross", tokens: int | None = FIGURE_TOKENS) -> float:
    crosses = figure_routing().crosses[:tokens]
    if part == "tokens":            # tokens with at least one red line
        return float(crosses.any(axis=1).sum())
    if part == "stay":              # the green lines
        return float((~crosses).sum())
    return float(crosses.sum())


def _bandwidth_needed() -> sp.Expr:
    return sp.solve(sp.Eq(moe.T_A2A_CROSS.rhs, moe.EXPERT_COMPUTE_TIME.rhs), bw_out)[0]


register("2.1", Problem(
    "Experts per GPU for Kimi K2", "number", _kimi_experts_per_gpu, rtol=0.02, unit="experts",
    mistakes=(Mistake(lambda: models.get("kimi-k2").n_routed_experts / 72,
                      "That spreads the experts over all 72 GPUs, which does not divide evenly. Use only as "
                      "many GPUs as give every GPU the same whole number of experts."),
              Mistake(lambda: float(moe.expert_parallel_degree(n_experts=models.get("kimi-k2").n_routed_experts,
                                                               n_gpus=72)),
                      "That is how many GPUs the layer uses. The question asks how many experts each of them "
                      "holds."),
              Mistake(lambda: float(moe.layout(n_experts=models.get("deepseek-v3").n_routed_experts, n_gpus=72)
                                    ["experts_per_gpu"]),
                      "That is DeepSeek-V3's layout. Kimi K2 has more routed experts: read n_routed_experts "
                      "from its preset."))))
register("2.2", Problem(
    "Bytes a DeepSeek-V3 token moves per MoE layer", "number", _deepseek_bytes, rtol=0.02, unit="bytes",
    mistakes=(Mistake(lambda: _deepseek_bytes(k=32),
                      "That uses the lecture's 32 experts per token. DeepSeek-V3's config routes each token to "
                      "fewer: read it from the model preset."),
              Mistake(lambda: _deepseek_bytes(shared=True),
                      "That counts the shared expert too. This problem asks for the routed experts only."),
              Mistake(lambda: _deepseek_bytes(directions=1),
                      "That is the dispatch alone. The experts' results come back the same way (combine)."),
              Mistake(lambda: _deepseek_bytes(bytes_per_value=2),
                      "That sends each value in 2 bytes (BF16); the problem says FP8 activations, 1 byte."))))
register("2.3", Problem(
    "Derive the cross-rack share", "expression", lambda: moe.CROSS_RACK_FRACTION.rhs,
    wrong_hint="A destination GPU is any of the R·G GPUs with equal probability; G of them share the "
               "sender's rack. One minus that probability leaves."))
register("2.4", Problem(
    "How much slower is scale-out on a GB300 NVL72?", "number", _gb300_link_ratio, rtol=0.02,
    mistakes=(Mistake(lambda: 2 * _gb300_link_ratio(),
                      "Two ways to land here: NVIDIA's NVLink figure (1.8 TB/s) counts both directions while "
                      "the NIC figure is one direction (the presets store one direction for both), or the "
                      "scale-out of a GB200 NVL72 instead of the GB300's faster NIC. Use "
                      "hardware.get_system(\"GB300 NVL72\") for both figures."),
              Mistake(lambda: float(pipeline.SCALE_UP_RATIO_LECTURE),
                      "That is the lecture's round 'about eight times'. Work it out from the GB300 NVL72 "
                      "preset's two bandwidths."),
              Mistake(lambda: 1 / _gb300_link_ratio(),
                      "That is upside down: scale-up over scale-out, so the answer is above 1."))))
register("2.5", Problem(
    "All-to-all time of one layer over two racks", "number", _two_rack_time, rtol=0.03, unit="seconds",
    mistakes=(Mistake(lambda: _two_rack_time(racks=1),
                      "That is the time inside a single rack. Over two racks, half the traffic crosses."),
              Mistake(lambda: _two_rack_time("all_out"),
                      "That is twice too much traffic on the NIC: either every byte went over scale-out (only "
                      "the copies bound for the other rack cross), or the activations took 2 bytes (the "
                      "problem says FP8)."),
              Mistake(lambda: _two_rack_time(directions=1),
                      "That moves only half the bytes: count dispatch and combine (the bytes per token of "
                      "problem 2.2), over the GB200 NVL72's own NIC."),
              Mistake(lambda: _two_rack_time(k=32),
                      "That uses the lecture's 32 experts per token; DeepSeek-V3 routes each token to fewer."),
              Mistake(lambda: _two_rack_time(shared=True),
                      "That sends the shared expert's copy too; count the routed experts only, as in "
                      "problem 2.2."),
              Mistake(lambda: _two_rack_time("sum"),
                      "Close, but NVLink and the NIC work at the same time: the layer waits for the slower "
                      "share, not for the sum."))))
register("2.6", Problem(
    "The smallest box that holds Kimi K2", "choice", _smallest_that_fits, options=FIT_CANDIDATES,
    alternates={"HGX H100": ("h100", "dgx h100", "8 h100", "8x h100"),
                "HGX H200": ("h200", "dgx h200", "8 h200", "8x h200"),
                "HGX B200": ("b200", "dgx b200", "8 b200", "8x b200"),
                "GB200 NVL72": ("nvl72", "gb200", "gb200nvl72", "dgx gb200", "nvl72 rack", "gb200 nvl72 rack",
                                "gb200 rack")},
    wrong_hint="Compare total parameters × 1 byte with half of each system's HBM."))
register("2.7", Problem(
    "Four racks against one", "number", _slowdown, rtol=0.02,
    mistakes=(Mistake(lambda: _slowdown(ratio=8),
                      "That uses the board's 8×. Take the link figures of the GB200 NVL72 preset."),
              Mistake(lambda: moe.link_ratio_of("GB200 NVL72"),
                      "That would be true if every byte left its rack. With four racks, what share stays?"),
              Mistake(lambda: _slowdown(racks=2),
                      "That is the slowdown with two racks, where half the bytes leave. With four racks a "
                      "larger share crosses."),
              Mistake(lambda: _slowdown(ratio=moe.link_ratio_of("GB300 NVL72")),
                      "That uses the GB300's faster NIC. This problem takes the GB200 NVL72 preset."),
              Mistake(lambda: 1 / _slowdown(),
                      "That is upside down: four racks are slower, so the answer is above 1."))))
register("2.8", Problem(
    "Room for KV cache next to a 5 T model", "number", _kv_share, rtol=0.02, unit="(a fraction of HBM)",
    mistakes=(Mistake(lambda: _kv_share(weights=True),
                      "That is the share the weights take. The question asks what is left."),
              Mistake(lambda: _kv_share(bytes_param=2),
                      "That stores the weights in BF16; the problem says FP8."),
              Mistake(lambda: _kv_share(system="GB300 NVL72"),
                      "That uses the GB300 NVL72's larger HBM. The problem's rack is the GB200 NVL72."),
              Mistake(lambda: 100 * _kv_share(),
                      "That looks like a percentage. Give the fraction, a number between 0 and 1."))))
register("2.9", Problem(
    "A real router is not uniform", "number", _busiest_gpu, rtol=0.01,
    mistakes=(Mistake(lambda: 1.0,
                      "That is what uniform routing would give. Measure what this router actually does."),
              Mistake(_busiest_expert,
                      "That is the busiest expert. The question asks about GPUs, which hold two experts each."),
              Mistake(_busiest_rack,
                      "That is the busiest rack (two GPUs each). The question asks about single GPUs."),
              Mistake(_busiest_over_sum,
                      "That divides by the sum of the loads, every GPU's copies together. Compare the busiest GPU "
                      "with an even share, the mean load (loads.mean()), as the question's ratio does."),
              Mistake(_busiest_gpu_in_tokens,
                      "Close: that counts tokens, but a token whose two experts sit on the same GPU sends it two "
                      "copies. Count token-copies, as routing.gpu_loads() does.", rtol=0.004))))
register("2.10", Problem(
    "Read the routing figure", "number", _red_lines, rtol=0.02, unit="copies",
    mistakes=(Mistake(lambda: _red_lines("tokens"),
                      "That counts tokens with a red line. A token can send both of its copies out of its rack, "
                      "and each red line is one copy."),
              Mistake(lambda: _red_lines("stay"),
                      "That counts the green lines, the copies that stay in their rack."),
              Mistake(lambda: _red_lines(tokens=None),
                      "That counts all the tokens of the routing; the figure shows only the first 12.")),
    wrong_hint="Count the red lines, or let the Routing object count them for you."))
register("2.11", Problem(
    "How fast must scale-out be?", "expression", _bandwidth_needed,
    wrong_hint="Set the cross-rack time T_A2A_CROSS equal to the expert compute time and solve for bw_out."))


# --- 'Why' problems (issue 13): conceptual choices, each with a nudge for every tempting wrong letter.
# The expected letter is checked against the library where the reason is a computation.

WHY_OPTIONS = ('a', 'b', 'c', 'd')


def _one_rack() -> str:
    """2.12: splitting a layer over two racks slows its all-to-all (the slow link carries half of it)."""
    slowdown = moe.A2A_SLOWDOWN(n_racks=2, link_ratio=moe.link_ratio_of(hardware.get_system("GB200 NVL72")))
    if not slowdown > 1:
        raise RuntimeError(f"problem 2.12 assumes crossing racks is slower, got {slowdown}")
    return "b"


def _sixty_four() -> str:
    """2.13: the layout of DeepSeek-V3's routed experts on 72 GPUs uses the largest even split."""
    experts = models.get("deepseek-v3").n_routed_experts
    placed = moe.layout(n_experts=experts, n_gpus=72)
    if experts % 72 == 0 or placed["gpus_used"] != 64:
        raise RuntimeError(f"problem 2.13 assumes 64 of 72 GPUs are used, got {placed}")
    return "c"


def _total_follows_racks() -> str:
    """2.14: a 1 T-parameter fp8 model does not fit an 8-GPU Hopper box but fits an NVL72 rack."""
    one_tb = 1e12
    if not hardware.get_system("HGX H100").hbm_capacity < one_tb < hardware.get_system("GB200 NVL72").hbm_capacity:
        raise RuntimeError("problem 2.14 assumes 1 TB sits between an HGX H100 and a GB200 NVL72")
    return "d"


register('2.12', Problem(
    'Why must one MoE layer stay inside one rack?', "choice", _one_rack, options=WHY_OPTIONS,
    nudges={
            'a': 'There are as many router copies as GPUs (≈00:34:07): each GPU routes its own tokens.',
            'c': 'Expert parallelism stores each expert once; nothing is copied.',
            'd': "The opposite: a switched NVLink rack is 'a perfect fit' for all-to-all."}))

register('2.13', Problem(
    "Why does DeepSeek-V3 use 64 of the rack's 72 GPUs?", "choice", _sixty_four, options=WHY_OPTIONS,
    nudges={
            'a': "The lecture's reason is arithmetic, not reliability: divide 256 by 72.",
            'b': 'More HBM is never a problem by itself; look at how 256 experts divide.',
            'd': 'Every GPU of an NVL72 reaches every other in two hops through the NVSwitches.'}))

register('2.14', Problem(
    'Why did total parameters wait for bigger racks?', "choice", _total_follows_racks, options=WHY_OPTIONS,
    nudges={
            'a': 'Compute per token follows the active parameters (2·N_active FLOPs), however many experts sit idle.',
            'b': "The lecture's argument is not about data; it is about where the weights live.",
            'c': 'The argument is about capacity inside a rack, not about the links between racks.'}))


# --- Issue 49 §5: the reasoning a held-out exam found missing.
# 2.15: the copies an all-to-all keeps on the sending GPU. Uniform routing over R boxes of G GPUs: a copy stays in
# the box with SAME_RACK_PROBABILITY at R boxes, and on the sending GPU with the same formula at R·G groups of one.
SELF_SEND = dict(boxes=2, gpus_per_box=8)


def _same(groups: int) -> float:
    """The share of copies landing in the sender's own group, for equal groups (the G per group cancels)."""
    return float(moe.SAME_RACK_PROBABILITY(n_racks=groups))


def _nvlink_share(part: str = "other GPUs in the box") -> float:
    boxes, per_box = SELF_SEND["boxes"], SELF_SEND["gpus_per_box"]
    in_box, own = _same(boxes), _same(boxes * per_box)      # each GPU its own group of one
    return {"other GPUs in the box": in_box - own, "in the box": in_box, "own GPU": own,
            "leaves the GPU": 1 - own, "in the box plus own": in_box + own}[part]


register("2.15", Problem(
    "The copies a GPU sends to itself", "number", _nvlink_share, rtol=0.01, unit="(a fraction of the copies)",
    mistakes=(Mistake(lambda: _nvlink_share("in the box"),
                      "That counts every copy that stays in the box, including those whose expert sits on the "
                      "sending GPU itself: they cross no link at all."),
              Mistake(lambda: _nvlink_share("own GPU"),
                      "That is the share that stays on the sending GPU. The question asks for the copies that go "
                      "over NVLink to another GPU."),
              Mistake(lambda: _nvlink_share("leaves the GPU"),
                      "That is every copy that leaves the GPU, over NVLink or over the network. Half of the "
                      "GPUs are in the other box."),
              Mistake(lambda: _nvlink_share("in the box plus own"),
                      "The copies a GPU keeps are part of the in-box share: take them away, do not add them."))))


# 2.16: one routed expert's own roofline. An expert is a small dense layer: compute-bound once the tokens routed
# to it reach the hardware ratio (roofline.BALANCE_BATCH with N_total = N_active). A batch of B tokens sends it
# B k / E of them on average, so the batch must reach that ratio times E / k.
EXPERT_ROOFLINE = dict(model="qwen3-235b-a22b", chip="H200", compute="fp8", bytes_param=1.0)


def _expert_balance_batch(part: str = "batch", flops_factor: float = 1.0) -> float:
    from lecture_lib import roofline

    model, chip = models.get(EXPERT_ROOFLINE["model"]), hardware.get(EXPERT_ROOFLINE["chip"])
    per_expert = float(roofline.BALANCE_BATCH(FLOPs=chip.flops[EXPERT_ROOFLINE["compute"]] * flops_factor,
                                              mem_bw=chip.hbm_bandwidth, bytes_param=EXPERT_ROOFLINE["bytes_param"],
                                              N_total=1, N_active=1))
    if part == "tokens per expert":
        return per_expert
    if part == "model":                       # the whole model's B*: the ratio times N_total / N_active
        return per_expert * model.params_total / model.params_active
    return per_expert * model.n_routed_experts / model.experts_per_token


register("2.16", Problem(
    "How big a batch keeps one routed expert compute-bound?", "number", _expert_balance_batch, rtol=0.02,
    unit="tokens per step",
    mistakes=(Mistake(lambda: _expert_balance_batch("tokens per expert"),
                      "That is how many tokens one expert must receive. A batch sends each expert only k of every "
                      "E tokens' copies: how big must the batch be for that many to arrive?"),
              Mistake(lambda: _expert_balance_batch("model"),
                      "That is the whole model's balance batch, the ratio times N_total / N_active. The dense "
                      "parts every token uses pull that average down; a routed expert sees only k / E of the "
                      "batch."),
              Mistake(lambda: _expert_balance_batch(flops_factor=2.0),
                      "Off by 2: one multiply-add is 2 FLOPs, so a token costs 2 FLOPs per weight."),
              Mistake(lambda: _expert_balance_batch(flops_factor=0.5),
                      "That uses the BF16 peak, half the FP8 one: the problem computes in FP8."))))


# 2.17: placing experts when their count does not divide the GPUs. The even layout uses the most GPUs that give each
# the same whole number (moe.layout); an uneven spread over every GPU leaves the busiest with the ceiling of
# EXPERTS_PER_GPU. The busiest GPU's expert weights set the step's read time.
UNEVEN = dict(n_experts=160, gpus=72)      # DeepSeek-V2's 160 routed experts (arXiv 2405.04434) on a GB200 NVL72


def _busiest_experts(spread: str) -> float:
    import math

    if spread == "even":
        return float(moe.layout(n_experts=UNEVEN["n_experts"], n_gpus=UNEVEN["gpus"])["experts_per_gpu"])
    share = float(moe.EXPERTS_PER_GPU(n_experts=UNEVEN["n_experts"], n_ep=UNEVEN["gpus"]))
    return share if spread == "mean" else float(math.ceil(share))


def _uneven_gain(over: str = "uneven") -> float:
    return _busiest_experts("even") / _busiest_experts(over)


register("2.17", Problem(
    "Experts that do not divide the GPUs", "number", _uneven_gain, rtol=0.01, unit="×",
    mistakes=(Mistake(lambda: 1.0,
                      "For 160 experts the two layouts differ: count the experts on the busiest GPU of each."),
              # the average GPU's 160/72 and the ratio of GPUs used (72/40) give the same factor here
              Mistake(lambda: _uneven_gain("mean"),
                      "That compares with the average GPU, or counts the GPUs used. Experts come whole, and the "
                      "step waits for the busiest GPU: compare the experts it holds in each layout."),
              Mistake(lambda: 1 / _uneven_gain(),
                      "That is upside down: give how many times fewer experts the busiest GPU holds."))))
