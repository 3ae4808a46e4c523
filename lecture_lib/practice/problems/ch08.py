"""Chapter 8's practice problems (solutions/08_roofline_vs_reality.ipynb).

Every expected value is computed from the library's presets, Formulas and dataset with the inputs the
problem statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from lecture_lib import collectives, hardware, measurements, models, roofline, topology, training_layout
from lecture_lib import symbols as _symbols

from ..registry import Mistake, Problem, register

#: MXFP4 as gpt-oss stores its experts: 4-bit values plus one 8-bit scale per 32 (4.25 bits).
MXFP4_BYTES = 4.25 / 8


def _deepseek():
    return models.get("deepseek-v3")


def _deepseek_batch_one_read(form: str = "rows") -> float:
    m = _deepseek()
    if form == "table":         # the whole input-embedding table, as the lecture's N_total counts it
        return roofline.params_read(m, tokens=1, embedding_rows=False)
    if form == "total":
        return float(m.params_total)
    return roofline.params_read(m, tokens=1)


def _tokens_for_ninety_percent() -> float:
    m = _deepseek()
    expr = roofline.EXPECTED_EXPERTS.subs(n_experts=m.n_routed_experts, k_active=m.experts_per_token)
    return float(sp.nsolve(expr - sp.Rational(9, 10) * m.n_routed_experts, _symbols.B, 70))


def _gpt_oss_batch_one(all_experts: bool = False) -> float:
    d = collectives.deployment(hardware.get("B200"), n_chips=4)
    out = roofline.decode_bound(models.get("gpt-oss-120b"), d, batch=1, len_ctx=1024, weight_dtype=MXFP4_BYTES,
                                compute_dtype="fp8", kv_dtype="bf16", expected_experts_read=not all_experts)
    return out["tokens_per_s"]


def _implied_tau() -> float:
    row = measurements.get("trtllm-llama70b-h200-batch1-spec")
    return row.measured / row.bound


def _cache_lift(attention: bool = True) -> float:
    row = measurements.get("deepseek-prefill-h800")
    m = models.get(row.model)
    warm = roofline.prefill_bound(m, row.deployment, len_in=row.len_in, hit_rate=row.hit_rate, attention=attention)
    cold = roofline.prefill_bound(m, row.deployment, len_in=row.len_in, attention=attention)
    return warm["input_tokens_per_s"] / cold["input_tokens_per_s"]


def _absorbed_ratio() -> float:
    m = _deepseek()
    return roofline.attention_flops(m, 8192, absorbed=True) / roofline.attention_flops(m, 8192)


def _tp_all_reduce(per_layer: int = 2, ring_factor: bool = True) -> float:
    m = models.get("llama-3-70b")
    exact = collectives.tp_all_reduce_time(m, tp=8, batch_tokens=64, bytes_per_value=2,
                                           link_bandwidth=hardware.get("H100").scale_up_bandwidth)
    return exact * per_layer / 2 * (1 if ring_factor else 8 / 7)


CLOSEST_CANDIDATES = ("deepseek-decode-h800", "sglang-prefill-96xh100", "trtllm-llama405b-fp8-h200-2k",
                      "trtllm-llama70b-h200-batch1")


def _closest() -> str:
    return max(CLOSEST_CANDIDATES, key=lambda key: measurements.get(key).efficiency)


def _kv_added_ratio() -> float:
    m, rack = _deepseek(), hardware.get_system("GB200 NVL72")
    kw = dict(batch=16384, n_active=m.params_active, n_total=m.params_total, flops=rack.flops["fp4"],
              mem_bw=rack.hbm_bandwidth, bytes_param=0.5, len_ctx=1024, bytes_tok=m.kv_bytes_per_token("fp8"))
    return roofline.decode_step(step_form="kv_added", **kw)["t"] / roofline.decode_step(**kw)["t"]


register("8.1", Problem(
    "Derive the expected experts touched", "expression", lambda: roofline.EXPECTED_EXPERTS.rhs,
    wrong_hint="Find the probability that one given expert is missed by all B tokens, then use linearity of "
               "expectation over the E experts. Check: at B = 1 your formula must give k."))
register("8.2", Problem(
    "What DeepSeek-V3 reads at batch 1", "number", _deepseek_batch_one_read, rtol=0.01, unit="parameters",
    mistakes=(Mistake(lambda: _deepseek_batch_one_read("total"),
                      "That is every parameter: the lecture's large-batch form. At batch 1 each MoE layer "
                      "reads only the experts its one token is routed to."),
              Mistake(lambda: _deepseek_batch_one_read("table"),
                      "That reads the whole input-embedding table; a lookup reads one row per token."))))
register("8.3", Problem(
    "Tokens to touch 90% of the experts", "number", _tokens_for_ninety_percent, rtol=0.02, unit="tokens",
    wrong_hint="Set the expected experts touched equal to 0.9 E and solve for B; a logarithm appears."))
register("8.4", Problem(
    "gpt-oss-120b at batch 1 on four B200s", "number", _gpt_oss_batch_one, rtol=0.03, unit="tokens per second",
    mistakes=(Mistake(lambda: _gpt_oss_batch_one(all_experts=True),
                      "That bound reads all 128 experts of every layer. One token touches only 4 of them."),)))
register("8.5", Problem(
    "What the speculative-decoding figure implies", "number", _implied_tau, rtol=0.02,
    unit="accepted tokens per step",
    mistakes=(Mistake(lambda: 181.74 / 51.14,
                      "That is the speed-up over the measured baseline, which itself falls short of the "
                      "bound. Compare the figure with the bound instead."),)))
register("8.6", Problem(
    "What the prefix cache is worth to DeepSeek's prefill", "number", _cache_lift, rtol=0.03,
    mistakes=(Mistake(lambda: 0.563, "That is the hit rate itself, not how much it lifts the bound."),
              Mistake(lambda: 1 / 0.563, "Divide by the share of tokens still to compute, 1 − h."))))
register("8.7", Problem(
    "Absorbed MLA: how many more attention FLOPs?", "number", _absorbed_ratio, rtol=0.02,
    wrong_hint="Absorbed, every head's query meets the 576-wide latent key and the 512-wide latent value."))
register("8.8", Problem(
    "Tensor-parallel all-reduces for one step", "number", _tp_all_reduce, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _tp_all_reduce(per_layer=1),
                      "That is one all-reduce per layer; a Megatron layer has two (after attention, after the MLP)."),
              Mistake(lambda: _tp_all_reduce(ring_factor=False),
                      "Nearly: a ring all-reduce over N GPUs moves (N − 1)/N of the array twice, not all of it."),
              Mistake(lambda: _tp_all_reduce() / 2,
                      "An all-reduce is a reduce-scatter and then an all-gather: twice an all-gather's time."))))
register("8.9", Problem(
    "Which figure comes closest to its bound?", "choice", _closest, options=CLOSEST_CANDIDATES,
    alternates={"trtllm-llama70b-h200-batch1": ("batch 1", "batch-1", "llama 70b batch 1"),
                "deepseek-decode-h800": ("deepseek decode",), "sglang-prefill-96xh100": ("sglang prefill",),
                "trtllm-llama405b-fp8-h200-2k": ("405b", "llama 405b")},
    wrong_hint="Compute measured / bound for each; one of them has no all-to-all and no tensor-parallel "
               "all-reduce on its critical path."))
register("8.10", Problem(
    "The other step form", "number", _kv_added_ratio, rtol=0.02,
    wrong_hint="Compute both step times with roofline.decode_step, once with step_form='kv_added'."))


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


register("8.11", Problem(
    "Where tensor parallelism stops paying", "number", _tp_critical_width, rtol=0.02, unit="d_ff values",
    mistakes=(Mistake(lambda: _tp_critical_width(matrices=2),
                      "That width is for a plain two-matrix MLP. A gated MLP has three matrices of "
                      "d_model × d_ff, so it does 1.5× the FLOPs for the same all-reduce."),
              Mistake(lambda: _tp_critical_width(ring_factor=False),
                      "Nearly: a ring all-reduce over 8 GPUs moves 7/8 of the array twice, not all of it."),
              Mistake(lambda: _tp_critical_width() / 8,
                      "That is the width of one GPU's shard, d_ff / TP. The question asks for the whole MLP's d_ff."))))
register("8.12", Problem(
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


# --- Problems on the primary-source rows (issue 21) ------------------------------------------------

#: MTP with this many draft layers can add at most this many accepted tokens to the model's own one.
MTP_DRAFT_LAYERS = 3


def _mtp_share(tau: float = MTP_DRAFT_LAYERS + 1) -> float:
    row = measurements.get("trtllm-dsr1-b200-batch1")
    return row.measured / dataclasses.replace(row, tokens_per_step=tau).bound


def _mi300x_generous_bound(dtype: str = "fp8") -> float:
    m, d = models.get("llama-2-70b"), collectives.deployment(hardware.get_system("MI300X platform"))
    ctx = measurements.get("mlperf41-llama2-70b-mi300x8").len_out / 2
    batch = roofline.batch_that_fits(m, d, len_ctx=ctx, weight_bytes=dtype, kv_dtype=dtype)
    return roofline.decode_bound(m, d, batch=batch, len_ctx=ctx, weight_dtype=dtype, compute_dtype=dtype,
                                 kv_dtype=dtype)["tokens_per_s"]


register("8.13", Problem(
    "What multi-token prediction leaves on the table", "number", _mtp_share, rtol=0.03,
    unit="of the bound",
    mistakes=(Mistake(lambda: _mtp_share(MTP_DRAFT_LAYERS),
                      "Three draft layers propose three tokens, and the verifying step also emits the model's "
                      "own next token: up to four per step."),
              Mistake(lambda: _mtp_share(1),
                      "That is the share of the one-token-per-step bound; with MTP the ceiling is higher."))))
register("8.14", Problem(
    "Llama 2 70B on eight MI300X: the most generous bound", "number", _mi300x_generous_bound, rtol=0.03,
    unit="tokens per second",
    mistakes=(Mistake(lambda: _mi300x_generous_bound(dtype="bf16"),
                      "AMD's submission ran FP8 (its code path is test_VllmFp8): one byte per weight and the FP8 peak."),
              Mistake(lambda: _mi300x_generous_bound() / 8,
                      "That is one GPU's share; the MLPerf figure is for the whole platform of eight."))))


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


register("8.15", Problem(
    "Latency of the tensor-parallel all-reduces at batch 1", "number", _tp_latency_405b, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _tp_latency_405b(latency=False),
                      "That is the bandwidth term alone: tens of µs. Each all-reduce also pays NCCL's launch "
                      "latency and a per-step latency for each of its 2 (N − 1) ring steps."),
              Mistake(lambda: _tp_latency_405b(per_layer=1),
                      "A Megatron layer all-reduces twice: after attention and after the MLP."),
              Mistake(lambda: _tp_latency_405b(steps_per_all_reduce=7),
                      "A ring all-reduce is a reduce-scatter (N − 1 steps) and then an all-gather (N − 1 more)."))))
register("8.16", Problem(
    "AllToAll on a ring against a switch", "number", _ring_over_switch, rtol=0.01,
    mistakes=(Mistake(lambda: 16 / 4,
                      "That is the many-device limit N/4. Keep the switch's exact (N − 1)/N² for 16 devices."),
              Mistake(lambda: 1.0,
                      "Same egress does not mean same time: on a ring a chunk for a chip k places away crosses "
                      "k links, and every one of them carries it."))))
register("8.17", Problem(
    "How much FSDP on a TPU v5p slice?", "number", _v5p_x_opt, rtol=0.02, unit="chips on the FSDP axis",
    mistakes=(Mistake(lambda: _v5p_x_opt(matrices=2),
                      "That is the book's two-matrix MLP. Llama's gated MLP has three matrices to gather, which "
                      "pushes the optimum toward less FSDP."),
              Mistake(lambda: _v5p_x_opt(axes_ratio=1.0),
                      "FSDP spans two of the three mesh axes, so its bandwidth per chip is twice TP's: W_X = 2 W_Y."),
              Mistake(lambda: 256 / _v5p_x_opt(),
                      "That is Y, the tensor-parallel degree. The question asks for X."))))


# --- A layout problem (issue 21 §2.4): what one GPU of DeepSeek's decode unit holds --------------------

#: DeepSeek's decode unit: "Routed Expert EP144, MLA/Shared Expert DP144", "32 redundant routed experts".
DEEPSEEK_DECODE_LAYOUT = roofline.Layout(attention_tp=1, redundant_experts=32)


def _deepseek_weights_per_gpu(layout=DEEPSEEK_DECODE_LAYOUT) -> float:
    unit = collectives.deployment(hardware.get_system("HGX H800"), n_systems=18)
    return roofline.device_memory(_deepseek(), unit, layout=layout, weight_dtype="fp8")["weights"]


register("8.18", Problem(
    "What one GPU of DeepSeek's decode unit holds", "number", _deepseek_weights_per_gpu, rtol=0.01, unit="bytes",
    mistakes=(Mistake(lambda: _deepseek_weights_per_gpu(layout=None),
                      "That spreads every weight evenly over the 144 GPUs, as if they were one big chip. Under DP "
                      "attention each GPU holds its own full copy of MLA, the dense layers, the shared expert, the "
                      "router, the embeddings and the head."),
              Mistake(lambda: _deepseek_weights_per_gpu(layout=roofline.Layout(attention_tp=1)),
                      "Nearly: the unit also holds 32 redundant routed experts per layer, (256 + 32) / 144 = 2 "
                      "experts per GPU in each MoE layer."))))
