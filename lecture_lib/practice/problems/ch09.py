"""Chapter 9's practice problems (solutions/09_communication_and_training_layouts.ipynb): collectives and their
latency, where data, tensor and expert parallelism turn communication-bound, what a layout puts on each device, and
the split of a training run between FSDP, tensor parallelism and pipeline stages.

Problems 9.1-9.7 were Chapter 8's 8.8, 8.15, 8.16, 8.12, 8.11, 8.18 and 8.17 before issue 49 split that chapter;
9.8 is new.
Every expected value is computed from the library's presets and Formulas with the inputs the problem statement
names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

from lecture_lib import collectives, hardware, models, roofline, topology, training_layout

from ..registry import Mistake, Problem, register


def _deepseek():
    return models.get("deepseek-v3")


# --- The communication roofline (section 1): bandwidth, latency, topology ---------------------------------

def _tp_all_reduce(per_layer: int = 2, ring_factor: bool = True) -> float:
    m = models.get("llama-3-70b")
    exact = collectives.tp_all_reduce_time(m, tp=8, batch_tokens=64, bytes_per_value=2,
                                           link_bandwidth=hardware.get("H100").scale_up_bandwidth)
    return exact * per_layer / 2 * (1 if ring_factor else 8 / 7)


# --- Problems on collective latency, topology and training layouts (issue 21 §2.5-2.7) -----------------

def _tp_latency_405b(per_layer: int = 2, latency: bool = True, steps_per_all_reduce=None) -> float:
    m = models.get("llama-3-405b")
    base, hop = collectives.nccl_latency("nvlink", "LL")
    kw = dict(tp=8, batch_tokens=1, bytes_per_value=2, link_bandwidth=hardware.get("H200").scale_up_bandwidth)
    if not latency:
        return collectives.tp_all_reduce_time(m, **kw) * per_layer / 2
    if steps_per_all_reduce is not None:    # a wrong step count: base + steps x hop per all-reduce
        return collectives.tp_all_reduce_time(m, **kw) + 2 * m.n_layers * (base + steps_per_all_reduce * hop)
    return collectives.tp_all_reduce_time(m, **kw, hop_latency=hop, base_latency=base) * per_layer / 2


def _ring_over_switch(n: int = 16) -> float:
    ring = topology.collective_time("alltoall", topology="ring", dims=n, bytes_total=1.0, link_bandwidth=1.0)
    switch = topology.collective_time("alltoall", topology="switch", dims=n, bytes_total=1.0, link_bandwidth=2.0)
    return ring / switch


def _v5p_x_opt(matrices: int = 3, axes_ratio: float = 2.0) -> float:
    return training_layout.X_OPT(B_tok=2**20, n_chip=256, n_mats=matrices, d_ff=28_672, bw_fsdp=axes_ratio, bw_tp=1)


register("9.1", Problem(
    "Tensor-parallel all-reduces for one step", "number", _tp_all_reduce, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _tp_all_reduce(per_layer=1),
                      "If you counted one all-reduce per layer: a Megatron layer has two (after attention, after "
                      "the MLP)."),
              Mistake(lambda: _tp_all_reduce(ring_factor=False),
                      "Nearly: a ring all-reduce over N GPUs moves (N − 1)/N of the array twice, not all of it."),
              Mistake(lambda: _tp_all_reduce() / 2,
                      "If you timed each all-reduce as one pass over the array: an all-reduce is a reduce-scatter "
                      "and then an all-gather, twice an all-gather's time."))))
register("9.2", Problem(
    "Latency of the tensor-parallel all-reduces at batch 1", "number", _tp_latency_405b, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _tp_latency_405b(latency=False),
                      "That is the bandwidth term alone: tens of µs. Each all-reduce also pays NCCL's launch "
                      "latency and a per-step latency for each of its 2 (N − 1) ring steps."),
              Mistake(lambda: _tp_latency_405b(per_layer=1),
                      "A Megatron layer all-reduces twice: after attention and after the MLP."),
              Mistake(lambda: _tp_latency_405b(steps_per_all_reduce=7),
                      "A ring all-reduce is a reduce-scatter (N − 1 steps) and then an all-gather (N − 1 more)."))))
register("9.3", Problem(
    "AllToAll on a ring against a switch", "number", _ring_over_switch, rtol=0.01,
    mistakes=(Mistake(lambda: 16 / 4,
                      "That is the many-device limit N/4. Keep the switch's exact (N − 1)/N² for 16 devices."),
              Mistake(lambda: 1.0,
                      "Same egress does not mean same time: on a ring a chunk for a chip k places away crosses "
                      "k links, and every one of them carries it."))))

# --- The critical batch of DP, TP and EP, and layouts (section 2) ----------------------------------------

def _tp_critical_width(matrices: int = 3, ring_factor: bool = True) -> float:
    h100 = hardware.get("H100")
    width = collectives.tp_critical_d_ff(tp=8, flops=h100.flops["bf16"], link_bandwidth=h100.scale_up_bandwidth,
                                         matrices=matrices)
    return width if ring_factor else width * 8 / 7


#: Node egress of an HGX H100: 8 GPUs x 400 Gb/s InfiniBand (scaling book gpus.md), the per-node level.
H100_NODE_EGRESS = 8 * 50e9


def _dp_across_nodes(flops_per_token: int = 4, bandwidth: float = H100_NODE_EGRESS) -> float:
    h100 = hardware.get("H100")
    # The critical batch is inversely proportional to the FLOPs per parameter per token overlapping the sync.
    return collectives.dp_critical_batch(dp=32, flops=h100.flops["bf16"], link_bandwidth=bandwidth) * 4 / flops_per_token


# --- A layout problem (issue 21 §2.4): what one GPU of DeepSeek's decode unit holds --------------------

#: DeepSeek's decode unit: "Routed Expert EP144, MLA/Shared Expert DP144", "32 redundant routed experts".
DEEPSEEK_DECODE_LAYOUT = roofline.Layout(attention_tp=1, redundant_experts=32)


def _deepseek_weights_per_gpu(layout=DEEPSEEK_DECODE_LAYOUT) -> float:
    unit = collectives.deployment(hardware.get_system("HGX H800"), n_systems=18)
    return roofline.device_memory(_deepseek(), unit, layout=layout, weight_dtype="fp8")["weights"]


register("9.4", Problem(
    "Tokens per GPU for data-parallel training across nodes", "number", _dp_across_nodes, rtol=0.02,
    unit="tokens per GPU",
    mistakes=(Mistake(lambda: _dp_across_nodes(flops_per_token=6),
                      "That counts the whole 6 N FLOPs per token. The gradient all-reduce can only overlap the "
                      "backward pass, 4 N per token."),
              Mistake(lambda: _dp_across_nodes(flops_per_token=2),
                      "That is the forward pass. The all-reduce overlaps the backward pass, 4 N FLOPs per token."),
              Mistake(lambda: _dp_across_nodes(bandwidth=hardware.get("H100").scale_out_bandwidth),
                      "After the in-node reduce-scatter each GPU sends only 1/8 of the gradients over its own NIC, "
                      "so the rate that counts is the node's 8 × 50 GB/s."))))


register("9.5", Problem(
    "Where tensor parallelism stops paying", "number", _tp_critical_width, rtol=0.02, unit="d_ff values",
    mistakes=(Mistake(lambda: _tp_critical_width(matrices=2),
                      "That width is for a plain two-matrix MLP. A gated MLP has three matrices of "
                      "d_model × d_ff, so it does 1.5× the FLOPs for the same all-reduce."),
              Mistake(lambda: _tp_critical_width(ring_factor=False),
                      "Nearly: a ring all-reduce over 8 GPUs moves 7/8 of the array twice, not all of it."),
              Mistake(lambda: _tp_critical_width() / 8,
                      "That is the width of one GPU's shard, d_ff / TP. The question asks for the whole MLP's d_ff."))))
register("9.6", Problem(
    "What one GPU of DeepSeek's decode unit holds", "number", _deepseek_weights_per_gpu, rtol=0.01, unit="bytes",
    mistakes=(Mistake(lambda: _deepseek_weights_per_gpu(layout=None),
                      "That spreads every weight evenly over the 144 GPUs, as if they were one big chip. Under DP "
                      "attention each GPU holds its own full copy of MLA, the dense layers, the shared expert, the "
                      "router, the embeddings and the head."),
              Mistake(lambda: _deepseek_weights_per_gpu(layout=roofline.Layout(attention_tp=1)),
                      "Nearly: the unit also holds 32 redundant routed experts per layer, (256 + 32) / 144 = 2 "
                      "experts per GPU in each MoE layer."))))

# --- Training layouts (section 3) ---------------------------------------------------------------------

register("9.7", Problem(
    "How much FSDP on a TPU v5p slice?", "number", _v5p_x_opt, rtol=0.02, unit="chips on the FSDP axis",
    mistakes=(Mistake(lambda: _v5p_x_opt(matrices=2),
                      "That is the book's two-matrix MLP. Llama's gated MLP has three matrices to gather, which "
                      "pushes the optimum toward less FSDP."),
              Mistake(lambda: _v5p_x_opt(axes_ratio=1.0),
                      "FSDP spans two of the three mesh axes, so its bandwidth per chip is twice TP's: W_X = 2 W_TP."),
              Mistake(lambda: 256 / _v5p_x_opt(),
                      "That is TP, the tensor-parallel degree. The question asks for X, the FSDP degree."))))


def _ep_across_nodes(bandwidth: str = "scale_out", dtype: str = "fp8", bytes_per_value: float = 1) -> float:
    h100 = hardware.get("H100")
    return collectives.ep_critical_d_ff(ep=32, flops=h100.flops[dtype], link_bandwidth=getattr(h100, f"{bandwidth}_bandwidth"),
                                        bytes_per_value=bytes_per_value)


register("9.8", Problem(
    "How wide must an expert be across nodes?", "number", _ep_across_nodes, rtol=0.02, unit="d_ff values",
    mistakes=(Mistake(lambda: _ep_across_nodes(bandwidth="scale_up"),
                      "That is NVLink's bandwidth. Across nodes each GPU sends over its own NIC, the scale-out link."),
              Mistake(lambda: _ep_across_nodes(dtype="bf16"),
                      "The experts multiply in FP8 here: use the FP8 peak, twice the BF16 one."),
              Mistake(lambda: _ep_across_nodes(bytes_per_value=2),
                      "The activations travel in FP8, one byte per value."))))

