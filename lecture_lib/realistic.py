"""Chapters 8 and 9: a "realistic" estimate beside the bound, with every term the bound leaves out shown apart.

The bound (:func:`roofline.decode_bound`, :func:`roofline.prefill_bound`) lets every piece of a step overlap
every other, runs every kernel at the chip's peak, hides all communication and spreads the routed tokens evenly.
Published MoE systems land at a quarter of it, and reasoning MoE serving (DeepSeek-R1 on eight B200) at about a
tenth. This module puts back, one at a time, what a real step pays (issue 51 §4):

- ``attention_apart``: attention runs as its own kernel between the matmuls, so its time (its FLOPs, or the KV it
  reads, whichever is longer) adds to the matmuls' instead of hiding under them. MLA's absorbed form at a few
  thousand tokens of context does about as many FLOPs per token as the weights (:func:`roofline.attention_flops`).
- ``kernels``: the fastest published kernels reach a share of the peak: DeepGEMM's FP8 GEMM 1550 of the H800's
  1979 TFLOP/s; FlashMLA's decode kernel 3000 of 3350 GB/s when memory-bound and 660 of 989 TFLOP/s when
  compute-bound (:data:`KERNEL_EFFICIENCY`).
- ``communication``: expert parallelism's all-to-all (:func:`moe.a2a_layer_time` for each MoE layer, FP8) and
  tensor parallelism's all-reduces (:func:`collectives.tp_all_reduce_time`) are added, not overlapped.
- ``imbalance``: the device with the most routed tokens sets each MoE layer's time (:data:`LOAD_IMBALANCE`), times
  the skew real routers add over uniform routing where no load balancer runs (:data:`ROUTING_SKEW`).
- ``small_matmuls``: each expert's matmul pads the tokens it gets to whole tiles of :data:`TILE_ROWS` rows
  (:data:`TILE_EFFICIENCY`).
- ``dp_prefill_wait``: with DP attention and prompts prefilled in flight beside the decode (no disaggregation), every
  MoE layer's all-to-all makes each rank wait for the slowest, so each step's prefill costs what the rank with the
  most new prompts does, not the mean (:data:`DP_PREFILL_WAIT`, TensorRT-LLM's ADP Balance post).
- ``engine_batch_cap``: an engine instance (one DP replica or DP-attention rank) schedules at most
  :data:`ENGINE_MAX_SEQS` sequences at once, its default (TensorRT-LLM's ``max_batch_size``; vLLM's
  ``max_num_seqs``), so the batch that fits in HBM is cut to :data:`ENGINE_BATCH` (the planner applies it; Chapter 8's
  rows state or fit their own batch, so it leaves them as they are).
- ``engine``: what remains (scheduling, sampling, kernel launches, batches below the largest that fits), one
  factor measured on Chapter 8's *dense* rows (:func:`measurements.engine_efficiency`), never on the MoE rows
  the estimate is held against.

Each term is a switch (``terms=``), and :func:`decode_step` / :func:`prefill_time` return every piece, so a plan
or a notebook can show what each one costs.
"""

from __future__ import annotations

import math

import sympy as sp

from . import collectives, models, moe, roofline, validate
from .formula import Formula

#: The terms the realistic estimate adds to the bound, in the order a plan prints them.
TERMS = ("attention_apart", "kernels", "communication", "imbalance", "small_matmuls", "dp_prefill_wait",
         "engine_batch_cap", "engine")
TERM_TITLES = {
    "attention_apart": "attention runs apart from the matmuls (its FLOPs or its KV reads add to theirs)",
    "kernels": "kernels at the share of peak the best published ones reach",
    "communication": "all-to-all and TP all-reduces not overlapped",
    "imbalance": "the busiest expert-parallel device sets each MoE layer",
    "small_matmuls": "small per-expert matmuls padded to whole tiles",
    "dp_prefill_wait": "DP-attention ranks wait for the one prefilling the most prompts (MoE, in-flight batching)",
    "engine_batch_cap": "an engine instance schedules at most its default cap of concurrent sequences",
    "engine": "engine overhead measured on Chapter 8's dense rows",
}

_FLASHMLA = ("github.com/deepseek-ai/FlashMLA README, 'Performance': 'The dense MLA decoding kernel achieves up to "
             "3000 GB/s in memory-bound configuration and 660 TFLOPS in computation-bound configuration on H800 "
             "SXM5' (read 2026-12); the H800's peaks are 3.35 TB/s and 989.4 TFLOP/s BF16 (hardware.get('H800'))")
_DEEPGEMM = ("github.com/deepseek-ai/DeepGEMM README, news of 2025-04-18: 'up to 1550 TFLOPS on H800' for its FP8 "
             "GEMM (read 2026-12); the H800's FP8 peak is 1978.9 TFLOP/s")
#: Shares of the chip's peak the best published kernels reach, each with its source.
KERNEL_EFFICIENCY = {"hbm": 3000e9 / 3.35e12, "attention": 660e12 / 989.4e12, "matmul": 1550e12 / 1978.9e12}
KERNEL_SOURCES = {"hbm": _FLASHMLA, "attention": _FLASHMLA, "matmul": _DEEPGEMM}

_DEEPGEMM_SMALL = ("github.com/deepseek-ai/DeepGEMM README as first published (commit a6d97a1, 2025-02-25), 'Normal "
                   "GEMMs for dense models' on H800: the twelve shapes with M = 64 or 128 rows reach 1509 to 2668 GB/s, "
                   "median 2298.5 GB/s, of the H800's 3350 GB/s")
#: The share of HBM bandwidth a matmul of at most :data:`SMALL_MATMUL_ROWS` rows reaches while it streams its
#: weights: the median of DeepGEMM's published small-M shapes (:data:`KERNEL_SOURCES` ["small_matmul"]).
KERNEL_EFFICIENCY["small_matmul"] = 2298.5e9 / 3.35e12
KERNEL_SOURCES["small_matmul"] = _DEEPGEMM_SMALL
#: Tokens per expert up to which an expert's matmul counts as small (DeepGEMM's small shapes: M = 64 and 128).
SMALL_MATMUL_ROWS = 128

#: The format absorbed-MLA decode kernels multiply in when a publisher states none: FlashMLA's decode kernels run
#: "the matrix multiplication in bfloat16" even with an FP8 KV cache (its README, same page as above).
MLA_DECODE_FORMAT = "bf16"

#: Rows of one tile of a grouped (per-expert) matmul: Hopper's WGMMA instruction works on 64 rows at a time
#: (PTX ISA, wgmma.mma_async shapes m64nNk*), so an expert that gets m tokens pays for 64·ceil(m/64).
TILE_ROWS = 64

#: Real routing against uniform routing: SGLang measured DeepSeek-V3 prefill at 50,302 tokens/s per node with its
#: default expert placement and 59,337 with "simulated perfect EPLB (random expert selection following
#: group-limited routing semantics)" (lmsys.org/blog/2025-05-05-large-scale-ep, "Overall Throughput" table), so
#: the routers' own skew costs 59,337 / 50,302 = 1.18x over uniform. Applied where no redundant experts balance
#: the load (a layout with ``redundant_experts`` runs EPLB).
ROUTING_SKEW = 59337 / 50302
ROUTING_SKEW_SOURCE = "lmsys.org/blog/2025-05-05-large-scale-ep, 'Overall Throughput' (prefill) table, 2025-05-05"

# --- The formulas ----------------------------------------------------------------------------------------
n_dev = sp.Symbol("n_ep", positive=True)
m_load = sp.Symbol(r"\bar{m}", positive=True)
imbalance = sp.Symbol("I", positive=True)
m_expert = sp.Symbol("m", positive=True)
tile = sp.Symbol("M_tile", positive=True)
tile_eff = sp.Symbol(r"\eta_{tile}", positive=True)
t_attn, t_kv, t_other, t_expert, t_weights, t_comm, t_real = sp.symbols(
    r"t_{attn} t_{kv} t_{other} t_{expert} t_{weights} t_{comm} t_{real}", positive=True)
eta_hbm, eta_attn, eta_mm, eta_small = sp.symbols(r"\eta_{HBM} \eta_{attn} \eta_{mm} \eta_{small}", positive=True)
t_wexp = sp.Symbol(r"t_{weights,experts}", positive=True)

LOAD_IMBALANCE = Formula(
    imbalance, 1 + sp.sqrt(2 * sp.log(n_dev) / m_load),
    source="course derivation (Ch 10): each of n devices gets a binomial share of the routed tokens, mean m; the "
           "largest of n such loads is about m + sqrt(2 m ln n) (the Gaussian tail bound), so the busiest device "
           "works (1 + sqrt(2 ln n / m)) times the mean",
    note="uniform routing, the best case; real routers skew more (ROUTING_SKEW). 1 at n = 1")
TILE_EFFICIENCY = Formula(
    tile_eff, m_expert / (tile * sp.ceiling(m_expert / tile)),
    source="course (Ch 10): an expert's m tokens fill ceil(m / M_tile) tiles of M_tile rows; the padding does no "
           "useful work",
    note="1 when m is a multiple of the tile; m / M_tile below one tile")
T_STEP_APART = Formula(
    t_real, sp.Max(t_attn / eta_attn, t_kv / eta_hbm)
    + sp.Max((t_other + t_expert * imbalance / tile_eff) / eta_mm, t_weights / eta_hbm + t_wexp / eta_small)
    + t_comm,
    source="course (Ch 10): attention (its FLOPs against the KV it reads) and the matmuls (their FLOPs against the "
           "weights they read) run one after the other, each at the share of peak its kernels reach; the busiest "
           "device's expert matmuls, padded to tiles, set the MoE part, and experts with few tokens stream their "
           "weights at a small matmul's share of HBM (t_weights here is the rest); communication waits for both",
    note="with every efficiency 1, I = 1, tile efficiency 1, no communication and attention inside the matmuls' "
         "max, this is the bound max(t_compute, t_weights + t_kv)")


t_pcompute, t_alone_ = sp.symbols(r"t_{prefill} t_{alone}", positive=True)
w_dev, bw = sp.symbols(r"W_{dev} BW_{HBM}", positive=True)
T_PREFILL_ALONE = Formula(
    t_alone_, sp.Max(t_pcompute / eta_mm, w_dev / (bw * eta_hbm)),
    source="course (Ch 10, issue 51 §3): one prompt alone on its replica computes its tokens and reads every weight "
           "its device holds at least once (a forward pass streams each layer's weights through the chip); the "
           "longer of the two sets the time. roofline.prefill_bound leaves the read out (it bounds a stream of "
           "prompts, where the read is shared), so a short prompt's time to first token was below what the HBM allows",
    note="with every efficiency 1 this is the bound plan.py uses for time to first token; a short prompt is "
         "read-bound: 70 GB of FP8 weights on one H100 take 21 ms however short the prompt")


def prefill_alone(*, t_compute, weights_per_device, hbm_bandwidth, matmul_efficiency: float = 1.0,
                  hbm_efficiency: float = 1.0) -> float:
    """Seconds for one prompt alone on its replica (:data:`T_PREFILL_ALONE`): its compute (``t_compute`` seconds at
    peak, over ``matmul_efficiency``) or one read of the ``weights_per_device`` bytes at ``hbm_bandwidth`` (over
    ``hbm_efficiency``), whichever is longer. Efficiencies 1 give the bound."""
    values = {"t_{prefill}": validate.scalar("t_compute", t_compute),
              "W_{dev}": validate.scalar("weights_per_device", weights_per_device, allow_zero=True),
              "BW_{HBM}": validate.scalar("hbm_bandwidth", hbm_bandwidth),
              r"\eta_{mm}": validate.scalar("matmul_efficiency", matmul_efficiency, maximum=1.0),
              r"\eta_{HBM}": validate.scalar("hbm_efficiency", hbm_efficiency, maximum=1.0)}
    return T_PREFILL_ALONE(**values, allow_zero=("W_{dev}",))


_ADP_BALANCE = ("nvidia.github.io/TensorRT-LLM/blogs/tech_blog/blog10_ADP_Balance_Strategy.html: with attention DP "
                "and in-flight batching, 'some ranks may be processing computationally intensive context phases while "
                "others execute generation phases ... the iteration time is dominated by the slowest rank' (read 2026-12)")
k_arrival = sp.Symbol("k", integer=True, positive=True)
lam_ranks, n_ranks = sp.symbols(r"\lambda n_{ranks}", positive=True)
m_max, wait = sp.symbols(r"M_{max} W_{DP}", positive=True)
#: The expected largest of ``n_ranks`` independent Poisson(λ) counts: E[max] = Σ_k≥1 (1 − P(X ≤ k−1)^n), with the
#: Poisson CDF P(X ≤ k−1) = Γ(k, λ) / Γ(k). With n = 1 it is λ itself. Evaluated term by term
#: (:func:`dp_prefill_wait`), the summand lambdified from this one expression.
EXPECTED_MAX_ARRIVALS = sp.Sum(1 - (sp.uppergamma(k_arrival, lam_ranks) / sp.gamma(k_arrival)) ** n_ranks,
                               (k_arrival, 1, sp.oo))
DP_PREFILL_WAIT = Formula(
    wait, m_max / lam_ranks,
    source="course derivation (Ch 10, issue 51 §4) of the mechanism in " + _ADP_BALANCE + ". In steady state each of "
           "n DP-attention ranks starts λ = (B / n)·τ / L_out new requests per step, arrivals taken as Poisson; the "
           "MoE all-to-all holds every rank until the slowest is done, so a step's prefill work is the busiest rank's "
           "M_max = E[max of n Poisson(λ)] (EXPECTED_MAX_ARRIVALS) prompts, not the mean λ",
    note="1 for one rank; large when prompts are rare per step (λ ≪ 1: most steps one rank prefills and the others "
         "wait). Not for disaggregated prefill (DeepSeek's, SGLang's rows), TP attention (every rank takes the same "
         "prompt) or dense DP replicas (nothing synchronises them). The Poisson arrivals are an assumption: "
         "TensorRT-LLM's DeepSeek-R1 guide (Chapter 8's trtllm-dsr1-*-maxtput rows; github.com/NVIDIA/TensorRT-LLM/"
         "blob/01c4ece911eb569e72cf4177f83238a0520641c2/docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_"
         "TensorRT-LLM.md, read 2026-12) runs attention DP with in-flight "
         "batching ('enable_attention_dp: true'), about one prompt per rank per iteration ('--max_num_tokens 2048' at "
         "896 sequences a rank on B200, 1151 at 128 on H200) and identical synthetic lengths ('--input-stdev 0 "
         "--output-stdev 0'), which make arrivals more regular than Poisson, so the wait may be overstated there; "
         "without this term those rows are 1.51x and 1.48x their published figures, with it 1.01x and 0.93x")
_SUMMAND = None
#: Above this many arrivals per rank per step the sum is replaced by the Gaussian tail bound (:data:`LOAD_IMBALANCE`),
#: cheaper by up to thousands of terms and an upper estimate of it (at λ = 50 on 8 ranks: ×1.29 the mean against the
#: sum's ×1.21), shrinking toward it as λ grows.
LARGE_RATE = 50


def expected_max_arrivals(*, rate, n: int) -> float:
    """E[max of ``n`` Poisson(``rate``) counts] (:data:`EXPECTED_MAX_ARRIVALS`), summed until the terms vanish."""
    global _SUMMAND
    rate = validate.scalar("rate", rate, maximum=validate.COUNT_LIMIT)
    n = validate.integer("n", n, maximum=10**7)
    if _SUMMAND is None:
        _SUMMAND = sp.lambdify((k_arrival, lam_ranks, n_ranks), EXPECTED_MAX_ARRIVALS.function, modules="mpmath")
    if n == 1:
        return rate
    if rate > LARGE_RATE:   # Poisson(λ) is Gaussian here: the largest of n is LOAD_IMBALANCE's λ (1 + sqrt(2 ln n / λ))
        return rate * load_imbalance(routed_tokens=rate * n, n_devices=n)
    top = int(rate + 12 * rate ** 0.5 + 12 * (1 + math.log(n)) + 10)
    return float(sum(_SUMMAND(k, rate, n) for k in range(1, top + 1)))


def dp_prefill_wait(*, batch, n_ranks: int, len_out, tokens_per_step: float = 1.0) -> float:
    """How many times the mean prefill work per step the busiest of ``n_ranks`` DP-attention ranks does, when
    ``batch`` sequences decode across them and each request emits ``len_out`` tokens, ``tokens_per_step`` a step
    (:data:`DP_PREFILL_WAIT`); 1 for one rank."""
    batch = validate.scalar("batch", batch, maximum=validate.COUNT_LIMIT)
    n = validate.integer("n_ranks", n_ranks, maximum=10**7)
    len_out = validate.scalar("len_out", len_out, maximum=validate.COUNT_LIMIT)
    tau = validate.scalar("tokens_per_step", tokens_per_step, maximum=64)
    rate = batch / n * tau / len_out
    return DP_PREFILL_WAIT(**{"M_{max}": expected_max_arrivals(rate=rate, n=n), r"\lambda": rate})


def prefill_wait_factor(model, deployment, *, layout, batch, len_out, tokens_per_step: float = 1.0,
                        terms=None) -> float:
    """:func:`dp_prefill_wait` where it applies (an MoE model, DP-attention ranks under ``layout``, the term on), else
    1: the factor on a request's share of prefill time when prompts are prefilled in flight beside the decode."""
    model = models.resolve(model)
    if not isinstance(deployment, collectives.Deployment):
        raise ValueError(f"deployment must be a collectives.Deployment, got {validate._describe(deployment)}")
    validate.scalar("batch", batch, maximum=validate.COUNT_LIMIT)
    validate.scalar("len_out", len_out, maximum=validate.COUNT_LIMIT)
    validate.scalar("tokens_per_step", tokens_per_step, maximum=64)
    chosen = roofline.resolve_layout(layout)
    if "dp_prefill_wait" not in _terms(terms) or not model.is_moe or chosen is None or chosen.attention_tp is None:
        return 1.0
    ranks = deployment.n_chips // chosen.attention_tp
    if ranks <= 1:
        return 1.0
    return dp_prefill_wait(batch=batch, n_ranks=ranks, len_out=len_out, tokens_per_step=tokens_per_step)


#: Concurrent sequences one engine instance schedules by default (the engineer's walk, finding 5: an offline plan ran
#: tens of thousands of sequences per engine). TensorRT-LLM's is the planner's default (Chapter 8's NVIDIA rows ran
#: it); vLLM's is 1024 on GPUs of at least 70 GiB (A100 aside) and 256 on smaller ones.
ENGINE_MAX_SEQS = {"TensorRT-LLM": 2048, "vLLM": 1024}
ENGINE_MAX_SEQS_SOURCES = {
    "TensorRT-LLM": ("github.com/NVIDIA/TensorRT-LLM tensorrt_llm/llmapi/llm_args.py: max_batch_size = Field("
                     "default=2048, description='The maximum batch size.'); the knob: https://nvidia.github.io/"
                     "TensorRT-LLM/performance/performance-tuning-guide/tuning-max-batch-size-and-max-num-tokens.html"),
    "vLLM": ("github.com/vllm-project/vllm vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults: max_num_seqs "
             "1024 when the device has at least 70 GiB and is not an A100, else 256; the flag: "
             "https://docs.vllm.ai/en/latest/configuration/engine_args.html (--max-num-seqs)"),
}
DEFAULT_ENGINE = "TensorRT-LLM"
b_fit, n_inst, s_max = sp.symbols("B_fit n_inst S_max", positive=True)
ENGINE_BATCH = Formula(
    sp.Symbol("B_engine", positive=True), sp.Min(b_fit, n_inst * s_max),
    source="ENGINE_MAX_SEQS: each of n_inst engine instances schedules at most S_max sequences",
    note="n_inst: the DP replicas (or DP-attention ranks) of the layout, each an engine instance with its own cap")


def engine_batch(*, batch, instances: int, per_instance: float) -> float:
    """The batch a deployment of ``instances`` engine instances runs when the one that fits is ``batch`` and each
    instance schedules at most ``per_instance`` sequences (:data:`ENGINE_BATCH`)."""
    batch = validate.scalar("batch", batch, maximum=validate.COUNT_LIMIT)
    instances = validate.integer("instances", instances)
    per_instance = validate.scalar("per_instance", per_instance, maximum=validate.COUNT_LIMIT)
    return float(ENGINE_BATCH(B_fit=batch, n_inst=instances, S_max=per_instance))


def load_imbalance(*, routed_tokens, n_devices: int) -> float:
    """How much longer the busiest of ``n_devices`` expert-parallel devices works than the mean, when
    ``routed_tokens`` token-expert pairs are spread uniformly (:data:`LOAD_IMBALANCE`); 1 for one device."""
    routed_tokens = validate.scalar("routed_tokens", routed_tokens, maximum=validate.COUNT_LIMIT)
    n_devices = validate.integer("n_devices", n_devices)
    if n_devices == 1:
        return 1.0
    return LOAD_IMBALANCE(n_ep=n_devices, **{r"\bar{m}": routed_tokens / n_devices})


def tile_efficiency(*, tokens_per_expert, tile_rows: int = TILE_ROWS) -> float:
    """The share of an expert's matmul that is useful when it gets ``tokens_per_expert`` tokens and works in tiles
    of ``tile_rows`` rows (:data:`TILE_EFFICIENCY`)."""
    m = validate.scalar("tokens_per_expert", tokens_per_expert, maximum=validate.COUNT_LIMIT)
    rows = validate.integer("tile_rows", tile_rows, maximum=4096)
    return TILE_EFFICIENCY(m=m, M_tile=rows)


def _terms(terms) -> frozenset:
    if terms is None:
        return frozenset(TERMS)
    if isinstance(terms, str) or not hasattr(terms, "__iter__"):
        raise ValueError(f"terms must be a collection of names from {TERMS}, got {validate._describe(terms)}")
    chosen = frozenset(terms)
    unknown = sorted(str(term) for term in chosen - set(TERMS))
    if unknown:
        raise ValueError(f"terms must be names from {TERMS}, got {unknown}")
    return chosen


def _tp_width(layout, n: int) -> int:
    chosen = roofline.resolve_layout(layout)
    if chosen is None or chosen.attention_tp is None:
        return n
    return chosen.attention_tp


def communication_time(model, deployment, *, tokens, layout="tp", scale_out_bandwidth=None) -> dict:
    """Seconds of communication in one forward pass over ``tokens`` tokens on ``deployment`` under ``layout``:
    ``{"a2a", "tp_all_reduce", "total"}``.

    All-to-all: each MoE layer dispatches and combines every token's k expert inputs in FP8 over the devices
    (:func:`moe.a2a_bytes_per_token`, :func:`moe.a2a_layer_time` with the deployment's domains as racks), when the
    experts span more than one device. All-reduces: two per layer over the tensor-parallel group, BF16, with NCCL's
    latencies (:func:`collectives.tp_all_reduce_time`)."""
    model = models.resolve(model)
    if not isinstance(deployment, collectives.Deployment):
        raise ValueError(f"deployment must be a collectives.Deployment, got {validate._describe(deployment)}")
    tokens = validate.scalar("tokens", tokens, maximum=validate.COUNT_LIMIT)
    n = deployment.n_chips
    chip = deployment.chip
    out_bw = chip.scale_out_bandwidth if scale_out_bandwidth is None else validate.scalar(
        "scale_out_bandwidth", scale_out_bandwidth)
    a2a = 0.0
    if model.is_moe and n > 1:
        per_token = moe.a2a_bytes_per_token(model, bytes_per_value=moe.ACTIVATION_BYTES["fp8"])
        layer = moe.a2a_layer_time(tokens_per_gpu=tokens / n, bytes_per_token=per_token, racks=deployment.n_domains,
                                   scale_up_bw=chip.scale_up_bandwidth, scale_out_bw=out_bw)
        a2a = layer["total"] * model.n_moe_layers
    tp = _tp_width(layout, n)
    all_reduce = 0.0
    if tp > 1:
        inside = tp <= deployment.chips_per_domain
        if chip.name.upper().startswith("TPU"):
            base, hop = 0.0, collectives.TPU_ICI_HOP_LATENCY
        else:
            base, hop = collectives.nccl_latency("nvlink" if inside else "network")
        all_reduce = collectives.tp_all_reduce_time(
            model, tp=tp, batch_tokens=tokens * tp / n, bytes_per_value=models.BYTES_PER_VALUE["bf16"],
            link_bandwidth=chip.scale_up_bandwidth if inside else out_bw, hop_latency=hop, base_latency=base)
    return {"a2a": a2a, "tp_all_reduce": all_reduce, "total": a2a + all_reduce}


def _expert_compute(model, deployment, tokens, fmt) -> float:
    """Seconds of routed-expert matmuls for ``tokens`` tokens at the deployment's peak in ``fmt`` (spread evenly)."""
    if not model.is_moe:
        return 0.0
    split = roofline._moe_split(model)
    routed = split["L_moe"] * split["k"] * split["N_expert"]
    return roofline.T_COMPUTE_VERIFY(B=tokens, n_verify=1, N_active=routed, FLOPs=roofline._peak(deployment, fmt))


def _expert_weight_time(model, deployment, bound, settings) -> float:
    """The routed experts' share of the bound's weight time on one device (:data:`roofline.T_WEIGHTS_PER_DEVICE`
    with the body and embedding left out)."""
    if not model.is_moe:
        return 0.0
    split = roofline._moe_split(model)
    place = roofline._placement(model, deployment, roofline.resolve_layout(settings.get("layout")))
    weights = settings.get("weight_dtype", "fp8")
    bytes_e = models._bytes_per("expert_weight_dtype", settings.get("expert_weight_dtype") or weights)
    return roofline.T_WEIGHTS_PER_DEVICE(N_body=0, N_emb=0, bytes_param=1.0, n_tp=place["n_tp"],
                                         n_chips=place["n_chips"], L_moe=split["L_moe"],
                                         n_touched=bound["experts_touched"], N_expert=split["N_expert"],
                                         bytes_expert=bytes_e, n_ep=place["n_ep"],
                                         mem_bw=place["device"].hbm_bandwidth, allow_zero=("N_body", "N_emb"))


def _skew(model, layout) -> float:
    chosen = roofline.resolve_layout(layout)
    balanced = chosen is not None and chosen.redundant_experts > 0
    return 1.0 if balanced or not model.is_moe else ROUTING_SKEW


def decode_step(model, deployment, *, batch, len_ctx, terms=None, engine: float = 1.0,
                scale_out_bandwidth=None, expert_parallel: int | None = None, **settings) -> dict:
    """One decode step, realistic: the bound's pieces put back together with the terms it leaves out.

    ``settings`` are :func:`roofline.decode_bound`'s (formats, ``layout``, ``tokens_per_step``, ...); ``terms``
    the switches of :data:`TERMS` that are on (default all); ``engine`` the engine factor (a share of 1, applied to
    the throughput when "engine" is on). Returns ``{"bound": decode_bound's dict, "t": realistic seconds per step,
    "tokens_per_s", "pieces": {term: seconds or factor}, "times": {"attention", "kv", "other", "experts",
    "weights", "communication"}}``; :data:`T_STEP_APART` combines them. ``expert_parallel``: over how many devices
    whole routed experts are spread (default None: every device, the bound's layout); fewer splits each expert over
    the rest by tensor parallelism (TensorRT-LLM's "mixed ETP", TP4 × EP2 for DeepSeek-R1 at batch 1: "Tensor
    Parallel (TP) shards each expert evenly across GPUs, creating a balanced workload", github.com/NVIDIA/TensorRT-LLM
    docs/source/blogs/tech_blog/blog1_Pushing_Latency_Boundaries_Optimizing_DeepSeek-R1_Performance_on_NVIDIA_B200_GPUs.md),
    so only that many groups can be unevenly loaded: 1 leaves no busiest device (:data:`LOAD_IMBALANCE` is 1) and no
    routing skew."""
    model = models.resolve(model)
    if not isinstance(deployment, collectives.Deployment):
        raise ValueError(f"deployment must be a collectives.Deployment, got {validate._describe(deployment)}")
    on = _terms(terms)
    engine = validate.scalar("engine", engine, maximum=1.0)
    bound = roofline.decode_bound(model, deployment, batch=batch, len_ctx=len_ctx, **settings)
    plain = roofline.decode_bound(model, deployment, batch=batch, len_ctx=len_ctx, **dict(settings, attention=False))
    tau = settings.get("tokens_per_step", 1.0)
    verified = settings.get("tokens_verified") or tau
    tokens = bound["tokens_per_s"] * bound["t"] / tau * verified     # B · n_verify, as the bound counted them
    compute = roofline._default_compute_dtype(settings.get("weight_dtype", "fp8"), settings.get("compute_dtype"))
    expert_fmt = settings.get("expert_compute_dtype") or compute
    attention = bound["t_compute"] - plain["t_compute"]
    attention_fmt = settings.get("attention_dtype") or compute
    if ("kernels" in on and model.kv_lora_rank and settings.get("attention_dtype") is None
            and "bf16" in deployment.chip.flops):   # MLA decode kernels multiply in BF16 (MLA_DECODE_FORMAT)
        attention *= roofline._peak(deployment, attention_fmt) / roofline._peak(deployment, MLA_DECODE_FORMAT)
    experts = _expert_compute(model, deployment, tokens, expert_fmt)
    other = plain["t_compute"] - experts
    n = deployment.n_chips
    spread = n if expert_parallel is None else validate.integer("expert_parallel", expert_parallel, maximum=n)
    imb, skew, eff = 1.0, 1.0, 1.0
    if model.is_moe and "imbalance" in on:
        imb = load_imbalance(routed_tokens=tokens * model.experts_per_token, n_devices=spread)
        skew = _skew(model, settings.get("layout")) if spread > 1 else 1.0
    if model.is_moe and "small_matmuls" in on:
        eff = tile_efficiency(tokens_per_expert=tokens * model.experts_per_token / model.n_routed_experts)
    expert_read = _expert_weight_time(model, deployment, bound, settings)
    per_expert = tokens * model.experts_per_token / model.n_routed_experts if model.is_moe else 0.0
    small = "small_matmuls" in on and model.is_moe and per_expert <= SMALL_MATMUL_ROWS
    comm = communication_time(model, deployment, tokens=tokens, layout=settings.get("layout"),
                              scale_out_bandwidth=scale_out_bandwidth) if "communication" in on else \
        {"a2a": 0.0, "tp_all_reduce": 0.0, "total": 0.0}
    k = KERNEL_EFFICIENCY if "kernels" in on else {"hbm": 1.0, "attention": 1.0, "matmul": 1.0}
    values = {"t_{attn}": attention, "t_{kv}": bound["t_kv"], "t_{other}": other, "t_{expert}": experts,
              "t_{weights}": bound["t_weights"] - expert_read, "t_{weights,experts}": expert_read,
              "t_{comm}": comm["total"], "I": imb * skew, r"\eta_{tile}": eff, r"\eta_{HBM}": k["hbm"],
              r"\eta_{attn}": k["attention"], r"\eta_{mm}": k["matmul"],
              r"\eta_{small}": KERNEL_EFFICIENCY["small_matmul"] if small else k["hbm"]}
    if "attention_apart" in on:
        seconds = T_STEP_APART(**values, allow_zero=("t_{attn}", "t_{kv}", "t_{expert}", "t_{comm}", "t_{weights}",
                                                     "t_{weights,experts}"))
    else:   # the bound's overlap of everything, with the other terms applied
        matmuls = (other + experts * imb * skew / eff) / k["matmul"] + attention / k["attention"]
        reads = values["t_{weights}"] / k["hbm"] + expert_read / values[r"\eta_{small}"] + bound["t_kv"] / k["hbm"]
        seconds = max(matmuls, reads) + comm["total"]
    factor = engine if "engine" in on else 1.0
    rate = bound["tokens_per_s"] * bound["t"] / seconds * factor
    return {"bound": bound, "t": seconds, "tokens_per_s": rate, "engine": factor,
            "pieces": {"imbalance": imb, "routing_skew": skew, "tile_efficiency": eff, "small_matmul_reads": small,
                       "tokens_per_expert": per_expert, **comm},
            "times": {"attention": attention, "kv": bound["t_kv"], "other": other, "experts": experts,
                      "weights": bound["t_weights"], "expert_weights": expert_read, "communication": comm["total"]}}


def prefill_time(model, deployment, *, len_in, hit_rate: float = 0.0, terms=None, tokens_per_device: float = 16384,
                 scale_out_bandwidth=None, **settings) -> dict:
    """Seconds to prefill one prompt of ``len_in`` tokens with every device busy with prompts, realistic.

    The bound (:func:`roofline.prefill_bound`) is compute at peak; here the matmuls run at the GEMM kernels' share,
    attention at the attention kernels' share, the busiest device's expert matmuls set the MoE part, and the
    all-to-all and all-reduces of a chunk of ``tokens_per_device`` prompt tokens per device (SGLang's prefill runs
    16,384) wait for them. With ``dense_devices`` / ``expert_devices`` (one request alone on its TP and EP groups,
    as :func:`roofline.prefill_bound` takes them) the experts run on their group's peak and the prompt takes at least
    one read of its devices' weights (:data:`T_PREFILL_ALONE`). Returns ``{"bound": prefill_bound's dict,
    "t_prefill", "input_tokens_per_s"}``. The engine factor is not applied here (it is measured on whole requests)."""
    len_in = validate.scalar("len_in", len_in)
    hit_rate = validate.number("hit_rate", hit_rate, allow_zero=True, maximum=1)
    tokens_per_device = validate.scalar("tokens_per_device", tokens_per_device)
    model = models.resolve(model)
    on = _terms(terms)
    bound = roofline.prefill_bound(model, deployment, len_in=len_in, hit_rate=hit_rate, **settings)
    plain = roofline.prefill_bound(model, deployment, len_in=len_in, hit_rate=hit_rate,
                                   **dict(settings, attention=False))
    computed = len_in * (1 - hit_rate)
    attention = bound["t_prefill"] - plain["t_prefill"]
    fmt = settings.get("expert_compute_dtype") or settings.get("compute_dtype", "fp8")
    n = deployment.n_chips
    alone = settings.get("dense_devices") is not None or settings.get("expert_devices") is not None
    expert_share = (settings.get("expert_devices") or n) / n       # one request alone: its EP group's peak
    experts = _expert_compute(model, deployment, computed, fmt) / expert_share
    other = plain["t_prefill"] - experts
    imb = 1.0
    if model.is_moe and "imbalance" in on and n > 1:
        chunk = validate.scalar("tokens_per_device", tokens_per_device) * n
        imb = load_imbalance(routed_tokens=chunk * model.experts_per_token, n_devices=n) * _skew(
            model, settings.get("layout"))
    k = KERNEL_EFFICIENCY if "kernels" in on else {"hbm": 1.0, "attention": 1.0, "matmul": 1.0}
    seconds = (other + experts * imb) / k["matmul"] + attention / k["attention"]
    if "communication" in on:
        chunk = tokens_per_device * n
        comm = communication_time(model, deployment, tokens=chunk, layout=settings.get("layout"),
                                  scale_out_bandwidth=scale_out_bandwidth)
        seconds += comm["total"] * computed / chunk
    if alone:   # one prompt alone reads its devices' weights once at least (T_PREFILL_ALONE)
        seconds = prefill_alone(t_compute=seconds, weights_per_device=bound["weights_per_device"],
                                hbm_bandwidth=deployment.chip.hbm_bandwidth,
                                hbm_efficiency=k["hbm"])
    return {"bound": bound, "t_prefill": seconds, "input_tokens_per_s": len_in / seconds}
